//! The connection to a Docker-compatible engine, and the container each sandbox is.
//!
//! Every container is created here, from [`Limits`] the user configured and nothing the model
//! sent: the image comes from configuration, and the model's arguments never reach
//! [`ContainerSpec`] except as the code or command to run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bollard::Docker;
use bollard::models::{ContainerCreateBody, HostConfig, Mount, MountType};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, ListContainersOptionsBuilder, RemoveContainerOptionsBuilder,
};
use cairn_config::{EngineConfig, SandboxConfig};

use crate::error::SandboxError;

/// Label on every container cairn creates, so leftovers can be found and reaped.
pub const LABEL: &str = "cairn.sandbox";
/// The process that owns a container: `HOSTNAME:PID`.
pub const OWNER_LABEL: &str = "cairn.owner";
/// The sandbox service (one per configuration in a process) that made a container.
pub const INSTANCE_LABEL: &str = "cairn.instance";
/// What the container is for: `run`, `pool` or `session`.
pub const KIND_LABEL: &str = "cairn.kind";
/// The chat session a session container belongs to.
pub const SESSION_LABEL: &str = "cairn.session";

/// The hard limits of every sandbox; from the user's configuration only.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    pub cpus: f64,
    pub memory_bytes: i64,
    pub timeout: Duration,
    pub pids_limit: i64,
    pub output_max_bytes: usize,
    pub tmpfs_bytes: u64,
    /// The size of a sent workspace's copy (`sandbox.workspace_max_mib`): what it may hold,
    /// with what a writable run adds.
    pub workspace_bytes: u64,
    pub code_max_bytes: usize,
    /// `uid:gid`; never root.
    pub user: String,
}

impl Limits {
    pub fn from_config(c: &SandboxConfig) -> Limits {
        let mib = |m: u64| m.saturating_mul(1024 * 1024);
        Limits {
            // The engine refuses more CPUs than the machine has.
            cpus: if c.cpus.is_finite() && c.cpus > 0.0 {
                c.cpus
                    .min(std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64))
            } else {
                2.0
            },
            memory_bytes: i64::try_from(mib(c.memory_mib.max(16))).unwrap_or(i64::MAX),
            timeout: Duration::from_secs(c.timeout_secs.max(1)),
            pids_limit: c.pids_limit.max(8),
            output_max_bytes: c.output_max_bytes.max(1024),
            tmpfs_bytes: mib(c.tmpfs_mib.max(1)),
            workspace_bytes: mib(c.workspace_max_mib.max(1)),
            code_max_bytes: c.code_max_bytes,
            user: format!("{NOBODY}:{NOBODY}"),
        }
    }
}

/// How the workspace is seen inside a container.
#[derive(Debug, Clone)]
pub struct WorkspaceMount {
    /// The canonical workspace root on the host.
    pub root: PathBuf,
    pub writable: bool,
    /// Host paths under `root` hidden inside the container (protected or unreadable files are
    /// covered by an empty file, directories by an empty read-only tmpfs).
    pub masked_files: Vec<PathBuf>,
    pub masked_dirs: Vec<PathBuf>,
    /// Host paths under `root` bound read-only over themselves in a writable mount (files that
    /// run code, and directories everything under which does).
    pub read_only: Vec<PathBuf>,
    /// Who runs in the container, so the workspace reads as it does for the user.
    pub run_as: RunAs,
    /// The scope the files are read through when they are sent as an archive rather than
    /// mounted, and a writable run's changes applied through; `None` can only be mounted.
    pub scope: Option<std::sync::Arc<cairn_workspace::Workspace>>,
    /// Sent as an archive into a volume at [`WORKSPACE_DIR`] instead of bind-mounted; decided
    /// once the run's engine is known.
    pub archive: bool,
}

/// A container's user: `uid:gid` and supplementary groups; never root.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RunAs {
    pub user: String,
    pub groups: Vec<String>,
}

/// `nobody`: who a sandbox runs as when nobody else fits.
pub const NOBODY: u32 = 65534;

/// A process's or a file's user and groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub uid: u32,
    pub gid: u32,
    pub groups: Vec<u32>,
}

