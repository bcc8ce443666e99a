//! Line diffs: a unified diff of two texts, and applying a unified diff's hunks to a text.

use cairn_toolkit::ToolError;
use std::fmt::Write as _;

/// Above this many cells the middle (after common prefix and suffix) is one replacement.
const MAX_LCS_CELLS: usize = 4_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Equal(usize, usize),
    Delete(usize),
    Insert(usize),
}

fn ops(a: &[&str], b: &[&str]) -> Vec<Op> {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut out: Vec<Op> = (0..pre).map(|i| Op::Equal(i, i)).collect();
    let (n, m) = (am.len(), bm.len());
    if n.saturating_mul(m) > MAX_LCS_CELLS {
        out.extend((0..n).map(|i| Op::Delete(pre + i)));
        out.extend((0..m).map(|j| Op::Insert(pre + j)));
    } else {
        // lcs[i][j]: LCS length of am[i..] and bm[j..].
        let w = m + 1;
        let mut lcs = vec![0u32; (n + 1) * w];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i * w + j] = if am[i] == bm[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && am[i] == bm[j] {
                out.push(Op::Equal(pre + i, pre + j));
                i += 1;
                j += 1;
            } else if i < n && (j == m || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
                // Deletions first, as diff shows them.
                out.push(Op::Delete(pre + i));
                i += 1;
            } else {
                out.push(Op::Insert(pre + j));
                j += 1;
            }
        }
    }
    let (an, bn) = (a.len() - suf, b.len() - suf);
    out.extend((0..suf).map(|k| Op::Equal(an + k, bn + k)));
    out
}

/// A unified diff of `old` and `new` with `context` lines; empty when they are equal.
pub(crate) fn unified(
    old: &str,
    new: &str,
    old_name: &str,
    new_name: &str,
    context: usize,
) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = ops(&a, &b);
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| !matches!(op, Op::Equal(..)))
        .map(|(k, _)| k)
        .collect();
    if changed.is_empty() {
        return String::new();
    }
    // Group changes whose context overlaps into hunks of op indices.
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for &k in &changed {
        let start = k.saturating_sub(context);
        let end = (k + context + 1).min(ops.len());
        match groups.last_mut() {
            Some(last) if start <= last.1 => last.1 = end,
            _ => groups.push((start, end)),
        }
    }
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    for (start, end) in groups {
        let slice = &ops[start..end];
        let (mut a_start, mut b_start) = (None, None);
        let (mut a_len, mut b_len) = (0, 0);
        let mut body = String::new();
        for op in slice {
            match *op {
                Op::Equal(i, j) => {
                    a_start.get_or_insert(i);
                    b_start.get_or_insert(j);
                    a_len += 1;
                    b_len += 1;
                    let _ = writeln!(body, " {}", a[i]);
                }
                Op::Delete(i) => {
                    a_start.get_or_insert(i);
                    a_len += 1;
                    let _ = writeln!(body, "-{}", a[i]);
                }
                Op::Insert(j) => {
                    b_start.get_or_insert(j);
                    b_len += 1;
                    let _ = writeln!(body, "+{}", b[j]);
                }
            }
        }
        // An empty side is numbered by the line before it, as diff does.
        let a_at = if a_len == 0 {
            hunk_anchor(slice, true)
        } else {
            a_start.unwrap_or(0) + 1
        };
        let b_at = if b_len == 0 {
            hunk_anchor(slice, false)
        } else {
            b_start.unwrap_or(0) + 1
        };
        let _ = writeln!(out, "@@ -{a_at},{a_len} +{b_at},{b_len} @@");
        out.push_str(&body);
    }
    out
}

/// The line before a hunk side that has no lines (0 at the start of the file).
fn hunk_anchor(slice: &[Op], old_side: bool) -> usize {
    // With no lines on this side, the hunk is all inserts (or deletes) on the other side.
    slice
        .iter()
        .find_map(|op| match *op {
            Op::Insert(j) if old_side => Some(j),
            Op::Delete(i) if !old_side => Some(i),
            _ => None,
        })
        .unwrap_or(0)
}

