//! `webhook_post`: post a message to a webhook the user configured (`[comms.webhooks.NAME]`),
//! by name, in the format of its kind. The URL usually carries the webhook's token, so it is
//! never shown: not in the result, not in an error, not in the approval question.

use cairn_config::{WebhookConfig, WebhookKind};
use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool, ToolError};
use cairn_web::{Method, WebError, WebRequest, header};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::comms::Comms;
use crate::send::Outgoing;

/// Discord refuses a `content` longer than this.
const DISCORD_MAX: usize = 2000;
/// Slack's limit for a message's text.
const SLACK_MAX: usize = 40_000;
/// Teams refuses payloads over about 28 KB; the text stays well under it.
const TEAMS_MAX: usize = 20_000;
/// A generic endpoint gets at most this much.
const GENERIC_MAX: usize = 40_000;
/// Characters of a failed answer's body shown.
const SHOWN_ANSWER: usize = 300;

/// The `webhook_post` tool.
pub struct WebhookPost;

/// Arguments of `webhook_post`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The webhook's name, as configured in `[comms.webhooks.NAME]` (its URL is never needed
    /// or shown).
    webhook: String,
    /// The message. Discord takes at most 2000 characters, Teams 20,000, Slack and generic
    /// webhooks 40,000.
    text: String,
    /// A title: a card's title on Teams, a bold first line on Discord and Slack, `title` in a
    /// generic webhook's JSON.
    title: Option<String>,
}

impl Tool for WebhookPost {
    type Host = Comms;
    type Args = Args;
    const NAME: &'static str = "webhook_post";
    const TITLE: &'static str = "Post to a webhook";
    const DESCRIPTION: &'static str = "Post a message to a webhook the user configured, by name (Discord, Microsoft Teams, Slack incoming webhooks, or generic JSON), in the format its kind expects; the user approves each message first. The webhook's URL is never shown.";
    const CATEGORY: Category = Category::Communication;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Comms, args: Args, cx: CallContext) -> CallToolResult {
        let hooks = &host.settings.webhooks;
        let name = args.webhook.trim();
        let names: Vec<String> = hooks.keys().cloned().collect();
        let Some(hook) = hooks.get(name) else {
            // Refused the way every send to someone not allowed is.
            let out = Outgoing {
                service: "webhook",
                recipients: vec![name.to_owned()],
                text: args.text.clone(),
                setting: "comms.webhooks",
            };
            return match host.check_send(&out, &names) {
                Err(refused) => refused,
                // Unreachable: a name not configured is not in `names`.
                Ok(()) => error(format!("webhook: no webhook named {name:?}")),
            };
        };
        let Some(guard) = host.guard.as_deref() else {
            return error(
                "the web tools are off (`[web] enabled = false`), so no webhook can be reached",
            );
        };
        let body = args.text.trim_end();
        if body.trim().is_empty() {
            return error("webhook: the message is empty; nothing was posted");
        }
        let title = args
            .title
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let payload = match payload(hook, body, title) {
            Ok(p) => p,
            Err(e) => return error(format!("webhook {name}: {e}")),
        };
        let shown = match title {
            Some(t) => format!("{t}\n{body}"),
            None => body.to_owned(),
        };
        let out = Outgoing {
            service: "webhook",
            recipients: vec![name.to_owned()],
            text: shown,
            setting: "comms.webhooks",
        };
        if let Err(asked) = host.check_send(&out, &names) {
            return asked;
        }
        let mut request =
            WebRequest::new(Method::POST, hook.url.clone()).for_user(host.user.clone());
        request.headers.insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static("application/json"),
        );
        request.body = Some(payload.to_string().into_bytes());
        let response = tokio::select! {
            r = guard.fetch(request) => r,
            () = cx.cancel.cancelled() => return error(format!("webhook {name}: cancelled")),
        };
        let kind = kind_name(hook.kind);
        match response {
            Ok(r) if r.status.is_success() => text(format!(
                "posted to webhook {name} ({kind}): {} {}",
                r.status.as_u16(),
                r.status.canonical_reason().unwrap_or("")
            )),
            Ok(r) => {
                let answer = String::from_utf8_lossy(&r.body);
                let answer: String = hide(&answer, &hook.url)
                    .chars()
                    .take(SHOWN_ANSWER)
                    .collect();
                let hint = match r.status.as_u16() {
                    401 | 403 | 404 => format!(
                        ": the webhook may have been deleted or its URL is wrong; check `[comms.webhooks.{name}] url`"
                    ),
                    429 => ": rate-limited by the service; try again later".to_owned(),
                    _ => String::new(),
                };
                error(format!(
                    "webhook {name} ({kind}) answered {}{hint}{}",
                    r.status,
                    if answer.trim().is_empty() {
                        String::new()
                    } else {
                        format!("\n{}", answer.trim())
                    }
                ))
            }
            Err(e) => error(refusal(name, &hook.url, &e)),
        }
    }
}

