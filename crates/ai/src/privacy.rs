//! The privacy gate: a provider is `local` when its base URL's host is a loopback address,
//! otherwise `remote` (LAN addresses are remote). Remote providers are refused unless
//! `ai.allowRemote` is true — before any connection is attempted.

use crate::error::AiError;
use serde::{Deserialize, Serialize};
use std::net::{Ipv4Addr, Ipv6Addr};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Classification {
    Local,
    Remote,
}

/// Classify a base URL. An unparsable URL is an error (never silently "local").
pub fn classify(base_url: &str) -> Result<Classification, AiError> {
    let url = url::Url::parse(base_url).map_err(|e| {
        AiError::NotConfigured(format!(
            "ai.chat.baseUrl {base_url:?} is not a valid URL ({e}); use e.g. http://127.0.0.1:11434/v1"
        ))
    })?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(AiError::NotConfigured(format!(
            "ai.chat.baseUrl {base_url:?} must start with http:// or https://"
        )));
    }
    let local = match url.host() {
        Some(url::Host::Domain(d)) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => ip.is_loopback() || ip == Ipv4Addr::UNSPECIFIED,
        Some(url::Host::Ipv6(ip)) => {
            ip.is_loopback()
                || ip == Ipv6Addr::UNSPECIFIED
                || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
        None => false,
    };
    Ok(if local {
        Classification::Local
    } else {
        Classification::Remote
    })
}

/// Refuse a remote base URL unless remote access is allowed.
pub fn check(base_url: &str, allow_remote: bool) -> Result<Classification, AiError> {
    let class = classify(base_url)?;
    if class == Classification::Remote && !allow_remote {
        return Err(AiError::RemoteNotAllowed {
            base_url: base_url.to_string(),
        });
    }
    Ok(class)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn loopback_hosts_are_local() {
        for u in [
            "http://127.0.0.1:11434/v1",
            "http://127.8.9.10/v1",
            "http://localhost:1234/v1",
            "http://LOCALHOST./v1",
            "http://api.localhost/v1",
            "http://[::1]:8080/v1",
            "http://0.0.0.0:8080/v1",
        ] {
            assert_eq!(classify(u).unwrap(), Classification::Local, "{u}");
        }
    }

    #[test]
    fn other_hosts_are_remote() {
        for u in [
            "https://api.openai.com/v1",
            "http://192.168.1.10:11434/v1",
            "http://10.0.0.2/v1",
            "http://localhost.evil.com/v1",
            "http://127.0.0.1.nip.io/v1",
        ] {
            assert_eq!(classify(u).unwrap(), Classification::Remote, "{u}");
        }
    }

    #[test]
    fn remote_refused_unless_allowed() {
        let err = check("https://api.anthropic.com/v1", false).unwrap_err();
        assert!(matches!(err, AiError::RemoteNotAllowed { .. }));
        assert!(err.to_string().contains("ai.allowRemote"));
        assert_eq!(
            check("https://api.anthropic.com/v1", true).unwrap(),
            Classification::Remote
        );
    }

    #[test]
    fn bad_urls_are_errors() {
        assert!(classify("not a url").is_err());
        assert!(classify("ftp://127.0.0.1/").is_err());
    }
}
