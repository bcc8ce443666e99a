//! [`CloudError`], the one error of every cloud call.
//!
//! Its own file because the accounts, the request path and every tool return it, and the
//! request path itself needs the accounts: defined here, it imports none of them.

use cairn_web::WebError;

/// A cloud call that did not give an answer.
#[derive(Debug, thiserror::Error)]
pub enum CloudError {
    /// `[web] enabled = false`: the guard every request goes through is off.
    #[error(
        "the cloud tools reach the network through the web guard, which is off (`[web] enabled = false`)"
    )]
    NoGuard,
    /// The call named an account that is not configured.
    #[error("no cloud account `{name}`; configured: {}", list(known))]
    UnknownAccount { name: String, known: Vec<String> },
    /// The account is of another kind than the tool needs.
    #[error("account `{account}` is {kind}; this tool needs {wanted}")]
    WrongKind {
        account: String,
        kind: &'static str,
        wanted: String,
    },
    /// No account of a kind the tool needs.
    #[error(
        "no {wanted} account is configured; add a `[cloud.NAME]` with `kind = ...` to your user config (docs/cloud.md)"
    )]
    NoAccount { wanted: String },
    /// Several accounts fit and the call did not say which.
    #[error("several accounts fit ({}): name one with `account`", candidates.join(", "))]
    WhichAccount { candidates: Vec<String> },
    /// The guard refused the request or it failed on the way.
    #[error("{0}")]
    Web(#[from] WebError),
    /// The service answered with an error.
    #[error("{service} answered {status}{}: {message}", if code.is_empty() { String::new() } else { format!(" {code}") })]
    Service {
        service: String,
        status: u16,
        code: String,
        message: String,
    },
    /// An argument or an answer that cannot be used.
    #[error("{0}")]
    Invalid(String),
    /// The run was cancelled.
    #[error("cancelled")]
    Cancelled,
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

impl CloudError {
    /// Whether this is the service saying the thing does not exist (404, `NoSuch...`,
    /// `...NotFound...`).
    pub fn is_not_found(&self) -> bool {
        matches!(self, CloudError::Service { status, code, .. }
            if *status == 404 || code.contains("NotFound") || code.starts_with("NoSuch"))
    }
}
