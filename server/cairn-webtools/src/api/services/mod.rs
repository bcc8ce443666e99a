//! First-class API integrations (category `api`): curated operations of the services developers
//! use most, each a tool with a schema written for the model rather than the raw OpenAPI
//! operation, served in-process as [`service_tools`] (`cairn-services`) from [`SERVICE_TOOLS`].
//!
//! Each service is configured in `[api.services.NAME]` (where it answers, the vault secret it
//! authenticates with); every request goes through the web guard, which attaches the secret
//! only for hosts it is bound to. [`Services::call`] is the one request path: the service's
//! base address, the credential, JSON both ways, and the service's error statuses named
//! (401, 403, 404, 429 waited as `Retry-After` says when short, 5xx). Writes are agent-only
//! tools with effect `write`, so the approval shows what will be created.

pub mod asana;
pub mod bitbucket;
pub mod github;
pub mod gitlab;
pub mod jira;
pub mod launchdarkly;
pub(crate) mod paging;
pub mod sendgrid;
pub mod snyk;
pub mod stripe;
pub mod vercel;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use cairn_agent::tools::CallContext;
use cairn_toolkit::{Entry, ToolSet};
use cairn_workspace::Workspace;
use serde_json::Value;
use url::Url;

use super::ApiAuth;
use cairn_web::{Method, WebError, WebGuard, WebRequest, WebResponse};

/// One configured service: where it answers and how it authenticates.
#[derive(Debug, Clone, Default)]
pub struct ServiceSettings {
    /// Over the service's public API (`https://api.github.com`).
    pub base_url: Option<String>,
    pub auth: Option<ApiAuth>,
}

/// What the integrations share: the guard, whose requests they are, the services' settings.
pub struct Services {
    guard: Arc<WebGuard>,
    user: String,
    workspace: Option<Arc<Workspace>>,
    settings: BTreeMap<String, ServiceSettings>,
}

impl std::fmt::Debug for Services {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Services")
            .field("services", &self.settings.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl cairn_toolkit::Host for Services {
    fn workspace(&self) -> Option<&Arc<Workspace>> {
        self.workspace.as_ref()
    }
}

/// Why a service call gave no answer the tool can use; the text is what the model reads.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The guard refused, or the request failed on the way.
    #[error("{0}")]
    Web(#[from] WebError),
    /// 401: no credential, or one the service does not accept.
    #[error("{service} answered 401: not signed in; {hint}")]
    Unauthorized { service: String, hint: String },
    /// 403: signed in, not allowed (or a rate limit some services answer with 403).
    #[error("{service} answered 403: not allowed: {message}")]
    Forbidden { service: String, message: String },
    /// 404: no such thing (or, for private ones, not visible to this credential).
    #[error(
        "{service} answered 404: {what} was not found (or is not visible with this credential)"
    )]
    NotFound { service: String, what: String },
    /// 429, still limited after waiting once as `Retry-After` said.
    #[error("{service} answered 429: rate limited; try again in {retry_after_secs} s")]
    RateLimited {
        service: String,
        retry_after_secs: u64,
    },
    /// Any other error status.
    #[error("{service} answered {status}: {message}")]
    Status {
        service: String,
        status: u16,
        message: String,
    },
    /// An argument or an answer that cannot be used.
    #[error("{0}")]
    Invalid(String),
    /// The run was cancelled.
    #[error("cancelled")]
    Cancelled,
}

/// The longest a 429's `Retry-After` is waited before the call gives up and says so.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(10);

impl Services {
    /// The integrations' host over the `[api.services]` settings.
    pub fn new(
        guard: Arc<WebGuard>,
        user: impl Into<String>,
        settings: BTreeMap<String, ServiceSettings>,
    ) -> Services {
        Services {
            guard,
            user: user.into(),
            workspace: None,
            settings,
        }
    }

    /// The workspace, for tools that read or save files.
    pub fn with_workspace(mut self, workspace: Option<Arc<Workspace>>) -> Services {
        self.workspace = workspace;
        self
    }

