//! OpenAPI 3.x and Swagger 2.0 specs (JSON or YAML): their operations, the URL and body of a
//! call to one, and the input schema of an operation offered as its own tool.
//!
//! Only local `$ref`s (`#/...`) are followed, and schemas are inlined to a fixed depth, so a
//! recursive or huge spec cannot make a schema without end.

use serde_json::{Map, Value, json};
use url::Url;

use super::curl::urlencode;
use super::request::scalar_list;

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];
/// How deep `$ref`s are inlined in a generated schema.
const MAX_REF_DEPTH: usize = 6;

/// Where a parameter goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    Path,
    Query,
    Header,
    Cookie,
    /// Swagger 2 `formData`: a field of a url-encoded body.
    Form,
}

impl Location {
    fn as_str(self) -> &'static str {
        match self {
            Location::Path => "path",
            Location::Query => "query",
            Location::Header => "header",
            Location::Cookie => "cookie",
            Location::Form => "formData",
        }
    }
}

/// One parameter of an operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub location: Location,
    pub required: bool,
    pub description: String,
    pub schema: Value,
}

/// An operation's request body.
#[derive(Debug, Clone, PartialEq)]
pub struct Body {
    pub required: bool,
    pub content_type: String,
    pub schema: Value,
}

/// One operation.
#[derive(Debug, Clone, PartialEq)]
pub struct Operation {
    pub id: String,
    /// Upper case.
    pub method: String,
    pub path: String,
    pub summary: String,
    pub description: String,
    pub params: Vec<Param>,
    pub body: Option<Body>,
}

impl Operation {
    /// Whether calling it only reads (GET, HEAD, OPTIONS).
    pub fn read_only(&self) -> bool {
        matches!(self.method.as_str(), "GET" | "HEAD" | "OPTIONS")
    }
}

/// A loaded spec.
#[derive(Debug, Clone)]
pub struct Spec {
    /// `OpenAPI 3.0.3` or `Swagger 2.0`, and the title.
    pub kind: String,
    pub title: String,
    /// Server URLs, absolute where the spec's location allowed resolving them.
    pub servers: Vec<String>,
    pub operations: Vec<Operation>,
}

/// Parses spec text (JSON or YAML). `source` is where it came from, to resolve relative
/// server URLs against.
pub fn parse_spec(text: &str, source: Option<&Url>) -> Result<Spec, String> {
    let doc: Value = if text.trim_start().starts_with('{') {
        serde_json::from_str(text).map_err(|e| format!("the spec is not valid JSON: {e}"))?
    } else {
        let yaml: serde_norway::Value =
            serde_norway::from_str(text).map_err(|e| format!("the spec is not valid YAML: {e}"))?;
        yaml_to_json(yaml)
    };
    let kind = if let Some(v) = doc.get("openapi").and_then(Value::as_str) {
        if !v.starts_with('3') {
            return Err(format!(
                "OpenAPI {v} is not supported (3.x and Swagger 2.0 are)"
            ));
        }
        format!("OpenAPI {v}")
    } else if doc.get("swagger").and_then(Value::as_str) == Some("2.0") {
        "Swagger 2.0".to_owned()
    } else {
        return Err(
            "not an OpenAPI 3.x or Swagger 2.0 spec (no `openapi` or `swagger: \"2.0\"` field)"
                .into(),
        );
    };
    let title = doc
        .pointer("/info/title")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let servers = servers(&doc, source);
    let operations = operations(&doc)?;
    Ok(Spec {
        kind,
        title,
        servers,
        operations,
    })
}

/// YAML to JSON: keys that are not strings (`200:` in `responses`) become their text.
fn yaml_to_json(v: serde_norway::Value) -> Value {
    use serde_norway::Value as Y;
    match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                n.as_f64().map_or(Value::Null, Value::from)
            }
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(items.into_iter().map(yaml_to_json).collect()),
        Y::Mapping(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                let key = match yaml_to_json(k) {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                out.insert(key, yaml_to_json(v));
            }
            Value::Object(out)
        }
        Y::Tagged(tagged) => yaml_to_json(tagged.value),
    }
}

