//! Token usage accounting per provider endpoint (see [`crate::ProviderConfig::endpoint_id`]).
//!
//! A provider calls its [`UsageSink`] once per successful response. The CLI persists a
//! [`UsageTable`] as JSON in the setting `ai.usage` and shows it with `sidenote ai usage`.

use crate::types::Usage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Receives the usage of every successful call.
pub trait UsageSink: Send + Sync {
    fn record(&self, endpoint: &str, model: &str, usage: Usage);
}

/// Cumulative counters of one endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageTotals {
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Totals keyed by endpoint id.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageTable {
    pub endpoints: BTreeMap<String, UsageTotals>,
}

impl UsageTable {
    pub fn add(&mut self, endpoint: &str, usage: Usage) {
        let t = self.endpoints.entry(endpoint.to_string()).or_default();
        t.requests += 1;
        t.input_tokens += usage.input_tokens;
        t.output_tokens += usage.output_tokens;
    }
    /// Parse a stored table; an empty string is an empty table.
    pub fn from_json(s: &str) -> Result<UsageTable, serde_json::Error> {
        if s.trim().is_empty() {
            return Ok(UsageTable::default());
        }
        serde_json::from_str(s)
    }
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
    }
}

/// An in-memory sink (tests, and callers that persist later).
#[derive(Debug, Default)]
pub struct MemoryUsage {
    table: Mutex<UsageTable>,
}

impl MemoryUsage {
    pub fn snapshot(&self) -> UsageTable {
        match self.table.lock() {
            Ok(t) => t.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }
}

impl UsageSink for MemoryUsage {
    fn record(&self, endpoint: &str, _model: &str, usage: Usage) {
        let mut t = match self.table.lock() {
            Ok(t) => t,
            Err(p) => p.into_inner(),
        };
        t.add(endpoint, usage);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn accumulates_per_endpoint_and_round_trips() {
        let mut t = UsageTable::default();
        t.add(
            "a",
            Usage {
                input_tokens: 3,
                output_tokens: 4,
            },
        );
        t.add(
            "a",
            Usage {
                input_tokens: 1,
                output_tokens: 1,
            },
        );
        t.add("b", Usage::default());
        assert_eq!(
            t.endpoints["a"],
            UsageTotals {
                requests: 2,
                input_tokens: 4,
                output_tokens: 5
            }
        );
        assert_eq!(t.endpoints["b"].requests, 1);
        assert_eq!(UsageTable::from_json(&t.to_json()).unwrap(), t);
        assert_eq!(UsageTable::from_json("").unwrap(), UsageTable::default());
    }
}
