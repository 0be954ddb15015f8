//! The ONE workspace-tool registry (Tier 2 of the seed). Its tools serve the agent in-process
//! and external AI apps over MCP; plugins add tools to it at runtime.
//!
//! - [`Tool`]: one workspace operation (id, description, JSON input schema, access, async call,
//!   optional render).
//! - [`Registry`]: holds built-in and plugin tools, validates arguments against each tool's
//!   schema before the handler runs, and broadcasts [`RegistryChange`]s.
//! - [`ToolError`] — `Recoverable` (the model reads it and can try again; MCP `isError: true`)
//!   vs `Internal` (a bug or I/O failure; MCP JSON-RPC −32603, the agent turn fails).
//! - [`toggles`]: per-tool switches for MCP (`mcp.tool.<id>.enabled`) and the sidebar
//!   (`ai.tool.<id>.enabled`).

pub mod builtin;
mod error;
mod registry;
pub mod toggles;
mod validate;

pub use error::ToolError;
pub use registry::{Registry, RegistryChange, ToolInfo, ToolSource, valid_tool_id};
pub use validate::validate_args;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sidenote_store::Actor;

/// Whether a tool only reads the workspace or may change it. Write tools are off over MCP
/// until the user enables them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    Read,
    Write,
}

/// Per-call context: who is calling (recorded in the store's write journal).
#[derive(Debug, Clone)]
pub struct ToolCtx {
    pub actor: Actor,
}

impl ToolCtx {
    pub fn new(actor: Actor) -> Self {
        ToolCtx { actor }
    }
}

/// What a tool returns on success.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// Structured output; serialised as JSON for the model and MCP.
    Json(Value),
    /// An image (e.g. `read_image`); MCP sends it as image content.
    Image {
        /// The resource id it came from.
        id: String,
        mime_type: String,
        /// Base64 of the image bytes (no `data:` prefix).
        base64: String,
    },
}

impl ToolOutput {
    /// The JSON form the model sees (images as a small descriptor without the bytes).
    pub fn to_json(&self) -> Value {
        match self {
            ToolOutput::Json(v) => v.clone(),
            ToolOutput::Image {
                id,
                mime_type,
                base64,
            } => serde_json::json!({
                "type": "image", "id": id, "mime_type": mime_type, "bytes_base64": base64.len(),
            }),
        }
    }
}

/// A JSON "RenderSpec" for the panel (validated by the plugin host; opaque here).
pub type RenderSpec = Value;

/// One workspace operation.
#[async_trait::async_trait]
pub trait Tool: Send + Sync {
    fn id(&self) -> &str;
    /// What the model reads to decide when to call the tool. Keep it compact.
    fn description(&self) -> &str;
    /// JSON Schema (draft 2020-12 subset) of the arguments object.
    fn input_schema(&self) -> &Value;
    fn access(&self) -> Access;
    /// Run the tool. Arguments have already been validated against `input_schema`.
    async fn call(&self, input: Value, ctx: &ToolCtx) -> Result<ToolOutput, ToolError>;
    /// Optional human rendering of a result (plugin tools).
    async fn render(&self, _input: &Value, _output: &Value) -> Option<RenderSpec> {
        None
    }
    /// One short line for the activity feed, e.g. `Searching notes for "packing list"`
    /// (before the call, `output` None) or `Read note: Packing — Lakes` (after it).
    fn activity(&self, _input: &Value, _output: Option<&ToolOutput>) -> String {
        format!("Calling {}", self.id())
    }
}
