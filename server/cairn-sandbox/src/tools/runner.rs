//! What the seven `run_<language>` tools share: their arguments, their description and the run.

use cairn_toolkit::{CallContext, JsonSchema};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{Code, outcome, report_result};
use crate::runtimes::Runtime;

/// Arguments of every `run_<language>` tool.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeArgs {
    /// The program's source.
    code: String,
    /// Ask the user for network access for this run (default: no network).
    #[serde(default)]
    network: bool,
    /// Ask the user to mount the workspace writable (default: read-only at /workspace).
    #[serde(default)]
    workspace_write: bool,
}

/// The description of a `run_<language>` tool, for the language as the model knows it.
macro_rules! describe {
    ($language:literal) => {
        concat!(
            "Run a ",
            $language,
            " program in a fresh sandbox container (no network, workspace read-only at /workspace, 60 s, 4 GiB, 2 CPUs by default) and return its exit code, stdout and stderr. Use it to compute, test an idea, or check behaviour; give the whole program in `code`."
        )
    };
}
pub(super) use describe;

/// Runs `args.code` with `runtime` in a fresh container, with the powers the call was granted.
pub(super) async fn run(
    host: &Code,
    runtime: &Runtime,
    args: CodeArgs,
    cx: &CallContext,
) -> CallToolResult {
    outcome(
        async {
            let options = host
                .options(args.network, args.workspace_write, None)
                .await?;
            let run = host
                .sandbox
                .run_code(runtime, &args.code, options, &cx.cancel);
            let report = host
                .checkpointed(args.workspace_write, run)
                .await
                .map_err(|e| e.to_string())?;
            Ok(report_result(&report, &host.sandbox))
        }
        .await,
    )
}
