//! The gate every tool call passes before it runs: the policy's ruling (made stricter by the
//! extra powers the arguments ask for), session grants, the user's approval, and approvals of
//! protected paths, which a built-in tool asks for after a first refusal.
//!
//! It is its own module so that the one place deciding whether a call runs is small enough to
//! read whole; the binary's `cairn tools call` uses it too.

use rmcp::model::CallToolResult;

use crate::events::ApprovalState;
use crate::policy::{
    ApprovalAnswer, ApprovalRequest, Approver, Decision, Policy, Ruling, SessionGrants, args_hash,
};
use crate::tools::{Effect, PathApprovals, ProtectedPath, ToolInfo, protected_of};

/// The one path every tool call takes before it runs: policy, then (for `ask`) the user.
pub struct Gate<'a> {
    pub policy: &'a Policy,
    pub grants: &'a SessionGrants,
    pub approver: &'a dyn Approver,
    /// Where approvals of protected paths are held; without it they are never asked about.
    pub paths: Option<&'a dyn PathApprovals>,
    /// Ask the user even where the policy allows (a hook asked for it); no session grant
    /// covers such a call.
    pub ask_anyway: bool,
}

/// Approvals of protected paths, held until dropped (so a cancelled call releases them too).
pub struct HeldPaths<'a> {
    approvals: &'a dyn PathApprovals,
    paths: Vec<ProtectedPath>,
}

impl Drop for HeldPaths<'_> {
    fn drop(&mut self) {
        self.approvals.release(&self.paths);
    }
}

/// The call a question is about: the same for the policy's question and a protected path's.
struct Asked<'a> {
    info: &'a ToolInfo,
    run_id: &'a str,
    call_id: &'a str,
    arguments: &'a serde_json::Value,
}

impl Asked<'_> {
    /// A question with a fresh `approvalId`, bound to this call and the hash of its arguments.
    fn request(&self, reason: String, protected_paths: Vec<ProtectedPath>) -> ApprovalRequest {
        ApprovalRequest {
            approval_id: uuid::Uuid::new_v4().to_string(),
            run_id: self.run_id.to_string(),
            call_id: self.call_id.to_string(),
            tool: self.info.tool.name.to_string(),
            args_hash: args_hash(self.arguments),
            arguments: self.arguments.clone(),
            effect: self.info.effect,
            reason,
            description: self
                .info
                .tool
                .description
                .as_deref()
                .unwrap_or_default()
                .to_string(),
            protected_paths,
        }
    }
}

impl Gate<'_> {
    /// `Ok` when the call may run; otherwise the refusal the model reads. `on_approval` hears
    /// when the user is asked and what they answered.
    pub async fn authorize(
        &self,
        info: &ToolInfo,
        run_id: &str,
        call_id: &str,
        arguments: &serde_json::Value,
        on_approval: impl Fn(ApprovalState, Option<ApprovalAnswer>, &str),
    ) -> Result<(), String> {
        let name = info.tool.name.as_ref();
        let (ruling, extra) = self.ruling_for_call(info, arguments);
        // A writable workspace lets the container create files that run code (a missing
        // `.cargo/config.toml`, `.envrc`) where the workspace scope cannot ask about them, so it
        // is approved call by call: a session grant neither covers nor records it.
        let per_call = extra.contains(&Effect::Write) || self.ask_anyway;
        let decision = match ruling.decision {
            Decision::Allow if self.ask_anyway => Decision::Ask,
            d => d,
        };
        // A grant for the session covers the same tool with the same extra powers, no more.
        match decision {
            Decision::Allow => Ok(()),
            Decision::Deny => Err(format!(
                "denied: `{name}`{} is set to deny by {}",
                extra_words(&extra),
                ruling.setting
            )),
            Decision::Ask if !per_call && self.grants.is_granted(info, &extra) => Ok(()),
            Decision::Ask => {
                let asked = Asked {
                    info,
                    run_id,
                    call_id,
                    arguments,
                };
                let reason = self.ask_reason(info, &ruling, &extra, per_call);
                let request = asked.request(reason, Vec::new());
                match self.ask(&request, &on_approval).await {
                    ApprovalAnswer::Deny => Err("the user denied this call".into()),
                    ApprovalAnswer::AllowSession if !per_call => {
                        self.grants.grant(info, &extra);
                        Ok(())
                    }
                    ApprovalAnswer::AllowSession | ApprovalAnswer::AllowOnce => Ok(()),
                }
            }
        }
    }

    /// What the user reads when the policy asks: the tool, what it does, the extra powers, and
    /// the setting (or hook) that made it a question.
    fn ask_reason(
        &self,
        info: &ToolInfo,
        ruling: &Ruling,
        extra: &[Effect],
        per_call: bool,
    ) -> String {
        format!(
            "`{}` {}{} ({}){}",
            info.tool.name,
            effect_words(info),
            extra_words(extra),
            if self.ask_anyway {
                "a hook asked for your approval"
            } else {
                ruling.setting.as_str()
            },
            if per_call {
                "; asked at every call"
            } else {
                ""
            }
        )
    }

    /// Asks the approver, telling `on_approval` before and after.
    async fn ask(
        &self,
        request: &ApprovalRequest,
        on_approval: &impl Fn(ApprovalState, Option<ApprovalAnswer>, &str),
    ) -> ApprovalAnswer {
        on_approval(ApprovalState::Asked, None, &request.reason);
        let answer = self.approver.ask(request).await;
        on_approval(ApprovalState::Answered, Some(answer), &request.reason);
        answer
    }
}

