//! `check_terraform`: Terraform/OpenTofu modules parsed and their references checked in a
//! sandbox. No terraform or OpenTofu binary installs offline from the registries cairn's
//! machines reach, so this is not `terraform validate`: the HCL is parsed by `python-hcl2`
//! (syntax errors with their place) and every `var.`, `local.`, `module.`, `data.` and
//! resource reference is checked against the module's declarations.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{Finding, Severity, num, outcome, relative, report, run, string, tool_failure};
use crate::DevOps;

/// The `check_terraform` tool.
pub struct CheckTerraform;

/// Arguments of `check_terraform`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Module directories (all their `.tf` files are checked together), or `.tf` files
    /// (their whole directory is checked), relative to the workspace root.
    paths: Vec<String>,
}

/// The driver (Python, run in the image): parses, checks references, prints JSON.
const DRIVER: &str = include_str!("tf_driver.py");

const SCRIPT: &str = "d=$1; shift; printf '@@version python-hcl2 %s\\n' \"$(python3 -c 'import hcl2.version as v; print(v.version)' 2>&1 | head -n 1)\"; exec python3 -c \"$d\" \"$@\"";

impl Tool for CheckTerraform {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "check_terraform";
    const TITLE: &'static str = "Check Terraform";
    const DESCRIPTION: &'static str = "Check Terraform/OpenTofu modules in a sandbox: HCL syntax errors with their line, and references to undeclared variables, locals, modules, data sources and resources. Not `terraform validate` (providers' schemas are not checked) and no `fmt` diff: no terraform binary is available offline.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Args) -> Paths {
        Paths::read_all(args.paths.iter().cloned())
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        outcome(check(host, args, &cx).await)
    }
}

async fn check(host: &DevOps, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let paths = super::workspace_files(host, &args.paths, true).await?;
    // A file stands for its module: the directory it is in.
    let mut dirs: Vec<String> = paths
        .iter()
        .map(|p| {
            if p.ends_with(".tf") {
                match p.rsplit_once('/') {
                    Some((dir, _)) => dir.to_owned(),
                    None => ".".to_owned(),
                }
            } else {
                p.clone()
            }
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    let mut argv = vec![DRIVER.to_owned()];
    argv.extend(dirs.iter().cloned());
    let run = run(host, SCRIPT, argv, None, cx).await?;
    let Some(json) = serde_json::from_str::<Value>(run.stdout.trim())
        .ok()
        .filter(|_| run.exit == 0)
    else {
        return Ok(tool_failure("the HCL check", &run));
    };
    let findings = json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| Finding {
            file: relative(string(&f["file"]).trim_start_matches("./")),
            line: num(&f["line"]),
            col: num(&f["col"]),
            severity: Severity::parse(f["severity"].as_str().unwrap_or("error")),
            code: string(&f["code"]),
            message: string(&f["message"]),
        })
        .collect();
    let notes = [format!(
        "{} .tf files parsed; not checked: provider schemas, types, `terraform fmt` style (no terraform binary offline)",
        num(&json["files"])
    )];
    Ok(report(&run.version, &dirs, findings, &notes))
}
