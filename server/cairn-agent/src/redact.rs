//! The seam through which secrets are taken out of text before it reaches the model or the
//! editor. The implementation (vault values and credential patterns) lives outside this crate,
//! which stays free of vault dependencies.

use crate::events::RunEvent;

/// Replaces secrets in text with `[REDACTED:name]` markers.
pub trait Redact: Send + Sync {
    fn redact(&self, text: &str) -> String;

    /// Bytes bound for a workspace file (a download): every secret's value replaced with
    /// `[REDACTED:name]`, in whatever encoding it is in, the rest byte for byte; `None` when
    /// nothing was replaced. A redactor that also knows credential patterns should not apply
    /// them here (the vault's does not): an `API_KEY=` line in a downloaded file is the user's
    /// data, not a secret cairn holds. The default, for redactors without that distinction,
    /// redacts text as [`Redact::redact`] does and leaves other bytes alone.
    fn redact_file(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        let text = std::str::from_utf8(bytes).ok()?;
        let out = self.redact(text);
        (out != text).then(|| out.into_bytes())
    }
}

/// `value` with every string in it (keys stay) through `redactor`.
pub fn redact_json(redactor: &dyn Redact, value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(text) => Value::String(redactor.redact(&text)),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| redact_json(redactor, item))
                .collect(),
        ),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (k, redact_json(redactor, v)))
                .collect(),
        ),
        other => other,
    }
}

/// `event` with every text in it through `redactor`: what the editor is told passes the
/// redactor as the model's messages do. Ids, states and pictures are left as they are.
pub fn redact_event(redactor: &dyn Redact, event: &mut RunEvent) {
    let r = |text: &mut String| *text = redactor.redact(text);
    match event {
        RunEvent::Text { delta } => r(delta),
        RunEvent::ToolCall { arguments, .. } => {
            *arguments = redact_json(redactor, std::mem::take(arguments));
        }
        RunEvent::Approval { reason, .. } => r(reason),
        RunEvent::ToolResult { content, .. } => r(content),
        RunEvent::Edit { reason, .. } => {
            if let Some(reason) = reason {
                r(reason);
            }
        }
        RunEvent::Error { message } => r(message),
        RunEvent::Plan { steps, .. } => steps.iter_mut().for_each(|s| r(&mut s.title)),
        RunEvent::SubAgent { event, .. } => redact_event(redactor, event),
        RunEvent::Hook {
            command, message, ..
        } => {
            r(command);
            r(message);
        }
        RunEvent::Compacted { summary, .. } => r(summary),
        RunEvent::Done { .. } => {}
    }
}

/// An approver that shows the user the request with its texts redacted: the arguments the model
/// wrote, the reason and the tool's description. The hash still covers the real arguments, so
/// the answer binds to what runs.
pub struct RedactingApprover<'a> {
    pub inner: &'a dyn crate::policy::Approver,
    pub redactor: &'a dyn Redact,
}

impl crate::policy::Approver for RedactingApprover<'_> {
    fn ask<'a>(
        &'a self,
        request: &'a crate::policy::ApprovalRequest,
    ) -> futures::future::BoxFuture<'a, crate::policy::ApprovalAnswer> {
        Box::pin(async move {
            let mut shown = request.clone();
            shown.arguments = redact_json(self.redactor, shown.arguments);
            shown.reason = self.redactor.redact(&shown.reason);
            shown.description = self.redactor.redact(&shown.description);
            self.inner.ask(&shown).await
        })
    }
}
