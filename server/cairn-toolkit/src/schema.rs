//! The input schema the model sees, derived from a tool's `Args` struct, never written by hand.
//!
//! schemars writes a draft 2020-12 schema with subschemas inlined; a few of its habits cost
//! tokens and confuse some models without telling them anything, so they are undone here:
//! an optional field is simply not required (not `["integer", "null"]`), Rust's integer and
//! float widths are not formats (`uint`, `int64`), and the struct's own title and docs are not
//! the tool's (its description is).

use rmcp::model::JsonObject;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The MCP `inputSchema` of `T`: an object schema that refuses unknown properties when `T` is
/// `deny_unknown_fields`, with each field's doc comment as its description.
pub fn input_schema<T: JsonSchema>() -> JsonObject {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    tidy(&mut value);
    let mut object = match value {
        Value::Object(o) => o,
        _ => Map::new(),
    };
    for key in ["title", "description", "$schema"] {
        object.remove(key);
    }
    object.insert("type".into(), Value::from("object"));
    object
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    object
}

/// Formats schemars adds for Rust's number types; they are not JSON Schema formats.
const WIDTH_FORMATS: &[&str] = &[
    "uint", "uint8", "uint16", "uint32", "uint64", "uint128", "int", "int8", "int16", "int32",
    "int64", "int128", "float", "double",
];

fn tidy(value: &mut Value) {
    match value {
        Value::Object(o) => {
            if o.get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| WIDTH_FORMATS.contains(&f))
            {
                o.remove("format");
            }
            unnull(o);
            for v in o.values_mut() {
                tidy(v);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(tidy),
        _ => {}
    }
}

/// Undoes the `null` schemars adds to an `Option`: serde treats a missing field and `null`
/// alike, and a field that is not required says the same with fewer tokens.
fn unnull(o: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = o.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            o.insert("type".into(), only);
        }
    }
    if let Some(Value::Array(values)) = o.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    let is_null = |v: &Value| v.get("type").and_then(Value::as_str) == Some("null");
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(options)) = o.get_mut(key) else {
            continue;
        };
        if !options.iter().any(is_null) {
            continue;
        }
        options.retain(|v| !is_null(v));
        if options.len() == 1
            && let Some(Value::Object(inner)) = options.pop()
        {
            o.remove(key);
            for (k, v) in inner {
                // The field's own description (outside) wins over the type's.
                o.entry(k).or_insert(v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    /// How the output is ordered.
    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Order {
        Asc,
        Desc,
    }

    /// Struct docs are not the tool's description.
    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        /// The file to read.
        path: String,
        /// First line, from 1.
        #[schemars(range(min = 1))]
        offset: Option<usize>,
        /// Sort order.
        order: Option<Order>,
        /// Globs to skip.
        #[serde(default)]
        exclude: Vec<String>,
    }

    #[test]
    fn options_are_optional_fields_and_docs_are_descriptions() {
        let schema = Value::Object(input_schema::<Args>());
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["path"],
                "properties": {
                    "path": {"type": "string", "description": "The file to read."},
                    "offset": {"type": "integer", "minimum": 1, "description": "First line, from 1."},
                    "order": {"type": "string", "enum": ["asc", "desc"], "description": "Sort order."},
                    "exclude": {"type": "array", "items": {"type": "string"}, "description": "Globs to skip.", "default": []},
                }
            })
        );
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Nothing {}

    #[test]
    fn no_arguments_is_an_empty_closed_object() {
        let schema = Value::Object(input_schema::<Nothing>());
        assert_eq!(
            schema,
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
    }
}
