//! Snyk (`[api.services.snyk]`, public base `https://api.snyk.io/v1`, the base its published
//! v1 description names): the vulnerability and license issues of an organization or one of
//! its projects. Snyk wants `Authorization: token KEY`, so the vault secret holds `token KEY`
//! and is sent as a header: `auth = { secret = "snyk", scheme = "header", name =
//! "Authorization" }`.

pub(crate) mod issues;

/// The service's name in `[api.services.NAME]`.
pub(crate) const SERVICE: &str = "snyk";
/// Where Snyk's v1 API answers unless `base_url` says otherwise.
pub(crate) const PUBLIC: &str = "https://api.snyk.io/v1";

/// An organization's or project's id checked: Snyk's ids are UUIDs (org slugs are not taken
/// here), so nothing but letters, digits and dashes reaches the request path.
pub(crate) fn id(what: &str, id: &str) -> Result<String, String> {
    let id = id.trim();
    if !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        Ok(id.to_owned())
    } else {
        Err(format!(
            "`{what}` {id:?} is not a Snyk id: give its UUID (in the Snyk app, Settings → General shows it)"
        ))
    }
}
