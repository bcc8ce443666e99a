//! `time_convert`: a time as written (RFC 3339, RFC 2822, Unix time, local forms in a zone)
//! shown in other zones and formats.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::system::System;
use crate::util::times::{parse_time, parse_zone, show};

/// Zones one call shows.
const MAX_ZONES: usize = 50;

/// The `time_convert` tool.
pub struct TimeConvert;

/// Arguments of `time_convert`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The time: RFC 3339 (`2024-03-01T14:00:00+01:00`), RFC 2822, Unix seconds or
    /// milliseconds, `now`, or a local form such as `2024-03-01 14:00`, `01.03.2024 14:00` or
    /// `2024-03-01` read in `from_zone`.
    time: String,
    /// The IANA zone a time without an offset is in (default UTC).
    #[serde(default)]
    from_zone: Option<String>,
    /// IANA zones to show it in (UTC is always shown), at most 50.
    #[serde(default)]
    to_zones: Vec<String>,
    /// An extra strftime format to show it in, per zone (e.g. `%d/%m/%Y %I:%M %p`).
    #[serde(default)]
    format: Option<String>,
}

impl Tool for TimeConvert {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "time_convert";
    const TITLE: &'static str = "Convert a time";
    const DESCRIPTION: &'static str = "Parse a time (RFC 3339, RFC 2822, Unix seconds/ms, or a local time like `2024-03-01 14:00` in from_zone) and show it in UTC, Unix time and other IANA zones; DST gaps and ambiguous times are explained, unknown zones get suggestions.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(_: &System, args: Args, _: CallContext) -> CallToolResult {
        if args.to_zones.len() > MAX_ZONES {
            return error(format!("at most {MAX_ZONES} zones per call"));
        }
        let from = match args.from_zone.as_deref().map(parse_zone).transpose() {
            Ok(z) => z,
            Err(e) => return error(e),
        };
        let zones = match args
            .to_zones
            .iter()
            .map(|z| parse_zone(z))
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(z) => z,
            Err(e) => return error(e),
        };
        let parsed = match parse_time(&args.time, from) {
            Ok(p) => p,
            Err(e) => return error(e),
        };
        let t = parsed.utc;
        let mut out = String::new();
        if let Some(note) = &parsed.note {
            out.push_str(&format!("Note: {note}\n"));
        }
        out.push_str(&format!(
            "UTC: {}\nRFC 3339: {}\nUnix time: {} s ({} ms)",
            show(t, chrono_tz::Tz::UTC),
            t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
            t.timestamp(),
            t.timestamp_millis()
        ));
        let mut shown = vec![chrono_tz::Tz::UTC];
        if let Some(f) = from
            && f != chrono_tz::Tz::UTC
        {
            shown.push(f);
        }
        for z in zones {
            if !shown.contains(&z) {
                shown.push(z);
            }
        }
        for z in shown.iter().skip(1) {
            out.push_str(&format!("\n{}: {}", z.name(), show(t, *z)));
        }
        if let Some(f) = &args.format {
            use std::fmt::Write as _;
            for z in &shown {
                let mut s = String::new();
                // A bad specifier is a formatting error, not a panic, when written this way.
                if write!(s, "{}", t.with_timezone(z).format(f)).is_err() {
                    return error(format!(
                        "`{f}` is not a valid strftime format (e.g. `%Y-%m-%d %H:%M`)"
                    ));
                }
                out.push_str(&format!("\n{} as `{f}`: {s}", z.name()));
            }
        }
        text(out)
    }
}
