//! Argument validation against a tool's JSON Schema, before any handler runs.

use crate::ToolError;
use serde_json::Value;

/// Validate `args` against `schema` (compiling it each time; the registry keeps compiled
/// schemas in [`CompiledSchema`]).
pub fn validate_args(schema: &Value, args: &Value) -> Result<(), ToolError> {
    CompiledSchema::new(schema)?.check(args)
}

/// A tool's input schema, compiled once.
pub struct CompiledSchema(jsonschema::Validator);

impl CompiledSchema {
    pub fn new(schema: &Value) -> Result<Self, ToolError> {
        jsonschema::validator_for(schema)
            .map(CompiledSchema)
            .map_err(|e| ToolError::internal(format!("tool schema is invalid: {e}")))
    }

    /// The error names the field (as a dotted path, or "arguments" for the top level) and
    /// the rule that failed, so a model can fix its call.
    pub fn check(&self, args: &Value) -> Result<(), ToolError> {
        check(&self.0, args)
    }
}

fn check(validator: &jsonschema::Validator, args: &Value) -> Result<(), ToolError> {
    let problems: Vec<String> = validator
        .iter_errors(args)
        .take(5)
        .map(|e| {
            let path = e.instance_path().to_string();
            let field = if path.is_empty() {
                "arguments".to_string()
            } else {
                format!("'{}'", path.trim_start_matches('/').replace('/', "."))
            };
            format!("{field}: {e}")
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ToolError::Recoverable(format!(
            "Invalid arguments: {}",
            problems.join("; ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type":"object","properties":{
            "query":{"type":"string"},
            "limit":{"type":"integer","minimum":1,"maximum":100}},
            "required":["query"]})
    }

    #[test]
    fn accepts_valid_arguments() {
        assert_eq!(
            validate_args(&schema(), &json!({"query":"x","limit":5})),
            Ok(())
        );
    }

    #[test]
    fn names_missing_required_field() {
        let Err(ToolError::Recoverable(msg)) = validate_args(&schema(), &json!({})) else {
            panic!("expected a recoverable error");
        };
        assert!(msg.contains("query"), "{msg}");
        assert!(msg.contains("required"), "{msg}");
    }

    #[test]
    fn names_field_and_rule_for_out_of_range_value() {
        let Err(ToolError::Recoverable(msg)) =
            validate_args(&schema(), &json!({"query":"x","limit":500}))
        else {
            panic!("expected a recoverable error");
        };
        assert!(msg.contains("'limit'"), "{msg}");
        assert!(msg.contains("100"), "{msg}");
    }

    #[test]
    fn wrong_type_is_reported() {
        let Err(ToolError::Recoverable(msg)) = validate_args(&schema(), &json!({"query": 3}))
        else {
            panic!("expected a recoverable error");
        };
        assert!(msg.contains("'query'") && msg.contains("string"), "{msg}");
    }
}
