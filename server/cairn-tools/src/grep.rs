//! `grep`: regex search over workspace files, gitignore-aware, binary files skipped.
//!
//! Files come from [`Workspace::walk_sorted`] (ignore rules, no symlinks followed, hidden files
//! and `.git` skipped, one thread per core) and are read and searched in parallel through
//! [`Workspace::search_in_order`], which reads with [`Workspace::read_for_search`]: unsaved
//! editor text is searched, and unreadable, binary, oversized or non-UTF-8 files are skipped.
//! Outcomes come back in path order, so the output and where the caps cut it are stable.
//!
//! A file is searched as one string, not line by line: the pattern, compiled a second time
//! with `^` and `$` matching at line ends, jumps to the lines that may match, and only those
//! are checked against the pattern proper and cut out for output.
//!
//! [`Workspace::walk_sorted`]: cairn_workspace::Workspace::walk_sorted
//! [`Workspace::search_in_order`]: cairn_workspace::Workspace::search_in_order
//! [`Workspace::read_for_search`]: cairn_workspace::Workspace::read_for_search

use std::fmt::Write as _;
use std::ops::{ControlFlow, Range};

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use regex::{Regex, RegexBuilder};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::{MAX_OUTPUT_BYTES, blocking, cut_line};
use crate::walk::walk_options;

const DEFAULT_MAX_RESULTS: usize = 100;
const MAX_MAX_RESULTS: usize = 1000;
const MAX_CONTEXT: usize = 10;
const MAX_LINE_CHARS: usize = 500;

/// The `grep` tool.
pub struct Grep;

/// Arguments of `grep`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Regular expression (Rust regex syntax), matched against each line.
    pattern: String,
    /// File or directory to search, relative to the workspace root. Default: the root.
    path: Option<String>,
    /// Only search files matching this glob, in .gitignore syntax relative to `path` (`*.rs` matches at any depth).
    glob: Option<String>,
    /// Ignore case. Default false.
    case_insensitive: Option<bool>,
    /// Lines of context to show before and after each match. Default 0.
    #[schemars(range(min = 0, max = 10))]
    context: Option<usize>,
    /// Stop after this many matching lines. Default 100.
    #[schemars(range(min = 1, max = 1000))]
    max_results: Option<usize>,
    /// Also include hidden files and directories (names starting with `.`; `.git` never). Default false.
    include_hidden: Option<bool>,
    /// Also include files that .gitignore or .ignore rules leave out. Default false.
    include_ignored: Option<bool>,
}

impl Tool for Grep {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "grep";
    const TITLE: &'static str = "Search files";
    const DESCRIPTION: &'static str = "Search file contents with a regex, reporting `path:line:text` (files ignored by .gitignore and binary files are skipped); use it to find where something is defined or used.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// The walk skips what the user may not read.
    fn paths(_: &Args) -> Paths {
        Paths::walks()
    }

    async fn call(files: &Files, args: Args, cx: CallContext) -> CallToolResult {
        let context = args.context.unwrap_or(0);
        if context > MAX_CONTEXT {
            return error(format!(
                "invalid argument `context` for grep: at most {MAX_CONTEXT} lines"
            ));
        }
        let max_results = args.max_results.unwrap_or(DEFAULT_MAX_RESULTS);
        if !(1..=MAX_MAX_RESULTS).contains(&max_results) {
            return error(format!(
                "invalid argument `max_results` for grep: it must be between 1 and {MAX_MAX_RESULTS}"
            ));
        }
        let matcher = match Matcher::new(&args.pattern, args.case_insensitive.unwrap_or(false)) {
            Ok(matcher) => matcher,
            Err(e) => return error(format!("invalid argument `pattern` for grep: {e}")),
        };
        blocking(files.workspace(), move |ws| {
            let requested = args.path.as_deref().unwrap_or(".");
            let options =
                walk_options(args.glob.clone(), args.include_hidden, args.include_ignored);
            let cancel = &cx.cancel;
            let walked = match ws
                .resolve(requested)
                .and_then(|p| ws.walk_sorted(&p, &options, &|| cancel.is_cancelled()))
            {
                Ok(walked) => walked,
                Err(e) => return error(e.to_string()),
            };
            let mut search = Search::new(&matcher, context, max_results);
            let mut skipped = walked.errors;
            let mut cancelled = cancel.is_cancelled();
            if !cancelled {
                ws.search_in_order(
                    &walked.files,
                    |_, text| match text {
                        // Files without a match need nothing more; a matching one is searched
                        // again for its lines and their context when its turn comes.
                        Ok(text) if matcher.is_match(text) => Found::Match(text.to_owned()),
                        Ok(_) => Found::Nothing,
                        Err(_) => Found::Skipped,
                    },
                    |file, found| {
                        if cancel.is_cancelled() {
                            cancelled = true;
                            return ControlFlow::Break(());
                        }
                        match found {
                            Found::Match(text) => search.file(&file.display_path(), &text),
                            Found::Skipped => skipped += 1,
                            Found::Nothing => {}
                        }
                        if search.full() {
                            ControlFlow::Break(())
                        } else {
                            ControlFlow::Continue(())
                        }
                    },
                );
            }
            text(search.finish(&args.pattern, requested, skipped, cancelled))
        })
        .await
    }
}

