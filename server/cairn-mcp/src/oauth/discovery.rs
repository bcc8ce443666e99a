//! Discovery: the `WWW-Authenticate` challenge, Protected Resource Metadata (RFC 9728) and
//! Authorization Server metadata (RFC 8414 and OpenID Connect Discovery), in the orders the MCP
//! authorization spec gives, with its 2025-03-26 fallbacks.

use serde_json::Value;

use super::error::OAuthError;
use super::fetch::Fetcher;

/// The parts of a `Bearer` challenge the flow uses.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Challenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
}

/// Parses the `Bearer` challenge of a `WWW-Authenticate` value (auth-params, quoted or not).
pub(crate) fn parse_challenge(header: &str) -> Challenge {
    let mut out = Challenge::default();
    let trimmed = header.trim_start();
    let rest = match trimmed.get(..6) {
        Some(scheme) if scheme.eq_ignore_ascii_case("bearer") => trimmed.get(6..).unwrap_or(""),
        _ => return out,
    };
    let mut chars = rest.chars().peekable();
    loop {
        while matches!(chars.peek(), Some(c) if c.is_whitespace() || *c == ',') {
            chars.next();
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' || c == ',' || c.is_whitespace() {
                break;
            }
            key.push(c);
            chars.next();
        }
        if key.is_empty() {
            break;
        }
        while matches!(chars.peek(), Some(c) if c.is_whitespace()) {
            chars.next();
        }
        if chars.peek() != Some(&'=') {
            // A token68 or another scheme: nothing more for us.
            break;
        }
        chars.next();
        while matches!(chars.peek(), Some(c) if c.is_whitespace()) {
            chars.next();
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => {
                        if let Some(n) = chars.next() {
                            value.push(n);
                        }
                    }
                    '"' => break,
                    _ => value.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ',' || c.is_whitespace() {
                    break;
                }
                value.push(c);
                chars.next();
            }
        }
        match key.to_ascii_lowercase().as_str() {
            "resource_metadata" => out.resource_metadata = Some(value),
            "scope" => out.scope = Some(value),
            "error" => out.error = Some(value),
            _ => {}
        }
    }
    out
}

/// The origin of a URL (`scheme://host[:port]`), without a trailing slash.
pub(crate) fn origin(url: &url::Url) -> String {
    url.origin().ascii_serialization()
}

/// The path of a URL without its trailing slash (`""` for the root).
fn path_of(url: &url::Url) -> String {
    url.path().trim_end_matches('/').to_owned()
}

/// Protected Resource Metadata, as far as the flow uses it.
#[derive(Debug, Clone)]
pub(crate) struct ResourceMetadata {
    pub resource: Option<String>,
    pub authorization_servers: Vec<String>,
    pub scopes_supported: Option<Vec<String>>,
}

/// Finds the PRM: the challenge's `resource_metadata` first, then the well-known URI with the
/// server's path, then at the root. `None` when there is none (a 2025-03-26 server).
pub(crate) async fn resource_metadata(
    fetch: &Fetcher,
    server_url: &url::Url,
    from_challenge: Option<&str>,
) -> Result<Option<ResourceMetadata>, OAuthError> {
    let mut candidates = Vec::new();
    if let Some(url) = from_challenge {
        candidates.push(url.to_owned());
    }
    let base = origin(server_url);
    let path = path_of(server_url);
    if !path.is_empty() {
        candidates.push(format!("{base}/.well-known/oauth-protected-resource{path}"));
    }
    candidates.push(format!("{base}/.well-known/oauth-protected-resource"));
    for url in candidates {
        if let Some(doc) = fetch.metadata(&url).await? {
            return Ok(Some(ResourceMetadata {
                resource: doc
                    .get("resource")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                authorization_servers: strings(&doc, "authorization_servers").unwrap_or_default(),
                scopes_supported: strings(&doc, "scopes_supported"),
            }));
        }
    }
    Ok(None)
}

/// Whether PRM `resource` may stand for the server at `server_url`: same origin, and the
/// resource's path is the server's path or a parent of it.
pub(crate) fn resource_matches(server_url: &url::Url, resource: &str) -> bool {
    let Ok(resource) = url::Url::parse(resource) else {
        return false;
    };
    if resource.fragment().is_some() || origin(&resource) != origin(server_url) {
        return false;
    }
    let want = path_of(server_url);
    let have = path_of(&resource);
    have.is_empty() || want == have || want.starts_with(&format!("{have}/"))
}

