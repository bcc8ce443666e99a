//! The sandbox service: one-shot runs (from a warm pool when they can), persistent Python
//! sessions, and the bookkeeping that makes sure every container is removed.

use std::collections::HashMap;
use std::sync::Arc;

use cairn_config::SandboxConfig;
use cairn_workspace::{MaskLimits, Workspace};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::SandboxError;
use crate::engine::{ContainerSpec, Engine, Identity, Limits, RunAs, WorkspaceMount};
use crate::exec::{Command, RunReport, exec};
use crate::runtimes::{Runtime, argv};
use crate::session::Session;

/// What a one-shot run needs beyond the code.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub network: bool,
    pub workspace: Option<WorkspaceMount>,
    /// Directory to run in, inside the container (default: the workspace, else `/tmp`).
    pub working_dir: Option<String>,
}

/// The sandboxes of one cairn process.
pub struct Sandbox {
    config: SandboxConfig,
    limits: Limits,
    /// Connected lazily (see [`Sandbox::engine`]).
    engine: std::sync::Mutex<Option<Engine>>,
    /// Held while connecting, so concurrent first uses share one connection.
    connecting: Mutex<()>,
    /// Warm containers per (image, workspace root), each started with the default spec.
    pool: Arc<Mutex<HashMap<PoolKey, Vec<String>>>>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    reaped: tokio::sync::OnceCell<()>,
    /// Set by [`Sandbox::shutdown`]: warm containers still starting are removed, not pooled.
    closing: Arc<std::sync::atomic::AtomicBool>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PoolKey {
    image: String,
    /// The workspace root and who the container runs as (the owner of a root may change).
    workspace: Option<(std::path::PathBuf, crate::RunAs)>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("limits", &self.limits)
            .finish()
    }
}

impl Sandbox {
    /// A sandbox service over the configured engine. Nothing is contacted until first use.
    pub fn new(config: SandboxConfig) -> Arc<Sandbox> {
        let limits = Limits::from_config(&config);
        // Connected (and the API version agreed) at first use.
        let engine = std::sync::Mutex::new(None);
        let connecting = Mutex::new(());
        Arc::new(Sandbox {
            config,
            limits,
            engine,
            connecting,
            pool: Arc::new(Mutex::new(HashMap::new())),
            sessions: Mutex::new(HashMap::new()),
            reaped: tokio::sync::OnceCell::new(),
            closing: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        })
    }

    fn known_engine(&self) -> Option<Engine> {
        self.engine
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn config(&self) -> &SandboxConfig {
        &self.config
    }

    /// The engine, answering; at first use, leftovers of crashed cairn processes are reaped.
    /// Connecting is retried at each use, so an engine started after cairn is found.
    pub async fn engine(&self) -> Result<Engine, SandboxError> {
        // One connection per service: its instance label is how this service finds its own
        // containers, so two callers must not each make one.
        let engine = {
            let _connecting = self.connecting.lock().await;
            match self.known_engine() {
                Some(e) => e,
                None => {
                    let e = Engine::connect(&self.config)?.negotiated().await?;
                    *self
                        .engine
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e.clone());
                    e
                }
            }
        };
        engine.ping().await?;
        let reaper = engine.clone();
        self.reaped
            .get_or_init(|| async move {
                match reaper.reap_leftovers().await {
                    Ok(0) => {}
                    Ok(n) => {
                        tracing::info!("removed {n} sandbox containers left by a crashed cairn")
                    }
                    Err(e) => tracing::warn!("could not reap old sandboxes: {e}"),
                }
            })
            .await;
        Ok(engine)
    }

    /// The image configured for `runtime`, present on the engine.
    pub async fn image_for(&self, runtime: &str) -> Result<String, SandboxError> {
        let image = self.config.images.get(runtime).cloned().ok_or_else(|| {
            SandboxError::UnknownRuntime {
                runtime: runtime.to_owned(),
                known: self
                    .config
                    .images
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            }
        })?;
        self.engine().await?.check_image(runtime, &image).await?;
        Ok(image)
    }

