//! The small part of iCalendar (RFC 5545) the calendar tools need: one VEVENT written with
//! escaped text, folded lines and UTC or all-day times; and the VEVENTs of a calendar object
//! read back (summary, start, end, location, uid, whether it recurs), with UTC, TZID, floating
//! and date values kept as they were written.

use cairn_toolkit::ToolError;
use chrono::{DateTime, NaiveDate, Utc};

/// When an event starts or ends, as the tools take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum When {
    /// An instant (written in UTC).
    At(DateTime<Utc>),
    /// A whole day (all-day events; the end is exclusive).
    Day(NaiveDate),
}

impl When {
    /// `2026-12-03T09:00:00+01:00` (any offset, converted to UTC) or `2026-12-03` (all day).
    /// `invalid`: the caller names the argument (`start`, `from`) in front of the message.
    pub(crate) fn parse(text: &str) -> Result<When, ToolError> {
        let text = text.trim();
        if let Ok(t) = DateTime::parse_from_rfc3339(text) {
            return Ok(When::At(t.with_timezone(&Utc)));
        }
        if let Ok(d) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
            return Ok(When::Day(d));
        }
        Err(ToolError::invalid(format!(
            "{text:?} is not a time: give `2026-12-03T09:00:00+01:00` (with its offset, or Z for UTC) or a date `2026-12-03` for all day"
        )))
    }

    /// As the property value and its parameters: `:20261203T080000Z` or `;VALUE=DATE:20261203`.
    fn property(self) -> String {
        match self {
            When::At(t) => format!(":{}", t.format("%Y%m%dT%H%M%SZ")),
            When::Day(d) => format!(";VALUE=DATE:{}", d.format("%Y%m%d")),
        }
    }

    /// As people read it.
    pub(crate) fn shown(self) -> String {
        match self {
            When::At(t) => t.format("%Y-%m-%d %H:%M UTC").to_string(),
            When::Day(d) => format!("{} (all day)", d.format("%Y-%m-%d")),
        }
    }
}

/// A TEXT value escaped (`\\`, `\;`, `\,`, `\n`); CR dropped.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\;"),
            ',' => out.push_str("\\,"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            _ => out.push(c),
        }
    }
    out
}

/// A TEXT value unescaped.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n' | 'N') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// One content line folded at 75 octets (never inside a character), with CRLF.
fn fold(line: &str, out: &mut String) {
    let mut width = 0;
    for c in line.chars() {
        if width + c.len_utf8() > 75 {
            out.push_str("\r\n ");
            width = 1;
        }
        out.push(c);
        width += c.len_utf8();
    }
    out.push_str("\r\n");
}

/// A new event, as written.
pub(crate) struct NewEvent<'a> {
    pub uid: &'a str,
    pub summary: &'a str,
    pub start: When,
    pub end: When,
    pub location: Option<&'a str>,
    pub description: Option<&'a str>,
    /// Addresses, already checked to be plain addresses.
    pub attendees: &'a [String],
}

/// The calendar object of `event` (a VCALENDAR with one VEVENT), stamped `now`.
pub(crate) fn write_event(event: &NewEvent<'_>, now: DateTime<Utc>) -> String {
    let mut lines = vec![
        "BEGIN:VCALENDAR".to_owned(),
        "VERSION:2.0".to_owned(),
        "PRODID:-//cairn//calendar_create//EN".to_owned(),
        "BEGIN:VEVENT".to_owned(),
        format!("UID:{}", event.uid),
        format!("DTSTAMP:{}", now.format("%Y%m%dT%H%M%SZ")),
        format!("DTSTART{}", event.start.property()),
        format!("DTEND{}", event.end.property()),
        format!("SUMMARY:{}", escape(event.summary)),
    ];
    if let Some(l) = event.location {
        lines.push(format!("LOCATION:{}", escape(l)));
    }
    if let Some(d) = event.description {
        lines.push(format!("DESCRIPTION:{}", escape(d)));
    }
    for a in event.attendees {
        lines.push(format!("ATTENDEE;RSVP=TRUE:mailto:{a}"));
    }
    lines.extend(["END:VEVENT".to_owned(), "END:VCALENDAR".to_owned()]);
    let mut out = String::new();
    for l in &lines {
        fold(l, &mut out);
    }
    out
}

/// One event as read back; times as written (`2026-12-03 09:00 UTC`,
/// `2026-12-03 09:00 Europe/Berlin`, `2026-12-03 (all day)`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Event {
    pub uid: String,
    pub summary: String,
    pub start: String,
    pub end: String,
    pub location: String,
    /// A sortable form of the start (`20261203T090000`).
    pub sort_key: String,
    /// It recurs: an RRULE (not expanded: the start shown is the first occurrence), or a
    /// RECURRENCE-ID (one occurrence, as an expanding server gives it).
    pub repeats: bool,
}

/// The content lines of `text`, unfolded.
fn unfold(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for raw in text.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        match (raw.strip_prefix([' ', '\t']), lines.last_mut()) {
            (Some(rest), Some(last)) => last.push_str(rest),
            _ if raw.is_empty() => {}
            _ => lines.push(raw.to_owned()),
        }
    }
    lines
}

/// A property's parameters: upper-case names, unquoted values.
type Params = Vec<(String, String)>;