/// What searching one file found, before its lines are looked at.
enum Found {
    /// At least one line matches: the text, kept for output in its turn.
    Match(String),
    Nothing,
    /// Unreadable, binary, too large or not UTF-8.
    Skipped,
}

/// A pattern matched against lines, and the way to find those lines in a whole file quickly.
struct Matcher {
    /// What a match is: the pattern matching one line, without its line ending.
    line: Regex,
    /// The same pattern over a whole file, `^` and `$` matching at line ends. Every line that
    /// `line` matches holds the start of a match of this one, so a search can jump from match
    /// to match instead of trying each line; as it may also match across lines, each line it
    /// lands on is checked with `line`. `None` when the pattern anchors to the start or end of
    /// the text (`\A`, `\z`) or turns flags off (`(?-m)`), where the two would disagree: such
    /// a pattern is tried line by line.
    whole: Option<Regex>,
}

impl Matcher {
    fn new(pattern: &str, case_insensitive: bool) -> Result<Matcher, regex::Error> {
        let line = RegexBuilder::new(pattern)
            .case_insensitive(case_insensitive)
            .build()?;
        let whole = if anchors_like_lines(pattern) {
            RegexBuilder::new(pattern)
                .case_insensitive(case_insensitive)
                .multi_line(true)
                .crlf(true)
                .build()
                .ok()
        } else {
            None
        };
        Ok(Matcher { line, whole })
    }

    /// True when some line of `text` matches.
    fn is_match(&self, text: &str) -> bool {
        self.next_line(text, 0, &mut 0).is_some()
    }

    /// The first line at or after byte `from` (the start of a line) that matches, as the byte
    /// range of its text without the line ending. Lines starting before `plain_until` are tried
    /// one by one: they lie under a match of `whole` that ran across lines, and searching it
    /// again from each of them could cost as much as the whole rest of the text each time. The
    /// caller keeps `plain_until` from one call to the next.
    fn next_line(
        &self,
        text: &str,
        mut from: usize,
        plain_until: &mut usize,
    ) -> Option<Range<usize>> {
        while from < text.len() {
            let start = match &self.whole {
                Some(whole) if from >= *plain_until => {
                    let found = whole.find_at(text, from)?;
                    *plain_until = found.end();
                    // `from` starts a line, so the line holding the match starts there or later.
                    text.get(..found.start())
                        .and_then(|before| before.rfind('\n'))
                        .map_or(from, |nl| nl + 1)
                        .max(from)
                }
                _ => from,
            };
            let line = line_at(text, start)?;
            if text
                .get(line.text.clone())
                .is_some_and(|l| self.line.is_match(l))
            {
                return Some(line.text);
            }
            from = line.next;
        }
        None
    }
}

/// True when `pattern` means the same matched against a line as against a whole text in
/// multi-line mode: it has no `\A` or `\z`, and no flag group turns a flag off. Judged on the
/// pattern's text, erring towards false (an escaped backslash before `A` counts too).
fn anchors_like_lines(pattern: &str) -> bool {
    if pattern.contains(r"\A") || pattern.contains(r"\z") {
        return false;
    }
    let mut rest = pattern;
    while let Some(at) = rest.find("(?") {
        rest = rest.get(at + 2..).unwrap_or("");
        let flags = rest.split([')', ':']).next().unwrap_or("");
        if flags.contains('-') {
            return false;
        }
    }
    true
}

/// One line of a text: its content without the line ending, and where the next line starts.
struct Line {
    text: Range<usize>,
    next: usize,
}

