//! `calendar_create`: a new event in the configured CalDAV calendar (PUT of a new calendar
//! object with a generated uid, `If-None-Match: *` so nothing is overwritten), after the user
//! approved that exact event. Attendees must be addresses allowed in `[comms.email] allow_to`:
//! a server that schedules will invite them.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Method;
use chrono::{Duration, Utc};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::CalDav;
use super::ical::{NewEvent, When, write_event};
use crate::comms::Comms;
use crate::send::{Outgoing, SendRefusal};

/// Characters of the summary and location, and of the description, at most.
const MAX_SHORT: usize = 500;
const MAX_DESCRIPTION: usize = 8000;

/// The `calendar_create` tool.
pub struct CalendarCreate;

/// Arguments of `calendar_create`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The event's title (at most 500 characters).
    summary: String,
    /// When it starts: `2026-12-03T09:00:00+01:00` (with its offset, or Z) or a date
    /// `2026-12-03` for an all-day event.
    start: String,
    /// When it ends, the same form as `start` (for all-day events, the day after the last
    /// day). Default: an hour after the start, or the next day for all-day events.
    end: Option<String>,
    /// Where (at most 500 characters).
    location: Option<String>,
    /// Notes (at most 8000 characters).
    description: Option<String>,
    /// Email addresses to list as attendees; each must be allowed in `[comms.email] allow_to`.
    /// Default: none.
    #[serde(default)]
    attendees: Vec<String>,
}

impl Tool for CalendarCreate {
    type Host = Comms;
    type Args = Args;
    const NAME: &'static str = "calendar_create";
    const TITLE: &'static str = "Create a calendar event";
    const DESCRIPTION: &'static str = "Create an event in the user's CalDAV calendar (`[comms.caldav]`): summary, start, end, location, notes and optional attendees (addresses allowed in `[comms.email] allow_to`); the user approves the exact event first. Never changes or replaces existing events.";
    const CATEGORY: Category = Category::Communication;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Comms, args: Args, cx: CallContext) -> CallToolResult {
        let cal = match CalDav::of(host) {
            Ok(c) => c,
            Err(e) => return e,
        };
        let summary = args.summary.trim();
        if summary.is_empty() {
            return error("`summary` is empty: give the event a title");
        }
        for (field, value, max) in [
            ("summary", Some(summary), MAX_SHORT),
            ("location", args.location.as_deref(), MAX_SHORT),
            ("description", args.description.as_deref(), MAX_DESCRIPTION),
        ] {
            let count = value.map_or(0, |v| v.chars().count());
            if count > max {
                return error(format!(
                    "`{field}` has {count} characters, more than {max}: shorten it"
                ));
            }
        }
        let start = match When::parse(&args.start) {
            Ok(w) => w,
            Err(e) => return error(format!("`start`: {e}")),
        };
        let end = match args.end.as_deref().map(When::parse) {
            None => match start {
                When::At(t) => When::At(t + Duration::hours(1)),
                When::Day(d) => When::Day(d + Duration::days(1)),
            },
            Some(Ok(w)) => w,
            Some(Err(e)) => return error(format!("`end`: {e}")),
        };
        match (start, end) {
            (When::At(a), When::At(b)) if b <= a => {
                return error("`end` must be after `start`");
            }
            (When::Day(a), When::Day(b)) if b <= a => {
                return error(
                    "`end` must be after `start` (for all-day events, the day after the last day)",
                );
            }
            (When::At(_), When::Day(_)) | (When::Day(_), When::At(_)) => {
                return error("`start` and `end` must both be times or both be dates (all day)");
            }
            _ => {}
        }
        // A huge list is refused by its size before each address is looked at.
        let max = host.settings.max_recipients;
        if args.attendees.len() > max {
            return error(
                SendRefusal::TooMany {
                    service: "calendar".into(),
                    count: args.attendees.len(),
                    max,
                }
                .to_string(),
            );
        }
        let mut attendees: Vec<String> = Vec::new();
        for a in &args.attendees {
            let a = a.trim();
            if let Err(e) = check_address(a) {
                return error(format!("attendee {a:?}: {e}"));
            }
            if !attendees.iter().any(|x| x.eq_ignore_ascii_case(a)) {
                attendees.push(a.to_owned());
            }
        }
        let location = args
            .location
            .as_deref()
            .map(str::trim)
            .filter(|l| !l.is_empty());
        let description = args
            .description
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty());
        let mut shown = format!("event \"{summary}\", {} to {}", start.shown(), end.shown());
        if let Some(l) = location {
            shown.push_str(&format!(", at {l}"));
        }
        if let Some(d) = description {
            shown.push_str(&format!("\n\n{d}"));
        }
        // With attendees, they are who the event reaches (a scheduling server invites them);
        // without, only the user's own calendar.
        let (recipients, allow, setting) = if attendees.is_empty() {
            (
                vec![cal.url.clone()],
                vec![cal.url.clone()],
                "comms.caldav.url",
            )
        } else {
            let allow = host
                .settings
                .email
                .as_ref()
                .map(|e| e.allow_to.clone())
                .unwrap_or_default();
            (attendees.clone(), allow, "comms.email.allow_to")
        };
        let out = Outgoing {
            service: "calendar",
            recipients,
            text: shown,
            setting,
        };
        if let Err(refusal) = host.check_send(&out, &allow) {
            return refusal;
        }
        let id = uuid::Uuid::new_v4().to_string();
        let uid = format!("{id}@cairn");
        let body = write_event(
            &NewEvent {
                uid: &uid,
                summary,
                start,
                end,
                location,
                description,
                attendees: &attendees,
            },
            Utc::now(),
        );
        let url = format!("{}{id}.ics", cal.url);
        match cal
            .send(
                Method::PUT,
                &url,
                (body, "text/calendar; charset=utf-8"),
                &[("if-none-match", "*")],
                &cx,
            )
            .await
        {
            Ok(_) => {
                let mut out = format!(
                    "created \"{summary}\", {} to {}, in {}: uid {uid}",
                    start.shown(),
                    end.shown(),
                    cal.url
                );
                if !attendees.is_empty() {
                    out.push_str(&format!(
                        "\nattendees: {} (whether they get an invitation depends on the calendar server)",
                        attendees.join(", ")
                    ));
                }
                text(out)
            }
            Err(e) => error(format!("the event was not created: {e}")),
        }
    }
}

/// A plain address (`bob@example.com`): one `@`, no spaces, controls, quotes, angle brackets
/// or separators, so it cannot carry a second value into the event.
fn check_address(a: &str) -> Result<(), &'static str> {
    let Some((local, domain)) = a.split_once('@') else {
        return Err("not an email address");
    };
    let bad = |c: char| c.is_whitespace() || c.is_control() || "<>\"'(),;:[]\\@".contains(c);
    if local.is_empty() || domain.is_empty() || !domain.contains('.') || a.len() > 254 {
        return Err("not an email address");
    }
    if local.chars().any(bad) || domain.chars().any(bad) {
        return Err(
            "only a plain address is accepted (no name, spaces, line breaks or separators)",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_address;

    #[test]
    fn only_plain_addresses_are_attendees() {
        assert!(check_address("bob@example.com").is_ok());
        for bad in [
            "bob",
            "bob@",
            "@example.com",
            "bob@localhost",
            "Bob <bob@example.com>",
            "bob@example.com\r\nATTENDEE:mailto:eve@evil.org",
            "bob@example.com;RSVP=TRUE",
            "a@b@example.com",
        ] {
            assert!(check_address(bad).is_err(), "{bad}");
        }
    }
}
