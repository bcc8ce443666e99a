//! `cron_explain`: a cron expression in plain English and its next runs in a zone. The parser is
//! our own: five fields (six with a leading seconds field), lists, ranges, steps, month and day
//! names, and the `@daily`-style macros; a malformed expression names the field and why.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use chrono::{DateTime, Datelike, Duration, LocalResult, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::system::System;
use crate::util::times::{parse_time, parse_zone, show};

/// Runs one call lists.
const MAX_RUNS: usize = 50;
/// Days searched for the next runs (Feb 29 on a given weekday recurs within 28 years).
const SEARCH_DAYS: i64 = 366 * 30;

/// The `cron_explain` tool.
pub struct CronExplain;

/// Arguments of `cron_explain`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The expression: `minute hour day-of-month month day-of-week` (e.g. `*/15 9-17 * * MON-FRI`),
    /// optionally with a leading seconds field, or @yearly, @monthly, @weekly, @daily, @hourly.
    expression: String,
    /// How many next runs to list, 0 to 50 (default 5).
    #[serde(default)]
    count: Option<usize>,
    /// The IANA zone the schedule runs in (default UTC).
    #[serde(default)]
    zone: Option<String>,
    /// Start listing runs after this time (same forms as time_convert; default now).
    #[serde(default)]
    after: Option<String>,
}

/// One item of a field: `*`, `5`, `1-5`, `*/15`, `10-50/20`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    All,
    One(u32),
    Range(u32, u32),
    Step(u32, u32, u32, bool),
}

/// One field's values and how it was written.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    allowed: Vec<bool>,
    items: Vec<Item>,
    star: bool,
}

impl Field {
    fn has(&self, v: u32) -> bool {
        self.allowed.get(v as usize).copied().unwrap_or(false)
    }
}

/// What each field is.
struct Spec {
    name: &'static str,
    min: u32,
    max: u32,
    names: &'static [&'static str],
}

const SECOND: Spec = Spec {
    name: "second",
    min: 0,
    max: 59,
    names: &[],
};
const MINUTE: Spec = Spec {
    name: "minute",
    min: 0,
    max: 59,
    names: &[],
};
const HOUR: Spec = Spec {
    name: "hour",
    min: 0,
    max: 23,
    names: &[],
};
const DOM: Spec = Spec {
    name: "day-of-month",
    min: 1,
    max: 31,
    names: &[],
};
const MONTH: Spec = Spec {
    name: "month",
    min: 1,
    max: 12,
    names: &[
        "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
    ],
};
// 7 is Sunday too, as in most crons.
const DOW: Spec = Spec {
    name: "day-of-week",
    min: 0,
    max: 7,
    names: &["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"],
};

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 8] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

fn value(spec: &Spec, s: &str, pos: usize) -> Result<u32, String> {
    let bad = |why: String| format!("field {pos} ({}) `{s}`: {why}", spec.name);
    let v = if let Some(i) = spec.names.iter().position(|n| n.eq_ignore_ascii_case(s)) {
        u32::try_from(i).unwrap_or(0) + spec.min
    } else {
        s.parse::<u32>().map_err(|_| {
            if matches!(s, "L" | "W" | "LW") || s.contains(['L', 'W', '#']) {
                bad("L, W and # (Quartz extensions) are not supported".to_owned())
            } else if spec.names.is_empty() {
                bad("not a number".to_owned())
            } else {
                bad(format!(
                    "not a number or a name ({})",
                    spec.names.join(", ")
                ))
            }
        })?
    };
    if v < spec.min || v > spec.max {
        return Err(bad(format!(
            "{v} is out of range {}–{}",
            spec.min, spec.max
        )));
    }
    Ok(v)
}

fn field(spec: &Spec, text: &str, pos: usize) -> Result<Field, String> {
    let mut allowed = vec![false; spec.max as usize + 1];
    let mut items = Vec::new();
    if text.is_empty() {
        return Err(format!("field {pos} ({}) is empty", spec.name));
    }
    for part in text.split(',') {
        let bad = |why: &str| format!("field {pos} ({}) `{part}`: {why}", spec.name);
        let (range, step) = match part.split_once('/') {
            Some((r, s)) => {
                let step: u32 = s
                    .parse()
                    .map_err(|_| bad("the step after `/` must be a number"))?;
                if step == 0 {
                    return Err(bad("a step of 0 never advances"));
                }
                (r, Some(step))
            }
            None => (part, None),
        };
        let (lo, hi, all) = if range == "*" || range == "?" {
            (spec.min, if spec.max == 7 { 6 } else { spec.max }, true)
        } else if let Some((a, b)) = range.split_once('-') {
            let (a, b) = (value(spec, a, pos)?, value(spec, b, pos)?);
            if a > b {
                return Err(bad(&format!("the range runs backwards ({a} > {b})")));
            }
            (a, b, false)
        } else {
            let v = value(spec, range, pos)?;
            // `5/15` means from 5 to the end, every 15.
            (v, if step.is_some() { spec.max } else { v }, false)
        };
        let step_by = step.unwrap_or(1);
        let mut v = lo;
        while v <= hi {
            if let Some(slot) = allowed.get_mut(v as usize) {
                *slot = true;
            }
            // A huge step ends the loop instead of overflowing.
            match v.checked_add(step_by) {
                Some(next) => v = next,
                None => break,
            }
        }
        items.push(match (all, step) {
            (true, None) => Item::All,
            (_, Some(s)) => Item::Step(lo, hi, s, all),
            (false, None) if lo == hi => Item::One(lo),
            (false, None) => Item::Range(lo, hi),
        });
    }
    if spec.max == 7 {
        // Sunday is 0 and 7.
        let sunday =
            allowed.first().copied().unwrap_or(false) || allowed.get(7).copied().unwrap_or(false);
        if let Some(s) = allowed.get_mut(0) {
            *s = sunday;
        }
    }
    let star = items
        .iter()
        .all(|i| matches!(i, Item::All | Item::Step(_, _, 1, true)));
    Ok(Field {
        allowed,
        items,
        star,
    })
}

