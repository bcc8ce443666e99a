//! `cairn select "request"`: which tools a request would be shown, as the agent chooses them
//! (core tools, stage 1 over the catalog, the model's filter when it is on), with stage 1's
//! scores and the tokens of the chosen definitions against the whole catalog's.

use std::path::PathBuf;
use std::process::ExitCode;

use cairn_agent::Mode;
use cairn_agent::model::ToolSpec;
use cairn_agent::policy::Decision;
use cairn_agent::select::{FilterOutcome, RankTool, RunSelection};
use cairn_agent::tools::ToolInfo;
use serde_json::json;

use crate::compose::{self, Env};

/// What `cairn select` was asked.
pub struct SelectRequest {
    pub root: PathBuf,
    pub query: String,
    pub agent_mode: bool,
    pub no_filter: bool,
    pub json: bool,
}

#[allow(clippy::print_stdout, clippy::print_stderr)]
pub async fn select(env: &Env, request: SelectRequest) -> anyhow::Result<ExitCode> {
    let (mut config, mcp) = compose::terminal_setup(env, &request.root, true).await?;
    if request.no_filter {
        config.selection.filter = false;
    }
    config.selection.enabled = true;
    let agent = compose::agent(&config, env, &mcp);
    let mode = if request.agent_mode {
        Mode::Agent
    } else {
        Mode::Chat
    };
    let catalog: Vec<ToolInfo> = agent
        .tools
        .list()
        .into_iter()
        .filter(|t| mode == Mode::Agent || !t.agent_only)
        .collect();
    let allowed: Vec<&ToolInfo> = catalog
        .iter()
        .filter(|t| agent.policy.decide(t).decision != Decision::Deny)
        .collect();

    // Unlike a turn, the command waits for the model and the catalog's embeddings, so what it
    // prints is what a warmed-up server would choose.
    let selector = crate::selection::selector(&config.selection);
    let entries: Vec<_> = allowed
        .iter()
        .map(|t| crate::selection::entry(&RankTool::from_info(t)))
        .collect();
    let prepared = {
        let selector = selector.clone();
        tokio::task::spawn_blocking(move || selector.prepare(&entries)).await?
    };
    if let Err(e) = &prepared {
        eprintln!("cairn: tools are chosen by keywords only: {e}");
    }

    let Some(selection) = agent.selection.clone() else {
        anyhow::bail!("selection is off (selection.enabled = false)");
    };
    let mut state = RunSelection::default();
    let chosen = cairn_agent::select::choose(
        &selection,
        agent.model.as_ref(),
        &allowed,
        &[],
        &request.query,
        &mut state,
    )
    .await;

    let spec = |t: &ToolInfo| ToolSpec {
        name: t.tool.name.to_string(),
        description: t.tool.description.as_deref().unwrap_or_default().to_owned(),
        input_schema: serde_json::Value::Object((*t.tool.input_schema).clone()),
    };
    let mut offered: Vec<ToolSpec> = chosen
        .names
        .iter()
        .filter_map(|n| allowed.iter().find(|t| t.tool.name == n.as_str()))
        .map(|t| spec(t))
        .collect();
    offered.push(cairn_agent::select::tool_search_spec());
    let all: Vec<ToolSpec> = allowed.iter().map(|t| spec(t)).collect();
    let bpe = tiktoken_rs::o200k_base().map_err(|e| anyhow::anyhow!("token counter: {e}"))?;
    let tokens = |specs: &[ToolSpec]| -> usize {
        specs
            .iter()
            .map(|s| {
                let text = json!({"name": s.name, "description": s.description,
                                  "inputSchema": s.input_schema})
                .to_string();
                bpe.encode_ordinary(&text).len()
            })
            .sum()
    };
    let (offered_tokens, all_tokens) = (tokens(&offered), tokens(&all));
    let score = |name: &str| {
        chosen
            .candidates
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| *s)
    };
    let role = |name: &str| {
        if selection.config.core_tools.iter().any(|c| c == name) {
            "core"
        } else if name == cairn_agent::select::TOOL_SEARCH {
            "always"
        } else {
            "selected"
        }
    };
    let filter = match &chosen.filter {
        None => json!({"ran": false}),
        Some(FilterOutcome::Picked(names)) => json!({"ran": true, "picked": names}),
        Some(FilterOutcome::FellBack(reason)) => json!({"ran": true, "fellBack": reason}),
    };

    if request.json {
        let tools: Vec<_> = offered
            .iter()
            .map(|t| json!({"name": t.name, "role": role(&t.name), "score": score(&t.name)}))
            .collect();
        let candidates: Vec<_> = chosen
            .candidates
            .iter()
            .map(|(name, score)| json!({"name": name, "score": score}))
            .collect();
        let report = json!({
            "query": request.query,
            "tools": tools,
            "candidates": candidates,
            "filter": filter,
            "lexicalOnly": chosen.degraded,
            "tokens": {"offered": offered_tokens, "catalog": all_tokens, "tokenizer": "o200k_base"},
            "catalogTools": allowed.len(),
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} of {} tools for: {}",
            offered.len(),
            allowed.len(),
            request.query
        );
        for t in &offered {
            let score = score(&t.name).map_or_else(|| "-".to_owned(), |s| format!("{s:.4}"));
            println!("  {:<9} {:>7}  {}", role(&t.name), score, t.name);
        }
        let candidates: Vec<&str> = chosen.candidates.iter().map(|(n, _)| n.as_str()).collect();
        println!("stage 1 candidates: {}", candidates.join(", "));
        match &chosen.filter {
            None => println!("filter: did not run"),
            Some(FilterOutcome::Picked(names)) => println!("filter picked: {}", names.join(", ")),
            Some(FilterOutcome::FellBack(reason)) => {
                println!("filter fell back to stage 1: {reason}")
            }
        }
        if let Some(reason) = &chosen.degraded {
            println!("ranking: keywords only ({reason})");
        }
        println!(
            "definitions: {offered_tokens} tokens offered, {all_tokens} for the whole catalog (o200k_base)"
        );
    }
    mcp.hub.shutdown().await;
    compose::shutdown_sandbox().await;
    Ok(ExitCode::SUCCESS)
}