impl Identity {
    /// This process's effective user and groups.
    pub fn current() -> Identity {
        Identity {
            uid: rustix::process::geteuid().as_raw(),
            gid: rustix::process::getegid().as_raw(),
            groups: rustix::process::getgroups()
                .map(|g| g.into_iter().map(rustix::process::Gid::as_raw).collect())
                .unwrap_or_default(),
        }
    }
}

impl RunAs {
    /// Who runs in a container that mounts `root`, for a cairn running as `me`:
    /// - cairn runs as a user: that user with their groups, so the container reads exactly
    ///   what the user may read (their own `0700` folders included, and nothing of another
    ///   user's that they may not);
    /// - cairn runs as root (a sandbox never does): the owner of the root, unless that is root
    ///   too; then `nobody`, if `nobody` may enter the root, else a [`SandboxError`] saying so
    ///   before any container starts.
    pub fn for_workspace(me: &Identity, root: &Path) -> Result<RunAs, SandboxError> {
        use std::os::unix::fs::MetadataExt;
        if me.uid != 0 {
            return Ok(RunAs {
                user: format!("{}:{}", me.uid, me.gid),
                groups: me
                    .groups
                    .iter()
                    .filter(|g| **g != me.gid && **g != 0)
                    .map(u32::to_string)
                    .collect(),
            });
        }
        let meta = std::fs::metadata(root).map_err(|e| SandboxError::WorkspaceUnreadable {
            root: root.display().to_string(),
            why: e.to_string(),
        })?;
        if meta.uid() != 0 {
            return Ok(RunAs {
                user: format!("{}:{}", meta.uid(), meta.gid()),
                groups: Vec::new(),
            });
        }
        let nobody = Identity {
            uid: NOBODY,
            gid: NOBODY,
            groups: Vec::new(),
        };
        if may_enter(&nobody, meta.uid(), meta.gid(), meta.mode()) {
            Ok(RunAs {
                user: format!("{NOBODY}:{NOBODY}"),
                groups: Vec::new(),
            })
        } else {
            Err(SandboxError::WorkspaceUnreadable {
                root: root.display().to_string(),
                why: format!(
                    "it belongs to root with mode {:04o}; a sandbox never runs as root, and \
                     its user `nobody` (uid {NOBODY}) may not open it",
                    meta.mode() & 0o7777
                ),
            })
        }
    }
}

/// Whether `who` may list and enter a directory of owner `uid`:`gid` and `mode`, by its
/// permission bits (as the kernel decides for a user without privileges).
pub fn may_enter(who: &Identity, uid: u32, gid: u32, mode: u32) -> bool {
    let bits = if who.uid == uid {
        mode >> 6
    } else if who.gid == gid || who.groups.contains(&gid) {
        mode >> 3
    } else {
        mode
    };
    bits & 0o5 == 0o5
}

/// Where the workspace appears inside a container.
pub const WORKSPACE_DIR: &str = "/workspace";

/// Everything a container is made from.
#[derive(Debug, Clone)]
pub struct ContainerSpec {
    pub image: String,
    pub kind: &'static str,
    pub network: bool,
    pub workspace: Option<WorkspaceMount>,
    pub session: Option<String>,
    /// A named volume mounted at [`SITE_DIR`] (a session's installed packages).
    pub volume: Option<String>,
}

/// Where a session's packages are installed, inside its containers.
pub const SITE_DIR: &str = "/tmp/.site";

/// A connected engine.
#[derive(Debug, Clone)]
pub struct Engine {
    docker: Docker,
    host: String,
    /// What messages call it: the configured name, else the address.
    name: String,
    /// Reached through a socket on this machine, so it can bind-mount the workspace.
    local: bool,
    owner: String,
    instance: String,
}

/// How long a request to the engine may take (an exec's output is streamed within it).
const REQUEST_TIMEOUT_SECS: u64 = 120;

