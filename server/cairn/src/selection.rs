//! Tool selection as the agent uses it: `cairn-select`'s [`Selector`] (local embeddings and
//! BM25) behind `cairn-agent`'s [`ToolRanker`] seam, one selector per process, and the
//! `[selection]` configuration turned into the agent's.
//!
//! The selector lives as long as the process: its model and its index of tool embeddings are
//! worth keeping across runs, and a configuration change only replaces it when the model or the
//! cache directory changes.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use cairn_agent::select::{
    RankTool, RankerStatus, Ranking, Selection, SelectionConfig as AgentSelection, ToolRanker,
};
use cairn_config::{Config, SelectionConfig};
use cairn_select::embed::ModelSpec;
use cairn_select::rank::Strategy;
use cairn_select::selector::{ModelStatus, Selector, SelectorOptions, ToolEntry};
use futures::future::BoxFuture;

/// The process's selector, with the options it was made for.
static SELECTOR: Mutex<Option<Arc<Selector>>> = Mutex::new(None);

/// Callbacks that want to hear about the model's status (the editor shows progress and
/// failures); every selector made later reports to them too.
type StatusListener = Arc<dyn Fn(&ModelStatus) + Send + Sync>;
static LISTENERS: Mutex<Vec<StatusListener>> = Mutex::new(Vec::new());

fn options(config: &SelectionConfig) -> SelectorOptions {
    SelectorOptions {
        model: ModelSpec {
            repo: config.model.clone(),
            revision: config.revision.clone(),
        },
        cache_dir: config
            .cache_dir
            .clone()
            .or_else(cairn_select::cache::EmbeddingCache::default_dir),
        strategy: Strategy::Hybrid,
        load_model: true,
    }
}

/// The selector for this configuration: the existing one when its model and cache are the
/// same, else a new one.
pub fn selector(config: &SelectionConfig) -> Arc<Selector> {
    let wanted = options(config);
    let mut slot = SELECTOR.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(existing) = slot.as_ref()
        && existing.options().model == wanted.model
        && existing.options().cache_dir == wanted.cache_dir
    {
        return existing.clone();
    }
    let selector = Selector::new(wanted);
    for listener in LISTENERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
    {
        let listener = listener.clone();
        selector.on_status(Box::new(move |status| listener(status)));
    }
    *slot = Some(selector.clone());
    selector
}

/// Calls `listener` with the current selector's status, then on every status change of it and
/// of every later selector.
pub fn on_status(listener: StatusListener) {
    LISTENERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(listener.clone());
    let current = SELECTOR
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if let Some(selector) = current {
        listener(&selector.status());
        selector.on_status(Box::new(move |status| listener(status)));
    }
}

/// The status as the editor is told it; `None` before loading starts.
pub fn ranker_status(status: &ModelStatus) -> Option<RankerStatus> {
    match status {
        ModelStatus::NotStarted => None,
        ModelStatus::Loading => Some(RankerStatus::Loading(None)),
        ModelStatus::Downloading { file, percent } => Some(RankerStatus::Loading(Some(format!(
            "downloading {file}: {percent}%"
        )))),
        ModelStatus::Ready => Some(RankerStatus::Ready),
        ModelStatus::Unavailable { message } => Some(RankerStatus::Unavailable(message.clone())),
    }
}

/// The agent's selection for a configuration; `None` when `selection.enabled` is off.
pub fn agent_selection(config: &Config) -> Option<Selection> {
    let c = &config.selection;
    if !c.enabled {
        return None;
    }
    let selector = selector(c);
    // Loading starts now, in the background, so the first request is likely to find it ready.
    selector.warm_up();
    Some(Selection {
        config: AgentSelection {
            top_k: c.top_k.max(1),
            max_tools: c.max_tools.max(1),
            core_tools: c.core_tools.clone(),
            filter: c.filter,
            filter_timeout: Duration::from_secs(c.filter_timeout_secs.max(1)),
            context_messages: c.context_messages,
        },
        ranker: Arc::new(SelectorRanker(selector)),
    })
}

/// [`Selector`] as a [`ToolRanker`]: ranking runs on a blocking thread, since embedding the
/// request is CPU work.
pub struct SelectorRanker(pub Arc<Selector>);

/// The ranker's view of a tool. An external tool is retrieved by the name its server gave it:
/// the `server__` of its public name only repeats the server, which the text names anyway, and
/// measured on the shared sets it pulled requests towards whichever server's name they shared
/// (recall@50 0.88 against 0.94 on the replica with the Docker-registry tools).
pub fn entry(tool: &RankTool) -> ToolEntry {
    let prefix = format!(
        "{}{}",
        cairn_mcp::names::sanitize(&tool.server),
        cairn_mcp::names::SEPARATOR
    );
    let name = match tool.name.strip_prefix(&prefix) {
        Some(own) if !tool.builtin && !own.is_empty() => own,
        _ => tool.name.as_str(),
    };
    ToolEntry {
        name: name.to_owned(),
        server: tool.server.clone(),
        description: tool.description.clone(),
        input_schema: tool.input_schema.clone(),
    }
}

impl ToolRanker for SelectorRanker {
    fn rank(
        &self,
        queries: Vec<String>,
        tools: Arc<Vec<RankTool>>,
        k: usize,
    ) -> BoxFuture<'static, Ranking> {
        let selector = self.0.clone();
        Box::pin(async move {
            let ranked = tokio::task::spawn_blocking(move || {
                let entries: Vec<ToolEntry> = tools.iter().map(entry).collect();
                selector.rank(&queries, &entries, k)
            })
            .await;
            match ranked {
                Ok(ranked) => Ranking {
                    order: ranked.order,
                    degraded: ranked.lexical_only,
                },
                // A panic in ranking must not end the turn: offer the core tools only.
                Err(e) => Ranking {
                    order: Vec::new(),
                    degraded: Some(format!("ranking failed: {e}")),
                },
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, server: &str, builtin: bool) -> RankTool {
        RankTool {
            name: name.into(),
            server: server.into(),
            description: "d".into(),
            input_schema: serde_json::json!({}),
            builtin,
        }
    }

    #[test]
    fn an_external_tool_is_retrieved_by_its_own_name() {
        let e = entry(&tool("github__create_issue", "github", false));
        assert_eq!(e.name, "create_issue");
        assert!(
            e.retrieval_text()
                .starts_with("create_issue: d (server: github)")
        );
        // The prefix is the sanitised server name, as the hub builds it.
        assert_eq!(entry(&tool("my_srv__x", "my.srv", false)).name, "x");
        // Built-in names and names without the prefix are kept whole.
        assert_eq!(entry(&tool("git__log", "git", true)).name, "git__log");
        assert_eq!(entry(&tool("other__x", "github", false)).name, "other__x");
        assert_eq!(entry(&tool("github__", "github", false)).name, "github__");
    }
}