fn servers(doc: &Value, source: Option<&Url>) -> Vec<String> {
    let resolve = |url: String| -> String {
        if Url::parse(&url).is_ok() {
            return url;
        }
        match source.and_then(|s| s.join(&url).ok()) {
            Some(u) => u.to_string(),
            None => url,
        }
    };
    if let Some(list) = doc.get("servers").and_then(Value::as_array) {
        return list
            .iter()
            .filter_map(|s| {
                let mut url = s.get("url")?.as_str()?.to_owned();
                if let Some(vars) = s.get("variables").and_then(Value::as_object) {
                    for (name, var) in vars {
                        if let Some(default) = var.get("default") {
                            url = url
                                .replace(&format!("{{{name}}}"), &super::request::scalar(default));
                        }
                    }
                }
                Some(resolve(url))
            })
            .collect();
    }
    if doc.get("swagger").is_some() {
        let base_path = doc.get("basePath").and_then(Value::as_str).unwrap_or("");
        let Some(host) = doc.get("host").and_then(Value::as_str) else {
            return vec![resolve(base_path.to_owned())];
        };
        let schemes: Vec<&str> = doc
            .get("schemes")
            .and_then(Value::as_array)
            .map(|s| s.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let scheme = if schemes.contains(&"https") || schemes.is_empty() {
            "https"
        } else {
            schemes[0]
        };
        return vec![format!("{scheme}://{host}{base_path}")];
    }
    // OpenAPI 3 without servers: the spec's own origin.
    vec![resolve("/".to_owned())]
}

/// Follows a local `$ref` (one level); other values as they are.
fn deref<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    let mut v = v;
    for _ in 0..10 {
        match v.get("$ref").and_then(Value::as_str) {
            Some(r) if r.starts_with('#') => match doc.pointer(&r[1..]) {
                Some(target) => v = target,
                None => return v,
            },
            _ => return v,
        }
    }
    v
}

