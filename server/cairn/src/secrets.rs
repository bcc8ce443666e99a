//! Vault secrets where cairn sends credentials itself: `secret:NAME` handles in MCP server
//! `env` and `headers`, provider keys, and the redactor that log lines pass through.
//!
//! Rules:
//! - a handle is the whole value, `secret:NAME`; it is resolved when the server is started, and
//!   the value only ever goes into that server's start configuration (never a message, a log
//!   line or `cairn mcp status`);
//! - a header value is handed out only for the host of the server's `url`
//!   ([`cairn_vault::Vault::secret_for_host`]);
//! - a secret for a local process (a stdio server's `env`) is bound to `localhost`;
//! - a provider key comes from the vault only when its environment variable is not set, and
//!   only for the host of the provider's base URL.

use std::io::{self, Write};
use std::sync::Arc;

use cairn_config::McpServerConfig;
use cairn_vault::{KeySource, Redactor, Vault, VaultError};
use tracing_subscriber::fmt::MakeWriter;

use crate::compose::Env;

/// What starts a handle.
pub const HANDLE_PREFIX: &str = "secret:";

/// The host a secret for a local process is bound to.
pub const LOCAL_HOST: &str = "localhost";

/// The secret name of a handle (`secret:NAME`); `None` for an ordinary value.
pub fn handle(value: &str) -> Option<&str> {
    value.strip_prefix(HANDLE_PREFIX)
}

/// The default vault, opened on first need (a configuration without handles never opens it).
pub struct LazyVault<'a> {
    env: &'a Env,
    opened: Option<Result<Option<Vault>, String>>,
}

impl<'a> LazyVault<'a> {
    pub fn new(env: &'a Env) -> Self {
        Self { env, opened: None }
    }

    /// The vault; `None` when there is no store.
    fn get(&mut self) -> Result<Option<&Vault>, String> {
        let env = self.env;
        let opened = self.opened.get_or_insert_with(|| open_default(env));
        match opened {
            Ok(v) => Ok(v.as_ref()),
            Err(e) => Err(e.clone()),
        }
    }

    /// The value of secret `name` for `host`, or a problem naming `what` refers to it and how
    /// to fix it (never the value).
    pub fn resolve(&mut self, what: &str, name: &str, host: &str) -> Result<String, String> {
        let add = format!("add it with `cairn vault set {name} --host {host}`");
        if let Err(e) = cairn_vault::validate_name(name) {
            return Err(format!("{what}: {e}"));
        }
        let Some(vault) = self.get().map_err(|e| format!("{what}: {e}"))? else {
            return Err(format!(
                "{what} refers to secret `{name}`, but there is no vault; {add}"
            ));
        };
        match vault.secret_for_host(name, host) {
            Ok(secret) => Ok(secret.expose().to_string()),
            Err(VaultError::NotFound { .. }) => Err(format!(
                "{what} refers to secret `{name}`, which is not in the vault; {add}"
            )),
            Err(e) => Err(format!(
                "{what}: {e}; if it should go there, {}",
                add.replace("add it", "bind it")
            )),
        }
    }
}

/// The default vault when its store exists.
pub fn open_default(env: &Env) -> Result<Option<Vault>, String> {
    let get = |k: &str| env.get(k).map(str::to_string);
    match cairn_vault::default_store_path(get) {
        Some(path) if path.exists() => {
            let key = KeySource::from_env(&path, get);
            Vault::open(&path, key)
                .map(Some)
                .map_err(|e| format!("the vault could not be opened: {e}"))
        }
        _ => Ok(None),
    }
}

/// The host a URL connects to, as the vault binds hosts (lowercase, no port).
pub fn url_host(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    match parsed.host()? {
        url::Host::Domain(d) => Some(d.to_ascii_lowercase()),
        url::Host::Ipv4(ip) => Some(ip.to_string()),
        url::Host::Ipv6(ip) => Some(ip.to_string()),
    }
}

