//! Checks of what the client sent. Each problem is one human-readable violation.

use serde_json::Value;
use std::collections::{BTreeMap, HashSet};

/// Ids of the tool calls in the client's assistant messages (to compare with issued ids).
pub(crate) fn assistant_call_ids(api: crate::Api, body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let Some(msgs) = body.get("messages").and_then(Value::as_array) else {
        return out;
    };
    for m in msgs.iter().filter(|m| m["role"] == "assistant") {
        match api {
            crate::Api::OpenAi => {
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    out.extend(c["id"].as_str().map(str::to_string));
                }
            }
            crate::Api::Anthropic => {
                for b in m["content"].as_array().into_iter().flatten() {
                    if b["type"] == "tool_use" {
                        out.extend(b["id"].as_str().map(str::to_string));
                    }
                }
            }
        }
    }
    out
}

fn check_schema(where_: &str, schema: &Value, v: &mut Vec<String>) {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        v.push(format!("{where_}: schema type is not \"object\""));
    }
    if !schema.get("properties").is_some_and(Value::is_object) {
        v.push(format!("{where_}: schema has no \"properties\" object"));
    }
    if schema.get("$schema").is_some() {
        v.push(format!("{where_}: schema still has \"$schema\""));
    }
}

pub(crate) fn openai(body: &Value) -> Vec<String> {
    let mut v = Vec::new();
    if body
        .get("model")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        v.push("request has no \"model\"".into());
    }
    let Some(msgs) = body
        .get("messages")
        .and_then(Value::as_array)
        .filter(|m| !m.is_empty())
    else {
        v.push("request has no \"messages\"".into());
        return v;
    };
    for (i, t) in body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if t["type"] != "function" || !t["function"]["name"].is_string() {
            v.push(format!(
                "tools[{i}] is not {{type:function, function:{{name,…}}}}"
            ));
        }
        check_schema(&format!("tools[{i}]"), &t["function"]["parameters"], &mut v);
    }
    let mut seen_ids = HashSet::new();
    // Pending calls of the last assistant step: id -> times answered.
    let mut pending: BTreeMap<String, u32> = BTreeMap::new();
    let close = |pending: &mut BTreeMap<String, u32>, at: usize, v: &mut Vec<String>| {
        for (id, n) in pending.iter() {
            if *n == 0 {
                v.push(format!(
                    "tool call {id} was never answered (before messages[{at}])"
                ));
            }
        }
        pending.clear();
    };
    for (i, m) in msgs.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or_default();
        match role {
            "tool" => {
                let Some(id) = m["tool_call_id"].as_str() else {
                    v.push(format!("messages[{i}]: tool message without tool_call_id"));
                    continue;
                };
                match pending.get_mut(id) {
                    None => v.push(format!(
                        "messages[{i}]: tool result for {id}, which is not a call of the preceding assistant message"
                    )),
                    Some(n) => {
                        *n += 1;
                        if *n > 1 {
                            v.push(format!("messages[{i}]: tool call {id} answered more than once"));
                        }
                    }
                }
                if !m["content"].is_string() && !m["content"].is_array() {
                    v.push(format!(
                        "messages[{i}]: tool message content is not a string"
                    ));
                }
            }
            "system" | "user" | "assistant" | "developer" => {
                close(&mut pending, i, &mut v);
                if role == "assistant" {
                    for c in m["tool_calls"].as_array().into_iter().flatten() {
                        let id = c["id"].as_str().unwrap_or_default().to_string();
                        if id.is_empty() {
                            v.push(format!("messages[{i}]: assistant tool call without id"));
                            continue;
                        }
                        if !seen_ids.insert(id.clone()) {
                            v.push(format!("messages[{i}]: tool call id {id} used twice"));
                        }
                        if !c["function"]["arguments"].is_string() {
                            v.push(format!(
                                "messages[{i}]: arguments of {id} are not a JSON string"
                            ));
                        }
                        pending.insert(id, 0);
                    }
                }
            }
            other => v.push(format!("messages[{i}]: unknown role {other:?}")),
        }
    }
    close(&mut pending, msgs.len(), &mut v);
    v
}

