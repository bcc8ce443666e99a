//! One search, as both tools run it: the host's index loaded (or rebuilt, when the file on disk
//! cannot be trusted), refreshed, saved, asked, and its best windows re-checked against the
//! workspace (a file the user may no longer read is dropped) and shown with their text.

use std::collections::{HashMap, HashSet};

use cairn_select::bm25::tokenize;

use cairn_toolkit::{CallContext, Host};
use cairn_workspace::Workspace;
use serde_json::{Value, json};

use super::index::{self, Index, Refresh};
use super::store;
use crate::ml::Ml;

/// Results shown by default, and at most.
pub(crate) const DEFAULT_LIMIT: usize = 8;
pub(crate) const MAX_LIMIT: usize = 50;
/// Lines of a window shown as its snippet, and characters of each.
const SNIPPET_LINES: usize = 12;
const SNIPPET_LINE_CHARS: usize = 160;

/// What to look for.
pub(crate) struct Query {
    /// The text embedded and matched.
    pub text: String,
    /// Only files under this path prefix, or matching this glob.
    pub filter: Option<String>,
    pub limit: usize,
    /// For `similar_code`: the windows that overlap where this snippet itself stands are left
    /// out, so the results are the other places.
    pub exclude_snippet: bool,
}

/// One result.
pub(crate) struct Shown {
    pub path: String,
    pub start: u32,
    pub end: u32,
    /// The lines shown (the part of the window with most of the query's words).
    pub shown: (u32, u32),
    pub cosine: f32,
    pub snippet: String,
}

/// A search's results and notes.
pub(crate) struct Outcome {
    pub shown: Vec<Shown>,
    pub considered: usize,
    pub notes: Vec<String>,
    pub structured: Value,
}

/// Runs `query` over the host's index, refreshed first.
pub(crate) async fn search(ml: &Ml, query: Query, cx: &CallContext) -> Result<Outcome, String> {
    let ws = ml.workspace().cloned().ok_or(
        "no workspace is open, so there is nothing to search; open a folder in the editor first",
    )?;
    let filter = Filter::new(query.filter.as_deref())?;
    let embedder = ml.embedder().await?;
    let model = format!("{}@{}", ml.spec.repo, ml.spec.revision);
    let dir = ml.search.dir.clone();
    let mut guard = ml.search.index.lock().await;
    let current = guard.take();
    let cancel = cx.cancel.clone();
    // The query is embedded while the index is brought up to date: on an idle machine the two
    // overlap, and most queries find nothing to refresh but must still look.
    let query_embedder = embedder.clone();
    let query_text = query.text.clone();
    let query_vector = tokio::task::spawn_blocking(move || {
        query_embedder
            .embed(&[query_text.as_str()])
            .map(|mut v| v.pop().unwrap_or_default())
            .map_err(|e| format!("embedding the query failed: {e}"))
    });
    let job = tokio::task::spawn_blocking(move || {
        let mut notes = Vec::new();
        let file = dir.as_deref().map(|d| store::index_file(d, ws.roots()));
        let mut index =
            current.unwrap_or_else(|| opened(file.as_deref(), &model, embedder.dim(), &mut notes));
        let (changed, refresh) = index.refresh(&ws, &embedder, &cancel);
        if changed
            && let Some(file) = &file
            && let Err(e) = store::save(file, &index)
        {
            notes.push(format!(
                "the index could not be saved to {} ({e}); it is kept in memory",
                file.display()
            ));
        }
        if file.is_none() {
            notes.push(
                "no cache directory is known (HOME is not set), so the index lives in memory only"
                    .into(),
            );
        }
        (index, refresh, notes)
    });
    let (index, refresh, notes) = match job.await {
        Ok(done) => done,
        // The index is lost with the thread; the next query loads it from disk again.
        Err(e) => return Err(format!("internal error: the search failed ({e})")),
    };
    if refresh.cancelled {
        *guard = Some(index);
        return Err("cancelled".to_owned());
    }
    let vector = match query_vector.await {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            *guard = Some(index);
            return Err(e);
        }
        Err(e) => {
            *guard = Some(index);
            return Err(format!("internal error: embedding the query failed ({e})"));
        }
    };
    let Some(ws) = ml.workspace().cloned() else {
        *guard = Some(index);
        return Err("no workspace is open".into());
    };
    let job = tokio::task::spawn_blocking(move || {
        let outcome = answer(&ws, &index, &query, &filter, &vector, refresh, notes);
        (index, outcome)
    });
    match job.await {
        Ok((index, outcome)) => {
            *guard = Some(index);
            Ok(outcome)
        }
        Err(e) => Err(format!("internal error: the search failed ({e})")),
    }
}

