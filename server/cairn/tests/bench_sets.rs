//! Checks the labelled sets over cairn's own catalog (`bench/cairn/queries.jsonl` and
//! `bench/cairn/tasks.jsonl`) against the catalog the binary lists (`cairn tools list --json`):
//! every line parses, ids are unique, every tool named exists, every product category has at
//! least 15 requests, and every tool of the catalog is relevant to at least one request.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The product's categories (`Category::ALL`); each needs at least this many requests.
const CATEGORIES: &[&str] = &[
    "code",
    "file",
    "web",
    "database",
    "api",
    "devops",
    "data",
    "communication",
    "git",
    "cloud",
    "ai",
    "system",
];
const MIN_PER_CATEGORY: usize = 15;

fn bench_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/cairn")
}

/// The catalog as the binary lists it: tool name to category.
fn catalog() -> BTreeMap<String, String> {
    let workspace = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["tools", "list", "--json", "-w"])
        .arg(workspace.path())
        .output()
        .expect("run cairn tools list");
    assert!(
        output.status.success(),
        "cairn tools list failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tools: Vec<Value> = serde_json::from_slice(&output.stdout).expect("catalog JSON");
    tools
        .iter()
        .map(|tool| {
            (
                tool["name"].as_str().expect("tool name").to_owned(),
                tool["category"].as_str().expect("tool category").to_owned(),
            )
        })
        .collect()
}

/// The lines of a JSON Lines file, each parsed; a line that does not parse fails the test.
fn lines(name: &str) -> Vec<Value> {
    let path = bench_dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{name}:{}: not JSON: {e}", i + 1))
        })
        .collect()
}

/// The tool names of a JSON array field; it must be a non-empty array of strings.
fn names(value: &Value, field: &str, at: &str) -> Vec<String> {
    let list = value[field]
        .as_array()
        .unwrap_or_else(|| panic!("{at}: `{field}` is not an array"));
    assert!(!list.is_empty(), "{at}: `{field}` is empty");
    list.iter()
        .map(|v| {
            v.as_str()
                .unwrap_or_else(|| panic!("{at}: `{field}` holds a non-string"))
                .to_owned()
        })
        .collect()
}

fn check_known(name: &str, catalog: &BTreeMap<String, String>, at: &str) {
    assert!(catalog.contains_key(name), "{at}: unknown tool `{name}`");
}

#[test]
fn the_sets_over_cairns_catalog_are_well_formed_and_cover_it() {
    let catalog = catalog();
    let mut known_categories: BTreeSet<&str> = catalog.values().map(String::as_str).collect();
    known_categories.extend(CATEGORIES);

    let queries = lines("queries.jsonl");
    assert!(
        queries.len() >= 300,
        "only {} requests in queries.jsonl",
        queries.len()
    );
    let mut qids = BTreeSet::new();
    let mut per_category: BTreeMap<String, usize> = BTreeMap::new();
    let mut covered = BTreeSet::new();
    for query in &queries {
        let qid = query["qid"].as_str().expect("qid").to_owned();
        assert!(qids.insert(qid.clone()), "duplicate qid {qid}");
        let text = query["query"].as_str().unwrap_or_default();
        assert!(!text.trim().is_empty(), "{qid}: empty query");
        assert_eq!(query["source"].as_str(), Some("cairn"), "{qid}: source");
        let category = query["category"].as_str().expect("category");
        assert!(
            known_categories.contains(category),
            "{qid}: unknown category `{category}`"
        );
        *per_category.entry(category.to_owned()).or_default() += 1;
        for name in names(query, "relevant", &qid) {
            check_known(&name, &catalog, &qid);
            covered.insert(name);
        }
    }
    for category in CATEGORIES {
        let count = per_category.get(*category).copied().unwrap_or(0);
        assert!(
            count >= MIN_PER_CATEGORY,
            "category {category} has {count} requests, fewer than {MIN_PER_CATEGORY}"
        );
    }
    let uncovered: Vec<&String> = catalog.keys().filter(|n| !covered.contains(*n)).collect();
    assert!(
        uncovered.is_empty(),
        "catalog tools relevant to no request: {uncovered:?}"
    );

    let tasks = lines("tasks.jsonl");
    assert!(
        tasks.len() >= 40,
        "only {} tasks in tasks.jsonl",
        tasks.len()
    );
    let mut tids = BTreeSet::new();
    for task in &tasks {
        let tid = task["tid"].as_str().expect("tid").to_owned();
        assert!(tids.insert(tid.clone()), "duplicate tid {tid}");
        assert!(
            !task["task"].as_str().unwrap_or_default().trim().is_empty(),
            "{tid}: empty task"
        );
        let steps = task["steps"]
            .as_array()
            .unwrap_or_else(|| panic!("{tid}: `steps` is not an array"));
        assert!(
            (2..=6).contains(&steps.len()),
            "{tid}: {} steps, not 2 to 6",
            steps.len()
        );
        for (i, step) in steps.iter().enumerate() {
            let at = format!("{tid} step {}", i + 1);
            assert!(
                !step["say"].as_str().unwrap_or_default().trim().is_empty(),
                "{at}: empty `say`"
            );
            for name in names(step, "tools", &at) {
                check_known(&name, &catalog, &at);
            }
        }
    }
}
