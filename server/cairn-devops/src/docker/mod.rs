//! The Docker engine through bollard: containers, images, networks, volumes and Compose projects.
//!
//! Every tool reaches the engine over the sandbox service's connection ([`docker`]), and every
//! engine call is bounded in time and cancellable ([`timed`]). What cairn made is told apart by
//! labels: `cairn.sandbox` on the sandbox's containers and volumes, [`BUILT_LABEL`] on what
//! `docker_build` makes. Removing or pruning anything else needs the user's approval of that
//! exact object, once ([`strict_question`]).

pub(crate) mod build;
pub(crate) mod compose_logs;
pub(crate) mod compose_status;
pub(crate) mod containers;
pub(crate) mod images;
pub(crate) mod inspect;
pub(crate) mod lifecycle;
pub(crate) mod logs;
pub(crate) mod networks;
pub(crate) mod prune;
pub(crate) mod remove;
pub(crate) mod restart;
pub(crate) mod start;
pub(crate) mod stats;
pub(crate) mod stop;
pub(crate) mod volumes;

use std::collections::HashMap;
use std::future::Future;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bollard::Docker;
use bollard::models::ContainerInspectResponse;
use bollard::query_parameters::ListContainersOptions;
use cairn_agent::tools::CallContext;
use cairn_sandbox::engine::LABEL as SANDBOX_LABEL;

use crate::DevOps;

/// Label `docker_build` puts on the images it builds (and that their containers inherit).
pub(crate) const BUILT_LABEL: &str = "cairn.built";

/// How long one engine request may take before the tool gives up.
pub(crate) const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The engine, or a message saying it does not answer and how to fix that.
pub(crate) async fn docker(host: &DevOps) -> Result<Docker, String> {
    match tokio::time::timeout(Duration::from_secs(15), host.sandbox.engine()).await {
        Ok(Ok(engine)) => Ok(engine.docker().clone()),
        Ok(Err(e)) => Err(format!(
            "{e}. `cairn doctor` checks the engine; `scripts/sandbox-images` builds cairn's images"
        )),
        Err(_) => Err(
            "the container engine gave no answer within 15 s; `cairn doctor` checks it".to_owned(),
        ),
    }
}

/// `request`, within [`CALL_TIMEOUT`] and the run's cancellation; an engine error is said as
/// `what: reason`.
pub(crate) async fn timed<T>(
    cx: &CallContext,
    what: &str,
    request: impl Future<Output = Result<T, bollard::errors::Error>>,
) -> Result<T, String> {
    tokio::select! {
        () = cx.cancel.cancelled() => Err(format!("{what}: cancelled")),
        r = tokio::time::timeout(CALL_TIMEOUT, request) => match r {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(format!("{what}: {}", engine_error(&e))),
            Err(_) => Err(format!(
                "{what}: the engine gave no answer within {} s",
                CALL_TIMEOUT.as_secs()
            )),
        },
    }
}

/// The engine's error without its HTTP wrapping.
pub(crate) fn engine_error(e: &bollard::errors::Error) -> String {
    match e {
        bollard::errors::Error::DockerResponseServerError { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// Whether an engine error is "no such object".
pub(crate) fn is_not_found(e: &bollard::errors::Error) -> bool {
    matches!(
        e,
        bollard::errors::Error::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}

/// Whether an object with these labels was made by cairn (a sandbox, or built by
/// `docker_build`).
pub(crate) fn is_cairns(labels: Option<&HashMap<String, String>>) -> bool {
    labels.is_some_and(|l| l.contains_key(SANDBOX_LABEL) || l.contains_key(BUILT_LABEL))
}

/// The first 12 characters of an id, without its `sha256:` prefix.
pub(crate) fn short_id(id: &str) -> String {
    id.trim_start_matches("sha256:").chars().take(12).collect()
}

/// `name` checked as an engine object's name or reference before it goes into a request's
/// path: names are `[A-Za-z0-9][A-Za-z0-9_.-]*`, image references add `:`, `/` and `@`. A `..`,
/// `?` or `%` could otherwise reach another endpoint of the engine's API.
pub(crate) fn check_name<'a>(kind: &str, name: &'a str) -> Result<&'a str, String> {
    let name = name.trim();
    let name = if kind == "image" {
        name
    } else {
        name.strip_prefix('/').unwrap_or(name)
    };
    let extra: &[char] = if kind == "image" {
        &[':', '/', '@']
    } else {
        &[]
    };
    let valid = name.len() <= 256
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c) || extra.contains(&c))
        && !name.split('/').any(|part| part == ".." || part == ".");
    if valid {
        Ok(name)
    } else {
        Err(format!(
            "`{name}` is not a valid {kind} name or id (letters, digits, `_`, `.`, `-`{})",
            if kind == "image" {
                ", and `:`, `/`, `@` in references"
            } else {
                ""
            }
        ))
    }
}