/// A parsed expression.
#[derive(Debug, Clone)]
pub(crate) struct Cron {
    seconds: Option<Field>,
    minute: Field,
    hour: Field,
    dom: Field,
    month: Field,
    dow: Field,
}

/// `expr` parsed, or which field is wrong and why.
pub(crate) fn parse(expr: &str) -> Result<Cron, String> {
    let e = expr.trim();
    let expanded = match e.to_ascii_lowercase().as_str() {
        "@yearly" | "@annually" => "0 0 1 1 *",
        "@monthly" => "0 0 1 * *",
        "@weekly" => "0 0 * * 0",
        "@daily" | "@midnight" => "0 0 * * *",
        "@hourly" => "0 * * * *",
        "@reboot" => {
            return Err(
                "@reboot runs at boot, not on a schedule: there are no next runs".to_owned(),
            );
        }
        m if m.starts_with('@') => {
            return Err(format!(
                "unknown macro `{e}` (known: @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly)"
            ));
        }
        _ => e,
    };
    let parts: Vec<&str> = expanded.split_whitespace().collect();
    let (seconds, rest) = match parts.len() {
        5 => (None, parts.as_slice()),
        6 => (
            Some(field(
                &SECOND,
                parts.first().copied().unwrap_or_default(),
                1,
            )?),
            parts.get(1..).unwrap_or_default(),
        ),
        n => {
            return Err(format!(
                "expected 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds first, got {n}"
            ));
        }
    };
    let off = usize::from(seconds.is_some());
    let get = |i: usize| rest.get(i).copied().unwrap_or_default();
    Ok(Cron {
        seconds,
        minute: field(&MINUTE, get(0), 1 + off)?,
        hour: field(&HOUR, get(1), 2 + off)?,
        dom: field(&DOM, get(2), 3 + off)?,
        month: field(&MONTH, get(3), 4 + off)?,
        dow: field(&DOW, get(4), 5 + off)?,
    })
}

