//! Import of the MCP server files other clients write, and the variable expansion they use.
//!
//! Four formats are read as they are: Claude Desktop's `claude_desktop_config.json`, Cursor's
//! `.cursor/mcp.json`, Claude Code's `.mcp.json` (all three under a top-level `mcpServers`) and
//! VS Code's `.vscode/mcp.json` (under `servers`, with a top-level `inputs` array; the same object
//! under `mcp` in a `settings.json` is accepted too). VS Code's files are JSON with comments and
//! trailing commas, so those are accepted for every format.
//!
//! Nothing is dropped silently: a field cairn does not support (`envFile`, `inputs`,
//! `autoApprove`, …) becomes an [`ImportWarning`] that names it.
//!
//! Expansion timing: the import keeps `${env:VAR}`, `${VAR}`, `${VAR:-default}`,
//! `${workspaceFolder}`, `${userHome}` as written, and the hub calls [`expand`] (or
//! [`expand_server`]) each time it starts a server. Expanding at import would copy the values of
//! those variables, typically API keys, into cairn's config file in plaintext, and would freeze a
//! workspace path into a user-level file. Keeping the reference also means a rotated key is picked
//! up at the next start.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::model::{McpServerConfig, McpTransport};

/// Which client wrote the file; it decides the top-level key and which fields are expected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpJsonFormat {
    /// `claude_desktop_config.json`: `mcpServers`, entries with `command/args/env` or `url`.
    ClaudeDesktop,
    /// `.cursor/mcp.json`: `mcpServers`, entries with `command/args/env(/envFile)` or `url/headers`.
    Cursor,
    /// `.mcp.json`: `mcpServers`, entries with an optional `type` of `stdio`, `http` or `sse`.
    ClaudeCode,
    /// `.vscode/mcp.json`: `servers` with `type`, plus a top-level `inputs` array.
    VsCode,
}

impl fmt::Display for McpJsonFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::ClaudeDesktop => "Claude Desktop",
            Self::Cursor => "Cursor",
            Self::ClaudeCode => "Claude Code",
            Self::VsCode => "VS Code",
        })
    }
}

/// Something in the file that cairn keeps but cannot honour, or did not import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportWarning {
    /// The server entry it concerns; `None` for top-level keys such as `inputs`.
    pub server: Option<String>,
    /// The key, as a dotted path inside the entry (`envFile`, `env.API_KEY`, `inputs`).
    pub key: String,
    pub message: String,
}

impl fmt::Display for ImportWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.server {
            Some(server) => write!(f, "server `{server}`, `{}`: {}", self.key, self.message),
            None => write!(f, "`{}`: {}", self.key, self.message),
        }
    }
}

/// The servers read from one file, with what could not be carried over.
#[derive(Debug, Clone, PartialEq)]
pub struct McpImport {
    pub format: McpJsonFormat,
    pub servers: BTreeMap<String, McpServerConfig>,
    pub warnings: Vec<ImportWarning>,
}