/// One container, by id, id prefix or name; or "no container named X" with close names.
pub(crate) async fn find_container(
    docker: &Docker,
    cx: &CallContext,
    name: &str,
) -> Result<ContainerInspectResponse, String> {
    if name.trim().is_empty() {
        return Err("name a container (its name or id); `docker_containers` lists them".into());
    }
    let name = check_name("container", name)?;
    let inspected = tokio::select! {
        () = cx.cancel.cancelled() => return Err("cancelled".into()),
        r = tokio::time::timeout(CALL_TIMEOUT, docker.inspect_container(name, None)) => r,
    };
    match inspected {
        Ok(Ok(c)) => Ok(c),
        Ok(Err(e)) if is_not_found(&e) => {
            let names = container_names(docker, cx).await.unwrap_or_default();
            Err(not_found("container", name, &names, "docker_containers"))
        }
        Ok(Err(e)) => Err(format!("inspecting container {name}: {}", engine_error(&e))),
        Err(_) => Err(format!(
            "inspecting container {name}: the engine gave no answer within {} s",
            CALL_TIMEOUT.as_secs()
        )),
    }
}

/// The names of every container, running or not.
async fn container_names(docker: &Docker, cx: &CallContext) -> Result<Vec<String>, String> {
    let options = ListContainersOptions {
        all: true,
        ..Default::default()
    };
    let list = timed(
        cx,
        "listing containers",
        docker.list_containers(Some(options)),
    )
    .await?;
    Ok(list.iter().filter_map(container_name).collect())
}

/// A container summary's name, without the leading `/`.
pub(crate) fn container_name(c: &bollard::models::ContainerSummary) -> Option<String> {
    c.names
        .as_ref()
        .and_then(|n| n.first())
        .map(|n| n.trim_start_matches('/').to_owned())
}

