//! `sidenote ai test` (is the configured model reachable, and can it call tools natively?) and
//! `sidenote ai usage` (token usage per provider endpoint).

use crate::app::App;
use anyhow::Context;
use sidenote_ai::probe::{self, ToolSupport};
use sidenote_ai::{ChatProvider, ProviderConfig, Usage, UsageSink, UsageTable, build_provider};
use sidenote_store::Store;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The setting holding the [`UsageTable`] as JSON.
pub const USAGE_SETTING: &str = "ai.usage";

#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Check the configured model: a one-word reply, then a tool-calling probe.
    Test(TestArgs),
    /// Show token usage per provider endpoint.
    Usage(UsageArgs),
}

#[derive(clap::Args)]
pub struct TestArgs {
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args)]
pub struct UsageArgs {
    /// Print the table as JSON.
    #[arg(long)]
    json: bool,
    /// Forget the recorded usage.
    #[arg(long)]
    reset: bool,
}

pub async fn run(app: &App, cmd: Cmd) -> anyhow::Result<()> {
    match cmd {
        Cmd::Test(a) => test(app, a).await,
        Cmd::Usage(a) => usage(app, a),
    }
}

/// Resolve the provider settings (store settings, overridden by the environment).
pub fn provider_config(store: &Store) -> anyhow::Result<ProviderConfig> {
    let mut settings = HashMap::new();
    for key in sidenote_ai::config::SETTING_KEYS {
        if let Some(v) = store
            .setting(key)
            .with_context(|| format!("cannot read setting {key}"))?
        {
            settings.insert(key.to_string(), v);
        }
    }
    Ok(ProviderConfig::resolve(
        &|k| settings.get(k).cloned(),
        &|k| std::env::var(k).ok(),
    )?)
}

/// The configured provider, with usage recorded in the workspace. Applies the privacy gate.
pub fn provider(store: &Store) -> anyhow::Result<Arc<dyn ChatProvider>> {
    let config = provider_config(store)?;
    Ok(build_provider(
        config,
        Some(Arc::new(StoreUsage::new(store.clone()))),
    )?)
}

/// Persists usage in the setting [`USAGE_SETTING`].
pub struct StoreUsage {
    store: Store,
    lock: Mutex<()>,
}

impl StoreUsage {
    pub fn new(store: Store) -> Self {
        StoreUsage {
            store,
            lock: Mutex::new(()),
        }
    }
}

impl UsageSink for StoreUsage {
    fn record(&self, endpoint: &str, _model: &str, usage: Usage) {
        let _guard = self.lock.lock();
        let result = (|| -> anyhow::Result<()> {
            let mut table = read_usage(&self.store)?;
            table.add(endpoint, usage);
            self.store.set_setting(USAGE_SETTING, &table.to_json())?;
            Ok(())
        })();
        if let Err(e) = result {
            tracing::warn!("could not record AI usage: {e:#}");
        }
    }
}

fn read_usage(store: &Store) -> anyhow::Result<UsageTable> {
    let raw = store.setting(USAGE_SETTING)?.unwrap_or_default();
    UsageTable::from_json(&raw)
        .with_context(|| format!("the {USAGE_SETTING} setting is not valid usage JSON"))
}

async fn test(app: &App, args: TestArgs) -> anyhow::Result<()> {
    let provider = provider(&app.store)?;
    if !args.json {
        println!(
            "Provider: {} ({})",
            provider.id(),
            match provider.classification() {
                sidenote_ai::Classification::Local => "local",
                sidenote_ai::Classification::Remote => "remote",
            }
        );
        println!("Model:    {}", provider.model());
    }
    let report = probe::run_probe(provider.as_ref())
        .await
        .context("the AI provider could not be used")?;
    if args.json {
        let mut v = serde_json::to_value(&report)?;
        v["verdict"] = report.verdict().into();
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "1. Plain reply to {:?}: {} (got {:?})",
            probe::HELLO_PROMPT,
            if report.hello_ok { "ok" } else { "unexpected" },
            report.hello_reply.trim()
        );
        let tools = match &report.tools {
            ToolSupport::Native => format!(
                "native: called {} with structured arguments and used its result",
                probe::PROBE_TOOL
            ),
            ToolSupport::Partial(why) => format!("partial: {why}"),
            ToolSupport::None(why) => format!("not native: {why}"),
        };
        println!("2. Tool calling: {tools}");
        println!(
            "Tokens:   {} in, {} out",
            report.usage.input_tokens, report.usage.output_tokens
        );
        println!("Verdict:  {}", report.verdict());
    }
    match report.tools {
        ToolSupport::None(_) => anyhow::bail!(
            "{} cannot call tools natively; choose a tool-calling model for the AI sidebar",
            report.model
        ),
        _ => Ok(()),
    }
}

fn usage(app: &App, args: UsageArgs) -> anyhow::Result<()> {
    if args.reset {
        app.store
            .set_setting(USAGE_SETTING, &UsageTable::default().to_json())?;
        println!("AI usage reset.");
        return Ok(());
    }
    let table = read_usage(&app.store)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&table)?);
        return Ok(());
    }
    if table.endpoints.is_empty() {
        println!("No AI usage recorded yet.");
        return Ok(());
    }
    let width = table
        .endpoints
        .keys()
        .map(|k| k.chars().count())
        .max()
        .unwrap_or(0)
        .max("ENDPOINT".len());
    println!(
        "{:<width$}  {:>8}  {:>12}  {:>12}",
        "ENDPOINT", "REQUESTS", "INPUT TOKENS", "OUTPUT TOKENS"
    );
    for (endpoint, t) in &table.endpoints {
        println!(
            "{:<width$}  {:>8}  {:>12}  {:>12}",
            endpoint, t.requests, t.input_tokens, t.output_tokens
        );
    }
    Ok(())
}
