//! The registry: built-in tools first (in their fixed order), then plugin tools in the order
//! they were registered. Add/remove at runtime; every change is broadcast.

use crate::validate::CompiledSchema;
use crate::{Access, Tool, ToolCtx, ToolError, ToolOutput};
use serde::Serialize;
use serde_json::Value;
use std::sync::{Arc, RwLock};
use tokio::sync::broadcast;

/// Where a tool came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "plugin_id", rename_all = "lowercase")]
pub enum ToolSource {
    Builtin,
    Plugin(String),
}

/// A tool's public description (what `tools/list` and the agent's tool list show).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolInfo {
    pub id: String,
    pub description: String,
    pub input_schema: Value,
    pub access: Access,
    pub source: ToolSource,
}

/// Broadcast when the set of tools, or their switches, changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryChange {
    Added(String),
    Removed(String),
    /// A per-tool switch changed (MCP or sidebar); listeners re-read the toggles.
    TogglesChanged,
}

struct Entry {
    tool: Arc<dyn Tool>,
    source: ToolSource,
    schema: Arc<CompiledSchema>,
}

/// The one workspace-tool registry. Cheap to clone; shared by the agent, MCP and plugins.
#[derive(Clone)]
pub struct Registry {
    entries: Arc<RwLock<Vec<Entry>>>,
    changes: broadcast::Sender<RegistryChange>,
}

impl Default for Registry {
    fn default() -> Self {
        Self::new()
    }
}

