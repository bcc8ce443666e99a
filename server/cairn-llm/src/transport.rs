//! HTTP for every provider: building the client, sending with retries, mapping HTTP
//! failures to [`ModelError`], and turning a response body into a stream of model events.
//!
//! The transport knows no provider: what differs between them comes through the provider's
//! [`WireFormat`]. The provider modules only know their JSON; everything about the network
//! lives here.

use std::collections::VecDeque;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use cairn_agent::model::{ModelClient, ModelError, ModelEvent, ModelRequest, ModelStream};
use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url};
use serde_json::Value;

use crate::excerpt::excerpt;
use crate::settings::ProviderSettings;
use crate::sse::SseParser;
use crate::wire::{Decoder, WireFormat};

/// Longest wait between retries computed by backoff.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Longest `Retry-After` honoured; a provider asking for more is treated as asking for this.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// A configured provider; implements [`ModelClient`].
pub(crate) struct Provider {
    wire: &'static dyn WireFormat,
    settings: ProviderSettings,
    http: reqwest::Client,
    headers: HeaderMap,
    url: String,
    models_url: String,
}

impl Provider {
    /// A client of `settings`' provider, which speaks `wire`.
    pub fn new(
        wire: &'static dyn WireFormat,
        settings: ProviderSettings,
    ) -> Result<Self, ModelError> {
        let name = wire.name();
        let not_configured = |message: String| ModelError::NotConfigured {
            provider: name.to_owned(),
            message,
        };
        if settings.model.trim().is_empty() {
            return Err(not_configured(
                "no model is set; set provider.model".to_owned(),
            ));
        }
        let base = settings.base_url.trim().trim_end_matches('/').to_owned();
        let parsed = Url::parse(&base).map_err(|e| {
            not_configured(format!(
                "provider.base_url `{base}` is not a valid URL: {e}"
            ))
        })?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(not_configured(format!(
                "provider.base_url `{base}` is not http(s)"
            )));
        }
        let endpoints = wire.endpoints(&base);

        let mut headers = HeaderMap::new();
        match &settings.api_key {
            Some(key) => {
                let (name, value) = wire.key_header(key);
                let mut value = HeaderValue::from_str(&value).map_err(|_| {
                    not_configured(format!(
                        "the key in {} contains characters not allowed in an HTTP header",
                        settings.api_key_setting
                    ))
                })?;
                value.set_sensitive(true);
                headers.insert(name, value);
            }
            // Local servers (Ollama, llama.cpp, vLLM) need no key; remote ones always do.
            None if is_loopback(&parsed) => {}
            None => {
                return Err(not_configured(format!(
                    "no API key for {base}; set {}",
                    settings.api_key_setting
                )));
            }
        }
        for (name, value) in wire.fixed_headers() {
            headers.insert(*name, HeaderValue::from_static(value));
        }