/// The line starting at byte `start`, split as [`str::lines`] does (`\n` or `\r\n` end a line,
/// a final line needs no ending); `None` at the end of the text.
fn line_at(text: &str, start: usize) -> Option<Line> {
    let rest = text.get(start..).filter(|r| !r.is_empty())?;
    Some(match rest.find('\n') {
        Some(nl) => {
            let end = if rest.get(..nl).is_some_and(|l| l.ends_with('\r')) {
                start + nl - 1
            } else {
                start + nl
            };
            Line {
                text: start..end,
                next: start + nl + 1,
            }
        }
        None => Line {
            text: start..text.len(),
            next: text.len(),
        },
    })
}

/// The text of the line before the one starting at byte `start` (which is not the first), and
/// where that line starts.
fn line_before(text: &str, start: usize) -> (usize, &str) {
    let before = text.get(..start.saturating_sub(1)).unwrap_or("");
    let from = before.rfind('\n').map_or(0, |nl| nl + 1);
    let line = before.get(from..).unwrap_or("");
    (from, line.strip_suffix('\r').unwrap_or(line))
}

/// The state of one search: output so far and the caps.
struct Search<'a> {
    matcher: &'a Matcher,
    context: usize,
    max_results: usize,
    matches: usize,
    files_matched: usize,
    out: String,
    hit_match_cap: bool,
    hit_byte_cap: bool,
}

