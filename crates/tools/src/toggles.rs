//! Per-tool switches, stored as workspace settings. The MCP endpoint and the AI sidebar
//! have separate switches:
//! - MCP: `mcp.tool.<id>.enabled` — read tools on, write tools OFF until the user enables them.
//! - Sidebar: `ai.tool.<id>.enabled` — every tool on by default.
//!
//! Values are `true`/`false` (also `1`/`0`, `on`/`off`, `yes`/`no`).

use crate::{Access, Registry, ToolInfo};
use sidenote_store::{Store, StoreError};

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
    let set = store.setting(&setting_key(surface, &tool.id))?;
    Ok(set
        .as_deref()
        .and_then(parse_bool)
        .unwrap_or_else(|| default_enabled(surface, tool.access)))
}

/// The registry's tools that are switched on for `surface`, in registry order.
pub fn enabled_tools(
    store: &Store,
    surface: Surface,
    registry: &Registry,
) -> Result<Vec<ToolInfo>, StoreError> {
    let mut out = Vec::new();
    for t in registry.list() {
        if is_enabled(store, surface, &t)? {
            out.push(t);
        }
    }
    Ok(out)
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
