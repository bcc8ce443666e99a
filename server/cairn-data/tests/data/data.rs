//! The data tools on real files in a real workspace: CSV, TSV, JSON, JSON Lines, Parquet and
//! Excel files the tests write, every tool called as the model calls it, and the refusals.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::time::Duration;

use cairn_data::{Data, Limits};
use cairn_toolkit::ToolSet;
use common::{tools, tools_with};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// What the model sees of one call.
#[derive(Debug)]
struct Seen {
    is_error: bool,
    text: String,
    structured: Option<Value>,
    images: Vec<(String, String)>,
}

async fn call(t: &ToolSet<Data>, name: &str, args: Value) -> Seen {
    call_with(t, name, args, CancellationToken::new()).await
}

async fn call_with(t: &ToolSet<Data>, name: &str, args: Value, cancel: CancellationToken) -> Seen {
    let cairn_test_support::tools::Seen {
        is_error,
        text,
        result,
    } = cairn_test_support::tools::call_with(t, name, args, cancel).await;
    Seen {
        is_error,
        text,
        structured: result.structured_content,
        images: result
            .content
            .iter()
            .filter_map(|c| c.as_image().map(|i| (i.mime_type.clone(), i.data.clone())))
            .collect(),
    }
}

fn ok(seen: &Seen) {
    assert!(!seen.is_error, "{}", seen.text);
}

