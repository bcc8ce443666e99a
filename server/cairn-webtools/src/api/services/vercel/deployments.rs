//! `vercel_deployments`: a project's deployments, newest first, with their state, target,
//! address and the commit each was built from.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{PUBLIC, SERVICE, unix_when};
use crate::api::services::Services;
use crate::api::services::github::{bounded, s};
use crate::api::services::paging::{self, Items, List, Next, Paging, Size};
use cairn_web::Method;

/// The most deployments one call lists (Vercel's largest page).
const MAX_LIMIT: u32 = 100;
/// How the deployments page: older ones `until` the timestamp the answer's `pagination.next`
/// gives.
const PAGING: Paging = Paging {
    items: Items::At("/deployments"),
    size: Some(Size {
        param: "limit",
        max: MAX_LIMIT as usize,
    }),
    next: Next::Token {
        at: "/pagination/next",
        param: "until",
        last: None,
    },
};

/// The `vercel_deployments` tool.
pub struct VercelDeployments;

/// A deployment's state, as a filter.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DeploymentState {
    Building,
    Error,
    Initializing,
    Queued,
    Ready,
    Canceled,
}

/// Which environment the deployments went to.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    Production,
    Preview,
}

/// Arguments of `vercel_deployments`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The project's id (`prj_...`) or name; without it, the deployments of every project.
    project: Option<String>,
    /// Only deployments in this state: `building`, `error`, `initializing`, `queued`, `ready`
    /// or `canceled`.
    state: Option<DeploymentState>,
    /// Only deployments to `production` or to `preview`.
    target: Option<Target>,
    /// The team's id (`team_...`) or slug, for a team's projects.
    team: Option<String>,
    /// How many deployments to list (default 20, at most 100).
    limit: Option<u32>,
    /// Only deployments created before this time (Unix milliseconds): the value the previous
    /// answer gave for its next page.
    until: Option<u64>,
}

impl Tool for VercelDeployments {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "vercel_deployments";
    const TITLE: &'static str = "Vercel deployments";
    const DESCRIPTION: &'static str = "List a Vercel project's deployments, newest first, with state (ready, error, building), target, URL and the commit each was built from.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let limit = bounded(args.limit, 20, MAX_LIMIT);
        let mut query = vec![("limit", limit.to_string())];
        let project = args
            .project
            .as_deref()
            .map(str::trim)
            .filter(|p| !p.is_empty());
        if let Some(p) = project {
            query.push(("projectId", p.to_owned()));
        }
        if let Some(state) = args.state {
            let state = match state {
                DeploymentState::Building => "BUILDING",
                DeploymentState::Error => "ERROR",
                DeploymentState::Initializing => "INITIALIZING",
                DeploymentState::Queued => "QUEUED",
                DeploymentState::Ready => "READY",
                DeploymentState::Canceled => "CANCELED",
            };
            query.push(("state", state.to_owned()));
        }
        if let Some(target) = args.target {
            let target = match target {
                Target::Production => "production",
                Target::Preview => "preview",
            };
            query.push(("target", target.to_owned()));
        }
        if let Some(until) = args.until {
            query.push(("until", until.to_string()));
        }
        if let Some(team) = args
            .team
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            query.push(("teamId", team.to_owned()));
        }
        let what = match project {
            Some(p) => format!("project {p}"),
            None => "the deployments".to_owned(),
        };
        let list = List {
            service: SERVICE,
            public: PUBLIC,
            label: "Vercel",
            method: Method::GET,
            path: "v6/deployments",
            query,
            body: None,
            what: &what,
        };
        let listed = match paging::list(services, &cx, &list, &PAGING, limit as usize, 1).await {
            Ok(l) => l,
            Err(e) => return error(e.to_string()),
        };
        let deployments = &listed.items;
        let heading = match project {
            Some(p) => format!("deployments of {p}, newest first"),
            None => "deployments, newest first".to_owned(),
        };
        if deployments.is_empty() {
            return text(format!("{heading}: none"));
        }
        let next = listed.next.map(|(_, until)| until);
        let table = Table {
            columns: [
                "id", "state", "target", "url", "commit", "creator", "created",
            ]
            .map(str::to_owned)
            .to_vec(),
            rows: deployments.iter().map(row).collect(),
            more: next.is_some(),
        };
        let hint = match next {
            Some(n) => format!("call again with until={n} for older ones"),
            None => "narrow by state or target".to_owned(),
        };
        table.result_hinting(&heading, &Limits::default(), &hint)
    }
}

/// One deployment as a row.
fn row(d: &Value) -> Vec<Cell> {
    let state = [s(d, "state"), s(d, "readyState")]
        .into_iter()
        .find(|s| !s.is_empty())
        .unwrap_or("-");
    let target = match s(d, "target") {
        "" => "preview",
        t => t,
    };
    let url = match s(d, "url") {
        "" => String::new(),
        u if u.starts_with("http") => u.to_owned(),
        u => format!("https://{u}"),
    };
    let creator = d
        .get("creator")
        .map(|c| s(c, "username"))
        .filter(|u| !u.is_empty())
        .unwrap_or("-");
    let created = unix_when(d.get("created").or_else(|| d.get("createdAt")), true);
    [
        s(d, "uid").to_owned(),
        state.to_owned(),
        target.to_owned(),
        url,
        commit(d),
        creator.to_owned(),
        created,
    ]
    .into_iter()
    .map(Cell::Text)
    .collect()
}

/// The commit a deployment was built from, from the metadata Vercel's Git integrations set
/// (GitHub, GitLab, Bitbucket): short sha, branch and the message's first line.
fn commit(d: &Value) -> String {
    let Some(meta) = d.get("meta") else {
        return "-".to_owned();
    };
    let pick = |suffix: &str| {
        ["github", "gitlab", "bitbucket"]
            .iter()
            .map(|p| s(meta, &format!("{p}{suffix}")))
            .find(|v| !v.is_empty())
            .unwrap_or("")
    };
    let sha: String = pick("CommitSha").chars().take(7).collect();
    let branch = pick("CommitRef");
    let message = pick("CommitMessage").lines().next().unwrap_or("");
    let mut out = sha;
    if !branch.is_empty() {
        out.push_str(&format!(" ({branch})"));
    }
    if !message.is_empty() {
        out.push_str(&format!(" {}", cairn_toolkit::table::cut(message, 60)));
    }
    match out.trim() {
        "" => "-".to_owned(),
        t => t.to_owned(),
    }
}
