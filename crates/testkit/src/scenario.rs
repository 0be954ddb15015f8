//! Scripted "models" for scenarios that several test suites run end to end.

use crate::{FakeProvider, RecordedRequest, Step};
use serde_json::{Value, json};

/// The seed's first use case, "Find my last packing list and add socks to it": search for
/// packing lists → read the newest one found → append `- [ ] socks` to it → reply
/// `Added socks to "<title>".`. Each step reasons only from the tool result the client sent
/// back, so a client that returns wrong results makes the scenario go wrong visibly.
pub fn packing_list(fake: &FakeProvider) {
    fake.push(Step::tool_call(
        "search_notes",
        json!({"query": "packing list"}),
    ));
    fake.push_rule(|req: &RecordedRequest| {
        let found = last_result(req);
        let newest = found["results"]
            .as_array()
            .into_iter()
            .flatten()
            .max_by_key(|r| r["updated_time"].as_i64().unwrap_or(0))
            .map(|r| r["id"].clone())
            .unwrap_or(Value::Null);
        Step::tool_call("read_note", json!({"id": newest}))
    });
    fake.push_rule(|req: &RecordedRequest| {
        let note = last_result(req);
        Step::tool_call(
            "update_note",
            json!({"id": note["id"], "append": "\n- [ ] socks"}),
        )
    });
    fake.push_rule(|req: &RecordedRequest| {
        let upd = last_result(req);
        Step::text(format!(
            "Added socks to \"{}\".",
            upd["title"].as_str().unwrap_or("?")
        ))
    });
}

fn last_result(req: &RecordedRequest) -> Value {
    req.last_tool_result_json().unwrap_or(Value::Null)
}
