//! `vercel_deployment_logs`: the tail of a deployment's build log (its build events, oldest of
//! the tail first), capped in lines and bytes.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{PUBLIC, SERVICE, id_segment};
use crate::api::services::Services;
use crate::api::services::github::{bounded, s};
use cairn_web::Method;

/// The most events one call asks for.
const MAX_LINES: u32 = 1000;
/// The most bytes of log shown; older lines past it are left out.
const MAX_BYTES: usize = 48 * 1024;
/// The most characters of one log line.
const MAX_LINE: usize = 2000;

/// The `vercel_deployment_logs` tool.
pub struct VercelDeploymentLogs;

/// Arguments of `vercel_deployment_logs`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The deployment: its id (`dpl_...`) or its address (`my-app-abc123.vercel.app`).
    deployment: String,
    /// How many of the last log lines to show (default 200, at most 1000).
    lines: Option<u32>,
    /// The team's id (`team_...`) or slug, for a team's deployment.
    team: Option<String>,
}

impl Tool for VercelDeploymentLogs {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "vercel_deployment_logs";
    const TITLE: &'static str = "Vercel deployment build log";
    const DESCRIPTION: &'static str = "Show the tail of a Vercel deployment's build log (commands, output, errors) to see why a build failed.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        // An address is taken as the model may paste it: with its scheme and a slash.
        let name = args
            .deployment
            .trim()
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .trim_end_matches('/');
        let deployment = match id_segment("deployment", name) {
            Ok(d) => d,
            Err(e) => return error(e),
        };
        let lines = bounded(args.lines, 200, MAX_LINES);
        // Newest first, so a limit keeps the tail; never `follow`, which would not end.
        let mut query = vec![
            ("direction", "backward".to_owned()),
            ("limit", lines.to_string()),
        ];
        if let Some(team) = args
            .team
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            query.push(("teamId", team.to_owned()));
        }
        let json = match services
            .call(
                &cx,
                SERVICE,
                PUBLIC,
                Method::GET,
                &format!("v2/deployments/{deployment}/events"),
                &query,
                None,
                &format!("deployment {name}"),
            )
            .await
        {
            Ok((_, json)) => json,
            Err(e) => return error(e.to_string()),
        };
        let events: Vec<&Value> = json
            .as_array()
            .map(|a| a.iter().take(lines as usize).collect())
            .unwrap_or_default();
        if events.is_empty() {
            return text(format!("deployment {name}: no build log"));
        }
        let full = events.len() >= lines as usize;
        // Oldest first for reading; from the newest back until the byte cap.
        let mut kept = Vec::new();
        let mut bytes = 0;
        let mut errors = 0;
        for e in &events {
            let line = line_of(e);
            if bytes + line.len() > MAX_BYTES {
                break;
            }
            if line.starts_with("[stderr]") || line.starts_with("[error]") {
                errors += 1;
            }
            bytes += line.len() + 1;
            kept.push(line);
        }
        kept.reverse();
        let mut out = format!(
            "build log of deployment {name}: last {} line{}",
            kept.len(),
            if kept.len() == 1 { "" } else { "s" }
        );
        if errors > 0 {
            out.push_str(&format!(", {errors} on stderr"));
        }
        out.push_str("\n\n");
        out.push_str(&kept.join("\n"));
        out.push('\n');
        if kept.len() < events.len() {
            out.push_str(&format!(
                "\n({} older lines left out: the tail shown is cut at {} KB)\n",
                events.len() - kept.len(),
                MAX_BYTES / 1024
            ));
        } else if full {
            out.push_str(&format!(
                "\n(older lines not read: raise `lines`, at most {MAX_LINES})\n"
            ));
        }
        text(out)
    }
}

/// One event as a log line: `[stderr]`/`[command]`-style kind for what is not plain output,
/// then its text (or, for a state change, the state).
fn line_of(event: &Value) -> String {
    let kind = s(event, "type");
    let payload = event.get("payload").unwrap_or(&Value::Null);
    let mut body = s(payload, "text").to_owned();
    if body.is_empty() {
        body = s(event, "text").to_owned();
    }
    if let (true, Some(info)) = (body.is_empty(), payload.get("info")) {
        body = format!("{} {}", s(info, "type"), s(info, "name"))
            .trim()
            .to_owned();
    }
    let body = cairn_toolkit::table::cut(body.trim_end(), MAX_LINE);
    match kind {
        "stdout" | "" => body,
        "stderr" | "error" | "command" | "exit" => format!("[{kind}] {body}"),
        other => format!("[{other}] {body}"),
    }
}
