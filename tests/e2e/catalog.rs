//! The catalog the user sees is the registry: `cairn tools list` shows exactly the tools of the
//! built-in sets (no hand-kept list of names anywhere), each with a description and a valid
//! derived schema; `--by-category` counts them against the targets; and arguments that do not
//! match a tool's schema are refused before it runs, naming the field, for every tool alike.

use std::collections::BTreeSet;

use cairn_agent::tools::{Category, ToolInfo};
use cairn_test_support::Format;
use serde_json::{Map, Value, json};

use crate::support::{Sandbox, text};

/// Every built-in tool, from the sets' own lists.
fn registry() -> Vec<ToolInfo> {
    let mut all: Vec<ToolInfo> = Vec::new();
    all.extend(cairn_tools::FILE_TOOLS.iter().map(|e| e.info()));
    all.extend(cairn_tools::GIT_TOOLS.iter().map(|e| e.info()));
    all.extend(cairn_sandbox::tools::CODE_TOOLS.iter().map(|e| e.info()));
    all.extend(cairn_webtools::web::WEB_TOOLS.iter().map(|e| e.info()));
    all.extend(cairn_webtools::api::API_TOOLS.iter().map(|e| e.info()));
    all.extend(
        cairn_webtools::api::services::SERVICE_TOOLS
            .iter()
            .map(|e| e.info()),
    );
    all.extend(cairn_db::DB_TOOLS.iter().map(|e| e.info()));
    all.extend(cairn_data::DATA_TOOLS.iter().map(|e| e.info()));
    all.extend(cairn_devops::DEVOPS_TOOLS.iter().map(|e| e.info()));
    all.extend(cairn_system::SYSTEM_TOOLS.iter().map(|e| e.info()));
    all.extend(cairn_cloud::CLOUD_TOOLS.iter().map(|e| e.info()));
    all.extend(cairn_comms::COMMS_TOOLS.iter().map(|e| e.info()));
    all.extend(cairn_ml::ML_TOOLS.iter().map(|e| e.info()));
    all
}

