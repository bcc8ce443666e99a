//! Checks of the code's shape, run with the other repository checks:
//!
//! - no import cycles between files: within each crate under `server/`, the files' `use` lines
//!   (`crate::`, `super::`, `self::` and child-module paths, `pub use` included) form no cycle, so
//!   each file can be read after the files it names and a change flows one way;
//! - no function in `cairn-agent` (the turn loop every front shares) is longer than 80 lines;
//! - no library crate fails with a bare `String` (`Result<_, String>`): errors are typed. The
//!   crates not yet moved over are listed, and the list may only shrink. A crate's own programs
//!   (`src/bin/`) are edges, like the binary, and are not checked.
//!
//! A `use` path counts as an edge to the file of its longest module prefix: `use crate::Foo`
//! names `lib.rs` even when `Foo` is only re-exported there, so files import an item from the
//! module that defines it. A file's in-file `#[cfg(test)] mod tests` is not part of it here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{display, files, read, repo_root};

/// A module's path from its crate root (`[]` is `lib.rs` or `main.rs`).
type ModPath = Vec<String>;

/// The modules of the crate whose sources are under `src`, each with its file. `src/bin/` holds
/// other crate roots and is left out.
fn modules_of(src: &Path) -> BTreeMap<ModPath, PathBuf> {
    let mut out = BTreeMap::new();
    for file in files(src, &[".rs"]) {
        let Ok(rel) = file.strip_prefix(src) else {
            continue;
        };
        let mut parts: Vec<String> = rel
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        if parts.first().is_some_and(|p| p == "bin") {
            continue;
        }
        let Some(last) = parts.pop() else {
            continue;
        };
        let stem = last.trim_end_matches(".rs").to_owned();
        let is_root = parts.is_empty() && (stem == "lib" || stem == "main");
        if !is_root && stem != "mod" {
            parts.push(stem);
        }
        out.insert(parts, file);
    }
    out
}

/// The source with its in-file test module cut off and line comments removed.
fn code_of(source: &str) -> String {
    let source = &source[..test_module_start(source).unwrap_or(source.len())];
    source
        .lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Where the in-file test module begins: a `#[cfg(test)]` line followed, past any other
/// attributes (`#[allow(..)]`), by `mod tests`.
fn test_module_start(source: &str) -> Option<usize> {
    let mut offset = 0;
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim_end() == "#[cfg(test)]" {
            let next = lines[i + 1..]
                .iter()
                .map(|l| l.trim())
                .find(|l| !l.starts_with("#["));
            if next.is_some_and(|l| l.starts_with("mod tests")) {
                return Some(offset);
            }
        }
        offset += line.len();
    }
    None
}

/// The paths of every `use` declaration in `code`, with whitespace removed (`crate::a::{b,c}`).
fn use_trees(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = &rest[..at];
        let starts_item = before
            .rsplit('\n')
            .next()
            .map(str::trim)
            .is_some_and(|lead| lead.is_empty() || lead == "pub" || lead.starts_with("pub("));
        let after = &rest[at + 4..];
        match after.find(';') {
            Some(end) if starts_item => {
                out.push(after[..end].split_whitespace().collect());
                rest = &after[end..];
            }
            _ => rest = after,
        }
    }
    out
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let Some(open) = tree.find('{') else {
        return vec![tree.to_owned()];
    };
    let (head, body) = (&tree[..open], &tree[open + 1..]);
    let mut depth = 0usize;
    let mut end = body.len();
    for (i, ch) in body.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' if depth == 0 => {
                end = i;
                break;
            }
            '}' => depth -= 1,
            _ => {}
        }
    }
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    let inner = &body[..end];
    for (i, ch) in inner.char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(|p| expand(&format!("{head}{p}")))
        .collect()
}