/// The index from `file`, or a new one (saying why when the old one could not be used).
fn opened(
    file: Option<&std::path::Path>,
    model: &str,
    dim: usize,
    notes: &mut Vec<String>,
) -> Index {
    let fresh = || Index::new(model.to_owned(), dim);
    let Some(file) = file else {
        return fresh();
    };
    match store::load(file) {
        store::Loaded::Missing => fresh(),
        store::Loaded::Index(index) if index.model == model && index.dim == dim => index,
        store::Loaded::Index(index) => {
            notes.push(format!(
                "the index on disk was built with {}; it was rebuilt for {model}",
                index.model
            ));
            fresh()
        }
        store::Loaded::Damaged(why) => {
            tracing::warn!("semantic index {} not trusted: {why}", file.display());
            notes.push(format!(
                "the index on disk ({}) was damaged: {why}; it was rebuilt from the workspace",
                file.display()
            ));
            fresh()
        }
    }
}

/// Ranks, re-checks and shows.
fn answer(
    ws: &Workspace,
    index: &Index,
    query: &Query,
    filter: &Filter,
    vector: &[f32],
    refresh: Refresh,
    mut notes: Vec<String>,
) -> Outcome {
    let hits = index.rank(&query.text, vector, &|p| filter.keeps(p));
    let considered = hits.len();
    let mut texts: HashMap<String, Option<Vec<String>>> = HashMap::new();
    let mut shown: Vec<Shown> = Vec::new();
    let mut dropped = 0usize;
    let mut itself: Vec<(String, u32, u32)> = Vec::new();
    let wanted: Vec<String> = if query.exclude_snippet {
        query
            .text
            .lines()
            .map(|l| l.trim().to_owned())
            .filter(|l| !l.is_empty())
            .collect()
    } else {
        Vec::new()
    };
    let query_terms: HashSet<String> = tokenize(&query.text).into_iter().collect();
    for hit in hits.iter().take(query.limit * 10 + 50) {
        if shown.len() >= query.limit {
            break;
        }
        let lines = texts
            .entry(hit.path.clone())
            .or_insert_with(|| current_lines(ws, &hit.path));
        let Some(lines) = lines else {
            dropped += 1;
            continue;
        };
        let (a, b) = (hit.start as usize, hit.end as usize);
        if a == 0 || b > lines.len() || a > b {
            // Changed since this very refresh; its next one re-indexes it.
            dropped += 1;
            continue;
        }
        if !wanted.is_empty() {
            let mut mine = occurrences(lines, &wanted);
            if mine.iter().any(|&(s, e)| s <= b && a <= e) {
                for (s, e) in mine.drain(..) {
                    let at = (hit.path.clone(), s as u32, e as u32);
                    if !itself.contains(&at) {
                        itself.push(at);
                    }
                }
                continue;
            }
        }
        // A window overlapping one already shown from the same file says the same again.
        if shown
            .iter()
            .any(|s| s.path == hit.path && s.start <= hit.end && hit.start <= s.end)
        {
            continue;
        }
        let from = best_span(&lines[a - 1..b], &query_terms) + a;
        let to = (from + SNIPPET_LINES - 1).min(b);
        let snippet = lines[from - 1..to]
            .iter()
            .map(|l| cairn_toolkit::table::cut(l, SNIPPET_LINE_CHARS))
            .collect::<Vec<_>>()
            .join("\n");
        shown.push(Shown {
            path: hit.path.clone(),
            start: hit.start,
            end: hit.end,
            shown: (from as u32, to as u32),
            cosine: hit.cosine,
            snippet,
        });
    }
    if !itself.is_empty() {
        let at: Vec<String> = itself
            .iter()
            .map(|(p, s, e)| format!("{p}:{s}-{e}"))
            .collect();
        notes.push(format!(
            "the snippet itself stands at {}; windows overlapping it were left out",
            at.join(", ")
        ));
    }
    if dropped > 0 {
        notes.push(format!(
            "{dropped} results were dropped: their files are gone or may no longer be read"
        ));
    }
    if refresh.pending > 0 {
        notes.push(format!(
            "{} changed files are not indexed yet ({} are embedded per query); the next query goes on with them",
            refresh.pending,
            index::FILES_PER_ROUND
        ));
    }
    if refresh.left_out > 0 {
        notes.push(format!(
            "{} files were left out: the index holds at most {} files and {} windows; narrow the workspace (ignore files) to index the rest",
            refresh.left_out,
            index::MAX_FILES,
            index::MAX_CHUNKS
        ));
    }
    let cut = index.cut_files();
    if cut > 0 {
        notes.push(format!(
            "{cut} large files are indexed in part (their first {} KiB, at most {} windows)",
            index::MAX_FILE_BYTES / 1024,
            index::MAX_CHUNKS_PER_FILE
        ));
    }
    let structured = json!({
        "results": shown.iter().map(|s| json!({
            "path": s.path,
            "start_line": s.start,
            "end_line": s.end,
            "score": s.cosine,
        })).collect::<Vec<_>>(),
        "index": {
            "files": index.text_files(),
            "chunks": index.chunk_count(),
            "refresh": refresh,
        },
    });
    let mut summary = format!(
        "index: {} files, {} windows",
        index.text_files(),
        index.chunk_count()
    );
    if refresh.embedded_files > 0 || refresh.removed > 0 {
        summary.push_str(&format!(
            "; this query embedded {} changed files ({} windows) and removed {}",
            refresh.embedded_files, refresh.embedded_chunks, refresh.removed
        ));
    }
    notes.insert(0, summary);
    Outcome {
        shown,
        considered,
        notes,
        structured,
    }
}