fn phrase(f: &Field, unit: &str, show_value: &dyn Fn(u32) -> String) -> String {
    f.items
        .iter()
        .map(|i| match i {
            Item::All => format!("every {unit}"),
            Item::One(v) => show_value(*v),
            Item::Range(a, b) => format!("{} through {}", show_value(*a), show_value(*b)),
            Item::Step(a, b, s, all) => {
                if *all {
                    format!("every {s} {unit}s")
                } else {
                    format!(
                        "every {s} {unit}s from {} through {}",
                        show_value(*a),
                        show_value(*b)
                    )
                }
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The expression in English.
pub(crate) fn explain(c: &Cron) -> String {
    let num = |v: u32| v.to_string();
    let single = |f: &Field| match f.items.as_slice() {
        [Item::One(v)] => Some(*v),
        _ => None,
    };
    let mut out = String::new();
    let sec = c.seconds.as_ref().and_then(single).unwrap_or(0);
    match (
        single(&c.hour),
        single(&c.minute),
        c.seconds.as_ref().is_none_or(|s| single(s).is_some()),
    ) {
        (Some(h), Some(m), true) => {
            out.push_str(&format!("at {h:02}:{m:02}"));
            if sec != 0 {
                out.push_str(&format!(":{sec:02}"));
            }
        }
        _ => {
            if let Some(s) = &c.seconds {
                out.push_str(&format!("at second {}, ", phrase(s, "second", &num)));
            }
            if c.minute.star {
                out.push_str(&phrase(&c.minute, "minute", &num));
            } else {
                out.push_str(&format!("at minute {}", phrase(&c.minute, "minute", &num)));
            }
            if !c.hour.star {
                out.push_str(&format!(" past hour {}", phrase(&c.hour, "hour", &num)));
            } else if !matches!(c.hour.items.as_slice(), [Item::All]) {
                out.push_str(&format!(", {}", phrase(&c.hour, "hour", &num)));
            }
        }
    }
    let month = |v: u32| {
        MONTHS
            .get(v as usize - 1)
            .copied()
            .unwrap_or("?")
            .to_owned()
    };
    let day = |v: u32| DAYS.get(v as usize).copied().unwrap_or("?").to_owned();
    match (c.dom.star, c.dow.star) {
        (true, true) => {}
        (false, true) => out.push_str(&format!(
            ", on day-of-month {}",
            phrase(&c.dom, "day", &num)
        )),
        (true, false) => out.push_str(&format!(", on {}", phrase(&c.dow, "day", &day))),
        (false, false) => out.push_str(&format!(
            ", on day-of-month {} OR on {} (cron runs when either matches)",
            phrase(&c.dom, "day", &num),
            phrase(&c.dow, "day", &day)
        )),
    }
    if !c.month.star {
        out.push_str(&format!(", in {}", phrase(&c.month, "month", &month)));
    }
    out
}

fn day_matches(c: &Cron, d: NaiveDate) -> bool {
    if !c.month.has(d.month()) {
        return false;
    }
    let dom = c.dom.has(d.day());
    let dow = c.dow.has(d.weekday().num_days_from_sunday());
    match (c.dom.star, c.dow.star) {
        (true, true) => true,
        (false, true) => dom,
        (true, false) => dow,
        // Both restricted: either matches (POSIX cron).
        (false, false) => dom || dow,
    }
}

/// The next `count` runs strictly after `after`, in `zone`; notes on skipped or doubled local
/// times around DST changes.
pub(crate) fn next_runs(
    c: &Cron,
    after: DateTime<Utc>,
    zone: Tz,
    count: usize,
) -> (Vec<DateTime<Utc>>, Vec<String>) {
    let mut runs = Vec::new();
    let mut notes = Vec::new();
    let start = after.with_timezone(&zone).date_naive();
    let seconds: Vec<u32> = match &c.seconds {
        Some(s) => (0..60).filter(|v| s.has(*v)).collect(),
        None => vec![0],
    };
    for offset in 0..SEARCH_DAYS {
        let Some(d) = start.checked_add_signed(Duration::days(offset)) else {
            break;
        };
        if !day_matches(c, d) {
            continue;
        }
        for h in (0..24).filter(|h| c.hour.has(*h)) {
            for m in (0..60).filter(|m| c.minute.has(*m)) {
                for s in &seconds {
                    let Some(naive) = d.and_hms_opt(h, m, *s) else {
                        continue;
                    };
                    let t = match zone.from_local_datetime(&naive) {
                        LocalResult::Single(t) => t,
                        LocalResult::Ambiguous(t, _) => {
                            notes.push(format!("{naive} happens twice in {zone} (DST ends): counted once, at its first occurrence"));
                            t
                        }
                        LocalResult::None => {
                            notes.push(format!("{naive} does not exist in {zone} (DST begins): skipped here (some crons run it after the jump)"));
                            continue;
                        }
                    };
                    let t = t.with_timezone(&Utc);
                    if t > after {
                        runs.push(t);
                        if runs.len() >= count {
                            return (runs, notes);
                        }
                    }
                }
            }
        }
    }
    (runs, notes)
}

impl Tool for CronExplain {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "cron_explain";
    const TITLE: &'static str = "Explain a cron expression";
    const DESCRIPTION: &'static str = "Explain a cron expression (5 fields, or 6 with seconds; @daily-style macros) in plain English and list its next runs in a time zone; a malformed expression gets which field is wrong and why.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(_: &System, args: Args, _: CallContext) -> CallToolResult {
        let count = args.count.unwrap_or(5);
        if count > MAX_RUNS {
            return error(format!("count must be 0 to {MAX_RUNS} (was {count})"));
        }
        let zone = match args.zone.as_deref().map(parse_zone).transpose() {
            Ok(z) => z.unwrap_or(Tz::UTC),
            Err(e) => return error(e),
        };
        let after = match args
            .after
            .as_deref()
            .map(|a| parse_time(a, Some(zone)))
            .transpose()
        {
            Ok(a) => a.map_or_else(Utc::now, |p| p.utc),
            Err(e) => return error(format!("after: {e}")),
        };
        let cron = match parse(&args.expression) {
            Ok(c) => c,
            Err(e) => {
                return error(format!(
                    "invalid cron expression `{}`: {e}",
                    args.expression.trim()
                ));
            }
        };
        let mut out = format!("`{}`: {}", args.expression.trim(), explain(&cron));
        if count > 0 {
            // The search is bounded in days, but a busy schedule fills `count` quickly; off
            // the executor anyway, since a sparse one walks up to 30 years of days.
            let c2 = cron.clone();
            let found =
                tokio::task::spawn_blocking(move || next_runs(&c2, after, zone, count)).await;
            let Ok((runs, mut notes)) = found else {
                return error("internal error: the search for the next runs failed");
            };
            if runs.is_empty() {
                out.push_str("\nIt never runs (no date matches, e.g. February 30).");
            } else {
                out.push_str(&format!(
                    "\nNext {} runs in {} after {}:",
                    runs.len(),
                    zone.name(),
                    show(after, zone)
                ));
                for r in &runs {
                    out.push_str(&format!("\n- {}", show(*r, zone)));
                }
            }
            notes.dedup();
            for n in notes.iter().take(5) {
                out.push_str(&format!("\nNote: {n}"));
            }
        }
        text(out)
    }
}