/// The module a `use` path in module `from` names, by its longest prefix that is a file of the
/// crate; `None` for other crates and for `from` itself.
fn target(path: &str, from: &ModPath, modules: &BTreeMap<ModPath, PathBuf>) -> Option<ModPath> {
    let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base = from.clone();
    match segments.first().copied() {
        Some("crate") => {
            base.clear();
            segments.remove(0);
        }
        Some("super") => {
            while segments.first() == Some(&"super") {
                base.pop();
                segments.remove(0);
            }
        }
        Some("self") => {
            segments.remove(0);
        }
        Some(first) => {
            let mut child = base.clone();
            child.push(first.to_owned());
            if !modules.contains_key(&child) {
                return None;
            }
        }
        None => return None,
    }
    (0..=segments.len()).rev().find_map(|n| {
        let mut candidate = base.clone();
        candidate.extend(segments[..n].iter().map(|s| (*s).to_owned()));
        (modules.contains_key(&candidate) && candidate != *from).then_some(candidate)
    })
}

/// The groups of modules (two or more) that reach each other through `edges` (Tarjan's strongly
/// connected components, iteratively).
fn cycles(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    struct State<'a> {
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        found: Vec<Vec<ModPath>>,
    }
    fn visit<'a>(
        v: &'a ModPath,
        edges: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        s: &mut State<'a>,
    ) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(w, edges, s);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut group = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                group.push(w.clone());
                if w == v {
                    break;
                }
            }
            if group.len() > 1 {
                group.sort();
                s.found.push(group);
            }
        }
    }
    let mut state = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !state.index.contains_key(v) {
            visit(v, edges, &mut state);
        }
    }
    state.found
}

/// Each file's `use` edges to other files of the same crate.
fn import_edges(modules: &BTreeMap<ModPath, PathBuf>) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    modules
        .iter()
        .map(|(module, file)| {
            let code = code_of(&read(file));
            let targets = use_trees(&code)
                .iter()
                .flat_map(|tree| expand(tree))
                .filter_map(|path| target(&path, module, modules))
                .collect();
            (module.clone(), targets)
        })
        .collect()
}

#[test]
fn no_import_cycles_between_files() {
    let server = repo_root().join("server");
    let mut report = Vec::new();
    let mut crates: Vec<_> = match std::fs::read_dir(&server) {
        Ok(entries) => entries.flatten().map(|e| e.path().join("src")).collect(),
        Err(e) => panic!("cannot list {}: {e}", server.display()),
    };
    crates.sort();
    for src in crates.iter().filter(|src| src.is_dir()) {
        let modules = modules_of(src);
        for group in cycles(&import_edges(&modules)) {
            let names: Vec<String> = group.iter().map(|m| display(&modules[m])).collect();
            report.push(names.join(" <-> "));
        }
    }
    assert!(
        report.is_empty(),
        "these files import each other (through `use` lines, directly or in a ring); move what \
         they share into a file both import, or import an item from the module defining it:\n{}",
        report.join("\n")
    );
}

#[test]
fn the_import_check_resolves_paths_and_finds_rings() {
    let modules: BTreeMap<ModPath, PathBuf> = [vec![], vec!["a"], vec!["a", "b"], vec!["c"]]
        .into_iter()
        .map(|m| {
            let path: ModPath = m.iter().map(|s| (*s).to_owned()).collect();
            let file = PathBuf::from(format!("{}.rs", path.join("/")));
            (path, file)
        })
        .collect();
    let m = |s: &[&str]| s.iter().map(|p| (*p).to_owned()).collect::<ModPath>();
    assert_eq!(
        expand("crate::{a::{b::X,Y},c}"),
        ["crate::a::b::X", "crate::a::Y", "crate::c"]
    );
    assert_eq!(
        target("crate::a::b::X", &m(&["c"]), &modules),
        Some(m(&["a", "b"]))
    );
    assert_eq!(
        target("super::X", &m(&["a", "b"]), &modules),
        Some(m(&["a"]))
    );
    assert_eq!(target("crate::Foo", &m(&["c"]), &modules), Some(m(&[])));
    assert_eq!(target("b::X", &m(&["a"]), &modules), Some(m(&["a", "b"])));
    assert_eq!(target("serde::Deserialize", &m(&["a"]), &modules), None);
    assert_eq!(target("self::Y", &m(&["c"]), &modules), None);
    let code = code_of("pub use a::b::{X, Y};\nfn f() {\n    use crate::c; // crate::a\n}\n");
    assert_eq!(use_trees(&code), ["a::b::{X,Y}", "crate::c"]);
    let tested = "use crate::a;\n#[cfg(test)]\n#[allow(clippy::unwrap_used)]\nmod tests {\n    use super::*;\n}\n";
    assert_eq!(use_trees(&code_of(tested)), ["crate::a"]);
    let mut edges: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    edges.entry(m(&[])).or_default().insert(m(&["a", "b"]));
    edges.entry(m(&["a", "b"])).or_default().insert(m(&["c"]));
    edges.entry(m(&["c"])).or_default().insert(m(&[]));
    edges.entry(m(&["a"])).or_default().insert(m(&["c"]));
    assert_eq!(cycles(&edges), [vec![m(&[]), m(&["a", "b"]), m(&["c"])]]);
    edges.entry(m(&["c"])).or_default().clear();
    assert!(cycles(&edges).is_empty());
}

