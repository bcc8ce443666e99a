//! The one path every send takes ([`Comms::check_send`]): recipients the user allowed, a cap on
//! their number, the user's approval of that exact message, and a per-user rate.

use cairn_toolkit::reply::{approved_once, strict_question};
use rmcp::model::CallToolResult;
use sha2::{Digest, Sha256};

use crate::comms::Comms;

/// Why a send was refused before anything left the machine.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendRefusal {
    /// A recipient the user has not allowed in `[comms]`.
    #[error(
        "{service}: {recipient} is not an allowed recipient; add it to `{setting}` in your config (allowed now: {allowed})"
    )]
    NotAllowed {
        service: String,
        recipient: String,
        setting: String,
        allowed: String,
    },
    /// More recipients than `[comms] max_recipients`.
    #[error(
        "{service}: {count} recipients, more than the {max} one message may have (`[comms] max_recipients`)"
    )]
    TooMany {
        service: String,
        count: usize,
        max: usize,
    },
    /// Nobody to send to.
    #[error("{service}: no recipient given")]
    NoRecipient { service: String },
    /// Over `[comms] sends_per_minute` for this user.
    #[error(
        "{service}: not sent, over the limit of {per_minute} messages a minute (`[comms] sends_per_minute`); try again in a minute"
    )]
    RateLimited { service: String, per_minute: u32 },
}

/// One message about to be sent, as the user is asked about it.
pub(crate) struct Outgoing<'a> {
    /// `email`, `matrix`, `slack`, `webhook`, `sms`, `calendar`.
    pub service: &'a str,
    /// Who receives it, as the user wrote them in `[comms]` terms (addresses, rooms, numbers).
    pub recipients: Vec<String>,
    /// What is sent, as shown in the question (subject and text, or the message).
    pub text: String,
    /// The `[comms]` setting that allows recipients, named in a refusal (`comms.email.allow_to`).
    pub setting: &'a str,
}

/// Whether `value` matches `pattern`: equal ignoring ASCII case, or `*@domain` for any address
/// at that domain. Nothing else is a wildcard.
pub(crate) fn allowed(pattern: &str, value: &str) -> bool {
    let (pattern, value) = (pattern.trim(), value.trim());
    match pattern.strip_prefix("*@") {
        Some(domain) if !domain.is_empty() && !domain.contains(['*', '@']) => value
            .rsplit_once('@')
            .is_some_and(|(local, d)| !local.is_empty() && d.eq_ignore_ascii_case(domain)),
        _ => pattern.eq_ignore_ascii_case(value),
    }
}

/// The most of the message text shown in the question.
const SHOWN_TEXT: usize = 2000;

impl Comms {
    /// Checks `out` before it is sent against `allow` (the service's allowed recipients). `Ok`:
    /// send it now (the user approved this exact message and the rate allows it). `Err`: return
    /// that result instead; a refusal, or the strict question the agent asks the user before
    /// the same call runs again with the approval held.
    // The refusal is the tool's whole result, returned as is by the caller once per send: its
    // size costs nothing worth a box.
    #[allow(clippy::result_large_err)]
    pub(crate) fn check_send(
        &self,
        out: &Outgoing<'_>,
        allow: &[String],
    ) -> Result<(), CallToolResult> {
        let refuse = |r: SendRefusal| Err(cairn_toolkit::reply::error(r.to_string()));
        let service = out.service.to_owned();
        if out.recipients.is_empty() {
            return refuse(SendRefusal::NoRecipient { service });
        }
        let max = self.settings.max_recipients;
        if out.recipients.len() > max {
            return refuse(SendRefusal::TooMany {
                service,
                count: out.recipients.len(),
                max,
            });
        }
        for r in &out.recipients {
            if !allow.iter().any(|p| allowed(p, r)) {
                let allowed = if allow.is_empty() {
                    "none".to_owned()
                } else {
                    allow.join(", ")
                };
                return refuse(SendRefusal::NotAllowed {
                    service,
                    recipient: r.clone(),
                    setting: out.setting.to_owned(),
                    allowed,
                });
            }
        }
        let mut hash = Sha256::new();
        for part in [out.service]
            .into_iter()
            .chain(out.recipients.iter().map(String::as_str))
            .chain([out.text.as_str()])
        {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part.as_bytes());
        }
        let digest = hash.finalize();
        let key = format!(
            "send:{}:{}",
            out.service,
            digest
                .iter()
                .take(16)
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        );
        if !approved_once(&self.approvals, &key) {
            let mut text: String = out.text.chars().take(SHOWN_TEXT).collect();
            if text.len() < out.text.len() {
                text.push_str(" […]");
            }
            let shown = format!("{} to {}: {text}", out.service, out.recipients.join(", "));
            return Err(strict_question(
                format!(
                    "not sent yet: sending a message needs your approval of this exact message ({} to {})",
                    out.service,
                    out.recipients.join(", ")
                ),
                shown,
                key,
                "a message leaves your machine under your name and cannot be taken back",
            ));
        }
        if !self.sends.take(&self.user) {
            return refuse(SendRefusal::RateLimited {
                service,
                per_minute: self.sends.per_minute,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::allowed;

    #[test]
    fn only_exact_values_and_domain_patterns_match() {
        assert!(allowed("*@example.com", "Bob@EXAMPLE.com"));
        assert!(!allowed("*@example.com", "bob@example.com.evil.org"));
        assert!(!allowed("*@example.com", "@example.com"));
        assert!(allowed("#dev", "#DEV"));
        assert!(!allowed("*", "anyone@example.com"));
        assert!(!allowed("*@*", "anyone@example.com"));
        assert!(!allowed("bob@example.com", "bob@example.com, eve@evil.org"));
    }
}
