//! `launchdarkly_toggle_flag`: turns one flag on or off in one environment (agent-only, effect
//! `write`: the approval shows the project, flag, environment and the new state), with a
//! comment for the flag's audit log.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{PUBLIC, SERVICE, key};
use crate::api::services::Services;
use cairn_web::Method;

/// The longest audit-log comment sent.
const MAX_COMMENT: usize = 1000;

/// The `launchdarkly_toggle_flag` tool.
pub struct LaunchdarklyToggleFlag;

/// Arguments of `launchdarkly_toggle_flag`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The project's key (`default` for most accounts).
    project: String,
    /// The flag's key.
    flag: String,
    /// The environment's key (`production`, `staging`).
    environment: String,
    /// The new state: `true` turns the flag on (targeting serves its rules), `false` turns it
    /// off (everyone gets the off variation).
    on: bool,
    /// Why, for the flag's audit log.
    comment: Option<String>,
}

impl Tool for LaunchdarklyToggleFlag {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "launchdarkly_toggle_flag";
    const TITLE: &'static str = "Turn a LaunchDarkly flag on or off";
    const DESCRIPTION: &'static str = "Turn one LaunchDarkly feature flag on or off in one environment, with a comment for its audit log; answers with the state LaunchDarkly reports.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let checked = key("project", &args.project).and_then(|p| {
            let f = key("flag", &args.flag)?;
            let e = key("environment", &args.environment)?;
            Ok((p, f, e))
        });
        let (project, flag, env) = match checked {
            Ok(k) => k,
            Err(e) => return error(format!("{e}; nothing was changed")),
        };
        let word = if args.on { "on" } else { "off" };
        let comment = args
            .comment
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map_or_else(
                || format!("turned {word} in {env} by cairn"),
                |c| cairn_toolkit::table::cut(c, MAX_COMMENT),
            );
        // A JSON Patch on the one field; keys hold no `~` or `/`, so the pointer needs no escape.
        let body = json!({
            "comment": comment,
            "patch": [{"op": "replace", "path": format!("/environments/{env}/on"), "value": args.on}],
        });
        let answer = match services
            .call(
                &cx,
                SERVICE,
                PUBLIC,
                Method::PATCH,
                &format!("flags/{project}/{flag}"),
                &[],
                Some(&body),
                &format!("flag {flag} in project {project} (or its environment {env})"),
            )
            .await
        {
            Ok((_, json)) => json,
            Err(e) => return error(format!("{e}; the flag was not changed")),
        };
        let mut out = format!("flag {flag} turned {word} in {env} (project {project})");
        match answer
            .get("environments")
            .and_then(|e| e.get(&env))
            .and_then(|e| e.get("on"))
            .and_then(Value::as_bool)
        {
            Some(now) if now == args.on => out.push_str(&format!("; LaunchDarkly reports it {word}")),
            Some(now) => out.push_str(&format!(
                "; but LaunchDarkly reports it {} (an approval or a workflow may hold the change)",
                if now { "on" } else { "off" }
            )),
            None => out.push_str(&format!(
                "; LaunchDarkly's answer did not include environment {env}: check it with launchdarkly_flags"
            )),
        }
        if let Some(v) = answer.get("_version").and_then(Value::as_u64) {
            out.push_str(&format!("\nflag version {v}"));
        }
        text(out)
    }
}
