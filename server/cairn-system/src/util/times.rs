//! Parsing what people and logs write for times and zones, shared by the time tools: IANA
//! zones (case-insensitive, with suggestions for unknown names), RFC 3339, RFC 2822, Unix
//! seconds or milliseconds, and common local forms read in a given zone, with DST gaps and
//! overlaps said rather than guessed silently.

use chrono::{DateTime, LocalResult, NaiveDate, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;

/// A zone the user named: an IANA zone, or UTC.
pub(crate) fn parse_zone(name: &str) -> Result<Tz, String> {
    let n = name.trim();
    if n.eq_ignore_ascii_case("utc") || n.eq_ignore_ascii_case("z") || n.eq_ignore_ascii_case("gmt")
    {
        return Ok(Tz::UTC);
    }
    if let Ok(tz) = n.parse::<Tz>() {
        return Ok(tz);
    }
    if let Some(tz) = chrono_tz::TZ_VARIANTS
        .iter()
        .find(|tz| tz.name().eq_ignore_ascii_case(n))
    {
        return Ok(*tz);
    }
    let suggestions = suggest(n);
    let hint = if suggestions.is_empty() {
        "use an IANA name such as Europe/Berlin, America/New_York or Asia/Tokyo (abbreviations like CET or PST are ambiguous)".to_owned()
    } else {
        format!("did you mean {}?", suggestions.join(", "))
    };
    Err(format!("unknown time zone `{n}`: {hint}"))
}

/// Up to five zone names close to `name`: containing it, or a few edits away.
fn suggest(name: &str) -> Vec<String> {
    let lower = name.to_lowercase().replace(' ', "_");
    let mut scored: Vec<(usize, &str)> = chrono_tz::TZ_VARIANTS
        .iter()
        .filter_map(|tz| {
            let full = tz.name().to_lowercase();
            let city = full.rsplit('/').next().unwrap_or(&full).to_owned();
            if lower.len() >= 3 && (full.contains(&lower) || lower.contains(&city)) {
                return Some((0, tz.name()));
            }
            let d = edit_distance(&lower, &city).min(edit_distance(&lower, &full));
            (d <= 3).then_some((d, tz.name()))
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(5)
        .map(|(_, n)| n.to_owned())
        .collect()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev.get(j).copied().unwrap_or(0) + usize::from(ca != *cb);
            let del = prev.get(j + 1).copied().unwrap_or(0) + 1;
            let ins = cur.get(j).copied().unwrap_or(0) + 1;
            if let Some(c) = cur.get_mut(j + 1) {
                *c = sub.min(del).min(ins);
            }
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

/// A parsed instant, and what the parse had to decide (an ambiguous local time).
#[derive(Debug, Clone)]
pub(crate) struct Parsed {
    pub(crate) utc: DateTime<Utc>,
    pub(crate) note: Option<String>,
}

const NAIVE_FORMATS: &[&str] = &[
    "%Y-%m-%d %H:%M:%S%.f",
    "%Y-%m-%dT%H:%M:%S%.f",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%dT%H:%M",
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d %H:%M",
    "%d.%m.%Y %H:%M:%S",
    "%d.%m.%Y %H:%M",
    "%d %b %Y %H:%M:%S",
    "%d %b %Y %H:%M",
    "%b %d %Y %H:%M",
    "%Y%m%dT%H%M%S",
];
const DATE_FORMATS: &[&str] = &["%Y-%m-%d", "%Y/%m/%d", "%d.%m.%Y", "%d %b %Y", "%b %d %Y"];

/// `input` as an instant. A time without an offset is read in `zone` (UTC when `None`).
pub(crate) fn parse_time(input: &str, zone: Option<Tz>) -> Result<Parsed, String> {
    let s = input.trim();
    if s.eq_ignore_ascii_case("now") {
        return Ok(Parsed {
            utc: Utc::now(),
            note: None,
        });
    }
    if let Ok(n) = s.parse::<i64>() {
        // Milliseconds once the number is too large for seconds of this era (past year 5138).
        let (t, unit) = if n.abs() >= 100_000_000_000 {
            (DateTime::from_timestamp_millis(n), "Unix milliseconds")
        } else {
            (DateTime::from_timestamp(n, 0), "Unix seconds")
        };
        return t
            .map(|utc| Parsed {
                utc,
                note: Some(format!("read {s} as {unit}")),
            })
            .ok_or_else(|| format!("{s} is out of the representable time range"));
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(Parsed {
            utc: t.with_timezone(&Utc),
            note: None,
        });
    }
    // RFC 3339 with a space for the `T`, as databases print it.
    if let Ok(t) = DateTime::parse_from_rfc3339(&s.replacen(' ', "T", 1)) {
        return Ok(Parsed {
            utc: t.with_timezone(&Utc),
            note: None,
        });
    }
    if let Ok(t) = DateTime::parse_from_rfc2822(s) {
        return Ok(Parsed {
            utc: t.with_timezone(&Utc),
            note: None,
        });
    }
    let (body, zone_from_text) = split_trailing_zone(s);
    let zone = zone_from_text.or(zone).unwrap_or(Tz::UTC);
    let naive = NAIVE_FORMATS
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(body, f).ok())
        .or_else(|| {
            DATE_FORMATS
                .iter()
                .find_map(|f| NaiveDate::parse_from_str(body, f).ok())
                .and_then(|d| d.and_hms_opt(0, 0, 0))
        })
        .ok_or_else(|| {
            format!(
                "cannot read `{s}` as a time: use RFC 3339 (2024-03-01T14:00:00+01:00), RFC 2822, Unix seconds, or `2024-03-01 14:00` with from_zone"
            )
        })?;
    localize(naive, zone)
}

/// `2024-03-01 14:00 Europe/Berlin`: a trailing zone name after the time.
fn split_trailing_zone(s: &str) -> (&str, Option<Tz>) {
    if let Some((body, last)) = s.rsplit_once(' ')
        && (last.contains('/') || last.eq_ignore_ascii_case("utc"))
        && let Ok(tz) = parse_zone(last)
    {
        return (body.trim(), Some(tz));
    }
    (s, None)
}

/// The local time `naive` in `zone`: refused inside a DST gap (naming the valid times around
/// it), the earlier of the two in an overlap (saying so).
pub(crate) fn localize(naive: NaiveDateTime, zone: Tz) -> Result<Parsed, String> {
    match zone.from_local_datetime(&naive) {
        LocalResult::Single(t) => Ok(Parsed {
            utc: t.with_timezone(&Utc),
            note: None,
        }),
        LocalResult::Ambiguous(a, b) => Ok(Parsed {
            utc: a.with_timezone(&Utc),
            note: Some(format!(
                "{naive} happens twice in {zone} (clocks were set back, the end of daylight saving time): it is {} ({}) the first time and {} ({}) the second; the first is used, give an offset to choose",
                a.format("%H:%M %Z"),
                a.offset().fix(),
                b.format("%H:%M %Z"),
                b.offset().fix()
            )),
        }),
        LocalResult::None => {
            let before = (1..=240)
                .map(|m| naive - chrono::Duration::minutes(m))
                .find_map(|n| zone.from_local_datetime(&n).earliest());
            let after = (1..=240)
                .map(|m| naive + chrono::Duration::minutes(m))
                .find_map(|n| zone.from_local_datetime(&n).earliest());
            let around = match (before, after) {
                (Some(b), Some(a)) => format!(
                    ": clocks jump from {} straight to {} (daylight saving time begins)",
                    (b.naive_local() + chrono::Duration::minutes(1)).format("%H:%M"),
                    a.format("%H:%M %Z")
                ),
                _ => String::new(),
            };
            Err(format!(
                "{naive} does not exist in {zone}{around}; give a time outside the gap or an explicit offset"
            ))
        }
    }
}

use chrono::Offset as _;

/// `t` in `zone`, as people read it: `2024-03-01 14:00:00 CET (+01:00), Friday`.
pub(crate) fn show(t: DateTime<Utc>, zone: Tz) -> String {
    let local = t.with_timezone(&zone);
    format!(
        "{} ({}), {}",
        local.format("%Y-%m-%d %H:%M:%S %Z"),
        local.offset().fix(),
        local.format("%A")
    )
}
