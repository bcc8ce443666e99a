//! `docker_remove`: remove a container or an image. What cairn did not create needs the user's
//! approval of that very object, once.

use bollard::query_parameters::{ListImagesOptions, RemoveContainerOptions, RemoveImageOptions};
use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{
    CALL_TIMEOUT, approved, check_name, docker, engine_error, find_container, is_cairns,
    is_not_found, not_found, short_id, strict_question, timed,
};
use crate::DevOps;

/// The `docker_remove` tool.
pub struct DockerRemove;

/// What to remove.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A container (the default).
    #[default]
    Container,
    /// An image (by `repository:tag` or id; a tag is untagged, the image goes with its last tag).
    Image,
}

/// Arguments of `docker_remove`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The container's or image's name or id.
    name: String,
    /// `container` (default) or `image`.
    #[serde(default)]
    kind: Kind,
    /// Remove a running container (killing it), or an image that stopped containers use.
    #[serde(default)]
    force: bool,
}

impl Tool for DockerRemove {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "docker_remove";
    const TITLE: &'static str = "Remove a Docker container or image";
    const DESCRIPTION: &'static str = "Remove a Docker container (with its anonymous volumes), or with `kind: \"image\"` an image; `force` for a running container. Removing what cairn did not create needs the user's approval of that exact object, asked once.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        let result = match args.kind {
            Kind::Container => container(host, &args, &cx).await,
            Kind::Image => image(host, &args, &cx).await,
        };
        result.unwrap_or_else(error)
    }
}

/// Why removing something not cairn's needs the strict question.
const WHY: &str = "not created by cairn: removing it needs your approval of this object, once";

async fn container(host: &DevOps, args: &Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let docker = docker(host).await?;
    let c = find_container(&docker, cx, &args.name).await?;
    let id = c.id.clone().unwrap_or_default();
    let name = c
        .name
        .as_deref()
        .unwrap_or_default()
        .trim_start_matches('/')
        .to_owned();
    let shown = format!("container {name} ({})", short_id(&id));
    let running = c.state.as_ref().and_then(|s| s.running) == Some(true);
    if running && !args.force {
        return Err(format!(
            "refused: {shown} is running; stop it first (`docker_stop`) or pass `force: true` to kill and remove it"
        ));
    }
    let key = format!("docker:container:{id}");
    if !is_cairns(c.config.as_ref().and_then(|c| c.labels.as_ref())) && !approved(host, &key) {
        return Ok(strict_question(
            format!(
                "refused for now: {shown} was not created by cairn; removing it needs the user's \
                 approval of this container (asked once, never covered by a session grant)"
            ),
            shown,
            key,
            WHY,
        ));
    }
    let options = RemoveContainerOptions {
        force: args.force,
        v: true,
        ..Default::default()
    };
    timed(
        cx,
        &format!("removing {shown}"),
        docker.remove_container(&id, Some(options)),
    )
    .await?;
    Ok(text(format!("removed {shown}")))
}

async fn image(host: &DevOps, args: &Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let docker = docker(host).await?;
    let name = check_name("image", &args.name)?;
    let inspected = tokio::select! {
        () = cx.cancel.cancelled() => return Err("cancelled".into()),
        r = tokio::time::timeout(CALL_TIMEOUT, docker.inspect_image(name)) => r,
    };
    let image = match inspected {
        Ok(Ok(i)) => i,
        Ok(Err(e)) if is_not_found(&e) => {
            let tags: Vec<String> = timed(
                cx,
                "listing images",
                docker.list_images(None::<ListImagesOptions>),
            )
            .await
            .map(|l| l.into_iter().flat_map(|i| i.repo_tags).collect())
            .unwrap_or_default();
            return Err(not_found("image", name, &tags, "docker_images"));
        }
        Ok(Err(e)) => return Err(format!("inspecting image {name}: {}", engine_error(&e))),
        Err(_) => return Err(format!("inspecting image {name}: no answer in time")),
    };
    let id = image.id.clone().unwrap_or_default();
    let shown = format!("image {name} ({})", short_id(&id));
    let key = format!("docker:image:{id}");
    let labels = image.config.as_ref().and_then(|c| c.labels.as_ref());
    if !is_cairns(labels) && !approved(host, &key) {
        return Ok(strict_question(
            format!(
                "refused for now: {shown} was not built by cairn; removing it needs the user's \
                 approval of this image (asked once, never covered by a session grant)"
            ),
            shown,
            key,
            WHY,
        ));
    }
    let options = RemoveImageOptions {
        force: args.force,
        ..Default::default()
    };
    let gone = timed(
        cx,
        &format!("removing {shown}"),
        docker.remove_image(name, Some(options), None),
    )
    .await?;
    let mut out = format!("removed {shown}:");
    for item in gone {
        if let Some(t) = item.untagged {
            out.push_str(&format!("\nuntagged {t}"));
        }
        if let Some(d) = item.deleted {
            out.push_str(&format!("\ndeleted {}", short_id(&d)));
        }
    }
    Ok(text(out))
}
