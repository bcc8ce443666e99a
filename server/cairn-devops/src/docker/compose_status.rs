//! `compose_status`: Compose projects found from their containers' `com.docker.compose.*`
//! labels, or one project's services and containers.

use std::collections::BTreeMap;

use bollard::Docker;
use bollard::models::ContainerSummary;
use bollard::query_parameters::ListContainersOptions;
use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::containers::ports;
use super::{close_names, container_name, docker, short_id, timed};
use crate::DevOps;

/// Compose's labels on the containers it makes.
pub(crate) const PROJECT: &str = "com.docker.compose.project";
pub(crate) const SERVICE: &str = "com.docker.compose.service";
pub(crate) const NUMBER: &str = "com.docker.compose.container-number";
pub(crate) const WORKING_DIR: &str = "com.docker.compose.project.working_dir";

/// The `compose_status` tool.
pub struct ComposeStatus;

/// Arguments of `compose_status`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// A project's name; without it, every project the engine has containers of.
    #[serde(default)]
    project: Option<String>,
}

impl Tool for ComposeStatus {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "compose_status";
    const TITLE: &'static str = "Docker Compose status";
    const DESCRIPTION: &'static str = "Docker Compose projects on the engine (from their containers' labels): each project's folder and running/total containers; or, for one `project`, each service's containers with state, health, status and ports.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        match status(host, &args, &cx).await {
            Ok(r) => r,
            Err(e) => error(e),
        }
    }
}

fn label<'a>(c: &'a ContainerSummary, key: &str) -> Option<&'a str> {
    c.labels.as_ref()?.get(key).map(String::as_str)
}

/// Every container with Compose's project label, running or not.
pub(crate) async fn compose_containers(
    docker: &Docker,
    cx: &CallContext,
    project: Option<&str>,
) -> Result<Vec<ContainerSummary>, String> {
    let label = match project {
        Some(p) => format!("{PROJECT}={p}"),
        None => PROJECT.to_owned(),
    };
    let options = ListContainersOptions {
        all: true,
        filters: Some([("label".to_owned(), vec![label])].into()),
        ..Default::default()
    };
    timed(
        cx,
        "listing containers",
        docker.list_containers(Some(options)),
    )
    .await
}

/// One project's containers, sorted by service and number; or "no Compose project named X".
pub(crate) async fn project_containers(
    docker: &Docker,
    cx: &CallContext,
    project: &str,
) -> Result<Vec<(String, String, ContainerSummary)>, String> {
    let list = compose_containers(docker, cx, Some(project)).await?;
    if list.is_empty() {
        let all = compose_containers(docker, cx, None).await?;
        let mut names: Vec<String> = all
            .iter()
            .filter_map(|c| label(c, PROJECT).map(str::to_owned))
            .collect();
        names.sort();
        names.dedup();
        let close = close_names(project, &names);
        return Err(if names.is_empty() {
            format!("no Compose project named {project}: the engine has no Compose containers")
        } else if close.is_empty() {
            format!(
                "no Compose project named {project}; the projects are {}",
                names.join(", ")
            )
        } else {
            format!(
                "no Compose project named {project}; did you mean {}?",
                close.join(", ")
            )
        });
    }
    let mut keyed: Vec<(String, String, ContainerSummary)> = list
        .into_iter()
        .map(|c| {
            let service = label(&c, SERVICE).unwrap_or("?").to_owned();
            let number = label(&c, NUMBER).unwrap_or("1").to_owned();
            (service, number, c)
        })
        .collect();
    keyed.sort_by(|a, b| {
        (a.0.as_str(), a.1.parse::<u32>().unwrap_or(0))
            .cmp(&(b.0.as_str(), b.1.parse::<u32>().unwrap_or(0)))
    });
    Ok(keyed)
}

async fn status(host: &DevOps, args: &Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let docker = docker(host).await?;
    let limits = Limits::default();
    let t = |s: String| Cell::Text(s);
    let Some(project) = args
        .project
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty())
    else {
        let list = compose_containers(&docker, cx, None).await?;
        // project -> (working dir, services, running, total)
        let mut projects: BTreeMap<String, (String, Vec<String>, usize, usize)> = BTreeMap::new();
        for c in &list {
            let Some(p) = label(c, PROJECT) else { continue };
            let entry = projects.entry(p.to_owned()).or_default();
            if entry.0.is_empty() {
                entry.0 = label(c, WORKING_DIR).unwrap_or_default().to_owned();
            }
            if let Some(s) = label(c, SERVICE)
                && !entry.1.iter().any(|x| x == s)
            {
                entry.1.push(s.to_owned());
            }
            if c.state.map(|s| s.to_string()).as_deref() == Some("running") {
                entry.2 += 1;
            }
            entry.3 += 1;
        }
        let table = Table {
            columns: [
                "project",
                "working dir",
                "services",
                "running",
                "containers",
            ]
            .iter()
            .map(|c| (*c).to_owned())
            .collect(),
            more: projects.len() > limits.max_rows,
            rows: projects
                .iter()
                .take(limits.max_rows)
                .map(|(name, (dir, services, running, total))| {
                    let mut services = services.clone();
                    services.sort();
                    vec![
                        t(name.clone()),
                        t(dir.clone()),
                        t(services.join(", ")),
                        t(running.to_string()),
                        t(total.to_string()),
                    ]
                })
                .collect(),
        };
        return Ok(table.result_hinting(
            &format!("{} Compose project(s)", projects.len()),
            &limits,
            "name one project",
        ));
    };
    let containers = project_containers(&docker, cx, project).await?;
    let dir = containers
        .iter()
        .find_map(|(_, _, c)| label(c, WORKING_DIR))
        .unwrap_or_default()
        .to_owned();
    let table = Table {
        columns: [
            "service",
            "#",
            "container",
            "id",
            "state",
            "health",
            "status",
            "ports",
        ]
        .iter()
        .map(|c| (*c).to_owned())
        .collect(),
        more: containers.len() > limits.max_rows,
        rows: containers
            .iter()
            .take(limits.max_rows)
            .map(|(service, number, c)| {
                vec![
                    t(service.clone()),
                    t(number.clone()),
                    t(container_name(c).unwrap_or_default()),
                    t(short_id(c.id.as_deref().unwrap_or_default())),
                    t(c.state.map(|s| s.to_string()).unwrap_or_default()),
                    t(c.health
                        .as_ref()
                        .and_then(|h| h.status)
                        .map(|s| s.to_string())
                        .filter(|s| !s.is_empty() && s != "none")
                        .unwrap_or_else(|| "-".into())),
                    t(c.status.clone().unwrap_or_default()),
                    t(ports(c.ports.as_deref().unwrap_or_default())),
                ]
            })
            .collect(),
    };
    let heading = if dir.is_empty() {
        format!("Compose project {project}")
    } else {
        format!("Compose project {project} ({dir})")
    };
    Ok(table.result_hinting(&heading, &limits, "ask for fewer services"))
}
