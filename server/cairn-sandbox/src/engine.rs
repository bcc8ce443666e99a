//! The connection to a Docker-compatible engine, and the container each sandbox is.
//!
//! Every container is created here, from [`Limits`] the user configured and nothing the model
//! sent: the image comes from configuration, and the model's arguments never reach
//! [`ContainerSpec`] except as the code or command to run.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bollard::Docker;
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, ListContainersOptionsBuilder, RemoveContainerOptionsBuilder,
};
use cairn_config::SandboxConfig;

use crate::SandboxError;

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
            code_max_bytes: c.code_max_bytes,
            user: "65534:65534".to_owned(),
        }
    }
}

/// How the workspace is seen inside a container.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkspaceMount {
    /// The canonical workspace root on the host.
    pub root: PathBuf,
    pub writable: bool,
    /// Host paths under `root` hidden inside the container (protected or unreadable files are
    /// covered by an empty file, directories by an empty read-only tmpfs).
    pub masked_files: Vec<PathBuf>,
    pub masked_dirs: Vec<PathBuf>,
    /// `uid:gid` to run as: the owner of the root, when that is not root.
    pub run_as: Option<String>,
}

impl WorkspaceMount {
    /// The owner of `root` as `uid:gid`, unless it is root (a sandbox never runs as root).
    pub fn owner_of(root: &Path) -> Option<String> {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(root).ok()?;
        (meta.uid() != 0).then(|| format!("{}:{}", meta.uid(), meta.gid()))
    }
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
    owner: String,
    instance: String,
}

impl Engine {
    /// Connect (lazily: nothing is sent until the first request). `sandbox.docker_host`, else
    /// `DOCKER_HOST`, else the local socket; TLS when certificates are configured.
    pub fn connect(config: &SandboxConfig) -> Result<Engine, SandboxError> {
        let host = config
            .docker_host
            .clone()
            .or_else(|| std::env::var("DOCKER_HOST").ok().filter(|h| !h.is_empty()))
            .unwrap_or_else(|| "unix:///var/run/docker.sock".to_owned());
        let unavailable = |reason: String| SandboxError::EngineUnavailable {
            host: host.clone(),
            reason,
        };
        let timeout = 120;
        let docker = match (&config.tls_ca, &config.tls_cert, &config.tls_key) {
            (Some(ca), Some(cert), Some(key)) => {
                let addr = host.replace("tcp://", "https://");
                Docker::connect_with_ssl(
                    &addr,
                    key,
                    cert,
                    ca,
                    timeout,
                    bollard::API_DEFAULT_VERSION,
                )
                .map_err(|e| unavailable(e.to_string()))?
            }
            (None, None, None) => {
                Docker::connect_with_host(&host).map_err(|e| unavailable(e.to_string()))?
            }
            _ => {
                return Err(unavailable(
                    "TLS needs all of sandbox.tls_ca, sandbox.tls_cert and sandbox.tls_key"
                        .to_owned(),
                ));
            }
        };
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_owned())
            .unwrap_or_else(|_| "localhost".to_owned());
        Ok(Engine {
            docker,
            host,
            owner: format!("{hostname}:{}", std::process::id()),
            instance: uuid::Uuid::new_v4().simple().to_string(),
        })
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    pub(crate) fn docker(&self) -> &Docker {
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
            Ok(Err(e)) => Err(SandboxError::EngineUnavailable {
                host: self.host.clone(),
                reason: e.to_string(),
            }),
            Err(_) => Err(SandboxError::EngineUnavailable {
                host: self.host.clone(),
                reason: "no answer within 5 s".to_owned(),
            }),
        }
    }

    /// Fails with [`SandboxError::EngineUnavailable`] unless the engine answers.
    pub async fn ping(&self) -> Result<(), SandboxError> {
        match tokio::time::timeout(Duration::from_secs(5), self.docker.ping()).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(SandboxError::EngineUnavailable {
                host: self.host.clone(),
                reason: e.to_string(),
            }),
            Err(_) => Err(SandboxError::EngineUnavailable {
                host: self.host.clone(),
                reason: "no answer within 5 s".to_owned(),
            }),
        }
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

/// The engine's error without its HTTP wrapping.
pub(crate) fn short_engine_error(e: &bollard::errors::Error) -> String {
    match e {
        bollard::errors::Error::DockerResponseServerError { message, .. } => message.clone(),
        other => other.to_string(),
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
    if let Some(volume) = &spec.volume {
        // Mounted over the tmpfs at /tmp: packages outlive one container.
        binds.push(format!("{volume}:{SITE_DIR}:rw"));
    }
    if let Some(ws) = &spec.workspace {
        let mode = if ws.writable { "rw" } else { "ro" };
        binds.push(format!("{}:{WORKSPACE_DIR}:{mode}", ws.root.display()));
        for file in &ws.masked_files {
            if let Ok(rel) = file.strip_prefix(&ws.root) {
                binds.push(format!("/dev/null:{WORKSPACE_DIR}/{}:ro", rel.display()));
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
        // The workspace's owner when it is mounted and not root's, so its files can be read
        // (and, when writable, written) as its owner would; otherwise `nobody`.
        user: Some(
            spec.workspace
                .as_ref()
                .and_then(|w| w.run_as.clone())
                .unwrap_or_else(|| limits.user.clone()),
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