/// Why an import, an expansion or a rendering failed. Variants name the file and the key.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: not valid JSON: {source}", path.display())]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error(
        "{}: not an MCP server file: expected a top-level `mcpServers` (Claude Desktop, Cursor, Claude Code) or `servers` (VS Code) object",
        path.display()
    )]
    UnknownFormat { path: PathBuf },
    #[error("{}: `{key}`: {message}", path.display())]
    Invalid {
        path: PathBuf,
        key: String,
        message: String,
    },
    #[error("environment variable `{name}` is not set")]
    UnsetVariable { name: String },
    #[error(
        "`${{input:{id}}}` is a value VS Code prompts for; cairn cannot prompt yet: replace it with `${{env:VAR}}` and set VAR"
    )]
    PromptedInput { id: String },
    #[error("unsupported variable `${{{expr}}}`")]
    UnsupportedVariable { expr: String },
    #[error("a `${{` is not closed by `}}`")]
    Unterminated,
    #[error("`${{{name}}}` is used but no workspace folder is open")]
    NoWorkspace { name: String },
    #[error("`{key}`: {source}")]
    Field {
        key: String,
        source: Box<ImportError>,
    },
    #[error("server `{name}` is already configured (`[mcp.servers.{name}]`)")]
    AlreadyConfigured { name: String },
    #[error("the existing config is not valid TOML: {0}")]
    ExistingToml(#[from] toml::de::Error),
    #[error("cannot render TOML: {0}")]
    Toml(#[from] toml::ser::Error),
}

/// Tells the format from the file name, then from the contents.
///
/// The name wins because the three `mcpServers` formats cannot be told apart by contents alone;
/// an unknown name with `mcpServers` is read as Claude Code, whose syntax is a superset of the
/// other two (`type`, `${VAR}`).
pub fn detect_format(path: &Path, contents: &Value) -> Option<McpJsonFormat> {
    let file = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let parent = path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    let by_name = match (parent, file) {
        (_, "claude_desktop_config.json") => Some(McpJsonFormat::ClaudeDesktop),
        (_, ".mcp.json") => Some(McpJsonFormat::ClaudeCode),
        (".cursor", "mcp.json") => Some(McpJsonFormat::Cursor),
        (".vscode", "mcp.json") | (".vscode", "settings.json") => Some(McpJsonFormat::VsCode),
        _ => None,
    };
    let object = contents.as_object()?;
    let has_mcp_servers = object.get("mcpServers").is_some_and(Value::is_object);
    let has_servers = object.get("servers").is_some_and(Value::is_object)
        || object
            .get("mcp")
            .and_then(|m| m.get("servers"))
            .is_some_and(Value::is_object);
    match by_name {
        Some(McpJsonFormat::VsCode) if has_servers => by_name,
        Some(format) if format != McpJsonFormat::VsCode && has_mcp_servers => Some(format),
        _ if has_servers && !has_mcp_servers => Some(McpJsonFormat::VsCode),
        _ if has_mcp_servers => Some(McpJsonFormat::ClaudeCode),
        _ => None,
    }
}

/// Reads and imports one file; the format is detected with [`detect_format`].
pub fn import_file(path: &Path) -> Result<McpImport, ImportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ImportError::Read {
        path: path.to_owned(),
        source,
    })?;
    import_str(&text, path, None)
}

/// Imports the text of a file; `path` is used for detection and in messages.
pub fn import_str(
    text: &str,
    path: &Path,
    format: Option<McpJsonFormat>,
) -> Result<McpImport, ImportError> {
    let value: Value =
        serde_json::from_str(&strip_jsonc(text)).map_err(|source| ImportError::Json {
            path: path.to_owned(),
            source,
        })?;
    let format = match format {
        Some(format) => format,
        None => detect_format(path, &value).ok_or_else(|| ImportError::UnknownFormat {
            path: path.to_owned(),
        })?,
    };
    let mut importer = Importer {
        path,
        format,
        warnings: Vec::new(),
    };
    let servers = importer.import(&value)?;
    Ok(McpImport {
        format,
        servers,
        warnings: importer.warnings,
    })
}

/// A JSON object's entries by key, so warnings and errors come in one order whichever order the
/// file has (serde_json keeps it when its `preserve_order` feature is on, as the ACP SDK turns on).
fn by_key(object: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = object.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

struct Importer<'a> {
    path: &'a Path,
    format: McpJsonFormat,
    warnings: Vec<ImportWarning>,
}

