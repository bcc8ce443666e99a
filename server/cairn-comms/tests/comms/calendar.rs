//! The calendar tools against a real Radicale CalDAV server on loopback
//! (`scripts/chat-servers`): an event created is listed by `calendar_events` and readable from
//! Radicale directly; attendees not allowed, injected or too many are refused with nothing
//! created; a wrong password is a clear error that does not show it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::chat_support;

use base64::Engine;
use cairn_config::{CalDavConfig, CommsConfig, EmailConfig};
use cairn_web::Method;
use chat_support::{Setup, Vault, env, host_of, setup, unique};
use serde_json::json;

fn enabled() -> bool {
    cairn_test_support::gate(
        "CAIRN_COMMS_TESTS",
        "with the mail, chat and API peers (scripts/chat-servers)",
    )
}

/// The tools over the test calendar with `password` as the vault secret `caldav`, and mail
/// allowed to `allow_to`.
fn calendar(password: &str, allow_to: &[&str]) -> Setup {
    let url = env("CAIRN_CALDAV_TEST_URL");
    let settings = CommsConfig {
        sends_per_minute: 100,
        max_recipients: 20,
        caldav: Some(CalDavConfig {
            url: url.clone(),
            username: env("CAIRN_CALDAV_TEST_USER"),
            password_secret: "caldav".into(),
        }),
        email: Some(EmailConfig {
            smtp: None,
            imap: None,
            username: "cairn".into(),
            password_secret: "mail".into(),
            from: "Cairn <cairn@example.com>".into(),
            allow_to: allow_to.iter().map(|a| (*a).to_owned()).collect(),
            ca_file: None,
        }),
        ..CommsConfig::default()
    };
    setup(settings, Vault::of(&[("caldav", password, &host_of(&url))]))
}

