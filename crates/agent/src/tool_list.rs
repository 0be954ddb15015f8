//! The per-turn tool list: the seed's table, as a pure function of the context.
//!
//! | context | tools |
//! |---|---|
//! | no note focused | workspace tools only |
//! | note focused, no selection | workspace tools + `rewrite_paragraph`, `insert_before_anchor`, `insert_after_anchor`, `append_to_note` (+ `replace_structured_block` when the note has a supported block) |
//! | selection present | workspace tools + `edit_selection` only |
//!
//! Workspace tools are every registry tool (built-in and plugin) whose sidebar switch
//! (`ai.tool.<id>.enabled`, on by default) is on.

use crate::context::NoteContext;
use serde::{Deserialize, Serialize};
use sidenote_ai::ToolSpec;
use sidenote_store::{Store, StoreError};
use sidenote_tools::toggles::{self, Surface};
use sidenote_tools::{Registry, ToolSource};
use std::collections::BTreeSet;

/// Where a tool call is routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Editor session tools (proposals on the open note).
    Session,
    /// Built-in workspace tools from the registry.
    Workspace,
    /// Workspace tools a plugin registered.
    Plugin,
}

/// One tool offered this turn.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnTool {
    pub spec: ToolSpec,
    pub tier: Tier,
}

/// The tools of one turn, in the order the model sees them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolList {
    pub tools: Vec<TurnTool>,
}

impl ToolList {
    pub fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.spec.name.as_str()).collect()
    }
    pub fn get(&self, name: &str) -> Option<&TurnTool> {
        self.tools.iter().find(|t| t.spec.name == name)
    }
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.tools.iter().map(|t| t.spec.clone()).collect()
    }
    pub fn len(&self) -> usize {
        self.tools.len()
    }
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// A snapshot of the sidebar's per-tool switches (separate from MCP's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SidebarToggles {
    disabled: BTreeSet<String>,
}

impl SidebarToggles {
    /// Every tool on (the default).
    pub fn all_on() -> Self {
        Self::default()
    }
    /// Read `ai.tool.<id>.enabled` for every registry tool.
    pub fn load(store: &Store, registry: &Registry) -> Result<Self, StoreError> {
        // one settings read for the whole list
        let enabled: BTreeSet<String> = toggles::enabled_tools(store, Surface::Sidebar, registry)?
            .into_iter()
            .map(|t| t.id)
            .collect();
        let disabled = registry
            .list()
            .into_iter()
            .map(|t| t.id)
            .filter(|id| !enabled.contains(id))
            .collect();
        Ok(SidebarToggles { disabled })
    }
    pub fn disable(mut self, id: impl Into<String>) -> Self {
        self.disabled.insert(id.into());
        self
    }
    pub fn is_enabled(&self, id: &str) -> bool {
        !self.disabled.contains(id)
    }
}

/// The seed's table (see the module docs). Pure: same inputs, same list.
pub fn build_tool_list(
    ctx: &NoteContext,
    registry: &Registry,
    toggles: &SidebarToggles,
) -> ToolList {
    let mut tools: Vec<TurnTool> = registry
        .list()
        .into_iter()
        .filter(|t| toggles.is_enabled(&t.id))
        .map(|t| TurnTool {
            tier: match t.source {
                ToolSource::Builtin => Tier::Workspace,
                ToolSource::Plugin(_) => Tier::Plugin,
            },
            spec: ToolSpec {
                name: t.id,
                description: t.description,
                input_schema: t.input_schema,
            },
        })
        .collect();
    if let Some(note) = &ctx.note {
        for st in sidenote_editor::available_tools_for(&note.body, note.has_selection()) {
            // a session tool shadows a registry tool of the same name
            tools.retain(|t| t.spec.name != st.id());
            tools.push(TurnTool {
                tier: Tier::Session,
                spec: ToolSpec {
                    name: st.id().to_string(),
                    description: st.description().to_string(),
                    input_schema: st.input_schema(),
                },
            });
        }
    }
    ToolList { tools }
}
