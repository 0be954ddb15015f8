//! Network access for plugins: performed by the host, only to hosts the manifest lists, with
//! size and time limits. Redirects are followed by hand so every hop is checked.

use crate::PluginError;
use base64::Engine;
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;

/// One `permissions.net` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    /// Lowercase host, without a leading `*.` for wildcards.
    host: String,
    wildcard: bool,
    port: Option<u16>,
}

impl HostPattern {
    pub fn parse(s: &str) -> Result<HostPattern, PluginError> {
        let bad = || {
            PluginError::Manifest(format!(
                "net permission '{s}' is invalid: use a host name or IP, optionally with \
                 ':port', or '*.domain' (no scheme or path)"
            ))
        };
        let s = s.trim().to_ascii_lowercase();
        if s.is_empty() || s.contains('/') || s.contains('@') {
            return Err(bad());
        }
        let (wildcard, rest) = match s.strip_prefix("*.") {
            Some(r) => (true, r.to_string()),
            None => (false, s.clone()),
        };
        let (host, port) = match rest.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') => {
                (h.to_string(), Some(p.parse().map_err(|_| bad())?))
            }
            _ => (rest, None),
        };
        if host.is_empty()
            || !host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.' || b == b'_')
        {
            return Err(bad());
        }
        Ok(HostPattern {
            host,
            wildcard,
            port,
        })
    }

    fn matches(&self, host: &str, port: u16) -> bool {
        if self.port.is_some_and(|p| p != port) {
            return false;
        }
        if self.wildcard {
            host.strip_suffix(&self.host)
                .is_some_and(|pre| pre.ends_with('.') && pre.len() > 1)
        } else {
            host == self.host
        }
    }
}

/// The hosts a plugin may reach.
#[derive(Debug, Clone, Default)]
pub struct NetPolicy {
    plugin_id: String,
    patterns: Vec<HostPattern>,
}

impl NetPolicy {
    pub fn new(plugin_id: &str, entries: &[String]) -> Result<NetPolicy, PluginError> {
        Ok(NetPolicy {
            plugin_id: plugin_id.to_string(),
            patterns: entries
                .iter()
                .map(|e| HostPattern::parse(e))
                .collect::<Result<_, _>>()?,
        })
    }

    /// Ok with the parsed URL when the plugin may fetch it; otherwise the message the plugin
    /// (and the user) reads.
    pub fn check(&self, raw: &str) -> Result<url::Url, String> {
        let url = url::Url::parse(raw).map_err(|e| format!("invalid URL '{raw}': {e}"))?;
        if url.scheme() != "http" && url.scheme() != "https" {
            return Err(format!(
                "only http and https URLs can be fetched (got '{}:')",
                url.scheme()
            ));
        }
        let host = url
            .host_str()
            .map(|h| {
                h.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_ascii_lowercase()
            })
            .unwrap_or_default();
        let port = url.port_or_known_default().unwrap_or(0);
        if self.patterns.iter().any(|p| p.matches(&host, port)) {
            Ok(url)
        } else {
            Err(format!(
                "permission denied: plugin '{}' may not fetch from host '{host}' (not in its \
                 manifest's permissions.net)",
                self.plugin_id
            ))
        }
    }
}

/// Limits on one fetch.
#[derive(Debug, Clone)]
pub struct FetchLimits {
    pub max_bytes: usize,
    pub timeout: Duration,
    pub max_redirects: usize,
}

impl Default for FetchLimits {
    fn default() -> Self {
        FetchLimits {
            max_bytes: 4 * 1024 * 1024,
            timeout: Duration::from_secs(10),
            max_redirects: 5,
        }
    }
}

/// What `joplin.net.fetch(url, options)` asks for.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct FetchOptions {
    pub method: Option<String>,
    pub headers: std::collections::BTreeMap<String, String>,
    pub body: Option<String>,
}

/// A fetched response as the plugin sees it (`bodyBase64` is decoded by the prelude).
pub fn response_json(status: u16, url: &str, content_type: &str, body: &[u8]) -> Value {
    json!({
        "ok": (200..300).contains(&status),
        "status": status,
        "url": url,
        "contentType": content_type,
        "size": body.len(),
        "bodyBase64": base64::engine::general_purpose::STANDARD.encode(body),
    })
}

