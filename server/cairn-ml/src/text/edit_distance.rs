//! `edit_distance`: Levenshtein (or Damerau) distance and a normalised similarity between two
//! texts, or between each pair of lines of two files.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::source::{self, Input};
use crate::ml::Ml;

/// Longest text (in units) compared whole: the table is `len_a × len_b` cells.
const MAX_UNITS: usize = 20_000;
/// Line pairs compared when comparing files.
const MAX_LINES: usize = 5_000;
/// Line pairs listed in the table.
const MAX_ROWS: usize = 50;
/// Cells of all line tables together, so two files of long lines stay quick.
const MAX_CELLS: usize = 200_000_000;

/// The `edit_distance` tool.
pub struct EditDistance;

/// What one edit acts on.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Unit {
    Char,
    Word,
}

/// Arguments of `edit_distance`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The first text (or give `path_a`).
    a: Option<String>,
    /// The second text (or give `path_b`).
    b: Option<String>,
    /// A workspace file instead of `a`; with two files, each line is compared with the same line of the other.
    path_a: Option<String>,
    /// A workspace file instead of `b`.
    path_b: Option<String>,
    /// Also count swapping two adjacent units as one edit (Damerau, optimal string alignment). Default false (Levenshtein).
    #[serde(default)]
    damerau: bool,
    /// What one edit acts on: "char" (Unicode characters, the default) or "word" (whitespace-separated words, as in word error rate).
    unit: Option<Unit>,
}

impl Tool for EditDistance {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "edit_distance";
    const TITLE: &'static str = "Edit distance";
    const DESCRIPTION: &'static str = "Levenshtein (optionally Damerau) edit distance and normalised similarity between two texts, by characters or words, or line by line between two files.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::none()
            .and_read_opt(args.path_a.as_deref())
            .and_read_opt(args.path_b.as_deref())
    }

    async fn call(ml: &Ml, args: Args, cx: CallContext) -> CallToolResult {
        let lines = args.path_a.is_some() && args.path_b.is_some();
        let a = match source::load(ml, args.a, args.path_a, "a", "path_a").await {
            Ok(i) => i,
            Err(e) => return error(e),
        };
        let b = match source::load(ml, args.b, args.path_b, "b", "path_b").await {
            Ok(i) => i,
            Err(e) => return error(e),
        };
        let unit = args.unit.unwrap_or(Unit::Char);
        let damerau = args.damerau;
        let cancel = cx.cancel.clone();
        let work = tokio::task::spawn_blocking(move || {
            if lines {
                by_lines(&a, &b, unit, damerau, &cancel)
            } else {
                whole(&a, &b, unit, damerau, &cancel)
            }
        });
        tokio::select! {
            r = work => match r {
                Ok(Ok(t)) => text(t),
                Ok(Err(e)) => error(e),
                Err(e) => error(format!("edit_distance failed: {e}")),
            },
            () = cx.cancel.cancelled() => error("cancelled"),
        }
    }
}

fn units(text: &str, unit: Unit) -> Vec<&str> {
    match unit {
        Unit::Word => text.split_whitespace().collect(),
        // Characters as one-char slices, so both units share one algorithm.
        Unit::Char => text
            .char_indices()
            .map(|(i, c)| &text[i..i + c.len_utf8()])
            .collect(),
    }
}

fn unit_name(unit: Unit) -> &'static str {
    match unit {
        Unit::Char => "characters",
        Unit::Word => "words",
    }
}

fn whole(
    a: &Input,
    b: &Input,
    unit: Unit,
    damerau: bool,
    cancel: &CancellationToken,
) -> Result<String, String> {
    let (ua, ub) = (units(&a.text, unit), units(&b.text, unit));
    if ua.len() > MAX_UNITS || ub.len() > MAX_UNITS {
        return Err(format!(
            "the texts have {} and {} {}; at most {MAX_UNITS} each are compared whole. Compare two files line by line (`path_a`, `path_b`) or use unit \"word\"",
            ua.len(),
            ub.len(),
            unit_name(unit)
        ));
    }
    let d = distance(&ua, &ub, damerau, cancel).ok_or("cancelled")?;
    let kind = if damerau {
        "Damerau (optimal string alignment)"
    } else {
        "Levenshtein"
    };
    Ok(format!(
        "{kind} distance: {d} ({} edits of {} {} and {} {})\nSimilarity: {:.4} (1 − distance / longer length)",
        unit_name(unit).trim_end_matches('s'),
        ua.len(),
        unit_name(unit),
        ub.len(),
        unit_name(unit),
        similarity(d, ua.len(), ub.len())
    ) + &source::notes([a, b]))
}

