//! Provider settings (and `ai test`), per-tool switches, plugins.

use super::chat::provider_error;
use super::{ApiError, ApiResult, PanelState};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use sidenote_ai::{
    AiError, ChatProvider, ProviderConfig, ProviderType, Usage, UsageSink, UsageTable,
};
use sidenote_store::Store;
use sidenote_tools::ToolSource;
use sidenote_tools::toggles::{self, Surface};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Where `sidenote ai usage` reads the token usage table.
const USAGE_SETTING: &str = "ai.usage";

/// Records usage in the workspace like the CLI does.
struct StoreUsage {
    store: Store,
    lock: Mutex<()>,
}

impl UsageSink for StoreUsage {
    fn record(&self, endpoint: &str, _model: &str, usage: Usage) {
        let _g = self.lock.lock();
        let raw = self
            .store
            .setting(USAGE_SETTING)
            .ok()
            .flatten()
            .unwrap_or_default();
        let mut table = UsageTable::from_json(&raw).unwrap_or_default();
        table.add(endpoint, usage);
        if let Err(e) = self.store.set_setting(USAGE_SETTING, &table.to_json()) {
            tracing::warn!("could not record AI usage: {e}");
        }
    }
}

/// The provider from the workspace settings (environment overrides apply), privacy gate
/// included. The settings are read for every turn, so a change takes effect at once; the
/// HTTP client is reused while the resolved configuration stays the same.
pub(crate) fn provider(st: &PanelState) -> Result<Arc<dyn ChatProvider>, AiError> {
    let mut settings = HashMap::new();
    for key in sidenote_ai::config::SETTING_KEYS {
        let v = st
            .store
            .setting(key)
            .map_err(|e| AiError::NotConfigured(format!("cannot read setting {key}: {e}")))?;
        if let Some(v) = v {
            settings.insert(key.to_string(), v);
        }
    }
    let config =
        ProviderConfig::resolve(&|k| settings.get(k).cloned(), &|k| std::env::var(k).ok())?;
    let mut cache = super::lock(&st.provider_cache);
    if let Some((c, p)) = cache.as_ref()
        && *c == config
    {
        return Ok(p.clone());
    }
    let built = sidenote_ai::build_provider(
        config.clone(),
        Some(Arc::new(StoreUsage {
            store: st.store.clone(),
            lock: Mutex::new(()),
        })),
    )?;
    *cache = Some((config, built.clone()));
    Ok(built)
}

fn setting(st: &PanelState, key: &str) -> ApiResult<Option<String>> {
    Ok(st.store.setting(key)?.filter(|v| !v.trim().is_empty()))
}

/// `GET /api/settings`: the provider fields (the key only as set / not set), the MCP URL and token.
pub(crate) async fn get(State(st): State<PanelState>) -> ApiResult<Json<Value>> {
    let allow_remote = setting(&st, "ai.allowRemote")?
        .as_deref()
        .and_then(toggles::parse_bool)
        .unwrap_or(false);
    Ok(Json(json!({
        "provider_type": setting(&st, "ai.chat.providerType")?.unwrap_or_else(|| "openai-compatible".into()),
        "base_url": setting(&st, "ai.chat.baseUrl")?.unwrap_or_default(),
        "model": setting(&st, "ai.chat.model")?.unwrap_or_default(),
        "api_key_set": setting(&st, "ai.chat.apiKey")?.is_some(),
        "allow_remote": allow_remote,
        "mcp_url": &*st.mcp_url,
        "mcp_token": &*st.token,
    })))
}

#[derive(Deserialize)]
pub(crate) struct SettingsBody {
    provider_type: Option<String>,
    base_url: Option<String>,
    model: Option<String>,
    /// Replaces the key when present and not empty.
    api_key: Option<String>,
    #[serde(default)]
    clear_api_key: bool,
    allow_remote: Option<bool>,
}

