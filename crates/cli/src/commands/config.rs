//! `sidenote config get|set|unset|list` — Joplin-style keys stored in the workspace.

use crate::app::{App, print_json};

#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Print one setting (its default when unset and known).
    Get { key: String },
    /// Change a setting.
    Set { key: String, value: String },
    /// Remove a setting (back to its default).
    Unset { key: String },
    /// Show every setting that is set, plus the defaults of well-known keys. Secrets are
    /// masked.
    List {
        /// Print JSON (`{"key": "value", …}`, secrets masked).
        #[arg(long)]
        json: bool,
    },
}

/// Well-known keys and their defaults.
const DEFAULTS: &[(&str, &str)] = &[
    ("ai.allowRemote", "false"),
    ("ai.chat.providerType", "openai-compatible"),
    ("ai.chat.baseUrl", ""),
    ("ai.chat.apiKey", ""),
    ("ai.chat.model", ""),
];

/// Keys whose values are secrets: shown masked by `config list`.
pub fn is_secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ["apikey", "token", "secret", "password"]
        .iter()
        .any(|s| k.contains(s))
}

/// `abcd…(32 chars)`; empty stays empty.
pub fn mask(value: &str) -> String {
    let n = value.chars().count();
    if n == 0 {
        return String::new();
    }
    if n <= 8 {
        return format!("…({n} chars)");
    }
    let head: String = value.chars().take(4).collect();
    format!("{head}…({n} chars)")
}

fn check_key(key: &str) -> anyhow::Result<()> {
    let ok = !key.is_empty()
        && !key.starts_with('.')
        && !key.ends_with('.')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !ok {
        anyhow::bail!(
            "bad setting key '{key}': use Joplin-style dotted names such as ai.chat.model"
        );
    }
    Ok(())
}

pub async fn run(app: &App, cmd: Cmd) -> anyhow::Result<()> {
    match cmd {
        Cmd::Get { key } => {
            check_key(&key)?;
            match app.store.setting(&key)? {
                Some(v) => crate::out!("{v}"),
                None => match DEFAULTS.iter().find(|(k, _)| *k == key) {
                    Some((_, d)) => crate::out!("{d}"),
                    None => anyhow::bail!("setting '{key}' is not set"),
                },
            }
        }
        Cmd::Set { key, value } => {
            check_key(&key)?;
            app.store.set_setting(&key, &value)?;
        }
        Cmd::Unset { key } => {
            check_key(&key)?;
            if !app.store.unset_setting(&key)? {
                anyhow::bail!("setting '{key}' is not set");
            }
        }
        Cmd::List { json } => {
            let mut all: std::collections::BTreeMap<String, (String, bool)> = DEFAULTS
                .iter()
                .map(|(k, v)| (k.to_string(), (v.to_string(), true)))
                .collect();
            for (k, v) in app.store.settings()? {
                all.insert(k, (v, false));
            }
            let shown = |k: &str, v: &str| if is_secret(k) { mask(v) } else { v.to_string() };
            if json {
                let map: serde_json::Map<String, serde_json::Value> = all
                    .iter()
                    .map(|(k, (v, _))| (k.clone(), serde_json::Value::String(shown(k, v))))
                    .collect();
                return print_json(&map);
            }
            for (k, (v, default)) in &all {
                let note = if *default { "  (default)" } else { "" };
                crate::out!("{k} = {}{note}", shown(k, v));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_secrets() {
        assert!(is_secret("ai.chat.apiKey"));
        assert!(is_secret("api.token"));
        assert!(!is_secret("ai.chat.model"));
        assert_eq!(mask("sk-0123456789"), "sk-0…(13 chars)");
        assert_eq!(mask("short"), "…(5 chars)");
        assert_eq!(mask(""), "");
    }
}
