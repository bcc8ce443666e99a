//! `docker_images`: the engine's images, with those cairn built marked.

use std::collections::HashMap;

use bollard::query_parameters::ListImagesOptions;
use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{ago, docker, human_bytes, is_cairns, now_unix, short_id, timed};
use crate::DevOps;

/// The `docker_images` tool.
pub struct DockerImages;

/// Arguments of `docker_images`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Only images whose repository or tag contains this text.
    #[serde(default)]
    name: Option<String>,
    /// Only dangling (untagged) images.
    #[serde(default)]
    dangling: bool,
}

impl Tool for DockerImages {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "docker_images";
    const TITLE: &'static str = "Docker images";
    const DESCRIPTION: &'static str = "List the Docker engine's images: repository:tag, id, size, age, whether dangling, containers using it, and whether cairn built it. Largest first, at most 200 rows.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        match list(host, &args, &cx).await {
            Ok(r) => r,
            Err(e) => error(e),
        }
    }
}

async fn list(host: &DevOps, args: &Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let docker = docker(host).await?;
    let mut filters: HashMap<String, Vec<String>> = HashMap::new();
    if args.dangling {
        filters.insert("dangling".into(), vec!["true".into()]);
    }
    let options = ListImagesOptions {
        filters: Some(filters),
        ..Default::default()
    };
    let mut images = timed(cx, "listing images", docker.list_images(Some(options))).await?;
    if let Some(name) = args.name.as_deref().filter(|n| !n.is_empty()) {
        images.retain(|i| i.repo_tags.iter().any(|t| t.contains(name)));
    }
    images.sort_by_key(|i| std::cmp::Reverse(i.size));
    let now = now_unix();
    let limits = Limits::default();
    let rows = images
        .iter()
        .take(limits.max_rows)
        .map(|i| {
            let tags: Vec<&str> = i
                .repo_tags
                .iter()
                .map(String::as_str)
                .filter(|t| *t != "<none>:<none>")
                .collect();
            let t = |s: String| Cell::Text(s);
            vec![
                t(if tags.is_empty() {
                    "<none>".into()
                } else {
                    tags.join(", ")
                }),
                t(short_id(&i.id)),
                t(human_bytes(i.size.unsigned_abs())),
                t(ago(i.created, now)),
                t(if tags.is_empty() { "yes" } else { "" }.into()),
                // Engines that do not count them say -1.
                t(if i.containers >= 0 {
                    i.containers.to_string()
                } else {
                    "-".into()
                }),
                t(if is_cairns(Some(&i.labels)) {
                    "yes"
                } else {
                    ""
                }
                .into()),
            ]
        })
        .collect();
    let table = Table {
        columns: [
            "repository:tag",
            "id",
            "size",
            "created",
            "dangling",
            "containers",
            "cairn",
        ]
        .iter()
        .map(|c| (*c).to_owned())
        .collect(),
        rows,
        more: images.len() > limits.max_rows,
    };
    Ok(table.result_hinting(
        &format!("{} image(s)", images.len()),
        &limits,
        "filter by name",
    ))
}