/// A content line split into its upper-case name, its parameters and its value; a colon
/// inside a quoted parameter value is not the separator.
fn split_line(line: &str) -> Option<(String, Params, &str)> {
    let mut quoted = false;
    let colon = line.char_indices().find_map(|(i, c)| match c {
        '"' => {
            quoted = !quoted;
            None
        }
        ':' if !quoted => Some(i),
        _ => None,
    })?;
    let (head, value) = (&line[..colon], &line[colon + 1..]);
    let mut parts = head.split(';');
    let name = parts.next()?.trim().to_ascii_uppercase();
    let params = parts
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| {
            (
                k.trim().to_ascii_uppercase(),
                v.trim_matches('"').to_owned(),
            )
        })
        .collect();
    Some((name, params, value))
}

/// A DTSTART/DTEND value as people read it, and its sortable form.
fn time_value(params: &Params, value: &str) -> (String, String) {
    let value = value.trim();
    let param = |k: &str| params.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let digits: String = value.chars().filter(char::is_ascii_digit).collect();
    let date = |d: &str| {
        if d.len() >= 8 {
            format!("{}-{}-{}", &d[0..4], &d[4..6], &d[6..8])
        } else {
            d.to_owned()
        }
    };
    if param("VALUE") == Some("DATE") || (digits.len() == 8 && !value.contains('T')) {
        return (format!("{} (all day)", date(&digits)), digits);
    }
    if digits.len() < 12 {
        return (value.to_owned(), digits);
    }
    let clock = format!("{}:{}", &digits[8..10], &digits[10..12]);
    let zone = if value.ends_with('Z') {
        "UTC".to_owned()
    } else if let Some(tz) = param("TZID") {
        tz.to_owned()
    } else {
        "(floating)".to_owned()
    };
    (format!("{} {clock} {zone}", date(&digits)), digits)
}

/// The VEVENTs of a calendar object (nested components such as VALARM are skipped).
pub(crate) fn parse_events(text: &str) -> Vec<Event> {
    let mut events = Vec::new();
    let mut current: Option<Event> = None;
    // Components nested inside the current VEVENT (VALARM): their properties are not the event's.
    let mut depth = 0usize;
    for line in unfold(text) {
        let Some((name, params, value)) = split_line(&line) else {
            continue;
        };
        let value_upper = value.trim().to_ascii_uppercase();
        match (name.as_str(), current.as_mut()) {
            ("BEGIN", None) if value_upper == "VEVENT" => current = Some(Event::default()),
            ("BEGIN", Some(_)) => depth += 1,
            ("END", Some(_)) if depth > 0 => depth -= 1,
            ("END", Some(_)) if value_upper == "VEVENT" => {
                events.extend(current.take());
            }
            (_, Some(_)) if depth > 0 => {}
            ("UID", Some(e)) => e.uid = value.trim().to_owned(),
            ("SUMMARY", Some(e)) => e.summary = unescape(value),
            ("LOCATION", Some(e)) => e.location = unescape(value),
            ("DTSTART", Some(e)) => (e.start, e.sort_key) = time_value(&params, value),
            ("DTEND", Some(e)) => e.end = time_value(&params, value).0,
            ("DURATION", Some(e)) if e.end.is_empty() => {
                e.end = format!("after {}", value.trim());
            }
            // A rule (not expanded), or one occurrence the server expanded.
            ("RRULE" | "RECURRENCE-ID", Some(e)) => e.repeats = true,
            _ => {}
        }
    }
    events
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn written_events_escape_fold_and_read_back() {
        let summary = "Review; budget, Q3\\Q4\nand more ".repeat(5);
        let event = NewEvent {
            uid: "u1@cairn",
            summary: &summary,
            start: When::parse("2026-12-03T09:00:00+01:00").unwrap(),
            end: When::parse("2026-12-03T10:30:00Z").unwrap(),
            location: Some("Room 4, floor 2"),
            description: None,
            attendees: &["bob@example.com".into()],
        };
        let text = write_event(&event, Utc::now());
        assert!(text.lines().all(|l| l.len() <= 76), "{text}");
        assert!(text.contains("DTSTART:20261203T080000Z\r\n"), "{text}");
        assert!(text.contains("LOCATION:Room 4\\, floor 2\r\n"), "{text}");
        let back = parse_events(&text);
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].summary, summary.replace('\r', ""));
        assert_eq!(back[0].start, "2026-12-03 08:00 UTC");
        assert_eq!(back[0].end, "2026-12-03 10:30 UTC");
        assert_eq!(back[0].location, "Room 4, floor 2");
        assert_eq!(back[0].uid, "u1@cairn");
    }

    #[test]
    fn tzid_dates_alarms_and_rules_are_read() {
        let text = "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:a\nDTSTART;TZID=\"Europe/Berlin\":20261203T090000\nDTEND;VALUE=DATE:20261204\nRRULE:FREQ=WEEKLY\nSUMMARY:Stand\n -up\nBEGIN:VALARM\nSUMMARY:not this\nEND:VALARM\nEND:VEVENT\nEND:VCALENDAR\n";
        let e = &parse_events(text)[0];
        assert_eq!(e.start, "2026-12-03 09:00 Europe/Berlin");
        assert_eq!(e.end, "2026-12-04 (all day)");
        assert_eq!(e.summary, "Stand-up");
        assert!(e.repeats);
        assert!(When::parse("2026-12-03T09:00").is_err());
        assert_eq!(
            When::parse("2026-12-03").unwrap().shown(),
            "2026-12-03 (all day)"
        );
    }
}