impl Engine {
    /// Connect (lazily: nothing is sent until the first request) to one configured engine:
    /// a Unix socket, `tcp://` (TLS with the client certificate, or plain HTTP on loopback
    /// only), or `ssh://` (the engine's API through `docker system dial-stdio` on the host).
    pub fn connect(config: &EngineConfig) -> Result<Engine, SandboxError> {
        let host = config.engine.trim().to_owned();
        let unavailable = |reason: String| SandboxError::EngineUnavailable {
            host: host.clone(),
            reason,
        };
        let refused = |reason: &str| SandboxError::EngineRefused {
            host: host.clone(),
            reason: reason.to_owned(),
        };
        let (scheme, rest) = host.split_once("://").unwrap_or(("unix", host.as_str()));
        let tls = (&config.tls_ca, &config.tls_cert, &config.tls_key);
        let docker = match scheme {
            "unix" => {
                if tls != (&None, &None, &None) {
                    return Err(refused(
                        "TLS certificates are for a `tcp://` engine, not a Unix socket",
                    ));
                }
                Docker::connect_with_unix(rest, REQUEST_TIMEOUT_SECS, bollard::API_DEFAULT_VERSION)
                    .map_err(|e| unavailable(e.to_string()))?
            }
            "tcp" | "https" => match tls {
                (Some(ca), Some(cert), Some(key)) => {
                    let files = crate::tls::TlsFiles { ca, cert, key };
                    crate::tls::connect(rest, &files, REQUEST_TIMEOUT_SECS).map_err(unavailable)?
                }
                (None, None, None) if is_loopback(rest) => Docker::connect_with_http(
                    &format!("tcp://{rest}"),
                    REQUEST_TIMEOUT_SECS,
                    bollard::API_DEFAULT_VERSION,
                )
                .map_err(|e| unavailable(e.to_string()))?,
                (None, None, None) => {
                    return Err(refused(
                        "an engine over plain TCP gives root on its host to anyone who can reach \
                         the port, so cairn uses one only with TLS: set tls_ca, tls_cert and \
                         tls_key (or use ssh://)",
                    ));
                }
                _ => {
                    return Err(refused("TLS needs all of tls_ca, tls_cert and tls_key"));
                }
            },
            "ssh" => Docker::connect_with_ssh(
                &host,
                REQUEST_TIMEOUT_SECS,
                bollard::API_DEFAULT_VERSION,
                config.ssh_key.as_ref().map(|p| p.display().to_string()),
            )
            .map_err(|e| unavailable(e.to_string()))?,
            other => {
                return Err(refused(&format!(
                    "`{other}://` is not an engine address; use unix://, tcp:// or ssh://"
                )));
            }
        };
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .unwrap_or_else(|_| "localhost".to_owned());
        Ok(Engine {
            docker,
            name: config.name.clone().unwrap_or_else(|| host.clone()),
            local: scheme == "unix",
            host,
            owner: format!("{hostname}:{}", std::process::id()),
            instance: uuid::Uuid::new_v4().simple().to_string(),
        })
    }

    /// What messages call this engine.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the engine runs on this machine (reached through a local socket), so a
    /// container can bind-mount the workspace.
    pub fn is_local(&self) -> bool {
        self.local
    }

    /// The bollard client, for the DevOps tools that manage the engine's objects.
    pub fn docker(&self) -> &Docker {
        &self.docker
    }

    /// This process's owner label value.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Agree on the API version with the engine: older engines (Debian's Docker speaks 1.41)
    /// refuse requests of a newer version than theirs.
    pub async fn negotiated(self) -> Result<Engine, SandboxError> {
        let negotiate = self.docker.clone().negotiate_version();
        match tokio::time::timeout(Duration::from_secs(5), negotiate).await {
            Ok(Ok(docker)) => Ok(Engine { docker, ..self }),
            Ok(Err(e)) => Err(self.failed(&e)),
            Err(_) => Err(SandboxError::EngineUnavailable {
                host: self.host.clone(),
                reason: "no answer within 5 s".to_owned(),
            }),
        }
    }

