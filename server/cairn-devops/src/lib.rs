//! The DevOps tools (category `devops`), one type per file, served in-process as the
//! [`ToolSet`] [`devops_tools`] builds from [`DEVOPS_TOOLS`].
//!
//! Three kinds: the Docker engine through bollard, over the connection the sandbox already uses
//! (`docker/`); checks of the files DevOps lives in, each run by the real linter inside a sandbox
//! container with the sandbox's limits, the workspace read-only and no network (`checks/`); and
//! release chores from the repository and through the web guard (`release/`).
//!
//! A change to the engine's state asks (effect `write`), naming the container or image; removing
//! or pruning anything cairn did not create is refused until the user approves that exact object
//! once (the same exact-approval path protected files take), so a session grant never covers it.

mod checks;
mod docker;
mod release;

use std::sync::Arc;

use cairn_sandbox::Sandbox;
use cairn_toolkit::{Entry, ToolSet};
use cairn_web::WebGuard;
use cairn_workspace::{ExactApprovals, Workspace};

/// What the DevOps tools share: the sandbox service (and through it the engine), the web guard,
/// the workspace when a folder is open, and where exact approvals are held.
pub struct DevOps {
    sandbox: Arc<Sandbox>,
    guard: Option<Arc<WebGuard>>,
    workspace: Option<Arc<Workspace>>,
    approvals: Arc<ExactApprovals>,
    /// Who the web guard's per-user rate limit counts these tools' requests against.
    user: String,
}

impl std::fmt::Debug for DevOps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevOps").finish_non_exhaustive()
    }
}

impl cairn_toolkit::Host for DevOps {
    fn workspace(&self) -> Option<&Arc<Workspace>> {
        self.workspace.as_ref()
    }
}

impl DevOps {
    /// The tools' host. Without a guard the tools that reach the network refuse every call;
    /// without a workspace the tools over workspace files are not offered.
    pub fn new(
        sandbox: Arc<Sandbox>,
        guard: Option<Arc<WebGuard>>,
        workspace: Option<Arc<Workspace>>,
        approvals: Arc<ExactApprovals>,
    ) -> DevOps {
        DevOps {
            sandbox,
            guard,
            workspace,
            approvals,
            user: "local".into(),
        }
    }

    /// The user the web guard counts requests against (the access identity).
    pub fn with_user(mut self, user: impl Into<String>) -> DevOps {
        self.user = user.into();
        self
    }
}

/// The DevOps tools, in the order listed.
pub const DEVOPS_TOOLS: &[Entry<DevOps>] = &[
    // the Docker engine (docker/)
    Entry::of::<docker::containers::DockerContainers>(),
    Entry::of::<docker::inspect::DockerInspect>(),
    Entry::of::<docker::logs::DockerLogs>(),
    Entry::of::<docker::stats::DockerStats>(),
    Entry::of::<docker::images::DockerImages>(),
    Entry::of::<docker::networks::DockerNetworks>(),
    Entry::of::<docker::volumes::DockerVolumes>(),
    Entry::of::<docker::compose_status::ComposeStatus>(),
    Entry::of::<docker::compose_logs::ComposeLogs>(),
    Entry::of::<docker::start::DockerStart>(),
    Entry::of::<docker::stop::DockerStop>(),
    Entry::of::<docker::restart::DockerRestart>(),
    Entry::of::<docker::remove::DockerRemove>(),
    Entry::of::<docker::prune::DockerPrune>(),
    Entry::of::<docker::build::DockerBuild>(),
    // checks of files (checks/)
    Entry::of::<checks::lint_dockerfile::LintDockerfile>(),
    Entry::of::<checks::lint_shell::LintShell>(),
    Entry::of::<checks::lint_yaml::LintYaml>(),
    Entry::of::<checks::check_ci_workflow::CheckCiWorkflow>(),
    Entry::of::<checks::check_kubernetes::CheckKubernetes>(),
    Entry::of::<checks::check_terraform::CheckTerraform>(),
    Entry::of::<checks::check_ansible::CheckAnsible>(),
    Entry::of::<checks::check_systemd_unit::CheckSystemdUnit>(),
    Entry::of::<checks::check_compose::CheckCompose>(),
    // release chores (release/)
    Entry::of::<release::next_version::NextVersion>(),
    Entry::of::<release::changelog::Changelog>(),
    Entry::of::<release::tls_certificate::TlsCertificate>(),
    Entry::of::<release::http_health_check::HttpHealthCheck>(),
];

/// The DevOps tools over `host`.
pub fn devops_tools(host: DevOps) -> ToolSet<DevOps> {
    ToolSet::new(host, DEVOPS_TOOLS)
}