fn listed(sb: &Sandbox) -> Vec<Value> {
    let ws = sb.ws();
    let out = sb.run(
        &["tools", "list", "--json", "-w", ws.to_str().unwrap()],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

#[test]
fn the_catalog_is_the_registry_with_valid_schemas() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let registry = registry();
    let mut seen = BTreeSet::new();
    for info in &registry {
        assert!(
            seen.insert(info.tool.name.to_string()),
            "two tools are named {}",
            info.tool.name
        );
    }
    let listed = listed(&sb);
    let builtin: Vec<&Value> = listed
        .iter()
        .filter(|t| Category::parse(t["category"].as_str().unwrap()).is_some())
        .collect();
    let names = |v: &[&Value]| -> BTreeSet<String> {
        v.iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    // Exactly the registry: nothing left out (a name two sets share would be), nothing extra.
    assert_eq!(names(&builtin), seen);

    for t in builtin {
        let name = t["name"].as_str().unwrap();
        assert!(
            t["description"]
                .as_str()
                .is_some_and(|d| d.trim().len() > 20),
            "{name} has no description"
        );
        let schema = &t["inputSchema"];
        if let Err(e) = jsonschema::draft202012::meta::validate(schema) {
            panic!("{name}: its schema is not valid JSON Schema: {e}\n{schema:#}");
        }
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(
            schema["additionalProperties"], false,
            "{name} accepts unknown fields"
        );
        for (field, property) in schema["properties"].as_object().unwrap() {
            assert!(
                property["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "{name}.{field} has no description"
            );
        }
    }
}

#[test]
fn by_category_counts_the_registry_against_the_targets() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    let ws = sb.ws();
    let w = ws.to_str().unwrap();
    let out = sb.run(&["tools", "list", "--by-category", "--json", "-w", w], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let counts: Value = serde_json::from_slice(&out.stdout).unwrap();
    let registry = registry();
    for (i, c) in Category::ALL.into_iter().enumerate() {
        let row = &counts["categories"][i];
        let want = registry.iter().filter(|t| t.category == c.as_str()).count();
        assert_eq!(
            (
                row["category"].as_str(),
                row["tools"].as_u64(),
                row["target"].as_u64()
            ),
            (Some(c.as_str()), Some(want as u64), Some(c.target() as u64)),
            "{counts:#}"
        );
    }
    assert_eq!(counts["builtIn"], registry.len());
    assert_eq!(counts["target"], 280);

    let out = sb.run(&["tools", "list", "--by-category", "-w", w], &[]);
    let table = text(&out.stdout);
    assert!(table.starts_with("category"), "{table}");
    let file = table
        .lines()
        .find(|l| l.starts_with("file operations"))
        .unwrap();
    let want = registry.iter().filter(|t| t.category == "file").count();
    assert_eq!(
        file.split_whitespace().collect::<Vec<_>>(),
        ["file", "operations", &want.to_string(), "22"],
        "{table}"
    );
    // Every category at or above its target, and 260 or more in all (the product's promise).
    for (i, c) in Category::ALL.into_iter().enumerate() {
        let row = &counts["categories"][i];
        assert!(
            row["tools"].as_u64() >= row["target"].as_u64(),
            "{} below its target: {counts:#}",
            c.as_str()
        );
    }
    assert!(registry.len() >= 260, "{counts:#}");
    for label in ["DevOps", "AI/ML", "API integrations", "cloud services"] {
        let line = table.lines().find(|l| l.starts_with(label)).unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        let (have, target) = (words[words.len() - 2], words[words.len() - 1]);
        assert!(
            have.parse::<u32>().unwrap() >= target.parse::<u32>().unwrap(),
            "{table}"
        );
    }
}

/// Arguments for `schema` that are wrong in one way each: an unknown field, a required field
/// missing, a field of the wrong type. Each names the field the refusal must name.
fn bad_arguments(schema: &Value) -> Vec<(Map<String, Value>, String)> {
    let properties = schema["properties"].as_object().unwrap();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let valid_of = |p: &Value| match p["type"].as_str() {
        Some("string") => p["enum"].get(0).cloned().unwrap_or(json!("x")),
        Some("integer") | Some("number") => json!(p["minimum"].as_i64().unwrap_or(1).max(1)),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        _ => json!({}),
    };
    let wrong_of = |p: &Value| match p["type"].as_str() {
        Some("string") => json!(12345),
        _ => json!("not-this-type"),
    };
    let base: Map<String, Value> = required
        .iter()
        .map(|r| ((*r).to_owned(), valid_of(&properties[*r])))
        .collect();
    let mut cases = Vec::new();
    let mut unknown = base.clone();
    unknown.insert("zz_not_a_field".into(), json!(1));
    cases.push((unknown, "zz_not_a_field".to_owned()));
    if let Some(first) = required.first() {
        let mut missing = base.clone();
        missing.remove(*first);
        cases.push((missing, (*first).to_owned()));
    }
    if let Some((field, property)) = properties
        .iter()
        .find(|(_, p)| p["type"].is_string() && p["type"] != "object")
    {
        let mut wrong = base.clone();
        wrong.insert(field.clone(), wrong_of(property));
        cases.push((wrong, field.clone()));
    }
    cases
}

#[test]
fn arguments_that_do_not_match_the_schema_are_refused_naming_the_field() {
    let sb = Sandbox::new(Format::OpenAi, vec![]);
    sb.write("a.txt", "one\n");
    let ws = sb.ws();
    let w = ws.to_str().unwrap();
    let before = entries(&ws);
    for info in registry() {
        let name = info.tool.name.to_string();
        let schema = Value::Object((*info.tool.input_schema).clone());
        for (args, field) in bad_arguments(&schema) {
            let args = Value::Object(args).to_string();
            let out = sb.run(
                &[
                    "tools", "call", &name, "--args", &args, "--json", "--yes", "-w", w,
                ],
                &[],
            );
            let result: Value = serde_json::from_slice(&out.stdout)
                .unwrap_or_else(|_| panic!("{name} {args}: {}", text(&out.stderr)));
            let said = result["content"][0]["text"].as_str().unwrap_or_default();
            assert_eq!(result["isError"], true, "{name} {args}: {said}");
            assert!(
                said.starts_with("invalid argument") && said.contains(&field),
                "{name} {args}: {said}"
            );
        }
    }
    // Nothing ran: the workspace holds what it held.
    assert_eq!(sb.read("a.txt"), "one\n");
    assert_eq!(entries(&ws), before);
}

/// Every path under `dir`, sorted.
fn entries(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(entries(&path));
        }
        out.push(path);
    }
    out.sort();
    out
}