/// Where in `lines` (from 0) the [`SNIPPET_LINES`] lines shown start: the span holding the most
/// query words, the earliest of equals (the start when none holds any).
fn best_span(lines: &[String], terms: &HashSet<String>) -> usize {
    if lines.len() <= SNIPPET_LINES || terms.is_empty() {
        return 0;
    }
    let weight: Vec<usize> = lines
        .iter()
        .map(|l| tokenize(l).iter().filter(|t| terms.contains(*t)).count())
        .collect();
    let mut sum: usize = weight[..SNIPPET_LINES].iter().sum();
    let (mut best, mut best_sum) = (0, sum);
    for s in 1..=lines.len() - SNIPPET_LINES {
        sum = sum + weight[s + SNIPPET_LINES - 1] - weight[s - 1];
        if sum > best_sum {
            (best, best_sum) = (s, sum);
        }
    }
    best
}

/// The lines of `path` as it is now, when the user may still read it; `None` otherwise.
fn current_lines(ws: &Workspace, path: &str) -> Option<Vec<String>> {
    let resolved = ws.resolve(path).ok()?;
    if !index::readable(ws, &resolved) {
        return None;
    }
    let text = index::read_text(ws, &resolved)?;
    Some(text.lines().map(str::to_owned).collect())
}

/// The line ranges (from 1, inclusive) where `wanted` (trimmed, non-blank lines) occurs in
/// `lines`, blank lines and indentation aside.
fn occurrences(lines: &[String], wanted: &[String]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for i in 0..lines.len() {
        if lines[i].trim() != wanted[0] {
            continue;
        }
        let mut k = 0;
        let mut j = i;
        while j < lines.len() && k < wanted.len() {
            let l = lines[j].trim();
            if l.is_empty() {
                j += 1;
                continue;
            }
            if l != wanted[k] {
                break;
            }
            k += 1;
            j += 1;
        }
        if k == wanted.len() {
            out.push((i + 1, j));
        }
    }
    out
}

