//! The user's hooks (`[[hooks]]`): commands run before and after tool calls and at the end of a
//! turn, as the agent's `Hooks`.
//!
//! Each runs in the workspace root with the call as JSON on stdin, a timeout, and an environment
//! of its own: `PATH`, `HOME`, the locale and `CAIRN_HOOK_*`, never cairn's (so no API key or
//! vault passphrase reaches it). A workspace's own hooks run only once the user trusted them.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use cairn_agent::hooks::{HookInput, HookOutcome, HookReport, HookStage, Hooks};
use cairn_config::trust::TrustStore;
use cairn_config::{Config, HookConfig, HookStageConfig, Layers};
use futures::future::BoxFuture;
use tokio::io::AsyncWriteExt;

use crate::compose::Env;

/// How the workspace's hooks are named in the list of what waits for trust.
pub const WAITING_NAME: &str = "hooks of .cairn/config.toml";

/// Variables a hook inherits from cairn's environment; everything else is left out.
const INHERITED: [&str; 7] = ["PATH", "HOME", "LANG", "LC_ALL", "TERM", "TMPDIR", "USER"];

/// Most bytes of a hook's output kept (for the model and the editor).
const MAX_OUTPUT: usize = 8 * 1024;

/// The hooks the agent runs: the user's, and the workspace's once trusted.
pub fn for_agent(config: &Config, env: &Env, roots: &[PathBuf]) -> Option<Arc<dyn Hooks>> {
    let root = roots.first()?.clone();
    let store = TrustStore::load(&crate::compose::data_dir(env).join("trust.json")).ok();
    let trusted = !hooks_waiting(config, store.as_ref(), &root);
    let hooks: Vec<HookConfig> = config
        .hooks
        .iter()
        .filter(|h| !h.from_workspace || trusted)
        .cloned()
        .collect();
    if hooks.is_empty() {
        return None;
    }
    let inherited = INHERITED
        .iter()
        .filter_map(|k| env.get(k).map(|v| (k.to_string(), v.to_string())))
        .collect();
    Some(Arc::new(CommandHooks {
        hooks,
        root,
        inherited,
    }))
}

/// Whether the workspace declares hooks the user has not trusted (as they are now).
pub fn hooks_waiting(config: &Config, store: Option<&TrustStore>, root: &Path) -> bool {
    let workspace = declared_by_workspace(&config.hooks);
    !workspace.is_empty() && !store.is_some_and(|s| s.hooks_trusted(root, &workspace))
}

/// The hooks the workspace's own file declares.
pub fn workspace_hooks(layers: &Layers) -> Result<Vec<HookConfig>, cairn_config::ConfigError> {
    Ok(declared_by_workspace(&layers.resolve()?.hooks))
}

/// Those of `hooks` the workspace's file declares: what trust is given to, as one list.
fn declared_by_workspace(hooks: &[HookConfig]) -> Vec<HookConfig> {
    hooks.iter().filter(|h| h.from_workspace).cloned().collect()
}

/// Hooks run as processes.
struct CommandHooks {
    hooks: Vec<HookConfig>,
    root: PathBuf,
    inherited: Vec<(String, String)>,
}

fn stage_of(stage: HookStage) -> HookStageConfig {
    match stage {
        HookStage::PreTool => HookStageConfig::PreTool,
        HookStage::PostTool => HookStageConfig::PostTool,
        HookStage::TurnEnd => HookStageConfig::TurnEnd,
    }
}

/// `*` matches any run of characters; everything else itself.
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, rest)) => {
            let Some(tail) = name.strip_prefix(head) else {
                return false;
            };
            (0..=tail.len())
                .filter(|&i| tail.is_char_boundary(i))
                .any(|i| matches(rest, &tail[i..]))
        }
    }
}

impl Hooks for CommandHooks {
    fn run(&self, input: HookInput) -> BoxFuture<'_, Vec<HookReport>> {
        Box::pin(async move {
            let wanted = stage_of(input.stage);
            let stdin = serde_json::to_vec(&input).unwrap_or_default();
            let mut reports = Vec::new();
            for hook in self.hooks.iter().filter(|h| h.stage == wanted) {
                if let Some(tool) = &input.tool
                    && !hook.tools.is_empty()
                    && !hook.tools.iter().any(|p| matches(p, tool))
                {
                    continue;
                }
                let report = self.run_one(hook, input.stage, &stdin).await;
                let stop = input.stage == HookStage::PreTool
                    && matches!(report.outcome, HookOutcome::Denied | HookOutcome::Failed);
                reports.push(report);
                // The first hook that stops a call is the answer; later ones need not run.
                if stop {
                    break;
                }
            }
            reports
        })
    }
}

