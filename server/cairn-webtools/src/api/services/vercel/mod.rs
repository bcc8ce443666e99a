//! Vercel (`vercel`, REST API at `https://api.vercel.com`): a project's deployments and one
//! deployment's build log. Also the small helpers the Vercel, Stripe, LaunchDarkly and SendGrid
//! tools share: a checked path segment and Unix times written out.

pub mod deployment_logs;
pub mod deployments;

/// The service's name in `[api.services]`.
pub(crate) const SERVICE: &str = "vercel";
/// Vercel's API.
pub(crate) const PUBLIC: &str = "https://api.vercel.com";

/// `value` (an id, key or name the model gave) as one path segment, percent-encoded; refused
/// when empty or `.`/`..`, which the address would resolve away into another path.
pub(crate) fn id_segment(what: &str, value: &str) -> Result<String, String> {
    let value = value.trim();
    if value.is_empty() || value == "." || value == ".." {
        return Err(format!(
            "`{what}` {value:?} is not a valid {what}: give its id or key"
        ));
    }
    Ok(super::github::segment(value))
}

/// A Unix time in seconds (or milliseconds, when `millis`) as `2024-01-31 09:05 UTC`; `-` when
/// absent or out of range.
pub(crate) fn unix_when(value: Option<&serde_json::Value>, millis: bool) -> String {
    let Some(n) = value.and_then(serde_json::Value::as_f64) else {
        return "-".to_owned();
    };
    let secs = if millis { n / 1000.0 } else { n };
    // Out-of-range values (a generated mock's huge numbers) are shown as given.
    if !secs.is_finite() || secs.abs() > 1e12 {
        return format!("{n}");
    }
    #[allow(clippy::cast_possible_truncation)]
    let secs = secs.floor() as i64;
    chrono::DateTime::from_timestamp(secs, 0).map_or_else(
        || format!("{n}"),
        |t| t.format("%Y-%m-%d %H:%M UTC").to_string(),
    )
}