/// `entry` with every handle in `headers` (for the host of `url`) and `env` (for `localhost`)
/// replaced by its value; a problem when one cannot be resolved, so the server is not started.
pub fn resolve_server(
    entry: &McpServerConfig,
    vault: &mut LazyVault<'_>,
) -> Result<McpServerConfig, String> {
    let mut out = entry.clone();
    for (key, value) in out.headers.iter_mut() {
        if let Some(name) = handle(value) {
            let what = format!("header `{key}`");
            let host =
                entry.url.as_deref().and_then(url_host).ok_or_else(|| {
                    format!("{what} refers to a secret, but the server has no URL")
                })?;
            *value = vault.resolve(&what, name, &host)?;
        }
    }
    for (key, value) in out.env.iter_mut() {
        if let Some(name) = handle(value) {
            *value = vault.resolve(&format!("env `{key}`"), name, LOCAL_HOST)?;
        }
    }
    // The OAuth client secret and signing key go to the server's authorization server, which
    // the user cannot name in advance; they are bound to the MCP server's host, the one the
    // user chose.
    if let Some(oauth) = out.oauth.as_mut() {
        for (key, value) in [
            ("oauth.client_secret", &mut oauth.client_secret),
            ("oauth.private_key", &mut oauth.private_key),
        ] {
            if let Some(name) = value.as_deref().and_then(handle) {
                let host = entry.url.as_deref().and_then(url_host).ok_or_else(|| {
                    format!("`{key}` refers to a secret, but the server has no URL")
                })?;
                *value = Some(vault.resolve(&format!("`{key}`"), name, &host)?);
            }
        }
        // The ID token goes to the identity provider, so it is bound to that host.
        if let Some(name) = oauth.id_token.as_deref().and_then(handle) {
            let host = oauth
                .idp_token_endpoint
                .as_deref()
                .and_then(url_host)
                .ok_or_else(|| {
                    "`oauth.id_token` refers to a secret, but `oauth.idp_token_endpoint` has no host"
                        .to_string()
                })?;
            let resolved = vault.resolve("`oauth.id_token`", name, &host)?;
            oauth.id_token = Some(resolved);
        }
    }
    Ok(out)
}

/// A provider key from the vault secret `name`, for the host of `base_url`; `None` (with a
/// warning saying why, when there is a vault) when it cannot be had.
pub fn provider_key(env: &Env, name: &str, base_url: &str) -> Option<String> {
    let host = url_host(base_url)?;
    let mut vault = LazyVault::new(env);
    match vault.get() {
        Ok(Some(_)) => {}
        Ok(None) => return None,
        Err(e) => {
            tracing::warn!("{e}");
            return None;
        }
    }
    match vault.resolve("the provider key", name, &host) {
        Ok(value) => Some(value),
        Err(problem) => {
            tracing::debug!("{problem}");
            None
        }
    }
}

