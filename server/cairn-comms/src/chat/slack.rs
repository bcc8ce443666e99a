//! What the Slack tools share: calls to Slack's Web API through the web guard (the bot token is
//! the vault secret `[comms.slack] token_secret`, attached by the guard as a Bearer token), the
//! channel listing (paged, capped), and finding an allowed channel by id or `#name`.

use cairn_config::SlackConfig;
use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, ToolError};
use cairn_web::{CredentialUse, Method, WebError, WebGuard, WebRequest, header};
use rmcp::model::CallToolResult;
use serde_json::Value;

use crate::comms::{Comms, cancelled};
use crate::send::{SendRefusal, allowed};

/// Channels asked for per page of `conversations.list` (Slack's documented sweet spot).
pub(crate) const PAGE: usize = 200;
/// Pages of `conversations.list` read at most, so a huge workspace cannot make one call endless.
pub(crate) const MAX_PAGES: usize = 10;
/// The allow list's setting, named in refusals.
pub(crate) const SETTING: &str = "comms.slack.allow_channels";

/// The Slack account of `[comms.slack]` and the guard its requests go through.
pub(crate) struct Slack<'a> {
    host: &'a Comms,
    guard: &'a WebGuard,
    pub(crate) config: &'a SlackConfig,
}

/// One channel as `conversations.list` describes it.
#[derive(Debug, Clone)]
pub(crate) struct Channel {
    pub id: String,
    pub name: String,
    pub members: Option<u64>,
    pub private: bool,
    pub archived: bool,
}

/// The channels read, and whether there were more than were read.
pub(crate) struct Listing {
    pub channels: Vec<Channel>,
    pub more: bool,
}

/// An allowed channel: its id (what the API takes) and the allow-list entry that allows it
/// (what the user is shown and asked about).
#[derive(Debug, Clone)]
pub(crate) struct Allowed {
    pub id: String,
    pub entry: String,
    pub name: Option<String>,
}

impl Allowed {
    /// How the channel is named to the model: `#name (C0123)`, or the id alone.
    pub(crate) fn label(&self) -> String {
        match &self.name {
            Some(n) => format!("#{n} ({})", self.id),
            None => self.id.clone(),
        }
    }
}

/// Whether `text` is a Slack conversation id (`C0123ABCD`, `G...` private, `D...` direct):
/// upper case with digits, which a channel name (lower case) never is.
pub(crate) fn is_channel_id(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some('C' | 'G' | 'D'))
        && (2..=24).contains(&text.len())
        && text.chars().any(|c| c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// A message time (`ts`, seconds with a fraction) as UTC.
pub(crate) fn time_of(ts: &str) -> String {
    let secs = ts.split('.').next().and_then(|s| s.parse::<i64>().ok());
    secs.and_then(|s| chrono::DateTime::from_timestamp(s, 0))
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| ts.to_owned())
}