/// A fetched body.
pub struct Fetched {
    pub status: u16,
    pub url: String,
    pub content_type: String,
    pub body: Vec<u8>,
}

/// Perform a fetch for a plugin: every hop checked against `policy`, the body capped at
/// `limits.max_bytes`, the whole exchange capped at `limits.timeout`.
pub async fn fetch(
    client: &reqwest::Client,
    policy: &NetPolicy,
    limits: &FetchLimits,
    url: &str,
    options: &FetchOptions,
) -> Result<Fetched, String> {
    let work = fetch_inner(client, policy, limits, url, options);
    match tokio::time::timeout(limits.timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(format!(
            "fetch of {url} timed out after {} ms",
            limits.timeout.as_millis()
        )),
    }
}

async fn fetch_inner(
    client: &reqwest::Client,
    policy: &NetPolicy,
    limits: &FetchLimits,
    url: &str,
    options: &FetchOptions,
) -> Result<Fetched, String> {
    let mut current = policy.check(url)?;
    let method = match options
        .method
        .as_deref()
        .map(str::to_ascii_uppercase)
        .as_deref()
    {
        None | Some("GET") => reqwest::Method::GET,
        Some("POST") => reqwest::Method::POST,
        Some("HEAD") => reqwest::Method::HEAD,
        Some(m) => {
            return Err(format!(
                "fetch method '{m}' is not supported (GET, POST, HEAD)"
            ));
        }
    };
    let mut hops = 0;
    loop {
        let mut req = client.request(method.clone(), current.clone());
        for (k, v) in &options.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        if let Some(b) = &options.body {
            req = req.body(b.clone());
        }
        let mut resp = req
            .send()
            .await
            .map_err(|e| format!("fetch of {current} failed: {e}"))?;
        let status = resp.status();
        if status.is_redirection()
            && let Some(loc) = resp.headers().get(reqwest::header::LOCATION)
        {
            hops += 1;
            if hops > limits.max_redirects {
                return Err(format!("fetch of {url}: too many redirects"));
            }
            let loc = loc
                .to_str()
                .map_err(|_| format!("fetch of {current}: bad redirect location"))?;
            let next = current
                .join(loc)
                .map_err(|e| format!("fetch of {current}: bad redirect location: {e}"))?;
            current = policy.check(next.as_str())?;
            continue;
        }
        if resp
            .content_length()
            .is_some_and(|n| n > limits.max_bytes as u64)
        {
            return Err(format!(
                "fetch of {current}: response is larger than the {} byte limit",
                limits.max_bytes
            ));
        }
        let content_type = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        let mut body = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| format!("fetch of {current} failed while reading: {e}"))?
        {
            if body.len() + chunk.len() > limits.max_bytes {
                return Err(format!(
                    "fetch of {current}: response is larger than the {} byte limit",
                    limits.max_bytes
                ));
            }
            body.extend_from_slice(&chunk);
        }
        return Ok(Fetched {
            status: status.as_u16(),
            url: current.to_string(),
            content_type,
            body,
        });
    }
}

/// The HTTP client plugins' fetches go through: no automatic redirects (we check each hop),
/// no cookies, a recognisable user agent.
pub fn client() -> Result<reqwest::Client, PluginError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("sidenote-plugins/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| PluginError::Internal(format!("cannot build the HTTP client: {e}")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn host_patterns() {
        let p = NetPolicy::new(
            "p",
            &[
                "127.0.0.1".into(),
                "*.example.org".into(),
                "api.x.com:8443".into(),
            ],
        )
        .unwrap();
        assert!(p.check("http://127.0.0.1:9999/a.png").is_ok());
        assert!(p.check("https://img.example.org/a").is_ok());
        assert!(p.check("https://example.org/a").is_err());
        assert!(p.check("https://evilexample.org/a").is_err());
        assert!(p.check("https://api.x.com:8443/").is_ok());
        assert!(p.check("https://api.x.com/").is_err());
        let e = p.check("http://localhost:1/").unwrap_err();
        assert!(
            e.contains("permission denied") && e.contains("'localhost'"),
            "{e}"
        );
        assert!(p.check("file:///etc/passwd").unwrap_err().contains("http"));
        assert!(HostPattern::parse("http://x").is_err());
        assert!(HostPattern::parse("x:notaport").is_err());
    }
}
