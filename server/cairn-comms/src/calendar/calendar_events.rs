//! `calendar_events`: the events of the configured CalDAV calendar in a time range, with a
//! calendar-query REPORT the server filters, asking it to expand recurring events into their
//! occurrences in the range (in UTC); a server that does not expand gives the recurring event
//! once, marked as recurring.

use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool, ToolError};
use cairn_web::Method;
use chrono::{DateTime, Duration, Utc};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::CalDav;
use super::ical::{Event, When, parse_events};
use crate::comms::Comms;

/// Days shown by default, and the longest range one call may ask for.
const DEFAULT_DAYS: i64 = 7;
const MAX_DAYS: i64 = 366;
/// Events shown by default, and at most.
const DEFAULT_LIMIT: usize = 50;
const MAX_LIMIT: usize = 200;

/// The `calendar_events` tool.
pub struct CalendarEvents;

/// Arguments of `calendar_events`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Start of the range: `2026-12-03T09:00:00+01:00` or a date `2026-12-03` (midnight
    /// UTC). Default: now.
    from: Option<String>,
    /// End of the range, the same forms; at most 366 days after `from`. Default: 7 days after
    /// `from`.
    to: Option<String>,
    /// Events shown at most (1 to 200). Default: 50.
    #[schemars(range(min = 1, max = 200))]
    limit: Option<usize>,
}

impl Tool for CalendarEvents {
    type Host = Comms;
    type Args = Args;
    const NAME: &'static str = "calendar_events";
    const TITLE: &'static str = "Calendar events";
    const DESCRIPTION: &'static str = "List the events of the user's CalDAV calendar (`[comms.caldav]`) between two times (default: the next 7 days, at most a year): start, end, summary, location and uid; each occurrence of a recurring event is listed where the server expands them (CalDAV `expand`).";
    const CATEGORY: Category = Category::Communication;
    const EFFECT: Effect = Effect::Network;
    const READ_ONLY: bool = true;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Comms, args: Args, cx: CallContext) -> CallToolResult {
        let cal = match CalDav::of(host) {
            Ok(c) => c,
            Err(e) => return e,
        };
        let instant = |text: Option<&str>, default: DateTime<Utc>| match text {
            None => Ok(default),
            Some(t) => When::parse(t).map(|w| match w {
                When::At(t) => t,
                When::Day(d) => d.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc(),
            }),
        };
        let from = match instant(args.from.as_deref(), Utc::now()) {
            Ok(t) => t,
            Err(e) => return error(format!("`from`: {e}")),
        };
        let to = match instant(args.to.as_deref(), from + Duration::days(DEFAULT_DAYS)) {
            Ok(t) => t,
            Err(e) => return error(format!("`to`: {e}")),
        };
        if to <= from {
            return error("`to` must be after `from`");
        }
        if to - from > Duration::days(MAX_DAYS) {
            return error(format!(
                "the range is longer than {MAX_DAYS} days: ask for a shorter one"
            ));
        }
        let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return error(format!("`limit` must be 1 to {MAX_LIMIT}, not {limit}"));
        }
        let stamp = |t: DateTime<Utc>| t.format("%Y%m%dT%H%M%SZ").to_string();
        let query = format!(
            r#"<?xml version="1.0" encoding="utf-8"?>
<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
  <D:prop><D:getetag/><C:calendar-data><C:expand start="{0}" end="{1}"/></C:calendar-data></D:prop>
  <C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT">
    <C:time-range start="{0}" end="{1}"/>
  </C:comp-filter></C:comp-filter></C:filter>
</C:calendar-query>"#,
            stamp(from),
            stamp(to)
        );
        let report = Method::from_bytes(b"REPORT").unwrap_or(Method::POST);
        let response = match cal
            .send(
                report,
                &cal.url,
                (query, "application/xml; charset=utf-8"),
                &[("depth", "1")],
                &cx,
            )
            .await
        {
            Ok(r) => r,
            Err(e) => return error(format!("could not list the events: {e}")),
        };
        if response.truncated {
            return error(format!(
                "the calendar's answer was larger than the web guard's size cap ({} bytes read): ask for a shorter range",
                response.body.len()
            ));
        }
        let mut events = match calendar_data(&response.body) {
            Ok(e) => e,
            Err(e) => {
                return error(format!(
                    "the calendar server's answer could not be read: {e}"
                ));
            }
        };
        events.sort_by(|a, b| a.sort_key.cmp(&b.sort_key).then_with(|| a.uid.cmp(&b.uid)));
        let total = events.len();
        // An event without a location shows an empty cell, not the table's SQL-like `NULL`.
        let cell = Cell::Text;
        let table = Table {
            columns: ["start", "end", "summary", "location", "uid"]
                .map(String::from)
                .to_vec(),
            rows: events
                .into_iter()
                .take(limit)
                .map(|e| {
                    let start = if e.repeats {
                        format!("{} (recurring)", e.start)
                    } else {
                        e.start
                    };
                    vec![
                        cell(start),
                        cell(e.end),
                        cell(e.summary),
                        cell(e.location),
                        cell(e.uid),
                    ]
                })
                .collect(),
            more: total > limit,
        };
        let heading = format!(
            "{total} event{} from {} to {} (UTC) in {}",
            if total == 1 { "" } else { "s" },
            from.format("%Y-%m-%d %H:%M"),
            to.format("%Y-%m-%d %H:%M"),
            cal.url
        );
        table.result_hinting(
            &heading,
            &Limits {
                max_rows: limit,
                ..Limits::default()
            },
            "ask for a shorter range or a larger `limit`",
        )
    }
}

/// The events in the `calendar-data` of a 207 multistatus.
fn calendar_data(body: &[u8]) -> Result<Vec<Event>, ToolError> {
    let text = std::str::from_utf8(body).map_err(|_| ToolError::unreadable("it is not UTF-8"))?;
    let doc = roxmltree::Document::parse(text).map_err(ToolError::unreadable)?;
    Ok(doc
        .descendants()
        .filter(|n| n.has_tag_name(("urn:ietf:params:xml:ns:caldav", "calendar-data")))
        .filter_map(|n| n.text())
        .flat_map(parse_events)
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn multistatus_is_read_and_doctypes_are_refused() {
        let body = r#"<?xml version="1.0"?><multistatus xmlns="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><response><href>/c/a.ics</href><propstat><prop><C:calendar-data>BEGIN:VCALENDAR
BEGIN:VEVENT
UID:a
SUMMARY:One
DTSTART:20261203T090000Z
END:VEVENT
END:VCALENDAR
</C:calendar-data></prop></propstat></response></multistatus>"#;
        let events = calendar_data(body.as_bytes()).unwrap();
        assert_eq!(events[0].summary, "One");
        let bomb = r#"<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>"#;
        assert!(calendar_data(bomb.as_bytes()).is_err());
    }
}
