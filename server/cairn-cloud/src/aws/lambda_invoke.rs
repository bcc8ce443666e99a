//! `lambda_invoke`: run a Lambda function synchronously with a JSON payload and show what
//! came back: the status, a function error, the returned payload (capped) and the log tail.

use base64::Engine;
use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::cut;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::{Method, WebResponse};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::client::{account, said};
use crate::cloud::Cloud;
use crate::error::CloudError;
use crate::request::{CloudRequest, json_of, segment, url_of};

/// The `lambda_invoke` tool.
pub struct LambdaInvoke;

/// Arguments of `lambda_invoke`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    account: Option<String>,
    /// The function's name or ARN (as `lambda_functions` shows).
    function: String,
    /// The event to pass, as JSON. Default: `{}`.
    payload: Option<Value>,
    /// A version or alias to invoke. Default: `$LATEST`.
    qualifier: Option<String>,
}

impl Tool for LambdaInvoke {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "lambda_invoke";
    const TITLE: &'static str = "Invoke a Lambda function";
    const DESCRIPTION: &'static str = "Run a Lambda function synchronously with a JSON payload (at most 256 KiB) and show the status, any function error, the returned payload (first 8000 characters) and the tail of its log. The function runs for real: it may change things.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        run(host, args, &cx).await.unwrap_or_else(error)
    }
}

/// The largest payload sent (Lambda's asynchronous limit; a model-written event is far smaller).
const MAX_PAYLOAD: usize = 256 * 1024;
/// Characters of the returned payload shown.
const SHOWN_PAYLOAD: usize = 8000;

async fn run(host: &Cloud, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let account = account(host, args.account.as_deref()).map_err(said)?;
    let function = args.function.trim();
    if function.is_empty() || function.len() > 170 {
        return Err("`function` must be a function name or ARN (1 to 170 characters)".into());
    }
    let payload = serde_json::to_vec(&args.payload.unwrap_or_else(|| serde_json::json!({})))
        .map_err(|e| e.to_string())?;
    if payload.len() > MAX_PAYLOAD {
        return Err(format!(
            "the payload is {} bytes; at most {MAX_PAYLOAD} are sent: pass a reference (an S3 key) instead",
            payload.len()
        ));
    }
    let base = account.base_url("lambda").map_err(said)?;
    let not_found = |e: CloudError| {
        if e.is_not_found() {
            format!(
                "no Lambda function {function:?} in {} (list them with `lambda_functions`): {e}",
                account.name
            )
        } else {
            e.to_string()
        }
    };
    // The function first: an unknown name is said plainly (not every endpoint answers an
    // invocation of one with 404), and what runs is named. A caller allowed to invoke but not
    // to read the configuration goes on without it.
    let config_url = url_of(
        &base,
        &format!("2015-03-31/functions/{}/configuration", segment(function)),
        &[],
    )
    .map_err(said)?;
    let about = match host
        .send_ok(
            cx,
            account,
            "lambda",
            CloudRequest::new(Method::GET, config_url),
        )
        .await
    {
        Ok(response) => {
            let c = json_of("lambda", &response).unwrap_or_default();
            let parts: Vec<&str> = ["Runtime", "State"]
                .iter()
                .filter_map(|k| c[*k].as_str())
                .filter(|v| !v.is_empty())
                .collect();
            if parts.is_empty() {
                String::new()
            } else {
                format!(" ({})", parts.join(", "))
            }
        }
        Err(e) if e.is_not_found() => return Err(not_found(e)),
        Err(CloudError::Service { status: 403, .. }) => String::new(),
        Err(e) => return Err(e.to_string()),
    };
    let mut query = Vec::new();
    if let Some(q) = args.qualifier.as_deref().filter(|q| !q.is_empty()) {
        query.push(("Qualifier", q));
    }
    let url = url_of(
        &base,
        &format!("2015-03-31/functions/{}/invocations", segment(function)),
        &query,
    )
    .map_err(said)?;
    let request = CloudRequest::new(Method::POST, url)
        .body(payload, "application/json")
        .and_then(|r| r.header("x-amz-invocation-type", "RequestResponse"))
        .and_then(|r| r.header("x-amz-log-type", "Tail"))
        .map_err(said)?;
    let response = host
        .send_ok(cx, account, "lambda", request)
        .await
        .map_err(not_found)?;
    Ok(text(report(
        &format!("{function}{about} in {}", account.name),
        &response,
    )))
}

