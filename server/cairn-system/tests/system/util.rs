//! The utility tools of cairn-system called as the model calls them, over a real temp
//! workspace: checksums, encodings, UUIDs, time, cron, the calculator and units. Expected values
//! are computed independently (published test vectors, hand-counted calendars).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use cairn_system::{System, system_tools};
use cairn_test_support::tools::call;
use cairn_toolkit::ToolSet;
use cairn_workspace::{AccessRules, ExactApprovals, Workspace};
use serde_json::{Value, json};

fn tools(dir: &Path) -> ToolSet<System> {
    // The user's rules as the binary applies them: `.env` and other secrets are protected.
    let ws = Workspace::new(vec![dir.to_path_buf()])
        .unwrap()
        .with_access(
            |_| AccessRules::new("ada@example.com", None, None),
            ExactApprovals::new(),
        );
    system_tools(System::new(Some(Arc::new(ws)), None))
}

async fn ok(t: &ToolSet<System>, name: &str, args: Value) -> String {
    let r = call(t, name, args).await;
    assert!(!r.is_error, "{name} failed: {}", r.text);
    r.text
}

async fn refused(t: &ToolSet<System>, name: &str, args: Value) -> String {
    let r = call(t, name, args).await;
    assert!(r.is_error, "{name} should have refused: {}", r.text);
    r.text
}

fn ws() -> (tempfile::TempDir, ToolSet<System>) {
    let dir = tempfile::tempdir().unwrap();
    let t = tools(dir.path());
    (dir, t)
}

