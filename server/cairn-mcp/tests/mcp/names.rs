//! Public-name rules: sanitising, the 64-character cap, uniqueness, reserved (built-in) names,
//! and the SEP check on names servers send (SECURITY.md F8).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;

use cairn_mcp::names::{
    Claimant, NameIndex, could_name, is_valid_server_tool_name, public_name, sanitize,
};

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

fn index(reserved: &[&str], configured: &[&str], tools: &[(&str, &str)]) -> NameIndex {
    let reserved: HashSet<String> = reserved.iter().map(|s| s.to_string()).collect();
    NameIndex::build(&reserved, configured.iter().copied(), tools.iter().copied())
}

#[test]
fn public_name_table() {
    fn check(server: &str, tool: &str, expected: &str) {
        let got = public_name(server, tool);
        assert_eq!(got, expected, "public_name({server:?}, {tool:?})");
        assert!(
            got.len() <= 64
                && got
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        );
    }
    check("git", "status", "git__status");
    check("git", "log.all", "git__log_all");
    check("my server", "x", "my_server__x");
    let exactly_64 = format!("s__{}", "t".repeat(61));
    check("s", &"t".repeat(61), &exactly_64);
    // Longer: 55 characters, `_`, and 8 hex digits of SHA-256("s\0" + tool), computed with
    // `printf 's\0%s' $(printf 't%.0s' $(seq 62)) | sha256sum` and
    // `printf 's\0%s' $(printf 't%.0s' $(seq 100)) | sha256sum`.
    check(
        "s",
        &"t".repeat(62),
        &format!("s__{}_{}", "t".repeat(52), HASH_62),
    );
    check(
        "s",
        &"t".repeat(100),
        &format!("s__{}_{}", "t".repeat(52), HASH_100),
    );
}

const HASH_62: &str = "51921f8b";
const HASH_100: &str = "10e5bf18";

#[test]
fn names_depend_on_the_pair_alone() {
    // The attack: `a` (tool `b__c`) and `a__b` (tool `c`). Whoever runs, the name is
    // refused, never handed to one of them.
    for running in [
        &[("a", "b__c"), ("a__b", "c")][..],
        &[("a__b", "c")][..],
        &[("a", "b__c")][..],
    ] {
        let idx = index(&[], &["a", "a__b"], running);
        assert!(idx.names.is_empty(), "{running:?}: {:?}", idx.names);
        let collision = &idx.collisions["a__b__c"];
        let text = collision.to_string();
        assert!(
            text.contains("`a__b__c`") && text.contains("rename one of the MCP servers"),
            "{text}"
        );
        for server in ["`a`", "`a__b`"] {
            assert!(text.contains(server), "{text}");
        }
    }
    // Both running: both tools named.
    let idx = index(&[], &["a", "a__b"], &[("a", "b__c"), ("a__b", "c")]);
    assert_eq!(
        idx.collisions["a__b__c"].claimants,
        [
            Claimant::Tool {
                server: "a".into(),
                tool: "b__c".into()
            },
            Claimant::Tool {
                server: "a__b".into(),
                tool: "c".into()
            },
        ]
    );
    // A tool of `a` that no other server can produce keeps its name.
    let idx = index(&[], &["a", "a__b"], &[("a", "x"), ("a__b", "c")]);
    assert_eq!(
        idx.names.get("a__x"),
        Some(&("a".to_owned(), "x".to_owned()))
    );
}

#[test]
fn collisions_make_both_names_unusable() {
    // Two raw names that sanitise alike: neither gets it, and no `_2` suffix.
    let idx = index(&[], &["a"], &[("a", "x.y"), ("a", "x_y")]);
    assert!(idx.names.is_empty(), "{:?}", idx.names);
    assert!(
        idx.collisions["a__x_y"]
            .to_string()
            .contains("rename MCP server `a`")
    );
    // Servers whose names sanitise alike.
    let idx = index(&[], &["my.server", "my server"], &[("my.server", "t")]);
    assert!(idx.collisions.contains_key("my_server__t"));
    // A server cannot take a built-in's name, even by naming itself so; the built-in keeps it.
    let idx = index(
        &["builtin__write_file"],
        &["builtin"],
        &[("builtin", "write_file")],
    );
    assert!(idx.names.is_empty());
    let c = &idx.collisions["builtin__write_file"];
    assert!(c.claimants.contains(&Claimant::Builtin), "{c:?}");
    // Long names that share 55 characters are told apart by the hash, not by order.
    let (t1, t2) = ("t".repeat(100), format!("{}u", "t".repeat(99)));
    let idx = index(&[], &["s"], &[("s", &t1), ("s", &t2)]);
    assert_eq!(idx.names.len(), 2, "{:?}", idx.collisions);
    let reversed = index(&[], &["s"], &[("s", &t2), ("s", &t1)]);
    assert_eq!(idx.names, reversed.names);
    // A long server name that another one extends: the cut names could meet.
    let long = "s".repeat(62);
    let longer = format!("{long}_x");
    let idx = index(&[], &[&long, &longer], &[(&long, "tool")]);
    assert!(idx.names.is_empty(), "{:?}", idx.names);
}

#[test]
fn could_name_table() {
    fn check(server: &str, name: &str, expected: bool) {
        assert_eq!(
            could_name(server, name),
            expected,
            "could_name({server:?}, {name:?})"
        );
    }
    check("a", "a__b__c", true);
    check("a__b", "a__b__c", true);
    check("a_b", "a__b__c", false);
    check("a", "a__", false);
    check("b", "a__b__c", false);
    check("a.b", "a_b__c", true);
    // A cut name: 55 characters, `_`, 8 hex digits.
    let cut = format!("s__{}_0123abcd", "t".repeat(52));
    check("s", &cut, true);
    check(
        &"s".repeat(70),
        &format!("{}_0123abcd", "s".repeat(55)),
        true,
    );
    check("q", &cut, false);
}

#[test]
fn fuzz_usable_names_are_a_function_of_the_pair_whatever_runs() {
    use proptest::prelude::*;
    let part = "[ab_.]{1,4}|[ab]{60,70}";
    let pairs = proptest::collection::vec((part, part), 1..6);
    cairn_test_support::fuzz::check("public names", (pairs, any::<u8>()), |(pairs, mask)| {
        let configured: Vec<&str> = pairs.iter().map(|(s, _)| s.as_str()).collect();
        let mut all: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(s, t)| (s.as_str(), t.as_str()))
            .collect();
        all.sort_unstable();
        all.dedup();
        let full = index(&[], &configured, &all);
        // Any subset of the servers running (a server lists all its tools or none).
        let running: Vec<(&str, &str)> = all
            .iter()
            .copied()
            .filter(|(s, _)| mask & (1 << (s.len() % 8)) != 0)
            .collect();
        let some = index(&[], &configured, &running);
        for (name, owner) in &some.names {
            prop_assert_eq!(&public_name(&owner.0, &owner.1), name);
            // What runs never changes who carries a name: the same owner with every server up.
            prop_assert_eq!(full.names.get(name), Some(owner));
        }
        // No two configured (server, tool) pairs share a usable name.
        for name in full.names.keys() {
            let sharing = all
                .iter()
                .filter(|(s, t)| public_name(s, t) == *name)
                .count();
            prop_assert_eq!(sharing, 1, "{}", name);
        }
        Ok(())
    });
}
