//! LaunchDarkly (`launchdarkly`, REST API v2 at `https://app.launchdarkly.com/api/v2`, an access
//! token in the `Authorization` header): a project's feature flags with their state in each
//! environment, and turning one flag on or off in one environment.

pub mod flags;
pub mod toggle_flag;

/// The service's name in `[api.services]`.
pub(crate) const SERVICE: &str = "launchdarkly";
/// LaunchDarkly's API.
pub(crate) const PUBLIC: &str = "https://app.launchdarkly.com/api/v2";

/// A project, flag or environment key, checked: LaunchDarkly's keys are letters, digits, `.`,
/// `_` and `-`, so nothing else can reach the request path or a JSON Patch path.
pub(crate) fn key(what: &str, value: &str) -> Result<String, String> {
    let value = value.trim();
    let ok = !value.is_empty()
        && value != "."
        && value != ".."
        && value.len() <= 256
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(value.to_owned())
    } else {
        Err(format!(
            "`{what}` {value:?} is not a LaunchDarkly key (letters, digits, `.`, `_`, `-`): give the {what}'s key, not its name"
        ))
    }
}
