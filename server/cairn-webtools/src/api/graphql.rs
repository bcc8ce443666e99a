//! GraphQL: the request body of a query, the report of its answer (errors first, since a
//! GraphQL server answers 200 with `errors`), and the introspection query and its summary.

use serde_json::{Map, Value, json};

/// The body of a GraphQL POST.
pub fn request_body(query: &str, variables: Option<&Value>, operation: Option<&str>) -> Value {
    let mut body = Map::new();
    body.insert("query".into(), Value::from(query));
    if let Some(v) = variables {
        body.insert("variables".into(), v.clone());
    }
    if let Some(op) = operation {
        body.insert("operationName".into(), Value::from(op));
    }
    Value::Object(body)
}

/// Whether `query` holds a mutation (the first operation keyword after comments), for honesty
/// in what the tool says it did.
pub fn is_mutation(query: &str) -> bool {
    query
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join(" ")
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .any(|w| w == "mutation")
}

/// The errors of a GraphQL answer, one line each (`message (at path) [code]`).
pub fn error_lines(doc: &Value) -> Vec<String> {
    let Some(errors) = doc.get("errors").and_then(Value::as_array) else {
        return Vec::new();
    };
    errors
        .iter()
        .map(|e| {
            let message = e
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| e.to_string(), str::to_owned);
            let mut line = format!("- {message}");
            if let Some(path) = e.get("path").and_then(Value::as_array) {
                let path: Vec<String> = path.iter().map(super::request::scalar).collect();
                line.push_str(&format!(" (at {})", path.join(".")));
            }
            if let Some(code) = e.pointer("/extensions/code").and_then(Value::as_str) {
                line.push_str(&format!(" [{code}]"));
            }
            line
        })
        .collect()
}

/// A trimmed-down standard introspection query: kinds, names, fields with arguments, input
/// fields and enum values, type references four levels deep.
pub const INTROSPECTION: &str = "query IntrospectionQuery { __schema { queryType { name } mutationType { name } subscriptionType { name } types { kind name description fields(includeDeprecated: true) { name description args { name type { ...TypeRef } } type { ...TypeRef } } inputFields { name type { ...TypeRef } } enumValues(includeDeprecated: true) { name } } } } fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } }";

/// The introspection request body.
pub fn introspection_body() -> Value {
    json!({"query": INTROSPECTION, "operationName": "IntrospectionQuery"})
}

fn type_ref(t: &Value) -> String {
    let name = t.get("name").and_then(Value::as_str);
    match t.get("kind").and_then(Value::as_str) {
        Some("NON_NULL") => format!("{}!", t.get("ofType").map_or_else(String::new, type_ref)),
        Some("LIST") => format!("[{}]", t.get("ofType").map_or_else(String::new, type_ref)),
        _ => name.unwrap_or("?").to_owned(),
    }
}

fn field_line(f: &Value) -> String {
    let name = f.get("name").and_then(Value::as_str).unwrap_or("?");
    let args: Vec<String> = f
        .get("args")
        .and_then(Value::as_array)
        .map(|args| {
            args.iter()
                .map(|a| {
                    format!(
                        "{}: {}",
                        a.get("name").and_then(Value::as_str).unwrap_or("?"),
                        a.get("type").map_or_else(String::new, type_ref)
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let ty = f.get("type").map_or_else(String::new, type_ref);
    let mut line = if args.is_empty() {
        format!("{name}: {ty}")
    } else {
        format!("{name}({}): {ty}", args.join(", "))
    };
    if let Some(d) = f.get("description").and_then(Value::as_str) {
        let d = d.split_whitespace().collect::<Vec<_>>().join(" ");
        if !d.is_empty() {
            let short: String = d.chars().take(120).collect();
            line.push_str(&format!(" — {short}"));
        }
    }
    line
}

/// The summary of an introspection answer: root types, their fields with arguments, and at
/// most `max_types` other types (built-in `__` types left out).
pub fn summarise_schema(doc: &Value, max_types: usize) -> Result<String, String> {
    let schema = doc.pointer("/data/__schema").ok_or_else(|| {
        let errors = error_lines(doc);
        if errors.is_empty() {
            "the answer has no data.__schema: is this a GraphQL endpoint?".to_owned()
        } else {
            format!(
                "introspection failed (it may be turned off on this server):\n{}",
                errors.join("\n")
            )
        }
    })?;
    let empty = Vec::new();
    let types = schema
        .get("types")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let find = |name: &str| {
        types
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
    };
    let root = |key: &str| {
        schema
            .get(key)
            .and_then(|t| t.get("name"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let mut out = String::new();
    let roots: Vec<(&str, Option<String>)> = vec![
        ("Query", root("queryType")),
        ("Mutation", root("mutationType")),
        ("Subscription", root("subscriptionType")),
    ];
    for (label, name) in &roots {
        let Some(name) = name else { continue };
        out.push_str(&format!("{label} type {name}:\n"));
        let fields = find(name)
            .and_then(|t| t.get("fields"))
            .and_then(Value::as_array)
            .unwrap_or(&empty);
        for f in fields {
            out.push_str(&format!("- {}\n", field_line(f)));
        }
        out.push('\n');
    }
    let root_names: Vec<&str> = roots.iter().filter_map(|(_, n)| n.as_deref()).collect();
    let others: Vec<&Value> = types
        .iter()
        .filter(|t| {
            let name = t.get("name").and_then(Value::as_str).unwrap_or("");
            !name.starts_with("__") && !root_names.contains(&name)
        })
        .collect();
    out.push_str(&format!("Other types ({}):\n", others.len()));
    for t in others.iter().take(max_types) {
        let kind = t.get("kind").and_then(Value::as_str).unwrap_or("?");
        let name = t.get("name").and_then(Value::as_str).unwrap_or("?");
        let members: Vec<String> = match kind {
            "ENUM" => t
                .get("enumValues")
                .and_then(Value::as_array)
                .unwrap_or(&empty)
                .iter()
                .filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_owned))
                .collect(),
            "INPUT_OBJECT" => t
                .get("inputFields")
                .and_then(Value::as_array)
                .unwrap_or(&empty)
                .iter()
                .map(field_line)
                .collect(),
            _ => t
                .get("fields")
                .and_then(Value::as_array)
                .unwrap_or(&empty)
                .iter()
                .map(|f| {
                    format!(
                        "{}: {}",
                        f.get("name").and_then(Value::as_str).unwrap_or("?"),
                        f.get("type").map_or_else(String::new, type_ref)
                    )
                })
                .collect(),
        };
        if members.is_empty() {
            out.push_str(&format!("- {kind} {name}\n"));
        } else {
            let sep = if kind == "ENUM" { " | " } else { ", " };
            out.push_str(&format!("- {kind} {name} {{ {} }}\n", members.join(sep)));
        }
    }
    if others.len() > max_types {
        out.push_str(&format!(
            "({} more types not shown; raise max_types to see them)\n",
            others.len() - max_types
        ));
    }
    Ok(out)
}
