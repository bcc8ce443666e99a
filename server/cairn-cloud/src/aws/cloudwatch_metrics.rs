//! `cloudwatch_metrics`: one CloudWatch metric's statistics over a time range
//! (GetMetricStatistics), as a small table of datapoints.

use std::collections::BTreeMap;

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use chrono::{SecondsFormat, Utc};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::client::{
    CLOUDWATCH, Params, account, find, items, said, show_time, show_timestamp, table, text_at,
    time_arg,
};
use crate::cloud::Cloud;
use crate::request::xml;

/// The `cloudwatch_metrics` tool.
pub struct CloudwatchMetrics;

/// Arguments of `cloudwatch_metrics`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    account: Option<String>,
    /// The metric's namespace (`AWS/EC2`, `AWS/Lambda`, or a custom one).
    namespace: String,
    /// The metric (`CPUUtilization`, `Invocations`, ...).
    metric: String,
    /// The dimensions that pick the series, name to value (`{"InstanceId": "i-0abc"}`), at
    /// most 30.
    #[serde(default)]
    dimensions: BTreeMap<String, String>,
    /// From when: RFC 3339, a date, or an age (`15m`, `2h`, `3d`). Default: `3h`.
    start: Option<String>,
    /// Until when, in the same forms. Default: now.
    end: Option<String>,
    /// Seconds per datapoint: 60 or a multiple of 60. Default: 300.
    period: Option<u32>,
    /// Which statistics: `Average`, `Sum`, `Minimum`, `Maximum`, `SampleCount`. Default:
    /// `["Average", "Maximum"]`.
    statistics: Option<Vec<String>>,
}

impl Tool for CloudwatchMetrics {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "cloudwatch_metrics";
    const TITLE: &'static str = "CloudWatch metric statistics";
    const DESCRIPTION: &'static str = "Show a CloudWatch metric (namespace, name, dimensions) over a time range as a table of datapoints per period (Average/Sum/Minimum/Maximum/SampleCount); at most 1440 datapoints, so pick a longer `period` for long ranges.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Network;
    const READ_ONLY: bool = true;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        run(host, args, &cx).await.unwrap_or_else(error)
    }
}

const STATISTICS: &[&str] = &["Average", "Sum", "Minimum", "Maximum", "SampleCount"];
/// The most datapoints CloudWatch returns for one call.
const MAX_POINTS: i64 = 1440;

async fn run(host: &Cloud, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let account = account(host, args.account.as_deref()).map_err(said)?;
    let namespace = args.namespace.trim();
    let metric = args.metric.trim();
    if namespace.is_empty() || metric.is_empty() || namespace.len() > 255 || metric.len() > 255 {
        return Err("`namespace` and `metric` are names of 1 to 255 characters".into());
    }
    if args.dimensions.len() > 30 {
        return Err(format!(
            "{} dimensions given; CloudWatch takes at most 30",
            args.dimensions.len()
        ));
    }
    let start = time_arg("start", args.start.as_deref().unwrap_or("3h"))?;
    let end = match args.end.as_deref() {
        Some(e) => time_arg("end", e)?,
        None => Utc::now(),
    };
    if start >= end {
        return Err(format!(
            "`start` ({}) is not before `end` ({})",
            show_time(start),
            show_time(end)
        ));
    }
    let period = args.period.unwrap_or(300);
    if period < 60 || !period.is_multiple_of(60) {
        return Err(format!(
            "`period` {period} must be 60 or a multiple of 60 seconds"
        ));
    }
    let points = (end - start).num_seconds() / i64::from(period);
    if points > MAX_POINTS {
        let least = ((end - start).num_seconds() / MAX_POINTS / 60 + 1) * 60;
        return Err(format!(
            "{points} datapoints of {period} s in that range; CloudWatch returns at most {MAX_POINTS}: \
             use `period` {least} or more, or a shorter range"
        ));
    }
    let statistics = args
        .statistics
        .unwrap_or_else(|| vec!["Average".into(), "Maximum".into()]);
    if statistics.is_empty() {
        return Err("`statistics` is empty".into());
    }
    for s in &statistics {
        if !STATISTICS.contains(&s.as_str()) {
            return Err(format!(
                "`statistics`: {s:?} is not one of {}",
                STATISTICS.join(", ")
            ));
        }
    }
    let mut params = Params::new();
    params
        .set("Namespace", namespace)
        .set("MetricName", metric)
        .set(
            "StartTime",
            start.to_rfc3339_opts(SecondsFormat::Secs, true),
        )
        .set("EndTime", end.to_rfc3339_opts(SecondsFormat::Secs, true))
        .set("Period", period.to_string())
        .list("Statistics.member", &statistics);
    for (i, (name, value)) in args.dimensions.iter().enumerate() {
        params
            .set(format!("Dimensions.member.{}.Name", i + 1), name.as_str())
            .set(format!("Dimensions.member.{}.Value", i + 1), value.as_str());
    }
    let answer = host
        .aws_query(
            cx,
            account,
            "monitoring",
            CLOUDWATCH,
            "GetMetricStatistics",
            &params.0,
        )
        .await
        .map_err(said)?;
    let doc = xml("monitoring", &answer).map_err(said)?;
    let result = find(&doc, "GetMetricStatisticsResult")
        .ok_or("CloudWatch answered without GetMetricStatisticsResult")?;
    let mut points: Vec<(String, Vec<String>)> = items(result, "Datapoints", "member")
        .into_iter()
        .map(|p| {
            let mut row = vec![show_timestamp(&text_at(p, "Timestamp"))];
            row.extend(statistics.iter().map(|s| number(&text_at(p, s))));
            row.push(text_at(p, "Unit"));
            (text_at(p, "Timestamp"), row)
        })
        .collect();
    points.sort_by(|a, b| a.0.cmp(&b.0));
    let dims = if args.dimensions.is_empty() {
        String::new()
    } else {
        format!(
            " [{}]",
            args.dimensions
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let mut heading = format!(
        "{namespace} {metric}{dims} in {}, {} to {} UTC, {period} s periods",
        account.name,
        show_time(start),
        show_time(end)
    );
    if points.is_empty() {
        heading.push_str(
            "\n(no datapoints: check the namespace, metric and dimensions — they must match exactly — or widen the range)",
        );
    }
    let mut columns = vec!["time (UTC)"];
    columns.extend(statistics.iter().map(String::as_str));
    columns.push("unit");
    Ok(table(
        &heading,
        &columns,
        points.into_iter().map(|(_, r)| r).collect(),
        MAX_POINTS as usize,
        false,
        "use a longer `period` or a shorter range",
    ))
}

/// A statistic as shown: at most four decimals, no trailing zeros.
fn number(text: &str) -> String {
    match text.parse::<f64>() {
        Ok(v) => {
            let s = format!("{v:.4}");
            s.trim_end_matches('0').trim_end_matches('.').to_owned()
        }
        Err(_) => text.to_owned(),
    }
}
