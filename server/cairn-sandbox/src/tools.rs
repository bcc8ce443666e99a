//! The code-execution tools, served in-process as a [`ToolHost`] (category `code`).
//!
//! Arguments are `deny_unknown_fields` structs: a model that sends `image`, `privileged`,
//! `binds`, `env` or any other knob gets an error naming it, and nothing reaches the engine.
//! The two powers a call may ask for, `network` and `workspace_write`, are asked of the user by
//! the agent's gate under their own effects; the tool only applies what was approved.

use std::sync::Arc;

use cairn_agent::tools::{CallContext, Effect, ToolHost, ToolInfo};
use cairn_workspace::{Access, MaskLimits, Operation, Workspace};
use futures::future::BoxFuture;
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::engine::{Identity, RunAs, WORKSPACE_DIR, WorkspaceMount};
use crate::runtimes::{RUNTIMES, guess_test_command, runtime, runtime_for_extension, shell_quote};
use crate::{RunOptions, RunReport, Sandbox, SandboxError};

/// The tool names, in the order listed.
pub const CODE_TOOL_NAMES: [&str; 15] = [
    "run_python",
    "run_node",
    "run_bash",
    "run_ruby",
    "run_go",
    "run_rust",
    "run_perl",
    "run_file",
    "run_tests",
    "python_session",
    "install_packages",
    "list_sandboxes",
    "stop_sandbox",
    "copy_into_sandbox",
    "copy_out_of_sandbox",
];

/// The code tools over one sandbox service and (when there is one) the workspace.
#[derive(Clone)]
pub struct SandboxTools {
    sandbox: Arc<Sandbox>,
    workspace: Option<Arc<Workspace>>,
}

impl std::fmt::Debug for SandboxTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxTools").finish_non_exhaustive()
    }
}