impl<'a> Search<'a> {
    fn new(matcher: &'a Matcher, context: usize, max_results: usize) -> Search<'a> {
        Search {
            matcher,
            context,
            max_results,
            matches: 0,
            files_matched: 0,
            out: String::new(),
            hit_match_cap: false,
            hit_byte_cap: false,
        }
    }

    fn full(&self) -> bool {
        self.hit_match_cap || self.hit_byte_cap
    }

    /// Matches as `path:line:text`, context lines as `path-line-text`, groups apart by `--`.
    /// Lines are numbered from the newlines counted on the way, and only matching lines and
    /// their context are cut out of the text.
    fn file(&mut self, path: &str, text: &str) {
        // The line last emitted: its index and where the line after it starts.
        let mut last: Option<(usize, usize)> = None;
        let mut after_until = 0usize;
        let mut matched_here = false;
        // Lines are counted up to `counted`, which starts line `index`.
        let (mut counted, mut index) = (0usize, 0usize);
        let (mut from, mut plain_until) = (0usize, 0usize);
        loop {
            let found = self.matcher.next_line(text, from, &mut plain_until);
            let at = match &found {
                Some(line) => {
                    let upto = text.get(counted..line.start).unwrap_or("");
                    index += upto.bytes().filter(|&b| b == b'\n').count();
                    counted = line.start;
                    Some(index)
                }
                None => None,
            };
            // What is left of the previous match's after-context, up to this match.
            if let Some((last_index, mut next)) = last {
                let end = at.map_or(after_until, |i| i.min(after_until));
                for j in last_index + 1..end {
                    let Some(line) = line_at(text, next) else {
                        break;
                    };
                    self.emit(path, j, '-', text.get(line.text).unwrap_or(""));
                    if self.full() {
                        return self.done(matched_here);
                    }
                    next = line.next;
                    last = Some((j, next));
                }
            }
            let (Some(line), Some(i)) = (found, at) else {
                break;
            };
            if self.matches == self.max_results {
                self.hit_match_cap = true;
                return self.done(matched_here);
            }
            let first = match last {
                Some((last_index, _)) => i.saturating_sub(self.context).max(last_index + 1),
                None => i.saturating_sub(self.context),
            };
            let starts_group = last.is_none_or(|(last_index, _)| first > last_index + 1);
            if self.context > 0 && starts_group && !self.out.is_empty() {
                self.out.push_str("--\n");
            }
            let mut before = Vec::with_capacity(i - first);
            let mut start = line.start;
            for _ in first..i {
                let (prev, text) = line_before(text, start);
                before.push(text);
                start = prev;
            }
            for (j, text) in (first..i).zip(before.into_iter().rev()) {
                self.emit(path, j, '-', text);
            }
            self.emit(path, i, ':', text.get(line.clone()).unwrap_or(""));
            self.matches += 1;
            matched_here = true;
            if self.full() {
                return self.done(matched_here);
            }
            from = line_at(text, line.start).map_or(text.len(), |l| l.next);
            last = Some((i, from));
            after_until = i + self.context + 1;
        }
        self.done(matched_here);
    }

    fn done(&mut self, matched_here: bool) {
        if matched_here {
            self.files_matched += 1;
        }
    }

    fn emit(&mut self, path: &str, index: usize, sep: char, line: &str) {
        // Once a line did not fit, none after it is shown: the output has no holes.
        if self.hit_byte_cap {
            return;
        }
        let (line, _) = cut_line(line, MAX_LINE_CHARS);
        let entry = format!("{path}{sep}{}{sep}{line}\n", index + 1);
        if self.out.len() + entry.len() > MAX_OUTPUT_BYTES {
            self.hit_byte_cap = true;
            return;
        }
        self.out.push_str(&entry);
    }

    fn finish(mut self, pattern: &str, path: &str, skipped: usize, cancelled: bool) -> String {
        if self.matches == 0 {
            self.out = format!("no matches for `{pattern}` in {path}");
        }
        let mut notes = Vec::new();
        if self.hit_match_cap {
            notes.push(format!(
                "stopped at {} matches; narrow the pattern, path or glob, or raise max_results (at most {MAX_MAX_RESULTS})",
                self.max_results
            ));
        }
        if self.hit_byte_cap {
            notes.push(format!(
                "output capped at {MAX_OUTPUT_BYTES} bytes; narrow the pattern, path or glob"
            ));
        }
        if cancelled {
            notes.push("the search was cancelled; results are partial".to_owned());
        }
        if skipped > 0 {
            notes.push(format!(
                "{skipped} files skipped (binary, too large, not UTF-8 or unreadable)"
            ));
        }
        if self.matches > 0 {
            notes.push(format!(
                "{} matching lines in {} files",
                self.matches, self.files_matched
            ));
        }
        for note in notes {
            if !self.out.ends_with('\n') {
                self.out.push('\n');
            }
            let _ = write!(self.out, "[{note}]");
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    //! The search over whole files against the plain line-by-line search it replaces: same
    //! output, counts and caps on generated texts and awkward patterns.

    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// The line-by-line search: every line of [`str::lines`] tried in turn.
    struct Reference {
        regex: Regex,
        context: usize,
        max_results: usize,
        matches: usize,
        files_matched: usize,
        out: String,
        hit_match_cap: bool,
        hit_byte_cap: bool,
    }

    impl Reference {
        fn full(&self) -> bool {
            self.hit_match_cap || self.hit_byte_cap
        }

        fn file(&mut self, path: &str, text: &str) {
            let lines: Vec<&str> = text.lines().collect();
            let mut last_emitted: Option<usize> = None;
            let mut after_until = 0usize;
            let mut matched_here = false;
            for (i, line) in lines.iter().enumerate() {
                if self.full() {
                    break;
                }
                if self.regex.is_match(line) {
                    if self.matches == self.max_results {
                        self.hit_match_cap = true;
                        break;
                    }
                    let from = match last_emitted {
                        Some(last) => i.saturating_sub(self.context).max(last + 1),
                        None => i.saturating_sub(self.context),
                    };
                    let starts_group = last_emitted.is_none_or(|last| from > last + 1);
                    if self.context > 0 && starts_group && !self.out.is_empty() {
                        self.out.push_str("--\n");
                    }
                    for (j, before) in lines.iter().enumerate().take(i).skip(from) {
                        self.emit(path, j, '-', before);
                    }
                    self.emit(path, i, ':', line);
                    self.matches += 1;
                    matched_here = true;
                    last_emitted = Some(i);
                    after_until = i + self.context + 1;
                } else if i < after_until {
                    self.emit(path, i, '-', line);
                    last_emitted = Some(i);
                }
            }
            if matched_here {
                self.files_matched += 1;
            }
        }

        fn emit(&mut self, path: &str, index: usize, sep: char, line: &str) {
            if self.hit_byte_cap {
                return;
            }
            let (line, _) = cut_line(line, MAX_LINE_CHARS);
            let entry = format!("{path}{sep}{}{sep}{line}\n", index + 1);
            if self.out.len() + entry.len() > MAX_OUTPUT_BYTES {
                self.hit_byte_cap = true;
                return;
            }
            self.out.push_str(&entry);
        }
    }

    /// Both searches for `pattern` over `files`, as `call` feeds them; panics where they
    /// differ. `matcher` and `regex` are `pattern` compiled, once per pattern for speed.
    #[track_caller]
    fn check(
        (pattern, matcher, regex): (&str, &Matcher, &Regex),
        files: &[String],
        context: usize,
        max_results: usize,
    ) {
        let mut reference = Reference {
            regex: regex.clone(),
            context,
            max_results,
            matches: 0,
            files_matched: 0,
            out: String::new(),
            hit_match_cap: false,
            hit_byte_cap: false,
        };
        let mut search = Search::new(matcher, context, max_results);
        for (i, text) in files.iter().enumerate() {
            let expected = text.lines().any(|l| reference.regex.is_match(l));
            assert_eq!(matcher.is_match(text), expected, "{pattern:?} in {text:?}");
            let path = format!("f{i}");
            if expected && !reference.full() {
                reference.file(&path, text);
            }
            if expected && !search.full() {
                search.file(&path, text);
            }
        }
        let what = format!("{pattern:?} context {context} max {max_results} in {files:?}");
        assert_eq!(search.out, reference.out, "{what}");
        assert_eq!(
            (search.matches, search.files_matched),
            (reference.matches, reference.files_matched),
            "{what}"
        );
        assert_eq!(
            (search.hit_match_cap, search.hit_byte_cap),
            (reference.hit_match_cap, reference.hit_byte_cap),
            "{what}"
        );
    }

    const LINES: &[&str] = &[
        "",
        "needle",
        "a needle b",
        "needle at start",
        "at end needle",
        "nothing here",
        "é needle é",
        "needle\r",
        "  ",
        "n e e d l e",
        "x",
    ];

    /// Texts of up to 30 lines drawn from [`LINES`], with `\n` or `\r\n`, with or without a
    /// final line ending.
    fn texts(count: usize, seed: &mut u64) -> Vec<String> {
        let mut next = move || {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            usize::try_from(*seed % 1_000_003).unwrap()
        };
        (0..count)
            .map(|_| {
                let lines = next() % 30;
                let mut text = String::new();
                for _ in 0..lines {
                    text.push_str(LINES[next() % LINES.len()]);
                    text.push_str(if next() % 4 == 0 { "\r\n" } else { "\n" });
                }
                if next() % 3 == 0 {
                    text.push_str(LINES[next() % LINES.len()]);
                }
                text
            })
            .collect()
    }

    #[test]
    fn whole_file_search_matches_line_by_line_search() {
        let patterns = [
            "needle",
            "^needle",
            "needle$",
            "^$",
            "^",
            "e",
            r"\bneedle\b",
            "(?i)NEEDLE",
            // Can match across lines in a whole text: each candidate line is checked again.
            "n[^x]*e",
            r"needle\s*",
            r"\s+$",
            "x*",
            "[^a]",
            r"\r",
            // Whole-text anchors or flags turned off: tried line by line.
            r"\Aneedle",
            r"needle\z",
            "(?-m)^needle",
            "(?s-m:.)needle$",
            "é",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        for pattern in patterns {
            let compiled = (
                pattern,
                &Matcher::new(pattern, false).unwrap(),
                &Regex::new(pattern).unwrap(),
            );
            for _ in 0..20 {
                let files = texts(4, &mut seed);
                for context in [0, 1, 3] {
                    for max_results in [1, 4, 1000] {
                        check(compiled, &files, context, max_results);
                    }
                }
            }
        }
    }

    #[test]
    fn whole_file_search_stops_at_the_byte_cap_like_line_by_line_search() {
        let long = format!("{}\n", "needle ".repeat(60));
        let files = vec![long.repeat(150), "needle\n".to_owned()];
        let (matcher, regex) = (
            Matcher::new("needle", false).unwrap(),
            Regex::new("needle").unwrap(),
        );
        for context in [0, 2] {
            check(("needle", &matcher, &regex), &files, context, 1000);
        }
    }

    #[test]
    fn anchors_like_lines_table() {
        for (pattern, expected) in [
            ("needle", true),
            ("^a$", true),
            ("(?i)a", true),
            ("(?im:a)", true),
            (r"\Aa", false),
            (r"a\z", false),
            ("(?-m)^a", false),
            ("(?i-s:a)", false),
            (r"\\A", false),
        ] {
            assert_eq!(anchors_like_lines(pattern), expected, "{pattern}");
        }
    }
}