    /// Why a first request failed: a certificate the TLS check refused (typed, from rustls, so
    /// not a guess from the message), or an engine that does not answer.
    fn failed(&self, e: &bollard::errors::Error) -> SandboxError {
        match tls_refusal(e) {
            Some(reason) => SandboxError::EngineUntrusted {
                host: self.host.clone(),
                reason,
            },
            None => SandboxError::EngineUnavailable {
                host: self.host.clone(),
                reason: short_engine_error(e),
            },
        }
    }

    /// Fails with [`SandboxError::EngineUnavailable`] unless the engine answers.
    pub async fn ping(&self) -> Result<(), SandboxError> {
        match tokio::time::timeout(Duration::from_secs(5), self.docker.ping()).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(self.failed(&e)),
            Err(_) => Err(SandboxError::EngineUnavailable {
                host: self.host.clone(),
                reason: "no answer within 5 s".to_owned(),
            }),
        }
    }

    /// The median time of five pings: what every request to this engine costs at least.
    pub async fn round_trip(&self) -> Result<Duration, SandboxError> {
        let mut times = Vec::with_capacity(5);
        for _ in 0..5 {
            let t = std::time::Instant::now();
            self.ping().await?;
            times.push(t.elapsed());
        }
        times.sort();
        Ok(times[2])
    }

    /// Fails with [`SandboxError::ImageMissing`] unless `image` is on the engine. Images are
    /// never pulled implicitly: what runs is what the user put there.
    pub async fn check_image(&self, runtime: &str, image: &str) -> Result<(), SandboxError> {
        match self.docker.inspect_image(image).await {
            Ok(_) => Ok(()),
            Err(e) => Err(SandboxError::ImageMissing {
                runtime: runtime.to_owned(),
                image: image.to_owned(),
                reason: short_engine_error(&e),
            }),
        }
    }

    /// Create and start a container that idles (`sleep infinity` under an init process) until
    /// code is run in it with `exec`.
    pub async fn start(
        &self,
        spec: &ContainerSpec,
        limits: &Limits,
    ) -> Result<String, SandboxError> {
        let body = container_body(spec, limits, &self.owner, &self.instance);
        let name = format!("cairn-{}-{}", spec.kind, uuid::Uuid::new_v4().simple());
        let options = CreateContainerOptionsBuilder::default().name(&name).build();
        let created = self.docker.create_container(Some(options), body).await?;
        if let Err(e) = self.docker.start_container(&created.id, None).await {
            self.remove(&created.id).await;
            return Err(e.into());
        }
        if spec.volume.is_some() {
            // A new volume belongs to root; open it to the sandbox user. Run as uid 0 but with
            // every capability dropped, so this can change only what root owns there.
            let root = limits.clone();
            let command = crate::exec::Command {
                argv: vec!["chmod".into(), "1777".into(), SITE_DIR.into()],
                user: Some("0:0".to_owned()),
                ..Default::default()
            };
            let cancel = tokio_util::sync::CancellationToken::new();
            if let Err(e) = crate::exec::exec(self, &created.id, &command, &root, &cancel).await {
                self.remove(&created.id).await;
                return Err(e);
            }
        }
        Ok(created.id)
    }

    /// Remove a container, killing what runs in it. Errors are logged: a container that is
    /// already gone is the goal.
    pub async fn remove(&self, id: &str) {
        let options = RemoveContainerOptionsBuilder::default()
            .force(true)
            .v(true)
            .build();
        for attempt in 0..3 {
            match self
                .docker
                .remove_container(id, Some(options.clone()))
                .await
            {
                Ok(()) => return,
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404, ..
                }) => return,
                Err(e) => {
                    tracing::warn!(container = id, attempt, "removing a sandbox failed: {e}");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
    }

    /// Create a labelled volume (kept if it exists).
    pub async fn create_volume(&self, name: &str) -> Result<(), SandboxError> {
        let request = bollard::models::VolumeCreateRequest {
            name: Some(name.to_owned()),
            labels: Some(HashMap::from([
                (LABEL.to_owned(), "1".to_owned()),
                (OWNER_LABEL.to_owned(), self.owner.clone()),
            ])),
            ..Default::default()
        };
        self.docker.create_volume(request).await?;
        Ok(())
    }

    pub async fn remove_volume(&self, name: &str) {
        let options = bollard::query_parameters::RemoveVolumeOptionsBuilder::default()
            .force(true)
            .build();
        if let Err(e) = self.docker.remove_volume(name, Some(options)).await {
            tracing::debug!(volume = name, "removing a volume failed: {e}");
        }
    }

    /// Containers with cairn's label, optionally only those this engine connection made.
    pub async fn list(
        &self,
        only_ours: bool,
    ) -> Result<Vec<bollard::models::ContainerSummary>, SandboxError> {
        let mut filters: HashMap<String, Vec<String>> = HashMap::new();
        let label = if only_ours {
            format!("{INSTANCE_LABEL}={}", self.instance)
        } else {
            LABEL.to_owned()
        };
        filters.insert("label".to_owned(), vec![label]);
        let options = ListContainersOptionsBuilder::default()
            .all(true)
            .filters(&filters)
            .build();
        Ok(self.docker.list_containers(Some(options)).await?)
    }

    /// Containers of other cairn processes running here and not idle (warm ones do not count):
    /// how busy the engine is for placement, next to this process's own runs.
    pub async fn busy_elsewhere(&self) -> Result<usize, SandboxError> {
        let mut filters: HashMap<String, Vec<String>> = HashMap::new();
        filters.insert("label".to_owned(), vec![LABEL.to_owned()]);
        filters.insert("status".to_owned(), vec!["running".to_owned()]);
        let options = ListContainersOptionsBuilder::default()
            .filters(&filters)
            .build();
        let listed = self.docker.list_containers(Some(options)).await?;
        Ok(listed
            .iter()
            .filter(|c| {
                let label = |k: &str| c.labels.as_ref().and_then(|l| l.get(k)).cloned();
                label(KIND_LABEL).as_deref() != Some("pool")
                    && label(OWNER_LABEL).as_deref() != Some(self.owner.as_str())
            })
            .count())
    }

    /// Remove the containers of cairn processes on this host that are gone (a crash, a kill),
    /// and return how many were removed. Containers of live processes are left alone: several
    /// editors may share the engine.
    pub async fn reap_leftovers(&self) -> Result<usize, SandboxError> {
        let hostname = self.owner.split(':').next().unwrap_or_default().to_owned();
        let mut reaped = 0;
        for c in self.list(false).await? {
            let owner = c
                .labels
                .as_ref()
                .and_then(|l| l.get(OWNER_LABEL))
                .cloned()
                .unwrap_or_default();
            let Some((host, pid)) = owner.rsplit_once(':') else {
                continue;
            };
            let alive = pid
                .parse::<u32>()
                .ok()
                .is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
            if host == hostname
                && !alive
                && owner != self.owner
                && let Some(id) = &c.id
            {
                self.remove(id).await;
                reaped += 1;
            }
        }
        Ok(reaped)
    }
}