impl<'a> Slack<'a> {
    /// The Slack account, or the error saying what to configure.
    #[allow(clippy::result_large_err)]
    pub(crate) fn of(host: &'a Comms) -> Result<Slack<'a>, CallToolResult> {
        let Some(config) = host.settings.slack.as_ref() else {
            return Err(error(
                "Slack is not set up: add `[comms.slack]` (token_secret, allow_channels) to your config",
            ));
        };
        let Some(guard) = host.guard.as_deref() else {
            return Err(error(
                "the web tools are off (`[web] enabled = false`), so Slack cannot be reached",
            ));
        };
        Ok(Slack {
            host,
            guard,
            config,
        })
    }

    /// Calls API method `method` (`chat.postMessage`): a GET with `params` in the query, or a
    /// form POST of them. Slack's answer when `ok` is true; otherwise what went wrong, said for
    /// the model.
    pub(crate) async fn call(
        &self,
        method: &str,
        post: bool,
        params: &[(&str, &str)],
        cx: &CallContext,
    ) -> Result<Value, ToolError> {
        let base = self.config.api.trim_end_matches('/');
        let mut url = url::Url::parse(&format!("{base}/{method}")).map_err(|e| {
            ToolError::invalid(format!(
                "`[comms.slack] api` ({base}) is not a usable URL: {e}"
            ))
        })?;
        let form = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(params)
            .finish();
        let mut request = if post {
            let mut r = WebRequest::new(Method::POST, url.as_str());
            r.headers.insert(
                header::CONTENT_TYPE,
                header::HeaderValue::from_static("application/x-www-form-urlencoded"),
            );
            r.body = Some(form.into_bytes());
            r
        } else {
            if !params.is_empty() {
                url.set_query(Some(&form));
            }
            WebRequest::new(Method::GET, url.as_str())
        };
        request = request
            .with_credential(CredentialUse::bearer(self.config.token_secret.clone()))
            .for_user(self.host.user.clone());
        let response = tokio::select! {
            r = self.guard.fetch(request) => r,
            () = cx.cancel.cancelled() => return Err(cancelled()),
        };
        let response = response.map_err(|e| self.web_error(method, &e))?;
        let status = response.status.as_u16();
        if status == 429 {
            let after = response
                .headers
                .get(header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map_or_else(|| "a few".to_owned(), |s| s.to_string());
            return Err(ToolError::limit(format!(
                "Slack rate-limited {method}: try again in {after} seconds"
            )));
        }
        let body: Option<Value> = serde_json::from_slice(&response.body).ok();
        let Some(body) = body else {
            return Err(ToolError::unreadable(format!(
                "Slack's {method} answered {status} with something that is not JSON{}: check `[comms.slack] api` ({base})",
                if response.truncated {
                    " (cut at the size cap)"
                } else {
                    ""
                }
            )));
        };
        if body.get("ok").and_then(Value::as_bool) == Some(true) && response.status.is_success() {
            return Ok(body);
        }
        // The server's word, kept short: an error code is one.
        let code: String = body
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("unknown_error")
            .chars()
            .take(80)
            .collect();
        Err(self.slack_error(method, status, &code, &body))
    }

    /// A refusal by the guard or a transport failure, said for the model.
    fn web_error(&self, method: &str, e: &WebError) -> ToolError {
        if e.is_denial() {
            ToolError::refused(format!("Slack's {method} was not called: {e}"))
        } else {
            ToolError::peer(format!("Slack's {method} failed: {e}"))
        }
    }

    /// Slack's `ok: false` answer, with what to do about the usual ones.
    fn slack_error(&self, method: &str, status: u16, code: &str, body: &Value) -> ToolError {
        let secret = &self.config.token_secret;
        let hint = match code {
            "not_authed" | "invalid_auth" | "account_inactive" | "token_revoked"
            | "token_expired" => format!(
                "the bot token was refused: check the vault secret `{secret}` (`cairn vault set {secret}`)"
            ),
            "missing_scope" => format!(
                "the bot token lacks a scope{}: add it to the Slack app and reinstall it",
                body.get("needed")
                    .and_then(Value::as_str)
                    .map(|n| format!(" (needed: {n})"))
                    .unwrap_or_default()
            ),
            "channel_not_found" => {
                "no such channel, or the bot cannot see it: list them with slack_channels".into()
            }
            "not_in_channel" => "the bot is not in the channel: invite it there first".into(),
            "is_archived" => "the channel is archived".into(),
            "msg_too_long" => "the message is too long for Slack".into(),
            "ratelimited" | "rate_limited" => "Slack's rate limit: try again in a minute".into(),
            _ => "see Slack's documentation of this error".into(),
        };
        let said = format!("Slack refused {method} ({status}, `{code}`): {hint}");
        if matches!(code, "ratelimited" | "rate_limited") {
            ToolError::limit(said)
        } else {
            ToolError::peer(said)
        }
    }

    /// The conversations the bot can see, at most `max`, `MAX_PAGES` pages at most.
    pub(crate) async fn channels(
        &self,
        archived: bool,
        max: usize,
        cx: &CallContext,
    ) -> Result<Listing, ToolError> {
        let mut channels: Vec<Channel> = Vec::new();
        let mut cursor = String::new();
        let mut seen_cursors: Vec<String> = Vec::new();
        let limit = PAGE.to_string();
        for _ in 0..MAX_PAGES {
            let mut params = vec![
                ("limit", limit.as_str()),
                ("types", "public_channel,private_channel"),
                ("exclude_archived", if archived { "false" } else { "true" }),
            ];
            if !cursor.is_empty() {
                params.push(("cursor", cursor.as_str()));
            }
            let page = self.call("conversations.list", false, &params, cx).await?;
            for c in page
                .get("channels")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(id) = c.get("id").and_then(Value::as_str) else {
                    continue;
                };
                // A server that repeats a page must not repeat rows.
                if channels.iter().any(|k| k.id == id) {
                    continue;
                }
                if channels.len() == max {
                    return Ok(Listing {
                        channels,
                        more: true,
                    });
                }
                let flag = |k: &str| c.get(k).and_then(Value::as_bool).unwrap_or(false);
                channels.push(Channel {
                    id: id.to_owned(),
                    name: c
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    members: c.get("num_members").and_then(Value::as_u64),
                    private: flag("is_private"),
                    archived: flag("is_archived"),
                });
            }
            let next = page
                .pointer("/response_metadata/next_cursor")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            if next.is_empty() {
                return Ok(Listing {
                    channels,
                    more: false,
                });
            }
            // A cursor seen before would loop forever: stop and say the list may go on.
            if seen_cursors.contains(&next) {
                return Ok(Listing {
                    channels,
                    more: true,
                });
            }
            seen_cursors.push(next.clone());
            cursor = next;
        }
        Ok(Listing {
            channels,
            more: true,
        })
    }

    /// The allow-list entry allowing channel `id` named `name`, if any: an id entry by the id,
    /// a name entry (`#dev`, or `dev`) by the name.
    pub(crate) fn entry_for(&self, id: Option<&str>, name: Option<&str>) -> Option<String> {
        let name = name.map(|n| n.trim_start_matches('#'));
        self.config
            .allow_channels
            .iter()
            .find(|p| {
                let p = p.trim();
                if is_channel_id(p) {
                    id.is_some_and(|id| allowed(p, id))
                } else {
                    name.is_some_and(|n| !n.is_empty() && allowed(p.trim_start_matches('#'), n))
                }
            })
            .cloned()
    }

    /// The refusal of a channel `[comms.slack] allow_channels` does not allow.
    pub(crate) fn not_allowed(&self, channel: &str) -> CallToolResult {
        let allow = &self.config.allow_channels;
        error(
            SendRefusal::NotAllowed {
                service: "slack".into(),
                recipient: channel.to_owned(),
                setting: SETTING.into(),
                allowed: if allow.is_empty() {
                    "none".into()
                } else {
                    allow.join(", ")
                },
            }
            .to_string(),
        )
    }

    /// The channel `wanted` (an id, `#name` or `name`) if the user allowed it, by its id or
    /// its name: found in `conversations.list` when the allow list names it the other way.
    /// Anything not allowed is refused, never guessed.
    pub(crate) async fn allowed_channel(
        &self,
        wanted: &str,
        cx: &CallContext,
    ) -> Result<Allowed, CallToolResult> {
        let wanted = wanted.trim();
        if wanted.is_empty() {
            return Err(error("slack: no channel given"));
        }
        let (id, name) = if is_channel_id(wanted) {
            (Some(wanted), None)
        } else {
            (None, Some(wanted.trim_start_matches('#')))
        };
        let shown = match (id, name) {
            (Some(id), _) => id.to_owned(),
            (None, Some(n)) => format!("#{n}"),
            (None, None) => wanted.to_owned(),
        };
        // An allowed id needs no lookup: it is what the API takes.
        if let Some(id) = id
            && let Some(entry) = self.entry_for(Some(id), None)
        {
            return Ok(Allowed {
                id: id.to_owned(),
                entry,
                name: None,
            });
        }
        // Nothing in the allow list could be this channel: refuse before asking Slack.
        let allow = &self.config.allow_channels;
        if self.entry_for(id, name).is_none()
            && !allow
                .iter()
                .any(|p| is_channel_id(p.trim()) == id.is_none())
        {
            return Err(self.not_allowed(&shown));
        }
        let listing = self
            .channels(true, PAGE * MAX_PAGES, cx)
            .await
            .map_err(CallToolResult::from)?;
        let found = listing.channels.iter().find(|c| match (id, name) {
            (Some(id), _) => c.id == id,
            (None, Some(n)) => c.name.eq_ignore_ascii_case(n),
            (None, None) => false,
        });
        match found {
            Some(c) => match self.entry_for(Some(&c.id), Some(&c.name)) {
                Some(entry) => Ok(Allowed {
                    id: c.id.clone(),
                    entry,
                    name: Some(c.name.clone()),
                }),
                None => Err(self.not_allowed(&format!("#{} ({})", c.name, c.id))),
            },
            None if self.entry_for(id, name).is_some() => Err(error(format!(
                "slack: {shown} is allowed but the bot cannot see it{}: check the name, or invite the bot, and see slack_channels",
                if listing.more {
                    format!(" among the first {} channels", listing.channels.len())
                } else {
                    String::new()
                }
            ))),
            None => Err(self.not_allowed(&shown)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_channel_id, time_of};

    #[test]
    fn ids_are_told_from_names() {
        for id in ["C012AB3CD", "G0123", "D9"] {
            assert!(is_channel_id(id), "{id}");
        }
        for name in [
            "general",
            "#general",
            "DEV",
            "GENERAL",
            "C",
            "c012ab3cd",
            "C01 2",
            "",
        ] {
            assert!(!is_channel_id(name), "{name}");
        }
    }

    #[test]
    fn message_times_read_as_utc() {
        assert_eq!(time_of("1512085950.000216"), "2017-11-30 23:52:30 UTC");
        assert_eq!(time_of("not a time"), "not a time");
    }
}
