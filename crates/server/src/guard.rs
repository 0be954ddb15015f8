//! Request guards: the DNS-rebinding check (`Host`/`Origin`) and the API token (its readers
//! are shared with the panel's cookie-or-token check).

use crate::AuthState;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// Which `Host`/`Origin` names the server answers to. Always the loopback names
/// (`localhost`, `127.0.0.1`, `[::1]`, any port); also the bound IP when it is a specific
/// non-loopback address, and any names given explicitly.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    hosts: Vec<String>,
}

impl HostPolicy {
    pub fn new(bound: SocketAddr, extra: &[String]) -> Self {
        let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
        let ip = bound.ip();
        if !ip.is_unspecified() && !ip.is_loopback() {
            hosts.push(ip.to_string());
        }
        for h in extra {
            let h = h.trim().trim_start_matches('[').trim_end_matches(']');
            if !h.is_empty() {
                hosts.push(h.to_ascii_lowercase());
            }
        }
        HostPolicy { hosts }
    }

    fn allows_name(&self, name: &str) -> bool {
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        self.hosts.contains(&name)
    }

    /// A `Host` header value: `name`, `name:port`, `[v6]` or `[v6]:port`.
    pub fn allows_host(&self, host: &str) -> bool {
        split_host(host).is_some_and(|n| self.allows_name(n))
    }

    /// An `Origin` header value: `scheme://host[:port]` (`null` and other schemes refused).
    pub fn allows_origin(&self, origin: &str) -> bool {
        let rest = match origin.split_once("://") {
            Some(("http" | "https", rest)) => rest,
            _ => return false,
        };
        if rest.contains('/') || rest.contains('@') {
            return false;
        }
        self.allows_host(rest)
    }
}

/// The name part of a `host[:port]` authority, without IPv6 brackets.
fn split_host(authority: &str) -> Option<&str> {
    let a = authority.trim();
    if let Some(rest) = a.strip_prefix('[') {
        let (inside, after) = rest.split_once(']')?;
        if !(after.is_empty() || port_ok(after.strip_prefix(':')?)) {
            return None;
        }
        return inside.parse::<IpAddr>().ok().map(|_| inside);
    }
    match a.rsplit_once(':') {
        Some((name, port)) if !name.contains(':') => port_ok(port).then_some(name),
        Some(_) => None, // bare IPv6 without brackets is not a valid Host
        None => (!a.is_empty()).then_some(a),
    }
}

fn port_ok(p: &str) -> bool {
    !p.is_empty() && p.len() <= 5 && p.bytes().all(|b| b.is_ascii_digit())
}

pub(crate) fn json_error(status: StatusCode, msg: &str) -> Response {
    (status, axum::Json(serde_json::json!({ "error": msg }))).into_response()
}

/// 403 for a foreign `Host` or `Origin` (DNS-rebinding protection).
pub(crate) async fn check_host_and_origin(
    State(policy): State<Arc<HostPolicy>>,
    req: Request,
    next: Next,
) -> Response {
    let headers = req.headers();
    let host = headers
        .get(header::HOST)
        .map(|v| v.to_str().unwrap_or(""))
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.as_str().to_string()));
    if let Some(host) = host
        && !policy.allows_host(&host)
    {
        tracing::warn!("refused a request for foreign Host {host:?}");
        return json_error(
            StatusCode::FORBIDDEN,
            "Forbidden: this server only answers requests addressed to localhost",
        );
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !policy.allows_origin(origin) {
            tracing::warn!("refused a request from foreign Origin {origin:?}");
            return json_error(
                StatusCode::FORBIDDEN,
                "Forbidden: cross-origin requests are not allowed",
            );
        }
    }
    next.run(req).await
}

pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = v.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

pub(crate) fn query_token(query: Option<&str>) -> Option<String> {
    query?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == "token").then(|| percent_decode(v))
    })
}

pub(crate) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Compare without an early exit, so timing does not reveal how much of a guess was right.
pub(crate) fn same_token(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// 401 unless the request carries the API token (bearer header or `?token=`).
pub(crate) async fn require_token(
    State(auth): State<AuthState>,
    req: Request,
    next: Next,
) -> Response {
    let given = bearer(req.headers())
        .map(str::to_string)
        .or_else(|| query_token(req.uri().query()));
    let refusal = match given {
        None => {
            "Missing API token: send `Authorization: Bearer <token>` or `?token=<token>` \
                 (the token is shown by `sidenote config get api.token`)"
        }
        Some(t) if same_token(&t, &auth.token) => return next.run(req).await,
        Some(_) => "Invalid API token (see `sidenote config get api.token`)",
    };
    let mut resp = json_error(StatusCode::UNAUTHORIZED, refusal);
    resp.headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    resp
}

pub(crate) async fn not_found() -> Response {
    json_error(StatusCode::NOT_FOUND, "Not found")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_policy_accepts_loopback_names_with_any_port_only() {
        let p = HostPolicy::new(
            "127.0.0.1:0"
                .parse()
                .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 0))),
            &[],
        );
        for ok in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "[::1]",
            "[::1]:99",
            "LOCALHOST.",
        ] {
            assert!(p.allows_host(ok), "{ok}");
        }
        for bad in [
            "evil.example",
            "evil.example:80",
            "127.0.0.2",
            "localhost:x",
            "::1",
            "",
            "[::1]x",
        ] {
            assert!(!p.allows_host(bad), "{bad}");
        }
        assert!(p.allows_origin("http://localhost:3000"));
        assert!(p.allows_origin("https://127.0.0.1"));
        for bad in [
            "null",
            "http://evil.example",
            "file://localhost",
            "http://localhost/x",
        ] {
            assert!(!p.allows_origin(bad), "{bad}");
        }
        let lan = HostPolicy::new(
            SocketAddr::from(([192, 168, 1, 5], 80)),
            &["box.lan".into()],
        );
        assert!(lan.allows_host("192.168.1.5:80") && lan.allows_host("box.lan"));
    }

    #[test]
    fn tokens_are_read_from_header_or_query() {
        let mut h = HeaderMap::new();
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("bearer  abc "),
        );
        assert_eq!(bearer(&h), Some("abc"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer(&h), None);
        assert_eq!(query_token(Some("a=1&token=x%2By")), Some("x+y".into()));
        assert_eq!(query_token(Some("tokens=1")), None);
        assert!(same_token("abc", "abc") && !same_token("abc", "abd") && !same_token("a", "ab"));
    }
}
