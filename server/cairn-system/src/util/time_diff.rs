//! `time_diff`: the time between two times, or a time plus a duration such as `3d 4h`; weekdays
//! between them on request.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use chrono::{DateTime, Datelike, Duration, Months, Utc, Weekday};
use chrono_tz::Tz;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::system::System;
use crate::util::times::{localize, parse_time, parse_zone, show};

/// The `time_diff` tool.
pub struct TimeDiff;

/// Arguments of `time_diff`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The start time (same forms as time_convert: RFC 3339, Unix time, `2024-03-01 14:00`,
    /// `now`...).
    from: String,
    /// The end time; give this or `add`.
    #[serde(default)]
    to: Option<String>,
    /// A duration to add to `from` instead (negative with a leading `-`): numbers with units
    /// y, mo, w, d, h, m (minutes), s, ms, e.g. `3d 4h`, `-90m`, `1y 2mo`. Years, months, weeks
    /// and days follow the calendar in `zone` (across DST a day stays a day).
    #[serde(default)]
    add: Option<String>,
    /// The IANA zone for times without an offset and for calendar arithmetic (default UTC).
    #[serde(default)]
    zone: Option<String>,
    /// Also count business days (Monday to Friday; holidays not known) from `from`'s date,
    /// included, to `to`'s date, excluded.
    #[serde(default)]
    business_days: bool,
}

/// A duration as written: calendar months and days, and exact milliseconds.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    negative: bool,
    months: u32,
    days: u32,
    millis: i64,
}