impl SandboxTools {
    pub fn new(sandbox: Arc<Sandbox>, workspace: Option<Arc<Workspace>>) -> SandboxTools {
        SandboxTools { sandbox, workspace }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CodeArgs {
    code: String,
    #[serde(default)]
    network: bool,
    #[serde(default)]
    workspace_write: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileArgs {
    path: String,
    #[serde(default)]
    network: bool,
    #[serde(default)]
    workspace_write: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestArgs {
    filter: Option<String>,
    #[serde(default)]
    network: bool,
    #[serde(default)]
    workspace_write: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SessionArgs {
    code: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InstallArgs {
    packages: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StopArgs {
    id: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CopyInArgs {
    path: String,
    to: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CopyOutArgs {
    from: String,
    path: String,
}

fn schema(properties: Value, required: &[&str]) -> JsonObject {
    let mut s = Map::new();
    s.insert("type".into(), json!("object"));
    s.insert("properties".into(), properties);
    s.insert("required".into(), json!(required));
    s.insert("additionalProperties".into(), json!(false));
    s
}

fn powers() -> Value {
    json!({
        "network": {"type": "boolean", "description": "Ask the user for network access for this run (default: no network)."},
        "workspace_write": {"type": "boolean", "description": "Ask the user to mount the workspace writable (default: read-only at /workspace)."}
    })
}

fn with_powers(mut props: Value) -> Value {
    if let (Some(p), Value::Object(extra)) = (props.as_object_mut(), powers()) {
        p.extend(extra);
    }
    props
}

fn tool(name: &'static str, description: String, schema: JsonObject, read_only: bool) -> Tool {
    let annotations = ToolAnnotations::new()
        .read_only(read_only)
        .destructive(false)
        .open_world(false);
    Tool::new(name, description, Arc::new(schema)).with_annotations(annotations)
}

fn definitions() -> Vec<(Tool, Effect)> {
    let mut out = Vec::new();
    for rt in RUNTIMES {
        let name = CODE_TOOL_NAMES
            .iter()
            .find(|n| n.strip_prefix("run_") == Some(rt.name))
            .copied()
            .unwrap_or("run_python");
        let description = format!(
            "Run a {lang} program in a fresh sandbox container (no network, workspace read-only at /workspace, 60 s, 4 GiB, 2 CPUs by default) and return its exit code, stdout and stderr. Use it to compute, test an idea, or check behaviour; give the whole program in `code`.",
            lang = match rt.name {
                "python" => "Python 3",
                "node" => "JavaScript (Node.js)",
                "bash" => "bash",
                "ruby" => "Ruby",
                "go" => "Go (package main)",
                "rust" => "Rust (a main.rs)",
                _ => "Perl",
            }
        );
        out.push((
            tool(
                name,
                description,
                schema(
                    with_powers(
                        json!({"code": {"type": "string", "description": "The program's source."}}),
                    ),
                    &["code"],
                ),
                false,
            ),
            Effect::Execute,
        ));
    }
    out.push((tool("run_file", "Run a program file of the workspace (.py, .js, .sh, .rb, .go, .rs, .pl) in a sandbox, from its directory under /workspace; use it to run a project's script.".into(),
        schema(with_powers(json!({"path": {"type": "string", "description": "The file, relative to the workspace root."}})), &["path"]), false), Effect::Execute));
    out.push((tool("run_tests", "Run the project's tests in a sandbox (the command from sandbox.test_command, else guessed: cargo test, npm test, go test, pytest, rake, make test) with the workspace read-only; use it after a change to check it.".into(),
        schema(with_powers(json!({"filter": {"type": "string", "description": "One argument passed to the test command (a test name or pattern)."}})), &[]), false), Effect::Execute));
    out.push((tool("python_session", "Run Python code in this chat's persistent Python session: variables, imports and files in /tmp last between calls (same limits as a run; a timeout resets it). The value of a last expression is printed. Use it for step-by-step analysis.".into(),
        schema(json!({"code": {"type": "string", "description": "Python code to run in the session."}}), &["code"]), false), Effect::Execute));
    out.push((tool("install_packages", "Install Python packages (pip) for this chat's Python session; needs network access, which the user is asked for.".into(),
        schema(json!({"packages": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 20, "description": "Requirements such as `numpy` or `requests==2.32.3`."}}), &["packages"]), false), Effect::Network));
    out.push((tool("list_sandboxes", "List the sandbox containers of this cairn: the chat sessions' Python sessions and any run in progress, with image and age.".into(),
        schema(json!({}), &[]), true), Effect::Read));
    out.push((tool("stop_sandbox", "Stop and remove a sandbox: this chat's Python session by default, or one `list_sandboxes` shows by id. Its state is lost.".into(),
        schema(json!({"id": {"type": "string", "description": "A container id from list_sandboxes; default this chat's Python session."}}), &[]), false), Effect::Write));
    out.push((tool("copy_into_sandbox", "Copy a workspace file into this chat's Python session, under /tmp, so session code can read it.".into(),
        schema(json!({"path": {"type": "string", "description": "The workspace file."}, "to": {"type": "string", "description": "Where in the sandbox, under /tmp (default: /tmp/<file name>)."}}), &["path"]), false), Effect::Execute));
    out.push((tool("copy_out_of_sandbox", "Copy a text file out of this chat's Python session (under /tmp) into the workspace, for example a result the session wrote.".into(),
        schema(json!({"from": {"type": "string", "description": "The file in the sandbox, under /tmp."}, "path": {"type": "string", "description": "The workspace file to write (it must not exist)."}}), &["from", "path"]), false), Effect::Write));
    out
}

fn parse<T: DeserializeOwned>(tool: &str, args: Map<String, Value>) -> Result<T, String> {
    serde_json::from_value(Value::Object(args))
        .map_err(|e| format!("invalid arguments for {tool}: {e}"))
}

fn text(t: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(t)])
}

fn error(t: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(t)])
}

fn report_result(report: &RunReport, sandbox: &Sandbox) -> CallToolResult {
    let body = report.to_text(sandbox.limits());
    if report.failed() {
        error(body)
    } else {
        text(body)
    }
}

impl ToolHost for SandboxTools {
    fn list(&self) -> Vec<ToolInfo> {
        definitions()
            .into_iter()
            .map(|(tool, effect)| ToolInfo {
                tool,
                effect,
                category: "code".into(),
                agent_only: false,
                origin: None,
            })
            .collect()
    }

    fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        ctx: CallContext,
    ) -> BoxFuture<'_, CallToolResult> {
        let name = name.to_owned();
        Box::pin(async move {
            match self.dispatch(&name, arguments, &ctx).await {
                Ok(result) => result,
                Err(message) => error(message),
            }
        })
    }
}

impl SandboxTools {
    async fn dispatch(
        &self,
        name: &str,
        args: Map<String, Value>,
        ctx: &CallContext,
    ) -> Result<CallToolResult, String> {
        let cancel = &ctx.cancel;
        let session = if ctx.session_id.is_empty() {
            "default"
        } else {
            ctx.session_id.as_str()
        };
        let sb = &self.sandbox;
        let fail = |e: SandboxError| e.to_string();
        if let Some(rt) = name.strip_prefix("run_").and_then(runtime) {
            let a: CodeArgs = parse(name, args)?;
            let options = self.options(a.network, a.workspace_write, None).await?;
            let report = sb
                .run_code(rt, &a.code, options, cancel)
                .await
                .map_err(fail)?;
            return Ok(report_result(&report, sb));
        }
        match name {
            "run_file" => {
                let a: FileArgs = parse(name, args)?;
                let ws = self.workspace()?;
                let path = ws.resolve(&a.path).map_err(|e| e.to_string())?;
                let ext = path
                    .as_path()
                    .extension()
                    .and_then(|e| e.to_str())
                    .unwrap_or_default();
                let rt = runtime_for_extension(ext).ok_or_else(|| {
                    format!("no runtime runs `.{ext}` files; run_file knows .py, .js, .sh, .rb, .go, .rs and .pl")
                })?;
                let (code, _) = ws.read_text(&path).map_err(|e| e.to_string())?;
                let dir = path
                    .relative()
                    .parent()
                    .map(|p| format!("{WORKSPACE_DIR}/{}", p.display()))
                    .unwrap_or_else(|| WORKSPACE_DIR.to_owned());
                let options = self
                    .options(a.network, a.workspace_write, Some(dir))
                    .await?;
                let report = sb
                    .run_code(rt, &code, options, cancel)
                    .await
                    .map_err(fail)?;
                Ok(report_result(&report, sb))
            }
            "run_tests" => {
                let a: TestArgs = parse(name, args)?;
                let ws = self.workspace()?;
                let root = ws.resolve(".").map_err(|e| e.to_string())?;
                let (runtime_name, mut command) = match &sb.config().test_command {
                    Some(c) => ("bash", c.clone()),
                    None => {
                        let names: Vec<String> = ws
                            .list_dir(&root)
                            .map_err(|e| e.to_string())?
                            .into_iter()
                            .map(|e| e.name)
                            .collect();
                        let (rt, c) = guess_test_command(&names).ok_or(
                            "no test command: set sandbox.test_command in your config (no Cargo.toml, package.json, go.mod, pyproject.toml, Gemfile or Makefile at the root)",
                        )?;
                        (rt, c)
                    }
                };
                if let Some(f) = &a.filter {
                    command.push(' ');
                    command.push_str(&shell_quote(f));
                }
                let image = sb.image_for(runtime_name).await.map_err(fail)?;
                let options = self.options(a.network, a.workspace_write, None).await?;
                let report = sb
                    .run_shell(&image, &command, options, cancel)
                    .await
                    .map_err(fail)?;
                let mut result = report_result(&report, sb);
                result
                    .content
                    .insert(0, ContentBlock::text(format!("$ {command}")));
                Ok(result)
            }
            "python_session" => {
                let a: SessionArgs = parse(name, args)?;
                let (report, fresh) = sb
                    .python_session(session, &a.code, cancel)
                    .await
                    .map_err(fail)?;
                let mut body = report.to_text(sb.limits());
                if fresh {
                    body.insert_str(0, "(a new Python session was started)\n");
                }
                if report.failed() {
                    body.push_str("(the session was reset: its state is gone)\n");
                    return Ok(error(body));
                }
                Ok(text(body))
            }
            "install_packages" => {
                let a: InstallArgs = parse(name, args)?;
                if a.packages.is_empty() || a.packages.len() > 20 {
                    return Err("give between 1 and 20 packages".into());
                }
                let report = sb
                    .install_packages(session, &a.packages, cancel)
                    .await
                    .map_err(fail)?;
                Ok(report_result(&report, sb))
            }
            "list_sandboxes" => {
                let _: NoArgs = parse(name, args)?;
                let engine = sb.engine().await.map_err(fail)?;
                let containers = engine.list(true).await.map_err(fail)?;
                let sessions = sb.sessions().await;
                if containers.is_empty() {
                    return Ok(text(
                        "no sandboxes are running (a run's container lives only as long as the run)",
                    ));
                }
                let mut out = String::from("id            kind                        image\n");
                for c in containers {
                    let id = c.id.unwrap_or_default();
                    let kind = c
                        .labels
                        .as_ref()
                        .and_then(|l| l.get(crate::engine::KIND_LABEL))
                        .cloned()
                        .unwrap_or_default();
                    let kind = match sessions.iter().find(|(_, cid, _, _)| *cid == id) {
                        Some((chat, _, _, age)) if chat == session => {
                            format!("python session (this chat, {} s)", age.as_secs())
                        }
                        Some(_) => "python session".to_owned(),
                        None if kind == "pool" => "warm (idle)".to_owned(),
                        None => kind,
                    };
                    out.push_str(&format!(
                        "{:<13} {kind:<27} {}\n",
                        id.chars().take(12).collect::<String>(),
                        c.image.unwrap_or_default()
                    ));
                }
                Ok(text(out))
            }
            "stop_sandbox" => {
                let a: StopArgs = parse(name, args)?;
                let target = match &a.id {
                    None => session.to_owned(),
                    Some(id) => sb
                        .sessions()
                        .await
                        .into_iter()
                        .find(|(_, c, _, _)| c.starts_with(id.as_str()) && id.len() >= 6)
                        .map(|(chat, _, _, _)| chat)
                        .ok_or_else(|| SandboxError::NoSuchSandbox(id.clone()).to_string())?,
                };
                if sb.stop_session(&target).await {
                    Ok(text("stopped and removed the sandbox; its state is gone"))
                } else {
                    Err(
                        SandboxError::NoSuchSandbox("this chat's Python session".into())
                            .to_string(),
                    )
                }
            }
            "copy_into_sandbox" => {
                let a: CopyInArgs = parse(name, args)?;
                let ws = self.workspace()?;
                let path = ws.resolve(&a.path).map_err(|e| e.to_string())?;
                let (content, _) = ws.read_text(&path).map_err(|e| e.to_string())?;
                let file_name = path
                    .as_path()
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "file".into());
                let to = a.to.unwrap_or_else(|| format!("/tmp/{file_name}"));
                let report = sb
                    .copy_into_session(session, &to, content.clone().into_bytes(), cancel)
                    .await
                    .map_err(fail)?;
                if report.failed() {
                    return Ok(report_result(&report, sb));
                }
                Ok(text(format!(
                    "copied {} ({} bytes) to {to} in this chat's Python session",
                    path.display_path(),
                    content.len()
                )))
            }
            "copy_out_of_sandbox" => {
                let a: CopyOutArgs = parse(name, args)?;
                let ws = self.workspace()?;
                let path = ws.resolve(&a.path).map_err(|e| e.to_string())?;
                let report = sb
                    .copy_out_of_session(session, &a.from, cancel)
                    .await
                    .map_err(fail)?;
                if report.failed() {
                    return Ok(report_result(&report, sb));
                }
                if report.truncated || report.binary {
                    return Err(format!(
                        "`{}` is binary or over the {}-byte output limit; only text files up to the limit are copied",
                        a.from,
                        sb.limits().output_max_bytes
                    ));
                }
                ws.create_text_exclusive(&path, &report.stdout)
                    .map_err(|e| e.to_string())?;
                Ok(text(format!(
                    "copied {} to {} ({} bytes)",
                    a.from,
                    path.display_path(),
                    report.stdout.len()
                )))
            }
            other => Err(format!(
                "unknown tool `{other}`; the code tools are {}",
                CODE_TOOL_NAMES.join(", ")
            )),
        }
    }

    fn workspace(&self) -> Result<&Arc<Workspace>, String> {
        self.workspace
            .as_ref()
            .ok_or_else(|| "no workspace folder is open, so there is no file to run".to_owned())
    }

    /// The run options for an approved call: the workspace mounted read-only (writable only
    /// when asked, approved by the gate, and allowed by the user's grants, and then with its
    /// files that run code still read-only), its secrets, unreadable files and `.git` hidden,
    /// all of them or the run is refused; run as a user who
    /// reads the workspace as the user does, or refused before a container starts.
    async fn options(
        &self,
        network: bool,
        workspace_write: bool,
        dir: Option<String>,
    ) -> Result<RunOptions, String> {
        let Some(ws) = &self.workspace else {
            if workspace_write {
                return Err("no workspace folder is open to mount writable".into());
            }
            return Ok(RunOptions {
                network,
                workspace: None,
                working_dir: dir,
            });
        };
        let root = ws.resolve(".").map_err(|e| e.to_string())?;
        if workspace_write && let Access::Deny { why } = ws.access_of(&root, Operation::Write) {
            return Err(format!(
                "refused to mount the workspace writable: {why}; run without workspace_write"
            ));
        }
        let run_as = RunAs::for_workspace(&Identity::current(), root.as_path())
            .map_err(|e| e.to_string())?;
        let config = self.sandbox.config();
        let limits = MaskLimits {
            max_entries: config.mask_max_entries,
            max_mounts: config.mask_max_mounts,
        };
        let walked = root.clone();
        let masks =
            cairn_workspace::off_thread(ws, move |ws| ws.masks(&walked, limits, workspace_write))
                .await?
                .map_err(|e| SandboxError::from(e).to_string())?;
        Ok(RunOptions {
            network,
            workspace: Some(WorkspaceMount {
                root: root.as_path().to_path_buf(),
                writable: workspace_write,
                masked_files: masks.files,
                masked_dirs: masks.dirs,
                read_only: masks.read_only,
                run_as,
            }),
            working_dir: dir,
        })
    }
}
