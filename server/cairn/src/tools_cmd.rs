//! `cairn tools list` and `cairn tools call`: the catalog, and one call through the same policy
//! and guards the agent uses.

use std::path::PathBuf;
use std::process::ExitCode;

use cairn_agent::Gate;
use cairn_agent::policy::SessionGrants;
use cairn_agent::tools::{CallContext, Category, ToolInfo};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::compose::{self, Env};
use crate::terminal::TerminalApprover;

#[allow(clippy::print_stdout)]
pub async fn list(
    env: &Env,
    root: PathBuf,
    as_json: bool,
    by_category: bool,
) -> anyhow::Result<ExitCode> {
    let (config, mcp) = compose::terminal_setup(env, &root, true).await?;
    let host = compose::tool_host(&mcp.hub);
    let policy = compose::policy(&config);
    let tools = host.list();
    if by_category {
        let counts = CategoryCounts::of(&tools);
        if as_json {
            println!("{}", serde_json::to_string_pretty(&counts.to_json())?);
        } else {
            print!("{}", counts.table());
        }
    } else if as_json {
        let entries: Vec<_> = tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.tool.name,
                    "description": t.tool.description,
                    "category": t.category,
                    "effect": t.effect,
                    "agentOnly": t.agent_only,
                    "policy": policy.decide(t).decision,
                    "inputSchema": *t.tool.input_schema,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&entries)?);
    } else {
        for t in &tools {
            let decision = serde_json::to_value(policy.decide(t).decision)?;
            println!(
                "{:<24} {:<13} {:<7} {:<6} {}",
                t.tool.name,
                t.category,
                t.effect.as_str(),
                decision.as_str().unwrap_or_default(),
                t.tool.description.as_deref().unwrap_or_default()
            );
        }
    }
    mcp.hub.shutdown().await;
    compose::shutdown_sandbox().await;
    Ok(ExitCode::SUCCESS)
}

/// How many tools the catalog has in each built-in category, and how many come from elsewhere
/// (MCP servers, their resources).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct CategoryCounts {
    per_category: Vec<(Category, usize)>,
    other: usize,
}

impl CategoryCounts {
    pub(crate) fn of(tools: &[ToolInfo]) -> CategoryCounts {
        let per_category = Category::ALL
            .into_iter()
            .map(|c| (c, tools.iter().filter(|t| t.category == c.as_str()).count()))
            .collect::<Vec<_>>();
        let built_in: usize = per_category.iter().map(|(_, n)| n).sum();
        CategoryCounts {
            per_category,
            other: tools.len() - built_in,
        }
    }

    fn total(&self) -> usize {
        self.per_category.iter().map(|(_, n)| n).sum()
    }

    pub(crate) fn table(&self) -> String {
        let mut out = format!("{:<18} {:>5} {:>7}\n", "category", "tools", "target");
        for (c, n) in &self.per_category {
            out.push_str(&format!("{:<18} {n:>5} {:>7}\n", c.label(), c.target()));
        }
        let target: usize = Category::ALL.iter().map(|c| c.target()).sum();
        out.push_str(&format!(
            "{:<18} {:>5} {target:>7}\n",
            "built-in",
            self.total()
        ));
        if self.other > 0 {
            out.push_str(&format!("{:<18} {:>5}\n", "MCP", self.other));
        }
        out
    }

    pub(crate) fn to_json(&self) -> serde_json::Value {
        let categories: Vec<_> = self
            .per_category
            .iter()
            .map(|(c, n)| {
                json!({"category": c.as_str(), "label": c.label(), "tools": n, "target": c.target()})
            })
            .collect();
        let target: usize = Category::ALL.iter().map(|c| c.target()).sum();
        json!({
            "categories": categories,
            "builtIn": self.total(),
            "target": target,
            "mcpServers": self.other,
        })
    }
}

#[allow(clippy::print_stdout)]
pub async fn call(
    env: &Env,
    root: PathBuf,
    name: &str,
    args: &str,
    as_json: bool,
    yes: bool,
) -> anyhow::Result<ExitCode> {
    let (config, mcp) = compose::terminal_setup(env, &root, true).await?;
    let host = compose::tool_host(&mcp.hub);
    let policy = compose::policy(&config);
    let arguments: serde_json::Value = serde_json::from_str(args)
        .map_err(|e| anyhow::format_err!("--args is not valid JSON: {e}"))?;
    let serde_json::Value::Object(map) = arguments.clone() else {
        anyhow::bail!("--args must be a JSON object");
    };
    let result = match host.list().into_iter().find(|t| t.tool.name == name) {
        None => CallToolResult::error(vec![ContentBlock::text(format!("unknown tool `{name}`"))]),
        Some(info) => {
            let approver = TerminalApprover { yes };
            let grants = SessionGrants::default();
            let path_approvals = cairn_tools::WorkspacePathApprovals(mcp.path_approvals.clone());
            let gate = Gate {
                policy: &policy,
                grants: &grants,
                approver: &approver,
                paths: Some(&path_approvals),
                ask_anyway: false,
            };
            match gate
                .authorize(&info, "cli", "cli", &arguments, |_, _, _| {})
                .await
            {
                Err(refusal) => CallToolResult::error(vec![ContentBlock::text(refusal)]),
                Ok(()) => {
                    let ctx = CallContext {
                        session_id: String::new(),
                        run_id: "cli".into(),
                        call_id: "cli".into(),
                        cancel: CancellationToken::new(),
                    };
                    let result = host.call(name, map.clone(), ctx.clone()).await;
                    // A protected path: ask about exactly that path, then once more.
                    match gate
                        .approve_protected(&info, "cli", "cli", &arguments, &result, |_, _, _| {})
                        .await
                    {
                        None => result,
                        Some(paths) => {
                            let _held = gate.hold(paths);
                            host.call(name, map, ctx).await
                        }
                    }
                }
            }
        }
    };
    // What a tool returns passes the redactor here too: terminal output gets pasted and shared.
    let redactor = crate::redaction::agent_redactor(env);
    if as_json {
        let shown =
            cairn_agent::redact::redact_json(redactor.as_ref(), serde_json::to_value(&result)?);
        println!("{}", serde_json::to_string_pretty(&shown)?);
    } else {
        println!(
            "{}",
            redactor.redact(&cairn_agent::run::result_text(&result))
        );
    }
    mcp.hub.shutdown().await;
    compose::shutdown_sandbox().await;
    Ok(if result.is_error == Some(true) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