/// Authorization Server metadata, as far as the flow uses it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: Option<String>,
    pub token_endpoint: Option<String>,
    pub registration_endpoint: Option<String>,
    pub scopes_supported: Option<Vec<String>>,
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    pub code_challenge_methods_supported: Option<Vec<String>>,
    pub client_id_metadata_document_supported: bool,
}

/// The metadata URLs for issuer `issuer`, in the spec's order: with a path, OAuth with the path
/// inserted, OpenID with it inserted, OpenID appended; at the root, OAuth then OpenID.
pub(crate) fn server_metadata_urls(issuer: &url::Url) -> Vec<String> {
    let base = origin(issuer);
    let path = path_of(issuer);
    if path.is_empty() {
        vec![
            format!("{base}/.well-known/oauth-authorization-server"),
            format!("{base}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{base}/.well-known/oauth-authorization-server{path}"),
            format!("{base}/.well-known/openid-configuration{path}"),
            format!("{base}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// Fetches the metadata of authorization server `issuer`; `None` when no candidate answers.
pub(crate) async fn server_metadata(
    fetch: &Fetcher,
    issuer: &url::Url,
) -> Result<Option<ServerMetadata>, OAuthError> {
    for url in server_metadata_urls(issuer) {
        if let Some(doc) = fetch.metadata(&url).await? {
            let text = |k: &str| doc.get(k).and_then(Value::as_str).map(str::to_owned);
            return Ok(Some(ServerMetadata {
                issuer: text("issuer").unwrap_or_else(|| issuer.to_string()),
                authorization_endpoint: text("authorization_endpoint"),
                token_endpoint: text("token_endpoint"),
                registration_endpoint: text("registration_endpoint"),
                scopes_supported: strings(&doc, "scopes_supported"),
                token_endpoint_auth_methods_supported: strings(
                    &doc,
                    "token_endpoint_auth_methods_supported",
                ),
                code_challenge_methods_supported: strings(&doc, "code_challenge_methods_supported"),
                client_id_metadata_document_supported: doc
                    .get("client_id_metadata_document_supported")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            }));
        }
    }
    Ok(None)
}

/// The 2025-03-26 defaults when a server has no metadata at all: the endpoints at the root of
/// the authorization base URL.
pub(crate) fn default_metadata(base: &url::Url) -> ServerMetadata {
    let base = origin(base);
    ServerMetadata {
        issuer: base.clone(),
        authorization_endpoint: Some(format!("{base}/authorize")),
        token_endpoint: Some(format!("{base}/token")),
        registration_endpoint: Some(format!("{base}/register")),
        ..ServerMetadata::default()
    }
}

fn strings(doc: &Value, key: &str) -> Option<Vec<String>> {
    doc.get(key).and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_parse() {
        let c = parse_challenge(
            r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/.well-known/oauth-protected-resource/mcp""#,
        );
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://x/.well-known/oauth-protected-resource/mcp")
        );
        let c = parse_challenge(r#"bearer realm=x,scope="q\"z""#);
        assert_eq!(c.scope.as_deref(), Some("q\"z"));
        assert_eq!(parse_challenge("Basic realm=x"), Challenge::default());
    }

    #[test]
    fn resources_match_by_origin_and_path_prefix() {
        let server =
            url::Url::parse("http://localhost:3000/mcp").unwrap_or_else(|_| unreachable!());
        assert!(resource_matches(&server, "http://localhost:3000/mcp"));
        assert!(resource_matches(&server, "http://localhost:3000"));
        assert!(resource_matches(&server, "http://localhost:3000/"));
        assert!(!resource_matches(&server, "https://evil.example.com/mcp"));
        assert!(!resource_matches(&server, "http://localhost:3000/mcp2"));
        assert!(!resource_matches(&server, "http://localhost:3001/mcp"));
    }

    #[test]
    fn metadata_urls_insert_the_path() {
        let issuer =
            url::Url::parse("https://auth.example.com/tenant1").unwrap_or_else(|_| unreachable!());
        assert_eq!(
            server_metadata_urls(&issuer),
            vec![
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
    }
}