/// The longest function a turn-loop file may hold.
const MAX_FUNCTION_LINES: usize = 80;

/// Every function in `source` (as rustfmt lays it out) longer than `max` lines, as
/// `name (N lines, from line L)`; a function runs from its `fn` line to the brace closing it at
/// the same indentation.
fn long_functions(source: &str, max: usize) -> Vec<String> {
    let lines: Vec<&str> = source.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let is_fn = [
            "fn ",
            "pub fn ",
            "async fn ",
            "pub async fn ",
            "const fn ",
            "pub const fn ",
        ]
        .iter()
        .any(|p| trimmed.starts_with(p))
            || (trimmed.starts_with("pub(") && trimmed.contains(") fn "))
            || (trimmed.starts_with("pub(") && trimmed.contains(") async fn "));
        if !is_fn {
            continue;
        }
        let indent = &line[..line.len() - trimmed.len()];
        let name = trimmed
            .split("fn ")
            .nth(1)
            .and_then(|r| r.split(['(', '<']).next())
            .unwrap_or("?");
        // A declaration without a body (a trait's) ends at its `;` before any `{`.
        let Some(open) = lines[i..].iter().position(|l| {
            let l = l.trim_end();
            l.ends_with('{') || l.ends_with(';') || l.ends_with('}')
        }) else {
            continue;
        };
        let open_line = lines[i + open].trim_end();
        if open_line.ends_with(';') || open_line.ends_with('}') {
            continue;
        }
        let close = format!("{indent}}}");
        let Some(end) = lines[i + open + 1..]
            .iter()
            .position(|l| l.trim_end() == close)
        else {
            continue;
        };
        let length = open + end + 2;
        if length > max {
            out.push(format!("{name} ({length} lines, from line {})", i + 1));
        }
    }
    out
}

#[test]
fn no_function_in_the_agent_is_over_80_lines() {
    let src = repo_root().join("server/cairn-agent/src");
    let mut report = Vec::new();
    for file in files(&src, &[".rs"]) {
        for found in long_functions(&read(&file), MAX_FUNCTION_LINES) {
            report.push(format!("{}: {found}", display(&file)));
        }
    }
    assert!(
        report.is_empty(),
        "cairn-agent keeps each function to {MAX_FUNCTION_LINES} lines, so the turn loop reads as \
         a few named steps; split these:\n{}",
        report.join("\n")
    );
}

#[test]
fn the_length_check_measures_bodies_not_declarations() {
    let mut source = String::from("trait T {\n    fn declared(&self);\n}\n");
    source.push_str("fn short() {}\n");
    source.push_str("pub(crate) async fn long(\n    a: u8,\n) -> u8\nwhere\n    u8: Copy,\n{\n");
    for _ in 0..4 {
        source.push_str("    let _ = a;\n");
    }
    source.push_str("    a\n}\n");
    assert_eq!(
        long_functions(&source, 11),
        ["long (12 lines, from line 5)"]
    );
    assert!(long_functions(&source, 12).is_empty());
}

