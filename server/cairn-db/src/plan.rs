//! Query plans as the model reads them: the engine's plan as an indented tree, then the parts
//! that cost the most, with what usually helps.

use serde_json::Value;

use crate::error::DbError;
use crate::table::{Cell, Limits, Table};

/// A PostgreSQL `EXPLAIN (FORMAT JSON)` (maybe with `ANALYZE`).
pub(crate) fn postgres(json: &str) -> Result<String, DbError> {
    let parsed: Value = serde_json::from_str(json)
        .map_err(|e| DbError::Engine(format!("the plan is not JSON: {e}")))?;
    let top = parsed
        .get(0)
        .ok_or_else(|| DbError::Engine("an empty plan".to_owned()))?;
    let root = top
        .get("Plan")
        .ok_or_else(|| DbError::Engine("a plan without a Plan".to_owned()))?;
    let analyzed = root.get("Actual Total Time").is_some();
    let mut out = String::from("Plan:\n");
    let mut nodes = Vec::new();
    walk(root, 0, &mut out, &mut nodes);
    if let Some(t) = top.get("Planning Time").and_then(Value::as_f64) {
        out.push_str(&format!("Planning time: {t:.3} ms\n"));
    }
    if let Some(t) = top.get("Execution Time").and_then(Value::as_f64) {
        out.push_str(&format!("Execution time: {t:.3} ms\n"));
    }
    // The costliest nodes by their own share (the node's total less its children's).
    nodes.sort_by(|a, b| b.own.total_cmp(&a.own));
    let unit = if analyzed { "ms" } else { "cost units" };
    out.push_str("\nCostliest steps (own share):\n");
    for n in nodes.iter().take(3) {
        out.push_str(&format!("- {}: {:.2} {unit}\n", n.label, n.own));
    }
    let hints: Vec<&String> = nodes.iter().filter_map(|n| n.hint.as_ref()).collect();
    if !hints.is_empty() {
        out.push_str("\nWorth a look:\n");
        for h in hints {
            out.push_str(&format!("- {h}\n"));
        }
    }
    Ok(out)
}

struct Node {
    label: String,
    own: f64,
    hint: Option<String>,
}

fn walk(node: &Value, depth: usize, out: &mut String, nodes: &mut Vec<Node>) {
    let s = |k: &str| node.get(k).and_then(Value::as_str);
    let f = |k: &str| node.get(k).and_then(Value::as_f64);
    let kind = s("Node Type").unwrap_or("?");
    let mut label = kind.to_owned();
    if let Some(rel) = s("Relation Name") {
        label.push_str(&format!(" on {rel}"));
    }
    if let Some(index) = s("Index Name") {
        label.push_str(&format!(" using {index}"));
    }
    let mut line = format!("{}- {label}", "  ".repeat(depth));
    let actual = f("Actual Total Time");
    if let (Some(start), Some(total)) = (f("Startup Cost"), f("Total Cost")) {
        line.push_str(&format!(" (cost {start:.2}..{total:.2}"));
        if let Some(rows) = f("Plan Rows") {
            line.push_str(&format!(", ~{rows} rows"));
        }
        if let (Some(t), Some(rows)) = (actual, f("Actual Rows")) {
            let loops = f("Actual Loops").unwrap_or(1.0);
            line.push_str(&format!("; actual {t:.3} ms, {rows} rows × {loops} loops"));
        }
        line.push(')');
    }
    for key in [
        "Filter",
        "Index Cond",
        "Hash Cond",
        "Join Filter",
        "Sort Key",
    ] {
        match node.get(key) {
            Some(Value::String(v)) => line.push_str(&format!(" {key}: {v}")),
            Some(Value::Array(keys)) => {
                let keys: Vec<&str> = keys.iter().filter_map(Value::as_str).collect();
                line.push_str(&format!(" {key}: {}", keys.join(", ")));
            }
            _ => {}
        }
    }
    if let Some(method) = s("Sort Method") {
        line.push_str(&format!(" Sort Method: {method}"));
    }
    out.push_str(&line);
    out.push('\n');
    let children: Vec<&Value> = node
        .get("Plans")
        .and_then(Value::as_array)
        .map(|p| p.iter().collect())
        .unwrap_or_default();
    // Actual times are per loop; the node's own share is its time less its children's.
    let loops = |n: &Value| n.get("Actual Loops").and_then(Value::as_f64).unwrap_or(1.0);
    let total_of = |n: &Value| match n.get("Actual Total Time").and_then(Value::as_f64) {
        Some(t) => t * loops(n),
        None => n.get("Total Cost").and_then(Value::as_f64).unwrap_or(0.0),
    };
    let own = total_of(node) - children.iter().map(|c| total_of(c)).sum::<f64>();
    let rows = f("Actual Rows").or(f("Plan Rows")).unwrap_or(0.0);
    let removed = f("Rows Removed by Filter").unwrap_or(0.0);
    let hint = match kind {
        "Seq Scan" if s("Filter").is_some() && (rows + removed >= 1000.0) => Some(format!(
            "{label} reads every row and filters ({}); an index on the filtered columns may help",
            s("Filter").unwrap_or_default()
        )),
        "Sort" if s("Sort Method").is_some_and(|m| m.contains("external")) => Some(format!(
            "{label} spilled to disk; more work_mem, or an index in the sort order, avoids it"
        )),
        _ => None,
    };
    nodes.push(Node {
        label,
        own: own.max(0.0),
        hint,
    });
    for child in children {
        walk(child, depth + 1, out, nodes);
    }
}

