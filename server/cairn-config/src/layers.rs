//! Configuration layers, their validation, and how they merge.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::{Table, Value};

use crate::model::Config;

/// Where a layer came from; named in every error about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayerSource {
    UserFile(PathBuf),
    WorkspaceFile(PathBuf),
    /// The editor's settings.
    Client,
    Environment,
}

impl fmt::Display for LayerSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayerSource::UserFile(p) | LayerSource::WorkspaceFile(p) => {
                write!(f, "{}", p.display())
            }
            LayerSource::Client => f.write_str("the editor's settings"),
            LayerSource::Environment => f.write_str("the environment"),
        }
    }
}

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{source_name}: not valid TOML: {message}")]
    Parse {
        source_name: String,
        message: String,
    },
    #[error("{source_name}: unknown key `{key}`")]
    UnknownKey { source_name: String, key: String },
    #[error("{source_name}: invalid value for `{key}`: {message}")]
    Invalid {
        source_name: String,
        key: String,
        message: String,
    },
    #[error(
        "{path}: `{key}` cannot be set in a workspace file ({why}); set it in your user config"
    )]
    NotAllowedInWorkspace {
        path: PathBuf,
        key: String,
        why: &'static str,
    },
    #[error("environment variable {var}: {message}")]
    Env { var: String, message: String },
}

/// Keys a workspace file may not set, and why.
pub const WORKSPACE_FORBIDDEN: &[(&str, &str)] = &[
    (
        "provider.base_url",
        "it could send your API key to another host",
    ),
    (
        "provider.kind",
        "it could send your API key to another host",
    ),
    (
        "provider.api_key_env",
        "it could expose another secret from your environment",
    ),
    (
        "provider.api_key_secret",
        "it could send another secret from your vault to the provider",
    ),
    ("sessions.dir", "it could write your transcripts elsewhere"),
    (
        "api.openapi",
        "its specs would be fetched when cairn starts, before any approval, and their operations offered to the model as trusted built-in tools",
    ),
    (
        "api.services",
        "its services would be called with your credentials and addresses it chose",
    ),
    (
        "agent.system_prompt",
        "it would put the repository's words in place of cairn's instructions",
    ),
    (
        "agent.max_tool_calls",
        "the tool-call cap is yours to set, not the repository's",
    ),
    ("log.file", "it could write your log elsewhere"),
    (
        "sandbox",
        "the sandbox's engine, images and limits are yours to set, not the repository's",
    ),
    (
        "system",
        "which environment values and log directories outside the workspace cairn may read is yours to set, not the repository's",
    ),
    (
        "ml.hub_secret",
        "it could send another secret from your vault to the hub",
    ),
    (
        "selection.model",
        "the embedding model is yours to choose, not the repository's",
    ),
    (
        "selection.revision",
        "the embedding model is yours to choose, not the repository's",
    ),
    (
        "selection.cache_dir",
        "it could write cache files elsewhere",
    ),
    (
        "access",
        "a repository cannot grant itself access; the team's grants go in .cairn/policy.toml",
    ),
    (
        "web",
        "the web guard's limits and lists are yours to set, not the repository's",
    ),
    (
        "db",
        "its databases would be opened with your credentials; declare databases in your own config",
    ),
    (
        "cloud",
        "its cloud accounts would be used with your credentials; declare accounts in your own config",
    ),
    (
        "comms",
        "who cairn may send messages to, and from which accounts, is yours to set, not the repository's",
    ),
];

/// One layer: a TOML table and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    pub source: LayerSource,
    pub table: Table,
}

