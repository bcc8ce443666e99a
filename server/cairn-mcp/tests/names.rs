//! Public-name rules: sanitising, the 64-character cap, uniqueness, reserved (built-in) names,
//! and the SEP check on names servers send (SECURITY.md F8).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use cairn_mcp::names::{NameTable, is_valid_server_tool_name, sanitize};

#[test]
fn sanitize_table() {
    fn check(input: &str, expected: &str) {
        assert_eq!(sanitize(input), expected, "sanitize({input:?})");
    }
    check("read_file", "read_file");
    check("git.status", "git_status");
    check("a b/c", "a_b_c");
    check("reаd", "re_d"); // Cyrillic a
    check("", "_");
    check("x-y_Z9", "x-y_Z9");
}

#[test]
fn sep_names() {
    fn check(input: &str, expected: bool) {
        assert_eq!(is_valid_server_tool_name(input), expected, "{input:?}");
    }
    check("read_file", true);
    check("git.status-v2", true);
    check("", false);
    check("has space", false);
    check("reаd_file", false);
    check(&"a".repeat(128), true);
    check(&"a".repeat(129), false);
}

#[test]
fn allocation_table() {
    // (reserved, [(server, tool)], expected public names in order)
    fn check(reserved: &[&str], tools: &[(&str, &str)], expected: &[&str]) {
        let mut table = NameTable::new(reserved.iter().copied());
        let got: Vec<String> = tools.iter().map(|(s, t)| table.allocate(s, t)).collect();
        assert_eq!(got, expected, "reserved {reserved:?}, tools {tools:?}");
        for name in &got {
            assert!(name.len() <= 64, "{name} is too long");
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            );
        }
    }
    check(&[], &[("git", "status")], &["git__status"]);
    check(&[], &[("git", "log.all")], &["git__log_all"]);
    // Two raw names that sanitise alike stay distinct.
    check(&[], &[("a", "x.y"), ("a", "x_y")], &["a__x_y", "a__x_y_2"]);
    // A server cannot take a built-in's name, even by naming itself so.
    check(
        &["builtin__write_file"],
        &[("builtin", "write_file")],
        &["builtin__write_file_2"],
    );
    // Long names are cut to 64, and suffixes still fit.
    let long = "t".repeat(100);
    let cut = format!("s__{}", "t".repeat(61));
    let cut2 = format!("s__{}_2", "t".repeat(59));
    check(
        &[],
        &[("s", &long), ("s", &long)],
        &[cut.as_str(), cut2.as_str()],
    );
}

#[test]
fn exact_names_for_builtins() {
    let mut table = NameTable::new(["read_file"]);
    assert!(!table.take_exact("read_file"));
    assert!(table.take_exact("grep"));
    assert!(table.contains("grep"));
    assert_eq!(table.allocate("x", "grep"), "x__grep");
}
