//! The sandbox service: one-shot runs (from a warm pool when they can), persistent Python
//! sessions, and the bookkeeping that makes sure every container is removed.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use cairn_config::{EngineConfig, SandboxConfig, WorkspaceDelivery};
use cairn_workspace::{MaskLimits, Workspace};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::engine::{ContainerSpec, Engine, Identity, Limits, RunAs, WorkspaceMount};
use crate::error::SandboxError;
use crate::exec::{Command, RunReport, exec};
use crate::runtimes::{Runtime, argv};
use crate::session::Session;
use cairn_workspace::archive::{Applied, PackMode, Packed, ReturnLimits};

/// What a one-shot run needs beyond the code.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub network: bool,
    pub workspace: Option<WorkspaceMount>,
    /// Directory to run in, inside the container (default: the workspace, else `/tmp`).
    pub working_dir: Option<String>,
}

/// How long [`Sandbox::shutdown`] waits for warm containers still starting.
const SHUTDOWN_REFILL_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// The sandboxes of one cairn process.
pub struct Sandbox {
    config: SandboxConfig,
    limits: Limits,
    /// The configured engines (at least one), each connected lazily (see [`Sandbox::engine`]).
    slots: Vec<Slot>,
    /// Warm containers per (engine, image, workspace), each started with the default spec.
    pool: Arc<Mutex<HashMap<PoolKey, Vec<String>>>>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// Set by [`Sandbox::shutdown`]: warm containers still starting are removed, not pooled.
    closing: Arc<std::sync::atomic::AtomicBool>,
    /// The refills in flight, which [`Sandbox::shutdown`] waits for, so a container still
    /// warming is gone when it returns rather than soon after.
    refills: tokio_util::task::TaskTracker,
    /// Held while a placement picks its engine (see [`Sandbox::place`]).
    choosing: std::sync::Mutex<()>,
}

/// One configured engine and what this service knows of it.
struct Slot {
    config: EngineConfig,
    /// Connected at first use; kept, so its instance label stays the same.
    engine: std::sync::Mutex<Option<Engine>>,
    /// Held while connecting, so concurrent first uses share one connection.
    connecting: Mutex<()>,
    /// Leftovers were reaped since the engine last answered after not answering.
    reaped: AtomicBool,
    /// Containers left there when the connection was lost mid-run; removed once it answers.
    lost: std::sync::Mutex<Vec<String>>,
    /// Runs of this process placed here and not finished.
    running: AtomicUsize,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PoolKey {
    slot: usize,
    image: String,
    /// The workspace root (none when it is sent as an archive: any root fits) and who the
    /// container runs as (the owner of a root may change).
    workspace: Option<(Option<std::path::PathBuf>, crate::engine::RunAs)>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("limits", &self.limits)
            .finish()
    }
}

impl Sandbox {
    /// A sandbox service over the configured engines. Nothing is contacted until first use.
    pub fn new(config: SandboxConfig) -> Arc<Sandbox> {
        let limits = Limits::from_config(&config);
        let slots = config
            .engine_list()
            .into_iter()
            .map(|config| Slot {
                config,
                engine: std::sync::Mutex::new(None),
                connecting: Mutex::new(()),
                reaped: AtomicBool::new(false),
                lost: std::sync::Mutex::new(Vec::new()),
                running: AtomicUsize::new(0),
            })
            .collect();
        Arc::new(Sandbox {
            config,
            limits,
            slots,
            pool: Arc::new(Mutex::new(HashMap::new())),
            sessions: Mutex::new(HashMap::new()),
            closing: Arc::new(std::sync::atomic::AtomicBool::new(false)),
            refills: tokio_util::task::TaskTracker::new(),
            choosing: std::sync::Mutex::new(()),
        })
    }

    fn known_engine(&self) -> Option<Engine> {
        self.known(0)
    }