        // Proxies from the environment are ignored: a loopback provider must not be sent
        // through a proxy, and a key must not travel somewhere the user did not configure.
        let http = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(settings.connect_timeout)
            .user_agent(concat!("cairn/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| not_configured(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            wire,
            settings,
            http,
            headers,
            url: endpoints.chat,
            models_url: endpoints.models,
        })
    }

    fn name(&self) -> &'static str {
        self.wire.name()
    }

    pub async fn probe(&self) -> Result<String, ModelError> {
        let timeout = self.settings.connect_timeout + self.settings.idle_timeout;
        let request = self
            .http
            .get(&self.models_url)
            .headers(self.headers.clone());
        let response = match tokio::time::timeout(timeout, request.send()).await {
            Err(_) => return Err(self.stalled()),
            Ok(Err(error)) => return Err(self.connect_error(&self.models_url, &error)),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        let body = tokio::time::timeout(timeout, response.text()).await;
        let body = body.ok().and_then(Result::ok).unwrap_or_default();
        if !status.is_success() {
            return Err(self.status_error(status, &body));
        }
        let ids: Vec<String> = serde_json::from_str::<Value>(&body)
            .ok()
            .and_then(|v| v.get("data").and_then(Value::as_array).cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_owned))
            .collect();
        let model = &self.settings.model;
        let availability = if ids.iter().any(|id| id == model) {
            format!("`{model}` is among them")
        } else {
            // Servers name models differently (`llama3` vs `llama3:latest`), so this is a
            // hint, not a failure.
            format!("`{model}` is not listed")
        };
        Ok(format!(
            "{} at {}: reachable, {} models listed, {availability}",
            self.name(),
            self.settings.base_url,
            ids.len()
        ))
    }

    /// Send `body`, retrying transient failures; returns the response and its first bytes.
    async fn send(&self, body: &Value) -> Result<(reqwest::Response, Bytes), ModelError> {
        let mut retries = 0;
        loop {
            let (error, retry_after) = match self.attempt(body).await {
                Attempt::Ok(response, first) => return Ok((response, first)),
                Attempt::Fail(error) => return Err(error),
                Attempt::Retry(error, retry_after) => (error, retry_after),
            };
            if retries >= self.settings.max_retries {
                return Err(match error {
                    ModelError::Http {
                        provider,
                        status,
                        message,
                    } if retries > 0 => {
                        let message = format!("{message} (gave up after {retries} retries)");
                        ModelError::Http {
                            provider,
                            status,
                            message,
                        }
                    }
                    other => other,
                });
            }
            let delay = retry_after
                .map(|d| d.min(MAX_RETRY_AFTER))
                .unwrap_or_else(|| backoff(self.settings.retry_base_delay, retries));
            tracing::debug!(provider = self.name(), %error, ?delay, "retrying model request");
            tokio::time::sleep(delay).await;
            retries += 1;
        }
    }

    async fn attempt(&self, body: &Value) -> Attempt {
        let idle = self.settings.idle_timeout;
        let request = self
            .http
            .post(&self.url)
            .headers(self.headers.clone())
            .header("accept", "text/event-stream")
            .json(body);
        let mut response = match tokio::time::timeout(idle, request.send()).await {
            Err(_) => return Attempt::Fail(self.stalled()),
            Ok(Err(error)) => return Attempt::Retry(self.connect_error(&self.url, &error), None),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status.is_success() {
            // Waiting for the first bytes here means a connection dropped before anything
            // was streamed can still be retried: nothing has reached the caller yet.
            return match tokio::time::timeout(idle, response.chunk()).await {
                Err(_) => Attempt::Fail(self.stalled()),
                Ok(Ok(Some(first))) => Attempt::Ok(response, first),
                Ok(Ok(None) | Err(_)) => Attempt::Retry(self.truncated(), None),
            };
        }
        let retry_after = retry_after(response.headers(), SystemTime::now());
        let text = tokio::time::timeout(idle, response.text()).await;
        let text = text.ok().and_then(Result::ok).unwrap_or_default();
        let error = self.status_error(status, &text);
        if is_retryable(status) {
            Attempt::Retry(error, retry_after)
        } else {
            Attempt::Fail(error)
        }
    }

    fn status_error(&self, status: StatusCode, body: &str) -> ModelError {
        let provider = self.name().to_owned();
        let code = status.as_u16();
        let message = provider_message(body);
        match code {
            401 | 403 => ModelError::Auth {
                provider,
                status: code,
                setting: self.settings.api_key_setting.clone(),
            },
            404 => ModelError::ModelNotFound {
                provider,
                model: self.settings.model.clone(),
                status: code,
            },
            400 if says_model_missing(&message) => ModelError::ModelNotFound {
                provider,
                model: self.settings.model.clone(),
                status: code,
            },
            _ => ModelError::Http {
                provider,
                status: code,
                message,
            },
        }
    }

    fn connect_error(&self, url: &str, error: &reqwest::Error) -> ModelError {
        let message = if error.is_timeout() {
            format!(
                "no connection within {} s",
                self.settings.connect_timeout.as_secs_f64()
            )
        } else {
            root_cause(error)
        };
        ModelError::Connect {
            provider: self.name().to_owned(),
            url: url.to_owned(),
            message,
        }
    }

    fn stalled(&self) -> ModelError {
        stalled(self.name(), self.settings.idle_timeout)
    }

    fn truncated(&self) -> ModelError {
        ModelError::Truncated {
            provider: self.name().to_owned(),
        }
    }
}

impl ModelClient for Provider {
    fn describe(&self) -> String {
        format!("{} ({})", self.name(), self.settings.model)
    }

    fn accepts_images(&self) -> bool {
        self.settings.images
    }

    fn context_window(&self) -> Option<u64> {
        self.settings
            .context_window
            .or_else(|| crate::tokens::known_window(&self.settings.model))
    }

