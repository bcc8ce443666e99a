//! `api_jwt_decode`: a JWT's header and claims, decoded but not verified, with its time claims
//! as dates. No network and no key: it only reads the text it is given.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::Value;

/// The report for `token` (a leading `Bearer ` is dropped), judged at `now` (Unix seconds).
pub fn decode_report(token: &str, now: i64) -> Result<String, String> {
    let token = token.trim();
    let token = token
        .strip_prefix("Bearer ")
        .or_else(|| token.strip_prefix("bearer "))
        .unwrap_or(token)
        .trim();
    let parts: Vec<&str> = token.split('.').collect();
    let mut out = String::from(
        "NOT VERIFIED: the signature was not checked; do not trust these claims for access decisions.\n\n",
    );
    match parts.len() {
        3 => {}
        5 => {
            let header = part_json(parts[0], "header")?;
            out.push_str(
                "This is an encrypted JWT (JWE): only its header can be read.\n\nHeader:\n",
            );
            out.push_str(&serde_json::to_string_pretty(&header).unwrap_or_default());
            return Ok(out);
        }
        n => {
            return Err(format!(
                "not a JWT: it has {n} dot-separated parts (a signed JWT has 3: header.claims.signature)"
            ));
        }
    }
    let header = part_json(parts[0], "header")?;
    let claims = part_json(parts[1], "claims")?;
    out.push_str("Header:\n");
    out.push_str(&serde_json::to_string_pretty(&header).unwrap_or_default());
    out.push_str("\n\nClaims:\n");
    out.push_str(&serde_json::to_string_pretty(&claims).unwrap_or_default());
    out.push('\n');
    let mut times = String::new();
    for (claim, meaning) in [("iat", "issued"), ("nbf", "not before"), ("exp", "expires")] {
        let Some(secs) = claims.get(claim).and_then(Value::as_i64) else {
            continue;
        };
        times.push_str(&format!(
            "{claim} ({meaning}): {} ({})\n",
            utc(secs),
            relative(secs, now)
        ));
    }
    if let Some(exp) = claims.get("exp").and_then(Value::as_i64) {
        times.push_str(if exp <= now {
            "The token has EXPIRED.\n"
        } else {
            "The token has not expired.\n"
        });
    }
    if !times.is_empty() {
        out.push('\n');
        out.push_str(&times);
    }
    if header.get("alg").and_then(Value::as_str) == Some("none") {
        out.push_str("\nalg is \"none\": the token is unsigned.\n");
    }
    Ok(out)
}

/// Now, in Unix seconds.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

fn part_json(part: &str, what: &str) -> Result<Value, String> {
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part.trim_end_matches('='))
        .map_err(|e| format!("the {what} is not base64url: {e}"))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("the {what} is not JSON: {e}"))
}

fn relative(secs: i64, now: i64) -> String {
    let delta = secs - now;
    let span = |s: i64| {
        let s = s.unsigned_abs();
        match s {
            0..=119 => format!("{s} seconds"),
            120..=7199 => format!("{} minutes", s / 60),
            7200..=172_799 => format!("{} hours", s / 3600),
            _ => format!("{} days", s / 86_400),
        }
    };
    if delta >= 0 {
        format!("in {}", span(delta))
    } else {
        format!("{} ago", span(delta))
    }
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SSZ` (proleptic Gregorian; days-from-civil inverted).
pub fn utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
    }
}
