//! `time_now`: the current time in UTC, as Unix time, and in given zones.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use chrono::Utc;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::system::System;
use crate::util::times::{parse_zone, show};

/// Zones one call shows.
const MAX_ZONES: usize = 50;

/// The `time_now` tool.
pub struct TimeNow;

/// Arguments of `time_now`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// IANA time zones to show the time in as well (e.g. Europe/Berlin, America/New_York), at
    /// most 50.
    #[serde(default)]
    zones: Vec<String>,
}

impl Tool for TimeNow {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "time_now";
    const TITLE: &'static str = "Current time";
    const DESCRIPTION: &'static str = "The current date and time in UTC, as Unix seconds and milliseconds, and in any IANA time zones given (with their abbreviation and UTC offset).";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(_: &System, args: Args, _: CallContext) -> CallToolResult {
        if args.zones.len() > MAX_ZONES {
            return error(format!("at most {MAX_ZONES} zones per call"));
        }
        let zones = match args
            .zones
            .iter()
            .map(|z| parse_zone(z))
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(z) => z,
            Err(e) => return error(e),
        };
        let now = Utc::now();
        let mut out = format!(
            "UTC: {}\nUnix time: {} s ({} ms)",
            now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            now.timestamp(),
            now.timestamp_millis()
        );
        for z in zones {
            out.push_str(&format!("\n{}: {}", z.name(), show(now, z)));
        }
        text(out)
    }
}
