//! What the AWS tools share: the account they act on, the query APIs' versions and
//! parameters, reading their XML answers, times, and the tables of rows they answer with.
//!
//! Apart from `mod.rs` so that the tools import it without a cycle through the module that
//! lists them.

use cairn_config::CloudKind;
use cairn_toolkit::table::{Cell, Limits, Table};
use chrono::{DateTime, Duration, Utc};
use rmcp::model::CallToolResult;
use roxmltree::Node;

use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;

/// The EC2 query API version.
pub(crate) const EC2: &str = "2016-11-15";
/// The IAM query API version.
pub(crate) const IAM: &str = "2010-05-08";
/// The CloudFormation query API version.
pub(crate) const CLOUDFORMATION: &str = "2010-05-15";
/// The CloudWatch (metrics) query API version; its signing name is `monitoring`.
pub(crate) const CLOUDWATCH: &str = "2010-08-01";

/// The `aws` account a call names, or the only one.
pub(crate) fn account<'a>(host: &'a Cloud, name: Option<&str>) -> Result<&'a Account, CloudError> {
    host.account(name, &[CloudKind::Aws])
}

/// Query-protocol parameters, with AWS's numbered lists (`InstanceId.1`, `InstanceId.2`).
#[derive(Debug, Default)]
pub(crate) struct Params(pub Vec<(String, String)>);

impl Params {
    pub(crate) fn new() -> Params {
        Params::default()
    }

    /// Adds `key=value`.
    pub(crate) fn set(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.0.push((key.into(), value.into()));
        self
    }

    /// Adds `key=value` when there is a value.
    pub(crate) fn opt(&mut self, key: &str, value: Option<&str>) -> &mut Self {
        if let Some(v) = value {
            self.set(key, v);
        }
        self
    }

    /// Adds `{prefix}.1=..`, `{prefix}.2=..`.
    pub(crate) fn list<S: AsRef<str>>(&mut self, prefix: &str, values: &[S]) -> &mut Self {
        for (i, v) in values.iter().enumerate() {
            self.set(format!("{prefix}.{}", i + 1), v.as_ref());
        }
        self
    }
}

/// The direct children of `node` named `name`.
pub(crate) fn children<'a, 'i>(
    node: Node<'a, 'i>,
    name: &'a str,
) -> impl Iterator<Item = Node<'a, 'i>> + 'a {
    node.children()
        .filter(move |n| n.is_element() && n.tag_name().name() == name)
}

/// The first direct child of `node` named `name`.
pub(crate) fn child<'a, 'i>(node: Node<'a, 'i>, name: &str) -> Option<Node<'a, 'i>> {
    node.children()
        .find(|n| n.is_element() && n.tag_name().name() == name)
}

/// The text of the direct child of `node` at `path` (child names separated by `/`); empty
/// when absent.
pub(crate) fn text_at(node: Node<'_, '_>, path: &str) -> String {
    let mut current = Some(node);
    for part in path.split('/') {
        current = current.and_then(|n| child(n, part));
    }
    current
        .and_then(|n| n.text())
        .unwrap_or_default()
        .trim()
        .to_owned()
}

/// The items of a list in an answer: `node/{path}/{item}` (`member` in IAM, CloudFormation
/// and CloudWatch, `item` in EC2).
pub(crate) fn items<'a, 'i>(node: Node<'a, 'i>, path: &str, item: &'a str) -> Vec<Node<'a, 'i>> {
    let mut current = Some(node);
    for part in path.split('/') {
        current = current.and_then(|n| child(n, part));
    }
    current
        .map(|n| children(n, item).collect())
        .unwrap_or_default()
}

/// The element named `name` anywhere in the document (the `...Result` of a query answer).
pub(crate) fn find<'a, 'i>(doc: &'a roxmltree::Document<'i>, name: &str) -> Option<Node<'a, 'i>> {
    doc.descendants().find(|n| n.tag_name().name() == name)
}