    /// Run `code` with `rt` in a fresh container (a warm one when the options allow), then
    /// remove the container, whatever happened.
    pub async fn run_code(
        &self,
        rt: &Runtime,
        code: &str,
        options: RunOptions,
        cancel: &CancellationToken,
    ) -> Result<RunReport, SandboxError> {
        if code.len() > self.limits.code_max_bytes {
            return Err(SandboxError::CodeTooLarge {
                size: code.len(),
                limit: self.limits.code_max_bytes,
            });
        }
        if code.contains('\0') {
            return Err(SandboxError::Refused("the code contains a NUL byte".into()));
        }
        let image = self.image_for(rt.name).await?;
        let dir = options.working_dir.clone().unwrap_or_else(|| {
            if options.workspace.is_some() {
                crate::engine::WORKSPACE_DIR.to_owned()
            } else {
                "/tmp".to_owned()
            }
        });
        let command = Command {
            argv: argv(rt, &dir),
            env: vec![format!("CAIRN_CODE={code}")],
            working_dir: None,
            stdin: None,
            user: None,
        };
        self.run_command(&image, &command, options, cancel).await
    }

    /// The workspace as a container sees it: mounted at [`crate::engine::WORKSPACE_DIR`],
    /// read-only unless `writable` (and then its files that run code still read-only), its
    /// protected and unreadable files and `.git` masked, all of them or an error; run as a user
    /// who reads it as the user does, or an error before any container starts.
    pub async fn workspace_mount(
        &self,
        ws: &Arc<Workspace>,
        writable: bool,
    ) -> Result<WorkspaceMount, String> {
        let root = ws.resolve(".").map_err(|e| e.to_string())?;
        let run_as = RunAs::for_workspace(&Identity::current(), root.as_path())
            .map_err(|e| e.to_string())?;
        let limits = MaskLimits {
            max_entries: self.config.mask_max_entries,
            max_mounts: self.config.mask_max_mounts,
        };
        let walked = root.clone();
        let masks = cairn_workspace::off_thread(ws, move |ws| ws.masks(&walked, limits, writable))
            .await?
            .map_err(|e| SandboxError::from(e).to_string())?;
        Ok(WorkspaceMount {
            root: root.as_path().to_path_buf(),
            writable,
            masked_files: masks.files,
            masked_dirs: masks.dirs,
            read_only: masks.read_only,
            run_as,
        })
    }

    /// Run one program (`argv`, no shell) in a fresh container of `image`, with `stdin` when
    /// given, under the sandbox's limits; the container is removed whatever happened.
    pub async fn run_program(
        &self,
        image: &str,
        argv: Vec<String>,
        stdin: Option<Vec<u8>>,
        options: RunOptions,
        cancel: &CancellationToken,
    ) -> Result<RunReport, SandboxError> {
        if argv.is_empty() || argv.iter().any(|a| a.contains('\0')) {
            return Err(SandboxError::Refused(
                "a program needs a name, and no argument may contain a NUL byte".into(),
            ));
        }
        let command = Command {
            argv,
            env: Vec::new(),
            working_dir: options.working_dir.clone(),
            stdin,
            user: None,
        };
        self.run_command(image, &command, options, cancel).await
    }

    /// Run a command line (through `sh -c`) in a fresh container of `image`.
    pub async fn run_shell(
        &self,
        image: &str,
        script: &str,
        options: RunOptions,
        cancel: &CancellationToken,
    ) -> Result<RunReport, SandboxError> {
        let command = Command {
            argv: vec!["sh".into(), "-c".into(), script.to_owned()],
            env: Vec::new(),
            working_dir: options.working_dir.clone(),
            stdin: None,
            user: None,
        };
        self.run_command(image, &command, options, cancel).await
    }