impl Layer {
    /// Reads a TOML file; `Ok(None)` when it does not exist.
    pub fn from_file(path: &Path, workspace: bool) -> Result<Option<Layer>, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let source = if workspace {
            LayerSource::WorkspaceFile(path.to_path_buf())
        } else {
            LayerSource::UserFile(path.to_path_buf())
        };
        Layer::from_toml_str(&text, source).map(Some)
    }

    /// Parses and validates TOML text.
    pub fn from_toml_str(text: &str, source: LayerSource) -> Result<Layer, ConfigError> {
        let table: Table = text
            .parse()
            .map_err(|e: toml::de::Error| ConfigError::Parse {
                source_name: source.to_string(),
                message: e.message().to_string(),
            })?;
        let layer = Layer { source, table };
        layer.validate()?;
        Ok(layer)
    }

    /// The editor's settings, as JSON. `null` values are dropped (they mean "unset").
    pub fn from_json(value: &serde_json::Value) -> Result<Layer, ConfigError> {
        let table = match json_to_toml(value) {
            Some(Value::Table(t)) => t,
            None => Table::new(),
            Some(_) => {
                return Err(ConfigError::Invalid {
                    source_name: LayerSource::Client.to_string(),
                    key: "config".into(),
                    message: "expected an object".into(),
                });
            }
        };
        let layer = Layer {
            source: LayerSource::Client,
            table,
        };
        layer.validate()?;
        Ok(layer)
    }

    /// `CAIRN_<SECTION>__<KEY>=value` (nested with more `__`), and `CAIRN_MODEL`. Values are read
    /// as TOML (`10`, `true`, `"x"`) and otherwise taken as strings. Other `CAIRN_*` variables
    /// without `__` are not configuration keys and are left alone.
    pub fn from_env<I>(vars: I) -> Result<Layer, ConfigError>
    where
        I: IntoIterator<Item = (String, String)>,
    {
        let mut table = Table::new();
        for (name, raw) in vars {
            let Some(rest) = name.strip_prefix("CAIRN_") else {
                continue;
            };
            let path: Vec<String> = if rest == "MODEL" {
                vec!["provider".into(), "model".into()]
            } else if rest.contains("__") {
                rest.split("__").map(str::to_ascii_lowercase).collect()
            } else {
                continue;
            };
            if path.iter().any(String::is_empty) {
                return Err(ConfigError::Env {
                    var: name,
                    message: "empty key segment".into(),
                });
            }
            let value = parse_env_value(&raw);
            insert_path(&mut table, &path, value);
            let single = Layer {
                source: LayerSource::Environment,
                table: table.clone(),
            };
            single.validate().map_err(|e| ConfigError::Env {
                var: name.clone(),
                message: e.to_string(),
            })?;
        }
        Ok(Layer {
            source: LayerSource::Environment,
            table,
        })
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if let LayerSource::WorkspaceFile(path) = &self.source {
            for (key, why) in WORKSPACE_FORBIDDEN {
                let segments: Vec<&str> = key.split('.').collect();
                if get_path(&self.table, &segments).is_some() {
                    return Err(ConfigError::NotAllowedInWorkspace {
                        path: path.clone(),
                        key: (*key).to_string(),
                        why,
                    });
                }
            }
            if let Some(Value::Table(policy)) = self.table.get("policy")
                && let Some(key) = find_allow(policy, "policy")
            {
                return Err(ConfigError::NotAllowedInWorkspace {
                    path: path.clone(),
                    key,
                    why: "a repository may tighten the approval policy, never loosen it",
                });
            }
        }
        deserialize(&self.table, &self.source).map(|_| ())
    }
}

fn find_allow(table: &Table, prefix: &str) -> Option<String> {
    for (k, v) in table {
        let key = format!("{prefix}.{k}");
        match v {
            Value::String(s) if s == "allow" => return Some(key),
            Value::Table(t) => {
                if let Some(found) = find_allow(t, &key) {
                    return Some(found);
                }
            }
            _ => {}
        }
    }
    None
}

fn deserialize(table: &Table, source: &LayerSource) -> Result<Config, ConfigError> {
    let value = Value::Table(table.clone());
    serde_path_to_error::deserialize::<_, Config>(value).map_err(|e| {
        let path = e.path().to_string();
        // toml appends "in `key`" lines; the key is named separately.
        let message = e
            .inner()
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        let source_name = source.to_string();
        if let Some(field) = message
            .strip_prefix("unknown field `")
            .and_then(|m| m.split('`').next())
        {
            // serde reports the containing path; the unknown key is the field it names.
            let key = if path == "." || path.is_empty() {
                field.to_string()
            } else if path == field || path.ends_with(&format!(".{field}")) {
                path
            } else {
                format!("{path}.{field}")
            };
            ConfigError::UnknownKey { source_name, key }
        } else {
            ConfigError::Invalid {
                source_name,
                key: path,
                message,
            }
        }
    })
}

fn parse_env_value(raw: &str) -> Value {
    let doc = format!("v = {raw}");
    match doc.parse::<Table>() {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| Value::String(raw.to_string())),
        Err(_) => Value::String(raw.to_string()),
    }
}

