//! The configuration schema, and the VS Code settings generated from it: the extension's
//! `package.json` must hold exactly the generated `contributes.configuration`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

const REGENERATE: &str = "editors/vscode/scripts/sync-settings (runs `cairn config schema --vscode` and writes package.json)";

fn package_json() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../editors/vscode/package.json"
    );
    let text = std::fs::read_to_string(path).expect("editors/vscode/package.json");
    serde_json::from_str(&text).expect("package.json is JSON")
}

/// Numbers as floats: `2.0` comes back from JavaScript's `JSON.stringify` as `2`.
fn normalized(value: &Value) -> Value {
    match value {
        Value::Number(n) => n.as_f64().map_or(Value::Null, |f| json!(f)),
        Value::Array(items) => Value::Array(items.iter().map(normalized).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), normalized(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[test]
fn vscode_settings_are_generated_from_the_schema() {
    let generated = normalized(&cairn_config::vscode_configuration());
    let committed = &normalized(&package_json()["contributes"]["configuration"]);
    if *committed != generated {
        let want = generated["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let have = committed["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let missing: Vec<_> = want.keys().filter(|k| !have.contains_key(*k)).collect();
        let extra: Vec<_> = have.keys().filter(|k| !want.contains_key(*k)).collect();
        let changed: Vec<_> = want
            .iter()
            .filter(|(k, v)| have.get(*k).is_some_and(|h| h != *v))
            .map(|(k, _)| k)
            .collect();
        panic!(
            "editors/vscode/package.json's contributes.configuration is not the one generated from the configuration schema\n\
             missing: {missing:?}\nnot in the schema: {extra:?}\ndiffering: {changed:?}\nregenerate with {REGENERATE}"
        );
    }
}

#[test]
fn every_configuration_key_is_a_setting() {
    let generated = cairn_config::vscode_configuration();
    let props = generated["properties"].as_object().expect("properties");
    for key in [
        "cairn.path",
        "cairn.provider.model",
        "cairn.provider.kind",
        "cairn.agent.max_tool_calls",
        "cairn.policy.effects.write",
        "cairn.mcp.servers",
    ] {
        assert!(props.contains_key(key), "{key} missing");
    }
    // An optional enum is one list, with null for "unset".
    assert_eq!(
        props["cairn.provider.kind"]["enum"],
        json!(["openai", "anthropic", "local", null])
    );
    assert_eq!(
        props["cairn.policy.effects.write"]["enum"],
        json!(["allow", "ask", "deny"])
    );
    assert_eq!(props["cairn.agent.max_tool_calls"]["default"], json!(25));
    assert!(
        props["cairn.agent.max_tool_calls"]["description"]
            .as_str()
            .is_some_and(|d| !d.is_empty())
    );
    // No `$ref` is left: VS Code's setting schemas have no `$defs` to point into.
    assert!(!generated.to_string().contains("$ref"));
}

#[test]
fn settings_a_repository_must_not_set_are_user_only() {
    let generated = cairn_config::vscode_configuration();
    let props = &generated["properties"];
    for key in [
        "cairn.provider.base_url",
        "cairn.provider.api_key_env",
        "cairn.agent.max_tool_calls",
        "cairn.policy.effects.write",
        "cairn.mcp.servers",
        "cairn.sessions.dir",
    ] {
        assert_eq!(props[key]["scope"], json!("application"), "{key}");
    }
    assert_eq!(props["cairn.path"]["scope"], json!("machine"));
    assert_eq!(props["cairn.provider.model"].get("scope"), None);
}

#[test]
fn the_schema_describes_the_config_file() {
    let schema = cairn_config::json_schema();
    assert_eq!(schema["title"], json!("cairn configuration"));
    assert_eq!(schema["additionalProperties"], json!(false));
    for section in ["provider", "agent", "policy", "mcp", "web"] {
        assert!(
            schema["properties"].get(section).is_some(),
            "{section} missing"
        );
    }
}