    async fn run_command(
        &self,
        image: &str,
        command: &Command,
        options: RunOptions,
        cancel: &CancellationToken,
    ) -> Result<RunReport, SandboxError> {
        let engine = self.engine().await?;
        let spec = ContainerSpec {
            image: image.to_owned(),
            kind: "run",
            network: options.network,
            workspace: options.workspace.clone(),
            session: None,
            volume: None,
        };
        let id = match self.take_warm(&spec).await {
            Some(id) => id,
            None => engine.start(&spec, &self.limits).await?,
        };
        // Removal must happen even if this future is dropped (the run was cancelled).
        let guard = RemoveOnDrop {
            engine: engine.clone(),
            id: Some(id.clone()),
        };
        let report = exec(&engine, &id, command, &self.limits, cancel).await;
        guard.remove_now().await;
        if !spec.network && spec.workspace.as_ref().is_none_or(|w| !w.writable) {
            self.refill(spec);
        }
        report
    }

    /// A warm container for `spec` if the pool has one (only for the default spec: no network,
    /// a read-only workspace or none).
    async fn take_warm(&self, spec: &ContainerSpec) -> Option<String> {
        if spec.network || spec.workspace.as_ref().is_some_and(|w| w.writable) {
            return None;
        }
        let key = pool_key(spec);
        let mut pool = self.pool.lock().await;
        let warm = pool.get_mut(&key)?;
        // A masked set may differ between calls; warm containers are only for unmasked mounts.
        if spec
            .workspace
            .as_ref()
            .is_some_and(|w| !w.masked_files.is_empty() || !w.masked_dirs.is_empty())
        {
            return None;
        }
        warm.pop()
    }

    /// Start warm containers for `spec` in the background, up to `sandbox.pool_size`.
    pub fn refill(&self, spec: ContainerSpec) {
        let masked = spec
            .workspace
            .as_ref()
            .is_some_and(|w| !w.masked_files.is_empty() || !w.masked_dirs.is_empty());
        if self.config.pool_size == 0 || masked {
            return;
        }
        let Some(engine) = self.known_engine() else {
            return;
        };
        let limits = self.limits.clone();
        let want = self.config.pool_size;
        let pool = self.pool.clone();
        let closing = self.closing.clone();
        tokio::spawn(async move {
            let key = pool_key(&spec);
            let have = pool.lock().await.get(&key).map_or(0, Vec::len);
            for _ in have..want {
                let spec = ContainerSpec {
                    kind: "pool",
                    ..spec.clone()
                };
                match engine.start(&spec, &limits).await {
                    Ok(id) => {
                        // A container finished warming after shutdown began: nobody will take
                        // it, so it goes now rather than at the next start's reaping.
                        if closing.load(std::sync::atomic::Ordering::SeqCst) {
                            engine.remove(&id).await;
                            return;
                        }
                        pool.lock().await.entry(key.clone()).or_default().push(id);
                    }
                    Err(e) => {
                        tracing::debug!("warming a sandbox failed: {e}");
                        return;
                    }
                }
            }
        });
    }

    /// Start warm containers of `runtime`'s image now (for `cairn bench sandbox`), waiting
    /// until they are up.
    pub async fn warm(
        &self,
        runtime: &str,
        workspace: Option<WorkspaceMount>,
    ) -> Result<(), SandboxError> {
        let image = self.image_for(runtime).await?;
        let engine = self.engine().await?;
        let spec = ContainerSpec {
            image,
            kind: "pool",
            network: false,
            workspace,
            session: None,
            volume: None,
        };
        let key = pool_key(&spec);
        let have = self.pool.lock().await.get(&key).map_or(0, Vec::len);
        for _ in have..self.config.pool_size.max(1) {
            let id = engine.start(&spec, &self.limits).await?;
            self.pool
                .lock()
                .await
                .entry(key.clone())
                .or_default()
                .push(id);
        }
        Ok(())
    }