/// What an invocation came to: the status, whether the function failed, the payload it
/// returned (capped) and the log tail Lambda sent back, decoded.
fn report(what: &str, response: &WebResponse) -> String {
    let header = |name: &str| {
        response
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let function_error = header("x-amz-function-error");
    let mut out = format!(
        "invoked {what}: status {}{}",
        response.status.as_u16(),
        match &header("x-amz-executed-version") {
            Some(v) => format!(", version {v}"),
            None => String::new(),
        }
    );
    match &function_error {
        Some(kind) => out.push_str(&format!(
            "\nthe function failed ({kind}): its error is the payload below"
        )),
        None => out.push_str("\nthe function returned without error"),
    }
    let body = String::from_utf8_lossy(&response.body);
    let shown = match serde_json::from_str::<Value>(&body) {
        Ok(v) if body.len() <= SHOWN_PAYLOAD => {
            serde_json::to_string_pretty(&v).unwrap_or_else(|_| body.to_string())
        }
        _ => body.to_string(),
    };
    out.push_str(&format!(
        "\n\npayload returned ({} bytes",
        response.body.len()
    ));
    if response.truncated {
        out.push_str(", cut at the web size cap");
    }
    out.push_str("):\n");
    out.push_str(&if shown.is_empty() {
        "(empty)".to_owned()
    } else {
        cut(&shown, SHOWN_PAYLOAD)
    });
    if let Some(log) = header("x-amz-log-result") {
        match base64::engine::general_purpose::STANDARD.decode(log.trim()) {
            Ok(bytes) => {
                let log = String::from_utf8_lossy(&bytes);
                out.push_str(&format!(
                    "\n\nlog tail (the last 4 KB Lambda returns):\n{}",
                    cut(log.trim_end(), 4096)
                ));
            }
            Err(_) => out.push_str("\n\n(the log tail Lambda returned is not base64)"),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use base64::Engine;
    use cairn_web::WebResponse;
    use cairn_web::header::HeaderMap;

    use super::report;

    #[test]
    fn a_function_error_and_the_log_tail_are_shown() {
        let mut headers = HeaderMap::new();
        headers.insert("x-amz-function-error", "Unhandled".parse().unwrap());
        headers.insert("x-amz-executed-version", "$LATEST".parse().unwrap());
        let log = "START RequestId: 1\nTraceback: KeyError 'id'\nEND RequestId: 1\n";
        let encoded = base64::engine::general_purpose::STANDARD.encode(log);
        headers.insert("x-amz-log-result", encoded.parse().unwrap());
        let response = WebResponse {
            status: 200u16.try_into().unwrap(),
            final_url: "http://127.0.0.1/".parse().unwrap(),
            headers,
            body: br#"{"errorMessage":"'id'","errorType":"KeyError"}"#.to_vec(),
            truncated: false,
            redirects: 0,
        };
        let out = report("orders in prod", &response);
        assert!(
            out.starts_with("invoked orders in prod: status 200, version $LATEST"),
            "{out}"
        );
        assert!(out.contains("the function failed (Unhandled)"), "{out}");
        assert!(out.contains("\"errorType\": \"KeyError\""), "{out}");
        assert!(out.contains("log tail (the last 4 KB Lambda returns):\nSTART RequestId: 1\nTraceback: KeyError 'id'"), "{out}");
    }

    #[test]
    fn a_large_payload_is_cut_and_said_so() {
        let response = WebResponse {
            status: 200u16.try_into().unwrap(),
            final_url: "http://127.0.0.1/".parse().unwrap(),
            headers: HeaderMap::new(),
            body: format!("\"{}\"", "a".repeat(20_000)).into_bytes(),
            truncated: true,
            redirects: 0,
        };
        let out = report("f in prod", &response);
        assert!(
            out.contains("payload returned (20002 bytes, cut at the web size cap)"),
            "{out}"
        );
        assert!(out.contains("… (20002 characters)"), "{out}");
        assert!(out.len() < 9000, "{}", out.len());
    }
}
