//! The composition root: configuration and environment in, a wired agent out.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cairn_agent::model::{ModelClient, ModelError, ModelRequest, ModelStream, SharedModel};
use cairn_agent::policy::{Decision, Policy};
use cairn_agent::tools::{Chain, Effect, ToolHost};
use cairn_agent::{Agent, Limits};
use cairn_config::access::{AccessPolicy, AccessRules};
use cairn_config::{AccessConfig, Config, Layers, McpConfig, ProviderKind, SandboxConfig, trust};
use cairn_llm::{ApiKey, ProviderSettings};
use cairn_lsp::McpHandle;
use cairn_mcp::pinning::PinStore;
use cairn_mcp::{Hub, HubOptions, ResourceTool, Reviewer};
use cairn_workspace::{DocumentOverlay, ExactApprovals, Workspace};
use futures::future::BoxFuture;

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

/// Which provider answers: one over HTTP, or the local model.
#[derive(Debug, Clone)]
pub enum Provider {
    Http(ProviderSettings),
    Local {
        settings: cairn_local::LocalSettings,
        /// Chosen because nothing else was configured (said so once).
        default: bool,
    },
}

/// Whether anything names a hosted or served provider: a kind, a model, a base URL or key
/// variable in the configuration, the SDKs' variables, or a provider key in the vault. When
/// nothing does, the local model answers.
fn provider_configured(config: &Config, env: &Env) -> bool {
    let p = &config.provider;
    p.kind.is_some()
        || p.model.is_some()
        || p.base_url.is_some()
        || p.api_key_env.is_some()
        || p.api_key_secret.is_some()
        || [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "OPENAI_BASE_URL",
            "ANTHROPIC_BASE_URL",
        ]
        .iter()
        .any(|v| env.get(v).is_some())
        || crate::secrets::open_default(env)
            .ok()
            .flatten()
            .is_some_and(|v| {
                v.list()
                    .iter()
                    .any(|(name, _)| name == "openai" || name == "anthropic")
            })
}

/// The provider for this configuration and environment.
pub fn provider(config: &Config, env: &Env) -> Result<Provider, String> {
    let p = &config.provider;
    let local = match p.kind {
        Some(ProviderKind::Local) => Some(false),
        None if !provider_configured(config, env) => Some(true),
        _ => None,
    };
    let Some(default) = local else {
        return Ok(Provider::Http(provider_settings(config, env, env)));
    };
    let model = p
        .model
        .clone()
        .unwrap_or_else(|| cairn_local::DEFAULT_MODEL.to_owned());
    let source = cairn_local::ModelSource::parse(&model).map_err(|e| e.to_string())?;
    let mut settings = cairn_local::LocalSettings::new(source);
    settings.context = p.context;
    settings.max_tokens = p.max_tokens;
    if let Some(t) = p.temperature {
        settings.temperature = t.max(0.0);
    }
    settings.max_memory_mib = p.max_memory_mib;
    settings.threads = p.threads;
    settings.constrain_calls = p.constrain_tool_calls.unwrap_or(true);
    Ok(Provider::Local { settings, default })
}

/// The model client for this configuration: the local model is the process's one (loaded on
/// its first request); a provider that cannot be set up fails each request with its reason.
pub fn model_client(config: &Config, env: &Env) -> Arc<dyn ModelClient> {
    client_of(provider(config, env))
}

