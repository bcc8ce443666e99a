//! The data tools on hostile files: JSON nested a hundred thousand deep, lines of tens of
//! megabytes to a gigabyte, and cells a spreadsheet would run as formulas, each called as the
//! model calls the tools, asserting what the model sees and what is left behind.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::Write;
use std::time::{Duration, Instant};

use cairn_data::{Data, Limits};
use cairn_test_support::memory::peak_kib;
use cairn_toolkit::ToolSet;
use common::{tools, tools_with};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The error flag and text the model sees.
async fn call(t: &ToolSet<Data>, name: &str, args: Value) -> (bool, String) {
    let seen = cairn_test_support::tools::call_with(t, name, args, CancellationToken::new()).await;
    (seen.is_error, seen.text)
}

fn nested(depth: usize, open: &str, close: &str, inner: &str) -> String {
    format!("{}{inner}{}", open.repeat(depth), close.repeat(depth))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_nested_too_deep_is_refused_before_parsing_and_normal_nesting_reads() {
    let dir = tempfile::tempdir().unwrap();
    let deep_array = format!("[{{\"a\":{}}}]", nested(100_000, "[", "]", "1"));
    let deep_object = format!("[{}]", nested(100_000, "{\"a\":", "}", "1"));
    std::fs::write(dir.path().join("arrays.json"), &deep_array).unwrap();
    std::fs::write(dir.path().join("objects.json"), &deep_object).unwrap();
    std::fs::write(
        dir.path().join("deep.jsonl"),
        format!("{{\"a\":1}}\n{}\n", nested(100_000, "{\"a\":", "}", "1")),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("deep_arrays.jsonl"),
        format!("{}\n", nested(100_000, "[", "]", "")),
    )
    .unwrap();
    // Past the rows the schema is inferred from: only the streaming read meets the deep line.
    let mut late = "{\"a\":1}\n".repeat(20_001);
    late.push_str(&nested(100_000, "{\"a\":", "}", "1"));
    late.push('\n');
    std::fs::write(dir.path().join("late.jsonl"), late).unwrap();
    // Depth 10, and brackets inside strings (with an escaped quote) that are not nesting.
    let ok_doc = format!(
        "[{{\"id\":1,\"n\":{},\"s\":\"[[[[\\\"{{{{\"}}]",
        nested(8, "{\"a\":", "}", "1")
    );
    std::fs::write(dir.path().join("ok.json"), &ok_doc).unwrap();
    std::fs::write(
        dir.path().join("ok.jsonl"),
        format!("{}\n", &ok_doc[1..ok_doc.len() - 1]),
    )
    .unwrap();
    let t = tools(dir.path());

    for (file, line) in [
        ("arrays.json", 1),
        ("objects.json", 1),
        ("deep.jsonl", 2),
        ("deep_arrays.jsonl", 1),
    ] {
        let (is_error, text) = call(&t, "data_inspect", json!({"file": file})).await;
        assert!(is_error, "{file}: {text}");
        assert!(
            text.contains(&format!(
                "{file}: line {line} nests JSON more than 64 levels deep"
            )),
            "{file}: {text}"
        );
    }
    let (is_error, text) = call(
        &t,
        "data_sql",
        json!({"tables": {"t": "late.jsonl"}, "sql": "SELECT count(*) FROM t"}),
    )
    .await;
    assert!(is_error, "{text}");
    assert!(
        text.contains("late.jsonl: line 20002 nests JSON more than 64 levels deep"),
        "{text}"
    );

    // The process is alive and the tools still answer: a normal nested file reads.
    for file in ["ok.json", "ok.jsonl"] {
        let (is_error, text) = call(&t, "data_inspect", json!({"file": file})).await;
        assert!(!is_error, "{file}: {text}");
        assert!(
            text.contains("1 rows") || text.contains("1 row"),
            "{file}: {text}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_over_16_mib_are_refused_with_their_line_number() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(20 * 1024 * 1024);
    std::fs::write(
        dir.path().join("long.csv"),
        format!("a,b\n1,2\n3,{long}\n5,6\n"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("long.jsonl"),
        format!("{{\"a\":1}}\n{{\"a\":\"{long}\"}}\n"),
    )
    .unwrap();
    // A long line past the inferred rows and in the second of two byte ranges: the range
    // reading it counts the lines before it to name it.
    let mut late = String::from("id,v\n");
    let pad = "p".repeat(54);
    for i in 0..330_000 {
        late.push_str(&format!("{i},{pad}\n"));
    }
    let late_line = 330_000 + 2;
    late.push_str(&format!("9,{}\n1,2\n", "y".repeat(17 * 1024 * 1024)));
    std::fs::write(dir.path().join("late.csv"), late).unwrap();
    let t = tools_with(
        dir.path(),
        Limits {
            partitions: 2,
            ..Limits::default()
        },
    );

    for (file, line) in [("long.csv", 3), ("long.jsonl", 2)] {
        let (is_error, text) = call(&t, "data_inspect", json!({"file": file})).await;
        assert!(is_error, "{file}: {text}");
        assert!(
            text.contains(&format!("{file}: line {line} is longer than 16 MiB")),
            "{file}: {text}"
        );
    }
    let (is_error, text) = call(
        &t,
        "data_sql",
        json!({"tables": {"t": "late.csv"}, "sql": "SELECT count(*) FROM t"}),
    )
    .await;
    assert!(is_error, "{text}");
    assert!(
        text.contains(&format!("late.csv: line {late_line} is longer than 16 MiB")),
        "{text}"
    );
    // Still alive, and a short file still reads.
    std::fs::write(dir.path().join("fine.csv"), "a,b\n1,2\n").unwrap();
    let (is_error, text) = call(&t, "data_inspect", json!({"file": "fine.csv"})).await;
    assert!(!is_error, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigabyte_single_line_is_refused_quickly_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.csv");
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let chunk = vec![b'z'; 1 << 20];
        for _ in 0..1024 {
            f.write_all(&chunk).unwrap();
        }
        f.flush().unwrap();
    }
    let t = tools(dir.path());
    let before = peak_kib();
    let started = Instant::now();
    let (is_error, text) = call(&t, "data_inspect", json!({"file": "huge.csv"})).await;
    let took = started.elapsed();
    let after = peak_kib();
    assert!(is_error, "{text}");
    assert!(
        text.contains("huge.csv: line 1 is longer than 16 MiB"),
        "{text}"
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(
        after.saturating_sub(before) < 200 * 1024,
        "peak memory rose by {} KiB",
        after - before
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn csv_exports_escape_formula_cells_unless_asked_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let cells = [
        "=HYPERLINK(\"http://evil\",\"x\")",
        "@SUM(A1)",
        "+1+1",
        "-2+3",
        "-5",
        "plain",
    ];
    let rows: Vec<Value> = cells.iter().map(|c| json!({"cell": c})).collect();
    std::fs::write(
        dir.path().join("cells.json"),
        serde_json::to_vec(&rows).unwrap(),
    )
    .unwrap();
    let t = tools(dir.path());

    let written = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    let fields = |text: &str| -> Vec<String> {
        // One column: each line after the header is one cell, quoted when it holds a quote.
        text.lines()
            .skip(1)
            .map(
                |l| match l.strip_prefix('"').and_then(|l| l.strip_suffix('"')) {
                    Some(q) => q.replace("\"\"", "\""),
                    None => l.to_owned(),
                },
            )
            .collect()
    };
    for (output, delimiter) in [("out.csv", ","), ("out.tsv", "\t")] {
        let (is_error, text) = call(
            &t,
            "data_convert",
            json!({"file": "cells.json", "output": output}),
        )
        .await;
        assert!(!is_error, "{text}");
        assert!(text.starts_with("wrote 6 rows"), "{text}");
        let got = fields(&written(output));
        assert_eq!(got.len(), 6, "{delimiter:?}: {got:?}");
        for (cell, got) in cells.iter().zip(&got).take(4) {
            assert_eq!(got, &format!("'{cell}"), "{output}");
        }
        assert_eq!(got[4], "-5");
        assert_eq!(got[5], "plain");
    }

    let (is_error, text) = call(
        &t,
        "data_convert",
        json!({"file": "cells.json", "output": "raw.csv", "escape_formulas": false}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert_eq!(fields(&written("raw.csv")), cells);

    // JSON output is not escaped.
    let (is_error, text) = call(
        &t,
        "data_convert",
        json!({"file": "cells.json", "output": "out.jsonl"}),
    )
    .await;
    assert!(!is_error, "{text}");
    assert!(written("out.jsonl").contains("{\"cell\":\"@SUM(A1)\"}"));
}
