//! `/` (the page, cookie sign-in), `/assets/*` (embedded), and the `/api` token check.

use super::PanelState;
use crate::guard::{bearer, query_token, same_token};
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};

/// The page, embedded at build time (committed sources in `crates/server/web/`).
pub const INDEX_HTML: &str = include_str!("../../web/index.html");
const APP_JS: &str = include_str!("../../web/app.js");
const APP_CSS: &str = include_str!("../../web/app.css");

const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; \
                   script-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; \
                   frame-ancestors 'none'";

/// The session cookie's name for a server on `port`.
pub fn cookie_name(port: u16) -> String {
    format!("sidenote_token_{port}")
}

fn cookie_token<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| {
            let (k, v) = pair.trim().split_once('=')?;
            (k == name).then_some(v.trim())
        })
}

fn security_headers(resp: &mut Response) {
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

const SIGN_IN_PAGE: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<title>sidenote — sign in</title></head><body style=\"font-family:system-ui,sans-serif;max-width:560px;margin:80px auto;line-height:1.5\">\
<h1>sidenote</h1><p>This page needs the workspace's access token.</p>\
<p>Open the <strong>Panel</strong> link that <code>sidenote serve</code> printed (it ends in <code>?token=…</code>), \
or run <code>sidenote config get api.token</code> and open <code>/?token=&lt;token&gt;</code>.</p></body></html>";

/// `GET /`: with a valid `?token=` set the cookie and redirect to `/`; with a valid cookie
/// serve the page; otherwise a 401 page explaining where the link is.
pub(crate) async fn index(State(st): State<PanelState>, req: Request) -> Response {
    if let Some(t) = query_token(req.uri().query()) {
        if same_token(&t, &st.token) {
            let mut resp = Redirect::to("/").into_response();
            let cookie = format!(
                "{}={}; Path=/; HttpOnly; SameSite=Strict",
                st.cookie, st.token
            );
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                resp.headers_mut().insert(header::SET_COOKIE, v);
            }
            resp.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            return resp;
        }
        let mut resp =
            (StatusCode::UNAUTHORIZED, axum::response::Html(SIGN_IN_PAGE)).into_response();
        security_headers(&mut resp);
        return resp;
    }
    let signed_in =
        cookie_token(req.headers(), &st.cookie).is_some_and(|t| same_token(t, &st.token));
    let mut resp = if signed_in {
        axum::response::Html(INDEX_HTML).into_response()
    } else {
        (StatusCode::UNAUTHORIZED, axum::response::Html(SIGN_IN_PAGE)).into_response()
    };
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    security_headers(&mut resp);
    resp
}

/// `GET /assets/{file}`: the embedded script and style sheet.
pub(crate) async fn asset(Path(file): Path<String>) -> Response {
    let (body, ty) = match file.as_str() {
        "app.js" => (APP_JS, "text/javascript; charset=utf-8"),
        "app.css" => (APP_CSS, "text/css; charset=utf-8"),
        _ => return super::ApiError::not_found("no such asset").into_response(),
    };
    let mut resp = ([(header::CONTENT_TYPE, ty)], body).into_response();
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    security_headers(&mut resp);
    resp
}

/// 401 unless the request carries the token: the panel cookie, a bearer header or `?token=`.
pub(crate) async fn require_api_token(
    State(st): State<PanelState>,
    req: Request,
    next: Next,
) -> Response {
    let ok = cookie_token(req.headers(), &st.cookie).is_some_and(|t| same_token(t, &st.token))
        || bearer(req.headers()).is_some_and(|t| same_token(t, &st.token))
        || query_token(req.uri().query()).is_some_and(|t| same_token(&t, &st.token));
    if ok {
        return next.run(req).await;
    }
    let mut resp = super::ApiError::new(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "Missing or wrong API token: open the panel through the link `sidenote serve` printed, \
         or send `Authorization: Bearer <token>` (`sidenote config get api.token`)",
    )
    .into_response();
    resp.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_and_queries_are_parsed() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; sidenote_token_80=abc ; b=2"),
        );
        assert_eq!(cookie_token(&h, "sidenote_token_80"), Some("abc"));
        assert_eq!(cookie_token(&h, "sidenote_token_81"), None);
        assert_eq!(query_token(Some("x=1&token=a%2Bb")), Some("a+b".into()));
        assert_eq!(query_token(Some("tokens=1")), None);
        assert_eq!(crate::guard::percent_decode("100%"), "100%");
        assert_eq!(crate::guard::percent_decode("%zz"), "%zz");
        assert!(same_token("abc", "abc") && !same_token("abc", "abd") && !same_token("ab", "abc"));
    }
}