/// The client for a resolved provider.
fn client_of(provider: Result<Provider, String>) -> Arc<dyn ModelClient> {
    match provider {
        Ok(Provider::Http(settings)) => cairn_llm::client(settings)
            .unwrap_or_else(|e| Arc::new(UnavailableModel(e)) as Arc<dyn ModelClient>),
        Ok(Provider::Local { settings, default }) => {
            if default {
                crate::local::notice_default(&settings);
            }
            crate::local::model(&settings)
        }
        Err(message) => Arc::new(UnavailableModel(ModelError::NotConfigured {
            provider: cairn_local::PROVIDER.into(),
            message,
        })),
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
        // The local provider has no HTTP settings; asked for them, describe OpenAI's defaults.
        ProviderKind::Openai | ProviderKind::Local => (
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
    if settings.api_key.is_none() {
        // Not in the environment: the vault secret, for the base URL's host only.
        let secret = p.api_key_secret.clone().unwrap_or_else(|| {
            match kind {
                ProviderKind::Openai | ProviderKind::Local => "openai",
                ProviderKind::Anthropic => "anthropic",
            }
            .into()
        });
        settings.api_key =
            crate::secrets::provider_key(env, &secret, &settings.base_url).map(ApiKey::new);
        let host = crate::secrets::url_host(&settings.base_url).unwrap_or_default();
        settings.api_key_setting = if settings.api_key.is_some() {
            format!("vault secret `{secret}`")
        } else {
            format!(
                "{} or the vault secret `{secret}` (`cairn vault set {secret} --host {host}`)",
                settings.api_key_setting
            )
        };
    }
    settings.max_retries = p.max_retries;
    settings.connect_timeout = Duration::from_secs(p.connect_timeout_secs);
    settings.idle_timeout = Duration::from_secs(p.idle_timeout_secs);
    settings.max_tokens = p.max_tokens;
    settings.retry_base_delay = Duration::from_millis(p.retry_base_delay_ms);
    if let Some(images) = p.images {
        settings.images = images;
    }
    settings.context_window = p.context.map(|c| c as u64);
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

/// The agent for a configuration, over these tools.
pub fn agent(config: &Config, env: &Env, mcp: &McpHandle) -> Agent {
    let tools = tool_host(&mcp.hub);
    // A provider that cannot be set up fails each run with its reason; tools, sessions and the
    // catalog keep working.
    // Resolved once: with nothing configured it looks into the vault.
    let provider = provider(config, env);
    let local = matches!(provider, Ok(Provider::Local { .. }));
    let model = client_of(provider);
    // Tools that ask the model (summarise, translate, ...) ask this one.
    mcp.model.set(model.clone());
    Agent {
        model,
        tools,
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
        path_approvals: Some(Arc::new(cairn_tools::WorkspacePathApprovals(
            mcp.path_approvals.clone(),
        ))),
        selection: crate::selection::agent_selection(config).map(|mut s| {
            // On the CPU a filter call costs as much as a step of the turn (thousands of prompt
            // tokens), so the local model gets stage 1 alone: the top `max_tools` tools.
            if local {
                s.config.filter = false;
            }
            s
        }),
        redactor: Some(crate::redaction::agent_redactor(env)),
        hooks: crate::hooks::for_agent(config, env, &mcp.roots),
        rules: crate::rules::for_agent(config, &mcp.roots),
        sub_agents: config.agent.sub_agents,
    }
}

/// Every tool the agent sees: the hub's catalog and the resource reader.
pub fn tool_host(hub: &Hub) -> Arc<dyn ToolHost> {
    Arc::new(Chain(vec![
        Arc::new(hub.clone()),
        Arc::new(ResourceTool { hub: hub.clone() }),
    ]))
}

/// The hub of a terminal command or an ACP session: configured servers and the built-in tools
/// of `root` (reading and editing through `overlay` when one is given), waited for until they
/// came up (at most the handshake timeout).
pub async fn terminal_hub(
    config: &Config,
    layers: &Layers,
    env: &Env,
    root: &Path,
    overlay: Option<Arc<dyn DocumentOverlay>>,
) -> Result<McpHandle, String> {
    let plan = runnable_servers(config, layers, env, Some(root));
    let mut handle = start_hub(None, plan, env, config, &[root.to_path_buf()], overlay)?;
    // A terminal command sees the `[[api.openapi]]` tools: wait for their specs to load.
    let loading = OPENAPI_LOADING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if let Some(task) = loading
        && let Ok(problems) = task.await
    {
        // A spec that did not load is a problem the terminal reports, like a server that
        // did not start; the other specs' operations are there.
        handle.problems.extend(problems.into_iter().map(|p| {
            (
                "cairn-openapi".to_string(),
                format!("{p} (its operations are left out)"),
            )
        }));
    }
    handle
        .hub
        .settled(Duration::from_secs(config.mcp.handshake_timeout_secs))
        .await;
    handle.reviewer.check_all();
    Ok(handle)
}

/// Where transcripts go: `sessions.dir`, else `$XDG_DATA_HOME/cairn/sessions`, else
/// `~/.local/share/cairn/sessions`.
pub fn sessions_dir(config: &Config, env: &Env) -> PathBuf {
    if let Some(dir) = &config.sessions.dir {
        return dir.clone();
    }
    data_dir(env).join("sessions")
}

/// The LSP front's factory. It keeps one hub for the life of the server and updates it when the
/// configuration or the workspace folders change.
pub struct Factory {
    pub env: Env,
    pub mcp: std::sync::Mutex<Option<McpHandle>>,
}

impl cairn_lsp::AgentFactory for Factory {
    fn redactor(&self) -> Option<Arc<dyn cairn_agent::redact::Redact>> {
        Some(crate::redaction::agent_redactor(&self.env))
    }

    fn watch_selection(
        &self,
        listener: Arc<dyn Fn(cairn_agent::select::RankerStatus) + Send + Sync>,
    ) {
        crate::selection::on_status(Arc::new(move |status| {
            if let Some(status) = crate::selection::ranker_status(status) {
                listener(status);
            }
        }));
    }

    fn watch_model(
        &self,
        listener: Arc<dyn Fn(&cairn_agent::model::ProviderStatus) + Send + Sync>,
    ) {
        crate::local::on_status(listener);
    }

    fn build(
        &self,
        config: &Config,
        layers: &Layers,
        roots: &[PathBuf],
        overlay: Arc<dyn DocumentOverlay>,
    ) -> Result<Agent, String> {
        let plan = runnable_servers(
            config,
            layers,
            &self.env,
            roots.first().map(PathBuf::as_path),
        );
        let mut current = self
            .mcp
            .lock()
            .map_err(|_| "internal error: MCP lock poisoned".to_string())?;
        let handle = start_hub(
            current.as_ref(),
            plan,
            &self.env,
            config,
            roots,
            Some(overlay),
        )?;
        *current = Some(handle.clone());
        Ok(agent(config, &self.env, &handle))
    }

    fn sessions_dir(&self, config: &Config) -> PathBuf {
        sessions_dir(config, &self.env)
    }

    fn mcp(&self) -> Option<McpHandle> {
        self.mcp.lock().ok().and_then(|m| m.clone())
    }

    fn trust_workspace(
        &self,
        _config: &Config,
        layers: &Layers,
        root: &Path,
    ) -> Result<Vec<String>, String> {
        trust_workspace(&self.env, layers, root)
    }
}

/// Trusts the MCP servers the workspace at `root` declares, as they are now.
pub fn trust_workspace(env: &Env, layers: &Layers, root: &Path) -> Result<Vec<String>, String> {
    let from_workspace = trust::workspace_servers(layers).map_err(|e| e.to_string())?;
    let path = data_dir(env).join("trust.json");
    // A damaged store is replaced: trusting again is what the user asked for.
    let mut store = trust::TrustStore::load(&path)
        .or_else(|_| {
            let _ = std::fs::remove_file(&path);
            trust::TrustStore::load(&path)
        })
        .map_err(|e| e.to_string())?;
    store
        .trust(root, &from_workspace)
        .map_err(|e| e.to_string())?;
    let mut trusted: Vec<String> = from_workspace.into_keys().collect();
    // The workspace's hooks are trusted with its servers: the same question, the same answer.
    let hooks = crate::hooks::workspace_hooks(layers).map_err(|e| e.to_string())?;
    if !hooks.is_empty() {
        store.trust_hooks(root, &hooks).map_err(|e| e.to_string())?;
        trusted.push(format!("{} hooks", hooks.len()));
    }
    Ok(trusted)
}

/// Where cairn keeps its own state: `$XDG_DATA_HOME/cairn`, else `~/.local/share/cairn`.
pub fn data_dir(env: &Env) -> PathBuf {
    env.get("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| {
            env.get("HOME")
                .map(|h| PathBuf::from(h).join(".local").join("share"))
        })
        .unwrap_or_else(std::env::temp_dir)
        .join("cairn")
}

/// The MCP servers that may start: workspace-declared ones only once trusted, each with its
/// `${...}` references expanded now (not at import, so secrets never land in a config file).
pub fn runnable_servers(
    config: &Config,
    layers: &Layers,
    env: &Env,
    root: Option<&Path>,
) -> McpPlan {
    let from_workspace = trust::workspace_servers(layers).unwrap_or_default();
    let store = match trust::TrustStore::load(&data_dir(env).join("trust.json")) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!("{e}");
            None
        }
    };
    let (runnable, mut waiting_for_trust) =
        trust::gate(&config.mcp.servers, &from_workspace, store.as_ref(), root);
    // The workspace's hooks wait with its servers, and are trusted with them.
    if let Some(root) = root
        && crate::hooks::hooks_waiting(config, store.as_ref(), root)
    {
        waiting_for_trust.push(crate::hooks::WAITING_NAME.to_string());
    }
    let lookup = |k: &str| env.get(k).map(str::to_string);
    let mut servers = std::collections::BTreeMap::new();
    let mut problems = Vec::new();
    // `secret:NAME` handles are resolved here, as the server starts, for the host they go to.
    let mut vault = crate::secrets::LazyVault::new(env);
    for (name, entry) in runnable {
        let resolved = cairn_config::expand_server(&entry, &lookup, root)
            .map_err(|e| e.to_string())
            .and_then(|expanded| {
                if expanded.disabled {
                    Ok(expanded)
                } else {
                    crate::secrets::resolve_server(&expanded, &mut vault)
                }
            });
        match resolved {
            Ok(resolved) => {
                servers.insert(name, resolved);
            }
            Err(e) => problems.push((name, e)),
        }
    }
    McpPlan {
        config: McpConfig {
            servers,
            ..config.mcp.clone()
        },
        waiting_for_trust,
        problems,
    }
}