/// One hunk of a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    pub(crate) header: String,
    /// 1-based start line in the old file, as the header says.
    pub(crate) old_start: usize,
    /// Lines of the old text (context and removed) and of the new text (context and added).
    pub(crate) old: Vec<String>,
    pub(crate) new: Vec<String>,
}

/// A file's part of a unified diff. `None` paths are `/dev/null` (creation or deletion).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FilePatch {
    pub(crate) old_path: Option<String>,
    pub(crate) new_path: Option<String>,
    pub(crate) hunks: Vec<Hunk>,
}

fn patch_path(raw: &str) -> Option<String> {
    let raw = raw.split('\t').next().unwrap_or(raw).trim_end();
    if raw == "/dev/null" {
        return None;
    }
    let stripped = raw
        .strip_prefix("a/")
        .or_else(|| raw.strip_prefix("b/"))
        .unwrap_or(raw);
    Some(stripped.to_owned())
}

/// Parse a unified diff (`git diff` output too: its extra header lines are skipped).
pub(crate) fn parse_patch(patch: &str) -> Result<Vec<FilePatch>, ToolError> {
    let mut files: Vec<FilePatch> = Vec::new();
    let lines: Vec<&str> = patch.lines().collect();
    let mut k = 0;
    while k < lines.len() {
        let line = lines[k];
        if let Some(old) = line.strip_prefix("--- ") {
            let Some(new) = lines.get(k + 1).and_then(|l| l.strip_prefix("+++ ")) else {
                return Err(ToolError::invalid(format!(
                    "line {}: `---` is not followed by a `+++` line",
                    k + 1
                )));
            };
            files.push(FilePatch {
                old_path: patch_path(old),
                new_path: patch_path(new),
                hunks: Vec::new(),
            });
            k += 2;
            continue;
        }
        if line.starts_with("@@") {
            let Some(file) = files.last_mut() else {
                return Err(ToolError::invalid(format!(
                    "line {}: a hunk comes before any `---`/`+++` file header",
                    k + 1
                )));
            };
            let (old_start, mut old_left, mut new_left) = parse_header(line).ok_or_else(|| {
                ToolError::invalid(format!("line {}: malformed hunk header `{line}`", k + 1))
            })?;
            let mut hunk = Hunk {
                header: line.to_owned(),
                old_start,
                old: Vec::new(),
                new: Vec::new(),
            };
            k += 1;
            while (old_left > 0 || new_left > 0) && k < lines.len() {
                let l = lines[k];
                match l.chars().next() {
                    Some(' ') | None => {
                        let body = l.get(1..).unwrap_or("").to_owned();
                        hunk.old.push(body.clone());
                        hunk.new.push(body);
                        old_left = old_left.saturating_sub(1);
                        new_left = new_left.saturating_sub(1);
                    }
                    Some('-') => {
                        hunk.old.push(l[1..].to_owned());
                        old_left = old_left.saturating_sub(1);
                    }
                    Some('+') => {
                        hunk.new.push(l[1..].to_owned());
                        new_left = new_left.saturating_sub(1);
                    }
                    Some('\\') => {}
                    Some(_) => {
                        return Err(ToolError::invalid(format!(
                            "line {}: in hunk `{}`, `{l}` is not a context, `-` or `+` line (the hunk's line counts may be wrong)",
                            k + 1,
                            hunk.header
                        )));
                    }
                }
                k += 1;
            }
            if old_left > 0 || new_left > 0 {
                return Err(ToolError::invalid(format!(
                    "hunk `{}` ends early: the patch is cut short or its line counts are wrong",
                    hunk.header
                )));
            }
            file.hunks.push(hunk);
            continue;
        }
        k += 1;
    }
    if files.is_empty() {
        return Err(ToolError::invalid(
            "no file headers (`--- a/path` and `+++ b/path`) were found in the patch",
        ));
    }
    Ok(files)
}