    /// The base address of `service`: its configured `base_url`, else `public`.
    pub(crate) fn base(&self, service: &str, public: &str) -> Result<Url, ServiceError> {
        let text = self
            .settings
            .get(service)
            .and_then(|s| s.base_url.clone())
            .unwrap_or_else(|| public.to_owned());
        let mut url = Url::parse(&text).map_err(|e| {
            ServiceError::Invalid(format!("[api.services.{service}] base_url {text:?}: {e}"))
        })?;
        if !url.path().ends_with('/') {
            let path = format!("{}/", url.path());
            url.set_path(&path);
        }
        Ok(url)
    }

    /// One JSON call to `service` (`path` relative to its base, `query` pairs, an optional
    /// JSON body), authenticated with its configured secret: the status and the JSON answer
    /// (`null` when empty), or an error naming what the status means. `what` names the thing
    /// asked for, for a 404.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn call(
        &self,
        cx: &CallContext,
        service: &str,
        public: &str,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<&Value>,
        what: &str,
    ) -> Result<(WebResponse, Value), ServiceError> {
        let mut url = self
            .base(service, public)?
            .join(path.trim_start_matches('/'))
            .map_err(|e| ServiceError::Invalid(format!("{path:?}: {e}")))?;
        if !query.is_empty() {
            let mut pairs = url.query_pairs_mut();
            for (k, v) in query {
                pairs.append_pair(k, v);
            }
        }
        let mut waited = false;
        loop {
            let mut request =
                WebRequest::new(method.clone(), url.as_str()).for_user(self.user.clone());
            request.headers.insert(
                cairn_web::header::ACCEPT,
                cairn_web::header::HeaderValue::from_static("application/json"),
            );
            request.headers.insert(
                cairn_web::header::USER_AGENT,
                cairn_web::header::HeaderValue::from_static("cairn"),
            );
            if let Some(body) = body {
                request.headers.insert(
                    cairn_web::header::CONTENT_TYPE,
                    cairn_web::header::HeaderValue::from_static("application/json"),
                );
                request.body = Some(
                    serde_json::to_vec(body).map_err(|e| ServiceError::Invalid(e.to_string()))?,
                );
            }
            if let Some(auth) = self.settings.get(service).and_then(|s| s.auth.as_ref()) {
                request =
                    request.with_credential(auth.credential().map_err(ServiceError::Invalid)?);
            }
            let response = tokio::select! {
                r = self.guard.fetch(request) => r?,
                () = cx.cancel.cancelled() => return Err(ServiceError::Cancelled),
            };
            let status = response.status.as_u16();
            if status == 429 {
                let after = retry_after(&response).unwrap_or(60);
                if !waited && Duration::from_secs(after) <= MAX_RETRY_WAIT {
                    waited = true;
                    tokio::select! {
                        () = tokio::time::sleep(Duration::from_secs(after)) => continue,
                        () = cx.cancel.cancelled() => return Err(ServiceError::Cancelled),
                    }
                }
                return Err(ServiceError::RateLimited {
                    service: service.to_owned(),
                    retry_after_secs: after,
                });
            }
            let json: Value = if response.body.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(&response.body).unwrap_or_else(|_| {
                    Value::String(String::from_utf8_lossy(&response.body).into_owned())
                })
            };
            if (200..300).contains(&status) {
                return Ok((response, json));
            }
            let message = message_of(&json);
            return Err(match status {
                401 => ServiceError::Unauthorized {
                    service: service.to_owned(),
                    hint: match self.settings.get(service).and_then(|s| s.auth.as_ref()) {
                        Some(a) => format!("check the vault secret `{}` ({message})", a.secret),
                        None => format!(
                            "set `[api.services.{service}] auth = {{ secret = \"NAME\" }}` and `cairn vault set NAME --host HOST`"
                        ),
                    },
                },
                403 => ServiceError::Forbidden {
                    service: service.to_owned(),
                    message,
                },
                404 => ServiceError::NotFound {
                    service: service.to_owned(),
                    what: what.to_owned(),
                },
                _ => ServiceError::Status {
                    service: service.to_owned(),
                    status,
                    message,
                },
            });
        }
    }
}