/// What the hub will run, and what it will not and why.
pub struct McpPlan {
    pub config: McpConfig,
    pub waiting_for_trust: Vec<String>,
    pub problems: Vec<(String, String)>,
}

/// Starts (or updates) the hub: external servers from the plan, the built-in tools in-process.
pub fn start_hub(
    existing: Option<&McpHandle>,
    plan: McpPlan,
    env: &Env,
    config: &Config,
    roots: &[PathBuf],
    overlay: Option<Arc<dyn DocumentOverlay>>,
) -> Result<McpHandle, String> {
    let (access, sandbox, web) = (&config.access, &config.sandbox, &config.web);
    let (hub, reviewer) = match existing {
        Some(h) => {
            h.hub.set_servers(plan.config);
            (h.hub.clone(), h.reviewer.clone())
        }
        None => {
            // Built-in (in-process) tools take their plain names first; external ones are always
            // `server__tool`, so they cannot shadow a built-in.
            let options = HubOptions {
                oauth: crate::oauth::options(env),
                ..HubOptions::default()
            };
            let hub = Hub::new(plan.config, options);
            let reviewer =
                Reviewer::start(hub.clone(), PinStore::open(data_dir(env).join("pins.json")));
            (hub, reviewer)
        }
    };
    let path_approvals = existing.map_or_else(ExactApprovals::new, |h| h.path_approvals.clone());
    let model = existing.map_or_else(SharedModel::default, |h| h.model.clone());
    let user = identity(access);
    let rules: Vec<(PathBuf, AccessRules, String)> = roots
        .iter()
        .map(|root| {
            let (rules, text) = access_rules(&user, access, root);
            (root.clone(), rules, text)
        })
        .collect();
    // What the built-in tools are built from: they restart only when it changes.
    let access_key = format!(
        "{user}\n{}\n{}\n{}\n{}",
        serde_json::to_string(access).unwrap_or_default(),
        serde_json::to_string(sandbox).unwrap_or_default(),
        serde_json::to_string(web).unwrap_or_default(),
        rules
            .iter()
            .map(|(_, _, t)| t.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    // `[api]`, `[db]` and `[ml]` too: specs and databases become tools, and the hub tools
    // send where `[ml]` says.
    let access_key = format!(
        "{access_key}\n{}\n{}\n{}",
        serde_json::to_string(&config.api).unwrap_or_default(),
        serde_json::to_string(&config.db).unwrap_or_default(),
        serde_json::to_string(&config.ml).unwrap_or_default()
    );
    let unchanged = existing.is_some_and(|h| h.roots == roots && h.access_key == access_key);
    // The web tools need no workspace (only `web_download` does, and it is added with the
    // workspace below); a guard that cannot be built (an unreadable blocklist) leaves them out
    // rather than running unguarded.
    let web_tools = match (!unchanged && web.enabled).then(|| web_guard(web)) {
        Some(Ok(guard)) => Some(
            cairn_webtools::web::WebTools::new(guard, user.clone())
                .with_search(web_search_settings(&web.search))
                .with_redactor(crate::redaction::agent_redactor(env)),
        ),
        Some(Err(e)) => {
            tracing::warn!("the web tools are off: {e}");
            None
        }
        None => None,
    };
    if let Some(tools) = &web_tools
        && roots.is_empty()
    {
        hub.add_builtin("cairn-web", tools.clone().tools());
    }
    // The API tools send through the same guard, so they are off with the web tools.
    let api = web_tools
        .as_ref()
        .filter(|_| config.api.enabled)
        .map(|w| cairn_webtools::api::Api::new(w.guard.clone(), user.clone()));
    if let Some(api) = &api
        && roots.is_empty()
    {
        add_api(&hub, api.clone(), &config.api);
    }
    if !unchanged && roots.is_empty() {
        hub.add_builtin(
            "cairn-code",
            cairn_sandbox::tools::code_tools(sandbox_service(sandbox), None),
        );
        hub.add_builtin("cairn-db", db_tools(config, env, None));
        hub.add_builtin(
            "cairn-data",
            cairn_data::data_tools(cairn_data::Data::new(None)),
        );
        add_devops_and_system(&hub, env, &user, config, &path_approvals, None);
        add_cloud_and_comms(&hub, env, &user, config, &path_approvals, None);
        add_ml(&hub, env, config, &model, None);
    }
    // The scope the built-in tools write through (kept when they are not rebuilt), for rewinds.
    let mut built = existing
        .filter(|_| unchanged)
        .and_then(|h| h.workspace.clone());
    if !roots.is_empty() && !unchanged {
        let mut workspace = Workspace::new(roots.to_vec())
            .map_err(|e| e.to_string())?
            .with_checkpoints(Arc::new(cairn_workspace::checkpoint::Checkpoints::new(
                sessions_dir(config, env).join("checkpoints"),
            )));
        if let Some(overlay) = overlay {
            workspace = workspace.with_overlay(overlay);
        }
        let by_root: Vec<(PathBuf, AccessRules)> = rules
            .into_iter()
            .filter_map(|(root, rules, _)| Some((std::fs::canonicalize(root).ok()?, rules)))
            .collect();
        workspace = workspace.with_access(
            |root| {
                by_root.iter().find(|(r, _)| r == root).map_or_else(
                    || AccessRules::broken(&user, "the root moved while cairn started".into()),
                    |(_, rules)| rules.clone(),
                )
            },
            path_approvals.clone(),
        );
        let workspace = Arc::new(workspace);
        built = Some(workspace.clone());
        if let Some(tools) = web_tools {
            hub.add_builtin("cairn-web", tools.with_workspace(workspace.clone()).tools());
        }
        if let Some(api) = api {
            add_api(&hub, api.with_workspace(workspace.clone()), &config.api);
        }
        // One in-process server per category, so each category is its own MCP server.
        hub.add_builtin("cairn-files", cairn_tools::file_tools(workspace.clone()));
        hub.add_builtin("cairn-git", cairn_tools::git_tools(workspace.clone()));
        hub.add_builtin("cairn-db", db_tools(config, env, Some(workspace.clone())));
        hub.add_builtin(
            "cairn-data",
            cairn_data::data_tools(cairn_data::Data::new(Some(workspace.clone()))),
        );
        add_devops_and_system(
            &hub,
            env,
            &user,
            config,
            &path_approvals,
            Some(workspace.clone()),
        );
        add_cloud_and_comms(
            &hub,
            env,
            &user,
            config,
            &path_approvals,
            Some(workspace.clone()),
        );
        add_ml(&hub, env, config, &model, Some(workspace.clone()));
        hub.add_builtin(
            "cairn-code",
            cairn_sandbox::tools::code_tools(sandbox_service(sandbox), Some(workspace)),
        );
    }
    Ok(McpHandle {
        hub,
        reviewer,
        workspace: built,
        waiting_for_trust: plan.waiting_for_trust,
        problems: plan.problems,
        roots: roots.to_vec(),
        access_key,
        path_approvals,
        model,
    })
}

/// The DevOps and system tools, each its own in-process server. Their network parts (a TLS
/// certificate of a host, a health check, DNS) go through the process's web guard, and are
/// refused when the web tools are off or the guard cannot be built.
fn add_devops_and_system(
    hub: &Hub,
    env: &Env,
    user: &str,
    config: &Config,
    approvals: &Arc<ExactApprovals>,
    workspace: Option<Arc<Workspace>>,
) {
    let (sandbox, web, system) = (&config.sandbox, &config.web, &config.system);
    let guard = web.enabled.then(|| web_guard(web).ok()).flatten();
    hub.add_builtin(
        "cairn-devops",
        cairn_devops::devops_tools(
            cairn_devops::DevOps::new(
                sandbox_service(sandbox),
                guard.clone(),
                workspace.clone(),
                approvals.clone(),
            )
            .with_user(user),
        ),
    );
    hub.add_builtin(
        "cairn-system",
        cairn_system::system_tools(
            cairn_system::System::new(workspace, guard)
                .with_redactor(crate::redaction::agent_redactor(env))
                .with_settings(system.clone()),
        ),
    );
}

/// The cloud tools over the user's `[cloud.NAME]` accounts and the communication tools over
/// `[comms]`, each its own in-process server. Every request goes through the process's web
/// guard, which signs it with the account's vault secret; both sets refuse every call when the
/// web tools are off. An account that does not check out is logged and left out.
fn add_cloud_and_comms(
    hub: &Hub,
    env: &Env,
    user: &str,
    config: &Config,
    approvals: &Arc<ExactApprovals>,
    workspace: Option<Arc<Workspace>>,
) {
    let web = &config.web;
    let guard = web.enabled.then(|| web_guard(web).ok()).flatten();
    let (cloud, problems) = cairn_cloud::Cloud::new(
        &config.cloud,
        guard.clone(),
        workspace.clone(),
        approvals.clone(),
    );
    for (name, problem) in problems {
        tracing::warn!("cloud account `{name}` left out: {problem}");
    }
    let cloud = cloud
        .with_user(user)
        .with_secret_store(Arc::new(crate::secrets::VaultStore::new(env.clone())));
    hub.add_builtin("cairn-cloud", cairn_cloud::cloud_tools(cloud));
    let comms = cairn_comms::Comms::new(
        config.comms.clone(),
        guard,
        Arc::new(crate::secrets::VaultCredentials::new(env.clone())),
        approvals.clone(),
    )
    .with_workspace(workspace)
    .with_user(user);
    hub.add_builtin("cairn-comms", cairn_comms::comms_tools(comms));
}

/// The AI/ML tools, over the workspace, the embedding model tool selection uses, the agent's
/// model for the tools that ask it (summarise, translate, ...), the sandbox OCR runs in, and
/// the web guard the model-hub tools send through (off with the web tools).
fn add_ml(
    hub: &Hub,
    env: &Env,
    config: &Config,
    model: &SharedModel,
    workspace: Option<Arc<Workspace>>,
) {
    let spec = cairn_select::embed::ModelSpec {
        repo: config.selection.model.clone(),
        revision: config.selection.revision.clone(),
    };
    let web = &config.web;
    let guard = web.enabled.then(|| web_guard(web).ok()).flatten();
    let settings = cairn_ml::HubSettings {
        hub_url: config.ml.hub_url.clone(),
        datasets_url: config.ml.datasets_url.clone(),
        secret: config.ml.hub_secret.clone(),
    };
    let mut ml = cairn_ml::Ml::new(workspace, spec)
        .with_model(model.clone())
        .with_redactor(crate::redaction::agent_redactor(env))
        .with_sandbox(sandbox_service(&config.sandbox))
        .with_guard(guard)
        .with_hub(settings);
    if let Some(dir) = semantic_index_dir(env) {
        ml = ml.with_index_dir(dir);
    }
    hub.add_builtin("cairn-ml", cairn_ml::ml_tools(ml));
}

/// Where `semantic_search` keeps its indexes: `$XDG_CACHE_HOME/cairn/index`, else
/// `~/.cache/cairn/index`; never inside a workspace. `None` (no HOME) keeps them in memory.
fn semantic_index_dir(env: &Env) -> Option<PathBuf> {
    cairn_select::cache::cache_root(|name| env.get(name).map(PathBuf::from))
        .map(|root| root.join("index"))
}

/// `[web.search]` as `web_search` takes it; `None` when no provider is set.
fn web_search_settings(
    config: &cairn_config::WebSearchConfig,
) -> Option<cairn_webtools::web::SearchSettings> {
    use cairn_config::SearchProvider as Configured;
    use cairn_webtools::web::SearchProvider;
    let provider = match config.provider? {
        Configured::Searxng => SearchProvider::Searxng,
        Configured::Brave => SearchProvider::Brave,
        Configured::Tavily => SearchProvider::Tavily,
    };
    Some(cairn_webtools::web::SearchSettings {
        provider,
        url: config.url.clone(),
        secret: config.secret.clone(),
    })
}

/// The process's web guard and the configuration it was built from; see [`web_guard`].
type WebGuardSlot = Option<(cairn_config::WebConfig, Arc<cairn_web::WebGuard>)>;
static WEB_GUARD: std::sync::Mutex<WebGuardSlot> = std::sync::Mutex::new(None);

/// The process's web guard for this configuration: one per process (its rate limits live in
/// it), kept while `[web]` stays the same, rebuilt when it changes.
pub fn web_guard(config: &cairn_config::WebConfig) -> Result<Arc<cairn_web::WebGuard>, String> {
    let mut current = WEB_GUARD
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((c, guard)) = current.as_ref()
        && c == config
    {
        return Ok(guard.clone());
    }
    let blocklist = cairn_web::Blocklist::load(&config.blocklists).map_err(|e| e.to_string())?;
    let guard_config = cairn_web::GuardConfig {
        allow_loopback: config.allow_loopback,
        max_bytes: config.max_bytes,
        per_user_per_minute: config.per_user_per_minute,
        per_host_per_minute: config.per_host_per_minute,
        deny_hosts: config.deny_hosts.clone(),
        allow_hosts: config.allow_hosts.clone(),
        blocklist,
        ..cairn_web::GuardConfig::default()
    };
    let credentials = Arc::new(crate::secrets::VaultCredentials::new(Env::from_process()));
    let guard = Arc::new(
        cairn_web::WebGuard::new(guard_config)
            .map_err(|e| e.to_string())?
            .with_credentials(credentials),
    );
    *current = Some((config.clone(), guard.clone()));
    Ok(guard)
}

/// The process's sandbox service; see [`sandbox_service`].
static SANDBOX: std::sync::Mutex<Option<Arc<cairn_sandbox::Sandbox>>> = std::sync::Mutex::new(None);

/// The process's sandbox service for this configuration: kept while the configuration stays
/// the same (its warm containers and Python sessions with it), replaced when it changes.
pub fn sandbox_service(config: &SandboxConfig) -> Arc<cairn_sandbox::Sandbox> {
    let mut current = SANDBOX
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(s) = current.as_ref()
        && s.config() == config
    {
        return s.clone();
    }
    let service = cairn_sandbox::Sandbox::new(config.clone());
    if let Some(old) = current.replace(service.clone())
        && let Ok(handle) = tokio::runtime::Handle::try_current()
    {
        handle.spawn(async move { old.shutdown().await });
    }
    service
}

/// Removes the containers the sandbox service keeps (warm ones, Python sessions); run at exit.
pub async fn shutdown_sandbox() {
    let current = SANDBOX
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if let Some(service) = current {
        service.shutdown().await;
    }
}

/// Who the user is to access policies: `access.user`, else git's `user.email` (the global git
/// configuration), else `$USER` at `localhost`, so an unnamed user still gets the default grants.
pub fn identity(access: &AccessConfig) -> String {
    if let Some(user) = access.user.as_deref().filter(|u| !u.trim().is_empty()) {
        return user.trim().to_owned();
    }
    let from_git = git2::Config::open_default()
        .and_then(|c| c.get_string("user.email"))
        .ok()
        .filter(|e| !e.trim().is_empty());
    from_git.map_or_else(
        || {
            let name = std::env::var("USER").unwrap_or_else(|_| "unknown".to_owned());
            format!("{name}@localhost")
        },
        |e| e.trim().to_owned(),
    )
}

/// The access rules of `user` in the project at `root`: the team's `.cairn/policy.toml` and the
/// user's own `[access]` grants, plus the deny list; also the policy text read, to notice a
/// change. A policy that cannot be used refuses everything (fail closed) and says why.
pub fn access_rules(user: &str, access: &AccessConfig, root: &Path) -> (AccessRules, String) {
    let path = root.join(".cairn").join("policy.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            let why = format!("cannot read {}: {e}", path.display());
            return (AccessRules::broken(user, why.clone()), why);
        }
    };
    let team = if text.is_empty() {
        None
    } else {
        match AccessPolicy::from_toml_str(&text, &path.display().to_string()) {
            Ok(p) => Some(p),
            Err(e) => return (AccessRules::broken(user, e.to_string()), text),
        }
    };
    let own = access.own_policy();
    if let Some(own) = &own
        && let Err(e) = own.validate("your config's [access]")
    {
        return (AccessRules::broken(user, e.to_string()), text);
    }
    (AccessRules::new(user, team.as_ref(), own.as_ref()), text)
}

/// The latest load of the `[[api.openapi]]` specs, for terminal commands to wait on.
static OPENAPI_LOADING: std::sync::Mutex<Option<tokio::task::JoinHandle<Vec<String>>>> =
    std::sync::Mutex::new(None);

/// Adds the API tools (`cairn-api`) and, once their specs have loaded in the background, the
/// The database tools over `[db.NAME]`; passwords are read from the vault, for the database's
/// host, when a connection opens. A connection that does not check out is logged and left out.
fn db_tools(
    config: &Config,
    env: &Env,
    workspace: Option<Arc<Workspace>>,
) -> cairn_toolkit::ToolSet<cairn_db::Db> {
    let specs: Vec<cairn_db::DbSpec> = config
        .db
        .iter()
        .map(|(name, db)| cairn_db::DbSpec {
            name: name.clone(),
            url: db.url.clone(),
            password: db.password.clone(),
            timeout: Duration::from_secs(db.timeout_secs.max(1)),
        })
        .collect();
    // The web guard's vault source: opened once and read again only when the store changes,
    // so a connection does not pay for opening the vault (a passphrase's Argon2id) each time.
    let vault = crate::secrets::VaultCredentials::new(env.clone());
    let passwords: cairn_db::PasswordSource = Arc::new(move |name, host| {
        cairn_web::Credentials::for_host(&vault, name, host)
            .map(|secret| secret.expose().to_owned())
            .map_err(|refusal| format!("the database password: {}", refusal.reason))
    });
    let (db, problems) = cairn_db::Db::new(&specs, passwords, workspace);
    let db = db.with_redactor(crate::redaction::agent_redactor(env));
    for (name, problem) in problems {
        tracing::warn!("database `{name}` left out: {problem}");
    }
    cairn_db::db_tools(db)
}

/// `[[api.openapi]]` operations as their own server (`cairn-openapi`), so a slow spec URL
/// delays only those. A spec that fails is logged and left out, never fatal.
fn add_api(hub: &Hub, api: cairn_webtools::api::Api, config: &cairn_config::ApiConfig) {
    hub.add_builtin("cairn-api", cairn_webtools::api::api_tools(api.clone()));
    let services = config
        .services
        .iter()
        .map(|(name, service)| {
            let settings = cairn_webtools::api::services::ServiceSettings {
                base_url: service.base_url.clone(),
                auth: service.auth.as_ref().map(api_auth),
            };
            (name.clone(), settings)
        })
        .collect();
    hub.add_builtin(
        "cairn-services",
        cairn_webtools::api::services::service_tools(api.services(services)),
    );
    if config.openapi.is_empty() {
        return;
    }
    let sources: Vec<cairn_webtools::api::OpenApiSource> = config
        .openapi
        .iter()
        .map(|entry| cairn_webtools::api::OpenApiSource {
            name: entry.name.clone(),
            spec: entry.spec.clone(),
            base_url: entry.base_url.clone(),
            auth: entry.auth.as_ref().map(api_auth),
        })
        .collect();
    let hub = hub.clone();
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            let task = runtime.spawn(async move {
                let operations =
                    cairn_webtools::api::ConfiguredOperations::load(api, &sources).await;
                let problems = operations.problems().to_vec();
                hub.add_builtin("cairn-openapi", operations);
                problems
            });
            *OPENAPI_LOADING
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(task);
        }
        Err(_) => {
            tracing::warn!("the [[api.openapi]] tools are off: no runtime to load their specs")
        }
    }
}