/// Whether `host:port` names this machine's loopback.
fn is_loopback(addr: &str) -> bool {
    let host = addr.rsplit_once(':').map_or(addr, |(h, _)| h);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The engine's error without its HTTP wrapping; a connection error with its causes (the
/// client's own message only says that connecting failed, not that a certificate expired).
/// The certificate fault rustls found in `e`'s causes, if the TLS check is what failed (it
/// travels inside `io::Error`s, nested, whose own `source()` skips what they wrap).
fn tls_refusal(e: &bollard::errors::Error) -> Option<String> {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(tls @ rustls::Error::InvalidCertificate(_)) = c.downcast_ref::<rustls::Error>()
        {
            return Some(tls.to_string());
        }
        cause = match c
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(wrapped) => Some(wrapped as &(dyn std::error::Error + 'static)),
            None => c.source(),
        };
    }
    None
}

pub(crate) fn short_engine_error(e: &bollard::errors::Error) -> String {
    match e {
        bollard::errors::Error::DockerResponseServerError { message, .. } => message.clone(),
        other => {
            let mut text = other.to_string();
            let mut cause = std::error::Error::source(other);
            while let Some(c) = cause {
                let next = c.to_string();
                if !text.contains(&next) {
                    text.push_str(": ");
                    text.push_str(&next);
                }
                cause = c.source();
            }
            text
        }
    }
}

fn container_body(
    spec: &ContainerSpec,
    limits: &Limits,
    owner: &str,
    instance: &str,
) -> ContainerCreateBody {
    let mut labels = HashMap::from([
        (LABEL.to_owned(), "1".to_owned()),
        (OWNER_LABEL.to_owned(), owner.to_owned()),
        (INSTANCE_LABEL.to_owned(), instance.to_owned()),
        (KIND_LABEL.to_owned(), spec.kind.to_owned()),
    ]);
    if let Some(session) = &spec.session {
        labels.insert(SESSION_LABEL.to_owned(), session.clone());
    }
    let mut tmpfs = HashMap::from([(
        "/tmp".to_owned(),
        format!("rw,exec,nosuid,nodev,size={},mode=1777", limits.tmpfs_bytes),
    )]);
    let mut binds = Vec::new();
    let mut mounts = Vec::new();
    if let Some(volume) = &spec.volume {
        // Mounted over the tmpfs at /tmp: packages outlive one container.
        binds.push(format!("{volume}:{SITE_DIR}:rw"));
    }
    if spec.workspace.as_ref().is_some_and(|w| w.archive) {
        // A tmpfs the workspace's archive is unpacked into after the start: in memory (counted
        // in the container's), gone with the container, nothing left on the engine's disk. Its
        // top is made writable by the run's user only when the run may write the workspace
        // (`service::ship`).
        tmpfs.insert(
            WORKSPACE_DIR.to_owned(),
            format!(
                "rw,exec,nosuid,nodev,size={},mode=0755",
                limits.workspace_bytes
            ),
        );
    } else if let Some(ws) = &spec.workspace {
        let mode = if ws.writable { "rw" } else { "ro" };
        binds.push(format!("{}:{WORKSPACE_DIR}:{mode}", ws.root.display()));
        // Hidden files are covered by an empty file, files that run code by themselves; both
        // through the mount API, not `binds`: a `:` or `,` in a file name cannot change what is
        // mounted, or how.
        let covers = ws.masked_files.iter().map(|f| (f, Path::new("/dev/null")));
        let keeps = ws.read_only.iter().map(|f| (f, f.as_path()));
        for (path, source) in covers.chain(keeps) {
            if let Ok(rel) = path.strip_prefix(&ws.root) {
                mounts.push(Mount {
                    target: Some(format!("{WORKSPACE_DIR}/{}", rel.display())),
                    source: Some(source.display().to_string()),
                    typ: Some(MountType::BIND),
                    read_only: Some(true),
                    ..Default::default()
                });
            }
        }
        for dir in &ws.masked_dirs {
            if let Ok(rel) = dir.strip_prefix(&ws.root) {
                tmpfs.insert(
                    format!("{WORKSPACE_DIR}/{}", rel.display()),
                    "ro,noexec,nosuid,nodev,size=4k".to_owned(),
                );
            }
        }
    }
    #[allow(clippy::cast_possible_truncation)]
    let nano_cpus = (limits.cpus * 1e9) as i64;
    let host_config = HostConfig {
        nano_cpus: Some(nano_cpus),
        memory: Some(limits.memory_bytes),
        // Equal to memory: no swap on top.
        memory_swap: Some(limits.memory_bytes),
        pids_limit: Some(limits.pids_limit),
        readonly_rootfs: Some(true),
        tmpfs: Some(tmpfs),
        cap_drop: Some(vec!["ALL".to_owned()]),
        security_opt: Some(vec!["no-new-privileges".to_owned()]),
        init: Some(true),
        network_mode: Some(if spec.network { "bridge" } else { "none" }.to_owned()),
        binds: (!binds.is_empty()).then_some(binds),
        mounts: (!mounts.is_empty()).then_some(mounts),
        group_add: spec
            .workspace
            .as_ref()
            .map(|w| w.run_as.groups.clone())
            .filter(|g| !g.is_empty()),
        ..Default::default()
    };
    let working_dir = if spec.workspace.is_some() {
        WORKSPACE_DIR
    } else {
        "/tmp"
    };
    ContainerCreateBody {
        image: Some(spec.image.clone()),
        cmd: Some(vec!["sleep".to_owned(), "infinity".to_owned()]),
        // With the workspace, the user chosen for it (`RunAs::for_workspace`), so its files read
        // (and, when writable, are written) as they would for the user; otherwise `nobody`.
        user: Some(
            spec.workspace
                .as_ref()
                .map_or_else(|| limits.user.clone(), |w| w.run_as.user.clone()),
        ),
        working_dir: Some(working_dir.to_owned()),
        env: Some(vec![
            "HOME=/tmp".to_owned(),
            "TMPDIR=/tmp".to_owned(),
            "PYTHONDONTWRITEBYTECODE=1".to_owned(),
            "PYTHONUNBUFFERED=1".to_owned(),
        ]),
        labels: Some(labels),
        network_disabled: Some(!spec.network),
        host_config: Some(host_config),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn me(uid: u32, gid: u32, groups: &[u32]) -> Identity {
        Identity {
            uid,
            gid,
            groups: groups.to_vec(),
        }
    }

    /// A directory owned by `uid:gid` with `mode` (the tests run as root, which may chown).
    fn owned(uid: u32, gid: u32, mode: u32) -> tempfile::TempDir {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap();
        if rustix::process::geteuid().is_root() {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid)).unwrap();
        }
        dir
    }

    #[test]
    fn a_user_s_cairn_runs_its_sandboxes_as_that_user_whoever_owns_the_workspace() {
        // Owned by another user: the container still runs as the user (with their groups), so
        // it reads what the user may read and nothing of the owner's that the user may not.
        let dir = owned(4343, 4343, 0o755);
        let run_as = RunAs::for_workspace(&me(1000, 1000, &[1000, 27, 4343]), dir.path()).unwrap();
        assert_eq!(
            run_as,
            RunAs {
                user: "1000:1000".into(),
                groups: vec!["27".into(), "4343".into()],
            }
        );
        // Their own 0700 folder: themselves, never `nobody`.
        let dir = owned(1000, 1000, 0o700);
        let run_as = RunAs::for_workspace(&me(1000, 1000, &[]), dir.path()).unwrap();
        assert_eq!(run_as.user, "1000:1000");
    }

    #[test]
    fn a_root_cairn_runs_as_the_owner_or_nobody_or_says_why_not() {
        if !rustix::process::geteuid().is_root() {
            return;
        }
        let root = me(0, 0, &[0]);
        let dir = owned(4242, 4343, 0o700);
        assert_eq!(
            RunAs::for_workspace(&root, dir.path()).unwrap(),
            RunAs {
                user: "4242:4343".into(),
                groups: Vec::new()
            }
        );
        let dir = owned(0, 0, 0o755);
        assert_eq!(
            RunAs::for_workspace(&root, dir.path()).unwrap().user,
            "65534:65534"
        );
        let dir = owned(0, 0, 0o700);
        let e = RunAs::for_workspace(&root, dir.path()).unwrap_err();
        let shown = dir.path().display();
        assert_eq!(
            e.to_string(),
            format!(
                "refused to mount the workspace `{shown}` in the sandbox: it belongs to root with \
                 mode 0700; a sandbox never runs as root, and its user `nobody` (uid 65534) may \
                 not open it. Let others read it (`chmod o+rx {shown}`), give it to your own user \
                 (`chown -R USER {shown}`), or run cairn as the user who owns the files"
            )
        );
    }

    #[test]
    fn entering_a_directory_follows_its_permission_bits() {
        let nobody = me(NOBODY, NOBODY, &[]);
        assert!(may_enter(&nobody, 0, 0, 0o755));
        assert!(!may_enter(&nobody, 0, 0, 0o750));
        assert!(!may_enter(&nobody, 0, 0, 0o704), "listing needs x too");
        assert!(
            may_enter(&me(5, 7, &[9]), 0, 9, 0o750),
            "a supplementary group"
        );
        assert!(
            !may_enter(&me(5, 7, &[]), 5, 9, 0o077),
            "the owner's bits, not others'"
        );
    }

    #[test]
    fn the_default_limits_are_the_documented_ones() {
        let limits = Limits::from_config(&SandboxConfig::default());
        let cores = std::thread::available_parallelism().map_or(1.0, |n| n.get() as f64);
        assert_eq!(limits.cpus, 2.0_f64.min(cores));
        assert_eq!(limits.memory_bytes, 4 * 1024 * 1024 * 1024);
        assert_eq!(limits.timeout, Duration::from_secs(60));
        assert_eq!(limits.pids_limit, 256);
        assert_eq!(limits.output_max_bytes, 1024 * 1024);
        assert_eq!(limits.tmpfs_bytes, 256 * 1024 * 1024);
        assert_eq!(limits.user, "65534:65534");
    }

    #[test]
    fn every_container_is_made_with_the_limits_and_without_privileges() {
        let limits = Limits {
            cpus: 1.5,
            ..Limits::from_config(&SandboxConfig::default())
        };
        let spec = ContainerSpec {
            image: "img".into(),
            kind: "run",
            network: false,
            workspace: Some(WorkspaceMount {
                root: PathBuf::from("/home/u/proj"),
                writable: false,
                masked_files: vec![PathBuf::from("/home/u/proj/node_modules/p/.env")],
                masked_dirs: vec![PathBuf::from("/home/u/proj/.git")],
                read_only: vec![PathBuf::from("/home/u/proj/.cargo/config.toml")],
                run_as: RunAs {
                    user: "1000:1000".into(),
                    groups: vec!["27".into()],
                },
                scope: None,
                archive: false,
            }),
            session: None,
            volume: None,
        };
        let body = container_body(&spec, &limits, "host:1", "inst");
        let host = body.host_config.unwrap();
        assert_eq!(host.nano_cpus, Some(1_500_000_000));
        assert_eq!(host.memory, Some(4 * 1024 * 1024 * 1024));
        assert_eq!(host.memory_swap, host.memory, "no swap on top of memory");
        assert_eq!(host.pids_limit, Some(256));
        assert_eq!(host.readonly_rootfs, Some(true));
        assert_eq!(host.cap_drop, Some(vec!["ALL".to_owned()]));
        assert_eq!(
            host.security_opt,
            Some(vec!["no-new-privileges".to_owned()])
        );
        assert_eq!(host.init, Some(true));
        assert_eq!(host.network_mode.as_deref(), Some("none"));
        assert_eq!(body.network_disabled, Some(true));
        let tmpfs = host.tmpfs.unwrap();
        assert_eq!(
            tmpfs["/tmp"],
            format!("rw,exec,nosuid,nodev,size={},mode=1777", 256 * 1024 * 1024)
        );
        assert_eq!(tmpfs["/workspace/.git"], "ro,noexec,nosuid,nodev,size=4k");
        assert_eq!(host.binds.unwrap(), ["/home/u/proj:/workspace:ro"]);
        assert_eq!(
            host.mounts.unwrap(),
            [
                Mount {
                    target: Some("/workspace/node_modules/p/.env".into()),
                    source: Some("/dev/null".into()),
                    typ: Some(MountType::BIND),
                    read_only: Some(true),
                    ..Default::default()
                },
                Mount {
                    target: Some("/workspace/.cargo/config.toml".into()),
                    source: Some("/home/u/proj/.cargo/config.toml".into()),
                    typ: Some(MountType::BIND),
                    read_only: Some(true),
                    ..Default::default()
                }
            ]
        );
        assert_eq!(body.user.as_deref(), Some("1000:1000"));
        assert_eq!(host.group_add, Some(vec!["27".to_owned()]));
        // Without the workspace: `nobody`, no groups.
        let body = container_body(
            &ContainerSpec {
                workspace: None,
                ..spec
            },
            &limits,
            "host:1",
            "inst",
        );
        assert_eq!(body.user.as_deref(), Some("65534:65534"));
        assert_eq!(body.host_config.unwrap().group_add, None);
    }
}