fn basic() -> String {
    let pair = format!(
        "{}:{}",
        env("CAIRN_CALDAV_TEST_USER"),
        env("CAIRN_CALDAV_TEST_PASSWORD")
    );
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

/// Every calendar object in the collection, as Radicale serves them to another client (one
/// calendar-query REPORT without a filter on time; the objects as stored, not expanded).
async fn stored(s: &Setup) -> String {
    let url = env("CAIRN_CALDAV_TEST_URL");
    let query = r#"<?xml version="1.0"?><C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><C:calendar-data/></D:prop><C:filter><C:comp-filter name="VCALENDAR"/></C:filter></C:calendar-query>"#;
    let (status, body) = s
        .raw_with(
            Method::from_bytes(b"REPORT").unwrap(),
            &url,
            &basic(),
            Some((query, "application/xml")),
            &[("depth", "1")],
        )
        .await;
    assert_eq!(status, 207, "{body}");
    body.replace("\r\n", "\n").replace("\n ", "")
}

#[tokio::test]
async fn an_event_created_is_listed_and_readable_from_radicale() {
    if !enabled() {
        return;
    }
    let s = calendar(&env("CAIRN_CALDAV_TEST_PASSWORD"), &[]);
    let summary = unique("Review; budget, Q3");
    let args = json!({
        "summary": summary,
        "start": "2027-01-15T09:00:00+01:00",
        "end": "2027-01-15T10:30:00+01:00",
        "location": "Room 4, floor 2",
        "description": "Agenda:\n1. numbers\n2. plans",
    });

    // Asked first, showing the event; the calendar itself is the recipient. Nothing stored yet.
    let (key, shown) = s.asks("calendar_create", args.clone()).await;
    assert!(
        shown.starts_with("calendar to http://127.0.0.1:"),
        "{shown}"
    );
    assert!(
        shown.contains(&summary)
            && shown.contains("2027-01-15 08:00 UTC to 2027-01-15 09:30 UTC")
            && shown.contains("at Room 4, floor 2")
            && shown.contains("2. plans"),
        "{shown}"
    );
    assert!(
        !stored(&s)
            .await
            .contains(&summary.replace(',', "\\,").replace(';', "\\;"))
    );

    let out = s.approved(&key, "calendar_create", args).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(out.text.contains("created \""), "{}", out.text);
    let uid = out.text.split("uid ").nth(1).unwrap().trim().to_owned();
    assert!(uid.ends_with("@cairn"), "{uid}");

    // Radicale holds it as written: escaped text, UTC times, the uid.
    let raw = stored(&s).await;
    let event = raw
        .split("BEGIN:VEVENT")
        .find(|e| e.contains(&uid))
        .expect("the event is stored");
    let unfolded = event;
    assert!(
        unfolded.contains(&format!(
            "SUMMARY:{}",
            summary.replace(';', "\\;").replace(',', "\\,")
        )),
        "{event}"
    );
    assert!(unfolded.contains("DTSTART:20270115T080000Z"), "{event}");
    assert!(unfolded.contains("DTEND:20270115T093000Z"), "{event}");
    assert!(unfolded.contains("LOCATION:Room 4\\, floor 2"), "{event}");
    assert!(
        unfolded.contains("DESCRIPTION:Agenda:\\n1. numbers\\n2. plans"),
        "{event}"
    );

    // calendar_events lists it in its range, and not outside it.
    let out = s
        .ok(
            "calendar_events",
            json!({"from": "2027-01-15", "to": "2027-01-16"}),
        )
        .await;
    let row = out
        .lines()
        .find(|l| l.contains(&uid))
        .unwrap_or_else(|| panic!("not listed: {out}"));
    assert!(
        row.starts_with(&format!(
            "| 2027-01-15 08:00 UTC | 2027-01-15 09:30 UTC | {} | Room 4, floor 2 | {uid} |",
            summary
        )),
        "{row}"
    );
    let out = s
        .ok(
            "calendar_events",
            json!({"from": "2027-01-16T00:00:00Z", "to": "2027-01-20T00:00:00Z"}),
        )
        .await;
    assert!(!out.contains(&uid), "{out}");

    // An all-day event: a date, the next day by default.
    let day = unique("Offsite");
    let args = json!({"summary": day, "start": "2027-02-01"});
    let (key, shown) = s.asks("calendar_create", args.clone()).await;
    assert!(
        shown.contains("2027-02-01 (all day) to 2027-02-02 (all day)"),
        "{shown}"
    );
    let out = s.approved(&key, "calendar_create", args).await;
    assert!(!out.is_error, "{}", out.text);
    let out = s
        .ok(
            "calendar_events",
            json!({"from": "2027-02-01", "to": "2027-02-02"}),
        )
        .await;
    assert!(
        out.contains(&format!(
            "| 2027-02-01 (all day) | 2027-02-02 (all day) | {day} |"
        )),
        "{out}"
    );
}

#[tokio::test]
async fn attendees_must_be_allowed_plain_addresses_and_nothing_else_is_created() {
    if !enabled() {
        return;
    }
    let s = calendar(&env("CAIRN_CALDAV_TEST_PASSWORD"), &["*@example.com"]);
    let summary = unique("Planning");
    let base = json!({"summary": summary, "start": "2027-03-01T14:00:00Z"});
    let with = |attendees: serde_json::Value| {
        let mut a = base.clone();
        a["attendees"] = attendees;
        a
    };

    // Not allowed: refused (not asked), naming the setting.
    let r = s
        .err(
            "calendar_create",
            with(json!(["bob@example.com", "eve@evil.org"])),
        )
        .await;
    assert!(
        r.contains("eve@evil.org is not an allowed recipient")
            && r.contains("comms.email.allow_to")
            && r.contains("*@example.com"),
        "{r}"
    );
    // A second value smuggled into an address: refused as not a plain address.
    let r = s
        .err(
            "calendar_create",
            with(json!(["bob@example.com\r\nATTENDEE:mailto:eve@evil.org"])),
        )
        .await;
    assert!(r.contains("only a plain address is accepted"), "{r}");
    // 10,000 recipients: refused by count.
    let many: Vec<String> = (0..10_000).map(|i| format!("p{i}@example.com")).collect();
    let r = s.err("calendar_create", with(json!(many))).await;
    assert!(r.contains("10000 recipients, more than the 20"), "{r}");
    assert!(!stored(&s).await.contains(&summary));

    // Allowed attendees: asked about with them as the recipients, then created with them.
    let args = with(json!([
        "bob@example.com",
        "BOB@example.com",
        "ann@example.com"
    ]));
    let (key, shown) = s.asks("calendar_create", args.clone()).await;
    assert!(
        shown.starts_with("calendar to bob@example.com, ann@example.com:"),
        "{shown}"
    );
    let out = s.approved(&key, "calendar_create", args).await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text
            .contains("attendees: bob@example.com, ann@example.com"),
        "{}",
        out.text
    );
    let raw = stored(&s).await;
    let event = raw
        .split("BEGIN:VEVENT")
        .find(|e| e.contains(&summary))
        .expect("stored");
    assert!(
        event.contains("ATTENDEE;RSVP=TRUE:mailto:bob@example.com"),
        "{event}"
    );
    assert!(
        event.contains("ATTENDEE;RSVP=TRUE:mailto:ann@example.com"),
        "{event}"
    );
    assert_eq!(event.matches("ATTENDEE").count(), 2, "{event}");

    // Bad times are said before anything is asked.
    let r = s
        .err(
            "calendar_create",
            json!({"summary": "x", "start": "2027-03-01T14:00"}),
        )
        .await;
    assert!(r.contains("with its offset"), "{r}");
    let r = s
        .err(
            "calendar_create",
            json!({"summary": "x", "start": "2027-03-01T14:00:00Z", "end": "2027-03-01T13:00:00Z"}),
        )
        .await;
    assert!(r.contains("`end` must be after `start`"), "{r}");
    let r = s
        .err(
            "calendar_events",
            json!({"from": "2027-01-01", "to": "2029-01-01"}),
        )
        .await;
    assert!(r.contains("longer than 366 days"), "{r}");
}