impl<'a> Gate<'a> {
    /// When `result` is a built-in tool's refusal over protected paths, asks the user about
    /// exactly those paths; `Some` with the paths when the user approved them. Session grants
    /// and the policy play no part: only this answer, about these paths, counts.
    pub async fn approve_protected(
        &self,
        info: &ToolInfo,
        run_id: &str,
        call_id: &str,
        arguments: &serde_json::Value,
        result: &CallToolResult,
        on_approval: impl Fn(ApprovalState, Option<ApprovalAnswer>, &str),
    ) -> Option<Vec<ProtectedPath>> {
        self.paths?;
        // External servers cannot ask for protected paths: only the built-in tools (whose
        // categories are not `mcp:<server>`) report them.
        if info.category.starts_with("mcp:") || result.is_error != Some(true) {
            return None;
        }
        let paths = Some(protected_of(result)).filter(|p| !p.is_empty())?;
        let listed: Vec<String> = paths
            .iter()
            .map(|p| format!("{} `{}` ({})", p.operation, p.path, p.why))
            .collect();
        let reason = format!(
            "`{}` to {}: protected, so only an approval of this exact path lets it through",
            info.tool.name,
            listed.join(", ")
        );
        let asked = Asked {
            info,
            run_id,
            call_id,
            arguments,
        };
        let request = asked.request(reason, paths.clone());
        match self.ask(&request, &on_approval).await {
            ApprovalAnswer::Deny => None,
            ApprovalAnswer::AllowOnce | ApprovalAnswer::AllowSession => Some(paths),
        }
    }

    /// Holds approvals of `paths` until the returned guard is dropped.
    pub fn hold(&self, paths: Vec<ProtectedPath>) -> Option<HeldPaths<'a>> {
        let approvals = self.paths?;
        approvals.hold(&paths);
        Some(HeldPaths { approvals, paths })
    }
}

/// Arguments by which a built-in tool asks for more than its effect: `network: true` (a sandbox
/// with network access) and `workspace_write: true` (a sandbox that may write the workspace).
/// The model may ask for them; each is decided by its own effect's policy, and asked about.
const POWER_ARGUMENTS: [(&str, Effect); 2] = [
    ("network", Effect::Network),
    ("workspace_write", Effect::Write),
];

impl Gate<'_> {
    /// The policy's ruling for this call: the tool's own, made stricter by the extra powers its
    /// arguments ask for (built-in tools only; an external server's arguments are its own).
    fn ruling_for_call(
        &self,
        info: &ToolInfo,
        arguments: &serde_json::Value,
    ) -> (Ruling, Vec<Effect>) {
        let mut ruling = self.policy.decide(info);
        if info.category.starts_with("mcp:") {
            return (ruling, Vec::new());
        }
        let mut extra = Vec::new();
        for (key, effect) in POWER_ARGUMENTS {
            if arguments.get(key) != Some(&serde_json::Value::Bool(true)) {
                continue;
            }
            extra.push(effect);
            let decision = self
                .policy
                .effects
                .get(&effect)
                .copied()
                .unwrap_or(Decision::Ask);
            let rank = |d: Decision| match d {
                Decision::Allow => 0,
                Decision::Ask => 1,
                Decision::Deny => 2,
            };
            // The user's own setting for that effect decides; the stricter ruling wins.
            if rank(decision) >= rank(ruling.decision) {
                ruling = Ruling {
                    decision,
                    setting: format!("policy.effects.{}", effect.as_str()),
                };
            }
        }
        (ruling, extra)
    }
}

fn extra_words(extra: &[Effect]) -> String {
    extra
        .iter()
        .map(|e| match e {
            Effect::Network => " with network access",
            Effect::Write => " with write access to the workspace",
            _ => "",
        })
        .collect()
}

fn effect_words(info: &ToolInfo) -> &'static str {
    match info.effect {
        Effect::Read => "reads",
        Effect::Write => "writes files",
        Effect::Execute => "runs code",
        Effect::Network => "reaches the network",
    }
}