/// Seconds a `Retry-After` header asks for (delta-seconds only).
fn retry_after(response: &WebResponse) -> Option<u64> {
    response
        .headers
        .get(cairn_web::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The message of an error body in the shapes the services use (`message`, `error`,
/// `errorMessages`, `detail`), cut short; the body's start otherwise.
fn message_of(json: &Value) -> String {
    let found = ["message", "error_description", "error", "detail"]
        .iter()
        .find_map(|k| json.get(k).and_then(Value::as_str).map(str::to_owned))
        // Stripe and Vercel: `{"error": {"message": ...}}`.
        .or_else(|| {
            json.pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .or_else(|| {
            json.get("errorMessages")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join("; ")
                })
        })
        .unwrap_or_else(|| match json {
            Value::String(s) => s.clone(),
            Value::Null => "no details".to_owned(),
            other => other.to_string(),
        });
    found.chars().take(300).collect()
}

/// The integrations, in the order listed.
pub const SERVICE_TOOLS: &[Entry<Services>] = &[
    // GitHub (github/)
    Entry::of::<github::search::GithubSearch>(),
    Entry::of::<github::issue::GithubIssue>(),
    Entry::of::<github::create_issue::GithubCreateIssue>(),
    Entry::of::<github::comment::GithubComment>(),
    Entry::of::<github::workflow_runs::GithubWorkflowRuns>(),
    Entry::of::<github::failed_jobs::GithubFailedJobs>(),
    Entry::of::<github::releases::GithubReleases>(),
    Entry::of::<github::pull_files::GithubPullFiles>(),
    // -- end of github
    // GitLab (gitlab/)
    Entry::of::<gitlab::issues::GitlabIssues>(),
    Entry::of::<gitlab::merge_requests::GitlabMergeRequests>(),
    Entry::of::<gitlab::pipelines::GitlabPipelines>(),
    Entry::of::<gitlab::create_issue::GitlabCreateIssue>(),
    // -- end of gitlab
    // Jira (jira/)
    Entry::of::<jira::search::JiraSearch>(),
    Entry::of::<jira::issue::JiraIssue>(),
    Entry::of::<jira::create_issue::JiraCreateIssue>(),
    Entry::of::<jira::transition::JiraTransition>(),
    // -- end of jira
    // Asana, Bitbucket, Snyk (asana/, bitbucket/, snyk/)
    Entry::of::<asana::search::AsanaSearch>(),
    Entry::of::<asana::task::AsanaTask>(),
    Entry::of::<asana::create_task::AsanaCreateTask>(),
    Entry::of::<bitbucket::pull_requests::BitbucketPullRequests>(),
    Entry::of::<bitbucket::pipelines::BitbucketPipelines>(),
    Entry::of::<snyk::issues::SnykIssues>(),
    // -- end of asana, bitbucket, snyk
    // SendGrid, Vercel, Stripe, LaunchDarkly (sendgrid/, vercel/, stripe/, launchdarkly/)
    Entry::of::<sendgrid::suppressions::SendgridSuppressions>(),
    Entry::of::<sendgrid::stats::SendgridStats>(),
    Entry::of::<vercel::deployments::VercelDeployments>(),
    Entry::of::<vercel::deployment_logs::VercelDeploymentLogs>(),
    Entry::of::<stripe::customers::StripeCustomers>(),
    Entry::of::<stripe::payments::StripePayments>(),
    Entry::of::<launchdarkly::flags::LaunchdarklyFlags>(),
    Entry::of::<launchdarkly::toggle_flag::LaunchdarklyToggleFlag>(),
    // -- end of sendgrid, vercel, stripe, launchdarkly
];

/// The integrations over `host`.
pub fn service_tools(host: Services) -> ToolSet<Services> {
    ToolSet::new(host, SERVICE_TOOLS)
}
