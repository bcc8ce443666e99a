//! `data_validate`: a data file checked against rules (required columns, no NULLs, unique
//! keys, ranges, allowed values, patterns, any SQL condition), each rule with its count of
//! failing rows and examples.

use std::collections::BTreeMap;

use cairn_toolkit::table::{Cell, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::json;

use crate::engine::{Session, ident, literal};
use crate::tools::failed;
use crate::{Data, DataError};

/// The `data_validate` tool.
pub struct DataValidate;

/// Failing rows shown per rule.
const EXAMPLES: usize = 3;

/// A numeric range, inclusive.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Range {
    min: Option<f64>,
    max: Option<f64>,
}

/// Arguments of `data_validate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The data file, relative to the workspace.
    file: String,
    /// For a workbook, the sheet to read (default: the first).
    sheet: Option<String>,
    /// Columns that must exist.
    required: Option<Vec<String>>,
    /// Columns that must have no NULL (empty) values.
    not_null: Option<Vec<String>>,
    /// Columns (each alone) whose values must be unique.
    unique: Option<Vec<String>>,
    /// Numeric ranges: `{"age": {"min": 0, "max": 130}}`.
    ranges: Option<BTreeMap<String, Range>>,
    /// Allowed values: `{"status": ["open", "closed"]}`.
    allowed: Option<BTreeMap<String, Vec<String>>>,
    /// SQL LIKE patterns values must match: `{"email": "%@%.%"}`.
    patterns: Option<BTreeMap<String, String>>,
    /// Named SQL conditions every row must meet: `{"ends after start": "end_date >= start_date"}`.
    checks: Option<BTreeMap<String, String>>,
}

impl Tool for DataValidate {
    type Host = Data;
    type Args = Args;
    const NAME: &'static str = "data_validate";
    const TITLE: &'static str = "Validate a data file";
    const DESCRIPTION: &'static str = "Check a data file against rules: required columns, no NULLs, unique values, numeric ranges, allowed values, LIKE patterns and any SQL condition; reports each rule as passed or failed with the count of failing rows and examples.";
    const CATEGORY: Category = Category::Data;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.file)
    }

    async fn call(data: &Data, args: Args, cx: CallContext) -> CallToolResult {
        match validate(data, &args, &cx).await {
            Ok(r) => r,
            Err(e) => failed(&e),
        }
    }
}

/// One rule: its description and the SQL condition a failing row meets.
struct Rule {
    name: String,
    failing: String,
}

