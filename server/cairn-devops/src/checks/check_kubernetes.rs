//! `check_kubernetes`: Kubernetes manifests validated offline against the Kubernetes schemas
//! `kubernetes-validate` bundles, kustomize directories rendered first (without Helm).

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{Finding, Severity, num, outcome, relative, report, run, string, tool_failure};
use crate::DevOps;

/// The `check_kubernetes` tool.
pub struct CheckKubernetes;

/// Arguments of `check_kubernetes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Manifest files (YAML, several documents each allowed), or directories with a
    /// `kustomization.yaml` to render and validate, relative to the workspace root.
    paths: Vec<String>,
    /// Kubernetes version to validate against, like "1.30" (default: the newest bundled).
    #[serde(default)]
    version: Option<String>,
    /// Also show the rendered output of kustomize directories.
    #[serde(default)]
    show_rendered: bool,
}

/// The driver (Python, run in the image): parses, renders and validates, prints JSON.
const DRIVER: &str = include_str!("k8s_driver.py");
/// Most bytes of rendered output shown.
const MAX_RENDERED: usize = 20_000;

const SCRIPT: &str = "d=$1; shift; printf '@@version kubernetes-validate %s\\n' \"$(python3 -c 'import kubernetes_validate.version as v; print(v.__version__)' 2>&1 | head -n 1)\"; exec python3 -c \"$d\" \"$@\"";

impl Tool for CheckKubernetes {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "check_kubernetes";
    const TITLE: &'static str = "Check Kubernetes manifests";
    const DESCRIPTION: &'static str = "Validate Kubernetes manifests offline against the official schemas of a Kubernetes version (strict: unknown fields are errors), in a sandbox; a directory with kustomization.yaml is rendered first (resources, namePrefix/Suffix, namespace, commonLabels; no Helm, no remote bases) and can be shown. Custom resources are not checked.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;
    const NEEDS_WORKSPACE: bool = true;

    /// A kustomize directory is read whole: its resources are declared by the directory.
    fn paths(args: &Args) -> Paths {
        Paths::read_all(args.paths.iter().cloned())
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        outcome(check(host, args, &cx).await)
    }
}

async fn check(host: &DevOps, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let version = args.version.unwrap_or_else(|| "latest".into());
    if !version
        .trim_start_matches('v')
        .split('.')
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        && version != "latest"
    {
        return Err(format!(
            "version {version:?} is not a Kubernetes version like \"1.30\""
        ));
    }
    let files = super::workspace_files(host, &args.paths, true).await?;
    let mut argv = vec![
        DRIVER.to_owned(),
        version,
        if args.show_rendered { "1" } else { "0" }.to_owned(),
    ];
    argv.extend(files.iter().cloned());
    let run = run(host, SCRIPT, argv, None, cx).await?;
    let Some(json) = serde_json::from_str::<Value>(run.stdout.trim())
        .ok()
        .filter(|_| run.exit == 0)
    else {
        return Ok(tool_failure("kubernetes-validate", &run));
    };
    if let Some(fatal) = json["fatal"].as_str() {
        return Err(fatal.to_owned());
    }
    let findings = json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| Finding {
            file: relative(&string(&f["file"])),
            line: num(&f["line"]),
            col: num(&f["col"]),
            severity: Severity::parse(f["severity"].as_str().unwrap_or("error")),
            code: string(&f["code"]),
            message: string(&f["message"]),
        })
        .collect();
    let mut notes: Vec<String> = json["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|n| format!("note: {}", relative(n.as_str().unwrap_or_default())))
        .collect();
    for r in json["rendered"].as_array().into_iter().flatten() {
        let r = r.as_str().unwrap_or_default();
        notes.push(format!(
            "--- rendered\n{}",
            cairn_toolkit::table::cut(r.trim_end(), MAX_RENDERED)
        ));
    }
    notes.push(format!("{} objects validated", num(&json["objects"])));
    let version = format!(
        "{}, schemas of Kubernetes {}",
        run.version,
        string(&json["version"])
    );
    Ok(report(&version, &files, findings, &notes))
}
