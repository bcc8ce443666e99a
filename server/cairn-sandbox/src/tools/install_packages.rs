//! `install_packages`: pip packages for the chat's Python session.

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Code, report_result, session};

/// The `install_packages` tool.
pub struct InstallPackages;

/// Arguments of `install_packages`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Requirements such as `numpy` or `requests==2.32.3`.
    #[schemars(length(min = 1, max = 20))]
    packages: Vec<String>,
}

impl Tool for InstallPackages {
    type Host = Code;
    type Args = Args;
    const NAME: &'static str = "install_packages";
    const TITLE: &'static str = "Install packages";
    const DESCRIPTION: &'static str = "Install Python packages (pip) for this chat's Python session; needs network access, which the user is asked for.";
    const CATEGORY: Category = Category::Code;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const DESTRUCTIVE: bool = false;
    const OPEN_WORLD: bool = false;

    /// pip installs into the session's container, which has no workspace mount.
    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Code, args: Args, cx: CallContext) -> CallToolResult {
        // The schema's bounds are advice to the model; serde does not enforce them.
        if args.packages.is_empty() || args.packages.len() > 20 {
            return error("give between 1 and 20 packages");
        }
        let sb = &host.sandbox;
        match sb
            .install_packages(session(&cx), &args.packages, &cx.cancel)
            .await
        {
            Ok(report) => report_result(&report, sb),
            Err(e) => error(e.to_string()),
        }
    }
}