impl CommandHooks {
    async fn run_one(&self, hook: &HookConfig, stage: HookStage, stdin: &[u8]) -> HookReport {
        let shown = hook.command.join(" ");
        let report = |outcome, message: String| HookReport {
            command: shown.clone(),
            outcome,
            message: cap(message),
        };
        let Some((program, args)) = hook.command.split_first() else {
            return report(HookOutcome::Failed, "the command is empty".into());
        };
        // A relative program with a slash is the workspace's (`./scripts/check.sh`).
        let program = if program.contains('/') && Path::new(program).is_relative() {
            self.root.join(program)
        } else {
            PathBuf::from(program)
        };
        let mut command = tokio::process::Command::new(&program);
        command
            .args(args)
            .current_dir(&self.root)
            .env_clear()
            .envs(self.inherited.iter().map(|(k, v)| (k, v)))
            .env("CAIRN_HOOK_STAGE", stage_name(stage))
            .env("CAIRN_WORKSPACE", &self.root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                return report(
                    HookOutcome::Failed,
                    format!("could not start {}: {e}", program.display()),
                );
            }
        };
        if let Some(mut pipe) = child.stdin.take() {
            // A hook that does not read its input is fine: a closed pipe is not an error here.
            let _ = pipe.write_all(stdin).await;
        }
        let limit = Duration::from_secs(hook.timeout_secs.max(1));
        let output = match tokio::time::timeout(limit, child.wait_with_output()).await {
            Ok(Ok(output)) => output,
            Ok(Err(e)) => return report(HookOutcome::Failed, format!("did not finish: {e}")),
            Err(_) => {
                return report(
                    HookOutcome::Failed,
                    format!("timed out after {} s and was stopped", limit.as_secs()),
                );
            }
        };
        let stdout = String::from_utf8_lossy(&output.stdout).trim().to_string();
        let stderr = String::from_utf8_lossy(&output.stderr).trim().to_string();
        let code = output.status.code();
        match (stage, code) {
            (HookStage::PreTool, Some(0)) => decision(&stdout).map_or_else(
                || report(HookOutcome::Allowed, stdout.clone()),
                |(outcome, reason)| report(outcome, reason),
            ),
            (HookStage::PreTool, Some(2)) => report(
                HookOutcome::Denied,
                if stderr.is_empty() { stdout } else { stderr },
            ),
            (HookStage::PostTool, Some(0)) if !stdout.is_empty() => {
                report(HookOutcome::Output, stdout)
            }
            (HookStage::PostTool, Some(2)) => report(
                HookOutcome::Output,
                [stdout, stderr]
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            (_, Some(0)) => report(HookOutcome::Allowed, stdout),
            (_, code) => report(
                HookOutcome::Failed,
                format!(
                    "{}{}",
                    match code {
                        Some(c) => format!("exited with status {c}"),
                        None => "was killed by a signal".to_string(),
                    },
                    if stderr.is_empty() {
                        String::new()
                    } else {
                        format!(": {stderr}")
                    }
                ),
            ),
        }
    }
}

fn stage_name(stage: HookStage) -> &'static str {
    match stage {
        HookStage::PreTool => "pre_tool",
        HookStage::PostTool => "post_tool",
        HookStage::TurnEnd => "turn_end",
    }
}

/// A pre-tool hook's JSON answer: `{"decision": "allow"|"deny"|"ask", "reason": "..."}`.
///
/// Plain text is no answer (the call is allowed, as exit 0 says); but output that starts as a
/// JSON object and is not a valid decision fails the hook: a guard whose answer was cut short
/// or misspelt must not let the call through.
fn decision(stdout: &str) -> Option<(HookOutcome, String)> {
    if !stdout.starts_with('{') {
        return None;
    }
    let value: serde_json::Value = match serde_json::from_str(stdout) {
        Ok(value) => value,
        Err(e) => {
            return Some((HookOutcome::Failed, format!("answered invalid JSON ({e})")));
        }
    };
    let reason = value
        .get("reason")
        .and_then(|r| r.as_str())
        .unwrap_or_default()
        .to_string();
    let Some(decided) = value.get("decision").and_then(|d| d.as_str()) else {
        return Some((
            HookOutcome::Failed,
            "answered JSON without a `decision` (allow, deny or ask)".to_string(),
        ));
    };
    let outcome = match decided {
        "allow" => HookOutcome::Allowed,
        "deny" => HookOutcome::Denied,
        "ask" => HookOutcome::Asked,
        other => {
            return Some((
                HookOutcome::Failed,
                format!("answered the unknown decision `{other}` (allow, deny or ask)"),
            ));
        }
    };
    Some((outcome, reason))
}

fn cap(mut text: String) -> String {
    if text.len() > MAX_OUTPUT {
        let mut end = MAX_OUTPUT;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str(" […]");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_patterns_match_with_stars() {
        assert!(matches("write_file", "write_file"));
        assert!(matches("edit_*", "edit_file"));
        assert!(matches("*__*", "github__create_issue"));
        assert!(!matches("edit_*", "read_file"));
        assert!(matches("*", "anything"));
    }

    #[test]
    fn a_json_decision_is_read_and_an_unknown_one_fails() {
        assert_eq!(
            decision(r#"{"decision": "deny", "reason": "no"}"#),
            Some((HookOutcome::Denied, "no".into()))
        );
        assert_eq!(decision("plain text"), None);
        // Output that starts as JSON and is no decision fails closed.
        assert!(matches!(
            decision(r#"{"decision": "allow""#),
            Some((HookOutcome::Failed, m)) if m.starts_with("answered invalid JSON")
        ));
        assert!(matches!(
            decision(r#"{"reason": "fine"}"#),
            Some((HookOutcome::Failed, _))
        ));
        assert!(matches!(
            decision(r#"{"decision": "maybe"}"#),
            Some((HookOutcome::Failed, _))
        ));
    }
}