/// A configured API credential as the API tools take it.
fn api_auth(a: &cairn_config::ApiAuthConfig) -> cairn_webtools::api::ApiAuth {
    cairn_webtools::api::ApiAuth {
        secret: a.secret.clone(),
        scheme: match a.scheme {
            cairn_config::ApiAuthScheme::Bearer => cairn_webtools::api::AuthScheme::Bearer,
            cairn_config::ApiAuthScheme::Basic => cairn_webtools::api::AuthScheme::Basic,
            cairn_config::ApiAuthScheme::Header => cairn_webtools::api::AuthScheme::Header,
            cairn_config::ApiAuthScheme::Query => cairn_webtools::api::AuthScheme::Query,
        },
        name: a.name.clone(),
    }
}

/// What a terminal command needs: the configuration of `root`, and the hub with its servers up
/// (`report`: tell the user about servers that did not start).
pub async fn terminal_setup(
    env: &Env,
    root: &Path,
    report: bool,
) -> anyhow::Result<(Config, McpHandle)> {
    let layers = load_layers(env, Some(root))?;
    let config = layers.resolve()?;
    let mcp = terminal_hub(&config, &layers, env, root, None)
        .await
        .map_err(anyhow::Error::msg)?;
    if report {
        report_mcp_problems(&mcp);
    }
    Ok((config, mcp))
}

/// Tells the terminal user about servers that did not start, and why.
#[allow(clippy::print_stderr)]
pub fn report_mcp_problems(mcp: &McpHandle) {
    for name in &mcp.waiting_for_trust {
        eprintln!(
            "cairn: MCP server `{name}` is declared by this workspace and waits for your trust: `cairn mcp trust -w DIR`"
        );
    }
    for (name, problem) in &mcp.problems {
        eprintln!("cairn: MCP server `{name}` not started: {problem}");
    }
    for review in mcp.reviewer.pending() {
        eprintln!(
            "cairn: MCP tool `{}` is disabled until you review it: `cairn mcp review -w DIR`",
            review.public_name
        );
    }
}
