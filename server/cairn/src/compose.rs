//! The composition root: configuration and environment in, a wired agent out.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cairn_agent::model::{ModelClient, ModelError, ModelRequest, ModelStream};
use cairn_agent::policy::{Decision, Policy};
use cairn_agent::tools::{CallContext, Effect, ToolHost, ToolInfo};
use cairn_agent::{Agent, Limits};
use cairn_config::{Config, Layers, ProviderKind};
use cairn_llm::{ApiKey, ProviderSettings};
use cairn_workspace::{DocumentOverlay, Workspace};
use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, ContentBlock};

/// The process environment, read once, so tests and the LSP see one consistent picture.
#[derive(Debug, Clone, Default)]
pub struct Env(pub HashMap<String, String>);

impl Env {
    pub fn from_process() -> Self {
        Self(std::env::vars().collect())
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// Reads the user file and the environment; the workspace file is added for `root`.
pub fn load_layers(env: &Env, root: Option<&Path>) -> anyhow::Result<Layers> {
    let user = cairn_config::default_user_config_path(env.get("XDG_CONFIG_HOME"), env.get("HOME"));
    Ok(Layers::load(user.as_deref(), root, env.0.clone())?)
}

/// Where API keys come from. Today the environment; the vault will be another source.
pub trait KeySource: Send + Sync {
    fn api_key(&self, name: &str) -> Option<ApiKey>;
}

impl KeySource for Env {
    fn api_key(&self, name: &str) -> Option<ApiKey> {
        self.get(name).map(ApiKey::new)
    }
}

/// Provider settings from configuration, the SDKs' own variables, and the key source.
pub fn provider_settings(config: &Config, env: &Env, keys: &dyn KeySource) -> ProviderSettings {
    let p = &config.provider;
    let kind = p.kind.unwrap_or_else(|| {
        if env.get("ANTHROPIC_API_KEY").is_some() && env.get("OPENAI_API_KEY").is_none() {
            ProviderKind::Anthropic
        } else {
            ProviderKind::Openai
        }
    });
    let (llm_kind, url_var, default_url, default_model) = match kind {
        ProviderKind::Openai => (
            cairn_llm::ProviderKind::OpenAiCompatible,
            "OPENAI_BASE_URL",
            "https://api.openai.com/v1",
            "gpt-4o-mini",
        ),
        ProviderKind::Anthropic => (
            cairn_llm::ProviderKind::Anthropic,
            "ANTHROPIC_BASE_URL",
            "https://api.anthropic.com",
            "claude-sonnet-4-5",
        ),
    };
    let base_url = p
        .base_url
        .clone()
        .or_else(|| env.get(url_var).map(str::to_string))
        .unwrap_or_else(|| default_url.into());
    let model = p.model.clone().unwrap_or_else(|| default_model.into());
    let key_var = p
        .api_key_env
        .clone()
        .unwrap_or_else(|| llm_kind.default_key_setting().to_string());
    let mut settings = ProviderSettings::new(llm_kind, model, base_url);
    settings.api_key = keys.api_key(&key_var);
    settings.api_key_setting = key_var;
    settings.max_retries = p.max_retries;
    settings.connect_timeout = Duration::from_secs(p.connect_timeout_secs);
    settings.idle_timeout = Duration::from_secs(p.idle_timeout_secs);
    settings.max_tokens = p.max_tokens;
    settings.retry_base_delay = Duration::from_millis(p.retry_base_delay_ms);
    settings
}

fn decision(d: cairn_config::Decision) -> Decision {
    match d {
        cairn_config::Decision::Allow => Decision::Allow,
        cairn_config::Decision::Ask => Decision::Ask,
        cairn_config::Decision::Deny => Decision::Deny,
    }
}

/// The approval policy of a configuration.
pub fn policy(config: &Config) -> Policy {
    let e = &config.policy.effects;
    Policy {
        tools: config
            .policy
            .tools
            .iter()
            .map(|(k, v)| (k.clone(), decision(*v)))
            .collect(),
        categories: config
            .policy
            .categories
            .iter()
            .map(|(k, v)| (k.clone(), decision(*v)))
            .collect(),
        effects: [
            (Effect::Read, decision(e.read)),
            (Effect::Write, decision(e.write)),
            (Effect::Execute, decision(e.execute)),
            (Effect::Network, decision(e.network)),
        ]
        .into_iter()
        .collect(),
    }
}

/// A model that could not be set up: every call fails with the reason.
struct UnavailableModel(ModelError);

impl ModelClient for UnavailableModel {
    fn describe(&self) -> String {
        "unavailable model".into()
    }

    fn stream(&self, _: ModelRequest) -> BoxFuture<'_, Result<ModelStream, ModelError>> {
        let error = self.0.clone();
        Box::pin(async move { Err(error) })
    }
}

/// A host with no tools, for a server without a workspace folder.
struct NoTools;

impl ToolHost for NoTools {
    fn list(&self) -> Vec<ToolInfo> {
        Vec::new()
    }
    fn call(
        &self,
        name: &str,
        _: serde_json::Map<String, serde_json::Value>,
        _: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        let message = format!("unknown tool `{name}`: open a folder to use workspace tools");
        Box::pin(async move { CallToolResult::error(vec![ContentBlock::text(message)]) })
    }
}

/// The built-in tools over these roots.
pub fn tools(
    roots: &[PathBuf],
    overlay: Option<Arc<dyn DocumentOverlay>>,
) -> Result<Arc<dyn ToolHost>, String> {
    if roots.is_empty() {
        return Ok(Arc::new(NoTools));
    }
    let mut workspace = Workspace::new(roots.to_vec()).map_err(|e| e.to_string())?;
    if let Some(overlay) = overlay {
        workspace = workspace.with_overlay(overlay);
    }
    Ok(Arc::new(cairn_tools::BuiltinTools::new(Arc::new(
        workspace,
    ))))
}

/// The agent for a configuration.
pub fn agent(
    config: &Config,
    env: &Env,
    roots: &[PathBuf],
    overlay: Option<Arc<dyn DocumentOverlay>>,
) -> Result<Agent, String> {
    // A provider that cannot be set up fails each run with its reason; tools, sessions and the
    // catalog keep working.
    let model = cairn_llm::client(provider_settings(config, env, env))
        .unwrap_or_else(|e| Arc::new(UnavailableModel(e)) as Arc<dyn ModelClient>);
    Ok(Agent {
        model,
        tools: tools(roots, overlay)?,
        policy: policy(config),
        limits: Limits {
            max_tool_calls: config.agent.max_tool_calls,
            tool_result_max_bytes: config.agent.tool_result_max_bytes,
        },
        system_prompt: config
            .agent
            .system_prompt
            .clone()
            .unwrap_or_else(|| cairn_agent::run::DEFAULT_SYSTEM_PROMPT.into()),
    })
}

/// Where transcripts go: `sessions.dir`, else `$XDG_DATA_HOME/cairn/sessions`, else
/// `~/.local/share/cairn/sessions`.
pub fn sessions_dir(config: &Config, env: &Env) -> PathBuf {
    if let Some(dir) = &config.sessions.dir {
        return dir.clone();
    }
    let base = env
        .get("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| {
            env.get("HOME")
                .map(|h| PathBuf::from(h).join(".local").join("share"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("cairn").join("sessions")
}

/// The LSP front's factory.
pub struct Factory {
    pub env: Env,
}

impl cairn_lsp::AgentFactory for Factory {
    fn build(
        &self,
        config: &Config,
        roots: &[PathBuf],
        overlay: Arc<dyn DocumentOverlay>,
    ) -> Result<Agent, String> {
        agent(config, &self.env, roots, Some(overlay))
    }

    fn sessions_dir(&self, config: &Config) -> PathBuf {
        sessions_dir(config, &self.env)
    }
}