    /// Run a cell in the chat session's Python session, starting it at first use. A session
    /// whose cell timed out, ran out of memory or died is removed (its state is lost, and the
    /// report says so); the next cell starts a new one.
    pub async fn python_session(
        &self,
        session_id: &str,
        code: &str,
        cancel: &CancellationToken,
    ) -> Result<(RunReport, bool), SandboxError> {
        if code.len() > self.limits.code_max_bytes {
            return Err(SandboxError::CodeTooLarge {
                size: code.len(),
                limit: self.limits.code_max_bytes,
            });
        }
        let (session, fresh) = self.session(session_id).await?;
        let report = session.run(code, &self.limits, cancel).await;
        let broken = match &report {
            Ok(r) => r.ending != crate::exec::Ending::Exited(0),
            Err(_) => true,
        };
        if broken {
            self.stop_session(session_id).await;
        }
        report.map(|r| (r, fresh))
    }

    /// The session's Python process, started if needed; `true` when it was just started.
    async fn session(&self, session_id: &str) -> Result<(Arc<Session>, bool), SandboxError> {
        if let Some(s) = self.sessions.lock().await.get(session_id) {
            return Ok((s.clone(), false));
        }
        let image = self.image_for("python").await?;
        let engine = self.engine().await?;
        let volume = site_volume(session_id);
        engine.create_volume(&volume).await?;
        let spec = ContainerSpec {
            image: image.clone(),
            kind: "session",
            network: false,
            workspace: None,
            session: Some(session_id.to_owned()),
            volume: Some(volume),
        };
        let id = engine.start(&spec, &self.limits).await?;
        match Session::start(&engine, id.clone(), image, &self.limits).await {
            Ok(session) => {
                let session = Arc::new(session);
                self.sessions
                    .lock()
                    .await
                    .insert(session_id.to_owned(), session.clone());
                Ok((session, true))
            }
            Err(e) => {
                engine.remove(&id).await;
                Err(e)
            }
        }
    }

