//! Shared helpers for the agent tests: a temp workspace, the real registry, the fake
//! provider server in every wire mode.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use sidenote_agent::*;
use sidenote_ai::{
    ChatProvider, ProviderConfig, ProviderType, RetryPolicy, Timeouts, build_provider,
};
use sidenote_store::{Actor, NewNote, Note, Store};
use sidenote_testkit::{FakeProvider, RecordedRequest};
use sidenote_tools::Registry;
use std::sync::Arc;
use std::time::Duration;

/// Every (wire format, streaming) combination.
pub const MODES: [(ProviderType, bool); 4] = [
    (ProviderType::OpenAiCompatible, true),
    (ProviderType::OpenAiCompatible, false),
    (ProviderType::Anthropic, true),
    (ProviderType::Anthropic, false),
];

pub fn provider(fake: &FakeProvider, ty: ProviderType, streaming: bool) -> Arc<dyn ChatProvider> {
    let mut c = ProviderConfig::new(ty, fake.base_url(), "fake-model");
    c.streaming = streaming;
    c.retry = RetryPolicy {
        max_retries: 0,
        initial_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(10),
        max_retry_after: Duration::from_secs(1),
    };
    c.timeouts = Timeouts {
        connect: Duration::from_secs(2),
        first_byte: Duration::from_secs(20),
        idle: Duration::from_secs(20),
    };
    build_provider(c, None).unwrap()
}

pub struct Workspace {
    pub dir: tempfile::TempDir,
    pub store: Store,
    pub registry: Registry,
}

impl Workspace {
    pub fn new() -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let registry = Registry::new();
        sidenote_tools::builtin::register_builtin(&registry, store.clone()).unwrap();
        Workspace {
            dir,
            store,
            registry,
        }
    }

    pub fn agent(&self, fake: &FakeProvider, ty: ProviderType, streaming: bool) -> Agent {
        Agent::new(provider(fake, ty, streaming), self.registry.clone())
            .with_store(self.store.clone())
    }

    pub fn notebook(&self, title: &str) -> String {
        self.store
            .create_notebook(&Actor::Cli, title, None)
            .unwrap()
            .id
    }

    pub fn note(&self, notebook: &str, title: &str, body: &str, updated: i64) -> Note {
        self.store
            .create_note(
                &Actor::Import,
                NewNote {
                    parent_id: Some(notebook.to_string()),
                    title: title.into(),
                    body: body.into(),
                    created_time: Some(updated),
                    updated_time: Some(updated),
                    ..Default::default()
                },
            )
            .unwrap()
    }

    /// Every note (trashed included), by id.
    pub fn snapshot(&self) -> Vec<Note> {
        let mut v = self.store.all_notes(true).unwrap();
        v.sort_by(|a, b| a.id.cmp(&b.id));
        v
    }
}

/// The JSON of the last tool result the client sent.
pub fn last_result_json(req: &RecordedRequest) -> Value {
    req.last_tool_result_json().expect("a tool result")
}

pub fn mode_name(ty: ProviderType, streaming: bool) -> String {
    format!("{ty} streaming={streaming}")
}
