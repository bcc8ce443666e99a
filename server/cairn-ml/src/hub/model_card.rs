//! `hf_model_card`: a Hub model's card (its README: the front matter summarised, the body
//! capped) and its files with their sizes.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{Service, count, date, encode, get, json, repo_id};
use crate::ml::Ml;

/// Characters of the card's body shown when `max_chars` is not given.
const DEFAULT_BODY: usize = 8_000;
/// Most characters of the body one call shows.
const MAX_BODY: usize = 40_000;
/// Files listed; the rest are counted and summed.
const MAX_FILES: usize = 60;
/// Values of one front-matter list shown (tags, datasets, languages).
const MAX_LIST: usize = 20;

/// The `hf_model_card` tool.
pub struct HfModelCard;

/// Arguments of `hf_model_card`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The model's id, `owner/name` (e.g. `sentence-transformers/all-MiniLM-L6-v2`).
    model: String,
    /// A branch, tag or commit; default `main`.
    revision: Option<String>,
    /// Characters of the card's body to show, at most 40000; default 8000.
    max_chars: Option<usize>,
}

impl Tool for HfModelCard {
    type Host = Ml;
    type Args = Args;
    const NAME: &'static str = "hf_model_card";
    const TITLE: &'static str = "Hugging Face model card";
    const DESCRIPTION: &'static str = "A Hugging Face Hub model's card: license, tags, datasets, base model, task and library, its README text (capped), and its files with sizes.";
    const CATEGORY: Category = Category::Ai;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(ml: &Ml, args: Args, cx: CallContext) -> CallToolResult {
        match card(ml, args, &cx).await {
            Ok(t) => text(t),
            Err(e) => error(e),
        }
    }
}

/// A revision checked to be one path segment (`main`, `v1.0`, a commit); `refs/pr/1` is the
/// one form with slashes the Hub names, and it is encoded as one.
fn revision(rev: Option<&str>) -> Result<String, String> {
    let rev = rev
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .unwrap_or("main");
    let ok = rev.len() <= 128
        && !rev.contains("..")
        && rev
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    if ok {
        Ok(rev.to_owned())
    } else {
        Err(format!(
            "`{rev}` is not a revision: give a branch, tag or commit (`main`, `v1.0`, a hash)"
        ))
    }
}

async fn card(ml: &Ml, args: Args, cx: &CallContext) -> Result<String, String> {
    let id = repo_id(&args.model, "model")?;
    let rev = revision(args.revision.as_deref())?;
    let max_body = args.max_chars.unwrap_or(DEFAULT_BODY);
    if max_body > MAX_BODY {
        return Err(format!(
            "`max_chars` is {max_body}; at most {MAX_BODY} characters of a card are shown"
        ));
    }
    let what = format!("model {id}");
    let info_path = if rev == "main" {
        format!("/api/models/{id}")
    } else {
        format!("/api/models/{id}/revision/{}", encode(&rev))
    };
    let answer = get(
        ml,
        Service::Hub,
        &info_path,
        &[("blobs", "true".to_owned())],
        &what,
        cx,
    )
    .await?;
    let info = json(&answer, &what, ml)?;
    if !info.is_object() {
        return Err(format!(
            "{what}: the hub's answer is not a model's description"
        ));
    }
    let mut out = header(&id, &rev, &info);
    // The card: README.md at the revision. A model without one still has its files listed.
    let readme_path = format!("/{id}/resolve/{}/README.md", encode(&rev));
    let readme = get(
        ml,
        Service::Hub,
        &readme_path,
        &[],
        &format!("the card (README.md) of {what}"),
        cx,
    )
    .await;
    let (front, body, note) = match readme {
        Ok(a) => {
            let text = String::from_utf8_lossy(&a.body).into_owned();
            let (front, body) = split_front_matter(&text);
            let note = a.truncated.then(|| {
                format!(
                    "the README is larger than the web guard's byte cap; only its first {} bytes were read",
                    a.body.len()
                )
            });
            (front, body.to_owned(), note)
        }
        Err(e) if e.contains("HTTP 404") => {
            (None, String::new(), Some("no README.md (no card)".into()))
        }
        Err(e) => return Err(e),
    };
    // The README's front matter is the card's data; the Hub's parse of it (`cardData`) when
    // the README could not be read or has none.
    let data = front.unwrap_or_else(|| info["cardData"].clone());
    out.push_str(&summary(&data, &info));
    out.push_str(&files(&info));
    out.push('\n');
    if let Some(n) = note {
        out.push_str(&format!("Note: {n}.\n"));
    }
    let body = body.trim();
    if !body.is_empty() {
        let total = body.chars().count();
        if total > max_body {
            let shown: String = body.chars().take(max_body).collect();
            out.push_str(&format!(
                "Card ({total} characters; the first {max_body} shown, raise `max_chars` for more):\n\n{shown}\n…"
            ));
        } else {
            out.push_str(&format!("Card:\n\n{body}"));
        }
    }
    Ok(out)
}

