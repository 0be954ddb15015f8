//! Adapt tool input schemas for providers: strip `$schema` and `title` (rejected or wasted by
//! several servers) everywhere a schema appears, and make sure the root is an object schema
//! with a `properties` map (OpenAI and Anthropic both require it, even for no-argument tools).

use serde_json::{Map, Value};

/// The adapted copy of `schema`.
pub fn adapt(schema: &Value) -> Value {
    let mut out = match schema {
        Value::Object(_) => schema.clone(),
        _ => Value::Object(Map::new()),
    };
    clean(&mut out);
    if let Value::Object(map) = &mut out {
        if !map.contains_key("type") {
            map.insert("type".into(), Value::String("object".into()));
        }
        let props_ok = matches!(map.get("properties"), Some(Value::Object(_)));
        if !props_ok {
            map.insert("properties".into(), Value::Object(Map::new()));
        }
    }
    out
}

/// Remove the unwanted keywords from one schema node and recurse into its sub-schemas
/// (but never into the *names* of `properties`, which may legitimately be "title").
fn clean(node: &mut Value) {
    let Value::Object(map) = node else { return };
    map.remove("$schema");
    map.remove("title");
    for key in ["properties", "$defs", "definitions", "patternProperties"] {
        if let Some(Value::Object(children)) = map.get_mut(key) {
            for child in children.values_mut() {
                clean(child);
            }
        }
    }
    for key in [
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
    ] {
        if let Some(child) = map.get_mut(key) {
            match child {
                Value::Array(items) => items.iter_mut().for_each(clean),
                other => clean(other),
            }
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(items)) = map.get_mut(key) {
            items.iter_mut().for_each(clean);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strips_schema_and_titles_but_keeps_a_property_named_title() {
        let s = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Args",
            "type": "object",
            "properties": {
                "title": {"type": "string", "title": "Title"},
                "tags": {"type": "array", "items": {"title": "Tag", "type": "string"}},
                "x": {"anyOf": [{"title": "A", "type": "string"}, {"type": "null"}]}
            },
            "$defs": {"D": {"title": "D", "type": "integer"}}
        });
        let out = adapt(&s);
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "x": {"anyOf": [{"type": "string"}, {"type": "null"}]}
                },
                "$defs": {"D": {"type": "integer"}}
            })
        );
    }

    #[test]
    fn ensures_properties() {
        assert_eq!(
            adapt(&json!({"type": "object"})),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            adapt(&json!(null)),
            json!({"type": "object", "properties": {}})
        );
    }
}
