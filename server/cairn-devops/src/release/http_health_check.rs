//! `http_health_check`: is an HTTP endpoint up — its status, time, size and an expected text,
//! through the web guard (the address checks, rate limits, size cap and redirects by hand of
//! every web request).

use std::time::Instant;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::{Method, WebRequest};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::DevOps;

/// The `http_health_check` tool.
pub struct HttpHealthCheck;

/// Arguments of `http_health_check`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The URL to check (`http` or `https`).
    url: String,
    /// The statuses that count as healthy. Default: any 2xx or 3xx.
    expect_status: Option<Vec<u16>>,
    /// Text the body must contain to count as healthy (such as `"status":"ok"`).
    expect_text: Option<String>,
    /// Slower than this many milliseconds is reported as degraded. Default: 2000.
    max_ms: Option<u64>,
    /// Use `HEAD` instead of `GET` (no body is read; `expect_text` cannot be used).
    head: Option<bool>,
}

impl Tool for HttpHealthCheck {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "http_health_check";
    const TITLE: &'static str = "HTTP health check";
    const DESCRIPTION: &'static str = "Check that an HTTP(S) endpoint is healthy: one request through the web guard, reporting healthy, degraded (slow) or unhealthy with the status, response time, size, final URL after redirects, and whether an expected status and text were found.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Network;
    const READ_ONLY: bool = true;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        let Some(guard) = host.guard.as_ref() else {
            return error(
                "the web tools are off (`[web] enabled = false`), so no endpoint can be checked",
            );
        };
        let head = args.head.unwrap_or(false);
        if head && args.expect_text.is_some() {
            return error(
                "`expect_text` needs the body, which `head: true` does not read: drop one of them",
            );
        }
        let method = if head { Method::HEAD } else { Method::GET };
        let request = WebRequest::new(method, args.url.clone()).for_user(host.user.clone());
        let started = Instant::now();
        let response = tokio::select! {
            r = guard.fetch(request) => r,
            () = cx.cancel.cancelled() => return error("cancelled"),
        };
        let ms = started.elapsed().as_millis();
        let response = match response {
            Ok(r) => r,
            // A refusal by the guard is not the endpoint's health: say it was not checked.
            Err(e) if e.is_denial() => return error(format!("not checked: {e}")),
            Err(e) => {
                return text(format!("UNHEALTHY: {} after {ms} ms: {e}", args.url));
            }
        };
        let status = response.status.as_u16();
        let mut problems = Vec::new();
        let status_ok = match &args.expect_status {
            Some(list) => list.contains(&status),
            None => (200..400).contains(&status),
        };
        if !status_ok {
            problems.push(match &args.expect_status {
                Some(list) => format!("status {status}, expected one of {list:?}"),
                None => format!("status {status}"),
            });
        }
        if let Some(want) = &args.expect_text {
            let body = String::from_utf8_lossy(&response.body);
            if !body.contains(want.as_str()) {
                problems.push(format!(
                    "the body{} does not contain {want:?}",
                    if response.truncated {
                        " (first part read)"
                    } else {
                        ""
                    }
                ));
            }
        }
        let max_ms = u128::from(args.max_ms.unwrap_or(2000));
        let verdict = if !problems.is_empty() {
            "UNHEALTHY"
        } else if ms > max_ms {
            "DEGRADED"
        } else {
            "HEALTHY"
        };
        let mut out = format!(
            "{verdict}: {} answered {status} {} in {ms} ms",
            args.url,
            response.status.canonical_reason().unwrap_or("")
        );
        if verdict == "DEGRADED" {
            out.push_str(&format!(" (slower than {max_ms} ms)"));
        }
        out.push('\n');
        for p in &problems {
            out.push_str(&format!("  problem: {p}\n"));
        }
        if response.redirects > 0 {
            out.push_str(&format!(
                "  after {} redirect(s), at {}\n",
                response.redirects, response.final_url
            ));
        }
        let kind = response
            .headers
            .get(cairn_web::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("no content type");
        if !head {
            out.push_str(&format!(
                "  body: {} bytes{}, {kind}\n",
                response.body.len(),
                if response.truncated {
                    " (cut at the size cap)"
                } else {
                    ""
                }
            ));
        }
        text(out)
    }
}