/// A workspace with sales (CSV), regions (JSON Lines), targets (JSON array) and a TSV.
fn shop() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut sales = String::from("id,day,region,product,units,price\n");
    let products = ["apple", "pear", "plum"];
    for i in 1..=120u32 {
        let day = format!("2024-{:02}-{:02}", 1 + (i - 1) / 30 % 4, 1 + (i - 1) % 28);
        let region = ["EU", "US", "APAC"][(i % 3) as usize];
        let units = i % 10 + 1;
        let price = f64::from(i % 7) + 0.5;
        sales.push_str(&format!(
            "{i},{day},{region},{},{units},{price}\n",
            products[(i % 3) as usize]
        ));
    }
    std::fs::write(dir.path().join("sales.csv"), sales).unwrap();
    std::fs::write(
        dir.path().join("regions.jsonl"),
        "{\"region\":\"EU\",\"manager\":\"Ada\"}\n{\"region\":\"US\",\"manager\":\"Grace\"}\n{\"region\":\"LATAM\",\"manager\":\"Linus\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("targets.json"),
        r#"[{"region":"EU","target":300},{"region":"US","target":250},{"region":"APAC","target":null}]"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("pairs.tsv"),
        "x\ty\tz\n1\t2\t5\n2\t4\t3\n3\t6\t9\n4\t8\t1\n",
    )
    .unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspect_shows_types_row_count_and_first_rows() {
    let dir = shop();
    let t = tools(dir.path());
    let r = call(&t, "data_inspect", json!({"file": "sales.csv", "rows": 3})).await;
    ok(&r);
    assert!(
        r.text.starts_with("sales.csv (CSV): 120 rows, 6 columns"),
        "{}",
        r.text
    );
    for line in [
        "- id: integer",
        "- day: date",
        "- region: text",
        "- price: float",
    ] {
        assert!(r.text.contains(line), "{line}: {}", r.text);
    }
    assert!(
        r.text.contains("| 1 | 2024-01-01 | US | pear | 2 | 1.5 |"),
        "{}",
        r.text
    );
    assert_eq!(r.structured.unwrap()["rows"].as_array().unwrap().len(), 3);

    let j = call(&t, "data_inspect", json!({"file": "targets.json"})).await;
    ok(&j);
    assert!(
        j.text.starts_with("targets.json (JSON): 3 rows, 2 columns"),
        "{}",
        j.text
    );
    let l = call(&t, "data_inspect", json!({"file": "regions.jsonl"})).await;
    assert!(
        l.text.starts_with("regions.jsonl (JSON Lines): 3 rows"),
        "{}",
        l.text
    );
    let tsv = call(&t, "data_inspect", json!({"file": "pairs.tsv"})).await;
    assert!(
        tsv.text.starts_with("pairs.tsv (TSV): 4 rows, 3 columns"),
        "{}",
        tsv.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn describe_gives_the_statistics_pandas_would() {
    let dir = shop();
    let t = tools(dir.path());
    let r = call(&t, "data_describe", json!({"file": "pairs.tsv"})).await;
    ok(&r);
    // y = 2, 4, 6, 8: mean 5, sample std 2.581989, quartiles 3.5 / 5 / 6.5 (linear).
    assert!(
        r.text
            .contains("| y | 4 | 0 | 4 | 5 | 2.581989 | 2 | 3.5 | 5 | 6.5 | 8 |"),
        "{}",
        r.text
    );
    let s = call(
        &t,
        "data_describe",
        json!({"file": "sales.csv", "columns": ["region"]}),
    )
    .await;
    ok(&s);
    assert!(
        s.text
            .contains("| region | 120 | 0 | 3 | NULL | NULL | APAC |"),
        "{}",
        s.text
    );
    let bad = call(
        &t,
        "data_describe",
        json!({"file": "sales.csv", "columns": ["nope"]}),
    )
    .await;
    assert!(
        bad.is_error && bad.text.contains("no column \"nope\""),
        "{}",
        bad.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_joins_files_of_different_formats() {
    let dir = shop();
    let t = tools(dir.path());
    let r = call(
        &t,
        "data_sql",
        json!({
            "tables": {"s": "sales.csv", "m": "regions.jsonl", "g": "targets.json"},
            "sql": "SELECT s.region, m.manager, g.target, sum(s.units) AS units FROM s LEFT JOIN m ON s.region = m.region JOIN g ON g.region = s.region GROUP BY 1, 2, 3 ORDER BY 1"
        }),
    )
    .await;
    ok(&r);
    assert!(
        r.text.contains("| APAC | NULL | NULL | 220 |"),
        "{}",
        r.text
    );
    assert!(r.text.contains("| EU | Ada | 300 | 220 |"), "{}", r.text);
    assert!(r.text.contains("(3 rows)"), "{}", r.text);
    // A syntax error reads as one, with the engine's position.
    let e = call(
        &t,
        "data_sql",
        json!({"tables": {"s": "sales.csv"}, "sql": "SELEC 1"}),
    )
    .await;
    assert!(e.is_error, "{}", e.text);
    let unknown = call(
        &t,
        "data_sql",
        json!({"tables": {"s": "sales.csv"}, "sql": "SELECT nope FROM s"}),
    )
    .await;
    assert!(
        unknown.is_error && unknown.text.contains("nope"),
        "{}",
        unknown.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filter_aggregate_top_counts_and_pivot() {
    let dir = shop();
    let t = tools(dir.path());
    let f = call(
        &t,
        "data_filter",
        json!({"file": "sales.csv", "where": "units = 10 AND region = 'EU'", "columns": ["id", "units"]}),
    )
    .await;
    ok(&f);
    assert!(
        f.text.starts_with("4 rows of sales.csv match:"),
        "{}",
        f.text
    );
    assert!(f.text.contains("| id | units |"), "{}", f.text);

    let a = call(
        &t,
        "data_aggregate",
        json!({"file": "sales.csv", "group_by": ["product"], "aggregates": ["count(*) AS n", "sum(units) AS units"], "order_by": "units DESC"}),
    )
    .await;
    ok(&a);
    assert!(a.text.contains("3 groups"), "{}", a.text);
    assert!(a.text.contains("| apple | 40 | 220 |"), "{}", a.text);

    let top = call(
        &t,
        "data_top",
        json!({"file": "sales.csv", "order_by": [{"column": "price", "descending": true}, {"column": "id"}], "n": 2, "columns": ["id", "price"]}),
    )
    .await;
    ok(&top);
    assert!(
        top.text.contains("| 6 | 6.5 |\n| 13 | 6.5 |"),
        "{}",
        top.text
    );

    let v = call(
        &t,
        "data_value_counts",
        json!({"file": "sales.csv", "column": "region", "top": 2}),
    )
    .await;
    ok(&v);
    assert!(
        v.text
            .starts_with("3 distinct values of region; the 2 most frequent:"),
        "{}",
        v.text
    );
    assert!(v.text.contains("| 40 | 33.33 |"), "{}", v.text);

    let p = call(
        &t,
        "data_pivot",
        json!({"file": "sales.csv", "index": "region", "columns": "product", "values": "units", "aggregate": "count"}),
    )
    .await;
    ok(&p);
    assert!(
        p.text.contains("| region | apple | pear | plum |"),
        "{}",
        p.text
    );
    assert!(p.text.contains("| EU | 40 | 0 | 0 |"), "{}", p.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn joins_correlation_outliers_and_resampling() {
    let dir = shop();
    let t = tools(dir.path());
    let j = call(
        &t,
        "data_join",
        json!({"left": "targets.json", "right": "regions.jsonl", "on": ["region"], "how": "anti"}),
    )
    .await;
    ok(&j);
    assert!(j.text.starts_with("1 joined rows:"), "{}", j.text);
    assert!(j.text.contains("| APAC |"), "{}", j.text);
    let full = call(
        &t,
        "data_join",
        json!({"left": "targets.json", "right": "regions.jsonl", "on": ["region"], "how": "full", "columns": ["l.region", "r.region AS r_region"]}),
    )
    .await;
    assert!(full.text.starts_with("4 joined rows:"), "{}", full.text);

    let c = call(&t, "data_correlation", json!({"file": "pairs.tsv"})).await;
    ok(&c);
    assert!(c.text.contains("| x | 1 | 1.000 |"), "{}", c.text);
    assert!(c.text.contains("Strongest: x ~ y 1.000"), "{}", c.text);

    std::fs::write(
        dir.path().join("latency.csv"),
        std::iter::once("ms".to_owned())
            .chain((0..200).map(|i| (100 + i % 10).to_string()))
            .chain(["5000".to_owned()])
            .collect::<Vec<_>>()
            .join("\n"),
    )
    .unwrap();
    let o = call(
        &t,
        "data_outliers",
        json!({"file": "latency.csv", "column": "ms"}),
    )
    .await;
    ok(&o);
    assert!(o.text.starts_with("1 outliers in ms"), "{}", o.text);
    assert!(o.text.contains("| 5000 |"), "{}", o.text);

    let m = call(
        &t,
        "data_resample",
        json!({"file": "sales.csv", "time_column": "day", "every": "month", "aggregates": ["sum(units) AS units", "count(*) AS orders"]}),
    )
    .await;
    ok(&m);
    assert!(m.text.starts_with("4 periods of one month"), "{}", m.text);
    assert!(m.text.contains("| 2024-01-01T00:00:00 |"), "{}", m.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn samples_are_reproducible_and_validation_names_failures() {
    let dir = shop();
    let t = tools(dir.path());
    let a = call(
        &t,
        "data_sample",
        json!({"file": "sales.csv", "n": 5, "seed": 1}),
    )
    .await;
    ok(&a);
    assert!(a.text.starts_with("5 rows sampled from 120:"), "{}", a.text);
    let b = call(
        &t,
        "data_sample",
        json!({"file": "sales.csv", "n": 5, "seed": 1}),
    )
    .await;
    assert_eq!(a.text, b.text);
    let c = call(
        &t,
        "data_sample",
        json!({"file": "sales.csv", "n": 5, "seed": 2}),
    )
    .await;
    assert_ne!(a.text, c.text);

    let v = call(
        &t,
        "data_validate",
        json!({
            "file": "targets.json",
            "required": ["region", "owner"],
            "not_null": ["target"],
            "unique": ["region"],
            "ranges": {"target": {"min": 260}},
            "allowed": {"region": ["EU", "US"]},
            "checks": {"target is even": "target % 2 = 0"}
        }),
    )
    .await;
    ok(&v);
    assert!(
        v.text.starts_with("targets.json: 5 of 7 rules FAIL."),
        "{}",
        v.text
    );
    assert!(
        v.text.contains("| column owner exists | FAIL | 1 |"),
        "{}",
        v.text
    );
    assert!(
        v.text
            .contains("| target has no NULLs | FAIL | 1 | region=APAC, target=NULL |"),
        "{}",
        v.text
    );
    assert!(
        v.text.contains("| region is unique | pass | 0 |"),
        "{}",
        v.text
    );
    assert!(
        v.text
            .contains("| target in [260, inf] | FAIL | 1 | region=US, target=250 |"),
        "{}",
        v.text
    );
    assert!(
        v.text.contains("| target is even | FAIL | 1 |"),
        "{}",
        v.text
    );
    assert_eq!(v.structured.unwrap()["failed_rules"], 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diffs_by_key_and_whole_rows() {
    let dir = shop();
    std::fs::write(
        dir.path().join("old.csv"),
        "id,name,qty\n1,a,10\n2,b,20\n3,c,30\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("new.csv"),
        "id,name,qty\n1,a,10\n2,B,25\n4,d,40\n",
    )
    .unwrap();
    let t = tools(dir.path());
    let d = call(
        &t,
        "data_diff",
        json!({"left": "old.csv", "right": "new.csv", "key": ["id"]}),
    )
    .await;
    ok(&d);
    assert!(
        d.text
            .contains("1 rows only in the left (removed), 1 only in the right (added), 1 changed"),
        "{}",
        d.text
    );
    assert!(
        d.text.contains("Changes per column: name 1, qty 1"),
        "{}",
        d.text
    );
    assert!(d.text.contains("| 2 | b | B | 20 | 25 |"), "{}", d.text);
    let w = call(
        &t,
        "data_diff",
        json!({"left": "old.csv", "right": "new.csv"}),
    )
    .await;
    ok(&w);
    assert!(
        w.text
            .contains("2 rows only in the left, 2 only in the right"),
        "{}",
        w.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversions_round_trip_through_parquet_and_refuse_to_clobber() {
    let dir = shop();
    let t = tools(dir.path());
    let p = call(
        &t,
        "data_convert",
        json!({"file": "sales.csv", "output": "out/sales.parquet"}),
    )
    .await;
    ok(&p);
    assert!(p.text.starts_with("wrote 120 rows"), "{}", p.text);
    assert!(
        p.text.contains("Parquet) to out/sales.parquet"),
        "{}",
        p.text
    );
    assert!(
        std::fs::read(dir.path().join("out/sales.parquet"))
            .unwrap()
            .starts_with(b"PAR1")
    );
    let i = call(
        &t,
        "data_inspect",
        json!({"file": "out/sales.parquet", "rows": 1}),
    )
    .await;
    assert!(
        i.text
            .starts_with("out/sales.parquet (Parquet): 120 rows, 6 columns"),
        "{}",
        i.text
    );
    assert!(i.text.contains("- day: date"), "{}", i.text);

    let j = call(
        &t,
        "data_convert",
        json!({"file": "out/sales.parquet", "output": "eu.json", "sql": "SELECT id, units FROM t WHERE region = 'EU' ORDER BY id LIMIT 2"}),
    )
    .await;
    ok(&j);
    let json: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("eu.json")).unwrap()).unwrap();
    assert_eq!(json, json!([{"id": 3, "units": 4}, {"id": 6, "units": 7}]));

    let again = call(
        &t,
        "data_convert",
        json!({"file": "sales.csv", "output": "eu.json"}),
    )
    .await;
    assert!(
        again.is_error && again.text.contains("already exists; pass overwrite: true"),
        "{}",
        again.text
    );
    assert_eq!(
        serde_json::from_slice::<Value>(&std::fs::read(dir.path().join("eu.json")).unwrap())
            .unwrap(),
        json,
        "the refused conversion left the file as it was"
    );
    let xl = call(
        &t,
        "data_convert",
        json!({"file": "sales.csv", "output": "x.xlsx"}),
    )
    .await;
    assert!(
        xl.is_error && xl.text.contains("do not write them"),
        "{}",
        xl.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workbooks_read_cached_formula_values_merged_cells_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet().set_name("Summary").unwrap();
    sheet.write(0, 0, "note").unwrap();
    let sheet = book.add_worksheet().set_name("Sales").unwrap();
    sheet.write(0, 0, "team").unwrap();
    sheet.write(0, 1, "q1").unwrap();
    sheet.write(0, 2, "q2").unwrap();
    sheet.write(0, 3, "total").unwrap();
    sheet.write(0, 4, "ratio").unwrap();
    let fmt = rust_xlsxwriter::Format::new();
    sheet.merge_range(1, 0, 2, 0, "North", &fmt).unwrap();
    sheet.write(3, 0, "South").unwrap();
    for (r, (a, b)) in [(1u32, (10, 5)), (2, (20, 0)), (3, (7, 7))] {
        sheet.write(r, 1, a).unwrap();
        sheet.write(r, 2, b).unwrap();
        sheet
            .write_formula(
                r,
                3,
                rust_xlsxwriter::Formula::new(format!("=B{0}+C{0}", r + 1))
                    .set_result((a + b).to_string()),
            )
            .unwrap();
        let ratio = if b == 0 {
            "#DIV/0!".to_owned()
        } else {
            (f64::from(a) / f64::from(b)).to_string()
        };
        sheet
            .write_formula(
                r,
                4,
                rust_xlsxwriter::Formula::new(format!("=B{0}/C{0}", r + 1)).set_result(ratio),
            )
            .unwrap();
    }
    book.save(dir.path().join("book.xlsx")).unwrap();
    let t = tools(dir.path());
    let first = call(&t, "data_inspect", json!({"file": "book.xlsx"})).await;
    ok(&first);
    assert!(
        first
            .text
            .contains("read sheet \"Summary\", the first of [\"Summary\", \"Sales\"]"),
        "{}",
        first.text
    );
    let r = call(
        &t,
        "data_inspect",
        json!({"file": "book.xlsx", "sheet": "Sales"}),
    )
    .await;
    ok(&r);
    assert!(
        r.text.starts_with("book.xlsx (Excel): 3 rows, 5 columns"),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("1 cells of merged areas were given their area's value"),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("1 error cells (such as #DIV/0!) were read as empty"),
        "{}",
        r.text
    );
    assert!(r.text.contains("| North | 10 | 5 | 15 | 2 |"), "{}", r.text);
    assert!(
        r.text.contains("| North | 20 | 0 | 20 | NULL |"),
        "{}",
        r.text
    );
    let s = call(
        &t,
        "data_sql",
        json!({"tables": {"s": "book.xlsx#Sales"}, "sql": "SELECT team, sum(total) AS total FROM s GROUP BY team ORDER BY team"}),
    )
    .await;
    ok(&s);
    assert!(
        s.text.contains("| North | 35 |\n| South | 14 |"),
        "{}",
        s.text
    );
    let missing = call(
        &t,
        "data_inspect",
        json!({"file": "book.xlsx", "sheet": "Nope"}),
    )
    .await;
    assert!(
        missing.is_error && missing.text.contains("has no sheet \"Nope\""),
        "{}",
        missing.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_csv_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.csv"), "a,b\n1,2\n3,4\n5\n7,8\n").unwrap();
    std::fs::write(dir.path().join("types.csv"), "a,b\n1,2\n3,x\n").unwrap();
    std::fs::write(dir.path().join("empty.csv"), "").unwrap();
    let t = tools(dir.path());
    let r = call(
        &t,
        "data_aggregate",
        json!({"file": "bad.csv", "aggregates": ["sum(a)"]}),
    )
    .await;
    assert!(r.is_error, "{}", r.text);
    assert!(
        r.text.contains("bad.csv") && r.text.contains("line 4"),
        "{}",
        r.text
    );
    let e = call(&t, "data_inspect", json!({"file": "empty.csv"})).await;
    assert!(e.is_error && e.text.contains("empty"), "{}", e.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_outside_the_workspace_or_protected_are_never_read() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.csv"), "k\nTOPSECRET\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".env"), "K=TOPSECRET\n").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.csv"),
        dir.path().join("link.csv"),
    )
    .unwrap();
    let t = tools(dir.path());
    let abs = outside.path().join("secret.csv").display().to_string();
    for file in [abs.as_str(), "../secret.csv", "link.csv", ".env"] {
        let r = call(&t, "data_inspect", json!({"file": file})).await;
        assert!(r.is_error, "{file}: {}", r.text);
        assert!(!r.text.contains("TOPSECRET"), "{file}: {}", r.text);
    }
    let env = call(
        &t,
        "data_sql",
        json!({"tables": {"e": ".env"}, "sql": "SELECT * FROM e"}),
    )
    .await;
    assert!(env.is_error && env.text.contains(".env"), "{}", env.text);
    assert!(!env.text.contains("TOPSECRET"), "{}", env.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sql_cannot_reach_files_or_write() {
    let dir = shop();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.csv"), "k\nTOPSECRET\n").unwrap();
    let target = outside.path().join("copied.csv");
    let t = tools(dir.path());
    let secret = outside.path().join("secret.csv").display().to_string();
    let attempts = [
        format!("CREATE EXTERNAL TABLE x STORED AS CSV LOCATION '{secret}'"),
        format!("COPY (SELECT * FROM s) TO '{}'", target.display()),
        format!("SELECT * FROM '{secret}'"),
        "CREATE TABLE y AS SELECT * FROM s".to_owned(),
        "INSERT INTO s VALUES (1)".to_owned(),
        "SET datafusion.execution.batch_size = 1".to_owned(),
        "SELECT 1; SELECT 2".to_owned(),
    ];
    for sql in &attempts {
        let r = call(
            &t,
            "data_sql",
            json!({"tables": {"s": "sales.csv"}, "sql": sql}),
        )
        .await;
        assert!(r.is_error, "{sql}: {}", r.text);
        assert!(!r.text.contains("TOPSECRET"), "{sql}: {}", r.text);
    }
    assert!(!target.exists(), "COPY wrote a file");
    let ddl = call(
        &t,
        "data_sql",
        json!({"tables": {"s": "sales.csv"}, "sql": attempts[0]}),
    )
    .await;
    assert!(
        ddl.text.starts_with("refused: the data tools only read"),
        "{}",
        ddl.text
    );
}

/// A CSV of `rows` rows: id, a group key of 1000 values, an amount.
fn big_csv(path: &Path, rows: u32) {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    writeln!(f, "id,grp,amount").unwrap();
    for i in 0..rows {
        writeln!(f, "{i},g{},{}", i % 1000, i % 100).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_million_rows_stream_and_a_runaway_query_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    big_csv(&dir.path().join("big.csv"), 1_000_000);
    let t = tools(dir.path());
    let r = call(
        &t,
        "data_aggregate",
        json!({"file": "big.csv", "group_by": ["grp"], "aggregates": ["count(*) AS n", "sum(amount) AS total"], "where": "grp IN ('g0', 'g999')"}),
    )
    .await;
    ok(&r);
    // g0: ids 0, 1000, ... (1000 rows, amount i % 100 = 0); g999: 1000 rows of amount 99.
    assert!(
        r.text
            .contains("| g0 | 1000 | 0 |\n| g999 | 1000 | 99000 |"),
        "{}",
        r.text
    );

    // Whole-file selects are cut at the cap, said out loud.
    let all = call(
        &t,
        "data_sql",
        json!({"tables": {"b": "big.csv"}, "sql": "SELECT * FROM b"}),
    )
    .await;
    ok(&all);
    assert!(
        all.text.contains("rows shown; more were left out"),
        "{}",
        all.text
    );

    // A join of a million rows with itself on a 1000-value key (a billion rows) runs past a
    // 2 s limit and is stopped.
    let limited = tools_with(
        dir.path(),
        Limits {
            timeout: Duration::from_secs(2),
            ..Limits::default()
        },
    );
    let slow = call(
        &limited,
        "data_sql",
        json!({"tables": {"b": "big.csv"}, "sql": "SELECT count(*) FROM b x JOIN b y ON x.grp = y.grp WHERE x.amount + y.amount = -1"}),
    )
    .await;
    assert!(
        slow.is_error && slow.text.starts_with("stopped after 2 s"),
        "{}",
        slow.text
    );

    // Cancelling the run stops the query too.
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        c2.cancel();
    });
    let cancelled = call_with(
        &t,
        "data_sql",
        json!({"tables": {"b": "big.csv"}, "sql": "SELECT count(*) FROM b x JOIN b y ON x.grp = y.grp WHERE x.amount + y.amount = -1"}),
        cancel,
    )
    .await;
    assert!(
        cancelled.is_error && cancelled.text == "cancelled",
        "{}",
        cancelled.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn charts_are_written_as_svg_and_png_and_shown() {
    let dir = shop();
    let t = tools(dir.path());
    let bar = call(
        &t,
        "chart_bar",
        json!({"file": "sales.csv", "x": "region", "y": ["units"], "aggregate": "sum", "output": "charts/units"}),
    )
    .await;
    ok(&bar);
    assert!(
        bar.text
            .contains("written to charts/units.svg and charts/units.png"),
        "{}",
        bar.text
    );
    let svg = std::fs::read_to_string(dir.path().join("charts/units.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("EU"), "{svg}");
    let png = std::fs::read(dir.path().join("charts/units.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    assert_eq!(bar.images.len(), 1);
    assert_eq!(bar.images[0].0, "image/png");

    let line = call(
        &t,
        "chart_line",
        json!({"file": "sales.csv", "sql": "SELECT date_trunc('month', CAST(day AS TIMESTAMP)) AS month, sum(units) AS units FROM t GROUP BY 1 ORDER BY 1", "output": "charts/monthly.svg"}),
    )
    .await;
    ok(&line);
    assert!(dir.path().join("charts/monthly.png").exists());
    let scatter = call(
        &t,
        "chart_scatter",
        json!({"file": "pairs.tsv", "x": "x", "y": ["y", "z"], "output": "charts/xy"}),
    )
    .await;
    ok(&scatter);
    let hist = call(
        &t,
        "chart_histogram",
        json!({"file": "sales.csv", "column": "price", "bins": 7, "output": "charts/price"}),
    )
    .await;
    ok(&hist);
    assert!(
        hist.text.contains("| 0.5000 | 1.3571 | 17 |"),
        "{}",
        hist.text
    );
    assert_eq!(hist.images.len(), 1);

    // Another chart over the same files (20 bins, not 7) is refused, and both stay as they were.
    let svg_before = std::fs::read(dir.path().join("charts/price.svg")).unwrap();
    let png_before = std::fs::read(dir.path().join("charts/price.png")).unwrap();
    let clobber = call(
        &t,
        "chart_histogram",
        json!({"file": "sales.csv", "column": "price", "output": "charts/price"}),
    )
    .await;
    assert!(
        clobber.is_error && clobber.text.contains("already exists"),
        "{}",
        clobber.text
    );
    assert_eq!(
        std::fs::read(dir.path().join("charts/price.svg")).unwrap(),
        svg_before
    );
    assert_eq!(
        std::fs::read(dir.path().join("charts/price.png")).unwrap(),
        png_before
    );
    let neither = call(&t, "chart_bar", json!({"file": "sales.csv", "output": "c"})).await;
    assert!(
        neither.is_error && neither.text.contains("give either `x` and `y`"),
        "{}",
        neither.text
    );
}
