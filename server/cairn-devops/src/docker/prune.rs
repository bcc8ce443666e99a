//! `docker_prune`: remove stopped containers, dangling images, unused networks and volumes. By
//! default only what cairn created; with `include_others` the rest too, after the user approves
//! that exact set once.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use bollard::Docker;
use bollard::query_parameters::{
    ListContainersOptions, ListImagesOptions, ListNetworksOptions, ListVolumesOptions,
    RemoveContainerOptions, RemoveImageOptions, RemoveVolumeOptions,
};
use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::{approved, container_name, docker, is_cairns, short_id, strict_question, timed};
use crate::DevOps;

/// Objects named in one answer at most; the rest are counted.
const MAX_SHOWN: usize = 30;

/// The `docker_prune` tool.
pub struct DockerPrune;

/// A kind of object to prune.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum What {
    /// Stopped containers (exited, created, dead).
    Containers,
    /// Dangling (untagged) images.
    Images,
    /// Networks no container is attached to (never the engine's own bridge, host, none).
    Networks,
    /// Volumes no container uses.
    Volumes,
}

/// Arguments of `docker_prune`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// What to prune; default `["containers", "images"]`.
    #[serde(default)]
    what: Option<Vec<What>>,
    /// Also remove objects cairn did not create (asks the user to approve the exact list once).
    #[serde(default)]
    include_others: bool,
    /// Only say what would be removed.
    #[serde(default)]
    dry_run: bool,
}

impl Tool for DockerPrune {
    type Host = DevOps;
    type Args = Args;
    const NAME: &'static str = "docker_prune";
    const TITLE: &'static str = "Prune Docker objects";
    const DESCRIPTION: &'static str = "Remove stopped containers, dangling images, and unused networks or volumes, as chosen. By default only objects cairn created; `include_others: true` widens it and asks the user to approve that exact list once. `dry_run` shows the list only.";
    const CATEGORY: Category = Category::Devops;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &DevOps, args: Args, cx: CallContext) -> CallToolResult {
        prune(host, &args, &cx).await.unwrap_or_else(error)
    }
}

/// One object a prune would remove.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Candidate {
    what: What,
    /// Full id (the name, for a volume).
    id: String,
    shown: String,
    cairns: bool,
}

impl What {
    fn word(self) -> &'static str {
        match self {
            What::Containers => "container",
            What::Images => "image",
            What::Networks => "network",
            What::Volumes => "volume",
        }
    }
}

async fn prune(host: &DevOps, args: &Args, cx: &CallContext) -> Result<CallToolResult, String> {
    let docker = docker(host).await?;
    let mut what: Vec<What> = args
        .what
        .clone()
        .unwrap_or_else(|| vec![What::Containers, What::Images]);
    what.sort();
    what.dedup();
    if what.is_empty() {
        return Err("`what` is empty: name containers, images, networks or volumes".into());
    }
    let mut all = Vec::new();
    for w in &what {
        all.extend(candidates(&docker, cx, *w).await?);
    }
    let (chosen, skipped): (Vec<Candidate>, Vec<Candidate>) = all
        .into_iter()
        .partition(|c| c.cairns || args.include_others);
    let mut out = String::new();
    if chosen.is_empty() {
        out.push_str("nothing to prune");
        if !skipped.is_empty() {
            let _ = write!(
                out,
                "; {} object(s) not created by cairn were left alone (`include_others: true` \
                 includes them, after the user approves)",
                skipped.len()
            );
        }
        return Ok(text(out));
    }
    if args.dry_run {
        let _ = writeln!(out, "would remove {} object(s):", chosen.len());
        list(&mut out, &chosen);
        note_skipped(&mut out, &skipped);
        return Ok(text(out));
    }
    let others: Vec<&Candidate> = chosen.iter().filter(|c| !c.cairns).collect();
    if !others.is_empty() {
        let key = set_key(&chosen);
        if !approved(host, &key) {
            let mut message = format!(
                "refused for now: this prune would remove {} object(s) cairn did not create; it \
                 needs the user's approval of exactly this list (asked once):\n",
                others.len()
            );
            list(&mut message, &chosen);
            let shown = format!(
                "prune of {} Docker object(s), {} not created by cairn",
                chosen.len(),
                others.len()
            );
            return Ok(strict_question(
                message,
                shown,
                key,
                "not created by cairn: pruning them needs your approval of this exact list, once",
            ));
        }
    }
    let mut removed = Vec::new();
    let mut failed = Vec::new();
    for c in &chosen {
        match remove(&docker, cx, c).await {
            Ok(()) => removed.push(c.clone()),
            Err(e) => failed.push(format!("{}: {e}", c.shown)),
        }
    }
    let _ = writeln!(out, "removed {} object(s):", removed.len());
    list(&mut out, &removed);
    if !failed.is_empty() {
        let _ = writeln!(out, "{} could not be removed:", failed.len());
        for f in failed.iter().take(MAX_SHOWN) {
            let _ = writeln!(out, "  {f}");
        }
    }
    note_skipped(&mut out, &skipped);
    Ok(text(out))
}

fn list(out: &mut String, items: &[Candidate]) {
    for c in items.iter().take(MAX_SHOWN) {
        let _ = writeln!(
            out,
            "  {}{}",
            c.shown,
            if c.cairns { "" } else { " (not cairn's)" }
        );
    }
    if items.len() > MAX_SHOWN {
        let _ = writeln!(out, "  … and {} more", items.len() - MAX_SHOWN);
    }
}