impl Importer<'_> {
    fn invalid(&self, key: impl Into<String>, message: impl Into<String>) -> ImportError {
        ImportError::Invalid {
            path: self.path.to_owned(),
            key: key.into(),
            message: message.into(),
        }
    }

    fn warn(&mut self, server: Option<&str>, key: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(ImportWarning {
            server: server.map(str::to_owned),
            key: key.into(),
            message: message.into(),
        });
    }

    fn import(&mut self, root: &Value) -> Result<BTreeMap<String, McpServerConfig>, ImportError> {
        let root = root
            .as_object()
            .ok_or_else(|| self.invalid("(top level)", "expected a JSON object"))?;
        let (root, top_key) = match self.format {
            McpJsonFormat::VsCode => match root.get("mcp").and_then(Value::as_object) {
                // A VS Code `settings.json` keeps the same object under `mcp`.
                Some(inner) if !root.contains_key("servers") => (inner, "mcp.servers"),
                _ => (root, "servers"),
            },
            _ => (root, "mcpServers"),
        };
        let leaf = top_key.rsplit('.').next().unwrap_or(top_key);
        let servers = match root.get(leaf) {
            Some(Value::Object(servers)) => servers,
            Some(_) => return Err(self.invalid(top_key, "expected an object of servers")),
            None => return Err(self.invalid(top_key, "missing")),
        };
        if self.format == McpJsonFormat::VsCode {
            self.top_level_vscode(root)?;
        }
        for (key, _) in by_key(root) {
            if key != leaf && !(self.format == McpJsonFormat::VsCode && key == "inputs") {
                self.warn(
                    None,
                    key.as_str(),
                    "not an MCP server setting; not imported",
                );
            }
        }
        let mut out = BTreeMap::new();
        for (name, entry) in by_key(servers) {
            let config = self.server(name, entry, top_key)?;
            out.insert(name.clone(), config);
        }
        Ok(out)
    }

    fn top_level_vscode(&mut self, root: &Map<String, Value>) -> Result<(), ImportError> {
        let Some(inputs) = root.get("inputs") else {
            return Ok(());
        };
        let inputs = inputs
            .as_array()
            .ok_or_else(|| self.invalid("inputs", "expected an array"))?;
        for input in inputs {
            let id = input.get("id").and_then(Value::as_str).unwrap_or("?");
            self.warn(
                None,
                "inputs",
                format!(
                    "input `{id}` is prompted for by VS Code; cairn cannot prompt yet, so a server that uses `${{input:{id}}}` will not start until it is replaced by `${{env:VAR}}`"
                ),
            );
        }
        Ok(())
    }

    fn server(
        &mut self,
        name: &str,
        entry: &Value,
        top_key: &str,
    ) -> Result<McpServerConfig, ImportError> {
        let at = |key: &str| format!("{top_key}.{name}.{key}");
        let entry = entry
            .as_object()
            .ok_or_else(|| self.invalid(format!("{top_key}.{name}"), "expected an object"))?;
        let mut config = McpServerConfig::default();
        for (key, value) in by_key(entry) {
            match key.as_str() {
                "command" => config.command = Some(self.string(value, &at(key))?),
                "args" => config.args = self.strings(value, &at(key))?,
                "env" => config.env = self.map(name, value, &at(key), key)?,
                "headers" => config.headers = self.map(name, value, &at(key), key)?,
                "url" | "serverUrl" => config.url = Some(self.string(value, &at(key))?),
                "cwd" => config.cwd = Some(PathBuf::from(self.string(value, &at(key))?)),
                "type" | "transport" => {
                    let kind = self.string(value, &at(key))?;
                    config.transport = Some(match kind.as_str() {
                        "stdio" => McpTransport::Stdio,
                        "http" | "streamableHttp" | "streamable-http" | "streamable_http" => {
                            McpTransport::Http
                        }
                        "sse" => McpTransport::Sse,
                        other => {
                            return Err(self.invalid(
                                at(key),
                                format!(
                                    "unknown transport `{other}`; expected `stdio`, `http` or `sse`"
                                ),
                            ));
                        }
                    });
                }
                "disabled" => {
                    config.disabled = value
                        .as_bool()
                        .ok_or_else(|| self.invalid(at(key), "expected true or false"))?;
                }
                "envFile" => self.warn(
                    Some(name),
                    key.as_str(),
                    "cairn does not read env files; the variables it sets are missing: copy them into `env` as `${env:VAR}` references",
                ),
                "autoApprove" | "alwaysAllow" => self.warn(
                    Some(name),
                    key.as_str(),
                    "not imported: cairn asks for approval by its own `[policy]`",
                ),
                other => self.warn(
                    Some(name),
                    other,
                    format!("{} field not supported by cairn; not imported", self.format),
                ),
            }
        }
        match (&config.command, &config.url) {
            (None, None) => {
                return Err(self.invalid(
                    format!("{top_key}.{name}"),
                    "needs `command` (stdio) or `url` (HTTP)",
                ));
            }
            (Some(_), Some(_)) => {
                return Err(self.invalid(
                    format!("{top_key}.{name}"),
                    "has both `command` and `url`; keep one",
                ));
            }
            (Some(_), None) if matches!(config.transport, Some(t) if t != McpTransport::Stdio) => {
                return Err(self.invalid(at("type"), "an HTTP transport needs `url`"));
            }
            (None, Some(_)) if config.transport == Some(McpTransport::Stdio) => {
                return Err(self.invalid(at("type"), "`stdio` needs `command`"));
            }
            _ => {}
        }
        self.check_references(name, &config);
        Ok(config)
    }

    /// Warns about values the hub will not be able to expand, so the user learns it at import.
    fn check_references(&mut self, name: &str, config: &McpServerConfig) {
        let mut fields: Vec<(String, &str)> = Vec::new();
        if let Some(command) = &config.command {
            fields.push(("command".into(), command));
        }
        for (i, arg) in config.args.iter().enumerate() {
            fields.push((format!("args[{i}]"), arg));
        }
        for (k, v) in &config.env {
            fields.push((format!("env.{k}"), v));
        }
        for (k, v) in &config.headers {
            fields.push((format!("headers.{k}"), v));
        }
        if let Some(url) = &config.url {
            fields.push(("url".into(), url));
        }
        let cwd = config
            .cwd
            .as_ref()
            .map(|c| c.to_string_lossy().into_owned());
        if let Some(cwd) = &cwd {
            fields.push(("cwd".into(), cwd));
        }
        for (key, value) in fields {
            // A dry run with every variable "set" finds the references that can never expand.
            let result = expand(value, &|_| Some(String::new()), Some(Path::new("/")));
            match result {
                Err(ImportError::PromptedInput { id }) => self.warn(
                    Some(name),
                    key,
                    format!(
                        "refers to `${{input:{id}}}`, which cairn cannot prompt for; the server will not start until it is replaced by `${{env:VAR}}`"
                    ),
                ),
                Err(e) => self.warn(
                    Some(name),
                    key,
                    format!("will not expand when the server starts: {e}"),
                ),
                Ok(_) if self.format == McpJsonFormat::ClaudeDesktop && value.contains("${") => {
                    self.warn(
                        Some(name),
                        key,
                        "Claude Desktop passes `${...}` literally; cairn expands it when the server starts",
                    );
                }
                Ok(_) => {}
            }
        }
    }

    fn string(&self, value: &Value, key: &str) -> Result<String, ImportError> {
        value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| self.invalid(key, "expected a string"))
    }

    fn strings(&self, value: &Value, key: &str) -> Result<Vec<String>, ImportError> {
        let items = value
            .as_array()
            .ok_or_else(|| self.invalid(key, "expected an array of strings"))?;
        items
            .iter()
            .enumerate()
            .map(|(i, item)| self.string(item, &format!("{key}[{i}]")))
            .collect()
    }

    /// `env` and `headers`: string values; numbers and booleans are written as text (as Node
    /// does when it sets a child's environment), with a warning.
    fn map(
        &mut self,
        server: &str,
        value: &Value,
        key: &str,
        short: &str,
    ) -> Result<BTreeMap<String, String>, ImportError> {
        let object = value
            .as_object()
            .ok_or_else(|| self.invalid(key, "expected an object of strings"))?;
        let mut out = BTreeMap::new();
        for (k, v) in by_key(object) {
            let text = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => {
                    self.warn(
                        Some(server),
                        format!("{short}.{k}"),
                        "a number; kept as text",
                    );
                    n.to_string()
                }
                Value::Bool(b) => {
                    self.warn(
                        Some(server),
                        format!("{short}.{k}"),
                        "a boolean; kept as text",
                    );
                    b.to_string()
                }
                _ => return Err(self.invalid(format!("{key}.{k}"), "expected a string")),
            };
            out.insert(k.clone(), text);
        }
        Ok(out)
    }
}