/// When the default vault's store last changed (`None`: no store), so what was read from it can
/// be read again after `cairn vault set` in another terminal.
pub fn store_modified(env: &Env) -> Option<std::time::SystemTime> {
    let get = |k: &str| env.get(k).map(str::to_string);
    let path = cairn_vault::default_store_path(get)?;
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

/// The vault as the web guard's source of credentials: tools name a secret, the guard asks
/// here for its value for each host it sends to. The store is read again when its file changes,
/// so `cairn vault set` takes effect without a restart.
pub struct VaultCredentials {
    env: Env,
    cached: std::sync::Mutex<Option<(std::time::SystemTime, Vault)>>,
}

impl VaultCredentials {
    pub fn new(env: Env) -> Self {
        Self {
            env,
            cached: std::sync::Mutex::new(None),
        }
    }
}

impl cairn_web::Credentials for VaultCredentials {
    fn for_host(
        &self,
        name: &str,
        host: &str,
    ) -> Result<cairn_vault::Secret, cairn_web::CredentialRefusal> {
        let refuse = |reason: String| cairn_web::CredentialRefusal { reason };
        cairn_vault::validate_name(name).map_err(|e| refuse(e.to_string()))?;
        let mut cached = self
            .cached
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let modified = store_modified(&self.env);
        let fresh = matches!((&*cached, modified), (Some((at, _)), Some(m)) if *at == m);
        if !fresh {
            *cached = None;
            let vault = open_default(&self.env).map_err(refuse)?.ok_or_else(|| {
                refuse(format!(
                    "there is no vault; add the secret with `cairn vault set {name} --host {host}`"
                ))
            })?;
            *cached = modified.map(|m| (m, vault));
            if cached.is_none() {
                return Err(refuse("the vault's store could not be read".into()));
            }
        }
        let Some((_, vault)) = cached.as_ref() else {
            return Err(refuse("the vault's store could not be read".into()));
        };
        vault.secret_for_host(name, host).map_err(|e| match e {
            VaultError::NotFound { .. } => refuse(format!(
                "secret `{name}` is not in the vault; add it with `cairn vault set {name} --host {host}`"
            )),
            other => refuse(other.to_string()),
        })
    }
}

/// The vault as the place cloud tools store a secret a cloud API returned, when the user
/// approved it: the store is opened (made, the first time) for each write, as `cairn vault set`
/// does, and the web guard's source reads it again because its file changed.
pub struct VaultStore {
    env: Env,
}

impl VaultStore {
    pub fn new(env: Env) -> Self {
        Self { env }
    }
}

impl cairn_cloud::SecretStore for VaultStore {
    fn store(&self, name: &str, hosts: &[String], value: &str) -> Result<(), String> {
        cairn_vault::validate_name(name).map_err(|e| e.to_string())?;
        let hosts: Vec<String> = hosts.iter().map(|h| h.to_ascii_lowercase()).collect();
        for host in &hosts {
            cairn_vault::validate_host(host).map_err(|e| e.to_string())?;
        }
        let mut vault = crate::vault_cmd::open(&self.env).map_err(|e| e.to_string())?;
        vault
            .set(name, cairn_vault::Secret::new(value.to_owned()), hosts)
            .map_err(|e| e.to_string())?;
        if let Some(notice) = vault.take_notice() {
            tracing::info!("{notice}");
        }
        Ok(())
    }
}

/// The redactor for log lines: credential patterns, and the values of the default vault when
/// it can be opened.
pub fn log_redactor(env: &Env) -> Redactor {
    match open_default(env) {
        Ok(Some(vault)) => Redactor::from_vault(&vault),
        Ok(None) => Redactor::patterns_only(),
        Err(e) => {
            tracing::warn!("{e}; only credential patterns are redacted");
            Redactor::patterns_only()
        }
    }
}

/// A [`MakeWriter`] whose writers redact what they are given before it reaches `inner`: each
/// log event is gathered whole and redacted when its writer is dropped.
pub struct RedactingWriter<M> {
    inner: M,
    redactor: Arc<Redactor>,
}

impl<M> RedactingWriter<M> {
    pub fn new(inner: M, redactor: Redactor) -> Self {
        Self {
            inner,
            redactor: Arc::new(redactor),
        }
    }
}

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for RedactingWriter<M> {
    type Writer = RedactingLine<'a, M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingLine {
            inner: self.inner.make_writer(),
            redactor: &self.redactor,
            buf: Vec::new(),
        }
    }
}

/// One log event on its way out; written, redacted, when dropped.
pub struct RedactingLine<'a, W: Write> {
    inner: W,
    redactor: &'a Redactor,
    buf: Vec<u8>,
}

impl<W: Write> RedactingLine<'_, W> {
    fn emit(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&self.buf).into_owned();
        self.buf.clear();
        self.inner
            .write_all(self.redactor.redact(&text).as_bytes())?;
        self.inner.flush()
    }
}