fn note_skipped(out: &mut String, skipped: &[Candidate]) {
    if !skipped.is_empty() {
        let _ = writeln!(
            out,
            "{} object(s) not created by cairn were left alone (`include_others: true` includes them)",
            skipped.len()
        );
    }
}

/// The approval key of exactly this set: a hash of the sorted kinds and ids, so an approval
/// never covers a different set.
fn set_key(items: &[Candidate]) -> String {
    let mut ids: Vec<String> = items
        .iter()
        .map(|c| format!("{}:{}", c.what.word(), c.id))
        .collect();
    ids.sort();
    let digest = Sha256::digest(ids.join("\n").as_bytes());
    let hex: String = digest.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("docker:prune:{hex}")
}

async fn candidates(
    docker: &Docker,
    cx: &CallContext,
    what: What,
) -> Result<Vec<Candidate>, String> {
    let mut found = Vec::new();
    match what {
        What::Containers => {
            let filters = HashMap::from([(
                "status".to_owned(),
                vec!["exited".to_owned(), "created".to_owned(), "dead".to_owned()],
            )]);
            let options = ListContainersOptions {
                all: true,
                filters: Some(filters),
                ..Default::default()
            };
            for c in timed(
                cx,
                "listing containers",
                docker.list_containers(Some(options)),
            )
            .await?
            {
                let id = c.id.clone().unwrap_or_default();
                found.push(Candidate {
                    what,
                    shown: format!(
                        "container {} ({})",
                        container_name(&c).unwrap_or_default(),
                        short_id(&id)
                    ),
                    id,
                    cairns: is_cairns(c.labels.as_ref()),
                });
            }
        }
        What::Images => {
            let filters = HashMap::from([("dangling".to_owned(), vec!["true".to_owned()])]);
            let options = ListImagesOptions {
                filters: Some(filters),
                ..Default::default()
            };
            for i in timed(cx, "listing images", docker.list_images(Some(options))).await? {
                found.push(Candidate {
                    what,
                    shown: format!("image <none> ({})", short_id(&i.id)),
                    cairns: is_cairns(Some(&i.labels)),
                    id: i.id,
                });
            }
        }
        What::Networks => {
            let containers = timed(
                cx,
                "listing containers",
                docker.list_containers(Some(ListContainersOptions {
                    all: true,
                    ..Default::default()
                })),
            )
            .await?;
            let used: HashSet<String> = containers
                .iter()
                .filter_map(|c| c.network_settings.as_ref()?.networks.as_ref())
                .flat_map(|n| {
                    n.iter()
                        .flat_map(|(name, e)| [Some(name.clone()), e.network_id.clone()])
                        .flatten()
                })
                .collect();
            let networks = timed(
                cx,
                "listing networks",
                docker.list_networks(None::<ListNetworksOptions>),
            )
            .await?;
            for n in networks {
                let name = n.name.clone().unwrap_or_default();
                let id = n.id.clone().unwrap_or_default();
                if ["bridge", "host", "none"].contains(&name.as_str())
                    || used.contains(&name)
                    || used.contains(&id)
                {
                    continue;
                }
                found.push(Candidate {
                    what,
                    shown: format!("network {name} ({})", short_id(&id)),
                    id,
                    cairns: is_cairns(n.labels.as_ref()),
                });
            }
        }
        What::Volumes => {
            let filters = HashMap::from([("dangling".to_owned(), vec!["true".to_owned()])]);
            let options = ListVolumesOptions {
                filters: Some(filters),
            };
            let response = timed(cx, "listing volumes", docker.list_volumes(Some(options))).await?;
            for v in response.volumes.unwrap_or_default() {
                found.push(Candidate {
                    what,
                    shown: format!("volume {}", v.name),
                    cairns: is_cairns(Some(&v.labels)),
                    id: v.name,
                });
            }
        }
    }
    found.sort();
    Ok(found)
}

async fn remove(docker: &Docker, cx: &CallContext, c: &Candidate) -> Result<(), String> {
    let what = format!("removing {}", c.shown);
    let result = match c.what {
        What::Containers => {
            let options = RemoveContainerOptions {
                v: true,
                ..Default::default()
            };
            timed(cx, &what, docker.remove_container(&c.id, Some(options))).await
        }
        What::Images => timed(
            cx,
            &what,
            docker.remove_image(&c.id, None::<RemoveImageOptions>, None),
        )
        .await
        .map(drop),
        What::Networks => timed(cx, &what, docker.remove_network(&c.id)).await,
        What::Volumes => {
            timed(
                cx,
                &what,
                docker.remove_volume(&c.id, None::<RemoveVolumeOptions>),
            )
            .await
        }
    };
    // `timed` already words the engine's error; keep only the reason.
    result.map_err(|e| e.split_once(": ").map_or(e.clone(), |(_, r)| r.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(what: What, id: &str) -> Candidate {
        Candidate {
            what,
            id: id.into(),
            shown: id.into(),
            cairns: false,
        }
    }

    #[test]
    fn the_approval_key_is_the_exact_set_in_any_order() {
        let a = [c(What::Containers, "1"), c(What::Images, "2")];
        let b = [c(What::Images, "2"), c(What::Containers, "1")];
        let more = [
            c(What::Images, "2"),
            c(What::Containers, "1"),
            c(What::Volumes, "v"),
        ];
        assert_eq!(set_key(&a), set_key(&b));
        assert_ne!(set_key(&a), set_key(&more));
        assert!(set_key(&a).starts_with("docker:prune:"));
    }
}
