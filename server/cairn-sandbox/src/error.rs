//! Why a sandbox could not run, in words the model and the user can act on.

/// A sandbox that could not be set up or used. How a run *ended* (timeout, out of memory...) is
/// not an error: it is [`crate::Ending`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// No engine answers; the rest of cairn keeps working.
    #[error(
        "no container engine answers at {host} ({reason}). Code tools need one: start Docker \
         (`sudo systemctl start docker`, or `sudo dockerd &`), or point `sandbox.engine` \
         (or DOCKER_HOST) at a running engine; for Podman run `systemctl --user start \
         podman.socket` and use unix://$XDG_RUNTIME_DIR/podman/podman.sock"
    )]
    EngineUnavailable { host: String, reason: String },
    /// cairn would not talk to the engine as configured (plain TCP off loopback, half the TLS
    /// files, another scheme); nothing was sent.
    #[error("cairn refused the container engine at {host}: {reason}")]
    EngineRefused { host: String, reason: String },
    /// The engine's TLS certificate failed the check, so the handshake was ended before any
    /// request.
    #[error(
        "cairn refused the container engine at {host}: its TLS certificate is not trusted \
         ({reason}); nothing was sent to it. The certificate must be signed by the CA in \
         `tls_ca`, be issued for this host name or address, and be in date"
    )]
    EngineUntrusted { host: String, reason: String },
    /// The configured image is not on the engine.
    #[error(
        "the image `{image}` for {runtime} is not on the container engine ({reason}); pull it \
         (`docker pull {image}`), build the offline images with `scripts/sandbox-images`, or \
         set `sandbox.images.{runtime}`"
    )]
    ImageMissing {
        runtime: String,
        image: String,
        reason: String,
    },
    #[error("no runtime `{runtime}` is configured; the runtimes are {known}")]
    UnknownRuntime { runtime: String, known: String },
    #[error("the code is {size} bytes, over the {limit}-byte limit (sandbox.code_max_bytes)")]
    CodeTooLarge { size: usize, limit: usize },
    /// The workspace cannot be mounted with every protected file hidden.
    #[error(transparent)]
    Masks(#[from] cairn_workspace::MaskError),
    /// The container's user could not read the workspace; said before any container starts.
    #[error(
        "refused to mount the workspace `{root}` in the sandbox: {why}. Let others read it \
         (`chmod o+rx {root}`), give it to your own user (`chown -R USER {root}`), or run \
         cairn as the user who owns the files"
    )]
    WorkspaceUnreadable { root: String, why: String },
    #[error("refused: {0}")]
    Refused(String),
    #[error("no sandbox `{0}` of this cairn is running; `list_sandboxes` shows them")]
    NoSuchSandbox(String),
    #[error("the container engine failed: {0}")]
    Engine(String),
    /// The engine stopped answering while a run was in it.
    #[error(
        "the connection to the container engine {engine} was lost during the run ({reason}); \
         the run's outcome is unknown, nothing it did came back, and its container is removed \
         when cairn reaches the engine again"
    )]
    EngineLost { engine: String, reason: String },
    /// None of several engines could take the run.
    #[error("no container engine can take the run: {0}")]
    NoEngine(String),
    /// The workspace could not be sent, or what came back not applied.
    #[error(transparent)]
    Archive(#[from] cairn_workspace::archive::ArchiveError),
}

impl From<bollard::errors::Error> for SandboxError {
    fn from(e: bollard::errors::Error) -> Self {
        SandboxError::Engine(e.to_string())
    }
}