impl<W: Write> Write for RedactingLine<'_, W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<W: Write> Drop for RedactingLine<'_, W> {
    fn drop(&mut self) {
        let _ = self.emit();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use super::*;

    fn env_without_vault() -> Env {
        let dir = std::env::temp_dir().join(format!("cairn-secrets-test-{}", std::process::id()));
        Env(HashMap::from([(
            "XDG_DATA_HOME".to_string(),
            dir.join("none").to_string_lossy().into_owned(),
        )]))
    }

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    fn http(url: &str, headers: &[(&str, &str)]) -> McpServerConfig {
        McpServerConfig {
            url: Some(url.into()),
            headers: map(headers),
            ..McpServerConfig::default()
        }
    }

    fn stdio(env: &[(&str, &str)], headers: &[(&str, &str)]) -> McpServerConfig {
        McpServerConfig {
            command: Some("server".into()),
            env: map(env),
            headers: map(headers),
            ..McpServerConfig::default()
        }
    }

    #[test]
    fn handles_are_whole_values() {
        assert_eq!(handle("secret:github"), Some("github"));
        assert_eq!(handle("secret:"), Some(""));
        assert_eq!(handle("Bearer secret:github"), None);
        assert_eq!(handle("github"), None);
        assert_eq!(handle("Secret:github"), None);
    }

    #[test]
    fn url_hosts() {
        assert_eq!(
            url_host("https://API.Example.com:8443/mcp").as_deref(),
            Some("api.example.com")
        );
        assert_eq!(
            url_host("http://127.0.0.1:9/x").as_deref(),
            Some("127.0.0.1")
        );
        assert_eq!(url_host("http://[::1]:9/").as_deref(), Some("::1"));
        assert_eq!(url_host("not a url"), None);
    }

    #[test]
    fn servers_without_handles_are_unchanged_and_need_no_vault() {
        let env = env_without_vault();
        let mut entry = http("https://mcp.example.com/", &[("Authorization", "Bearer x")]);
        entry.env = map(&[("A", "b")]);
        let mut vault = LazyVault::new(&env);
        let out = resolve_server(&entry, &mut vault);
        assert_eq!(out.as_ref().map(|o| &o.headers), Ok(&entry.headers));
        assert_eq!(out.as_ref().map(|o| &o.env), Ok(&entry.env));
        assert!(vault.opened.is_none(), "no handle, no vault");
    }

    fn problem(entry: &McpServerConfig, env: &Env) -> String {
        match resolve_server(entry, &mut LazyVault::new(env)) {
            Ok(_) => String::from("resolved"),
            Err(e) => e,
        }
    }

    #[test]
    fn a_handle_without_a_vault_is_a_problem_that_says_how_to_add_it() {
        let env = env_without_vault();
        let err = problem(
            &http(
                "https://mcp.example.com/",
                &[("Authorization", "secret:tok")],
            ),
            &env,
        );
        assert!(
            err.contains("cairn vault set tok --host mcp.example.com"),
            "{err}"
        );
        let err = problem(&stdio(&[("TOKEN", "secret:tok")], &[]), &env);
        assert!(err.contains("env `TOKEN`"), "{err}");
        assert!(err.contains("--host localhost"), "{err}");
        let err = problem(&stdio(&[], &[("X", "secret:tok")]), &env);
        assert!(err.contains("has no URL"), "{err}");
        let err = problem(
            &http("https://a.example/", &[("X", "secret:bad name")]),
            &env,
        );
        assert!(err.contains("invalid secret name"), "{err}");
    }

    #[test]
    fn log_lines_are_redacted_whole() {
        let writer = RedactingWriter::new(
            std::sync::Mutex::new(Vec::<u8>::new()),
            Redactor::patterns_only(),
        );
        {
            let mut line = writer.make_writer();
            line.write_all(b"key AKIAIOSF").unwrap();
            line.write_all(b"ODNN7EXAMPLE end\n").unwrap();
        }
        let text = String::from_utf8(writer.inner.into_inner().unwrap()).unwrap();
        assert!(!text.contains("AKIAIOSFODNN7EXAMPLE"), "{text}");
        assert!(text.contains("[REDACTED"), "{text}");
        assert!(text.ends_with("end\n"), "{text}");
    }
}