/// The first lines: id, revision, task, library, counts, dates, access.
fn header(id: &str, rev: &str, info: &Value) -> String {
    let sha = info["sha"]
        .as_str()
        .map(|s| format!(", commit {}", &s[..s.len().min(12)]))
        .unwrap_or_default();
    let mut facts = Vec::new();
    if let Some(t) = info["pipeline_tag"].as_str() {
        facts.push(format!("task: {t}"));
    }
    if let Some(l) = info["library_name"].as_str() {
        facts.push(format!("library: {l}"));
    }
    facts.push(format!(
        "downloads (30 days): {}",
        count(&info["downloads"])
    ));
    facts.push(format!("likes: {}", count(&info["likes"])));
    facts.push(format!("updated: {}", date(&info["lastModified"])));
    match &info["gated"] {
        Value::String(g) => facts.push(format!("gated ({g}): accept its terms on the Hub")),
        Value::Bool(true) => facts.push("gated: accept its terms on the Hub".into()),
        _ => {}
    }
    if info["private"] == Value::Bool(true) {
        facts.push("private".into());
    }
    format!("Model {id} (revision {rev}{sha})\n{}\n", facts.join(" · "))
}

/// YAML front matter (`---` … `---` at the top) as JSON, and the body after it.
fn split_front_matter(text: &str) -> (Option<Value>, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (None, text);
    };
    let end = rest
        .find("\n---\n")
        .map(|i| (i, i + 5))
        .or_else(|| rest.find("\n---\r\n").map(|i| (i, i + 6)))
        .or_else(|| rest.strip_suffix("\n---").map(|r| (r.len(), rest.len())));
    let Some((yaml_end, body_start)) = end else {
        return (None, text);
    };
    let front = serde_norway::from_str::<Value>(&rest[..yaml_end])
        .ok()
        .filter(Value::is_object);
    (front, &rest[body_start..])
}

/// A front-matter value (a string or a list of them) as one line, capped.
fn listed(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.trim().is_empty() => Some(cairn_toolkit::table::cut(s.trim(), 200)),
        Value::Array(items) => {
            let words: Vec<String> = items
                .iter()
                .filter_map(|i| match i {
                    Value::String(s) => Some(s.clone()),
                    Value::Number(n) => Some(n.to_string()),
                    _ => None,
                })
                .collect();
            if words.is_empty() {
                return None;
            }
            let mut line = words
                .iter()
                .take(MAX_LIST)
                .map(|w| cairn_toolkit::table::cut(w, 80))
                .collect::<Vec<_>>()
                .join(", ");
            if words.len() > MAX_LIST {
                line.push_str(&format!(" … ({} in all)", words.len()));
            }
            Some(line)
        }
        _ => None,
    }
}

/// The card's data: license, tags, datasets, base model, languages, metrics.
fn summary(data: &Value, info: &Value) -> String {
    let mut out = String::new();
    let license = listed(&data["license"])
        .map(|l| match listed(&data["license_name"]) {
            Some(name) if l == "other" => format!("other ({name})"),
            _ => l,
        })
        .unwrap_or_else(|| "not stated".to_owned());
    out.push_str(&format!("license: {license}\n"));
    let tags = if data["tags"].is_null() {
        &info["tags"]
    } else {
        &data["tags"]
    };
    for (label, value) in [
        ("base model", &data["base_model"]),
        ("datasets", &data["datasets"]),
        ("languages", &data["language"]),
        ("metrics", &data["metrics"]),
        ("tags", tags),
    ] {
        if let Some(line) = listed(value) {
            out.push_str(&format!("{label}: {line}\n"));
        }
    }
    out
}

/// Bytes as a short size (`1.3 GB`).
fn size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// The repository's files (`siblings`) with sizes, largest last kept in listing order, capped.
fn files(info: &Value) -> String {
    let Some(siblings) = info["siblings"].as_array() else {
        return "\nFiles: not listed by the hub.\n".to_owned();
    };
    let sized = |s: &Value| s["size"].as_u64().or_else(|| s["lfs"]["size"].as_u64());
    let total: u64 = siblings.iter().filter_map(sized).sum();
    let mut out = format!("\nFiles ({}, {} in all):\n", siblings.len(), size(total));
    for s in siblings.iter().take(MAX_FILES) {
        let name = s["rfilename"].as_str().unwrap_or("?");
        let shown = sized(s).map_or_else(|| "size unknown".to_owned(), size);
        out.push_str(&format!("  {name}  {shown}\n"));
    }
    if siblings.len() > MAX_FILES {
        let rest: u64 = siblings.iter().skip(MAX_FILES).filter_map(sized).sum();
        out.push_str(&format!(
            "  … {} more files ({}) not listed\n",
            siblings.len() - MAX_FILES,
            size(rest)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn front_matter_is_split_from_the_body() {
        let (front, body) = split_front_matter("---\nlicense: mit\ntags:\n- a\n---\n# Title\n");
        assert_eq!(front.unwrap()["license"], "mit");
        assert_eq!(body, "# Title\n");
        let (front, body) = split_front_matter("# No front matter\n");
        assert!(front.is_none());
        assert_eq!(body, "# No front matter\n");
        // Unclosed: all body.
        let (front, _) = split_front_matter("---\nlicense: mit\n");
        assert!(front.is_none());
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size(570), "570 B");
        assert_eq!(size(440_473_133), "440.5 MB");
        assert_eq!(size(1_340_000_000), "1.3 GB");
    }
}