/// The `path` argument: a path prefix, or a glob when it has glob characters.
pub(crate) enum Filter {
    All,
    Prefix(String),
    Glob(globset::GlobMatcher),
}

impl Filter {
    fn new(path: Option<&str>) -> Result<Filter, String> {
        let Some(p) = path.map(str::trim) else {
            return Ok(Filter::All);
        };
        if p.contains(['*', '?', '[', '{']) {
            let glob = globset::GlobBuilder::new(p.trim_start_matches("./"))
                .literal_separator(false)
                .build()
                .map_err(|e| format!("`path` is not a valid glob: {e}"))?;
            return Ok(Filter::Glob(glob.compile_matcher()));
        }
        let p = p.trim_start_matches("./").trim_end_matches('/');
        if p.is_empty() || p == "." {
            Ok(Filter::All)
        } else {
            Ok(Filter::Prefix(p.to_owned()))
        }
    }

    fn keeps(&self, path: &str) -> bool {
        match self {
            Filter::All => true,
            Filter::Prefix(p) => {
                path == p
                    || path
                        .strip_prefix(p.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            }
            Filter::Glob(g) => g.is_match(path),
        }
    }
}

/// The tools' result: the results, each with its lines, then the notes.
pub(crate) fn render(heading: &str, outcome: Outcome) -> rmcp::model::CallToolResult {
    let mut out = if outcome.shown.is_empty() {
        format!(
            "{heading}: nothing found among {} windows.\n",
            outcome.considered
        )
    } else {
        format!(
            "{heading}: the best {} of {} windows, best first.\n",
            outcome.shown.len(),
            outcome.considered
        )
    };
    for (i, s) in outcome.shown.iter().enumerate() {
        let part = if s.shown == (s.start, s.end) {
            String::new()
        } else {
            format!(", showing {}-{}", s.shown.0, s.shown.1)
        };
        out.push_str(&format!(
            "\n{}. {} lines {}-{} (similarity {:.2}{part})\n```\n{}\n```\n",
            i + 1,
            s.path,
            s.start,
            s.end,
            s.cosine,
            s.snippet
        ));
    }
    for n in &outcome.notes {
        out.push_str(&format!("\n({n})"));
    }
    let mut result = cairn_toolkit::reply::text(out);
    result.structured_content = Some(outcome.structured);
    result
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_owned).collect()
    }

    #[test]
    fn the_snippet_shows_the_lines_with_the_query_words() {
        let mut text: Vec<String> = (0..30).map(|i| format!("let x{i} = {i};")).collect();
        text[20] = "retry the upload".into();
        text[22] = "upload failed".into();
        let terms: HashSet<String> = tokenize("retry failed uploads").into_iter().collect();
        // Twelve lines from 11 to 20 hold lines 20 and 22 (from 0); 11 is the earliest.
        assert_eq!(best_span(&text, &terms), 11);
        assert_eq!(best_span(&text[..12], &terms), 0);
        assert_eq!(best_span(&text, &HashSet::new()), 0);
    }

    #[test]
    fn a_snippet_is_found_whatever_its_indentation_and_blank_lines() {
        let file = lines("a\n  fn f() {\n\n      g();\n  }\nfn f() {\n    h();\n}\n");
        let wanted: Vec<String> = vec!["fn f() {".into(), "g();".into(), "}".into()];
        assert_eq!(occurrences(&file, &wanted), [(2, 5)]);
    }

    #[test]
    fn the_path_filter_takes_prefixes_and_globs() {
        let prefix = Filter::new(Some("./src/")).unwrap();
        assert!(prefix.keeps("src/a.rs") && prefix.keeps("src"));
        assert!(!prefix.keeps("srcx/a.rs"));
        let glob = Filter::new(Some("**/*.md")).unwrap();
        assert!(glob.keeps("docs/a.md") && !glob.keeps("docs/a.rs"));
        assert!(Filter::new(Some(".")).unwrap().keeps("anything"));
        assert!(Filter::new(Some("src/[a")).is_err());
    }
}