/// The kind as the user wrote it.
fn kind_name(kind: WebhookKind) -> &'static str {
    match kind {
        WebhookKind::Discord => "discord",
        WebhookKind::Teams => "teams",
        WebhookKind::Slack => "slack",
        WebhookKind::Generic => "generic",
    }
}

/// The JSON the webhook's kind expects, or why the message does not fit it.
fn payload(hook: &WebhookConfig, body: &str, title: Option<&str>) -> Result<Value, ToolError> {
    let (max, joined) = match hook.kind {
        WebhookKind::Discord => (DISCORD_MAX, bold_first(body, title, "**")),
        WebhookKind::Slack => (SLACK_MAX, bold_first(body, title, "*")),
        WebhookKind::Teams => (TEAMS_MAX, body.to_owned()),
        WebhookKind::Generic => (GENERIC_MAX, body.to_owned()),
    };
    let count = joined.chars().count();
    if count > max {
        return Err(ToolError::limit(format!(
            "the message has {count} characters, more than the {max} a {} webhook takes; shorten it or split it",
            kind_name(hook.kind)
        )));
    }
    Ok(match hook.kind {
        // No @everyone, role or user pings from text the model wrote.
        WebhookKind::Discord => json!({"content": joined, "allowed_mentions": {"parse": []}}),
        WebhookKind::Slack => json!({"text": joined}),
        WebhookKind::Teams if is_office_connector(&hook.url) => {
            // Office 365 connectors take the legacy message card.
            let mut card = json!({
                "@type": "MessageCard",
                "@context": "https://schema.org/extensions",
                "summary": title.unwrap_or_else(|| summary(body)),
                "text": body,
            });
            if let Some(t) = title {
                card["title"] = json!(t);
            }
            card
        }
        WebhookKind::Teams => {
            // Workflows (Power Automate) webhooks take an Adaptive Card in a message.
            let mut blocks = Vec::new();
            if let Some(t) = title {
                blocks.push(json!({"type": "TextBlock", "text": t, "weight": "Bolder", "size": "Medium", "wrap": true}));
            }
            blocks.push(json!({"type": "TextBlock", "text": body, "wrap": true}));
            json!({
                "type": "message",
                "attachments": [{
                    "contentType": "application/vnd.microsoft.card.adaptive",
                    "contentUrl": null,
                    "content": {
                        "$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
                        "type": "AdaptiveCard",
                        "version": "1.4",
                        "body": blocks,
                    },
                }],
            })
        }
        WebhookKind::Generic => match title {
            Some(t) => json!({"text": body, "title": t}),
            None => json!({"text": body}),
        },
    })
}

/// `body` with `title` as a first line between `mark`s.
fn bold_first(body: &str, title: Option<&str>, mark: &str) -> String {
    match title {
        Some(t) => format!("{mark}{t}{mark}\n{body}"),
        None => body.to_owned(),
    }
}

/// The start of `body`, for a card's summary.
fn summary(body: &str) -> &str {
    let line = body.lines().next().unwrap_or(body);
    match line.char_indices().nth(80) {
        Some((i, _)) => &line[..i],
        None => line,
    }
}

/// Whether `url` is a legacy Office 365 connector (which takes message cards).
fn is_office_connector(url: &str) -> bool {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .is_some_and(|h| h == "outlook.office.com" || h.ends_with(".webhook.office.com"))
}

/// `text` with the webhook's URL, and every part of it that could be its token, hidden.
fn hide(text: &str, url: &str) -> String {
    let mut parts: Vec<String> = vec![url.to_owned()];
    if let Ok(u) = url::Url::parse(url) {
        parts.push(u.to_string());
        parts.push(u.path().to_owned());
        // Path segments and query values that could be a token or an id.
        parts.extend(
            u.path_segments()
                .into_iter()
                .flatten()
                .filter(|s| token_like(s))
                .map(String::from),
        );
        parts.extend(
            u.query_pairs()
                .map(|(_, v)| v.into_owned())
                .filter(|v| token_like(v)),
        );
        if let Some(q) = u.query() {
            parts.push(q.to_owned());
        }
    }
    // Longest first, so a whole URL goes before the pieces of it.
    parts.sort_by_key(|p| std::cmp::Reverse(p.len()));
    parts.dedup();
    let mut out = text.to_owned();
    for p in parts.iter().filter(|p| p.len() > 1) {
        out = out.replace(p.as_str(), "[webhook URL hidden]");
    }
    out
}