/// `3d 4h`, `-1y 2mo`, `90m` as a [`Span`].
pub(crate) fn parse_span(s: &str) -> Result<Span, String> {
    let t = s.trim();
    let (negative, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let mut span = Span {
        negative,
        ..Span::default()
    };
    let compact: String = body.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.is_empty() {
        return Err(format!(
            "`{s}` has no duration: write e.g. `3d 4h` or `-90m`"
        ));
    }
    let mut rest = compact.as_str();
    while !rest.is_empty() {
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 {
            return Err(format!(
                "in `{s}`: expected a number at `{rest}` (units: y, mo, w, d, h, m, s, ms)"
            ));
        }
        let (num, tail) = rest.split_at(digits);
        let n: u32 = num
            .parse()
            .map_err(|_| format!("in `{s}`: {num} is too large"))?;
        let unit_len = tail.chars().take_while(char::is_ascii_alphabetic).count();
        let (unit, next) = tail.split_at(unit_len);
        let n64 = i64::from(n);
        let too_large = || format!("`{s}` is too large a duration");
        match unit.to_ascii_lowercase().as_str() {
            "y" | "yr" | "year" | "years" => {
                span.months = n
                    .checked_mul(12)
                    .and_then(|m| span.months.checked_add(m))
                    .ok_or_else(too_large)?
            }
            "mo" | "mon" | "month" | "months" => {
                span.months = span.months.checked_add(n).ok_or_else(too_large)?
            }
            "w" | "wk" | "week" | "weeks" => {
                span.days = n
                    .checked_mul(7)
                    .and_then(|d| span.days.checked_add(d))
                    .ok_or_else(too_large)?
            }
            "d" | "day" | "days" => span.days = span.days.checked_add(n).ok_or_else(too_large)?,
            "h" | "hr" | "hour" | "hours" => {
                span.millis = span.millis.saturating_add(n64 * 3_600_000)
            }
            "m" | "min" | "mins" | "minute" | "minutes" => {
                span.millis = span.millis.saturating_add(n64 * 60_000)
            }
            "s" | "sec" | "secs" | "second" | "seconds" => {
                span.millis = span.millis.saturating_add(n64 * 1000)
            }
            "ms" => span.millis = span.millis.saturating_add(n64),
            "" => {
                return Err(format!(
                    "in `{s}`: {num} has no unit (y, mo, w, d, h, m, s, ms)"
                ));
            }
            other => {
                return Err(format!(
                    "in `{s}`: unknown unit `{other}` (y, mo, w, d, h, m for minutes, s, ms)"
                ));
            }
        }
        rest = next;
    }
    Ok(span)
}

/// `t` plus `span`, calendar parts in `zone`.
pub(crate) fn add_span(
    t: DateTime<Utc>,
    span: &Span,
    zone: Tz,
) -> Result<(DateTime<Utc>, Option<String>), String> {
    let out_of_range = || "the result is out of the representable time range".to_owned();
    let mut local = t.with_timezone(&zone).naive_local();
    let months = Months::new(span.months);
    let days = chrono::Days::new(u64::from(span.days));
    local = if span.negative {
        local
            .checked_sub_months(months)
            .and_then(|l| l.checked_sub_days(days))
    } else {
        local
            .checked_add_months(months)
            .and_then(|l| l.checked_add_days(days))
    }
    .ok_or_else(out_of_range)?;
    let (mut utc, note) = if span.months == 0 && span.days == 0 {
        (t, None)
    } else {
        let p = localize(local, zone)?;
        (p.utc, p.note)
    };
    let exact = Duration::try_milliseconds(if span.negative {
        -span.millis
    } else {
        span.millis
    })
    .ok_or_else(out_of_range)?;
    utc = utc.checked_add_signed(exact).ok_or_else(out_of_range)?;
    Ok((utc, note))
}

/// `d` as `3 days 4 hours 5 minutes 6 seconds`.
fn human(d: Duration) -> String {
    let mut secs = d.num_seconds().unsigned_abs();
    let millis = (d.num_milliseconds().unsigned_abs()) % 1000;
    let mut parts = Vec::new();
    for (unit, size) in [
        ("day", 86_400),
        ("hour", 3600),
        ("minute", 60),
        ("second", 1),
    ] {
        let n = secs / size;
        secs %= size;
        if n > 0 {
            parts.push(format!("{n} {unit}{}", if n == 1 { "" } else { "s" }));
        }
    }
    if millis > 0 {
        parts.push(format!("{millis} ms"));
    }
    if parts.is_empty() {
        "0 seconds".to_owned()
    } else {
        parts.join(" ")
    }
}

/// Weekdays (Mon–Fri) from `a` (included) to `b` (excluded), negative when `b` is earlier.
pub(crate) fn business_days(a: chrono::NaiveDate, b: chrono::NaiveDate) -> i64 {
    let (lo, hi, sign) = if a <= b { (a, b, 1) } else { (b, a, -1) };
    let days = (hi - lo).num_days();
    let full_weeks = days / 7;
    let mut count = full_weeks * 5;
    let mut d = lo + Duration::days(full_weeks * 7);
    while d < hi {
        if !matches!(d.weekday(), Weekday::Sat | Weekday::Sun) {
            count += 1;
        }
        d += Duration::days(1);
    }
    sign * count
}

impl Tool for TimeDiff {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "time_diff";
    const TITLE: &'static str = "Time difference";
    const DESCRIPTION: &'static str = "The time between two times (in days, hours, minutes, and optionally Monday–Friday business days, holidays not known), or a time plus or minus a duration like `3d 4h` or `-2w`, with calendar days across DST in a given zone.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(_: &System, args: Args, _: CallContext) -> CallToolResult {
        let zone = match args.zone.as_deref().map(parse_zone).transpose() {
            Ok(z) => z,
            Err(e) => return error(e),
        };
        let tz = zone.unwrap_or(Tz::UTC);
        let from = match parse_time(&args.from, zone) {
            Ok(p) => p,
            Err(e) => return error(format!("from: {e}")),
        };
        let mut notes: Vec<String> = from.note.iter().map(|n| format!("from: {n}")).collect();
        let (to, line) = match (&args.to, &args.add) {
            (Some(_), Some(_)) | (None, None) => {
                return error(
                    "give either `to` (a second time) or `add` (a duration), exactly one",
                );
            }
            (Some(to), None) => match parse_time(to, zone) {
                Ok(p) => {
                    notes.extend(p.note.iter().map(|n| format!("to: {n}")));
                    (p.utc, None)
                }
                Err(e) => return error(format!("to: {e}")),
            },
            (None, Some(add)) => {
                let span = match parse_span(add) {
                    Ok(s) => s,
                    Err(e) => return error(e),
                };
                match add_span(from.utc, &span, tz) {
                    Ok((t, note)) => {
                        notes.extend(note);
                        (
                            t,
                            Some(format!("{} {add} = {}", show(from.utc, tz), show(t, tz))),
                        )
                    }
                    Err(e) => return error(e),
                }
            }
        };
        let d = to - from.utc;
        let mut out = String::new();
        for n in &notes {
            out.push_str(&format!("Note: {n}\n"));
        }
        if let Some(line) = line {
            out.push_str(&format!(
                "{line}\nRFC 3339: {}\nUnix time: {}\n",
                to.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true),
                to.timestamp()
            ));
        } else {
            out.push_str(&format!(
                "from {}\nto   {}\n",
                show(from.utc, tz),
                show(to, tz)
            ));
        }
        out.push_str(&format!(
            "difference: {}{} ({} seconds; {:.4} hours; {:.4} days)",
            if d < Duration::zero() { "minus " } else { "" },
            human(d),
            d.num_seconds(),
            d.num_milliseconds() as f64 / 3_600_000.0,
            d.num_milliseconds() as f64 / 86_400_000.0
        ));
        if args.business_days {
            let a = from.utc.with_timezone(&tz).date_naive();
            let b = to.with_timezone(&tz).date_naive();
            out.push_str(&format!(
                "\nbusiness days (Mon–Fri from {a}, included, to {b}, excluded; holidays not known): {}",
                business_days(a, b)
            ));
        }
        text(out)
    }
}