/// Tool ids must be usable as function names by every provider.
pub fn valid_tool_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl Registry {
    pub fn new() -> Self {
        let (changes, _) = broadcast::channel(64);
        Registry {
            entries: Arc::new(RwLock::new(Vec::new())),
            changes,
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<Entry>> {
        // A panic while holding the lock cannot leave the Vec half-updated (every write
        // is a single push/remove), so a poisoned lock is still consistent.
        self.entries.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Add a tool. Refused (with a message naming the owner) when the id is taken or invalid,
    /// or its schema does not compile.
    pub fn add(&self, tool: Arc<dyn Tool>, source: ToolSource) -> Result<(), ToolError> {
        let id = tool.id().to_string();
        if !valid_tool_id(&id) {
            return Err(ToolError::recoverable(format!(
                "invalid tool id '{id}': use 1-64 letters, digits, '_' or '-'"
            )));
        }
        let schema = Arc::new(CompiledSchema::new(tool.input_schema()).map_err(|e| {
            ToolError::recoverable(format!("tool '{id}' has an invalid input schema: {e}"))
        })?);
        {
            let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
            if let Some(existing) = entries.iter().find(|e| e.tool.id() == id) {
                let owner = match &existing.source {
                    ToolSource::Builtin => "a built-in tool".to_string(),
                    ToolSource::Plugin(p) => format!("plugin '{p}'"),
                };
                return Err(ToolError::recoverable(format!(
                    "tool id '{id}' is already registered by {owner}"
                )));
            }
            entries.push(Entry {
                tool,
                source,
                schema,
            });
        }
        let _ = self.changes.send(RegistryChange::Added(id));
        Ok(())
    }

    /// Remove a tool; true when it was there.
    pub fn remove(&self, id: &str) -> bool {
        let removed = {
            let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
            let before = entries.len();
            entries.retain(|e| e.tool.id() != id);
            entries.len() != before
        };
        if removed {
            let _ = self.changes.send(RegistryChange::Removed(id.to_string()));
        }
        removed
    }

    /// Remove every tool a plugin registered; returns their ids.
    pub fn remove_plugin(&self, plugin_id: &str) -> Vec<String> {
        let ids: Vec<String> = self
            .read()
            .iter()
            .filter(|e| e.source == ToolSource::Plugin(plugin_id.to_string()))
            .map(|e| e.tool.id().to_string())
            .collect();
        for id in &ids {
            self.remove(id);
        }
        ids
    }

    pub fn get(&self, id: &str) -> Option<Arc<dyn Tool>> {
        self.read()
            .iter()
            .find(|e| e.tool.id() == id)
            .map(|e| e.tool.clone())
    }

    /// Every tool, built-ins first, in registration order.
    pub fn list(&self) -> Vec<ToolInfo> {
        self.read()
            .iter()
            .map(|e| ToolInfo {
                id: e.tool.id().to_string(),
                description: e.tool.description().to_string(),
                input_schema: e.tool.input_schema().clone(),
                access: e.tool.access(),
                source: e.source.clone(),
            })
            .collect()
    }

    /// Validate `input` against the tool's schema, then run it. Unknown id and invalid
    /// arguments are recoverable errors; nothing runs for them.
    pub async fn call(
        &self,
        id: &str,
        input: Value,
        ctx: &ToolCtx,
    ) -> Result<ToolOutput, ToolError> {
        let (tool, schema) = {
            let entries = self.read();
            match entries.iter().find(|e| e.tool.id() == id) {
                Some(e) => (e.tool.clone(), e.schema.clone()),
                None => return Err(ToolError::recoverable(format!("Unknown tool: '{id}'"))),
            }
        };
        schema.check(&input)?;
        tool.call(input, ctx).await
    }

    /// Tell listeners that per-tool switches changed.
    pub fn notify_toggles_changed(&self) {
        let _ = self.changes.send(RegistryChange::TogglesChanged);
    }

    pub fn subscribe(&self) -> broadcast::Receiver<RegistryChange> {
        self.changes.subscribe()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;
    use sidenote_store::Actor;

    struct Echo {
        id: &'static str,
        schema: Value,
    }

    #[async_trait::async_trait]
    impl Tool for Echo {
        fn id(&self) -> &str {
            self.id
        }
        fn description(&self) -> &str {
            "echo"
        }
        fn input_schema(&self) -> &Value {
            &self.schema
        }
        fn access(&self) -> Access {
            Access::Read
        }
        async fn call(&self, input: Value, _ctx: &ToolCtx) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::Json(input))
        }
    }

    fn echo(id: &'static str) -> Arc<dyn Tool> {
        Arc::new(Echo {
            id,
            schema: json!({"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}),
        })
    }

    fn ctx() -> ToolCtx {
        ToolCtx::new(Actor::Cli)
    }

    #[tokio::test]
    async fn validates_before_calling() {
        let r = Registry::new();
        r.add(echo("echo"), ToolSource::Builtin).unwrap();
        assert_eq!(
            r.call("echo", json!({"n": 1}), &ctx()).await,
            Ok(ToolOutput::Json(json!({"n": 1})))
        );
        let err = r.call("echo", json!({"n": "x"}), &ctx()).await.unwrap_err();
        assert!(
            err.is_recoverable() && err.to_string().contains("'n'"),
            "{err}"
        );
        let err = r.call("nope", json!({}), &ctx()).await.unwrap_err();
        assert_eq!(err, ToolError::Recoverable("Unknown tool: 'nope'".into()));
    }

    #[tokio::test]
    async fn duplicate_ids_are_refused_with_the_owner_named() {
        let r = Registry::new();
        r.add(echo("a"), ToolSource::Builtin).unwrap();
        let err = r
            .add(echo("a"), ToolSource::Plugin("p1".into()))
            .unwrap_err();
        assert!(err.to_string().contains("built-in"), "{err}");
        r.add(echo("b"), ToolSource::Plugin("p1".into())).unwrap();
        let err = r
            .add(echo("b"), ToolSource::Plugin("p2".into()))
            .unwrap_err();
        assert!(err.to_string().contains("plugin 'p1'"), "{err}");
        assert!(r.add(echo("bad id"), ToolSource::Builtin).is_err());
    }

    #[tokio::test]
    async fn add_and_remove_are_broadcast_and_order_is_kept() {
        let r = Registry::new();
        let mut rx = r.subscribe();
        r.add(echo("a"), ToolSource::Builtin).unwrap();
        r.add(echo("b"), ToolSource::Plugin("p".into())).unwrap();
        r.add(echo("c"), ToolSource::Plugin("p".into())).unwrap();
        assert_eq!(
            r.list().iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert_eq!(r.remove_plugin("p"), vec!["b".to_string(), "c".to_string()]);
        assert!(!r.remove("b"));
        r.notify_toggles_changed();
        let mut seen = Vec::new();
        while let Ok(c) = rx.try_recv() {
            seen.push(c);
        }
        assert_eq!(
            seen,
            vec![
                RegistryChange::Added("a".into()),
                RegistryChange::Added("b".into()),
                RegistryChange::Added("c".into()),
                RegistryChange::Removed("b".into()),
                RegistryChange::Removed("c".into()),
                RegistryChange::TogglesChanged,
            ]
        );
    }
}