pub(crate) fn anthropic(headers: &BTreeMap<String, String>, body: &Value) -> Vec<String> {
    let mut v = Vec::new();
    if !headers.contains_key("anthropic-version") {
        v.push("no anthropic-version header".into());
    }
    if body
        .get("model")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        v.push("request has no \"model\"".into());
    }
    if !body.get("max_tokens").is_some_and(Value::is_u64) {
        v.push("request has no \"max_tokens\" (required by Anthropic)".into());
    }
    if let Some(s) = body.get("system")
        && !s.is_string()
        && !s.is_array()
    {
        v.push("\"system\" is neither a string nor an array of blocks".into());
    }
    for (i, t) in body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if !t["name"].is_string() {
            v.push(format!("tools[{i}] has no name"));
        }
        check_schema(&format!("tools[{i}]"), &t["input_schema"], &mut v);
    }
    let Some(msgs) = body
        .get("messages")
        .and_then(Value::as_array)
        .filter(|m| !m.is_empty())
    else {
        v.push("request has no \"messages\"".into());
        return v;
    };
    let mut seen_ids = HashSet::new();
    let mut pending: Vec<String> = Vec::new();
    let mut prev_role = "";
    for (i, m) in msgs.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or_default();
        if role != "user" && role != "assistant" {
            v.push(format!(
                "messages[{i}]: role {role:?} not allowed (system goes in the top-level \"system\" field)"
            ));
            continue;
        }
        if i == 0 && role != "user" {
            v.push("messages[0] is not a user message".into());
        }
        if role == prev_role {
            v.push(format!(
                "messages[{i}]: two {role} messages in a row (roles must alternate)"
            ));
        }
        prev_role = role;
        let blocks: Vec<Value> = match &m["content"] {
            Value::String(s) => {
                if s.is_empty() {
                    v.push(format!("messages[{i}]: empty content"));
                }
                vec![]
            }
            Value::Array(b) => {
                if b.is_empty() {
                    v.push(format!("messages[{i}]: empty content"));
                }
                b.clone()
            }
            _ => {
                v.push(format!(
                    "messages[{i}]: content is neither a string nor blocks"
                ));
                vec![]
            }
        };
        let results: Vec<&str> = blocks
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .map(|b| b["tool_use_id"].as_str().unwrap_or_default())
            .collect();
        if role == "assistant" {
            if !results.is_empty() {
                v.push(format!(
                    "messages[{i}]: tool_result in an assistant message"
                ));
            }
            if !pending.is_empty() {
                v.push(format!(
                    "messages[{i}]: tool calls {pending:?} not answered"
                ));
            }
            pending = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| b["id"].as_str().unwrap_or_default().to_string())
                .collect();
            for id in &pending {
                if id.is_empty() {
                    v.push(format!("messages[{i}]: tool_use without id"));
                } else if !seen_ids.insert(id.clone()) {
                    v.push(format!("messages[{i}]: tool_use id {id} used twice"));
                }
            }
            for b in blocks.iter().filter(|b| b["type"] == "tool_use") {
                if !b["input"].is_object() {
                    v.push(format!("messages[{i}]: tool_use input is not an object"));
                }
            }
        } else {
            // All results of the previous step must be in this one message, each exactly once,
            // before any text.
            let mut answered: BTreeMap<&str, u32> = BTreeMap::new();
            for r in &results {
                *answered.entry(r).or_default() += 1;
                if !pending.iter().any(|p| p == r) {
                    v.push(format!(
                        "messages[{i}]: tool_result for {r}, which is not a tool_use of the preceding assistant message"
                    ));
                }
            }
            for (id, n) in &answered {
                if *n > 1 {
                    v.push(format!("messages[{i}]: tool call {id} answered {n} times"));
                }
            }
            for p in &pending {
                if !answered.contains_key(p.as_str()) {
                    v.push(format!(
                        "messages[{i}]: tool call {p} not answered in the user message right after it"
                    ));
                }
            }
            let first_other = blocks.iter().position(|b| b["type"] != "tool_result");
            let last_result = blocks.iter().rposition(|b| b["type"] == "tool_result");
            if let (Some(o), Some(r)) = (first_other, last_result)
                && o < r
            {
                v.push(format!(
                    "messages[{i}]: tool_result blocks must come before other content"
                ));
            }
            pending.clear();
        }
    }
    if !pending.is_empty() {
        v.push(format!(
            "request ends with unanswered tool calls {pending:?}"
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_flags_unanswered_and_double_answers() {
        let body = json!({"model": "m", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "x"},
            {"role": "tool", "tool_call_id": "a", "content": "x"},
            {"role": "tool", "tool_call_id": "zz", "content": "x"},
        ]});
        let v = openai(&body);
        assert_eq!(v.len(), 3, "{v:?}");
        assert!(v.iter().any(|m| m.contains("answered more than once")));
        assert!(v.iter().any(|m| m.contains("zz")));
        assert!(v.iter().any(|m| m.contains("b was never answered")));
    }

    #[test]
    fn anthropic_flags_split_results_and_roles() {
        let h: BTreeMap<String, String> =
            [("anthropic-version".to_string(), "x".to_string())].into();
        let body = json!({"model": "m", "max_tokens": 10, "messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "a", "name": "f", "input": {}},
                {"type": "tool_use", "id": "b", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "x"}]},
        ]});
        let v = anthropic(&h, &body);
        assert!(v.iter().any(|m| m.contains("role \"system\"")), "{v:?}");
        assert!(v.iter().any(|m| m.contains("b not answered")), "{v:?}");
        assert!(v.iter().any(|m| m.contains("in a row")), "{v:?}");
        let ok = json!({"model": "m", "max_tokens": 10, "system": "s", "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]},
        ]});
        assert_eq!(anthropic(&h, &ok), Vec::<String>::new());
    }
}
