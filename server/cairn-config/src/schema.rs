//! The configuration's JSON Schema (`cairn config schema`), and the VS Code settings generated
//! from it (`cairn config schema --vscode`, the `contributes.configuration` of
//! `editors/vscode/package.json`, kept in step by `tests/config/schema.rs`).

use serde_json::{Map, Value, json};

use crate::layers::WORKSPACE_FORBIDDEN;
use crate::model::Config;

/// Sections that only the user's own settings may set: the approval policy (a repository may
/// not loosen it), MCP servers (a workspace's servers wait for trust, so an editor's workspace
/// settings may not declare them either), the user's access grants, the API tools, the web
/// guard's exceptions, the sandbox's engine, the databases, the cloud accounts and where messages may go (a repository's `.vscode/settings.json` is less
/// visible than its `.cairn/config.toml`).
const USER_ONLY_SECTIONS: &[&str] = &[
    "policy", "mcp", "access", "api", "web", "sandbox", "db", "system", "cloud", "comms",
];

/// The JSON Schema (draft 2020-12) of the user configuration (`config.toml`, the editor's
/// `initializationOptions.config`).
pub fn json_schema() -> Value {
    let schema = schemars::schema_for!(Config);
    let mut value = serde_json::to_value(&schema).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.insert("title".into(), json!("cairn configuration"));
    }
    value
}

/// The VS Code extension's `contributes.configuration`: one setting `cairn.SECTION.KEY` for each
/// configuration key (tables of named entries, such as `mcp.servers`, are one object setting),
/// plus `cairn.path`, the binary the extension starts. Settings that a repository must not set
/// (the keys a workspace `config.toml` may not set, and the sections in [`USER_ONLY_SECTIONS`])
/// have `"scope": "application"`, so VS Code reads them from the user's settings only.
pub fn vscode_configuration() -> Value {
    let schema = json_schema();
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut properties = Map::new();
    properties.insert(
        "cairn.path".into(),
        json!({
            "type": "string",
            "default": "cairn",
            "scope": "machine",
            "markdownDescription": "The `cairn` binary the extension starts as `cairn lsp`: a name looked up on the `PATH`, or an absolute path. Install it with `cargo install --path server/cairn` from the cairn repository."
        }),
    );
    collect(&schema, &defs, &mut Vec::new(), &mut properties);
    json!({
        "title": "cairn",
        "properties": Value::Object(properties),
    })
}

/// Follows a `$ref` into `$defs` (once; the configuration types are not recursive).
fn resolve<'a>(schema: &'a Value, defs: &'a Map<String, Value>) -> &'a Value {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|name| defs.get(name))
        .unwrap_or(schema)
}

/// A copy of `schema` with every `$ref` replaced by its definition, since a VS Code setting's
/// schema has no `$defs` to point into; `format` (`uint32`, ...) dropped, and an optional enum
/// (`anyOf` of the enum and `null`) made one enum, so the settings editor shows a list.
fn inline(schema: &Value, defs: &Map<String, Value>) -> Value {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Array(any)) = map.get("anyOf")
                && let [first, second] = any.as_slice()
                && second.get("type") == Some(&json!("null"))
                && let Value::Object(mut choice) = enumify(inline(first, defs))
                && let Some(Value::Array(values)) = choice.get("enum").cloned()
            {
                let mut values = values;
                values.push(Value::Null);
                choice.insert("enum".into(), Value::Array(values));
                if let Some(Value::Array(texts)) = choice.get_mut("enumDescriptions") {
                    texts.push(json!("Unset: cairn decides."));
                }
                let kind = choice.get("type").cloned().unwrap_or(json!("string"));
                choice.insert("type".into(), json!([kind, "null"]));
                for (k, v) in map {
                    if k != "anyOf" {
                        choice.insert(k.clone(), inline(v, defs));
                    }
                }
                return Value::Object(choice);
            }
            if map.contains_key("$ref") {
                let target = resolve(schema, defs);
                let mut out = match inline(target, defs) {
                    Value::Object(m) => m,
                    other => return other,
                };
                for (k, v) in map {
                    if k != "$ref" {
                        out.insert(k.clone(), inline(v, defs));
                    }
                }
                return Value::Object(out);
            }
            enumify(Value::Object(
                map.iter()
                    .filter(|(k, _)| k.as_str() != "format")
                    .map(|(k, v)| (k.clone(), inline(v, defs)))
                    .collect(),
            ))
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| inline(v, defs)).collect()),
        other => other.clone(),
    }
}

/// A documented enum (`oneOf` of `const`s, as schemars writes one) as `enum` with VS Code's
/// `enumDescriptions`; anything else unchanged.
fn enumify(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return schema;
    };
    let Some(Value::Array(choices)) = map.get("oneOf") else {
        return Value::Object(map);
    };
    let consts: Option<Vec<(Value, Value)>> = choices
        .iter()
        .map(|c| {
            let value = c.get("const")?.clone();
            let text = c.get("description").cloned().unwrap_or(json!(""));
            Some((value, text))
        })
        .collect();
    let Some(consts) = consts else {
        return Value::Object(map);
    };
    map.remove("oneOf");
    map.insert("type".into(), json!("string"));
    map.insert(
        "enum".into(),
        Value::Array(consts.iter().map(|(v, _)| v.clone()).collect()),
    );
    if consts.iter().any(|(_, d)| d != &json!("")) {
        map.insert(
            "enumDescriptions".into(),
            Value::Array(consts.into_iter().map(|(_, d)| d).collect()),
        );
    }
    Value::Object(map)
}

fn collect(
    schema: &Value,
    defs: &Map<String, Value>,
    path: &mut Vec<String>,
    out: &mut Map<String, Value>,
) {
    let resolved = resolve(schema, defs);
    let Some(props) = resolved.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, sub) in props {
        path.push(key.clone());
        let target = resolve(sub, defs);
        if target.get("properties").is_some() {
            collect(target, defs, path, out);
        } else {
            out.insert(
                format!("cairn.{}", path.join(".")),
                setting(sub, defs, path),
            );
        }
        path.pop();
    }
}

/// One leaf setting: its inlined schema, with `scope` for keys only the user may set.
fn setting(schema: &Value, defs: &Map<String, Value>, path: &[String]) -> Value {
    let mut value = match inline(schema, defs) {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let dotted = path.join(".");
    let user_only = WORKSPACE_FORBIDDEN
        .iter()
        .any(|(key, _)| dotted == *key || dotted.starts_with(&format!("{key}.")))
        || path
            .first()
            .is_some_and(|section| USER_ONLY_SECTIONS.contains(&section.as_str()));
    if user_only {
        value.insert("scope".into(), json!("application"));
    }
    Value::Object(value)
}