fn by_lines(
    a: &Input,
    b: &Input,
    unit: Unit,
    damerau: bool,
    cancel: &CancellationToken,
) -> Result<String, String> {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.text.lines().collect(), b.text.lines().collect());
    let pairs = la.len().max(lb.len());
    let compared = pairs.min(MAX_LINES);
    let mut total = 0usize;
    let mut sim_sum = 0.0f64;
    let mut differing = Vec::new();
    let mut cells = 0usize;
    let mut stopped_at = None;
    for i in 0..compared {
        if cancel.is_cancelled() {
            return Err("cancelled".into());
        }
        let (x, y) = (
            la.get(i).copied().unwrap_or(""),
            lb.get(i).copied().unwrap_or(""),
        );
        let (ux, uy) = (units(x, unit), units(y, unit));
        cells += ux.len().saturating_mul(uy.len());
        if cells > MAX_CELLS || ux.len() > MAX_UNITS || uy.len() > MAX_UNITS {
            stopped_at = Some(i);
            break;
        }
        let d = distance(&ux, &uy, damerau, cancel).ok_or("cancelled")?;
        total += d;
        sim_sum += similarity(d, ux.len(), uy.len());
        if d > 0 {
            differing.push((i + 1, d, similarity(d, ux.len(), uy.len())));
        }
    }
    let done = stopped_at.unwrap_or(compared);
    let kind = if damerau {
        "Damerau (optimal string alignment)"
    } else {
        "Levenshtein"
    };
    let mut out = format!(
        "{kind} distance line by line, in {}: {} and {} lines; {done} pairs compared, {} differ.\nTotal distance: {total}; mean similarity: {:.4}\n",
        unit_name(unit),
        la.len(),
        lb.len(),
        differing.len(),
        if done == 0 {
            1.0
        } else {
            sim_sum / done as f64
        },
    );
    if !differing.is_empty() {
        out.push_str("\n| line | distance | similarity |\n|---:|---:|---:|\n");
        for (line, d, s) in differing.iter().take(MAX_ROWS) {
            out.push_str(&format!("| {line} | {d} | {s:.4} |\n"));
        }
        if differing.len() > MAX_ROWS {
            out.push_str(&format!(
                "({} more differing lines not listed)\n",
                differing.len() - MAX_ROWS
            ));
        }
    }
    if let Some(i) = stopped_at {
        out.push_str(&format!(
            "\nStopped at line {}: the lines compared so far reached the work cap (long lines); compare fewer or shorter lines.\n",
            i + 1
        ));
    } else if pairs > MAX_LINES {
        out.push_str(&format!(
            "\nOnly the first {MAX_LINES} of {pairs} line pairs were compared.\n"
        ));
    }
    Ok(out.trim_end().to_owned() + &source::notes([a, b]))
}

/// 1 − distance / the longer length; two empty texts are identical.
fn similarity(d: usize, la: usize, lb: usize) -> f64 {
    let longer = la.max(lb);
    if longer == 0 {
        1.0
    } else {
        1.0 - d as f64 / longer as f64
    }
}

/// Levenshtein distance, or with `damerau` the optimal string alignment distance (a swap of
/// two adjacent units is one edit; no substring is edited twice), in three rolling rows;
/// `None` once `cancel` fires (checked every row: a row is at most [`MAX_UNITS`] cells).
fn distance<T: PartialEq>(
    a: &[T],
    b: &[T],
    damerau: bool,
    cancel: &CancellationToken,
) -> Option<usize> {
    let mut prev2: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        if cancel.is_cancelled() {
            return None;
        }
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if damerau && i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(prev2[j - 2] + 1);
            }
            cur[j] = v;
        }
        std::mem::swap(&mut prev2, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    Some(prev[b.len()])
}