/// A SQLite `EXPLAIN QUERY PLAN` (id, parent, notused, detail).
pub(crate) fn sqlite(t: &Table) -> String {
    let text = |c: Option<&Cell>| match c {
        Some(Cell::Text(t)) => t.clone(),
        _ => String::new(),
    };
    let rows: Vec<(String, String, String)> = t
        .rows
        .iter()
        .map(|r| (text(r.first()), text(r.get(1)), text(r.get(3))))
        .collect();
    let mut out = String::from("Plan:\n");
    let mut hints = Vec::new();
    let depth_of = |id: &str| {
        let mut depth = 0;
        let mut at = id.to_owned();
        while let Some((_, parent, _)) = rows.iter().find(|(i, _, _)| *i == at) {
            if parent == "0" || depth > 64 {
                break;
            }
            depth += 1;
            at = parent.clone();
        }
        depth
    };
    for (id, _, detail) in &rows {
        out.push_str(&format!("{}- {detail}\n", "  ".repeat(depth_of(id))));
        if detail.starts_with("SCAN ") && !detail.contains("INDEX") {
            hints.push(format!(
                "{detail}: reads every row; an index on the columns it filters or joins on may help"
            ));
        }
        if detail.contains("USE TEMP B-TREE") {
            hints.push(format!(
                "{detail}: sorts or groups in a temporary b-tree; an index in that order avoids it"
            ));
        }
    }
    if !hints.is_empty() {
        out.push_str("\nWorth a look:\n");
        for h in hints {
            out.push_str(&format!("- {h}\n"));
        }
    }
    out
}

/// A MariaDB/MySQL `EXPLAIN` (one row per table access), with full scans and temporary tables
/// or file sorts pointed out.
pub(crate) fn mysql(t: &Table, limits: &Limits) -> String {
    let column = |name: &str| t.columns.iter().position(|c| c.eq_ignore_ascii_case(name));
    let text = |row: &[Cell], i: Option<usize>| match i.and_then(|i| row.get(i)) {
        Some(Cell::Text(t)) => t.clone(),
        _ => String::new(),
    };
    let (table, kind, rows, extra) = (
        column("table"),
        column("type"),
        column("rows"),
        column("Extra"),
    );
    let mut hints = Vec::new();
    for row in &t.rows {
        let name = text(row, table);
        if text(row, kind) == "ALL" {
            hints.push(format!(
                "{name}: a full table scan (~{} rows); an index on the columns it filters or joins on may help",
                text(row, rows)
            ));
        }
        let extra = text(row, extra);
        if extra.contains("Using temporary") || extra.contains("Using filesort") {
            hints.push(format!(
                "{name}: {extra}; an index in the order or grouping avoids the extra pass"
            ));
        }
    }
    let (markdown, _) = t.markdown(limits);
    let mut out = format!("Plan:\n{markdown}");
    if !hints.is_empty() {
        out.push_str("\nWorth a look:\n");
        for h in hints {
            out.push_str(&format!("- {h}\n"));
        }
    }
    out
}