/// "no KIND named NAME", with the known names close to it, or where to list them.
pub(crate) fn not_found(kind: &str, name: &str, known: &[String], lister: &str) -> String {
    let close = close_names(name, known);
    if close.is_empty() {
        format!("no {kind} named {name}; `{lister}` lists them")
    } else {
        format!(
            "no {kind} named {name}; did you mean {}?",
            close
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// Up to five of `known` that contain `name`, or are contained in it, or are within a few edits.
pub(crate) fn close_names(name: &str, known: &[String]) -> Vec<String> {
    let wanted = name.to_lowercase();
    let mut scored: Vec<(usize, &String)> = known
        .iter()
        .filter_map(|k| {
            let lower = k.to_lowercase();
            if lower.contains(&wanted) || wanted.contains(&lower) {
                return Some((0, k));
            }
            let d = edit_distance(&wanted, &lower);
            (d <= 2.max(wanted.chars().count() / 4)).then_some((d, k))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(5).map(|(_, k)| k.clone()).collect()
}

/// Levenshtein distance, for suggestions (names are short).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(here)
            };
            prev = here;
        }
    }
    row[b.len()]
}

/// Whether the user approved `key` once, for this call.
pub(crate) fn approved(host: &DevOps, key: &str) -> bool {
    cairn_toolkit::reply::approved_once(&host.approvals, key)
}

pub(crate) use cairn_toolkit::reply::strict_question;

/// Bytes as people read them (`1.5 MiB`).
pub(crate) fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Seconds since the Unix epoch, now.
pub(crate) fn now_unix() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// How long ago a Unix time was, roughly (`5 minutes ago`, `3 days ago`).
pub(crate) fn ago(unix: i64, now: i64) -> String {
    let secs = (now - unix).max(0);
    let (n, unit) = match secs {
        0..60 => (secs, "second"),
        60..3600 => (secs / 60, "minute"),
        3600..86_400 => (secs / 3600, "hour"),
        86_400..2_592_000 => (secs / 86_400, "day"),
        2_592_000..31_536_000 => (secs / 2_592_000, "month"),
        _ => (secs / 31_536_000, "year"),
    };
    format!("{n} {unit}{} ago", if n == 1 { "" } else { "s" })
}

/// `since` as Unix seconds: an RFC 3339 time (`2026-01-02T03:04:05Z`, offsets allowed), a date
/// (`2026-01-02`), Unix seconds, or a duration before `now` (`30s`, `10m`, `2h`, `1d`, `1h30m`).
pub(crate) fn parse_since(since: &str, now: i64) -> Result<i64, String> {
    let s = since.trim();
    let bad = || {
        format!(
            "`since` must be an RFC 3339 time (2026-01-02T03:04:05Z), a date, Unix seconds, or a \
             duration like 30s, 10m, 2h, 1d; got `{since}`"
        )
    };
    if s.is_empty() {
        return Err(bad());
    }
    if s.chars().all(|c| c.is_ascii_digit()) {
        return s.parse().map_err(|_| bad());
    }
    if let Some(secs) = parse_duration(s) {
        return Ok(now - secs);
    }
    parse_rfc3339(s).ok_or_else(bad)
}

/// `1h30m`, `10m`, `45s`, `2d`, `1w` as seconds.
fn parse_duration(s: &str) -> Option<i64> {
    let mut total: i64 = 0;
    let mut digits = String::new();
    let mut any = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let n: i64 = digits.parse().ok()?;
        digits.clear();
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 604_800,
            _ => return None,
        };
        total = total.checked_add(n.checked_mul(unit)?)?;
        any = true;
    }
    (any && digits.is_empty()).then_some(total)
}