fn insert_path(table: &mut Table, path: &[String], value: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = table;
    for seg in parents {
        let entry = cur
            .entry(seg.clone())
            .or_insert_with(|| Value::Table(Table::new()));
        if !entry.is_table() {
            *entry = Value::Table(Table::new());
        }
        let Value::Table(next) = entry else { return };
        cur = next;
    }
    cur.insert(last.clone(), value);
}

fn get_path<'a>(table: &'a Table, path: &[&str]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let v = table.get(*first)?;
    if rest.is_empty() {
        return Some(v);
    }
    match v {
        Value::Table(t) => get_path(t, rest),
        _ => None,
    }
}

fn json_to_toml(value: &serde_json::Value) -> Option<Value> {
    Some(match value {
        serde_json::Value::Null => return None,
        serde_json::Value::Bool(b) => Value::Boolean(*b),
        serde_json::Value::Number(n) => match n.as_i64() {
            Some(i) => Value::Integer(i),
            None => Value::Float(n.as_f64()?),
        },
        serde_json::Value::String(s) => Value::String(s.clone()),
        serde_json::Value::Array(a) => Value::Array(a.iter().filter_map(json_to_toml).collect()),
        serde_json::Value::Object(o) => Value::Table(
            o.iter()
                .filter_map(|(k, v)| Some((k.clone(), json_to_toml(v)?)))
                .collect(),
        ),
    })
}

/// Deep merge: tables merge key by key, anything else is replaced.
fn merge(base: &mut Table, over: &Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// All layers, lowest precedence first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layers {
    pub user: Option<Layer>,
    pub workspace: Option<Layer>,
    pub client: Option<Layer>,
    pub env: Option<Layer>,
}

impl Layers {
    /// Reads the user file, the first workspace root's `.cairn/config.toml` and the environment.
    pub fn load<I>(
        user_file: Option<&Path>,
        workspace_root: Option<&Path>,
        env: I,
    ) -> Result<Layers, ConfigError>
    where
        I: IntoIterator<Item = (String, String)>,
    {
        let user = match user_file {
            Some(p) => Layer::from_file(p, false)?,
            None => None,
        };
        let workspace = match workspace_root {
            Some(root) => Layer::from_file(&root.join(".cairn").join("config.toml"), true)?,
            None => None,
        };
        let env = Layer::from_env(env)?;
        Ok(Layers {
            user,
            workspace,
            client: None,
            env: Some(env),
        })
    }

    /// Merges the layers into one validated configuration.
    pub fn resolve(&self) -> Result<Config, ConfigError> {
        let mut merged = Table::new();
        for layer in [&self.user, &self.workspace, &self.client, &self.env]
            .into_iter()
            .flatten()
        {
            merge(&mut merged, &layer.table);
        }
        let source = LayerSource::Client;
        let mut config = deserialize(&merged, &source)?;
        // Hooks add up instead of replacing each other: a workspace may add its own (which wait
        // for trust), never replace or remove the user's.
        let mut hooks = Vec::new();
        for layer in [&self.user, &self.client, &self.env, &self.workspace]
            .into_iter()
            .flatten()
        {
            let from_workspace = matches!(layer.source, LayerSource::WorkspaceFile(_));
            if layer.table.contains_key("hooks") {
                let declared = deserialize(&layer.table, &layer.source)?.hooks;
                hooks.extend(declared.into_iter().map(|mut h| {
                    h.from_workspace = from_workspace;
                    h
                }));
            }
        }
        config.hooks = hooks;
        Ok(config)
    }
}

/// The user's config file: `$XDG_CONFIG_HOME/cairn/config.toml`, else `~/.config/cairn/config.toml`.
pub fn default_user_config_path(
    xdg_config_home: Option<&str>,
    home: Option<&str>,
) -> Option<PathBuf> {
    match (xdg_config_home.filter(|s| !s.is_empty()), home) {
        (Some(x), _) => Some(PathBuf::from(x).join("cairn").join("config.toml")),
        (None, Some(h)) => Some(
            PathBuf::from(h)
                .join(".config")
                .join("cairn")
                .join("config.toml"),
        ),
        (None, None) => None,
    }
}

impl Config {
    /// Deserialize a whole configuration from TOML text (for tests and `cairn doctor`).
    pub fn from_toml_str(text: &str) -> Result<Config, ConfigError> {
        let layer = Layer::from_toml_str(text, LayerSource::Client)?;
        Config::deserialize(Value::Table(layer.table)).map_err(|e| ConfigError::Parse {
            source_name: "config".into(),
            message: e.to_string(),
        })
    }
}
