//! Per-tool switches, stored as workspace settings. The MCP endpoint and the AI sidebar
//! have separate switches:
//! - MCP: `mcp.tool.<id>.enabled` — read tools on, write tools OFF until the user enables them.
//! - Sidebar: `ai.tool.<id>.enabled` — every tool on by default.
//!
//! Values are `true`/`false` (also `1`/`0`, `on`/`off`, `yes`/`no`).

use crate::{Access, Registry, ToolInfo};
use sidenote_store::{Store, StoreError};
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    Mcp,
    Sidebar,
}

pub fn setting_key(surface: Surface, tool_id: &str) -> String {
    match surface {
        Surface::Mcp => format!("mcp.tool.{tool_id}.enabled"),
        Surface::Sidebar => format!("ai.tool.{tool_id}.enabled"),
    }
}

/// Parse a boolean setting value; `None` for anything unrecognised.
pub fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "on" | "yes" => Some(true),
        "false" | "0" | "off" | "no" => Some(false),
        _ => None,
    }
}

pub fn default_enabled(surface: Surface, access: Access) -> bool {
    match surface {
        Surface::Mcp => access == Access::Read,
        Surface::Sidebar => true,
    }
}

pub fn is_enabled(store: &Store, surface: Surface, tool: &ToolInfo) -> Result<bool, StoreError> {
    is_tool_enabled(store, surface, &tool.id, tool.access)
}

/// [`is_enabled`] for a tool known by id and access (no [`ToolInfo`] needed).
pub fn is_tool_enabled(
    store: &Store,
    surface: Surface,
    tool_id: &str,
    access: Access,
) -> Result<bool, StoreError> {
    let set = store.setting(&setting_key(surface, tool_id))?;
    Ok(resolve(set.as_deref(), surface, access))
}

/// A switch's stored value, or the default for the tool's access when unset or unrecognised.
fn resolve(set: Option<&str>, surface: Surface, access: Access) -> bool {
    set.and_then(parse_bool)
        .unwrap_or_else(|| default_enabled(surface, access))
}

/// The registry's tools that are switched on for `surface`, in registry order. Reads the
/// settings once, not once per tool: this runs on every tool listing and MCP poll tick.
pub fn enabled_tools(
    store: &Store,
    surface: Surface,
    registry: &Registry,
) -> Result<Vec<ToolInfo>, StoreError> {
    let settings: HashMap<String, String> = store.settings()?.into_iter().collect();
    Ok(registry
        .list()
        .into_iter()
        .filter(|t| {
            let set = settings.get(&setting_key(surface, &t.id));
            resolve(set.map(String::as_str), surface, t.access)
        })
        .collect())
}

/// The message a caller gets for a tool that exists but is switched off.
pub fn disabled_message(surface: Surface, tool_id: &str) -> String {
    let key = setting_key(surface, tool_id);
    format!(
        "Tool '{tool_id}' is disabled. Enable it with `sidenote config set {key} true` \
         (or in the panel's settings), then retry."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_keep_mcp_writes_off_and_sidebar_on() {
        assert!(default_enabled(Surface::Mcp, Access::Read));
        assert!(!default_enabled(Surface::Mcp, Access::Write));
        assert!(default_enabled(Surface::Sidebar, Access::Write));
        assert_eq!(setting_key(Surface::Mcp, "x"), "mcp.tool.x.enabled");
        assert_eq!(setting_key(Surface::Sidebar, "x"), "ai.tool.x.enabled");
        assert_eq!(parse_bool(" On "), Some(true));
        assert_eq!(parse_bool("0"), Some(false));
        assert_eq!(parse_bool("maybe"), None);
    }
}