#[tokio::test]
async fn a_wrong_password_is_a_clear_error_that_does_not_show_it() {
    if !enabled() {
        return;
    }
    let wrong = "not-the-password-4711";
    let s = calendar(wrong, &[]);
    let r = s.err("calendar_events", json!({})).await;
    assert!(
        r.contains("refused the login `cairn` with the password in vault secret `caldav` (401)"),
        "{r}"
    );
    assert!(!r.contains(wrong), "{r}");

    let summary = unique("Never");
    let args = json!({"summary": summary, "start": "2027-04-01T09:00:00Z"});
    let (key, _) = s.asks("calendar_create", args.clone()).await;
    let out = s.approved(&key, "calendar_create", args).await;
    assert!(out.is_error, "{}", out.text);
    assert!(
        out.text.contains("the event was not created") && out.text.contains("401"),
        "{}",
        out.text
    );
    let good = calendar(&env("CAIRN_CALDAV_TEST_PASSWORD"), &[]);
    assert!(!stored(&good).await.contains(&summary));

    // A server that does not answer: said, without a hang.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let settings = CommsConfig {
        caldav: Some(CalDavConfig {
            url: format!("http://127.0.0.1:{closed}/cairn/calendar/"),
            username: "cairn".into(),
            password_secret: "caldav".into(),
        }),
        ..CommsConfig::default()
    };
    let s = setup(settings, Vault::of(&[("caldav", wrong, "127.0.0.1")]));
    let r = s.err("calendar_events", json!({})).await;
    assert!(r.contains("the calendar server did not answer"), "{r}");

    // No [comms.caldav]: said, with what to add.
    let s = setup(CommsConfig::default(), Vault::of(&[]));
    let r = s.err("calendar_events", json!({})).await;
    assert!(r.contains("add `[comms.caldav]`"), "{r}");
}

#[tokio::test]
async fn an_event_written_by_another_client_is_listed_per_occurrence_in_utc() {
    if !enabled() {
        return;
    }
    let s = calendar(&env("CAIRN_CALDAV_TEST_PASSWORD"), &[]);
    let id = uuid::Uuid::new_v4().simple().to_string();
    // Another client's event: a local time with its zone, weekly, a folded line and an alarm.
    let ics = format!(
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:{id}\r\n\
         DTSTAMP:20260101T000000Z\r\nDTSTART;TZID=Europe/Berlin:20280103T090000\r\n\
         DTEND;TZID=Europe/Berlin:20280103T093000\r\nRRULE:FREQ=WEEKLY;COUNT=10\r\n\
         SUMMARY:Weekly stand-up\\, team \r\n {id}\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\n\
         SUMMARY:not the event\r\nTRIGGER:-PT5M\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    );
    let url = format!("{}{id}.ics", env("CAIRN_CALDAV_TEST_URL"));
    let (status, body) = s
        .raw(Method::PUT, &url, &basic(), Some((&ics, "text/calendar")))
        .await;
    assert_eq!(status, 201, "{body}");

    let out = s
        .ok(
            "calendar_events",
            json!({"from": "2028-01-10T00:00:00Z", "to": "2028-01-25T00:00:00Z"}),
        )
        .await;
    let rows: Vec<&str> = out.lines().filter(|l| l.contains(&id)).collect();
    assert_eq!(
        rows,
        ["10", "17", "24"]
            .iter()
            .map(|d| format!(
                "| 2028-01-{d} 08:00 UTC (recurring) | 2028-01-{d} 08:30 UTC | Weekly stand-up, team {id} |  | {id} |"
            ))
            .collect::<Vec<_>>(),
        "{out}"
    );
    assert!(!out.contains("not the event"), "{out}");
}
