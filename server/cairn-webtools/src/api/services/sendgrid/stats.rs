//! `sendgrid_stats`: the account's email statistics by day, week or month (requested,
//! delivered, bounced, blocked, deferred, spam reports, opens, clicks), with totals.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use chrono::NaiveDate;
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{PUBLIC, SERVICE};
use crate::api::services::Services;
use crate::api::services::github::arr;
use cairn_web::Method;

/// The metrics shown, in order, with their column names.
const METRICS: [(&str, &str); 8] = [
    ("requests", "requests"),
    ("delivered", "delivered"),
    ("bounces", "bounces"),
    ("blocks", "blocks"),
    ("deferred", "deferred"),
    ("spam_reports", "spam reports"),
    ("unique_opens", "unique opens"),
    ("unique_clicks", "unique clicks"),
];
/// The longest range asked for, in days.
const MAX_DAYS: i64 = 366;

/// The `sendgrid_stats` tool.
pub struct SendgridStats;

/// How rows are grouped.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Period {
    Day,
    Week,
    Month,
}

/// Arguments of `sendgrid_stats`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The first day, `YYYY-MM-DD` (default: 6 days before `end_date`, a week in all).
    start_date: Option<String>,
    /// The last day, `YYYY-MM-DD` (default today, UTC).
    end_date: Option<String>,
    /// One row per `day` (default), `week` or `month`.
    aggregated_by: Option<Period>,
}

impl Tool for SendgridStats {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "sendgrid_stats";
    const TITLE: &'static str = "SendGrid email statistics";
    const DESCRIPTION: &'static str = "Show SendGrid's email statistics per day, week or month (requested, delivered, bounced, blocked, deferred, spam reports, opens, clicks) with totals and the delivery rate.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let date = |name: &str, value: Option<&str>| -> Result<Option<NaiveDate>, String> {
            value
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(|v| {
                    NaiveDate::parse_from_str(v, "%Y-%m-%d")
                        .map_err(|_| format!("`{name}` {v:?} is not a date like 2024-01-31"))
                })
                .transpose()
        };
        let (start, end) = match (
            date("start_date", args.start_date.as_deref()),
            date("end_date", args.end_date.as_deref()),
        ) {
            (Ok(s), Ok(e)) => (s, e),
            (Err(e), _) | (_, Err(e)) => return error(e),
        };
        let end = end.unwrap_or_else(|| chrono::Utc::now().date_naive());
        let start = start.unwrap_or_else(|| end - chrono::Duration::days(6));
        if start > end {
            return error(format!("`start_date` {start} is after `end_date` {end}"));
        }
        let days = (end - start).num_days() + 1;
        if days > MAX_DAYS {
            return error(format!(
                "{start} to {end} is {days} days, more than {MAX_DAYS}: ask for a shorter range (or aggregated_by month, a year at a time)"
            ));
        }
        let period = match args.aggregated_by.unwrap_or(Period::Day) {
            Period::Day => "day",
            Period::Week => "week",
            Period::Month => "month",
        };
        let query = [
            ("start_date", start.to_string()),
            ("end_date", end.to_string()),
            ("aggregated_by", period.to_owned()),
        ];
        let json = match services
            .call(
                &cx,
                SERVICE,
                PUBLIC,
                Method::GET,
                "stats",
                &query,
                None,
                "the statistics",
            )
            .await
        {
            Ok((_, json)) => json,
            Err(e) => return error(e.to_string()),
        };
        let heading = format!("email statistics by {period}, {start} to {end}");
        let Some(periods) = json.as_array().filter(|a| !a.is_empty()) else {
            return text(format!("{heading}: no mail in that range"));
        };
        let mut totals = [0u64; METRICS.len()];
        let mut rows: Vec<Vec<Cell>> = Vec::new();
        for p in periods.iter().take(400) {
            let mut values = [0u64; METRICS.len()];
            // A period's `stats` has one entry for the account (more with categories): summed.
            for stat in arr(p, "stats") {
                let metrics = stat.get("metrics").unwrap_or(&Value::Null);
                for (i, (key, _)) in METRICS.iter().enumerate() {
                    values[i] += metrics.get(key).and_then(Value::as_u64).unwrap_or(0);
                }
            }
            for (t, v) in totals.iter_mut().zip(values) {
                *t += v;
            }
            let day = p.get("date").and_then(Value::as_str).unwrap_or("");
            rows.push(row(day.get(..10).unwrap_or(day), &values));
        }
        rows.push(row("total", &totals));
        let mut columns = vec![period.to_owned()];
        columns.extend(METRICS.iter().map(|(_, name)| (*name).to_owned()));
        columns.push("delivered %".to_owned());
        let table = Table {
            columns,
            rows,
            more: false,
        };
        table.result(&heading, &Limits::default())
    }
}

/// One row: the period, each metric, and delivered as a share of requested.
fn row(label: &str, values: &[u64; METRICS.len()]) -> Vec<Cell> {
    let mut cells = vec![label.to_owned()];
    cells.extend(values.iter().map(u64::to_string));
    // requests is METRICS[0], delivered METRICS[1].
    cells.push(if values[0] == 0 {
        "-".to_owned()
    } else {
        #[allow(clippy::cast_precision_loss)]
        let rate = values[1] as f64 * 100.0 / values[0] as f64;
        format!("{rate:.1}")
    });
    cells.into_iter().map(Cell::Text).collect()
}
