//! Approvals through `session/request_permission`: cairn's `Approver`, so the policy, the
//! argument hash and the strict question for protected paths apply as in every other front.

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use cairn_agent::policy::{ApprovalAnswer, ApprovalRequest, Approver};
use futures::future::BoxFuture;

pub(crate) const ALLOW_ONCE: &str = "allow-once";
pub(crate) const ALLOW_SESSION: &str = "allow-session";
pub(crate) const REJECT: &str = "reject";

/// Asks the client about one call of one session.
pub(crate) struct ClientApprover {
    pub cx: ConnectionTo<Client>,
    pub session_id: String,
}

impl Approver for ClientApprover {
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async move {
            let protected = !request.protected_paths.is_empty();
            let mut options = vec![PermissionOption::new(
                ALLOW_ONCE,
                "Allow once",
                PermissionOptionKind::AllowOnce,
            )];
            // A protected path is approved once or not at all.
            if !protected {
                options.push(PermissionOption::new(
                    ALLOW_SESSION,
                    "Allow for this session",
                    PermissionOptionKind::AllowAlways,
                ));
            }
            options.push(PermissionOption::new(
                REJECT,
                "Reject",
                PermissionOptionKind::RejectOnce,
            ));
            let title = if protected {
                let paths: Vec<&str> = request
                    .protected_paths
                    .iter()
                    .map(|p| p.path.as_str())
                    .collect();
                format!("{} (protected: {})", request.reason, paths.join(", "))
            } else {
                request.reason.clone()
            };
            let mut meta = serde_json::Map::new();
            meta.insert("cairn/runId".into(), request.run_id.clone().into());
            meta.insert("cairn/argsHash".into(), request.args_hash.clone().into());
            meta.insert(
                "cairn/description".into(),
                request.description.clone().into(),
            );
            let call = ToolCallUpdate::new(
                request.call_id.clone(),
                ToolCallUpdateFields::new()
                    .title(title)
                    .status(ToolCallStatus::Pending)
                    .raw_input(request.arguments.clone()),
            )
            .meta(meta);
            let asked = self
                .cx
                .send_request(RequestPermissionRequest::new(
                    self.session_id.clone(),
                    call,
                    options,
                ))
                .block_task()
                .await;
            match asked {
                Ok(response) => match response.outcome {
                    RequestPermissionOutcome::Selected(selected) => match &*selected.option_id.0 {
                        ALLOW_ONCE => ApprovalAnswer::AllowOnce,
                        ALLOW_SESSION if !protected => ApprovalAnswer::AllowSession,
                        _ => ApprovalAnswer::Deny,
                    },
                    _ => ApprovalAnswer::Deny,
                },
                Err(e) => {
                    tracing::warn!("session/request_permission failed: {e}");
                    ApprovalAnswer::Deny
                }
            }
        })
    }
}