/// Whether a piece of a URL could be a token or an id (not a word such as `webhooks`).
fn token_like(part: &str) -> bool {
    part.len() >= 16
        || (part.len() >= 6
            && part
                .chars()
                .any(|c| c.is_ascii_digit() || c.is_ascii_uppercase() || c == '-' || c == '_'))
}

/// Why the post did not happen, said without the URL.
fn refusal(name: &str, url: &str, e: &WebError) -> String {
    let said = match e.root() {
        WebError::AddressRefused { addr, class, .. } => format!(
            "refused: its URL points at {addr}, a {class} address, and the web guard sends only to public addresses"
        ),
        WebError::SchemeNotAllowed { scheme, .. } => {
            format!("refused: its URL is {scheme}:, and only http and https are allowed")
        }
        WebError::InvalidUrl { .. } => "refused: its URL is not a usable URL".to_owned(),
        WebError::UserinfoInUrl { .. } => {
            "refused: its URL has a user name or password in it".to_owned()
        }
        WebError::Timeout { after, .. } => format!(
            "no answer within {} s (the message may or may not have arrived)",
            after.as_secs()
        ),
        WebError::Http { source, .. } => {
            // reqwest's message names the URL: keep only what went wrong.
            let kind = if source.is_connect() {
                "could not connect"
            } else if source.is_timeout() {
                "timed out"
            } else {
                "the request failed"
            };
            format!("{kind}: {}", hide(&source.to_string(), url))
        }
        other => hide(&other.to_string(), url),
    };
    let not = if e.is_denial() {
        "not posted"
    } else {
        "failed"
    };
    hide(&format!("webhook {name}: {not}, {said}"), url)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn hook(kind: WebhookKind, url: &str) -> WebhookConfig {
        WebhookConfig {
            kind,
            url: url.into(),
        }
    }

    #[test]
    fn each_kind_gets_its_format() {
        let d = payload(
            &hook(
                WebhookKind::Discord,
                "https://discord.com/api/webhooks/1/tok",
            ),
            "hi",
            Some("T"),
        )
        .unwrap();
        assert_eq!(d["content"], "**T**\nhi");
        assert_eq!(d["allowed_mentions"]["parse"], json!([]));
        let s = payload(
            &hook(WebhookKind::Slack, "https://hooks.slack.com/services/T/B/x"),
            "hi",
            None,
        )
        .unwrap();
        assert_eq!(s, json!({"text": "hi"}));
        let legacy = payload(
            &hook(
                WebhookKind::Teams,
                "https://acme.webhook.office.com/webhookb2/x",
            ),
            "hi",
            Some("T"),
        )
        .unwrap();
        assert_eq!(legacy["@type"], "MessageCard");
        assert_eq!(legacy["title"], "T");
        let flow = payload(
            &hook(
                WebhookKind::Teams,
                "https://prod.westus.logic.azure.com/workflows/x",
            ),
            "hi",
            None,
        )
        .unwrap();
        assert_eq!(flow["attachments"][0]["content"]["type"], "AdaptiveCard");
        assert_eq!(flow["attachments"][0]["content"]["body"][0]["text"], "hi");
        let g = payload(
            &hook(WebhookKind::Generic, "https://example.com/h"),
            "hi",
            Some("T"),
        )
        .unwrap();
        assert_eq!(g, json!({"text": "hi", "title": "T"}));
        let long = "x".repeat(DISCORD_MAX + 1);
        let e = payload(
            &hook(WebhookKind::Discord, "https://discord.com/x"),
            &long,
            None,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("2001 characters, more than the 2000"),
            "{e}"
        );
        assert!(matches!(e, ToolError::Limit(_)));
    }

    #[test]
    fn the_url_and_its_token_are_hidden() {
        let url = "https://discord.com/api/webhooks/123456789/s3cr3t-t0ken?thread_id=998877";
        let said = hide(
            "error sending request for url (https://discord.com/api/webhooks/123456789/s3cr3t-t0ken?thread_id=998877): boom; path /api/webhooks/123456789/s3cr3t-t0ken, token s3cr3t-t0ken",
            url,
        );
        assert!(!said.contains("s3cr3t"), "{said}");
        assert!(!said.contains("998877"), "{said}");
        assert!(said.contains("boom"), "{said}");
    }
}