    /// Install Python packages for the chat session's Python session: `pip install` in a
    /// separate container that has network access (the caller got the user's grant) and
    /// writes only the session's package volume.
    pub async fn install_packages(
        &self,
        session_id: &str,
        packages: &[String],
        cancel: &CancellationToken,
    ) -> Result<RunReport, SandboxError> {
        for p in packages {
            let ok = !p.is_empty()
                && !p.starts_with('-')
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-[]=<>!~,".contains(c));
            if !ok {
                return Err(SandboxError::Refused(format!(
                    "`{p}` is not a package requirement (letters, digits and ._-[]=<>!~, only, not starting with `-`)"
                )));
            }
        }
        let image = self.image_for("python").await?;
        let engine = self.engine().await?;
        let volume = site_volume(session_id);
        engine.create_volume(&volume).await?;
        let spec = ContainerSpec {
            image,
            kind: "run",
            network: true,
            workspace: None,
            session: Some(session_id.to_owned()),
            volume: Some(volume),
        };
        let id = engine.start(&spec, &self.limits).await?;
        let guard = RemoveOnDrop {
            engine: engine.clone(),
            id: Some(id.clone()),
        };
        let mut argv: Vec<String> = [
            "python3",
            "-m",
            "pip",
            "install",
            "--no-input",
            "--disable-pip-version-check",
            "--no-cache-dir",
            "--target",
            crate::engine::SITE_DIR,
            "--",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        argv.extend(packages.iter().cloned());
        let command = Command {
            argv,
            env: Vec::new(),
            working_dir: Some("/tmp".into()),
            stdin: None,
            user: None,
        };
        let report = exec(&engine, &id, &command, &self.limits, cancel).await;
        guard.remove_now().await;
        report
    }

    /// Stop and remove a chat session's Python session and its packages; `false` when there was none.
    pub async fn stop_session(&self, session_id: &str) -> bool {
        let session = self.sessions.lock().await.remove(session_id);
        let Some(engine) = self.known_engine() else {
            return false;
        };
        engine.remove_volume(&site_volume(session_id)).await;
        match session {
            Some(s) => {
                engine.remove(s.container()).await;
                true
            }
            None => false,
        }
    }

    /// The session containers of this process: (chat session, container, image, age).
    pub async fn sessions(&self) -> Vec<(String, String, String, std::time::Duration)> {
        self.sessions
            .lock()
            .await
            .iter()
            .map(|(k, s)| {
                (
                    k.clone(),
                    s.container().to_owned(),
                    s.image.clone(),
                    s.started.elapsed(),
                )
            })
            .collect()
    }

    /// Copy bytes into the session's container, at `path` under `/tmp`.
    pub async fn copy_into_session(
        &self,
        session_id: &str,
        path: &str,
        bytes: Vec<u8>,
        cancel: &CancellationToken,
    ) -> Result<RunReport, SandboxError> {
        let target = scratch_path(path)?;
        let (session, _) = self.session(session_id).await?;
        let engine = self.engine().await?;
        let command = Command {
            argv: vec![
                "sh".into(),
                "-c".into(),
                "mkdir -p \"$(dirname \"$1\")\" && cat > \"$1\"".into(),
                "sh".into(),
                target,
            ],
            env: Vec::new(),
            working_dir: Some("/tmp".into()),
            stdin: Some(bytes),
            user: None,
        };
        exec(&engine, session.container(), &command, &self.limits, cancel).await
    }

    /// Read a file of the session's container (under `/tmp`), up to the output cap.
    pub async fn copy_out_of_session(
        &self,
        session_id: &str,
        path: &str,
        cancel: &CancellationToken,
    ) -> Result<RunReport, SandboxError> {
        let source = scratch_path(path)?;
        let Some(session) = self.sessions.lock().await.get(session_id).cloned() else {
            return Err(SandboxError::NoSuchSandbox(format!(
                "python session of chat {session_id}"
            )));
        };
        let engine = self.engine().await?;
        let command = Command {
            argv: vec!["cat".into(), "--".into(), source],
            env: Vec::new(),
            working_dir: Some("/tmp".into()),
            stdin: None,
            user: None,
        };
        exec(&engine, session.container(), &command, &self.limits, cancel).await
    }

    /// Remove every container this service started: warm ones and sessions.
    pub async fn shutdown(&self) {
        self.closing
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let Some(engine) = self.known_engine() else {
            return;
        };
        let warm: Vec<String> = self
            .pool
            .lock()
            .await
            .drain()
            .flat_map(|(_, ids)| ids)
            .collect();
        for id in warm {
            engine.remove(&id).await;
        }
        let sessions: Vec<Arc<Session>> =
            self.sessions.lock().await.drain().map(|(_, s)| s).collect();
        for s in sessions {
            engine.remove(s.container()).await;
        }
    }
}

/// The volume that holds a session's installed packages.
fn site_volume(session_id: &str) -> String {
    let safe: String = session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    format!("cairn-site-{safe}")
}

/// A path in a session's scratch space: under `/tmp`, without `..`.
fn scratch_path(path: &str) -> Result<String, SandboxError> {
    let p = std::path::Path::new(path);
    let rel = p.strip_prefix("/tmp").unwrap_or(p);
    if rel.as_os_str().is_empty()
        || rel.is_absolute()
        || rel
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
        || path.contains('\0')
    {
        return Err(SandboxError::Refused(format!(
            "`{path}` is not a file path under /tmp in the sandbox"
        )));
    }
    Ok(format!("/tmp/{}", rel.display()))
}

fn pool_key(spec: &ContainerSpec) -> PoolKey {
    PoolKey {
        image: spec.image.clone(),
        workspace: spec
            .workspace
            .as_ref()
            .map(|w| (w.root.clone(), w.run_as.clone())),
    }
}

/// Removes a container when dropped, in the background if it was not removed already.
struct RemoveOnDrop {
    engine: Engine,
    id: Option<String>,
}

impl RemoveOnDrop {
    async fn remove_now(mut self) {
        if let Some(id) = self.id.take() {
            self.engine.remove(&id).await;
        }
    }
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            let engine = self.engine.clone();
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move { engine.remove(&id).await });
            }
        }
    }
}