/// `schema` with local `$ref`s inlined up to [`MAX_REF_DEPTH`]; deeper ones become `{}`
/// described as where to look.
pub fn inline(doc: &Value, schema: &Value, depth: usize) -> Value {
    match schema {
        Value::Object(map) => {
            if let Some(r) = map.get("$ref").and_then(Value::as_str) {
                if depth >= MAX_REF_DEPTH || !r.starts_with('#') {
                    return json!({"description": format!("see {r} in the spec")});
                }
                return match doc.pointer(&r[1..]) {
                    Some(target) => inline(doc, target, depth + 1),
                    None => json!({"description": format!("unresolved {r}")}),
                };
            }
            Value::Object(
                map.iter()
                    .filter(|(k, _)| !matches!(k.as_str(), "example" | "examples" | "xml"))
                    .map(|(k, v)| (k.clone(), inline(doc, v, depth)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| inline(doc, v, depth)).collect()),
        other => other.clone(),
    }
}

fn param(doc: &Value, raw: &Value) -> Option<(Param, Option<Body>)> {
    let p = deref(doc, raw);
    let name = p.get("name")?.as_str()?.to_owned();
    let location = match p.get("in")?.as_str()? {
        "path" => Location::Path,
        "query" => Location::Query,
        "header" => Location::Header,
        "cookie" => Location::Cookie,
        "formData" => Location::Form,
        "body" => {
            let body = Body {
                required: p.get("required").and_then(Value::as_bool).unwrap_or(false),
                content_type: "application/json".into(),
                schema: inline(doc, p.get("schema").unwrap_or(&json!({})), 0),
            };
            return Some((
                Param {
                    name,
                    location: Location::Form,
                    required: false,
                    description: String::new(),
                    schema: Value::Null,
                },
                Some(body),
            ));
        }
        _ => return None,
    };
    let schema = match p.get("schema") {
        Some(s) => inline(doc, s, 0),
        // Swagger 2: the type is on the parameter itself.
        None => {
            let mut s = Map::new();
            for key in [
                "type", "format", "items", "enum", "default", "minimum", "maximum",
            ] {
                if let Some(v) = p.get(key) {
                    s.insert(key.into(), inline(doc, v, 0));
                }
            }
            Value::Object(s)
        }
    };
    Some((
        Param {
            name,
            location,
            required: location == Location::Path
                || p.get("required").and_then(Value::as_bool).unwrap_or(false),
            description: p
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            schema,
        },
        None,
    ))
}

fn operations(doc: &Value) -> Result<Vec<Operation>, String> {
    let paths = doc
        .get("paths")
        .and_then(Value::as_object)
        .ok_or("the spec has no paths")?;
    let mut out = Vec::new();
    for (path, item) in paths {
        let item = deref(doc, item);
        let shared: Vec<&Value> = item
            .get("parameters")
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default();
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let mut params: Vec<Param> = Vec::new();
            let mut body: Option<Body> = None;
            let own: Vec<&Value> = op
                .get("parameters")
                .and_then(Value::as_array)
                .map(|a| a.iter().collect())
                .unwrap_or_default();
            // Path-level first; an operation's own parameter of the same name and place wins.
            for raw in shared.iter().chain(own.iter()) {
                let Some((p, b)) = param(doc, raw) else {
                    continue;
                };
                if let Some(b) = b {
                    body = Some(b);
                    continue;
                }
                params.retain(|q| !(q.name == p.name && q.location == p.location));
                params.push(p);
            }
            if let Some(rb) = op.get("requestBody") {
                let rb = deref(doc, rb);
                let content = rb.get("content").and_then(Value::as_object);
                let chosen = content.and_then(|c| {
                    c.iter()
                        .find(|(k, _)| k.contains("json"))
                        .or_else(|| c.iter().next())
                });
                if let Some((ct, media)) = chosen {
                    body = Some(Body {
                        required: rb.get("required").and_then(Value::as_bool).unwrap_or(false),
                        content_type: ct.clone(),
                        schema: inline(doc, media.get("schema").unwrap_or(&json!({})), 0),
                    });
                }
            }
            if params.iter().any(|p| p.location == Location::Form) && body.is_none() {
                body = Some(Body {
                    required: false,
                    content_type: "application/x-www-form-urlencoded".into(),
                    schema: Value::Null,
                });
            }
            let text = |k: &str| op.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
            let id = op
                .get("operationId")
                .and_then(Value::as_str)
                .map_or_else(|| sanitise(&format!("{method}_{path}")), str::to_owned);
            out.push(Operation {
                id,
                method: method.to_ascii_uppercase(),
                path: path.clone(),
                summary: text("summary"),
                description: text("description"),
                params,
                body,
            });
        }
    }
    Ok(out)
}

/// `[A-Za-z0-9_-]` only (others become `_`, runs collapsed), trimmed of `_`.
pub fn sanitise(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if !(c == '_' && out.ends_with('_')) {
            out.push(c);
        }
    }
    out.trim_matches('_').to_owned()
}

impl Spec {
    /// The operation called `id`, or an error listing some that exist.
    pub fn operation(&self, id: &str) -> Result<&Operation, String> {
        self.operations.iter().find(|o| o.id == id).ok_or_else(|| {
            let ids: Vec<&str> = self
                .operations
                .iter()
                .take(40)
                .map(|o| o.id.as_str())
                .collect();
            format!(
                "no operation {id:?} in the spec; it has: {}",
                ids.join(", ")
            )
        })
    }

    /// The listing `openapi_operations` shows; `filter` keeps operations whose id, path or
    /// summary contain it (any case).
    pub fn listing(&self, filter: Option<&str>) -> String {
        let filter = filter.map(str::to_lowercase);
        let mut out = format!(
            "{} \"{}\": {} operations\nServers: {}\n\n",
            self.kind,
            self.title,
            self.operations.len(),
            if self.servers.is_empty() {
                "(none)".to_owned()
            } else {
                self.servers.join(", ")
            }
        );
        let mut shown = 0;
        for op in &self.operations {
            if let Some(f) = &filter {
                let hay = format!("{} {} {}", op.id, op.path, op.summary).to_lowercase();
                if !hay.contains(f.as_str()) {
                    continue;
                }
            }
            shown += 1;
            out.push_str(&format!("{} {} {}", op.id, op.method, op.path));
            if !op.summary.is_empty() {
                out.push_str(&format!(" — {}", op.summary));
            }
            out.push('\n');
            for p in &op.params {
                out.push_str(&format!(
                    "    {} ({}{}{})\n",
                    p.name,
                    p.location.as_str(),
                    if p.required { ", required" } else { "" },
                    p.schema
                        .get("type")
                        .and_then(Value::as_str)
                        .map(|t| format!(", {t}"))
                        .unwrap_or_default()
                ));
            }
            if let Some(b) = &op.body {
                out.push_str(&format!(
                    "    body ({}{})\n",
                    b.content_type,
                    if b.required { ", required" } else { "" }
                ));
            }
        }
        if filter.is_some() {
            out.push_str(&format!("({shown} matching)\n"));
        }
        out
    }