pub(crate) async fn put(
    State(st): State<PanelState>,
    Json(b): Json<SettingsBody>,
) -> ApiResult<Json<Value>> {
    if let Some(t) = &b.provider_type {
        let t = ProviderType::parse(t).map_err(|e| ApiError::bad_request(e.to_string()))?;
        st.store.set_setting("ai.chat.providerType", t.as_str())?;
    }
    if let Some(u) = &b.base_url {
        let u = u.trim();
        if !(u.is_empty() || u.starts_with("http://") || u.starts_with("https://")) {
            return Err(ApiError::bad_request(format!(
                "the base URL must start with http:// or https://, got {u:?}"
            )));
        }
        st.store.set_setting("ai.chat.baseUrl", u)?;
    }
    if let Some(m) = &b.model {
        st.store.set_setting("ai.chat.model", m.trim())?;
    }
    if b.clear_api_key {
        st.store.unset_setting("ai.chat.apiKey")?;
    } else if let Some(k) = b
        .api_key
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())
    {
        st.store.set_setting("ai.chat.apiKey", k)?;
    }
    if let Some(r) = b.allow_remote {
        st.store
            .set_setting("ai.allowRemote", if r { "true" } else { "false" })?;
    }
    get(State(st)).await
}

/// `POST /api/settings/test`: what `sidenote ai test` runs.
pub(crate) async fn test(State(st): State<PanelState>) -> ApiResult<Json<Value>> {
    let provider = provider(&st).map_err(provider_error)?;
    let report = sidenote_ai::probe::run_probe(provider.as_ref())
        .await
        .map_err(|e| ApiError::new(StatusCode::BAD_GATEWAY, "provider_error", e.to_string()))?;
    let mut v = serde_json::to_value(&report).map_err(|e| ApiError::internal(e.to_string()))?;
    v["verdict"] = json!(report.verdict());
    Ok(Json(v))
}

/// `GET /api/tools`: every registry tool with its sidebar and MCP switches.
pub(crate) async fn tools(State(st): State<PanelState>) -> ApiResult<Json<Value>> {
    let mut out = Vec::new();
    for t in st.registry.list() {
        let ai = toggles::is_enabled(&st.store, Surface::Sidebar, &t)?;
        let mcp = toggles::is_enabled(&st.store, Surface::Mcp, &t)?;
        let plugin = match &t.source {
            ToolSource::Plugin(p) => Some(p.clone()),
            ToolSource::Builtin => None,
        };
        out.push(
            json!({"id": t.id, "description": t.description, "access": t.access,
                        "plugin": plugin, "ai_enabled": ai, "mcp_enabled": mcp}),
        );
    }
    Ok(Json(Value::Array(out)))
}

#[derive(Deserialize)]
pub(crate) struct ToggleBody {
    /// `ai` (the sidebar) or `mcp`.
    surface: String,
    enabled: bool,
}

pub(crate) async fn set_tool(
    State(st): State<PanelState>,
    Path(id): Path<String>,
    Json(b): Json<ToggleBody>,
) -> ApiResult<Json<Value>> {
    if st.registry.get(&id).is_none() {
        return Err(ApiError::not_found(format!("no tool {id:?}")));
    }
    let surface = match b.surface.as_str() {
        "ai" | "sidebar" => Surface::Sidebar,
        "mcp" => Surface::Mcp,
        other => {
            return Err(ApiError::bad_request(format!(
                "surface must be \"ai\" or \"mcp\", not {other:?}"
            )));
        }
    };
    st.store.set_setting(
        &toggles::setting_key(surface, &id),
        if b.enabled { "true" } else { "false" },
    )?;
    st.registry.notify_toggles_changed();
    Ok(Json(
        json!({"id": id, "surface": b.surface, "enabled": b.enabled}),
    ))
}

fn plugin_list(st: &PanelState) -> ApiResult<Value> {
    match &st.plugins {
        Some(host) => {
            serde_json::to_value(host.status()).map_err(|e| ApiError::internal(e.to_string()))
        }
        None => Ok(json!([])),
    }
}

pub(crate) async fn plugins(State(st): State<PanelState>) -> ApiResult<Json<Value>> {
    Ok(Json(plugin_list(&st)?))
}

/// `POST /api/plugins/{id}/enable|disable`; answers the new plugin list.
pub(crate) async fn plugin_action(
    State(st): State<PanelState>,
    Path((id, action)): Path<(String, String)>,
) -> ApiResult<Json<Value>> {
    let Some(host) = &st.plugins else {
        return Err(ApiError::not_found(
            "plugins are not available in this server",
        ));
    };
    let r = match action.as_str() {
        "enable" => host.enable(&id).await.map(|_| ()),
        "disable" => host.disable(&id).await,
        other => return Err(ApiError::not_found(format!("no plugin action {other:?}"))),
    };
    r.map_err(|e| ApiError::bad_request(e.to_string()))?;
    Ok(Json(plugin_list(&st)?))
}