/// Removes `//` and `/* */` comments and trailing commas outside strings (VS Code's JSONC).
///
/// Removed characters become spaces (newlines are kept), so serde_json's line and column in an
/// error still point into the original text.
fn strip_jsonc(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut in_string = false;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(&next) = chars.get(i + 1) {
                    out.push(next);
                    i += 1;
                }
            } else if c == '"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match (c, chars.get(i + 1)) {
            ('"', _) => {
                in_string = true;
                out.push(c);
                i += 1;
            }
            ('/', Some('/')) => {
                while i < chars.len() && chars[i] != '\n' {
                    out.push(' ');
                    i += 1;
                }
            }
            ('/', Some('*')) => {
                out.push_str("  ");
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    out.push(if chars[i] == '\n' { '\n' } else { ' ' });
                    i += 1;
                }
                if i < chars.len() {
                    out.push_str("  ");
                    i += 2;
                }
            }
            (',', _) => {
                // A comma followed only by whitespace or comments before `}` or `]` is trailing.
                let mut j = i + 1;
                loop {
                    match chars.get(j) {
                        Some(w) if w.is_whitespace() => j += 1,
                        Some('/') if chars.get(j + 1) == Some(&'/') => {
                            while j < chars.len() && chars[j] != '\n' {
                                j += 1;
                            }
                        }
                        Some('/') if chars.get(j + 1) == Some(&'*') => {
                            j += 2;
                            while j < chars.len()
                                && !(chars[j] == '*' && chars.get(j + 1) == Some(&'/'))
                            {
                                j += 1;
                            }
                            j += 2;
                        }
                        _ => break,
                    }
                }
                let trailing = matches!(chars.get(j), Some('}') | Some(']'));
                out.push(if trailing { ' ' } else { ',' });
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Expands the variables of one value, as the clients these files come from do.
///
/// - `${env:VAR}` (VS Code, Cursor) and `${VAR}` (Claude Code): the variable, from `env`.
/// - `${VAR:-default}` (Claude Code): `default` when VAR is unset or empty.
/// - `${workspaceFolder}`, `${workspaceFolderBasename}`: from `workspace`.
/// - `${userHome}`: `HOME` (or `USERPROFILE`) from `env`.
/// - `${pathSeparator}`, `${/}`: the platform's path separator.
///
/// An unset variable is an error naming it, not an empty string: a server started with an empty
/// API key fails later with a message that hides the cause. `${input:ID}` is an error naming
/// the input. A `$` not followed by `{` is kept as it is.
pub fn expand(
    value: &str,
    env: &dyn Fn(&str) -> Option<String>,
    workspace: Option<&Path>,
) -> Result<String, ImportError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or(ImportError::Unterminated)?;
        out.push_str(&expand_one(&after[..end], env, workspace)?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn expand_one(
    expr: &str,
    env: &dyn Fn(&str) -> Option<String>,
    workspace: Option<&Path>,
) -> Result<String, ImportError> {
    let lookup = |name: &str| {
        env(name).ok_or_else(|| ImportError::UnsetVariable {
            name: name.to_owned(),
        })
    };
    let workspace_path = || {
        workspace.ok_or_else(|| ImportError::NoWorkspace {
            name: expr.to_owned(),
        })
    };
    match expr {
        "workspaceFolder" => return Ok(workspace_path()?.to_string_lossy().into_owned()),
        "workspaceFolderBasename" => {
            return Ok(workspace_path()?
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default());
        }
        "userHome" => {
            return env("HOME").or_else(|| env("USERPROFILE")).ok_or_else(|| {
                ImportError::UnsetVariable {
                    name: "HOME".into(),
                }
            });
        }
        "pathSeparator" | "/" => return Ok(std::path::MAIN_SEPARATOR.to_string()),
        _ => {}
    }
    if let Some(name) = expr.strip_prefix("env:") {
        if is_var_name(name) {
            return lookup(name);
        }
    } else if let Some(id) = expr.strip_prefix("input:") {
        return Err(ImportError::PromptedInput { id: id.to_owned() });
    } else if let Some((name, default)) = expr.split_once(":-") {
        if is_var_name(name) {
            return Ok(env(name)
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| default.to_owned()));
        }
    } else if is_var_name(expr) {
        return lookup(expr);
    }
    Err(ImportError::UnsupportedVariable {
        expr: expr.to_owned(),
    })
}

fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Expands every value of a server entry (command, args, env, cwd, url, headers) before start.
/// Errors name the field (`env.API_KEY: environment variable `X` is not set`).
pub fn expand_server(
    config: &McpServerConfig,
    env: &dyn Fn(&str) -> Option<String>,
    workspace: Option<&Path>,
) -> Result<McpServerConfig, ImportError> {
    let field = |key: String, value: &str| {
        expand(value, env, workspace).map_err(|source| ImportError::Field {
            key,
            source: Box::new(source),
        })
    };
    let mut out = config.clone();
    if let Some(command) = &config.command {
        out.command = Some(field("command".into(), command)?);
    }
    out.args = config
        .args
        .iter()
        .enumerate()
        .map(|(i, a)| field(format!("args[{i}]"), a))
        .collect::<Result<_, _>>()?;
    out.env = config
        .env
        .iter()
        .map(|(k, v)| Ok((k.clone(), field(format!("env.{k}"), v)?)))
        .collect::<Result<_, ImportError>>()?;
    out.headers = config
        .headers
        .iter()
        .map(|(k, v)| Ok((k.clone(), field(format!("headers.{k}"), v)?)))
        .collect::<Result<_, ImportError>>()?;
    if let Some(url) = &config.url {
        out.url = Some(field("url".into(), url)?);
    }
    if let Some(cwd) = &config.cwd {
        out.cwd = Some(PathBuf::from(field("cwd".into(), &cwd.to_string_lossy())?));
    }
    Ok(out)
}

/// Renders servers as `[mcp.servers.NAME]` tables to append to a cairn config file.
///
/// Only fields that differ from their defaults are written, in alphabetical order (the `toml`
/// table's), so the result reads like a hand-written entry. Names that are not bare TOML keys
/// are quoted.
pub fn render_servers_toml(
    servers: &BTreeMap<String, McpServerConfig>,
) -> Result<String, ImportError> {
    let mut out = String::new();
    for (name, config) in servers {
        let mut table = toml::Table::new();
        if let Some(command) = &config.command {
            table.insert("command".into(), command.clone().into());
        }
        if !config.args.is_empty() {
            table.insert("args".into(), config.args.clone().into());
        }
        if let Some(cwd) = &config.cwd {
            table.insert("cwd".into(), cwd.to_string_lossy().into_owned().into());
        }
        if let Some(url) = &config.url {
            table.insert("url".into(), url.clone().into());
        }
        if let Some(transport) = config.transport {
            let kind = match transport {
                McpTransport::Stdio => "stdio",
                McpTransport::Http => "http",
                McpTransport::Sse => "sse",
            };
            table.insert("transport".into(), kind.into());
        }
        if config.disabled {
            table.insert("disabled".into(), true.into());
        }
        if let Some(secs) = config.call_timeout_secs {
            let secs = i64::try_from(secs).unwrap_or(i64::MAX);
            table.insert("call_timeout_secs".into(), secs.into());
        }
        for (key, map) in [("env", &config.env), ("headers", &config.headers)] {
            if !map.is_empty() {
                let inner: toml::Table = map
                    .iter()
                    .map(|(k, v)| (k.clone(), toml::Value::from(v.clone())))
                    .collect();
                table.insert(key.into(), toml::Value::Table(inner));
            }
        }
        let mut servers = toml::Table::new();
        servers.insert(name.clone(), toml::Value::Table(table));
        let mut mcp = toml::Table::new();
        mcp.insert("servers".into(), toml::Value::Table(servers));
        let mut doc = toml::Table::new();
        doc.insert("mcp".into(), toml::Value::Table(mcp));
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&toml::to_string(&doc)?);
    }
    Ok(out)
}

/// Fails, naming the server, when a config file's text already has `[mcp.servers.NAME]` for
/// one of `servers`: appending would make the file invalid TOML.
pub fn check_conflicts(
    existing: &str,
    servers: &BTreeMap<String, McpServerConfig>,
) -> Result<(), ImportError> {
    let table: toml::Table = toml::from_str(existing)?;
    let configured = table
        .get("mcp")
        .and_then(|m| m.get("servers"))
        .and_then(toml::Value::as_table);
    if let Some(configured) = configured
        && let Some(name) = servers.keys().find(|n| configured.contains_key(n.as_str()))
    {
        return Err(ImportError::AlreadyConfigured { name: name.clone() });
    }
    Ok(())
}