/// `@@ -a,b +c,d @@` to (a, b, d); omitted counts are 1.
fn parse_header(line: &str) -> Option<(usize, usize, usize)> {
    let inner = line.strip_prefix("@@ ")?;
    let inner = &inner[..inner.find(" @@")?];
    let mut parts = inner.split(' ');
    let old = parts.next()?.strip_prefix('-')?;
    let new = parts.next()?.strip_prefix('+')?;
    let range = |s: &str| -> Option<(usize, usize)> {
        match s.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((s.parse().ok()?, 1)),
        }
    };
    let (old_start, old_len) = range(old)?;
    let (_, new_len) = range(new)?;
    Some((old_start, old_len, new_len))
}

/// Apply hunks to `text`; a hunk's old lines must match exactly, searched near the line its
/// header names (and then anywhere after the previous hunk). The error names the hunk.
pub(crate) fn apply_hunks(text: &str, hunks: &[Hunk], file: &str) -> Result<String, ToolError> {
    let crlf = text.contains("\r\n");
    let nl = if crlf { "\r\n" } else { "\n" };
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let trailing_newline = text.is_empty() || text.ends_with('\n');
    // Offset of later hunks caused by earlier ones; and the earliest line a hunk may use.
    let mut delta: isize = 0;
    let mut floor = 0usize;
    for (n, hunk) in hunks.iter().enumerate() {
        let want = (hunk.old_start.saturating_sub(1) as isize + delta).max(0) as usize;
        let fits = |at: usize| {
            at >= floor
                && at + hunk.old.len() <= lines.len()
                && lines[at..at + hunk.old.len()] == hunk.old[..]
        };
        let at = if hunk.old.is_empty() {
            // Pure insertion: the header names the line after which to insert.
            let at = (hunk.old_start as isize + delta).max(0) as usize;
            Some(at.min(lines.len()))
        } else {
            (0..=lines.len())
                .flat_map(|d| [want.checked_add(d), want.checked_sub(d)])
                .flatten()
                .take(2 * (lines.len() + 1))
                .find(|&at| fits(at))
        };
        let Some(at) = at else {
            let first = hunk.old.first().map(String::as_str).unwrap_or("");
            return Err(ToolError::invalid(format!(
                "hunk {} of {file} (`{}`) does not apply: its {} old lines (starting `{first}`) were not found in the file; read the file again and make the patch from its current text",
                n + 1,
                hunk.header,
                hunk.old.len()
            )));
        };
        lines.splice(at..at + hunk.old.len(), hunk.new.iter().cloned());
        delta += hunk.new.len() as isize - hunk.old.len() as isize;
        floor = at + hunk.new.len();
    }
    let mut out = lines.join(nl);
    if trailing_newline && !out.is_empty() {
        out.push_str(nl);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_then_apply_round_trips() {
        let cases = [
            ("a\nb\nc\n", "a\nB\nc\n"),
            ("", "x\ny\n"),
            ("x\ny\n", ""),
            (
                "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
                "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\nten\n11\n",
            ),
            ("a\nb\n", "a\nb\nc\n"),
        ];
        for (old, new) in cases {
            let diff = unified(old, new, "a/f", "b/f", 3);
            let files = parse_patch(&diff).unwrap_or_default();
            assert_eq!(files.len(), 1, "{diff}");
            let got = apply_hunks(old, &files[0].hunks, "f");
            assert_eq!(got.as_deref(), Ok(new), "{diff}");
        }
    }

    #[test]
    fn unified_format() {
        assert_eq!(
            unified("a\nb\nc\n", "a\nB\nc\nd\n", "x", "y", 1),
            "--- x\n+++ y\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n"
        );
        assert_eq!(unified("same\n", "same\n", "x", "y", 3), "");
    }
}