async fn validate(data: &Data, args: &Args, cx: &CallContext) -> Result<CallToolResult, DataError> {
    let session = data
        .one(&args.file, args.sheet.as_deref(), &cx.cancel)
        .await?;
    let columns: Vec<String> = session
        .columns("t")
        .await?
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let mut table = Table {
        columns: ["rule", "result", "failing rows", "examples"]
            .map(str::to_owned)
            .to_vec(),
        rows: Vec::new(),
        more: false,
    };
    let mut failures = 0usize;
    let mut verdict = |table: &mut Table, name: String, bad: u64, examples: String| {
        if bad > 0 {
            failures += 1;
        }
        table.rows.push(vec![
            Cell::Text(name),
            Cell::Text(if bad == 0 { "pass" } else { "FAIL" }.to_owned()),
            Cell::Text(bad.to_string()),
            Cell::Text(examples),
        ]);
    };
    for c in args.required.iter().flatten() {
        let present = columns.iter().any(|x| x == c);
        verdict(
            &mut table,
            format!("column {c} exists"),
            u64::from(!present),
            if present {
                String::new()
            } else {
                format!("columns are {columns:?}")
            },
        );
    }
    let mut rules = Vec::new();
    for c in args.not_null.iter().flatten() {
        rules.push(Rule {
            name: format!("{c} has no NULLs"),
            failing: format!("{} IS NULL", ident(c)),
        });
    }
    for (c, r) in args.ranges.iter().flatten() {
        let v = format!("CAST({} AS DOUBLE)", ident(c));
        let mut parts = Vec::new();
        if let Some(min) = r.min {
            parts.push(format!("{v} < {min}"));
        }
        if let Some(max) = r.max {
            parts.push(format!("{v} > {max}"));
        }
        if !parts.is_empty() {
            rules.push(Rule {
                name: format!(
                    "{c} in [{}, {}]",
                    r.min.map_or("-inf".to_owned(), |m| m.to_string()),
                    r.max.map_or("inf".to_owned(), |m| m.to_string())
                ),
                failing: parts.join(" OR "),
            });
        }
    }
    for (c, values) in args.allowed.iter().flatten() {
        let list = values
            .iter()
            .map(|v| literal(v))
            .collect::<Vec<_>>()
            .join(", ");
        rules.push(Rule {
            name: format!("{c} in {values:?}"),
            failing: format!("CAST({} AS VARCHAR) NOT IN ({list})", ident(c)),
        });
    }
    for (c, pattern) in args.patterns.iter().flatten() {
        rules.push(Rule {
            name: format!("{c} LIKE {pattern:?}"),
            failing: format!(
                "CAST({} AS VARCHAR) NOT LIKE {}",
                ident(c),
                literal(pattern)
            ),
        });
    }
    for (name, check) in args.checks.iter().flatten() {
        rules.push(Rule {
            name: name.clone(),
            failing: format!("NOT COALESCE(({check}), FALSE)"),
        });
    }
    for rule in rules {
        let (bad, examples) = count_and_examples(&session, &rule.failing).await?;
        verdict(&mut table, rule.name, bad, examples);
    }
    for c in args.unique.iter().flatten() {
        let c_id = ident(c);
        let rows = session
            .rows(
                &format!(
                    "SELECT CAST({c_id} AS VARCHAR), count(*) AS n, sum(count(*)) OVER () FROM t WHERE {c_id} IS NOT NULL GROUP BY {c_id} HAVING count(*) > 1 ORDER BY n DESC LIMIT {EXAMPLES}"
                ),
                EXAMPLES,
            )
            .await?;
        let total: u64 = rows
            .numbers(2)
            .into_iter()
            .next()
            .flatten()
            .map_or(0, |v| v as u64);
        let values = rows.texts(0);
        let counts = rows.texts(1);
        let examples = values
            .iter()
            .zip(&counts)
            .map(|(v, n)| {
                format!(
                    "{} ×{}",
                    v.as_deref().unwrap_or("NULL"),
                    n.as_deref().unwrap_or("?")
                )
            })
            .collect::<Vec<_>>()
            .join("; ");
        verdict(&mut table, format!("{c} is unique"), total, examples);
    }
    if table.rows.is_empty() {
        return Err(DataError::Query(
            "give at least one rule (required, not_null, unique, ranges, allowed, patterns, checks)".to_owned(),
        ));
    }
    let heading = if failures == 0 {
        format!("{}: all {} rules pass.", args.file, table.rows.len())
    } else {
        format!(
            "{}: {failures} of {} rules FAIL.",
            args.file,
            table.rows.len()
        )
    };
    let mut result = table.result_hinting(&heading, &data.limits.table, "check fewer rules");
    if let Some(s) = result.structured_content.as_mut() {
        s["failed_rules"] = json!(failures);
    }
    Ok(result)
}

/// How many rows meet `failing`, and the first few of them (as `col=value` lists).
async fn count_and_examples(session: &Session, failing: &str) -> Result<(u64, String), DataError> {
    let count = session
        .rows(&format!("SELECT count(*) FROM t WHERE {failing}"), 1)
        .await?
        .numbers(0)
        .into_iter()
        .next()
        .flatten()
        .map_or(0, |v| v as u64);
    if count == 0 {
        return Ok((0, String::new()));
    }
    let rows = session
        .rows(
            &format!("SELECT * FROM t WHERE {failing} LIMIT {EXAMPLES}"),
            EXAMPLES,
        )
        .await?
        .table();
    let examples = rows
        .rows
        .iter()
        .map(|r| {
            rows.columns
                .iter()
                .zip(r)
                .take(6)
                .map(|(c, v)| match v {
                    Cell::Text(t) => format!("{c}={}", cairn_toolkit::table::cut(t, 40)),
                    _ => format!("{c}=NULL"),
                })
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect::<Vec<_>>()
        .join(" / ");
    Ok((count, examples))
}