    fn count_tokens(&self, request: &ModelRequest) -> u64 {
        crate::tokens::count(self.settings.kind, &self.settings.model, request)
    }

    fn stream(&self, request: ModelRequest) -> BoxFuture<'_, Result<ModelStream, ModelError>> {
        Box::pin(async move {
            let body = self
                .wire
                .request_body(self.settings.request_options(), &request);
            let decoder = self.wire.decoder();
            let (response, first) = self.send(&body).await?;
            let reader = Reader {
                response: Some(response),
                first: Some(first),
                parser: SseParser::default(),
                decoder,
                queue: VecDeque::new(),
                ended: false,
                provider: self.name(),
                idle: self.settings.idle_timeout,
            };
            let stream: ModelStream = Box::pin(futures::stream::unfold(reader, Reader::next));
            Ok(stream)
        })
    }
}

enum Attempt {
    Ok(reqwest::Response, Bytes),
    Retry(ModelError, Option<Duration>),
    Fail(ModelError),
}

/// Reads a streaming body into model events. Owns the response, so dropping the stream
/// drops the connection and the provider stops generating.
struct Reader {
    response: Option<reqwest::Response>,
    first: Option<Bytes>,
    parser: SseParser,
    decoder: Box<dyn Decoder>,
    queue: VecDeque<Result<ModelEvent, ModelError>>,
    ended: bool,
    provider: &'static str,
    idle: Duration,
}

impl Reader {
    async fn next(mut self) -> Option<(Result<ModelEvent, ModelError>, Self)> {
        loop {
            if let Some(item) = self.queue.pop_front() {
                return Some((item, self));
            }
            if self.ended {
                return None;
            }
            self.pump().await;
        }
    }

    async fn pump(&mut self) {
        let chunk = match (self.first.take(), self.response.as_mut()) {
            (Some(first), _) => Ok(Ok(Some(first))),
            (None, Some(response)) => tokio::time::timeout(self.idle, response.chunk()).await,
            (None, None) => Ok(Ok(None)),
        };
        let mut out = Vec::new();
        match chunk {
            Err(_) => return self.end(Err(stalled(self.provider, self.idle))),
            Ok(Ok(Some(bytes))) => match self.parser.feed(&bytes) {
                Ok(events) => {
                    for event in events {
                        if let Err(error) = self.decoder.event(&event, &mut out) {
                            self.queue.extend(out.into_iter().map(Ok));
                            return self.end(Err(error));
                        }
                        if self.decoder.done() {
                            break;
                        }
                    }
                }
                Err(too_long) => {
                    let error = ModelError::Malformed {
                        provider: self.provider.to_owned(),
                        detail: too_long.to_string(),
                    };
                    return self.end(Err(error));
                }
            },
            // A body error after headers is a cut connection: judged like an early end.
            Ok(Ok(None) | Err(_)) => {
                for event in self.parser.finish() {
                    if !self.decoder.done()
                        && let Err(error) = self.decoder.event(&event, &mut out)
                    {
                        self.queue.extend(out.into_iter().map(Ok));
                        return self.end(Err(error));
                    }
                }
                let complete = self.decoder.finish(&mut out);
                self.queue.extend(out.into_iter().map(Ok));
                if !complete {
                    return self.end(Err(ModelError::Truncated {
                        provider: self.provider.to_owned(),
                    }));
                }
                self.ended = true;
                self.response = None;
                return;
            }
        }
        if self.decoder.done() {
            self.decoder.finish(&mut out);
            self.ended = true;
            self.response = None;
        }
        self.queue.extend(out.into_iter().map(Ok));
    }

    fn end(&mut self, error: Result<ModelEvent, ModelError>) {
        self.queue.push_back(error);
        self.ended = true;
        self.response = None;
    }
}

fn stalled(provider: &str, idle: Duration) -> ModelError {
    ModelError::Stalled {
        provider: provider.to_owned(),
        seconds: idle.as_secs_f64().ceil() as u64,
    }
}

fn is_retryable(status: StatusCode) -> bool {
    matches!(status.as_u16(), 429 | 500 | 502 | 503 | 504 | 529)
}

fn backoff(base: Duration, retries: u32) -> Duration {
    base.saturating_mul(1u32 << retries.min(16))
        .min(MAX_BACKOFF)
}

fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match host.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost") || host.ends_with(".localhost"),
    }
}

/// `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3).
pub(crate) fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0)
            .then(|| Duration::from_secs_f64(seconds.min(3600.0)));
    }
    let at = parse_http_date(value)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Parses the IMF-fixdate form, `Sun, 06 Nov 1994 08:49:37 GMT`, the only one senders
/// may generate today.
fn parse_http_date(value: &str) -> Option<SystemTime> {
    let (_, rest) = value.split_once(", ")?;
    let parts: Vec<&str> = rest.split(' ').collect();
    let [day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let day: u64 = day.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as u64
        + 1;
    let year: i64 = year.parse().ok()?;
    let hms: Vec<u64> = time
        .split(':')
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let [h, m, s] = hms.as_slice() else {
        return None;
    };
    if !(1..=31).contains(&day) || *h > 23 || *m > 59 || *s > 60 {
        return None;
    }
    // Days from 1970-01-01 to the date (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + m * 60 + s;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

/// The provider's own explanation from an error body: `error.message` (OpenAI,
/// Anthropic), `error` as a string (Ollama), `message`, else the body's start.
fn provider_message(body: &str) -> String {
    let value: Option<Value> = serde_json::from_str(body).ok();
    let found = value.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error").filter(|e| e.is_string()))
            .or_else(|| v.get("message"))
            .or_else(|| v.get("detail"))
            .and_then(Value::as_str)
            .map(str::to_owned)
    });
    let message = found.unwrap_or_else(|| body.trim().to_owned());
    if message.is_empty() {
        "(no message)".to_owned()
    } else {
        excerpt(&message)
    }
}

fn says_model_missing(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    message.contains("model")
        && [
            "not found",
            "does not exist",
            "not exist",
            "unknown model",
            "no such model",
            "invalid model",
        ]
        .iter()
        .any(|phrase| message.contains(phrase))
}

/// The innermost cause, e.g. `Connection refused (os error 111)`; reqwest's own message
/// only says that sending failed.
fn root_cause(error: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::excerpt::EXCERPT;

    #[track_caller]
    fn check_retry_after(value: &str, expected: Option<Duration>) {
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_str(value).unwrap());
        // 1994-11-06T08:49:30Z
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_770);
        assert_eq!(retry_after(&headers, now), expected);
    }

    #[test]
    fn retry_after_forms() {
        check_retry_after("0", Some(Duration::ZERO));
        check_retry_after("7", Some(Duration::from_secs(7)));
        check_retry_after("1.5", Some(Duration::from_millis(1500)));
        check_retry_after(
            "Sun, 06 Nov 1994 08:49:37 GMT",
            Some(Duration::from_secs(7)),
        );
        check_retry_after("Sun, 06 Nov 1994 08:49:00 GMT", Some(Duration::ZERO));
        check_retry_after("soon", None);
        check_retry_after("-3", None);
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let base = Duration::from_millis(100);
        assert_eq!(backoff(base, 0), Duration::from_millis(100));
        assert_eq!(backoff(base, 3), Duration::from_millis(800));
        assert_eq!(backoff(base, 40), MAX_BACKOFF);
    }

    #[test]
    fn provider_messages() {
        assert_eq!(
            provider_message(r#"{"error":{"message":"bad key"}}"#),
            "bad key"
        );
        assert_eq!(
            provider_message(r#"{"error":"model 'x' not found"}"#),
            "model 'x' not found"
        );
        assert_eq!(provider_message(""), "(no message)");
        assert_eq!(
            provider_message(&"x".repeat(500)).chars().count(),
            EXCERPT + 1
        );
    }

    #[test]
    fn model_missing_phrases() {
        assert!(says_model_missing(
            "The model `gpt-9` does not exist or you do not have access to it."
        ));
        assert!(says_model_missing("model: claude-x not found"));
        assert!(!says_model_missing("max_tokens is too large"));
    }

    #[test]
    fn loopback_hosts() {
        for url in [
            "http://localhost:11434/v1",
            "http://127.0.0.1:8080",
            "http://[::1]:1/v1",
        ] {
            assert!(is_loopback(&Url::parse(url).unwrap()), "{url}");
        }
        assert!(!is_loopback(
            &Url::parse("https://api.openai.com/v1").unwrap()
        ));
    }
}