/// A time the model gives: RFC 3339 (`2026-05-01T10:00:00Z`), a date (`2026-05-01`), or an
/// age before now (`15m`, `2h`, `3d`, `1w`, `90s`).
pub(crate) fn time_arg(what: &str, text: &str) -> Result<DateTime<Utc>, String> {
    let t = text.trim();
    if let Ok(at) = DateTime::parse_from_rfc3339(t) {
        return Ok(at.with_timezone(&Utc));
    }
    if let Ok(day) = chrono::NaiveDate::parse_from_str(t, "%Y-%m-%d")
        && let Some(at) = day.and_hms_opt(0, 0, 0)
    {
        return Ok(at.and_utc());
    }
    let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
    let unit = t[digits.len()..].trim();
    let n: i64 = digits.parse().map_err(|_| bad_time(what, text))?;
    let age = match unit {
        "s" => Duration::try_seconds(n),
        "m" | "min" => Duration::try_minutes(n),
        "h" => Duration::try_hours(n),
        "d" => Duration::try_days(n),
        "w" => Duration::try_weeks(n),
        _ => None,
    }
    .filter(|d| *d <= Duration::days(3660))
    .ok_or_else(|| bad_time(what, text))?;
    Ok(Utc::now() - age)
}

fn bad_time(what: &str, text: &str) -> String {
    format!(
        "`{what}`: {text:?} is not a time; give RFC 3339 (`2026-05-01T10:00:00Z`), a date \
         (`2026-05-01`) or an age such as `15m`, `2h`, `3d` (at most ten years)"
    )
}

/// A time as shown in tables: UTC to the second.
pub(crate) fn show_time(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%d %H:%M:%S").to_string()
}

/// A time from an answer (RFC 3339, or Lambda's `2019-02-12T22:41:19.617+0000`) as shown in
/// tables; what does not parse as it came.
pub(crate) fn show_timestamp(text: &str) -> String {
    let t = text.trim();
    DateTime::parse_from_rfc3339(t)
        .or_else(|_| DateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S%.f%z"))
        .map(|t| show_time(t.with_timezone(&Utc)))
        .unwrap_or_else(|_| t.to_owned())
}

/// A time in milliseconds since the epoch (CloudWatch Logs) as shown in tables.
pub(crate) fn show_millis(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms)
        .map(show_time)
        .unwrap_or_else(|| ms.to_string())
}

/// Rows shown when a call does not say (and the most it may ask for is [`MAX_ROWS`]).
pub(crate) const DEFAULT_ROWS: usize = 50;
/// The most rows one call shows.
pub(crate) const MAX_ROWS: usize = 200;

/// The rows a call asked for, within 1..=[`MAX_ROWS`].
pub(crate) fn rows_wanted(asked: Option<u32>) -> usize {
    asked
        .map(|n| n as usize)
        .unwrap_or(DEFAULT_ROWS)
        .clamp(1, MAX_ROWS)
}

/// The capped table a listing ends in: at most `max` rows (a service that ignores the page
/// size asked for is cut here), `more` says the service had more (how to page is in `hint`);
/// an empty value is shown as `-`.
pub(crate) fn table(
    heading: &str,
    columns: &[&str],
    mut rows: Vec<Vec<String>>,
    max: usize,
    more: bool,
    hint: &str,
) -> CallToolResult {
    // Rows past `max` that the service sent anyway have no page token: say how to see them.
    let cut_here = rows.len() > max;
    let hint = if cut_here && !more {
        "raise `max`"
    } else {
        hint
    };
    let more = more || cut_here;
    rows.truncate(max);
    let table = Table {
        columns: columns.iter().map(|c| (*c).to_owned()).collect(),
        rows: rows
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .map(|v| Cell::Text(if v.is_empty() { "-".into() } else { v }))
                    .collect()
            })
            .collect(),
        more,
    };
    let limits = Limits {
        max_rows: MAX_ROWS,
        max_bytes: 24 * 1024,
        max_cell_chars: 300,
    };
    table.result_hinting(heading, &limits, hint)
}

/// The note under a listing the service paged: how to ask for the next page.
pub(crate) fn next_page(argument: &str, token: &str) -> String {
    format!("more on the service: pass `{argument}: \"{token}\"` for the next page")
}

/// A failed call as the model reads it; a service that could not be reached (not a refusal)
/// says where to look.
pub(crate) fn said(e: CloudError) -> String {
    match &e {
        CloudError::Web(w) if !w.is_denial() => format!(
            "{e} (the service did not answer: check the account's `region` and `endpoint`, and \
             try again later)"
        ),
        _ => e.to_string(),
    }
}