    /// The server URL to call: `base_url` when given, else the spec's first absolute one.
    pub fn base(&self, base_url: Option<&str>) -> Result<String, String> {
        if let Some(b) = base_url {
            return Ok(b.to_owned());
        }
        self.servers
            .iter()
            .find(|s| Url::parse(s).is_ok())
            .cloned()
            .ok_or_else(|| "the spec names no absolute server URL; give base_url".to_owned())
    }

    /// The input schema of `op` as a tool: its parameters by name and the body as `body`
    /// (`request_body` if a parameter is already called `body`).
    pub fn input_schema(&self, op: &Operation) -> Map<String, Value> {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for p in &op.params {
            let mut schema = match &p.schema {
                Value::Object(m) => m.clone(),
                _ => Map::new(),
            };
            let mut description = format!("{} parameter", p.location.as_str());
            if !p.description.is_empty() {
                description = format!("{description}: {}", p.description);
            }
            schema.insert("description".into(), Value::from(description));
            properties.insert(p.name.clone(), Value::Object(schema));
            if p.required {
                required.push(Value::from(p.name.clone()));
            }
        }
        if let Some(b) = &op.body
            && !b.schema.is_null()
        {
            let key = body_key(op);
            let mut schema = match &b.schema {
                Value::Object(m) => m.clone(),
                _ => Map::new(),
            };
            schema
                .entry("description")
                .or_insert_with(|| Value::from(format!("The request body ({}).", b.content_type)));
            properties.insert(key.to_owned(), Value::Object(schema));
            if b.required {
                required.push(Value::from(key));
            }
        }
        let mut s = Map::new();
        s.insert("type".into(), json!("object"));
        s.insert("properties".into(), Value::Object(properties));
        s.insert("required".into(), Value::Array(required));
        s.insert("additionalProperties".into(), json!(false));
        s
    }
}

/// The argument name of an operation's body.
pub fn body_key(op: &Operation) -> &'static str {
    if op.params.iter().any(|p| p.name == "body") {
        "request_body"
    } else {
        "body"
    }
}

/// A call to an operation, ready for the guard.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltCall {
    pub method: String,
    pub url: String,
    pub headers: Map<String, Value>,
    /// The body and its content type.
    pub body: Option<(Vec<u8>, String)>,
}

