//! CalDAV calendars: events listed with a time-range REPORT, created with PUT, through the web guard.
//!
//! The calendar is `[comms.caldav] url` (a calendar collection); the password is the vault
//! secret `password_secret`, which the guard attaches as Basic auth with `username`, only for the
//! server's host. What the tools share is here: the request, the server's errors in words the
//! model can act on, and the multistatus answer read with roxmltree (no DTDs, so no entity
//! expansion).

pub mod calendar_create;
pub mod calendar_events;
mod ical;

use cairn_config::CalDavConfig;
use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, ToolError};
use cairn_web::{CredentialUse, Method, Placement, WebGuard, WebRequest, WebResponse, header};
use rmcp::model::CallToolResult;

use crate::comms::{Comms, cancelled};

/// One calendar, for one call.
pub(crate) struct CalDav<'a> {
    guard: &'a WebGuard,
    pub(crate) settings: &'a CalDavConfig,
    /// The collection's URL, ending in `/`.
    pub(crate) url: String,
    user: &'a str,
}

impl<'a> CalDav<'a> {
    /// The calendar of `host`'s `[comms.caldav]`, or the error saying what is missing.
    #[allow(clippy::result_large_err)] // the error is the call's result, built once
    pub(crate) fn of(host: &'a Comms) -> Result<CalDav<'a>, CallToolResult> {
        let Some(settings) = host.settings.caldav.as_ref() else {
            return Err(error(
                "no calendar is configured: add `[comms.caldav]` (url, username, password_secret) to your config",
            ));
        };
        let Some(guard) = host.guard.as_deref() else {
            return Err(error(
                "the web tools are off (`[web] enabled = false`), so the calendar cannot be reached",
            ));
        };
        let mut url = settings.url.trim().to_owned();
        if !url.ends_with('/') {
            url.push('/');
        }
        Ok(CalDav {
            guard,
            settings,
            url,
            user: &host.user,
        })
    }

    /// `method` on `url` with `body` of `content_type` and extra `headers`: the response when
    /// the server answered 2xx, else an error the model can act on.
    pub(crate) async fn send(
        &self,
        method: Method,
        url: &str,
        body: (String, &'static str),
        headers: &[(&'static str, &'static str)],
        cx: &CallContext,
    ) -> Result<WebResponse, ToolError> {
        let mut request = WebRequest::new(method, url)
            .for_user(self.user)
            .with_credential(CredentialUse {
                secret: self.settings.password_secret.clone(),
                placement: Placement::Basic {
                    username: self.settings.username.clone(),
                },
            });
        request.body = Some(body.0.into_bytes());
        request.headers.insert(
            header::CONTENT_TYPE,
            header::HeaderValue::from_static(body.1),
        );
        for (name, value) in headers {
            request.headers.insert(
                header::HeaderName::from_static(name),
                header::HeaderValue::from_static(value),
            );
        }
        let response = tokio::select! {
            r = self.guard.fetch(request) => r,
            () = cx.cancel.cancelled() => return Err(cancelled()),
        };
        let response = match response {
            Ok(r) => r,
            Err(e) if e.is_denial() => {
                return Err(ToolError::refused(format!("refused before sending: {e}")));
            }
            Err(e) => {
                return Err(ToolError::peer(format!(
                    "the calendar server did not answer: {e}"
                )));
            }
        };
        let status = response.status.as_u16();
        match status {
            200..=299 => Ok(response),
            401 => Err(ToolError::peer(format!(
                "the calendar server refused the login `{}` with the password in vault secret `{}` (401); check both and store the right password in the vault",
                self.settings.username, self.settings.password_secret
            ))),
            403 => Err(ToolError::peer(format!(
                "the calendar server forbids this for `{}` (403)",
                self.settings.username
            ))),
            404 => Err(ToolError::not_found(format!(
                "no calendar at {} (404): check `[comms.caldav] url`",
                self.url
            ))),
            _ => Err(ToolError::peer(format!(
                "the calendar server answered {status} {}",
                response.status.canonical_reason().unwrap_or("")
            ))),
        }
    }
}