// checksum

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checksum_of_text_matches_the_published_vectors() {
    let (_dir, t) = ws();
    let cases = [
        (
            "sha256",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        ),
        ("sha1", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ("md5", "900150983cd24fb0d6963f7d28e17f72"),
        (
            "sha512",
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
        ),
    ];
    for (algo, want) in cases {
        let out = ok(&t, "checksum", json!({"text": "abc", "algorithm": algo})).await;
        assert!(out.contains(want), "{algo}: {out}");
    }
    // sha256 is the default.
    let out = ok(&t, "checksum", json!({"text": "abc"})).await;
    assert!(out.contains("sha256") && out.contains(cases[0].1), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checksum_streams_files_verifies_and_refuses_protected_ones() {
    let (dir, t) = ws();
    std::fs::write(dir.path().join("hello.txt"), "hello\n").unwrap();
    // A file larger than one read buffer, hashed by streaming: 1 MiB of 'a'.
    std::fs::write(dir.path().join("big.bin"), vec![b'a'; 1 << 20]).unwrap();
    let hello = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";
    let out = ok(
        &t,
        "checksum",
        json!({"files": ["hello.txt"], "expected": hello.to_uppercase()}),
    )
    .await;
    assert!(out.contains(hello) && out.contains("MATCHES"), "{out}");
    let out = ok(
        &t,
        "checksum",
        json!({"files": ["hello.txt", "missing.txt"], "expected": "00"}),
    )
    .await;
    assert!(out.contains("DOES NOT MATCH"), "{out}");
    assert!(out.contains("missing.txt: not hashed"), "{out}");
    // sha256 of 1 MiB of 'a', computed here with the test's own crate.
    let big = ok(&t, "checksum", json!({"files": ["big.bin"]})).await;
    use sha2::Digest;
    let want = hex::encode(sha2::Sha256::digest(vec![b'a'; 1 << 20]));
    assert!(
        big.contains(&want) && big.contains("1048576 bytes"),
        "{big}"
    );

    std::fs::write(dir.path().join(".env"), "TOKEN=secret\n").unwrap();
    let out = refused(&t, "checksum", json!({"files": [".env"]})).await;
    assert!(out.contains(".env"), "{out}");
    let out = refused(&t, "checksum", json!({"files": ["../outside"]})).await;
    assert!(out.contains("not hashed"), "{out}");
}

// encode_decode

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn encode_decode_round_trips_and_shows_binary_as_hex() {
    let (_dir, t) = ws();
    let enc = |input: &str, encoding: &str| json!({"input": input, "encoding": encoding, "direction": "encode"});
    let dec = |input: &str, encoding: &str| json!({"input": input, "encoding": encoding, "direction": "decode"});
    assert_eq!(
        ok(&t, "encode_decode", enc("hello", "base64")).await,
        "aGVsbG8="
    );
    assert_eq!(
        ok(&t, "encode_decode", dec("aGVsbG8", "base64")).await,
        "hello"
    );
    assert_eq!(
        ok(&t, "encode_decode", enc("\u{fb}\u{ff}", "base64_url")).await,
        "w7vDvw"
    );
    assert_eq!(
        ok(&t, "encode_decode", enc("a b&c=ä", "url")).await,
        "a%20b%26c%3D%C3%A4"
    );
    assert_eq!(
        ok(&t, "encode_decode", dec("a+b%26c%3D%C3%A4", "url")).await,
        "a b&c=ä"
    );
    assert_eq!(ok(&t, "encode_decode", enc("Hi", "hex")).await, "4869");
    assert_eq!(
        ok(&t, "encode_decode", enc("<a href=\"x\">'&'", "html")).await,
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;"
    );
    assert_eq!(
        ok(
            &t,
            "encode_decode",
            dec("&#x41;&#66;&amp;&lt; &bogus; & x", "html")
        )
        .await,
        "AB&< &bogus; & x"
    );
    let bin = ok(&t, "encode_decode", dec("/wA=", "base64")).await;
    assert!(
        bin.contains("binary: 2 bytes") && bin.ends_with("ff00"),
        "{bin}"
    );
    let bad = refused(&t, "encode_decode", dec("ab-_", "base64")).await;
    assert!(
        bad.contains("not valid base64") && bad.contains("base64_url"),
        "{bad}"
    );
    let bad = refused(&t, "encode_decode", dec("abc", "hex")).await;
    assert!(bad.contains("not valid hex"), "{bad}");
}

// uuid_generate

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uuids_are_generated_and_inspected() {
    let (_dir, t) = ws();
    let out = ok(&t, "uuid_generate", json!({"version": "v7", "count": 3})).await;
    let ids: Vec<uuid::Uuid> = out.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(ids.len(), 3);
    assert!(ids.iter().all(|u| u.get_version_num() == 7));
    let out = ok(&t, "uuid_generate", json!({})).await;
    assert_eq!(out.parse::<uuid::Uuid>().unwrap().get_version_num(), 4);
    // The RFC 9562 v7 example: 2022-02-22T19:22:22.000Z.
    let out = ok(
        &t,
        "uuid_generate",
        json!({"inspect": "017F22E2-79B0-7CC3-98C4-DC0C0C07398F"}),
    )
    .await;
    assert!(out.contains("version: 7"), "{out}");
    assert!(out.contains("RFC 9562"), "{out}");
    assert!(out.contains("2022-02-22T19:22:22.000Z"), "{out}");
    let bad = refused(&t, "uuid_generate", json!({"inspect": "not-a-uuid"})).await;
    assert!(bad.contains("is not a UUID"), "{bad}");
    let bad = refused(&t, "uuid_generate", json!({"count": 101})).await;
    assert!(bad.contains("1 to 100"), "{bad}");
}

// time

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_now_shows_utc_unix_time_and_zones() {
    let (_dir, t) = ws();
    let before = chrono::Utc::now().timestamp();
    let out = ok(&t, "time_now", json!({"zones": ["Asia/Tokyo"]})).await;
    let unix: i64 = out
        .split("Unix time: ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .unwrap()
        .parse()
        .unwrap();
    assert!(unix >= before && unix <= before + 60, "{out}");
    assert!(
        out.contains("Asia/Tokyo: ") && out.contains("JST (+09:00)"),
        "{out}"
    );
    let bad = refused(&t, "time_now", json!({"zones": ["Mars/Olympus"]})).await;
    assert!(bad.contains("unknown time zone `Mars/Olympus`"), "{bad}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_convert_between_zones_and_formats() {
    let (_dir, t) = ws();
    let out = ok(
        &t,
        "time_convert",
        json!({"time": "2024-03-01 14:00", "from_zone": "Europe/Berlin", "to_zones": ["America/New_York"], "format": "%d/%m/%Y %I:%M %p"}),
    )
    .await;
    assert!(
        out.contains("UTC: 2024-03-01 13:00:00 UTC (+00:00), Friday"),
        "{out}"
    );
    assert!(
        out.contains("Europe/Berlin: 2024-03-01 14:00:00 CET (+01:00)"),
        "{out}"
    );
    assert!(
        out.contains("America/New_York: 2024-03-01 08:00:00 EST (-05:00)"),
        "{out}"
    );
    assert!(out.contains("Unix time: 1709298000 s"), "{out}");
    assert!(
        out.contains("America/New_York as `%d/%m/%Y %I:%M %p`: 01/03/2024 08:00 AM"),
        "{out}"
    );
    let out = ok(&t, "time_convert", json!({"time": "0"})).await;
    assert!(
        out.contains("1970-01-01 00:00:00 UTC") && out.contains("Unix seconds"),
        "{out}"
    );
    let out = ok(&t, "time_convert", json!({"time": "1709298000000"})).await;
    assert!(
        out.contains("2024-03-01 13:00:00 UTC") && out.contains("milliseconds"),
        "{out}"
    );
    let out = ok(
        &t,
        "time_convert",
        json!({"time": "Fri, 01 Mar 2024 14:00:00 +0100", "to_zones": ["utc"]}),
    )
    .await;
    assert!(out.contains("2024-03-01 13:00:00 UTC"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_convert_explains_berlin_dst_gap_and_overlap_and_suggests_zones() {
    let (_dir, t) = ws();
    // 2024-03-31 in Berlin: 02:00 CET jumps to 03:00 CEST.
    let gap = refused(
        &t,
        "time_convert",
        json!({"time": "2024-03-31 02:30", "from_zone": "Europe/Berlin"}),
    )
    .await;
    assert!(gap.contains("does not exist in Europe/Berlin"), "{gap}");
    assert!(gap.contains("from 02:00 straight to 03:00 CEST"), "{gap}");
    // 2024-10-27 in Berlin: 02:30 happens at 00:30 UTC (CEST) and at 01:30 UTC (CET).
    let twice = ok(
        &t,
        "time_convert",
        json!({"time": "2024-10-27 02:30", "from_zone": "Europe/Berlin"}),
    )
    .await;
    assert!(twice.contains("happens twice"), "{twice}");
    assert!(twice.contains("UTC: 2024-10-27 00:30:00 UTC"), "{twice}");
    let bad = refused(
        &t,
        "time_convert",
        json!({"time": "2024-03-01 14:00", "from_zone": "Europe/Berln"}),
    )
    .await;
    assert!(
        bad.contains("did you mean") && bad.contains("Europe/Berlin"),
        "{bad}"
    );
    let bad = refused(&t, "time_convert", json!({"time": "next tuesday-ish"})).await;
    assert!(bad.contains("cannot read"), "{bad}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_diff_counts_calendar_days_across_dst_and_business_days() {
    let (_dir, t) = ws();
    // A calendar day across the spring change in Berlin is 23 hours.
    let out = ok(
        &t,
        "time_diff",
        json!({"from": "2024-03-30 12:00", "add": "1d", "zone": "Europe/Berlin"}),
    )
    .await;
    assert!(out.contains("= 2024-03-31 12:00:00 CEST (+02:00)"), "{out}");
    assert!(out.contains("difference: 23 hours"), "{out}");
    // 2024 is a leap year: January 31 + February 29 days.
    let out = ok(
        &t,
        "time_diff",
        json!({"from": "2024-01-01", "to": "2024-03-01"}),
    )
    .await;
    assert!(
        out.contains("difference: 60 days (5184000 seconds"),
        "{out}"
    );
    // Monday June 3 to Monday June 17 2024: two working weeks.
    let out = ok(
        &t,
        "time_diff",
        json!({"from": "2024-06-03", "to": "2024-06-17 09:30", "business_days": true}),
    )
    .await;
    assert!(
        out.contains("difference: 14 days 9 hours 30 minutes"),
        "{out}"
    );
    assert!(out.contains("holidays not known): 10"), "{out}");
    // A month after January 31 is the end of February (chrono's month arithmetic clamps).
    let out = ok(&t, "time_diff", json!({"from": "2024-01-31", "add": "1mo"})).await;
    assert!(out.contains("= 2024-02-29 00:00:00 UTC"), "{out}");
    let out = ok(
        &t,
        "time_diff",
        json!({"from": "2024-03-01T00:00:00Z", "add": "-90m"}),
    )
    .await;
    assert!(out.contains("= 2024-02-29 22:30:00 UTC"), "{out}");
    let bad = refused(
        &t,
        "time_diff",
        json!({"from": "2024-01-01", "add": "3 fortnights"}),
    )
    .await;
    assert!(bad.contains("unknown unit `fortnights`"), "{bad}");
    let huge = "4294967295h ".repeat(700);
    let bad = refused(&t, "time_diff", json!({"from": "2024-01-01", "add": huge})).await;
    assert!(bad.contains("out of the representable time range"), "{bad}");
    let bad = refused(&t, "time_diff", json!({"from": "2024-01-01"})).await;
    assert!(bad.contains("exactly one"), "{bad}");
}

// cron_explain

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cron_explains_and_lists_the_next_runs() {
    let (_dir, t) = ws();
    // Friday 2024-06-07 16:50 UTC: four more runs on Friday, then Monday 09:00.
    let out = ok(
        &t,
        "cron_explain",
        json!({"expression": "*/15 9-17 * * MON-FRI", "after": "2024-06-07T16:50:00Z"}),
    )
    .await;
    assert!(
        out.contains("every 15 minutes past hour 9 through 17, on Monday through Friday"),
        "{out}"
    );
    let runs: Vec<&str> = out.lines().filter(|l| l.starts_with("- ")).collect();
    assert_eq!(
        runs,
        [
            "- 2024-06-07 17:00:00 UTC (+00:00), Friday",
            "- 2024-06-07 17:15:00 UTC (+00:00), Friday",
            "- 2024-06-07 17:30:00 UTC (+00:00), Friday",
            "- 2024-06-07 17:45:00 UTC (+00:00), Friday",
            "- 2024-06-10 09:00:00 UTC (+00:00), Monday",
        ],
        "{out}"
    );
    let out = ok(
        &t,
        "cron_explain",
        json!({"expression": "@daily", "count": 1, "after": "2024-12-31 23:59"}),
    )
    .await;
    assert!(
        out.contains("at 00:00") && out.contains("- 2025-01-01 00:00:00 UTC"),
        "{out}"
    );
    // 02:30 does not exist in Berlin on 2024-03-31.
    let out = ok(
        &t,
        "cron_explain",
        json!({"expression": "30 2 * * *", "count": 2, "zone": "Europe/Berlin", "after": "2024-03-30 03:00"}),
    )
    .await;
    assert!(
        out.contains("- 2024-04-01 02:30:00 CEST (+02:00), Monday"),
        "{out}"
    );
    assert!(out.contains("- 2024-04-02 02:30:00 CEST"), "{out}");
    assert!(out.contains("2024-03-31 02:30:00 does not exist"), "{out}");
    let out = ok(
        &t,
        "cron_explain",
        json!({"expression": "0 0 30 2 *", "count": 3}),
    )
    .await;
    assert!(out.contains("never runs"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_cron_expressions_name_the_field_and_why() {
    let (_dir, t) = ws();
    let cases = [
        (
            "61 * * * *",
            "field 1 (minute) `61`: 61 is out of range 0–59",
        ),
        ("* 24 * * *", "field 2 (hour) `24`: 24 is out of range 0–23"),
        (
            "* * * FOO *",
            "field 4 (month) `FOO`: not a number or a name",
        ),
        ("*/0 * * * *", "a step of 0 never advances"),
        ("* * 5-1 * *", "the range runs backwards"),
        ("* * L * *", "L, W and #"),
        (
            "*/4294967295 * * * 99",
            "field 5 (day-of-week) `99`: 99 is out of range 0–7",
        ),
        ("* * *", "expected 5 fields"),
        ("@fortnightly", "unknown macro"),
    ];
    for (expr, want) in cases {
        let out = refused(&t, "cron_explain", json!({"expression": expr})).await;
        assert!(out.contains(want), "{expr}: {out}");
    }
    let out = refused(
        &t,
        "cron_explain",
        json!({"expression": "* * * * *", "zone": "Berlin"}),
    )
    .await;
    assert!(out.contains("Europe/Berlin"), "{out}");
}

// calculate

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calculate_exact_integers_floats_percentages_and_functions() {
    let (_dir, t) = ws();
    let cases = [
        ("2^64 - 1", "18446744073709551615"),
        ("0.1 + 0.2", "0.3"),
        ("200 + 15%", "230"),
        ("200 - 15%", "170"),
        ("50% * 8", "4"),
        ("10 % 3", "1"),
        ("17 mod 5", "2"),
        ("-2^2", "-4"),
        ("2^3^2", "512"),
        ("20!", "2432902008176640000"),
        ("sqrt(16) + abs(-3)", "7"),
        ("round(pi * 100)", "314"),
        ("log(1000)", "3"),
        ("log(8, 2)", "3"),
        ("max(1, 7, 3) - min(4, 2)", "5"),
        ("0x1f + 0b101 + 1_000", "1036"),
        ("7 / 2", "3.5"),
        ("1.5e3 * 2", "3000"),
    ];
    for (expr, want) in cases {
        let out = ok(&t, "calculate", json!({"expression": expr})).await;
        assert_eq!(out, format!("{expr} = {want}"), "{expr}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calculate_refuses_clearly_and_points_at_the_position() {
    let (_dir, t) = ws();
    let out = refused(&t, "calculate", json!({"expression": "1 + 2/0"})).await;
    assert!(out.contains("at character 6: division by zero"), "{out}");
    assert!(out.contains("1 + 2/0\n     ^"), "{out}");
    let out = refused(&t, "calculate", json!({"expression": "10^999999"})).await;
    assert!(out.contains("overflow"), "{out}");
    let out = refused(&t, "calculate", json!({"expression": "(1 + 2"})).await;
    assert!(out.contains("expected `)`"), "{out}");
    let out = refused(&t, "calculate", json!({"expression": "2 3"})).await;
    assert!(out.contains("operator missing"), "{out}");
    let out = refused(&t, "calculate", json!({"expression": "sqrt(-1)"})).await;
    assert!(
        out.contains("sqrt is only defined for numbers ≥ 0"),
        "{out}"
    );
    let out = refused(&t, "calculate", json!({"expression": "system(\"rm\")"})).await;
    assert!(
        out.contains("unexpected `\"`") || out.contains("unknown"),
        "{out}"
    );
    let out = refused(&t, "calculate", json!({"expression": "1000!"})).await;
    assert!(out.contains("too large"), "{out}");
    // Deep nesting is refused, not a stack overflow.
    let deep = format!("{}1{}", "(".repeat(900), ")".repeat(900));
    let out = refused(&t, "calculate", json!({"expression": deep})).await;
    assert!(out.contains("nested more than"), "{out}");
    let minus = "-".repeat(1900) + "1";
    let out = refused(&t, "calculate", json!({"expression": minus})).await;
    assert!(out.contains("nested more than"), "{out}");
}

// unit_convert

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unit_convert_keeps_kb_and_kib_apart_and_refuses_mismatched_kinds() {
    let (_dir, t) = ws();
    let conv = |v: f64, from: &str, to: &str| json!({"value": v, "from": from, "to": to});
    assert!(
        ok(&t, "unit_convert", conv(1.0, "KiB", "B"))
            .await
            .starts_with("1 KiB = 1024 B")
    );
    assert!(
        ok(&t, "unit_convert", conv(1.0, "KB", "B"))
            .await
            .starts_with("1 KB = 1000 B")
    );
    assert!(
        ok(&t, "unit_convert", conv(1.0, "GB", "GiB"))
            .await
            .starts_with("1 GB = 0.931322574615479 GiB")
    );
    assert!(
        ok(&t, "unit_convert", conv(100.0, "Mbit", "MB"))
            .await
            .starts_with("100 Mbit = 12.5 MB")
    );
    assert_eq!(
        ok(&t, "unit_convert", conv(100.0, "°C", "°F")).await,
        "100 °C = 212 °F"
    );
    assert_eq!(
        ok(&t, "unit_convert", conv(-40.0, "C", "F")).await,
        "-40 C = -40 F"
    );
    assert_eq!(
        ok(&t, "unit_convert", conv(0.0, "K", "celsius")).await,
        "0 K = -273.15 celsius"
    );
    assert_eq!(
        ok(&t, "unit_convert", conv(1.0, "mi", "km")).await,
        "1 mi = 1.609344 km"
    );
    assert_eq!(
        ok(&t, "unit_convert", conv(100.0, "km/h", "m/s")).await,
        "100 km/h = 27.7777777777778 m/s"
    );
    assert_eq!(
        ok(&t, "unit_convert", conv(1.0, "kWh", "MJ")).await,
        "1 kWh = 3.6 MJ"
    );
    assert_eq!(
        ok(&t, "unit_convert", conv(1.0, "bar", "kPa")).await,
        "1 bar = 100 kPa"
    );
    assert_eq!(
        ok(&t, "unit_convert", conv(1.0, "acre", "m2")).await,
        "1 acre = 4046.8564224 m2"
    );
    assert_eq!(
        ok(&t, "unit_convert", conv(2.0, "Liters", "mL")).await,
        "2 Liters = 2000 mL"
    );
    let bad = refused(&t, "unit_convert", conv(1.0, "kg", "m")).await;
    assert!(
        bad.contains("cannot convert mass (kg) to length (m)"),
        "{bad}"
    );
    let bad = refused(&t, "unit_convert", conv(1.0, "mb", "B")).await;
    assert!(
        bad.contains("ambiguous") && bad.contains("MB") && bad.contains("Mb"),
        "{bad}"
    );
    let bad = refused(&t, "unit_convert", conv(1.0, "furlong", "m")).await;
    assert!(bad.contains("unknown unit `furlong`"), "{bad}");
    let bad = refused(&t, "unit_convert", conv(-500.0, "C", "K")).await;
    assert!(bad.contains("below absolute zero"), "{bad}");
}

// archives

/// A tar built entry by entry with raw names, so hostile ones (`..`, absolute) can be written.
fn tar_of(entries: &[(&str, tar::EntryType, &[u8], &str)]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, kind, data, link) in entries {
        let mut h = tar::Header::new_gnu();
        h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        h.as_old_mut().linkname[..link.len()].copy_from_slice(link.as_bytes());
        h.set_entry_type(*kind);
        h.set_mode(0o644);
        h.set_size(data.len() as u64);
        h.set_cksum();
        b.append(&h, *data).unwrap();
    }
    b.into_inner().unwrap()
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Everything under `dir`, as sorted relative paths (what a refused extraction must not change).
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() && !p.is_symlink() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// A workspace inside a parent directory holding an outside sentinel file and directory.
fn guarded() -> (tempfile::TempDir, std::path::PathBuf, ToolSet<System>) {
    let parent = tempfile::tempdir().unwrap();
    let root = parent.path().join("ws");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(parent.path().join("sentinel.txt"), "outside").unwrap();
    std::fs::create_dir(parent.path().join("outside-dir")).unwrap();
    let t = tools(&root);
    (parent, root, t)
}

fn outside_untouched(parent: &Path) {
    assert_eq!(
        std::fs::read_to_string(parent.join("sentinel.txt")).unwrap(),
        "outside"
    );
    assert_eq!(tree(&parent.join("outside-dir")), Vec::<String>::new());
    let mut top: Vec<String> = std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    top.sort();
    assert_eq!(
        top,
        ["outside-dir", "sentinel.txt", "ws"],
        "something was written outside the workspace"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_tar_is_listed_with_flags_and_refused_whole() {
    let (parent, root, t) = guarded();
    let evil = tar_of(&[
        ("ok.txt", tar::EntryType::Regular, b"fine", ""),
        ("../sentinel.txt", tar::EntryType::Regular, b"pwned", ""),
        ("/tmp/abs.txt", tar::EntryType::Regular, b"abs", ""),
        ("link", tar::EntryType::Symlink, b"", "../../outside-dir"),
        ("fifo", tar::EntryType::Fifo, b"", ""),
        ("hard", tar::EntryType::Link, b"", "../sentinel.txt"),
    ]);
    std::fs::write(root.join("evil.tar.gz"), gz(&evil)).unwrap();
    let out = ok(&t, "archive_list", json!({"archive": "evil.tar.gz"})).await;
    assert!(out.contains("6 entries"), "{out}");
    assert!(out.contains("| ok.txt | file | 4 |"), "{out}");
    assert!(
        out.contains("../sentinel.txt") && out.contains("DANGER: a `..` component"),
        "{out}"
    );
    assert!(out.contains("DANGER: an absolute path"), "{out}");
    assert!(
        out.contains("symlink → ../../outside-dir") && out.contains("DANGER: a link out"),
        "{out}"
    );
    assert!(out.contains("DANGER: a fifo"), "{out}");
    assert!(out.contains("hardlink → ../sentinel.txt"), "{out}");
    assert!(out.contains("5 dangerous entries"), "{out}");

    let out = refused(
        &t,
        "archive_extract",
        json!({"archive": "evil.tar.gz", "target": "out"}),
    )
    .await;
    assert!(
        out.contains("refused, nothing was written: 5 dangerous")
            && out.contains("`hard`: a link to `../sentinel.txt`"),
        "{out}"
    );
    assert!(out.contains("`../sentinel.txt`: a `..` component"), "{out}");
    assert!(
        out.contains("`link`: a link to `../../outside-dir`"),
        "{out}"
    );
    // Not even the harmless entry was written.
    assert!(!root.join("out").exists());
    assert_eq!(tree(&root), ["evil.tar.gz"]);
    outside_untouched(parent.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_tar_extracts_skipping_internal_links_and_never_overwrites_silently() {
    let (parent, root, t) = guarded();
    let good = tar_of(&[
        ("pkg/", tar::EntryType::Directory, b"", ""),
        ("pkg/a.txt", tar::EntryType::Regular, b"alpha", ""),
        ("pkg/sub/b.txt", tar::EntryType::Regular, b"beta", ""),
        ("pkg/latest", tar::EntryType::Symlink, b"", "a.txt"),
        ("pkg/again", tar::EntryType::Link, b"", "pkg/a.txt"),
    ]);
    std::fs::write(root.join("good.tar"), &good).unwrap();
    let out = ok(
        &t,
        "archive_extract",
        json!({"archive": "good.tar", "target": "x"}),
    )
    .await;
    assert!(out.contains("extracted 2 files (9 bytes)"), "{out}");
    assert!(
        out.contains("skipped 2 links") && out.contains("pkg/latest") && out.contains("pkg/again"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("x/pkg/a.txt")).unwrap(),
        "alpha"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("x/pkg/sub/b.txt")).unwrap(),
        "beta"
    );
    assert!(!root.join("x/pkg/latest").exists());

    // Again: the files exist now, so the whole extraction is refused and they keep their text.
    std::fs::write(root.join("x/pkg/a.txt"), "edited").unwrap();
    let out = refused(
        &t,
        "archive_extract",
        json!({"archive": "good.tar", "target": "x"}),
    )
    .await;
    assert!(
        out.contains("already exists (pass overwrite: true"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("x/pkg/a.txt")).unwrap(),
        "edited"
    );
    let out = ok(
        &t,
        "archive_extract",
        json!({"archive": "good.tar", "target": "x", "overwrite": true}),
    )
    .await;
    assert!(out.contains("extracted 2 files"), "{out}");
    assert_eq!(
        std::fs::read_to_string(root.join("x/pkg/a.txt")).unwrap(),
        "alpha"
    );
    outside_untouched(parent.path());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decompression_bombs_are_refused_fast_with_nothing_written() {
    let (parent, root, t) = guarded();
    // 1 GiB of zeros as 1024 gzip members of 1 MiB each: about 1 MB on disk.
    let member = gz(&vec![0u8; 1 << 20]);
    let bomb: Vec<u8> = member
        .iter()
        .copied()
        .cycle()
        .take(member.len() * 1024)
        .collect();
    assert!(bomb.len() < 2 << 20, "{}", bomb.len());
    std::fs::write(root.join("zeros.gz"), &bomb).unwrap();
    let out = refused(
        &t,
        "archive_extract",
        json!({"archive": "zeros.gz", "target": "out"}),
    )
    .await;
    assert!(
        out.contains("refused, nothing was written") && out.contains("decompression bomb"),
        "{out}"
    );
    assert!(!root.join("out").exists());

    // The same inside a tar: a header claiming 1 GiB, then the zero members.
    let mut header = tar::Header::new_gnu();
    header.set_path("zeros.bin").unwrap();
    header.set_size(1 << 30);
    header.set_entry_type(tar::EntryType::Regular);
    header.set_cksum();
    let mut tgz = gz(header.as_bytes());
    tgz.extend_from_slice(&bomb);
    tgz.extend_from_slice(&gz(&[0u8; 1024]));
    std::fs::write(root.join("zeros.tar.gz"), &tgz).unwrap();
    let out = refused(
        &t,
        "archive_extract",
        json!({"archive": "zeros.tar.gz", "target": "out"}),
    )
    .await;
    assert!(out.contains("decompression bomb"), "{out}");
    let out = ok(&t, "archive_list", json!({"archive": "zeros.tar.gz"})).await;
    assert!(
        out.contains("STOPPED reading") && out.contains("decompression bomb"),
        "{out}"
    );
    assert_eq!(tree(&root), ["zeros.gz", "zeros.tar.gz"]);

    // zstd: 1 GiB of zeros as 1024 concatenated frames.
    let frame = zstd::encode_all(&vec![0u8; 1 << 20][..], 3).unwrap();
    let zbomb: Vec<u8> = frame
        .iter()
        .copied()
        .cycle()
        .take(frame.len() * 1024)
        .collect();
    std::fs::write(root.join("zeros.zst"), &zbomb).unwrap();
    let out = refused(
        &t,
        "archive_extract",
        json!({"archive": "zeros.zst", "target": "out"}),
    )
    .await;
    assert!(out.contains("decompression bomb"), "{out}");
    // zip: one entry of 32 MiB of zeros, about 1000:1, judged on the bytes it really expands to.
    {
        use std::io::Write;
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let opts = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        w.start_file("zeros.bin", opts).unwrap();
        w.write_all(&vec![0u8; 32 << 20]).unwrap();
        std::fs::write(root.join("zeros.zip"), w.finish().unwrap().into_inner()).unwrap();
    }
    let out = refused(
        &t,
        "archive_extract",
        json!({"archive": "zeros.zip", "target": "out"}),
    )
    .await;
    assert!(out.contains("`zeros.bin` expands more than 100:1"), "{out}");
    let out = ok(&t, "archive_list", json!({"archive": "zeros.zip"})).await;
    assert!(out.contains("DANGER: ratio"), "{out}");
    assert!(!root.join("out").exists());
    outside_untouched(parent.path());

    // A modest single file extracts without its extension.
    std::fs::write(root.join("notes.txt.gz"), gz(b"hello\n")).unwrap();
    let out = ok(
        &t,
        "archive_extract",
        json!({"archive": "notes.txt.gz", "target": "."}),
    )
    .await;
    assert!(out.contains("extracted 1 file (6 bytes)"), "{out}");
    assert_eq!(
        std::fs::read_to_string(root.join("notes.txt")).unwrap(),
        "hello\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zips_extract_and_zip_slip_or_protected_targets_are_refused() {
    use std::io::Write;
    let (parent, root, t) = guarded();
    let opts = zip::write::SimpleFileOptions::default();
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    w.start_file("docs/readme.md", opts).unwrap();
    w.write_all(b"# hi\n").unwrap();
    let good = w.finish().unwrap().into_inner();
    std::fs::write(root.join("good.zip"), &good).unwrap();
    let out = ok(&t, "archive_list", json!({"archive": "good.zip"})).await;
    assert!(out.contains("| docs/readme.md | file | 5 |"), "{out}");
    let out = ok(
        &t,
        "archive_extract",
        json!({"archive": "good.zip", "target": "unz"}),
    )
    .await;
    assert!(out.contains("extracted 1 file (5 bytes)"), "{out}");
    assert_eq!(
        std::fs::read_to_string(root.join("unz/docs/readme.md")).unwrap(),
        "# hi\n"
    );

    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    w.start_file("../../sentinel.txt", opts).unwrap();
    w.write_all(b"pwned").unwrap();
    w.add_symlink("up", "/etc/passwd", opts).unwrap();
    let slip = w.finish().unwrap().into_inner();
    std::fs::write(root.join("slip.zip"), &slip).unwrap();
    let out = refused(
        &t,
        "archive_extract",
        json!({"archive": "slip.zip", "target": "s"}),
    )
    .await;
    assert!(
        out.contains("`../../sentinel.txt`: a `..` component"),
        "{out}"
    );
    assert!(out.contains("`up`: a link to `/etc/passwd`"), "{out}");
    assert!(!root.join("s").exists());

    // A `.env` in the archive is a protected destination: refused, naming it, not created.
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    w.start_file(".env", opts).unwrap();
    w.write_all(b"TOKEN=x").unwrap();
    std::fs::write(root.join("env.zip"), w.finish().unwrap().into_inner()).unwrap();
    let out = refused(
        &t,
        "archive_extract",
        json!({"archive": "env.zip", "target": "."}),
    )
    .await;
    assert!(out.contains(".env"), "{out}");
    assert!(!root.join(".env").exists());
    outside_untouched(parent.path());
}

/// A zip of `(name, content, unix mode)` entries. The zip writer keeps only permission bits,
/// so a file type (FIFO, device) is patched into each central-directory record's external
/// attributes afterwards, in writing order; `None` keeps a plain file.
fn zip_of(entries: &[(&str, &[u8], Option<u32>)]) -> Vec<u8> {
    use std::io::Write;
    let opts = zip::write::SimpleFileOptions::default().unix_permissions(0o644);
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for (name, data, _) in entries {
        w.start_file(*name, opts).unwrap();
        w.write_all(data).unwrap();
    }
    let mut bytes = w.finish().unwrap().into_inner();
    let starts: Vec<usize> = bytes
        .windows(4)
        .enumerate()
        .filter(|(_, w)| *w == b"PK\x01\x02")
        .map(|(i, _)| i)
        .collect();
    assert_eq!(starts.len(), entries.len());
    for (at, (_, _, mode)) in starts.into_iter().zip(entries) {
        if let Some(mode) = mode {
            bytes[at + 38..at + 42].copy_from_slice(&(mode << 16).to_le_bytes());
        }
    }
    bytes
}

/// Every symlink under `dir` whose target resolves outside `dir` (none may exist after an
/// extraction).
fn links_out(dir: &Path) -> Vec<String> {
    let canon = std::fs::canonicalize(dir).unwrap();
    tree(dir)
        .into_iter()
        .filter(|rel| {
            let p = dir.join(rel);
            p.is_symlink() && std::fs::canonicalize(&p).map_or(true, |t| !t.starts_with(&canon))
        })
        .collect()
}

/// The same hostile entries in every format the tool reads (tar, tar.gz, tar.zst, zip and its
/// `.jar` alias): `..` and absolute paths, a symlink out then a file written through it (absolute
/// and relative), hard links out (tar only: zip has no hard-link entry), a FIFO and devices.
/// Each is refused whole, each entry named, and nothing lands outside the target.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_archive_format_refuses_slips_links_out_and_special_entries_writing_nothing() {
    let (parent, root, t) = guarded();
    let outside = parent.path().join("outside-dir");
    let abs_name = format!("{}/abs.txt", parent.path().display());
    let abs_link = outside.display().to_string();
    let sentinel = parent.path().join("sentinel.txt").display().to_string();
    let tar = tar_of(&[
        ("ok.txt", tar::EntryType::Regular, b"fine", ""),
        ("../../escaped.txt", tar::EntryType::Regular, b"pwned", ""),
        (&abs_name, tar::EntryType::Regular, b"abs", ""),
        ("esc", tar::EntryType::Symlink, b"", &abs_link),
        ("esc/through.txt", tar::EntryType::Regular, b"pwned", ""),
        ("rel", tar::EntryType::Symlink, b"", "../../outside-dir"),
        ("rel/through.txt", tar::EntryType::Regular, b"pwned", ""),
        ("hard", tar::EntryType::Link, b"", "../../sentinel.txt"),
        ("hard-abs", tar::EntryType::Link, b"", &sentinel),
        ("fifo", tar::EntryType::Fifo, b"", ""),
        ("chr", tar::EntryType::Char, b"", ""),
        ("blk", tar::EntryType::Block, b"", ""),
    ]);
    let zip = zip_of(&[
        ("ok.txt", b"fine", None),
        ("../../escaped.txt", b"pwned", None),
        (&abs_name, b"abs", None),
        ("esc", abs_link.as_bytes(), Some(0o120_777)),
        ("esc/through.txt", b"pwned", None),
        ("rel", b"../../outside-dir", Some(0o120_777)),
        ("rel/through.txt", b"pwned", None),
        ("fifo", b"", Some(0o010_644)),
        ("chr", b"", Some(0o020_644)),
        ("blk", b"", Some(0o060_644)),
    ]);
    let archives: [(&str, Vec<u8>); 5] = [
        ("evil.tar", tar.clone()),
        ("evil.tar.gz", gz(&tar)),
        ("evil.tar.zst", zstd::encode_all(&tar[..], 3).unwrap()),
        ("evil.zip", zip.clone()),
        ("evil.jar", zip),
    ];
    for (name, bytes) in &archives {
        std::fs::write(root.join(name), bytes).unwrap();
    }
    for (name, _) in &archives {
        let out = refused(
            &t,
            "archive_extract",
            json!({"archive": name, "target": "out"}),
        )
        .await;
        assert!(
            out.contains("refused, nothing was written"),
            "{name}: {out}"
        );
        let mut expected = vec![
            "`../../escaped.txt`: a `..` component".to_owned(),
            format!("`{abs_name}`: an absolute path"),
            format!("`esc`: a link to `{abs_link}`, out of the target"),
            "`rel`: a link to `../../outside-dir`, out of the target".to_owned(),
            "`fifo`: a fifo".to_owned(),
            "`chr`: a character device".to_owned(),
            "`blk`: a block device".to_owned(),
        ];
        if name.contains(".tar") {
            expected.push("`hard`: a link to `../../sentinel.txt`".to_owned());
            expected.push(format!("`hard-abs`: a link to `{sentinel}`"));
        }
        for e in &expected {
            assert!(out.contains(e), "{name}: {e:?} not in: {out}");
        }
        // Nothing written anywhere: not the harmless entry, not the would-be targets outside.
        assert!(!root.join("out").exists(), "{name}");
        assert!(!parent.path().join("escaped.txt").exists(), "{name}");
        assert!(!parent.path().join("abs.txt").exists(), "{name}");
        assert!(!outside.join("through.txt").exists(), "{name}");
        assert!(
            links_out(&root).is_empty(),
            "{name}: {:?}",
            links_out(&root)
        );
        outside_untouched(parent.path());
    }
    let mut names: Vec<&str> = archives.iter().map(|(n, _)| *n).collect();
    names.sort_unstable();
    assert_eq!(tree(&root), names);
}

/// A symlink that stays inside, then a file "through" it: the link is skipped (reported), and
/// the file lands in a real directory of that name, never following anything. And a symlink out
/// already in the target: an entry that would be written through it is refused in every format.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_after_links_never_follow_them_and_links_already_in_the_target_are_refused() {
    let (parent, root, t) = guarded();
    let tar = tar_of(&[
        ("sub/", tar::EntryType::Directory, b"", ""),
        ("inner", tar::EntryType::Symlink, b"", "sub"),
        ("inner/f.txt", tar::EntryType::Regular, b"data", ""),
    ]);
    let zip = zip_of(&[
        ("sub/keep.txt", b"k", None),
        ("inner", b"sub", Some(0o120_777)),
        ("inner/f.txt", b"data", None),
    ]);
    for (name, bytes) in [
        ("in.tar", tar.clone()),
        ("in.tar.gz", gz(&tar)),
        ("in.tar.zst", zstd::encode_all(&tar[..], 3).unwrap()),
        ("in.zip", zip),
    ] {
        std::fs::write(root.join(name), bytes).unwrap();
        let target = format!("x-{name}");
        let out = ok(
            &t,
            "archive_extract",
            json!({"archive": name, "target": target}),
        )
        .await;
        assert!(
            out.contains("skipped 1 link") && out.contains("inner (symlink → sub)"),
            "{name}: {out}"
        );
        let dir = root.join(&target);
        let inner = std::fs::symlink_metadata(dir.join("inner")).unwrap();
        assert!(inner.is_dir() && !inner.file_type().is_symlink(), "{name}");
        assert_eq!(
            std::fs::read_to_string(dir.join("inner/f.txt")).unwrap(),
            "data"
        );
        assert!(!dir.join("sub/f.txt").exists(), "{name}");
        assert!(links_out(&dir).is_empty(), "{name}");
    }

    // The target already holds a link out (planted by someone else): a plain entry under it is
    // refused, nothing follows the link.
    let planted = root.join("planted");
    std::fs::create_dir(&planted).unwrap();
    std::os::unix::fs::symlink(parent.path().join("outside-dir"), planted.join("esc")).unwrap();
    let tar = tar_of(&[("esc/x.txt", tar::EntryType::Regular, b"pwned", "")]);
    for (name, bytes) in [
        ("p.tar", tar.clone()),
        ("p.tar.gz", gz(&tar)),
        ("p.tar.zst", zstd::encode_all(&tar[..], 3).unwrap()),
        ("p.zip", zip_of(&[("esc/x.txt", b"pwned", None)])),
    ] {
        std::fs::write(root.join(name), bytes).unwrap();
        let out = refused(
            &t,
            "archive_extract",
            json!({"archive": name, "target": "planted"}),
        )
        .await;
        assert!(
            out.contains("refused, nothing was written") && out.contains("`esc/x.txt`"),
            "{name}: {out}"
        );
        assert!(!parent.path().join("outside-dir/x.txt").exists(), "{name}");
        outside_untouched(parent.path());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn archive_create_packs_leaves_out_protected_files_and_round_trips() {
    let (parent, root, t) = guarded();
    std::fs::create_dir_all(root.join("proj/sub")).unwrap();
    std::fs::write(root.join("proj/a.txt"), "alpha").unwrap();
    std::fs::write(root.join("proj/sub/b.txt"), "beta").unwrap();
    std::fs::write(root.join("proj/.env"), "TOKEN=secret").unwrap();
    for name in ["p.tar.gz", "p.zip", "p.tar.zst", "p.tar"] {
        let out = ok(
            &t,
            "archive_create",
            json!({"archive": name, "sources": ["proj"]}),
        )
        .await;
        assert!(out.contains("with 2 files (9 bytes)"), "{name}: {out}");
        assert!(
            out.contains("left out 1 protected file") && out.contains("proj/.env"),
            "{name}: {out}"
        );
        let listed = ok(&t, "archive_list", json!({"archive": name})).await;
        assert!(
            listed.contains("2 entries") && !listed.contains(".env"),
            "{name}: {listed}"
        );
        let target = format!("copy-{}", name.replace('.', "-"));
        ok(
            &t,
            "archive_extract",
            json!({"archive": name, "target": target}),
        )
        .await;
        assert_eq!(
            std::fs::read_to_string(root.join(&target).join("proj/a.txt")).unwrap(),
            "alpha"
        );
        assert_eq!(
            std::fs::read_to_string(root.join(&target).join("proj/sub/b.txt")).unwrap(),
            "beta"
        );
        assert!(!root.join(&target).join("proj/.env").exists());
    }
    // Never overwrites unless asked; the existing archive is unchanged.
    let before = std::fs::read(root.join("p.zip")).unwrap();
    let out = refused(
        &t,
        "archive_create",
        json!({"archive": "p.zip", "sources": ["proj/a.txt"]}),
    )
    .await;
    assert!(out.contains("already exists"), "{out}");
    assert_eq!(std::fs::read(root.join("p.zip")).unwrap(), before);
    // A protected file named explicitly is asked about (refused here, with no approval).
    let out = refused(
        &t,
        "archive_create",
        json!({"archive": "env.zip", "sources": ["proj/.env"]}),
    )
    .await;
    assert!(out.contains(".env"), "{out}");
    assert!(!root.join("env.zip").exists());
    let out = refused(
        &t,
        "archive_create",
        json!({"archive": "two.gz", "sources": ["proj"]}),
    )
    .await;
    assert!(out.contains("exactly one file"), "{out}");
    let out = refused(
        &t,
        "archive_create",
        json!({"archive": "../escape.tar", "sources": ["proj"]}),
    )
    .await;
    assert!(!out.is_empty());
    outside_untouched(parent.path());
}

// JSON / YAML / TOML

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn format_convert_between_json_yaml_and_toml() {
    let (dir, t) = ws();
    let out = ok(
        &t,
        "format_convert",
        json!({"text": r#"{"name": "cairn", "tags": ["a", "b"], "build": {"jobs": 2}}"#, "to": "yaml"}),
    )
    .await;
    assert!(out.starts_with("JSON → YAML:\n"), "{out}");
    let yaml = out.split_once('\n').unwrap().1;
    let back: Value = serde_norway::from_str(yaml).unwrap();
    assert_eq!(
        back,
        json!({"name": "cairn", "tags": ["a", "b"], "build": {"jobs": 2}})
    );
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    let out = ok(
        &t,
        "format_convert",
        json!({"file": "Cargo.toml", "to": "json"}),
    )
    .await;
    let json_text = out.split_once('\n').unwrap().1;
    assert_eq!(
        serde_json::from_str::<Value>(json_text).unwrap(),
        json!({"package": {"name": "x", "version": "0.1.0"}})
    );
    let out = ok(
        &t,
        "format_convert",
        json!({"text": "a: 1\nb: [x, y]\n", "from": "yaml", "to": "toml"}),
    )
    .await;
    assert!(out.contains("a = 1") && out.contains("b = ["), "{out}");
    let bad = refused(
        &t,
        "format_convert",
        json!({"text": r#"{"a": {"b": null}}"#, "to": "toml"}),
    )
    .await;
    assert!(
        bad.contains("TOML has no null") && bad.contains(".a.b"),
        "{bad}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_yaml_bomb_and_deep_json_are_refused_fast() {
    let (_dir, t) = ws();
    // Billion laughs: nine levels of nine aliases each, 9^9 strings if expanded.
    let mut bomb = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
    for w in names.windows(2) {
        let (prev, next) = (w[0], w[1]);
        bomb.push_str(&format!("{next}: &{next} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
    }
    let bad = refused(
        &t,
        "format_convert",
        json!({"text": bomb, "from": "yaml", "to": "json"}),
    )
    .await;
    assert!(
        bad.contains("repetition limit exceeded") && bad.contains("alias bomb"),
        "{bad}"
    );
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let bad = refused(
        &t,
        "format_convert",
        json!({"text": deep, "from": "json", "to": "yaml"}),
    )
    .await;
    assert!(bad.contains("recursion limit exceeded"), "{bad}");
    let deep_yaml = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let bad = refused(
        &t,
        "format_convert",
        json!({"text": deep_yaml, "from": "yaml", "to": "json"}),
    )
    .await;
    assert!(bad.contains("recursion limit exceeded"), "{bad}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_validate_lists_every_error_with_its_path() {
    let (dir, t) = ws();
    let schema = json!({
        "type": "object",
        "required": ["name", "port"],
        "properties": {
            "name": {"type": "string"},
            "port": {"type": "integer", "maximum": 65535},
            "tags": {"type": "array", "items": {"type": "string"}}
        },
        "additionalProperties": false
    });
    std::fs::write(dir.path().join("schema.json"), schema.to_string()).unwrap();
    std::fs::write(
        dir.path().join("svc.yaml"),
        "name: web\nport: 70000\ntags: [a, 3]\nextra: true\n",
    )
    .unwrap();
    let out = ok(
        &t,
        "schema_validate",
        json!({"file": "svc.yaml", "schema_file": "schema.json"}),
    )
    .await;
    assert!(
        out.starts_with("invalid: 3 errors in the YAML document"),
        "{out}"
    );
    assert!(out.contains("at `/port`") && out.contains("65535"), "{out}");
    assert!(out.contains("at `/tags/1`"), "{out}");
    assert!(out.contains("extra"), "{out}");
    let out = ok(
        &t,
        "schema_validate",
        json!({"text": "name = \"web\"\nport = 8080\n", "format": "toml", "schema": schema.to_string()}),
    )
    .await;
    assert_eq!(out, "valid: the TOML document matches the schema");
    let remote = json!({"$ref": "https://example.com/schema.json"}).to_string();
    let bad = refused(
        &t,
        "schema_validate",
        json!({"text": "{}", "schema": remote}),
    )
    .await;
    assert!(
        bad.contains("not usable") && bad.contains("not fetched"),
        "{bad}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_query_filters_like_jq() {
    let (dir, t) = ws();
    std::fs::write(
        dir.path().join("svc.yaml"),
        "services:\n  - name: web\n    port: 8080\n    tags: [front]\n  - name: db\n    port: 5432\n    tags: [back, data]\n  - name: cache\n    port: 6379\n    tags: []\n",
    )
    .unwrap();
    let q = |filter: &str| json!({"file": "svc.yaml", "filter": filter});
    assert_eq!(
        ok(&t, "json_query", q(".services[0].name")).await,
        "\"web\""
    );
    assert_eq!(
        ok(&t, "json_query", json!({"file": "svc.yaml", "filter": ".services[] | select(.port > 6000) | .name", "raw": true})).await,
        "web\ncache"
    );
    assert_eq!(
        ok(&t, "json_query", q("[.services[].port] | add")).await,
        "19891"
    );
    assert_eq!(
        ok(
            &t,
            "json_query",
            q(".services | map(.name) | sort | join(\",\")")
        )
        .await,
        "\"cache,db,web\""
    );
    assert_eq!(ok(&t, "json_query", q(".services | length")).await, "3");
    assert_eq!(
        ok(&t, "json_query", q(".services[-1].name")).await,
        "\"cache\""
    );
    assert_eq!(
        ok(&t, "json_query", json!({"file": "svc.yaml", "filter": ".services | sort_by(.port) | .[0] | {name, p: .port}"})).await,
        "{\n  \"name\": \"db\",\n  \"p\": 5432\n}"
    );
    assert_eq!(
        ok(&t, "json_query", q(".services[] | if (.tags | length) == 0 then \"none\" elif .port < 6000 then \"low\" else \"high\" end")).await,
        "\"high\"\n\"low\"\n\"none\""
    );
    assert_eq!(
        ok(&t, "json_query", q(".missing // \"default\"")).await,
        "\"default\""
    );
    assert_eq!(
        ok(
            &t,
            "json_query",
            json!({"text": "{\"a\":[1,[2,[3]]]}", "filter": ".a | flatten"})
        )
        .await,
        "[\n  1,\n  2,\n  3\n]"
    );
    let bad = refused(&t, "json_query", q(".services | .name")).await;
    assert!(bad.contains("cannot index array with \"name\""), "{bad}");
    let bad = refused(&t, "json_query", q(".services[] | frobnicate")).await;
    assert!(bad.contains("unknown function `frobnicate`"), "{bad}");
    let bad = refused(&t, "json_query", q(".services[")).await;
    assert!(bad.contains("at "), "{bad}");
    let deep = "(".repeat(500) + "." + &")".repeat(500);
    let bad = refused(&t, "json_query", json!({"text": "{}", "filter": deep})).await;
    assert!(bad.contains("nested more than"), "{bad}");
    // A filter that multiplies output without end is stopped by the step budget.
    let bad = refused(&t, "json_query", json!({"text": "[1,2,3,4,5,6,7,8,9,10]", "filter": "[.[] , .[] , .[]] | [.[], .[], .[]] | [.[], .[], .[]] | [.[], .[], .[]] | [.[], .[], .[]] | [.[], .[], .[]] | [.[], .[], .[]] | [.[], .[], .[]] | [.[], .[], .[]] | [.[], .[], .[]] | [.[], .[], .[]] | length"})).await;
    assert!(bad.contains("steps"), "{bad}");
}

// the catalog's rules, for the utility tools (the e2e catalog test checks them through the binary)

const UTIL_TOOLS: [&str; 15] = [
    "archive_create",
    "archive_list",
    "archive_extract",
    "checksum",
    "time_now",
    "time_convert",
    "time_diff",
    "cron_explain",
    "encode_decode",
    "uuid_generate",
    "format_convert",
    "schema_validate",
    "json_query",
    "calculate",
    "unit_convert",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_utility_tool_is_listed_with_a_valid_described_schema_and_refuses_unknown_fields() {
    let (_dir, t) = ws();
    let infos: Vec<_> = cairn_system::SYSTEM_TOOLS
        .iter()
        .map(|e| e.info())
        .collect();
    for name in UTIL_TOOLS {
        let info = infos
            .iter()
            .find(|i| i.tool.name == name)
            .unwrap_or_else(|| panic!("{name} is not in SYSTEM_TOOLS"));
        assert_eq!(info.category, "system", "{name}");
        let writes = matches!(name, "archive_create" | "archive_extract");
        assert_eq!(info.agent_only, writes, "{name}");
        let schema = Value::Object((*info.tool.input_schema).clone());
        if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
            panic!("{name}: invalid schema: {e}");
        }
        assert_eq!(schema["additionalProperties"], false, "{name}");
        for (field, p) in schema["properties"].as_object().unwrap() {
            assert!(
                p["description"].as_str().is_some_and(|d| !d.is_empty()),
                "{name}.{field} has no description"
            );
        }
        for (args, field) in bad_arguments(&schema) {
            let out = refused(&t, name, Value::Object(args.clone())).await;
            assert!(
                out.starts_with("invalid argument") && out.contains(&field),
                "{name} {args:?}: {out}"
            );
        }
    }
}

/// The e2e catalog test's wrong arguments, one way each: an unknown field, a required field
/// missing, a field of the wrong type; with the field the refusal must name.
fn bad_arguments(schema: &Value) -> Vec<(serde_json::Map<String, Value>, String)> {
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
    let base: serde_json::Map<String, Value> = required
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
