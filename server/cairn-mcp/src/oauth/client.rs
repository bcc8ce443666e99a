//! The streamable-HTTP client with OAuth: rmcp's reqwest client, with the current access token
//! attached to every request, and a request refused with 401 or 403 `insufficient_scope`
//! authorized and sent again. Because this sits under rmcp's transport, a challenge is handled
//! wherever it comes (`initialize`, `tools/list`, a call, the GET stream), without the hub
//! knowing.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

use futures::stream::BoxStream;
use reqwest13::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use super::error::OAuthError;
use super::flow::Authorizer;

type HttpError = StreamableHttpError<reqwest13::Error>;

/// rmcp's reqwest client, with OAuth when `auth` is set.
#[derive(Clone)]
pub(crate) struct AuthClient {
    inner: reqwest13::Client,
    auth: Option<Arc<Authorizer>>,
    max_step_ups: u32,
}

impl AuthClient {
    pub fn new(inner: reqwest13::Client, auth: Option<Arc<Authorizer>>, max_step_ups: u32) -> Self {
        Self {
            inner,
            auth,
            max_step_ups,
        }
    }

    /// Sends with the current token; on 401 authorizes once and sends again; on 403
    /// `insufficient_scope` widens the scope up to `max_step_ups` times.
    async fn with_auth<T, F, Fut>(&self, passed: Option<String>, send: F) -> Result<T, HttpError>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let Some(auth) = &self.auth else {
            return send(passed).await;
        };
        let mut reauthorized = false;
        let mut step_ups = 0;
        loop {
            let token = auth.token().await;
            match send(token.clone()).await {
                Err(StreamableHttpError::AuthRequired(e)) => {
                    if reauthorized {
                        return Err(refused(OAuthError::Unauthorized));
                    }
                    reauthorized = true;
                    auth.unauthorized(token.as_deref(), Some(&e.www_authenticate_header))
                        .await
                        .map_err(refused)?;
                }
                Err(StreamableHttpError::InsufficientScope(e)) => {
                    if step_ups >= self.max_step_ups {
                        return Err(refused(OAuthError::ScopeRetryLimit(step_ups)));
                    }
                    step_ups += 1;
                    auth.insufficient_scope(token.as_deref(), &e.www_authenticate_header)
                        .await
                        .map_err(refused)?;
                }
                other => return other,
            }
        }
    }
}

/// An OAuth failure as a transport error; the typed error stays in the source chain.
fn refused(e: OAuthError) -> HttpError {
    StreamableHttpError::Io(std::io::Error::new(std::io::ErrorKind::PermissionDenied, e))
}

impl StreamableHttpClient for AuthClient {
    type Error = reqwest13::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.with_auth(auth_header, |token| {
            let inner = self.inner.clone();
            let (uri, message, session_id, headers) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                custom_headers.clone(),
            );
            async move {
                inner
                    .post_message(uri, message, session_id, token, headers)
                    .await
            }
        })
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.with_auth(auth_header, |token| {
            let inner = self.inner.clone();
            let (uri, message, session_id, headers) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                custom_headers.clone(),
            );
            async move {
                inner
                    .post_message_with_max_sse_event_size(
                        uri,
                        message,
                        session_id,
                        token,
                        headers,
                        max_sse_event_size,
                    )
                    .await
            }
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.with_auth(auth_header, |token| {
            let inner = self.inner.clone();
            let (uri, message, session_id, headers) = (
                uri.clone(),
                message.clone(),
                session_id.clone(),
                custom_headers.clone(),
            );
            async move {
                inner
                    .post_message_with_response_limits(
                        uri, message, session_id, token, headers, limits,
                    )
                    .await
            }
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        let token = match &self.auth {
            Some(auth) => auth.token().await,
            None => auth_header,
        };
        self.inner
            .delete_session(uri, session_id, token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.with_auth(auth_header, |token| {
            let inner = self.inner.clone();
            let (uri, session_id, last_event_id, headers) = (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                custom_headers.clone(),
            );
            async move {
                inner
                    .get_stream(uri, session_id, last_event_id, token, headers)
                    .await
            }
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        self.with_auth(auth_header, |token| {
            let inner = self.inner.clone();
            let (uri, session_id, last_event_id, headers) = (
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                custom_headers.clone(),
            );
            async move {
                inner
                    .get_stream_with_max_sse_event_size(
                        uri,
                        session_id,
                        last_event_id,
                        token,
                        headers,
                        max_sse_event_size,
                    )
                    .await
            }
        })
        .await
    }
}
