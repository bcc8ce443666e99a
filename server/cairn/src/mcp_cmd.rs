//! `cairn mcp`: status of the configured servers, importing other clients' server files,
//! trusting a workspace's own servers, and reviewing changed or suspicious tools.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use cairn_mcp::{ReviewReason, ServerState, ServerStatus};

use crate::compose::{self, Env};

/// A line for one server: whether it is healthy, and what to say.
pub fn describe(s: &ServerStatus) -> (bool, String) {
    let transport = serde_json::to_value(s.transport)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    match &s.state {
        ServerState::Running { tools } => {
            (true, format!("running over {transport}, {tools} tools"))
        }
        ServerState::Starting => (true, format!("starting over {transport}")),
        ServerState::Restarting { attempt, reason } => {
            (false, format!("restarting (attempt {attempt}): {reason}"))
        }
        ServerState::Failed { reason } => (false, format!("failed: {reason}")),
        ServerState::Disabled => (true, "disabled in the configuration".into()),
    }
}

/// `cairn mcp status`.
#[allow(clippy::print_stdout)]
pub async fn status(env: &Env, root: PathBuf, as_json: bool) -> anyhow::Result<ExitCode> {
    let (_, mcp) = compose::terminal_setup(env, &root, false).await?;
    let statuses: Vec<ServerStatus> = mcp
        .hub
        .status()
        .into_iter()
        .filter(|s| s.name != "cairn-files")
        .collect();
    let reviews = mcp.reviewer.pending();
    let collisions = mcp.hub.collisions();
    // A failure reason can quote a server's stderr, which may echo a secret it was given.
    let redactor = crate::secrets::log_redactor(env);
    let mut healthy = true;
    if as_json {
        let value = serde_json::json!({
            "servers": statuses,
            "waitingForTrust": mcp.waiting_for_trust,
            "problems": mcp.problems.iter().map(|(s, m)| serde_json::json!({"server": s, "message": m})).collect::<Vec<_>>(),
            "reviews": reviews,
            "collisions": collisions.iter().map(|c| serde_json::json!({
                "name": c.name, "claimants": c.claimants, "message": c.to_string(),
            })).collect::<Vec<_>>(),
        });
        let text = serde_json::to_string_pretty(&value)?;
        println!("{}", redactor.redact(&text));
        healthy = statuses.iter().all(|s| describe(s).0)
            && mcp.problems.is_empty()
            && collisions.is_empty();
    } else {
        if statuses.is_empty() && mcp.waiting_for_trust.is_empty() && mcp.problems.is_empty() {
            println!(
                "no MCP servers configured (add [mcp.servers.NAME] to your config, or `cairn mcp import FILE`)"
            );
        }
        for s in &statuses {
            let (good, detail) = describe(s);
            healthy &= good;
            println!("{:<20} {}", s.name, redactor.redact(&detail));
        }
        for name in &mcp.waiting_for_trust {
            println!(
                "{name:<20} declared by this workspace; waits for your trust (`cairn mcp trust -w {}`)",
                root.display()
            );
        }
        for (name, problem) in &mcp.problems {
            healthy = false;
            println!("{name:<20} not started: {problem}");
        }
        for r in &reviews {
            let why = match &r.reason {
                ReviewReason::Changed { .. } => "its definition changed since you approved it",
                ReviewReason::Flagged { .. } => "its description looks like an attack on the model",
            };
            println!(
                "tool {:<15} disabled: {why} (`cairn mcp review -w {}`)",
                r.public_name,
                root.display()
            );
        }
        for c in &collisions {
            healthy = false;
            println!("tool {:<15} unusable: {c}", c.name);
        }
    }
    mcp.hub.shutdown().await;
    Ok(if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `cairn mcp import FILE`: appends the servers of another client's file to cairn's config.
#[allow(clippy::print_stdout, clippy::print_stderr)]
pub fn import(env: &Env, file: &Path, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let imported = cairn_config::import_file(file)?;
    for w in &imported.warnings {
        eprintln!("cairn: warning: {w}");
    }
    let target = match &workspace {
        Some(root) => root.join(".cairn").join("config.toml"),
        None => cairn_config::default_user_config_path(env.get("XDG_CONFIG_HOME"), env.get("HOME"))
            .ok_or_else(|| {
                anyhow::format_err!("no HOME or XDG_CONFIG_HOME to find your config file")
            })?,
    };
    let existing = match std::fs::read_to_string(&target) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => anyhow::bail!("cannot read {}: {e}", target.display()),
    };
    cairn_config::check_conflicts(&existing, &imported.servers)?;
    let rendered = cairn_config::render_servers_toml(&imported.servers)?;
    let mut text = existing;
    if !text.is_empty() && !text.ends_with("\n\n") {
        text.push_str(if text.ends_with('\n') { "\n" } else { "\n\n" });
    }
    text.push_str(&rendered);
    // The result must still be a valid configuration before it replaces the file.
    cairn_config::Layer::from_toml_str(&text, cairn_config::LayerSource::UserFile(target.clone()))?;
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = target.with_extension("toml.tmp");
    std::fs::write(&tmp, &text)?;
    std::fs::rename(&tmp, &target)?;
    let names: Vec<&String> = imported.servers.keys().collect();
    println!(
        "imported {} server(s) from {} ({}) into {}: {}",
        names.len(),
        file.display(),
        imported.format,
        target.display(),
        names
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(ExitCode::SUCCESS)
}

/// `cairn mcp trust -w DIR`: the workspace's own servers may start, as they are now.
#[allow(clippy::print_stdout)]
pub fn trust(env: &Env, root: PathBuf) -> anyhow::Result<ExitCode> {
    let layers = compose::load_layers(env, Some(&root))?;
    let names = compose::trust_workspace(env, &layers, &root).map_err(anyhow::Error::msg)?;
    if names.is_empty() {
        println!("this workspace declares no MCP servers");
    } else {
        println!("trusted for {}: {}", root.display(), names.join(", "));
    }
    Ok(ExitCode::SUCCESS)
}

/// `cairn mcp review -w DIR [--approve SERVER TOOL]`: what waits for review, and approving it.
#[allow(clippy::print_stdout)]
pub async fn review(
    env: &Env,
    root: PathBuf,
    approve: Option<(String, String)>,
) -> anyhow::Result<ExitCode> {
    let (_, mcp) = compose::terminal_setup(env, &root, false).await?;
    let result = match approve {
        Some((server, tool)) => {
            mcp.reviewer
                .approve(&server, &tool)
                .map_err(anyhow::Error::msg)?;
            println!("approved `{tool}` of `{server}` as it is now");
            ExitCode::SUCCESS
        }
        None => {
            let reviews = mcp.reviewer.pending();
            if reviews.is_empty() {
                println!("nothing to review");
            }
            for r in &reviews {
                match &r.reason {
                    ReviewReason::Changed { diff } => {
                        println!(
                            "{} (server `{}`): changed since you approved it\n{diff}",
                            r.public_name, r.server
                        )
                    }
                    ReviewReason::Flagged { flags } => {
                        println!(
                            "{} (server `{}`): suspicious definition",
                            r.public_name, r.server
                        );
                        for f in flags {
                            println!("  - {f}");
                        }
                    }
                }
                println!(
                    "  approve with: cairn mcp review -w {} --approve {} {}\n",
                    root.display(),
                    r.server,
                    r.tool
                );
            }
            ExitCode::SUCCESS
        }
    };
    mcp.hub.shutdown().await;
    Ok(result)
}