/// Builds the call of `op` on `base` with `params` (by name) and `body`; unknown and missing
/// parameters are errors that name them.
pub fn build_call(
    op: &Operation,
    base: &str,
    params: &Map<String, Value>,
    body: Option<&Value>,
) -> Result<BuiltCall, String> {
    let unknown: Vec<&str> = params
        .keys()
        .filter(|k| !op.params.iter().any(|p| &p.name == *k))
        .map(String::as_str)
        .collect();
    if !unknown.is_empty() {
        let known: Vec<&str> = op.params.iter().map(|p| p.name.as_str()).collect();
        return Err(format!(
            "{} has no parameter {}; its parameters are: {}",
            op.id,
            unknown.join(", "),
            if known.is_empty() {
                "(none)".to_owned()
            } else {
                known.join(", ")
            }
        ));
    }
    let missing: Vec<&str> = op
        .params
        .iter()
        .filter(|p| p.required && params.get(&p.name).is_none_or(Value::is_null))
        .map(|p| p.name.as_str())
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{} needs the parameter(s) {}",
            op.id,
            missing.join(", ")
        ));
    }
    if op
        .body
        .as_ref()
        .is_some_and(|b| b.required && !b.schema.is_null())
        && body.is_none()
    {
        return Err(format!("{} needs a request body", op.id));
    }
    let mut path = op.path.clone();
    let mut query = Map::new();
    let mut headers = Map::new();
    let mut cookies = Vec::new();
    let mut form = Vec::new();
    for p in &op.params {
        let Some(value) = params.get(&p.name).filter(|v| !v.is_null()) else {
            continue;
        };
        match p.location {
            Location::Path => {
                let text = scalar_list(value).join(",");
                path = path.replace(&format!("{{{}}}", p.name), &urlencode(&text));
            }
            Location::Query => {
                query.insert(p.name.clone(), value.clone());
            }
            Location::Header => {
                headers.insert(p.name.clone(), Value::from(scalar_list(value).join(",")));
            }
            Location::Cookie => {
                cookies.push(format!("{}={}", p.name, scalar_list(value).join(",")))
            }
            Location::Form => {
                for v in scalar_list(value) {
                    form.push(format!("{}={}", urlencode(&p.name), urlencode(&v)));
                }
            }
        }
    }
    if !cookies.is_empty() {
        headers.insert("Cookie".into(), Value::from(cookies.join("; ")));
    }
    let mut url = Url::parse(&format!("{}{}", base.trim_end_matches('/'), path))
        .map_err(|e| format!("cannot build the URL from {base:?} and {path:?}: {e}"))?;
    if !query.is_empty() {
        super::request::append_query(&mut url, &query);
    }
    let body = match (&op.body, body) {
        (Some(b), _) if !form.is_empty() => {
            Some((form.join("&").into_bytes(), b.content_type.clone()))
        }
        (Some(b), Some(v)) => {
            let bytes = if b.content_type.contains("json") {
                v.to_string().into_bytes()
            } else if b.content_type.contains("x-www-form-urlencoded") {
                let Value::Object(fields) = v else {
                    return Err(format!(
                        "{}'s body is a form: give an object of fields",
                        op.id
                    ));
                };
                fields
                    .iter()
                    .flat_map(|(k, v)| {
                        scalar_list(v)
                            .into_iter()
                            .map(move |s| format!("{}={}", urlencode(k), urlencode(&s)))
                    })
                    .collect::<Vec<_>>()
                    .join("&")
                    .into_bytes()
            } else {
                super::request::scalar(v).into_bytes()
            };
            Some((bytes, b.content_type.clone()))
        }
        (None, Some(_)) => return Err(format!("{} takes no request body", op.id)),
        (_, None) => None,
    };
    Ok(BuiltCall {
        method: op.method.clone(),
        url: url.to_string(),
        headers,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recursive_schemas_are_inlined_to_a_fixed_depth() {
        let spec = json!({
            "openapi": "3.1.0",
            "info": {"title": "T", "version": "1"},
            "paths": {"/nodes": {"post": {
                "operationId": "addNode",
                "requestBody": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}
            }}},
            "components": {"schemas": {"Node": {"type": "object", "properties": {
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}
            }}}}
        });
        let parsed = parse_spec(&spec.to_string(), None);
        let Ok(parsed) = parsed else {
            panic!("{parsed:?}")
        };
        let op = &parsed.operations[0];
        let schema = Value::Object(parsed.input_schema(op));
        let text = schema.to_string();
        assert!(
            text.contains("see #/components/schemas/Node in the spec"),
            "{text}"
        );
        assert!(text.len() < 5000, "{}", text.len());
    }

    #[test]
    fn operations_without_ids_get_one_and_names_are_sanitised() {
        let yaml =
            "swagger: '2.0'\ninfo: {title: T, version: '1'}\npaths:\n  /a/{id}/b:\n    get: {}\n";
        let parsed = parse_spec(yaml, None);
        let Ok(parsed) = parsed else {
            panic!("{parsed:?}")
        };
        assert_eq!(parsed.operations[0].id, "get_a_id_b");
        assert_eq!(sanitise("pets.list all!"), "pets_list_all");
        assert!(parse_spec("openapi: 2.5.0\npaths: {}\n", None).is_err());
        assert!(parse_spec("{\"paths\": {}}", None).is_err());
    }
}
