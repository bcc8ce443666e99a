//! What the integrations' tests share: the recording peer (`cairn_test_support::recorder`) and
//! the integrations configured for one service against it.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub use cairn_test_support::recorder::{Recorder, Request};

/// Whether the request's query has `key=value`.
pub fn query_has(r: &Request, key: &str, value: &str) -> bool {
    r.query().contains(&(key.to_owned(), value.to_owned()))
}

/// The base of the Prism mock whose address `var` holds, as `scripts/api-mocks` printed it, or
/// `None` when the mock tests are off (`CAIRN_COMMS_TESTS`).
pub fn prism(var: &str) -> Option<String> {
    if !cairn_test_support::gate(
        "CAIRN_COMMS_TESTS",
        "with the API mocks (scripts/api-mocks)",
    ) {
        return None;
    }
    Some(std::env::var(var).unwrap_or_else(|_| panic!("{var} (scripts/api-mocks)")))
}

/// The integrations with one service, `name`, configured at `base_url` (none: not configured)
/// authenticating with vault secret `secret` as `auth`, the secret bound to 127.0.0.1.
pub fn services(
    name: &str,
    base_url: Option<&str>,
    auth: Option<cairn_webtools::api::ApiAuth>,
    secret: &str,
) -> cairn_toolkit::ToolSet<cairn_webtools::api::services::Services> {
    use cairn_webtools::api::services::{ServiceSettings, Services, service_tools};
    let vault = crate::api_support::TestVault::default().with(
        auth.as_ref().map_or("none", |a| a.secret.as_str()),
        secret,
        &["127.0.0.1"],
    );
    let mut settings = std::collections::BTreeMap::new();
    settings.insert(
        name.to_owned(),
        ServiceSettings {
            base_url: base_url.map(str::to_owned),
            auth,
        },
    );
    service_tools(Services::new(
        crate::api_support::guard(vault),
        "tester",
        settings,
    ))
}
