//! `manifest.json`: who a plugin is and what it may do.
//!
//! ```json
//! {
//!   "id": "vacation-packing",
//!   "name": "Vacation packing",
//!   "version": "1.0.0",
//!   "main": "main.js",
//!   "description": "…",
//!   "permissions": { "net": ["127.0.0.1"], "data": ["notes:read"] },
//!   "settings": { "imageBaseUrl": { "default": "", "description": "…" } }
//! }
//! ```

use crate::PluginError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Component, Path};

/// `permissions.data` value that allows `joplin.data.searchNotes` / `readNote`.
pub const NOTES_READ: &str = "notes:read";
/// `permissions.data` value that allows `joplin.data.createNote` / `updateNote`.
pub const NOTES_WRITE: &str = "notes:write";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub id: String,
    pub name: String,
    pub version: String,
    /// The script to run, relative to the plugin folder.
    pub main: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub permissions: Permissions,
    /// Plugin settings with their defaults, read by `joplin.settings.value(key)`; the user
    /// overrides them with `sidenote config set plugin.<id>.<key> VALUE`.
    #[serde(default)]
    pub settings: BTreeMap<String, SettingDecl>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Permissions {
    /// Hosts `joplin.net.fetch` may reach: `host` (any port), `host:port`, or `*.domain`.
    #[serde(default)]
    pub net: Vec<String>,
    /// `notes:read` and/or `notes:write`.
    #[serde(default)]
    pub data: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingDecl {
    #[serde(default)]
    pub default: Value,
    #[serde(default)]
    pub description: String,
}

/// Plugin ids: 1-64 lowercase letters, digits, '-', '_' or '.', starting with a letter or
/// digit (they name a folder and appear in settings keys and journal actors).
pub fn valid_plugin_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id.as_bytes()[0].is_ascii_alphanumeric()
        && id.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_' || b == b'.'
        })
}

impl Manifest {
    /// Parse and check a manifest's text.
    pub fn parse(text: &str) -> Result<Manifest, PluginError> {
        let m: Manifest = serde_json::from_str(text)
            .map_err(|e| PluginError::Manifest(format!("manifest.json is invalid: {e}")))?;
        m.check()?;
        Ok(m)
    }

    /// Read `<dir>/manifest.json`.
    pub fn read(dir: &Path) -> Result<Manifest, PluginError> {
        let path = dir.join("manifest.json");
        let text = std::fs::read_to_string(&path)
            .map_err(|e| PluginError::Manifest(format!("cannot read {}: {e}", path.display())))?;
        Manifest::parse(&text)
    }

    fn check(&self) -> Result<(), PluginError> {
        let bad = |msg: String| Err(PluginError::Manifest(msg));
        if !valid_plugin_id(&self.id) {
            return bad(format!(
                "manifest id '{}' is invalid: use 1-64 lowercase letters, digits, '-', '_' or '.'",
                self.id
            ));
        }
        if self.name.trim().is_empty() {
            return bad("manifest name must not be empty".into());
        }
        if self.version.trim().is_empty() {
            return bad("manifest version must not be empty".into());
        }
        let main = Path::new(&self.main);
        if self.main.is_empty()
            || main.is_absolute()
            || main
                .components()
                .any(|c| !matches!(c, Component::Normal(_)))
        {
            return bad(format!(
                "manifest main '{}' must be a relative path inside the plugin folder",
                self.main
            ));
        }
        for d in &self.permissions.data {
            if d != NOTES_READ && d != NOTES_WRITE {
                return bad(format!(
                    "unknown data permission '{d}' (known: {NOTES_READ}, {NOTES_WRITE})"
                ));
            }
        }
        for h in &self.permissions.net {
            crate::net::HostPattern::parse(h)?;
        }
        for key in self.settings.keys() {
            if key.is_empty()
                || !key
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
            {
                return bad(format!("setting key '{key}' is invalid"));
            }
        }
        Ok(())
    }

    pub fn can_read_notes(&self) -> bool {
        self.permissions
            .data
            .iter()
            .any(|d| d == NOTES_READ || d == NOTES_WRITE)
    }

    pub fn can_write_notes(&self) -> bool {
        self.permissions.data.iter().any(|d| d == NOTES_WRITE)
    }
}

/// The settings key that stores a plugin setting.
pub fn setting_key(plugin_id: &str, key: &str) -> String {
    format!("plugin.{plugin_id}.{key}")
}

/// The settings key of a plugin's enabled flag.
pub fn enabled_key(plugin_id: &str) -> String {
    format!("plugin.{plugin_id}.enabled")
}

/// The settings key holding why a plugin was disabled automatically.
pub fn disabled_reason_key(plugin_id: &str) -> String {
    format!("plugin.{plugin_id}.disabledReason")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn parses_and_checks() {
        let m = Manifest::parse(
            r#"{"id":"a-b","name":"A","version":"1","main":"main.js",
                "permissions":{"net":["127.0.0.1","*.example.org"],"data":["notes:read"]}}"#,
        )
        .unwrap();
        assert!(m.can_read_notes() && !m.can_write_notes());
        for bad in [
            r#"{"id":"A B","name":"A","version":"1","main":"main.js"}"#,
            r#"{"id":"a","name":"A","version":"1","main":"../x.js"}"#,
            r#"{"id":"a","name":"A","version":"1","main":"/etc/x.js"}"#,
            r#"{"id":"a","name":"A","version":"1","main":"m.js","permissions":{"data":["fs"]}}"#,
            r#"{"id":"a","name":"A","version":"1","main":"m.js","permissions":{"net":["http://x"]}}"#,
            r#"{"id":"a","name":"A","version":"1","main":"m.js","extra":1}"#,
        ] {
            assert!(Manifest::parse(bad).is_err(), "{bad}");
        }
    }
}
