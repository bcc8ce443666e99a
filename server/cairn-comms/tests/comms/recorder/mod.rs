//! What the Slack, webhook and SMS tests share: the recording peer
//! (`cairn_test_support::recorder`), the tests' vault and the approve-then-resend helper.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

pub use cairn_test_support::recorder::Recorder;

/// The vault the tests give the guard: secret name -> (value, the one host it is bound to).
pub struct Vault(pub Vec<(&'static str, String, String)>);

impl cairn_web::Credentials for Vault {
    fn for_host(
        &self,
        name: &str,
        host: &str,
    ) -> Result<cairn_vault::Secret, cairn_web::CredentialRefusal> {
        match self.0.iter().find(|(n, _, _)| *n == name) {
            Some((_, value, bound)) if bound == host => Ok(cairn_vault::Secret::new(value.clone())),
            Some((_, _, bound)) => Err(cairn_web::CredentialRefusal {
                reason: format!("it is bound to {bound}"),
            }),
            None => Err(cairn_web::CredentialRefusal {
                reason: format!("no secret `{name}` in the vault"),
            }),
        }
    }
}

/// The communication tools over `settings`, with a guard that allows loopback when `loopback`,
/// and the approvals the agent would hold.
pub fn tools(
    settings: cairn_config::CommsConfig,
    vault: Vault,
    loopback: bool,
) -> (
    cairn_toolkit::ToolSet<cairn_comms::Comms>,
    Arc<cairn_workspace::ExactApprovals>,
) {
    let guard = cairn_web::WebGuard::new(cairn_web::GuardConfig {
        allow_loopback: loopback,
        per_user_per_minute: 1000,
        per_host_per_minute: 1000,
        ..Default::default()
    })
    .unwrap();
    let vault = Arc::new(vault);
    let guard = Arc::new(guard.with_credentials(vault.clone()));
    let approvals = cairn_workspace::ExactApprovals::new();
    let host = cairn_comms::Comms::new(settings, Some(guard), vault, approvals.clone());
    (cairn_comms::comms_tools(host), approvals)
}

/// What a send came to: the strict question the first call asked (its text and the shown
/// message), then the second call's result with that exact approval held, as after "allow once".
pub async fn approved(
    t: &cairn_toolkit::ToolSet<cairn_comms::Comms>,
    approvals: &cairn_workspace::ExactApprovals,
    name: &str,
    args: serde_json::Value,
) -> (String, String, cairn_test_support::tools::Seen) {
    use cairn_test_support::tools::call;
    let asked = call(t, name, args.clone()).await;
    assert!(asked.is_error, "{}", asked.text);
    let protected = cairn_agent::tools::protected_of(&asked.result);
    assert_eq!(protected.len(), 1, "no question: {}", asked.text);
    let key = std::path::PathBuf::from(&protected[0].key);
    approvals.hold(&key, cairn_workspace::Operation::Write);
    let done = call(t, name, args).await;
    approvals.release(&key, cairn_workspace::Operation::Write);
    (asked.text, protected[0].path.clone(), done)
}
