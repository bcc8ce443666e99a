//! What servers may ask of cairn: the workspace roots, a completion from cairn's model
//! (sampling) and input from the user (elicitation). The hub answers through a
//! [`ClientDelegate`] that the front end provides: the editor asks the user, the terminal
//! declines.

use futures::future::BoxFuture;
use serde_json::Value;

/// A server's request for a completion, reduced to what cairn's model takes.
#[derive(Debug, Clone, PartialEq)]
pub struct SamplingRequest {
    pub system: Option<String>,
    /// `(role, text)`, role `user` or `assistant`. Non-text content is named, not sent.
    pub messages: Vec<(String, String)>,
    pub max_tokens: u32,
}

/// The user's answer to an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub enum Elicited {
    Accept(Value),
    Decline,
    Cancel,
}

/// Answers servers' requests to the client.
pub trait ClientDelegate: Send + Sync {
    /// The workspace folders, as `(file URI, name)`.
    fn roots(&self) -> Vec<(String, String)>;
    /// A server wants a completion from cairn's model. The delegate asks the user first; the
    /// text of the answer, or why not.
    fn sample<'a>(
        &'a self,
        server: &'a str,
        request: SamplingRequest,
    ) -> BoxFuture<'a, Result<(String, String), String>>;
    /// A server asks the user for input described by a JSON schema.
    fn elicit<'a>(
        &'a self,
        server: &'a str,
        message: String,
        schema: Value,
    ) -> BoxFuture<'a, Elicited>;
    /// Server `server` needs the user to sign in at `url` (OAuth). A delegate that can show the
    /// page (the editor) returns the future that shows it; `None` leaves it to the hub's own
    /// prompt (the terminal).
    fn open_authorization<'a>(
        &'a self,
        _server: &'a str,
        _url: &'a str,
    ) -> Option<BoxFuture<'a, Result<(), String>>> {
        None
    }
}

/// The schema's defaults (SEP-1034): `{property: default}` for every property that has one.
pub fn schema_defaults(schema: &Value) -> Value {
    let mut out = serde_json::Map::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            if let Some(default) = property.get("default") {
                out.insert(name.clone(), default.clone());
            }
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_taken_from_the_schema() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"},
            "age": {"type": "integer"},
            "color": {"type": "string", "enum": ["red", "blue"], "default": "blue"}
        }});
        assert_eq!(
            schema_defaults(&schema),
            serde_json::json!({"name": "Ada", "color": "blue"})
        );
        assert_eq!(
            schema_defaults(&serde_json::json!({})),
            serde_json::json!({})
        );
    }
}