/// An RFC 3339 time (or a bare date, midnight UTC) as Unix seconds.
fn parse_rfc3339(s: &str) -> Option<i64> {
    let num = |t: &str| -> Option<i64> {
        (!t.is_empty() && t.chars().all(|c| c.is_ascii_digit()))
            .then(|| t.parse().ok())
            .flatten()
    };
    let (date, time) = match s.find(['T', 't', ' ']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let mut parts = date.split('-');
    let (y, m, d) = (
        num(parts.next()?)?,
        num(parts.next()?)?,
        num(parts.next()?)?,
    );
    if parts.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let days = days_from_civil(y, m, d);
    let Some(time) = time else {
        return Some(days * 86_400);
    };
    // The offset: `Z`, or `+hh:mm` / `-hh:mm` after the clock time.
    let (clock, offset) = if let Some(c) = time.strip_suffix(['Z', 'z']) {
        (c, 0)
    } else if let Some(i) = time.rfind(['+', '-']) {
        let (c, o) = time.split_at(i);
        let sign = if o.starts_with('-') { -1 } else { 1 };
        let (oh, om) = o[1..].split_once(':')?;
        (c, sign * (num(oh)? * 3600 + num(om)? * 60))
    } else {
        return None;
    };
    let clock = clock.split('.').next()?;
    let mut hms = clock.split(':');
    let (h, mi, sec) = (
        num(hms.next()?)?,
        num(hms.next()?)?,
        num(hms.next().unwrap_or("0"))?,
    );
    if h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    Some(days * 86_400 + h * 3600 + mi * 60 + sec - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A result's text cut to `max` bytes at a line end, with what was left out said.
pub(crate) fn cap_text(mut text: String, max: usize, hint: &str) -> String {
    if text.len() <= max {
        return text;
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    if let Some(nl) = text[..cut].rfind('\n') {
        cut = nl + 1;
    }
    let left = text.len() - cut;
    text.truncate(cut);
    text.push_str(&format!("… ({left} more bytes left out: {hint})\n"));
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn since_takes_durations_times_dates_and_unix_seconds() {
        let now = 1_800_000_000;
        assert_eq!(parse_since("10m", now).unwrap(), now - 600);
        assert_eq!(parse_since("1h30m", now).unwrap(), now - 5400);
        assert_eq!(parse_since("2d", now).unwrap(), now - 172_800);
        assert_eq!(parse_since("1700000000", now).unwrap(), 1_700_000_000);
        assert_eq!(
            parse_since("2023-11-14T22:13:20Z", now).unwrap(),
            1_700_000_000
        );
        assert_eq!(
            parse_since("2023-11-14T23:13:20.123+01:00", now).unwrap(),
            1_700_000_000
        );
        assert_eq!(parse_since("1970-01-02", now).unwrap(), 86_400);
        for bad in [
            "",
            "10x",
            "yesterday",
            "2023-13-01",
            "m10",
            "2023-11-14T22:13",
        ] {
            let e = parse_since(bad, now).unwrap_err();
            assert!(e.contains("RFC 3339"), "{bad}: {e}");
        }
    }

    #[test]
    fn sizes_ages_and_ids_read_as_people_read_them() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 * 1024 * 1024 * 1024), "3.0 GiB");
        assert_eq!(ago(100, 100), "0 seconds ago");
        assert_eq!(ago(0, 61), "1 minute ago");
        assert_eq!(ago(0, 3 * 86_400), "3 days ago");
        assert_eq!(short_id("sha256:0123456789abcdef"), "0123456789ab");
    }

    #[test]
    fn close_names_suggest_what_was_probably_meant() {
        let known: Vec<String> = ["web-1", "db-1", "worker", "cache"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        assert_eq!(close_names("web", &known), vec!["web-1".to_owned()]);
        assert_eq!(close_names("wroker", &known), vec!["worker".to_owned()]);
        assert!(close_names("zzzzzzzz", &known).is_empty());
        let msg = not_found("container", "nope", &known, "docker_containers");
        assert!(msg.starts_with("no container named nope"), "{msg}");
    }

    #[test]
    fn names_that_could_reach_another_endpoint_are_refused() {
        assert_eq!(check_name("container", " web-1 ").unwrap(), "web-1");
        assert_eq!(check_name("container", "/web_1.a").unwrap(), "web_1.a");
        assert_eq!(
            check_name("image", "registry.local:5000/team/app:1.2").unwrap(),
            "registry.local:5000/team/app:1.2"
        );
        assert!(check_name("image", "app@sha256:0123abcd").is_ok());
        for bad in [
            "../images/x",
            "x?force=true",
            "a/b",
            "x%2F..",
            "",
            "-x",
            "a b",
        ] {
            let e = check_name("container", bad).unwrap_err();
            assert!(e.contains("not a valid container name"), "{bad}: {e}");
        }
        assert!(check_name("image", "app/../../containers/x").is_err());
        assert!(check_name("image", "app:1?force=1").is_err());
    }

    #[test]
    fn long_text_is_cut_at_a_line_end_and_says_so() {
        let text = "line\n".repeat(100);
        let cut = cap_text(text, 52, "ask for less");
        assert!(cut.starts_with("line\nline\n"));
        assert!(cut.contains("more bytes left out: ask for less"), "{cut}");
        assert!(cut.len() < 120);
    }
}
