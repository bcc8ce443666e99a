//! `api_soap`: POST a SOAP 1.1 or 1.2 envelope (or a body to wrap in one) and return the XML
//! answer; a SOAP Fault is an error.

use std::collections::BTreeMap;

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use crate::api::request::{self, ApiAuth, Outgoing, header_args, status_block};
use crate::api::{Api, answer, soap_fault};
use cairn_web::Method;

/// The `api_soap` tool.
pub struct ApiSoap;

/// Arguments of `api_soap`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An http or https URL.
    url: String,
    /// The whole SOAP envelope (XML).
    envelope: Option<String>,
    /// Instead of envelope: the XML inside soap:Body.
    body: Option<String>,
    /// The SOAPAction.
    soap_action: Option<String>,
    /// Default 1.1.
    #[schemars(extend("enum" = ["1.1", "1.2"]))]
    version: Option<String>,
    /// Request headers, sent as written (nothing in them is expanded).
    #[serde(default)]
    headers: BTreeMap<String, String>,
    auth: Option<ApiAuth>,
    /// The character of the body to start from (default 0); use the value a truncated result names.
    #[serde(default)]
    start_index: usize,
    /// At most this many characters of body (default 20000).
    #[schemars(range(min = 1))]
    max_length: Option<usize>,
}

impl Tool for ApiSoap {
    type Host = Api;
    type Args = Args;
    const NAME: &'static str = "api_soap";
    const TITLE: &'static str = "SOAP call";
    const DESCRIPTION: &'static str = "POST a SOAP 1.1 or 1.2 envelope (or a body to wrap in one) with its SOAPAction and return the XML answer; a SOAP Fault is reported as an error.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    /// Any action: it may change or delete remote state.
    const DESTRUCTIVE: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(api: &Api, a: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, soap(api, a)).await
    }
}

async fn soap(api: &Api, a: Args) -> Result<String, String> {
    let v12 = match a.version.as_deref() {
        None | Some("1.1") => false,
        Some("1.2") => true,
        Some(other) => return Err(format!("SOAP version {other} is not 1.1 or 1.2")),
    };
    let ns = if v12 {
        "http://www.w3.org/2003/05/soap-envelope"
    } else {
        "http://schemas.xmlsoap.org/soap/envelope/"
    };
    let envelope = match (a.envelope, a.body) {
        (Some(_), Some(_)) => return Err("give either envelope or body, not both".into()),
        (Some(e), None) => e,
        (None, Some(b)) => format!(
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><soap:Envelope xmlns:soap=\"{ns}\"><soap:Body>{b}</soap:Body></soap:Envelope>"
        ),
        (None, None) => return Err("envelope or body is required".into()),
    };
    // Checked before sending, so a typo is caught here rather than as a server fault.
    roxmltree::Document::parse(&envelope)
        .map_err(|e| format!("the envelope is not well-formed XML: {e}"))?;
    let mut headers = header_args(a.headers);
    let action = a.soap_action.unwrap_or_default();
    let content_type = if v12 {
        if action.is_empty() {
            "application/soap+xml; charset=utf-8".to_owned()
        } else {
            format!("application/soap+xml; charset=utf-8; action=\"{action}\"")
        }
    } else {
        headers
            .entry("SOAPAction")
            .or_insert_with(|| Value::from(format!("\"{action}\"")));
        "text/xml; charset=utf-8".to_owned()
    };
    let r = api
        .send(Outgoing {
            method: Some("POST".into()),
            url: a.url,
            headers,
            body: Some((envelope.into_bytes(), content_type)),
            auth: a.auth,
        })
        .await?;
    let text = String::from_utf8_lossy(&r.body).into_owned();
    let mut out = status_block(&Method::POST, &r);
    if let Some(fault) = soap_fault(&text) {
        out.push_str(&format!("\nSOAP Fault: {fault}\n\n"));
        out.push_str(&request::paged(&text, a.start_index, a.max_length));
        return Err(out);
    }
    out.push('\n');
    out.push_str(&request::paged(&text, a.start_index, a.max_length));
    Ok(out)
}