    fn known(&self, slot: usize) -> Option<Engine> {
        self.slots.get(slot).and_then(|s| {
            s.engine
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone()
        })
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn config(&self) -> &SandboxConfig {
        &self.config
    }

    /// The configured engines: (name, address).
    pub fn engines(&self) -> Vec<(String, String)> {
        self.slots
            .iter()
            .map(|s| {
                let name = s
                    .config
                    .name
                    .clone()
                    .unwrap_or_else(|| s.config.engine.clone());
                (name, s.config.engine.clone())
            })
            .collect()
    }

    /// The first configured engine, answering (Python sessions and the DevOps tools use it;
    /// one-shot runs are placed on the least busy engine, see [`Sandbox::engine_at`]).
    pub async fn engine(&self) -> Result<Engine, SandboxError> {
        self.engine_at(0).await
    }

    /// Engine `slot`, answering. After it was unreachable (or at first use), the containers
    /// left there are removed first: those of cairn processes on this host that no longer exist,
    /// and this process's own runs whose connection was lost. Connecting is retried at each
    /// use, so an engine started after cairn is found.
    pub async fn engine_at(&self, slot: usize) -> Result<Engine, SandboxError> {
        let Some(s) = self.slots.get(slot) else {
            return Err(SandboxError::Refused(format!(
                "no engine number {slot} is configured"
            )));
        };
        // One connection per engine and service: its instance label is how this service finds
        // its own containers, so two callers must not each make one.
        let engine = {
            let _connecting = s.connecting.lock().await;
            match self.known(slot) {
                Some(e) => e,
                None => {
                    let e = Engine::connect(&s.config)?.negotiated().await?;
                    *s.engine
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(e.clone());
                    e
                }
            }
        };
        if let Err(e) = engine.ping().await {
            s.reaped.store(false, Ordering::SeqCst);
            return Err(e);
        }
        if !s.reaped.swap(true, Ordering::SeqCst) {
            let lost: Vec<String> = std::mem::take(
                &mut *s
                    .lost
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            );
            for id in &lost {
                engine.remove(id).await;
            }
            match engine.reap_leftovers().await {
                Ok(n) if n + lost.len() > 0 => tracing::info!(
                    engine = engine.name(),
                    "removed {} sandbox containers left by a crashed cairn or a lost connection",
                    n + lost.len()
                ),
                Ok(_) => {}
                Err(e) => tracing::warn!("could not reap old sandboxes: {e}"),
            }
        }
        Ok(engine)
    }

    /// The image configured for `runtime`.
    fn image_name(&self, runtime: &str) -> Result<String, SandboxError> {
        self.config
            .images
            .get(runtime)
            .cloned()
            .ok_or_else(|| SandboxError::UnknownRuntime {
                runtime: runtime.to_owned(),
                known: self
                    .config
                    .images
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// The image configured for `runtime`, present on an engine that answers.
    pub async fn image_for(&self, runtime: &str) -> Result<String, SandboxError> {
        let image = self.image_name(runtime)?;
        let _placed = self.place(runtime, &image).await?;
        Ok(image)
    }

    /// The engine a new run of `image` goes to: the least busy of those that answer and have
    /// the image (containers of any cairn running there that are not idle, plus this
    /// process's runs placed there), the first configured on a tie. The run counts as placed
    /// there until the returned guard is dropped; a run stays where it started.
    pub async fn place(
        &self,
        runtime: &str,
        image: &str,
    ) -> Result<(usize, Engine, Placed<'_>), SandboxError> {
        if self.slots.len() == 1 {
            let engine = self.engine_at(0).await?;
            engine.check_image(runtime, image).await?;
            return Ok((0, engine, Placed::new(&self.slots[0].running)));
        }
        let checks = self.slots.iter().enumerate().map(|(i, _)| async move {
            let engine = self.engine_at(i).await?;
            engine.check_image(runtime, image).await?;
            let others = engine.busy_elsewhere().await?;
            Ok::<_, SandboxError>((others, engine))
        });
        let results = futures::future::join_all(checks).await;
        // This process's own runs are read and counted in one step, so that runs placed at
        // the same moment spread rather than all seeing the same idle engine.
        let _choosing = self
            .choosing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut best: Option<(usize, usize, Engine)> = None;
        let mut why = Vec::new();
        for (i, r) in results.into_iter().enumerate() {
            match r {
                Ok((others, engine)) => {
                    let load = others + self.slots[i].running.load(Ordering::SeqCst);
                    if best.as_ref().is_none_or(|b| load < b.0) {
                        best = Some((load, i, engine));
                    }
                }
                Err(e) => why.push(format!("{}: {e}", self.engines()[i].0)),
            }
        }
        match best {
            Some((_, i, engine)) => Ok((i, engine, Placed::new(&self.slots[i].running))),
            None => Err(SandboxError::NoEngine(why.join("; "))),
        }
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
        let image = self.image_name(rt.name)?;
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
        self.run_command(rt.name, &image, &command, options, cancel)
            .await
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
        // The mount limit is checked once the engine is known: an archive needs no mounts.
        let limits = MaskLimits {
            max_entries: self.config.mask_max_entries,
            max_mounts: usize::MAX,
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
            scope: Some(ws.clone()),
            archive: false,
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
        self.run_command(image, image, &command, options, cancel)
            .await
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
        self.run_command(image, image, &command, options, cancel)
            .await
    }

    async fn run_command(
        &self,
        runtime: &str,
        image: &str,
        command: &Command,
        mut options: RunOptions,
        cancel: &CancellationToken,
    ) -> Result<RunReport, SandboxError> {
        let (slot, engine, _placed) = self.place(runtime, image).await?;
        if let Some(ws) = &mut options.workspace {
            ws.archive = self.archive_for(&engine, ws)?;
            let mounts = ws.masked_files.len() + ws.masked_dirs.len() + ws.read_only.len();
            if !ws.archive && mounts > self.config.mask_max_mounts {
                return Err(cairn_workspace::MaskError::TooManyMounts {
                    root: ws.root.display().to_string(),
                    count: mounts,
                    limit: self.config.mask_max_mounts,
                }
                .into());
            }
        }
        let packed = match &options.workspace {
            Some(ws) if ws.archive => Some(self.pack(ws).await?),
            _ => None,
        };
        let spec = ContainerSpec {
            image: image.to_owned(),
            kind: "run",
            network: options.network,
            workspace: options.workspace.clone(),
            session: None,
            volume: None,
        };
        let id = match self.take_warm(slot, &spec).await {
            Some(id) => id,
            None => engine.start(&spec, &self.limits).await?,
        };
        // Removal must happen even if this future is dropped (the run was cancelled).
        let mut guard = RemoveOnDrop {
            engine: engine.clone(),
            id: Some(id.clone()),
        };
        let mut report = match (&packed, &spec.workspace) {
            (Some(packed), Some(ws)) => match ship(&engine, &id, packed, ws.writable).await {
                Ok(()) => exec(&engine, &id, command, &self.limits, cancel).await,
                Err(e) => Err(e),
            },
            _ => exec(&engine, &id, command, &self.limits, cancel).await,
        };
        if let Err(e) = &report
            && engine.ping().await.is_err()
        {
            // The engine is gone mid-run: what ran there, and whether it still runs, is
            // unknown. The container is removed when the engine answers again.
            if let Some(id) = guard.id.take() {
                self.lose(slot, id).await;
            }
            return Err(SandboxError::EngineLost {
                engine: engine.name().to_owned(),
                reason: e.to_string(),
            });
        }
        if let (Ok(r), Some(packed), Some(ws)) = (&mut report, &packed, &spec.workspace)
            && ws.writable
        {
            match self.bring_back(&engine, &id, packed, ws).await {
                Ok(applied) => r.applied = Some(applied),
                Err(e) => r.not_applied = Some(e),
            }
        }
        guard.remove_now().await;
        if !spec.network && spec.workspace.as_ref().is_none_or(|w| !w.writable) {
            self.refill(slot, spec);
        }
        report
    }

    /// Whether `ws` goes to a container on `engine` as an archive (`sandbox.workspace`).
    fn archive_for(&self, engine: &Engine, ws: &WorkspaceMount) -> Result<bool, SandboxError> {
        let archive = match self.config.workspace {
            WorkspaceDelivery::Archive => true,
            WorkspaceDelivery::Auto => !engine.is_local(),
            WorkspaceDelivery::Mount if engine.is_local() => false,
            WorkspaceDelivery::Mount => {
                return Err(SandboxError::Refused(format!(
                    "`sandbox.workspace = \"mount\"` needs an engine on this machine, and {} is \
                     remote; use \"archive\" or \"auto\"",
                    engine.name()
                )));
            }
        };
        if archive && ws.scope.is_none() {
            return Err(SandboxError::Refused(
                "this run's workspace can only be mounted, and its engine is remote".to_owned(),
            ));
        }
        Ok(archive)
    }

    /// The files `ws` shows a container, as an archive.
    async fn pack(&self, ws: &WorkspaceMount) -> Result<Packed, SandboxError> {
        let Some(scope) = &ws.scope else {
            return Err(SandboxError::Refused(
                "no workspace scope to send".to_owned(),
            ));
        };
        let root = scope
            .resolve(&ws.root.to_string_lossy())
            .map_err(|e| SandboxError::Refused(e.to_string()))?;
        let masks = cairn_workspace::Masks {
            files: ws.masked_files.clone(),
            dirs: ws.masked_dirs.clone(),
            read_only: Vec::new(),
        };
        let mode = if ws.writable {
            PackMode::Writable
        } else {
            PackMode::ReadOnly
        };
        let max = self.config.workspace_max_mib.saturating_mul(1024 * 1024);
        cairn_workspace::off_thread(scope, move |scope| scope.pack(&root, &masks, mode, max))
            .await
            .map_err(SandboxError::Refused)?
            .map_err(SandboxError::from)
    }

    /// After a writable run: the container's copy, applied through the scope; or why not.
    async fn bring_back(
        &self,
        engine: &Engine,
        id: &str,
        packed: &Packed,
        ws: &WorkspaceMount,
    ) -> Result<Applied, String> {
        let Some(scope) = &ws.scope else {
            return Err("no workspace scope to apply the changes through".to_owned());
        };
        let limits = ReturnLimits {
            max_files: self.config.return_max_files,
            max_bytes: self.config.workspace_max_mib.saturating_mul(1024 * 1024),
        };
        // The archive's own headers come on top of the content: 1 KiB a file is generous.
        let cap = limits
            .max_bytes
            .saturating_add(u64::try_from(limits.max_files).unwrap_or(u64::MAX) * 1024)
            .saturating_add(1024 * 1024);
        let tar = fetch_copy(engine, id, cap)
            .await
            .map_err(|e| e.to_string())?;
        let root = scope
            .resolve(&ws.root.to_string_lossy())
            .map_err(|e| e.to_string())?;
        let sent = Packed {
            tar: Vec::new(),
            ..packed.clone()
        };
        cairn_workspace::off_thread(scope, move |scope| {
            scope.apply_returned(&root, &tar, &sent, limits)
        })
        .await?
        .map_err(|e| e.to_string())
    }

    /// A container whose engine stopped answering mid-run: forgotten by the pool, removed
    /// when the engine answers again.
    async fn lose(&self, slot: usize, id: String) {
        let s = &self.slots[slot];
        s.reaped.store(false, Ordering::SeqCst);
        let mut lost = vec![id];
        self.pool.lock().await.retain(|k, ids| {
            if k.slot == slot {
                lost.append(ids);
                false
            } else {
                true
            }
        });
        s.lost
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend(lost);
    }

    /// A warm container for `spec` on engine `slot` if the pool has one (only for the default
    /// spec: no network, a read-only workspace or none; a mounted one without masks).
    async fn take_warm(&self, slot: usize, spec: &ContainerSpec) -> Option<String> {
        if spec.network || spec.workspace.as_ref().is_some_and(|w| w.writable) {
            return None;
        }
        // A masked set may differ between calls; warm containers are only for unmasked mounts
        // (an archive is sent after the start, so any workspace fits).
        if spec.workspace.as_ref().is_some_and(|w| {
            !w.archive && (!w.masked_files.is_empty() || !w.masked_dirs.is_empty())
        }) {
            return None;
        }
        let key = pool_key(slot, spec);
        self.pool.lock().await.get_mut(&key)?.pop()
    }

    /// Start warm containers for `spec` on engine `slot` in the background, up to
    /// `sandbox.pool_size`.
    pub fn refill(&self, slot: usize, spec: ContainerSpec) {
        let masked = spec.workspace.as_ref().is_some_and(|w| {
            !w.archive && (!w.masked_files.is_empty() || !w.masked_dirs.is_empty())
        });
        if self.config.pool_size == 0 || masked {
            return;
        }
        let Some(engine) = self.known(slot) else {
            return;
        };
        let limits = self.limits.clone();
        let want = self.config.pool_size;
        let pool = self.pool.clone();
        let closing = self.closing.clone();
        self.refills.spawn(async move {
            let key = pool_key(slot, &spec);
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

    /// Start warm containers of `runtime`'s image now (for `cairn bench sandbox`) on the engine
    /// a run would go to, waiting until they are up. The workspace, when given, is mounted or
    /// sent as a run of that engine would have it.
    pub async fn warm(
        &self,
        runtime: &str,
        mut workspace: Option<WorkspaceMount>,
    ) -> Result<(), SandboxError> {
        let image = self.image_name(runtime)?;
        let (slot, engine, _placed) = self.place(runtime, &image).await?;
        if let Some(ws) = &mut workspace {
            ws.archive = self.archive_for(&engine, ws)?;
        }
        let spec = ContainerSpec {
            image,
            kind: "pool",
            network: false,
            workspace,
            session: None,
            volume: None,
        };
        let key = pool_key(slot, &spec);
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
        let engine = self.engine().await?;
        let image = self.image_name("python")?;
        engine.check_image("python", &image).await?;
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
        let engine = self.engine().await?;
        let image = self.image_name("python")?;
        engine.check_image("python", &image).await?;
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
        // A refill that sees `closing` removes what it started; wait for those, bounded so a
        // hung engine cannot hold the exit (its containers are reaped at the next start).
        self.refills.close();
        let _ = tokio::time::timeout(SHUTDOWN_REFILL_WAIT, self.refills.wait()).await;
        let warm: Vec<(usize, String)> = self
            .pool
            .lock()
            .await
            .drain()
            .flat_map(|(k, ids)| ids.into_iter().map(move |id| (k.slot, id)))
            .collect();
        for (slot, id) in warm {
            if let Some(engine) = self.known(slot) {
                engine.remove(&id).await;
            }
        }
        let Some(engine) = self.known_engine() else {
            return;
        };
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

fn pool_key(slot: usize, spec: &ContainerSpec) -> PoolKey {
    PoolKey {
        slot,
        image: spec.image.clone(),
        workspace: spec.workspace.as_ref().map(|w| {
            let root = (!w.archive).then(|| w.root.clone());
            (root, w.run_as.clone())
        }),
    }
}

/// Counts a run placed on an engine until it ends.
pub struct Placed<'a>(&'a AtomicUsize);

impl<'a> Placed<'a> {
    fn new(running: &'a AtomicUsize) -> Placed<'a> {
        running.fetch_add(1, Ordering::SeqCst);
        Placed(running)
    }
}

impl Drop for Placed<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Unpacks the workspace's archive into the container's empty `/workspace` tmpfs (the archive
/// API cannot write into a tmpfs, and on some file systems dockerd's own unpacking takes
/// seconds per ten thousand files), then sets the top's mode: the engine makes the working
/// directory 0755 at the start, whatever the tmpfs was mounted with.
async fn ship(
    engine: &Engine,
    id: &str,
    packed: &Packed,
    writable: bool,
) -> Result<(), SandboxError> {
    let mode = if writable { "0777" } else { "0755" };
    let script = "tar -x -f - -C /workspace --no-same-owner && chmod \"$0\" /workspace";
    let argv = ["sh", "-c", script, mode];
    let limit = u64::try_from(packed.tar.len()).unwrap_or(u64::MAX);
    crate::exec::exec_bytes(
        engine,
        id,
        &argv,
        Some(packed.tar.clone()),
        limit.max(1024),
        SHIP_TIMEOUT,
    )
    .await
    .map(drop)
}

/// How long sending the workspace, or bringing a copy back, may take.
const SHIP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// The container's copy of the workspace as an archive (entries under `workspace/`, as the
/// archive API gives them), at most `cap` bytes.
async fn fetch_copy(engine: &Engine, id: &str, cap: u64) -> Result<Vec<u8>, SandboxError> {
    let argv = ["tar", "-c", "-f", "-", "-C", "/", "workspace"];
    crate::exec::exec_bytes(engine, id, &argv, None, cap, SHIP_TIMEOUT).await
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
