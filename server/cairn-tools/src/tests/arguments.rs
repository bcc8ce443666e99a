//! Every file tool refuses arguments that do not match its schema before it runs, naming the
//! field: an unknown field, a wrong type, a missing required field. The cases are derived from
//! each tool's published schema, so a new tool is covered without a line here.

use serde_json::Map;

use super::*;

/// A value of the type `prop` asks for; strings are `x`, which the fixture has as a file, so a
/// writing tool that ran would change something on disk.
fn valid(prop: &Value) -> Value {
    match prop["type"].as_str() {
        Some("string") => json!("x"),
        Some("integer") => json!(prop["minimum"].as_u64().unwrap_or(0).max(1)),
        Some("boolean") => json!(false),
        Some("array") => json!([valid(&prop["items"])]),
        Some("object") => Value::Object(required_only(prop)),
        other => panic!("no valid value for type {other:?} in {prop}"),
    }
}

/// A value of another type than `prop` asks for.
fn wrong(prop: &Value) -> Value {
    match prop["type"].as_str() {
        Some("string") => json!(7),
        _ => json!("x"),
    }
}

/// The required properties of object schema `schema`, each with a valid value.
fn required_only(schema: &Value) -> Map<String, Value> {
    schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|name| {
            let name = name.as_str().unwrap();
            (name.to_owned(), valid(&schema["properties"][name]))
        })
        .collect()
}

#[tokio::test]
async fn bad_arguments_are_refused_before_the_call_naming_the_field() {
    let mut checked = 0;
    for entry in FILE_TOOLS {
        let name = entry.name();
        let schema = Value::Object(entry.info().tool.input_schema.as_ref().clone());
        let base = required_only(&schema);
        let mut cases: Vec<(Map<String, Value>, String)> = Vec::new();

        let mut unknown = base.clone();
        unknown.insert("no_such_field".to_owned(), json!(1));
        cases.push((
            unknown,
            format!(
                "ERR invalid argument `no_such_field` for {name}: unknown field `no_such_field`…"
            ),
        ));
        for (field, prop) in schema["properties"].as_object().unwrap() {
            let mut args = base.clone();
            args.insert(field.clone(), wrong(prop));
            cases.push((
                args,
                format!("ERR invalid argument `{field}` for {name}: invalid type…"),
            ));
        }
        for field in base.keys() {
            let mut args = base.clone();
            args.remove(field);
            cases.push((
                args,
                format!("ERR invalid arguments for {name}: missing field `{field}`"),
            ));
        }

        let f = fixture(&["ws/x => original\\n", "ws/d/x => in d\\n"]);
        let before = snapshot(&f.root());
        for (args, expected) in cases {
            let shown = Value::Object(args.clone());
            let outcome = call(&f, name, shown.clone()).await;
            let got = if outcome.is_error {
                format!("ERR {}", outcome.text)
            } else {
                outcome.text.clone()
            };
            match expected.strip_suffix('…') {
                Some(prefix) => assert!(got.starts_with(prefix), "{name} {shown}: {got}"),
                None => assert_eq!(got, expected, "{name} {shown}"),
            }
            assert!(outcome.edits.is_none(), "{name} {shown}");
            assert_eq!(
                snapshot(&f.root()),
                before,
                "{name} {shown} changed the disk"
            );
            checked += 1;
        }
        // The derived base is valid: the same call without the bad field gets past parsing.
        let outcome = call(&f, name, Value::Object(base.clone())).await;
        assert!(
            !outcome.text.starts_with("invalid argument"),
            "{name} {base:?}: {}",
            outcome.text
        );
    }
    // Each tool has at least its unknown-field case and one wrong type.
    assert!(checked >= 2 * FILE_TOOLS.len(), "{checked}");
}