/// The `Result<..>` types in `code` whose error is a bare `String`, each with its line number.
fn string_errors(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("Result<") {
            let after = &rest[at + "Result<".len()..];
            let (mut depth, mut end, mut last_comma) = (0usize, None, None);
            for (i, c) in after.char_indices() {
                match c {
                    '<' | '(' | '[' => depth += 1,
                    '>' | ')' | ']' if depth == 0 => {
                        end = Some(i);
                        break;
                    }
                    '>' | ')' | ']' => depth -= 1,
                    ',' if depth == 0 => last_comma = Some(i),
                    _ => {}
                }
            }
            let Some(end) = end else { break };
            if let Some(comma) = last_comma
                && after[comma + 1..end].trim() == "String"
            {
                found.push((number + 1, format!("Result<{}>", &after[..end])));
            }
            rest = &after[end..];
        }
    }
    found
}

/// The library crates that still fail with a bare `String` somewhere (issue 38, item 2). A crate
/// leaves this list when its last one goes, and none joins it.
const STRING_ERRORS_LEFT: &[&str] = &[
    "cairn-acp",
    "cairn-agent",
    "cairn-cloud",
    "cairn-data",
    "cairn-db",
    "cairn-devops",
    "cairn-lsp",
    "cairn-mcp",
    "cairn-ml",
    "cairn-sandbox",
    "cairn-system",
    "cairn-webtools",
    "cairn-workspace",
];

/// Library crates fail with typed errors (`thiserror` enums; the tools with
/// `cairn_toolkit::ToolError`), never a bare `String`: a caller can tell an argument to fix from
/// a refusal or a peer that failed. The binary (`server/cairn`) is the edge, where `anyhow`
/// reports are fine, and is not checked.
#[test]
fn no_library_crate_fails_with_a_bare_string() {
    let server = repo_root().join("server");
    let mut crates: Vec<_> = match std::fs::read_dir(&server) {
        Ok(entries) => entries.flatten().map(|e| e.path()).collect(),
        Err(e) => panic!("cannot list {}: {e}", server.display()),
    };
    crates.sort();
    let (mut report, mut clean_but_listed) = (Vec::new(), Vec::new());
    for krate in &crates {
        let Some(name) = krate.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if name == "cairn" || !krate.join("Cargo.toml").is_file() {
            continue;
        }
        let mut found = Vec::new();
        let programs = krate.join("src").join("bin");
        for file in files(&krate.join("src"), &[".rs"]) {
            if file.starts_with(&programs) {
                continue;
            }
            for (line, ty) in string_errors(&code_of(&read(&file))) {
                found.push(format!("{}:{line}: {ty}", display(&file)));
            }
        }
        match (STRING_ERRORS_LEFT.contains(&name), found.is_empty()) {
            (true, true) => clean_but_listed.push(name.to_owned()),
            (false, false) => report.extend(found),
            _ => {}
        }
    }
    assert!(
        report.is_empty(),
        "these fail with a bare String; use the crate's error enum (a tool: \
         cairn_toolkit::ToolError):\n{}",
        report.join("\n")
    );
    assert!(
        clean_but_listed.is_empty(),
        "no bare String errors are left in {}: take them off STRING_ERRORS_LEFT",
        clean_but_listed.join(", ")
    );
}

#[test]
fn the_string_error_check_reads_nested_generics() {
    let code = "fn a() -> Result<Vec<(u8, String)>, String> {}\n\
                fn b() -> Result<String, ToolError> {}\n\
                fn c() -> std::io::Result<String> {}\n\
                type V = dyn FnMut(&E) -> Result<(), String>;\n";
    assert_eq!(
        string_errors(code),
        [
            (1, "Result<Vec<(u8, String)>, String>".to_owned()),
            (4, "Result<(), String>".to_owned())
        ]
    );
}
