//! `sms_send`: send a text message through Twilio's Messages API to a number the user allowed,
//! after the user approved that exact text. The account's auth token is the vault secret
//! `[comms.twilio] token_secret`, which the guard attaches as the Basic password.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::{CredentialUse, Method, Placement, WebRequest, header};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use crate::comms::Comms;
use crate::send::Outgoing;

/// Twilio refuses a longer body.
const MAX_CHARS: usize = 1600;
/// Characters of an unexpected answer shown.
const SHOWN_ANSWER: usize = 300;

/// The `sms_send` tool.
pub struct SmsSend;

/// Arguments of `sms_send`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The number to text, in E.164 form (`+15551234567`); it must be allowed in
    /// `[comms.twilio] allow_to`.
    to: String,
    /// The text, at most 1600 characters (longer than 160 GSM characters, or 70 with other
    /// characters, goes as several segments, each charged).
    body: String,
}

impl Tool for SmsSend {
    type Host = Comms;
    type Args = Args;
    const NAME: &'static str = "sms_send";
    const TITLE: &'static str = "Send an SMS";
    const DESCRIPTION: &'static str = "Send a text message (SMS, at most 1600 characters) through Twilio to a phone number the user allowed, in E.164 form; the user approves each message first. Only numbers in `[comms.twilio] allow_to`.";
    const CATEGORY: Category = Category::Communication;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Comms, args: Args, cx: CallContext) -> CallToolResult {
        let Some(config) = host.settings.twilio.as_ref() else {
            return error(
                "SMS is not set up: add `[comms.twilio]` (account_sid, token_secret, from, allow_to) to your config",
            );
        };
        let Some(to) = e164(&args.to) else {
            return error(format!(
                "sms: {:?} is not a phone number in E.164 form: a + then the country code and number, up to 15 digits (+15551234567)",
                args.to
            ));
        };
        let body = args.body.trim_end();
        if body.trim().is_empty() {
            return error("sms: the text is empty; nothing was sent");
        }
        let count = body.chars().count();
        if count > MAX_CHARS {
            return error(format!(
                "sms: the text has {count} characters, more than the {MAX_CHARS} Twilio takes; shorten it or send several"
            ));
        }
        // What cannot be sent is said before the user is asked about it.
        let Some(guard) = host.guard.as_deref() else {
            return error(
                "the web tools are off (`[web] enabled = false`), so Twilio cannot be reached",
            );
        };
        let sid = config.account_sid.trim();
        if sid.is_empty() || !sid.chars().all(|c| c.is_ascii_alphanumeric()) {
            return error(
                "sms: `[comms.twilio] account_sid` is not an account SID (AC followed by 32 hex digits)",
            );
        }
        let Some(from) = e164(&config.from) else {
            return error(
                "sms: `[comms.twilio] from` is not a number in E.164 form (+15550001111)",
            );
        };
        let allow: Vec<String> = config
            .allow_to
            .iter()
            .map(|n| e164(n).unwrap_or_else(|| n.clone()))
            .collect();
        let out = Outgoing {
            service: "sms",
            recipients: vec![to.clone()],
            text: body.to_owned(),
            setting: "comms.twilio.allow_to",
        };
        if let Err(refused) = host.check_send(&out, &allow) {
            return refused;
        }
        let url = format!(
            "{}/2010-04-01/Accounts/{sid}/Messages.json",
            config.api.trim_end_matches('/')
        );
        let form = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("To", &to)
            .append_pair("From", &from)
            .append_pair("Body", body)
            .finish();
        let mut request = WebRequest::new(Method::POST, url)
            .with_credential(CredentialUse {
                secret: config.token_secret.clone(),
                placement: Placement::Basic {
                    username: sid.to_owned(),
                },
            })
            .for_user(host.user.clone());
        request.headers.insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/x-www-form-urlencoded"),
        );
        request.body = Some(form.into_bytes());
        let response = tokio::select! {
            r = guard.fetch(request) => r,
            () = cx.cancel.cancelled() => return error("sms: cancelled"),
        };
        let response = match response {
            Ok(r) => r,
            Err(e) if e.is_denial() => return error(format!("sms: not sent: {e}")),
            Err(e) => {
                return error(format!(
                    "sms: no answer from Twilio, so the text may or may not have been sent: {e}"
                ));
            }
        };
        let answer: Value = serde_json::from_slice(&response.body).unwrap_or(Value::Null);
        let s = |k: &str| answer.get(k).and_then(Value::as_str).unwrap_or("");
        if !response.status.is_success() {
            let code = answer
                .get("code")
                .and_then(Value::as_u64)
                .map(|c| format!(" (Twilio error {c})"))
                .unwrap_or_default();
            let message = if s("message").is_empty() {
                String::from_utf8_lossy(&response.body)
                    .chars()
                    .take(SHOWN_ANSWER)
                    .collect()
            } else {
                s("message").to_owned()
            };
            let hint = match response.status.as_u16() {
                401 | 403 => format!(
                    ": the account SID or the auth token was refused; check `[comms.twilio] account_sid` and the vault secret `{}`",
                    config.token_secret
                ),
                429 => ": Twilio's rate limit; try again later".to_owned(),
                _ => String::new(),
            };
            return error(format!(
                "sms: Twilio refused the message, {}{code}{hint}: {}",
                response.status,
                message.trim()
            ));
        }
        let mut out = format!("sent SMS to {to} from {from}");
        if !s("sid").is_empty() {
            out.push_str(&format!(": message {}", s("sid")));
        }
        if !s("status").is_empty() {
            out.push_str(&format!(", status {}", s("status")));
        }
        let segments = s("num_segments");
        if !segments.is_empty() && segments != "1" {
            out.push_str(&format!(", {segments} segments"));
        }
        text(out)
    }
}

/// `number` in E.164 form (`+` and 2 to 15 digits, no leading 0), spaces, dashes, dots and
/// brackets dropped; `None` if it is not one.
fn e164(number: &str) -> Option<String> {
    let kept: String = number
        .trim()
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '.' | '(' | ')'))
        .collect();
    let digits = kept.strip_prefix('+')?;
    let ok = (2..=15).contains(&digits.len())
        && digits.chars().all(|c| c.is_ascii_digit())
        && !digits.starts_with('0');
    ok.then_some(kept)
}

#[cfg(test)]
mod tests {
    use super::e164;

    #[test]
    fn only_e164_numbers_pass() {
        for (given, want) in [
            ("+15551234567", Some("+15551234567")),
            ("+1 (555) 123-4567", Some("+15551234567")),
            ("+44 20 7946 0958", Some("+442079460958")),
            ("15551234567", None),
            ("+0551234567", None),
            ("+1555123456789012", None),
            ("+1555abc", None),
            ("+", None),
            ("+15551234567\r\nX: y", None),
        ] {
            assert_eq!(e164(given).as_deref(), want, "{given:?}");
        }
    }
}
