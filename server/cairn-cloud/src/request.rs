//! Every cloud request, through the web guard: the account's base address, the signature the
//! guard adds (the account's vault secret, for that host only), the services' wire formats
//! (AWS query and JSON protocols and REST, Azure Storage, Google's JSON APIs), and their error
//! bodies turned into one [`CloudError`] a user can act on.

use cairn_agent::tools::CallContext;
use cairn_web::header::{self, HeaderMap, HeaderName, HeaderValue};
use cairn_web::{Method, WebRequest, WebResponse};
use serde_json::Value;
use url::Url;

use crate::account::Account;
use crate::cloud::Cloud;
use crate::error::CloudError;

/// One request to a service of an account.
#[derive(Debug, Clone)]
pub(crate) struct CloudRequest {
    pub method: Method,
    pub url: Url,
    pub headers: HeaderMap,
    pub body: Option<Vec<u8>>,
}

impl CloudRequest {
    pub(crate) fn new(method: Method, url: Url) -> CloudRequest {
        CloudRequest {
            method,
            url,
            headers: HeaderMap::new(),
            body: None,
        }
    }

    /// The same request with `name: value` (a value that is not a valid header is dropped with
    /// an error at send time, never sent half-formed).
    pub(crate) fn header(mut self, name: &str, value: &str) -> Result<CloudRequest, CloudError> {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| CloudError::Invalid(format!("{name:?} is not a header name")))?;
        let value = HeaderValue::from_str(value)
            .map_err(|_| CloudError::Invalid(format!("{value:?} is not a valid header value")))?;
        self.headers.insert(name, value);
        Ok(self)
    }

    /// The same request with the headers every Azure Storage request carries: `x-ms-date`
    /// (now) and `x-ms-version`.
    pub(crate) fn azure_headers(self) -> Result<CloudRequest, CloudError> {
        let date = chrono::Utc::now()
            .format("%a, %d %b %Y %H:%M:%S GMT")
            .to_string();
        self.header("x-ms-date", &date)?
            .header("x-ms-version", AZURE_VERSION)
    }

    /// The same request with `body`, of `content_type`.
    pub(crate) fn body(
        mut self,
        body: Vec<u8>,
        content_type: &str,
    ) -> Result<CloudRequest, CloudError> {
        self.body = Some(body);
        self.header(header::CONTENT_TYPE.as_str(), content_type)
    }
}

/// `base` joined with `path` (relative, no leading slash needed) and `query` pairs, each
/// percent-encoded.
pub(crate) fn url_of(base: &Url, path: &str, query: &[(&str, &str)]) -> Result<Url, CloudError> {
    let mut url = base
        .join(path.trim_start_matches('/'))
        .map_err(|e| CloudError::Invalid(format!("{path:?}: {e}")))?;
    if !query.is_empty() {
        let mut pairs = url.query_pairs_mut();
        for (k, v) in query {
            pairs.append_pair(k, v);
        }
    }
    Ok(url)
}

/// One path segment percent-encoded for a URL (object keys carry `/`, spaces, `?`, `#`, ...).
pub(crate) fn segment(text: &str) -> String {
    const SET: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    percent_encoding::utf8_percent_encode(text, SET).to_string()
}

impl Cloud {
    /// Sends `request` for `account` through the guard, signed as `sign_as` (the AWS signing
    /// name, or Azure's `blob`/`queue`/`table`), cancellable. Any status comes back.
    pub(crate) async fn send(
        &self,
        cx: &CallContext,
        account: &Account,
        sign_as: &str,
        request: CloudRequest,
    ) -> Result<WebResponse, CloudError> {
        let guard = self.guard.as_ref().ok_or(CloudError::NoGuard)?;
        let mut web =
            WebRequest::new(request.method, request.url.as_str()).for_user(self.user.clone());
        web.headers = request.headers;
        web.body = request.body;
        if let Some(credential) = account.credential(sign_as) {
            web = web.with_credential(credential);
        }
        tokio::select! {
            r = guard.fetch(web) => Ok(r?),
            () = cx.cancel.cancelled() => Err(CloudError::Cancelled),
        }
    }

    /// [`Cloud::send`], with an error status turned into [`CloudError::Service`].
    pub(crate) async fn send_ok(
        &self,
        cx: &CallContext,
        account: &Account,
        sign_as: &str,
        request: CloudRequest,
    ) -> Result<WebResponse, CloudError> {
        let response = self.send(cx, account, sign_as, request).await?;
        if response.status.is_client_error() || response.status.is_server_error() {
            return Err(service_error(sign_as, &response));
        }
        Ok(response)
    }

    /// An AWS query-protocol call (SQS, SNS, EC2, IAM, STS, CloudFormation, CloudWatch): the
    /// action and its parameters as a form, the XML answer's text back.
    pub(crate) async fn aws_query(
        &self,
        cx: &CallContext,
        account: &Account,
        service: &str,
        version: &str,
        action: &str,
        params: &[(String, String)],
    ) -> Result<String, CloudError> {
        let url = account.base_url(service)?;
        // The serializer is not `Send`: it is dropped before the request is awaited.
        let form = {
            let mut form = url::form_urlencoded::Serializer::new(String::new());
            form.append_pair("Action", action)
                .append_pair("Version", version);
            for (k, v) in params {
                form.append_pair(k, v);
            }
            form.finish()
        };
        let request = CloudRequest::new(Method::POST, url).body(
            form.into_bytes(),
            "application/x-www-form-urlencoded; charset=utf-8",
        )?;
        let response = self.send_ok(cx, account, service, request).await?;
        text_of(service, &response)
    }

