//! `cairn eval --html FILE`: the report as one self-contained page (no script, no fetched
//! asset): the table, a chart of success by category with its 95% interval against the
//! category's target, the failures grouped by reason, and each failed task with its answer and
//! transcript folded in a `<details>`. Everything from the run is escaped: answers and
//! transcripts are the model's text.

use std::fmt::Write as _;
use std::path::Path;

use cairn_agent::model::Message;
use cairn_toolkit::html::escape as esc;

use super::task::Category;
use super::{TaskResult, failure_groups, rows};

/// Long tool results are cut in the page; the session store keeps them whole.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max).collect();
    format!("{head}\n… ({} characters in all)", text.chars().count())
}

fn transcript(messages: &[Message]) -> String {
    let mut out = String::new();
    for m in messages {
        match m {
            Message::User { text, .. } => {
                let _ = write!(
                    out,
                    "<div class=\"msg user\"><b>user</b><pre>{}</pre></div>",
                    esc(&cut(text, 4000))
                );
            }
            Message::Assistant { text, tool_calls } => {
                let _ = write!(out, "<div class=\"msg assistant\"><b>assistant</b>");
                if !text.trim().is_empty() {
                    let _ = write!(out, "<pre>{}</pre>", esc(&cut(text, 4000)));
                }
                for call in tool_calls {
                    let _ = write!(
                        out,
                        "<pre class=\"call\">→ {}({})</pre>",
                        esc(&call.name),
                        esc(&cut(&call.arguments, 2000))
                    );
                }
                out.push_str("</div>");
            }
            Message::Tool {
                name,
                content,
                is_error,
                ..
            } => {
                let _ = write!(
                    out,
                    "<div class=\"msg tool{}\"><b>{}{}</b><pre>{}</pre></div>",
                    if *is_error { " error" } else { "" },
                    esc(name),
                    if *is_error { " (error)" } else { "" },
                    esc(&cut(content, 2000))
                );
            }
        }
    }
    out
}

/// The chart: one bar per row, its interval as a whisker, the target as a mark.
fn chart(results: &[TaskResult]) -> String {
    let rows = rows(results);
    let (left, width, bar, gap) = (120.0, 480.0, 18.0, 10.0);
    let height = 30.0 + rows.len() as f64 * (bar + gap);
    let mut svg = format!(
        "<svg id=\"chart\" role=\"img\" aria-label=\"success by category\" width=\"{}\" height=\"{height}\" viewBox=\"0 0 {} {height}\">",
        left + width + 60.0,
        left + width + 60.0
    );
    for pct in [0, 25, 50, 75, 100] {
        let x = left + width * f64::from(pct) / 100.0;
        let _ = write!(
            svg,
            "<line x1=\"{x}\" y1=\"0\" x2=\"{x}\" y2=\"{}\" class=\"grid\"/><text x=\"{x}\" y=\"{}\" class=\"axis\">{pct}%</text>",
            height - 20.0,
            height - 6.0
        );
    }
    for (i, r) in rows.iter().enumerate() {
        let y = 4.0 + i as f64 * (bar + gap);
        let w = width * r.success_rate;
        let (lo, hi) = (
            left + width * r.success_interval[0],
            left + width * r.success_interval[1],
        );
        let mid = y + bar / 2.0;
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" class=\"label\">{}</text>\
             <rect x=\"{left}\" y=\"{y}\" width=\"{w:.1}\" height=\"{bar}\" class=\"bar\" data-category=\"{}\" data-rate=\"{:.3}\"/>\
             <line x1=\"{lo:.1}\" y1=\"{mid}\" x2=\"{hi:.1}\" y2=\"{mid}\" class=\"whisker\"/>\
             <text x=\"{}\" y=\"{}\" class=\"value\">{:.0}%</text>",
            left - 8.0,
            mid + 4.0,
            esc(&r.category),
            esc(&r.category),
            r.success_rate,
            left + width + 8.0,
            mid + 4.0,
            r.success_rate * 100.0
        );
        if let Some(target) = Category::parse(&r.category).map(Category::target) {
            let x = left + width * target;
            let _ = write!(
                svg,
                "<line x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{}\" class=\"target\"><title>target {:.0}%</title></line>",
                y - 2.0,
                y + bar + 2.0,
                target * 100.0
            );
        }
    }
    svg.push_str("</svg>");
    svg
}

