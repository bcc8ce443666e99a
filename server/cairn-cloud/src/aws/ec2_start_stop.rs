//! `ec2_start_stop`: start or stop EC2 instances. Stopping asks the user first, naming each
//! instance, since whatever runs on them goes down.

use cairn_toolkit::reply::{approved_once, error, strict_question, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::client::{EC2, Params, account, find, items, said, text_at};
use super::ec2_instances::{Instance, check_ids, parse};
use crate::cloud::Cloud;
use crate::request::xml;

/// The `ec2_start_stop` tool.
pub struct Ec2StartStop;

/// Start or stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    // No doc comments on the variants: the schema stays a plain string enum.
    Start,
    Stop,
}

/// Arguments of `ec2_start_stop`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The `[cloud.NAME]` account; needed only when several fit.
    account: Option<String>,
    /// `start` (stopped instances) or `stop` (running ones; asks the user first).
    action: Action,
    /// The instances (`i-0abc...`, as `ec2_instances` shows), 1 to 20.
    instance_ids: Vec<String>,
    /// Stop without the instances flushing their file systems (only with `stop`; data may be
    /// lost).
    #[serde(default)]
    force: bool,
}

impl Tool for Ec2StartStop {
    type Host = Cloud;
    type Args = Args;
    const NAME: &'static str = "ec2_start_stop";
    const TITLE: &'static str = "Start or stop EC2 instances";
    const DESCRIPTION: &'static str = "Start or stop EC2 instances by id (at most 20). Stopping asks the user first, naming every instance; shows each instance's state before and after.";
    const CATEGORY: Category = Category::Cloud;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Cloud, args: Args, cx: CallContext) -> CallToolResult {
        run(host, args, &cx).await.unwrap_or_else(error)
    }
}

/// Why stopping needs the strict question.
const WHY: &str = "stopping EC2 instances takes down what runs on them: needs your approval of these instances, once";

fn shown(i: &Instance) -> String {
    if i.name.is_empty() {
        format!("{} ({})", i.id, i.state)
    } else {
        format!("{} \"{}\" ({})", i.id, i.name, i.state)
    }
}

async fn run(host: &Cloud, args: Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let account = account(host, args.account.as_deref()).map_err(said)?;
    let mut ids = args.instance_ids.clone();
    ids.sort();
    ids.dedup();
    if ids.is_empty() {
        return Err("`instance_ids` is empty: name the instances (see `ec2_instances`)".into());
    }
    check_ids(&ids, 20)?;
    if args.force && args.action == Action::Start {
        return Err("`force` applies only to `stop`".into());
    }
    // What is there first: an unknown id fails here, before anything changes, and the
    // question names what the user would stop.
    let mut params = Params::new();
    params.list("InstanceId", &ids);
    let answer = host
        .aws_query(cx, account, "ec2", EC2, "DescribeInstances", &params.0)
        .await
        .map_err(said)?;
    let (found, _) = parse(&answer).map_err(said)?;
    let listed = found.iter().map(shown).collect::<Vec<_>>().join(", ");
    let (action, verb) = match args.action {
        Action::Start => ("StartInstances", "start"),
        Action::Stop => ("StopInstances", "stop"),
    };
    if args.action == Action::Stop {
        let key = format!(
            "aws:{}:ec2:stop{}:{}",
            account.name,
            if args.force { "-force" } else { "" },
            ids.join(",")
        );
        if !approved_once(&host.approvals, &key) {
            return Ok(strict_question(
                format!(
                    "refused for now: stopping {listed} in {} needs the user's approval of these \
                     instances (asked once, never covered by a session grant)",
                    account.name
                ),
                format!("stop EC2 {listed}"),
                key,
                WHY,
            ));
        }
    }
    let mut params = Params::new();
    params.list("InstanceId", &ids);
    if args.force {
        params.set("Force", "true");
    }
    let answer = host
        .aws_query(cx, account, "ec2", EC2, action, &params.0)
        .await
        .map_err(said)?;
    let doc = xml("ec2", &answer).map_err(said)?;
    let root = find(&doc, &format!("{action}Response"))
        .ok_or_else(|| format!("ec2 answered {action} without a {action}Response"))?;
    let mut out = format!(
        "asked EC2 to {verb} {} instance(s) in {}:",
        ids.len(),
        account.name
    );
    for item in items(root, "instancesSet", "item") {
        let id = text_at(item, "instanceId");
        let name = found
            .iter()
            .find(|i| i.id == id)
            .map(|i| i.name.clone())
            .filter(|n| !n.is_empty())
            .map(|n| format!(" \"{n}\""))
            .unwrap_or_default();
        out.push_str(&format!(
            "\n{id}{name}: {} -> {}",
            text_at(item, "previousState/name"),
            text_at(item, "currentState/name")
        ));
    }
    out.push_str("\n(check progress with `ec2_instances`)");
    Ok(text(out))
}