    /// An AWS JSON-protocol call (DynamoDB, CloudWatch Logs, ECS, SSM, Secrets Manager):
    /// `X-Amz-Target: {target}` (`DynamoDB_20120810.ListTables`), JSON both ways.
    pub(crate) async fn aws_json(
        &self,
        cx: &CallContext,
        account: &Account,
        service: &str,
        target: &str,
        json_version: &str,
        body: &Value,
    ) -> Result<Value, CloudError> {
        let url = account.base_url(service)?;
        let request = CloudRequest::new(Method::POST, url)
            .body(
                serde_json::to_vec(body).map_err(|e| CloudError::Invalid(e.to_string()))?,
                &format!("application/x-amz-json-{json_version}"),
            )?
            .header("x-amz-target", target)?;
        let response = self.send_ok(cx, account, service, request).await?;
        json_of(service, &response)
    }

    /// Azure Storage: `x-ms-date` and `x-ms-version` added (the guard signs with the account's
    /// key for `service`: `blob`, `queue` or `table`), an error status turned into an error.
    pub(crate) async fn azure(
        &self,
        cx: &CallContext,
        account: &Account,
        service: &str,
        request: CloudRequest,
    ) -> Result<WebResponse, CloudError> {
        self.send_ok(cx, account, service, request.azure_headers()?)
            .await
    }

    /// A Google JSON API call (`service`: `storage`, `pubsub`, `firestore`), JSON both ways;
    /// an empty answer is `null`.
    pub(crate) async fn gcp(
        &self,
        cx: &CallContext,
        account: &Account,
        service: &str,
        method: Method,
        url: Url,
        body: Option<&Value>,
    ) -> Result<Value, CloudError> {
        let mut request = CloudRequest::new(method, url);
        if let Some(body) = body {
            request = request.body(
                serde_json::to_vec(body).map_err(|e| CloudError::Invalid(e.to_string()))?,
                "application/json",
            )?;
        }
        let response = self.send_ok(cx, account, service, request).await?;
        if response.body.is_empty() {
            return Ok(Value::Null);
        }
        json_of(service, &response)
    }
}

/// The Azure Storage API version requests are made in (Azurite knows it).
pub(crate) const AZURE_VERSION: &str = "2021-08-06";

/// The body as text; a body cut at the guard's size cap is an error, since a cut XML or JSON
/// answer cannot be read.
pub(crate) fn text_of(service: &str, response: &WebResponse) -> Result<String, CloudError> {
    if response.truncated {
        return Err(CloudError::Invalid(format!(
            "{service}'s answer is larger than the web size cap (`[web] max_bytes`); ask for fewer items"
        )));
    }
    String::from_utf8(response.body.clone())
        .map_err(|_| CloudError::Invalid(format!("{service} answered with text that is not UTF-8")))
}

/// The body as JSON (see [`text_of`]).
pub(crate) fn json_of(service: &str, response: &WebResponse) -> Result<Value, CloudError> {
    let text = text_of(service, response)?;
    serde_json::from_str(&text).map_err(|e| {
        CloudError::Invalid(format!(
            "{service} answered with JSON that does not parse: {e}"
        ))
    })
}

/// An error answer in any of the services' formats: AWS and Azure XML (`<Code>`, `<Message>`),
/// AWS JSON (`__type`, `message`), Azure Tables (`odata.error`), Google (`error.message`).
pub(crate) fn service_error(service: &str, response: &WebResponse) -> CloudError {
    let status = response.status.as_u16();
    let body = String::from_utf8_lossy(&response.body);
    let (mut code, mut message) = (String::new(), String::new());
    if let Ok(json) = serde_json::from_str::<Value>(&body) {
        let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_owned();
        if let Some(t) = json.get("__type") {
            code = s(Some(t)).rsplit('#').next().unwrap_or_default().to_owned();
            message = s(json.get("message").or(json.get("Message")));
        } else if let Some(e) = json.get("odata.error") {
            code = s(e.get("code"));
            message = s(e.pointer("/message/value"));
        } else if let Some(e) = json.get("error") {
            code = s(e.get("status"));
            message = s(e.get("message"));
            if message.is_empty() {
                message = s(Some(e));
            }
        }
    } else if let Ok(doc) = roxmltree::Document::parse(&body) {
        let find = |name: &str| {
            doc.descendants()
                .find(|n| n.tag_name().name() == name)
                .and_then(|n| n.text())
                .unwrap_or_default()
                .trim()
                .to_owned()
        };
        code = find("Code");
        message = find("Message");
    }
    if message.is_empty() {
        message = match response.status.canonical_reason() {
            Some(reason) if body.trim().is_empty() => reason.to_owned(),
            _ => body.chars().take(300).collect::<String>().trim().to_owned(),
        };
    }
    if message.is_empty() {
        message = "no details".into();
    }
    CloudError::Service {
        service: service.to_owned(),
        status,
        code,
        message,
    }
}

/// The text of the first element named `name` under `node`, if any.
pub(crate) fn xml_text<'a>(node: roxmltree::Node<'a, '_>, name: &str) -> Option<&'a str> {
    node.descendants()
        .find(|n| n.tag_name().name() == name)
        .and_then(|n| n.text())
}

/// Parses an XML answer.
pub(crate) fn xml<'t>(service: &str, text: &'t str) -> Result<roxmltree::Document<'t>, CloudError> {
    roxmltree::Document::parse(text).map_err(|e| {
        CloudError::Invalid(format!(
            "{service} answered with XML that does not parse: {e}"
        ))
    })
}