/// The whole page.
pub fn render(suite: &Path, model: &str, results: &[TaskResult]) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>cairn eval: {}</title><style>{STYLE}</style></head><body>\
         <h1>cairn eval</h1><p class=\"meta\">model <code>{}</code> · suite <code>{}</code> · {} tasks</p>",
        esc(model),
        esc(model),
        esc(&suite.display().to_string()),
        results.len()
    );
    page.push_str("<table id=\"summary\"><thead><tr><th>category</th><th>tasks</th><th>success</th><th>95% interval</th><th>target</th><th>mean tool calls</th><th>well-formed calls</th><th>mean model requests</th><th>mean tokens in</th><th>mean tokens out</th><th>mean wall s</th></tr></thead><tbody>");
    for r in rows(results) {
        let target = Category::parse(&r.category)
            .map(|c| format!("{:.0}%", c.target() * 100.0))
            .unwrap_or_default();
        let _ = write!(
            page,
            "<tr data-category=\"{}\"><td>{}</td><td>{}</td><td>{:.0}%</td><td>{:.0}–{:.0}%</td><td>{target}</td><td>{:.1}</td><td>{}</td><td>{:.1}</td><td>{:.0}</td><td>{:.0}</td><td>{:.1}</td></tr>",
            esc(&r.category),
            esc(&r.category),
            r.tasks,
            r.success_rate * 100.0,
            r.success_interval[0] * 100.0,
            r.success_interval[1] * 100.0,
            r.mean_tool_calls,
            r.well_formed_share
                .map_or_else(|| "-".to_owned(), |s| format!("{:.0}%", s * 100.0)),
            r.mean_model_requests,
            r.mean_tokens_in,
            r.mean_tokens_out,
            r.mean_wall_secs
        );
    }
    page.push_str("</tbody></table>");
    let _ = write!(
        page,
        "<h2>Success by category</h2><p class=\"meta\">bars: success; whiskers: 95% interval; red marks: the targets</p>{}",
        chart(results)
    );
    let groups = failure_groups(results);
    if !groups.is_empty() {
        page.push_str("<h2>Failures by reason</h2><table id=\"reasons\"><thead><tr><th>reason</th><th>tasks</th><th></th></tr></thead><tbody>");
        for (kind, tasks) in &groups {
            let _ = write!(
                page,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(kind),
                tasks.len(),
                esc(&tasks.join(", "))
            );
        }
        page.push_str("</tbody></table><h2>Failed tasks</h2>");
    }
    for r in results.iter().filter(|r| !r.success) {
        let _ = write!(
            page,
            "<details class=\"task\" id=\"task-{}\"><summary><b>{}/{}</b>: {}</summary>\
             <p class=\"meta\">{} tool calls · {} model requests · {:.1} s</p>\
             <h3>Answer</h3><pre>{}</pre><h3>Transcript</h3>{}</details>",
            esc(&r.id),
            esc(r.category),
            esc(&r.id),
            esc(r.reason.as_deref().unwrap_or("failed")),
            r.tool_calls,
            r.model_requests,
            r.wall_secs,
            esc(&r.answer),
            transcript(&r.transcript)
        );
    }
    page.push_str("</body></html>\n");
    page
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}\
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}\
th:first-child,td:first-child{text-align:left}tr[data-category=all]{font-weight:bold}\
.meta{color:#666}pre{white-space:pre-wrap;background:#f6f6f6;padding:6px;margin:4px 0}\
details.task{border:1px solid #ddd;margin:6px 0;padding:6px}summary{cursor:pointer}\
.msg b{font-size:12px;color:#555}.msg.error pre{background:#fbeaea}pre.call{background:#eef3fb}\
svg .bar{fill:#4a7bd0}svg .whisker{stroke:#111;stroke-width:2}svg .target{stroke:#d33;stroke-width:3}\
svg .grid{stroke:#eee}svg .axis{font-size:11px;fill:#666;text-anchor:middle}\
svg .label{font-size:12px;text-anchor:end}svg .value{font-size:12px}";
