//! `cairn bench select --filter` and `--steps`: tool selection as the agent runs it, end to end.
//!
//! `cairn_select::bench` scores stage 1's ranking alone. This drives the agent's own
//! [`cairn_agent::select::choose`] instead: the core tools, the live [`cairn_select::selector`]
//! over the whole catalog, the model's filter through the configured provider (`--filter`), and
//! the tools a run keeps once called. It runs each labelled request, or each step of a
//! multi-step task replayed with the conversation so far (`--steps`), and reports what each stage
//! hands on: the candidates' recall (what the filter is given; recall@K), the filter request's
//! tokens, what the acting model is finally offered (recall, and the tokens of the full
//! definitions), the provider's token counts and the filter's latency. Figures are printed,
//! never asserted: a weak model is not an error.
//!
//! External tools are named as the hub names them (`server__tool`, [`cairn_mcp::names::public_name`]), so the filter sees what it
//! would see in a session; built-in tools keep their names and their lead in the ranking.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use cairn_agent::model::{
    Message, ModelClient, ModelError, ModelRequest, ModelStream, ToolCallRequest,
};
use cairn_agent::select::{self, FilterOutcome, RankTool, RunSelection, Selection};
use cairn_agent::tools::{Effect, ToolInfo};
use cairn_select::bench::MatchBy;
use cairn_select::catalog::{self, Tool};
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use crate::compose::{self, Env};

/// What to run.
#[derive(Debug, Clone)]
pub struct Pipeline {
    /// Catalog files, the scored one first; `builtin[i]` marks cairn's own catalog.
    pub catalogs: Vec<PathBuf>,
    pub builtin: Vec<bool>,
    pub input: Input,
    pub match_by: MatchBy,
    /// Each k is one run with `selection.top_k = k`; empty: the configured `top_k`.
    pub ks: Vec<usize>,
    /// Run stage 2 through the configured provider.
    pub filter: bool,
    pub limit: Option<usize>,
    pub sample: Option<usize>,
    pub json: bool,
}

/// Labelled requests, or multi-step tasks.
#[derive(Debug, Clone)]
pub enum Input {
    Queries(PathBuf),
    Tasks(PathBuf),
}

/// One multi-step task (`bench/cairn/tasks.jsonl`).
#[derive(Debug, Clone, Deserialize)]
pub struct Task {
    pub tid: String,
    pub task: String,
    pub steps: Vec<Step>,
}

/// One step: what the conversation shows before it, and the tools it needs.
#[derive(Debug, Clone, Deserialize)]
pub struct Step {
    pub say: String,
    pub tools: Vec<String>,
}

/// The figures of one k.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Row {
    pub top_k: usize,
    /// Selections made (requests, or steps of tasks).
    pub selections: usize,
    /// What the filter is handed (stage 1's candidates, the core tools and the tools the run
    /// keeps): share of needed tools among them, and share of selections with all of them.
    pub candidates_recall: f64,
    pub candidates_complete: f64,
    /// What the acting model is offered.
    pub offered_recall: f64,
    pub offered_complete: f64,
    /// Tasks (steps mode) where every step had every needed tool: among the candidates, and
    /// offered.
    pub tasks_complete_candidates: Option<f64>,
    pub tasks_complete_offered: Option<f64>,
    /// o200k_base tokens of the filter's request (system and prompt), whether or not it ran.
    pub filter_request_tokens_mean: f64,
    pub filter_request_tokens_max: usize,
    /// o200k_base tokens of the offered definitions (tool_search included), as the acting model
    /// receives them.
    pub offered_tokens_mean: f64,
    pub offered_tools_mean: f64,
    /// The provider's own counts for the filter calls, per selection.
    pub filter_input_tokens_mean: f64,
    pub filter_output_tokens_mean: f64,
    /// Filter calls made, and how many fell back to stage 1 (an error, a timeout, an unreadable
    /// answer).
    pub filter_calls: usize,
    pub filter_fell_back: usize,
    pub filter_p50_ms: f64,
    pub filter_mean_ms: f64,
    /// A whole selection (ranking, and the filter when it runs).
    pub selection_p50_ms: f64,
    /// The selections whose candidates lacked a needed tool, and which (`--json` only).
    pub missed: Vec<Miss>,
}

/// A selection that was not handed every tool it needed.
#[derive(Debug, Clone, Serialize)]
pub struct Miss {
    /// The request's qid or the task's tid.
    pub id: String,
    /// The step (from 1; always 1 for a request).
    pub step: usize,
    /// The needed tools (ids of the scored catalog) that were not among the candidates.
    pub tools: Vec<String>,
}

/// The whole run.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub catalogs: Vec<String>,
    pub input: String,
    pub mode: &'static str,
    pub tools: usize,
    pub scored_tools: usize,
    pub items: usize,
    pub unknown_relevant: usize,
    pub filter: bool,
    pub model: Option<String>,
    pub max_tools: usize,
    pub core_tools: Vec<String>,
    pub lexical_only: Option<String>,
    pub rows: Vec<Row>,
}

/// Runs the pipeline and prints the report.
#[allow(clippy::print_stdout, clippy::print_stderr)]
pub async fn run(env: &Env, pipeline: Pipeline) -> anyhow::Result<ExitCode> {
    let config = compose::load_layers(env, None)?.resolve()?;
    let catalog = load_catalog(&pipeline.catalogs, &pipeline.builtin, pipeline.match_by)?;
    for s in &catalog.skipped {
        eprintln!(
            "{}:{}: skipped a second distractor tool with id `{}`",
            s.file, s.line, s.id
        );
    }
    let items = load_items(&pipeline, &catalog)?;

    // The provider is checked before the catalog is embedded, which can take minutes.
    let timings = Arc::new(Mutex::new(Vec::new()));
    let (model, model_name): (Arc<dyn ModelClient>, Option<String>) = if pipeline.filter {
        let client = compose::model_client(&config, env);
        let name = client.describe();
        (
            Arc::new(Timed {
                inner: client,
                timings: timings.clone(),
            }),
            Some(name),
        )
    } else {
        (Arc::new(NoModel), None)
    };

    let mut selection_config = config.selection.clone();
    selection_config.enabled = true;
    let selector = crate::selection::selector(&selection_config);
    selector.warm_up();
    let entries: Vec<_> = catalog
        .rank_tools
        .iter()
        .map(crate::selection::entry)
        .collect();
    eprintln!(
        "{} tools; embedding the ones not in the cache yet (first run only)",
        entries.len()
    );
    let prepared = {
        let selector = selector.clone();
        tokio::task::spawn_blocking(move || selector.prepare(&entries)).await?
    };
    let lexical_only = prepared.err().map(|e| e.to_string());
    if let Some(why) = &lexical_only {
        eprintln!("cairn: ranking by keywords only: {why}");
    }

    let mut config_for_agent = config.clone();
    config_for_agent.selection = selection_config;
    let Some(mut selection) = crate::selection::agent_selection(&config_for_agent) else {
        anyhow::bail!("selection is off");
    };
    selection.config.filter = pipeline.filter;
    let bpe = tiktoken_rs::o200k_base().map_err(|e| anyhow::anyhow!("token counter: {e}"))?;
    let definition_tokens: Vec<usize> = catalog
        .tools
        .iter()
        .map(|t| bpe.encode_ordinary(&t.definition_json()).len())
        .collect();
    let search = select::tool_search_spec();
    let search_tokens = bpe
        .encode_ordinary(
            &serde_json::json!({"name": search.name, "description": search.description,
                                "inputSchema": search.input_schema})
            .to_string(),
        )
        .len();
    let count = |request: &ModelRequest| {
        let mut tokens = bpe.encode_ordinary(&request.system).len();
        for m in &request.messages {
            if let Message::User { text, .. } = m {
                tokens += bpe.encode_ordinary(text).len();
            }
        }
        tokens
    };

    let ks = if pipeline.ks.is_empty() {
        vec![selection.config.top_k]
    } else {
        pipeline.ks.clone()
    };
    let measure = Measure {
        catalog: &catalog,
        definition_tokens: &definition_tokens,
        search_tokens,
        count: &count,
        model: model.as_ref(),
        timings: &timings,
    };
    let mut rows = Vec::new();
    for &k in &ks {
        selection.config.top_k = k.max(1);
        eprintln!("top_k {k}: {} selections", items.selections());
        rows.push(measure.row(&selection, &items).await);
    }

    let report = Report {
        catalogs: pipeline
            .catalogs
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        input: match &pipeline.input {
            Input::Queries(p) | Input::Tasks(p) => p.display().to_string(),
        },
        mode: match pipeline.input {
            Input::Queries(_) => "requests",
            Input::Tasks(_) => "steps",
        },
        tools: catalog.tools.len(),
        scored_tools: catalog.scored,
        items: items.len(),
        unknown_relevant: items.unknown_relevant,
        filter: pipeline.filter,
        model: model_name,
        max_tools: selection.config.max_tools,
        core_tools: selection
            .config
            .core_tools
            .iter()
            .filter(|c| catalog.index.contains_key(c.as_str()))
            .cloned()
            .collect(),
        lexical_only,
        rows,
    };
    if pipeline.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", markdown(&report));
    }
    Ok(ExitCode::SUCCESS)
}

/// The catalog as the agent sees it.
struct Catalog {
    tools: Vec<Tool>,
    scored: usize,
    infos: Vec<ToolInfo>,
    rank_tools: Vec<RankTool>,
    /// Public name to index.
    index: HashMap<String, usize>,
    /// Relevance unit of each tool (`None`: a distractor), and of each labelled id.
    unit_of: Vec<Option<u32>>,
    id_unit: HashMap<String, u32>,
    skipped: Vec<cairn_select::bench::SkippedTool>,
}

impl Catalog {
    /// The units `ids` stand for; an id not in the scored catalog gets a unit no tool has, so it
    /// counts as never found (dropping it would flatter the figures).
    fn units(&self, ids: &[String], unknown: &mut u32, unknown_count: &mut usize) -> HashSet<u32> {
        ids.iter()
            .map(|id| match self.id_unit.get(id) {
                Some(&u) => u,
                None => {
                    *unknown += 1;
                    *unknown_count += 1;
                    *unknown
                }
            })
            .collect()
    }

    fn units_of<'a>(&self, names: impl IntoIterator<Item = &'a String>) -> HashSet<u32> {
        names
            .into_iter()
            .filter_map(|n| self.index.get(n))
            .filter_map(|&i| self.unit_of[i])
            .collect()
    }
}

/// Loads the catalogs: the scored one strictly, distractors keeping the first of repeated ids.
/// External tools get the hub's public name (`server__tool`, made unique), built-in tools keep
/// theirs.
fn load_catalog(paths: &[PathBuf], builtin: &[bool], match_by: MatchBy) -> anyhow::Result<Catalog> {
    let cairn_select::bench::Catalogs {
        tools,
        counts,
        skipped,
    } = cairn_select::bench::load_catalogs(paths)?;
    let scored = counts[0];
    let from_builtin: Vec<bool> = counts
        .iter()
        .enumerate()
        .flat_map(|(n, &count)| {
            std::iter::repeat_n(builtin.get(n).copied().unwrap_or(false), count)
        })
        .collect();
    let mut index = HashMap::new();
    let mut infos = Vec::with_capacity(tools.len());
    let mut rank_tools = Vec::with_capacity(tools.len());
    for (i, tool) in tools.iter().enumerate() {
        let base = if from_builtin[i] {
            tool.name.clone()
        } else {
            cairn_mcp::names::public_name(&tool.server, &tool.name)
        };
        let mut name = base.clone();
        let mut n = 2;
        while index.contains_key(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        index.insert(name.clone(), i);
        let schema = match &tool.input_schema {
            serde_json::Value::Object(map) => map.clone(),
            _ => serde_json::Map::new(),
        };
        let info = ToolInfo {
            tool: rmcp::model::Tool::new(name, tool.description.clone(), schema),
            effect: Effect::Read,
            category: if from_builtin[i] {
                tool.server.clone()
            } else {
                format!("mcp:{}", cairn_mcp::names::sanitize(&tool.server))
            },
            agent_only: false,
            origin: None,
        };
        rank_tools.push(RankTool::from_info(&info));
        infos.push(info);
    }
    let (unit_of, id_unit) = cairn_select::bench::relevance_units(&tools, scored, match_by);
    Ok(Catalog {
        unit_of,
        id_unit,
        tools,
        scored,
        infos,
        rank_tools,
        index,
        skipped,
    })
}

/// The labelled work: requests or tasks, with their needed units.
struct Items {
    /// Each item: the request, and per step what the conversation shows before it and the
    /// needed units and tool names (a request is one step with nothing said).
    items: Vec<Item>,
    unknown_relevant: usize,
}

struct Item {
    id: String,
    request: String,
    steps: Vec<ItemStep>,
}

struct ItemStep {
    say: Option<String>,
    needed: HashSet<u32>,
    /// The needed tools as labelled, for the report of misses.
    labels: Vec<String>,
    /// The tools called at this step, for the conversation of the next one.
    calls: Vec<String>,
}

impl Items {
    fn len(&self) -> usize {
        self.items.len()
    }

    fn selections(&self) -> usize {
        self.items.iter().map(|i| i.steps.len()).sum()
    }
}

/// Reads the requests (each one step with nothing said) or the tasks, applying `--limit` and
/// `--sample`; requests that name no relevant tool are left out.
fn load_items(pipeline: &Pipeline, catalog: &Catalog) -> anyhow::Result<Items> {
    let mut unknown = u32::MAX / 2;
    let mut unknown_relevant = 0;
    let mut items = Vec::new();
    match &pipeline.input {
        Input::Queries(path) => {
            for q in catalog::load_queries(path)? {
                if q.relevant.is_empty() {
                    continue;
                }
                let needed = catalog.units(&q.relevant, &mut unknown, &mut unknown_relevant);
                items.push(Item {
                    id: q.qid,
                    request: q.query,
                    steps: vec![ItemStep {
                        say: None,
                        needed,
                        labels: q.relevant,
                        calls: Vec::new(),
                    }],
                });
            }
        }
        Input::Tasks(path) => {
            for task in load_tasks(path)? {
                let steps = task
                    .steps
                    .into_iter()
                    .map(|s| ItemStep {
                        needed: catalog.units(&s.tools, &mut unknown, &mut unknown_relevant),
                        labels: s.tools.clone(),
                        calls: s.tools,
                        say: Some(s.say),
                    })
                    .collect();
                items.push(Item {
                    id: task.tid,
                    request: task.task,
                    steps,
                });
            }
        }
    }
    if let Some(limit) = pipeline.limit {
        items.truncate(limit);
    }
    if let Some(n) = pipeline.sample {
        items = cairn_select::bench::spread(items, n);
    }
    Ok(Items {
        items,
        unknown_relevant,
    })
}

/// Reads a tasks file (JSON Lines of [`Task`]), naming the line of any that does not parse.
pub fn load_tasks(path: &Path) -> anyhow::Result<Vec<Task>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
    let mut tasks = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let task: Task = serde_json::from_str(line)
            .map_err(|e| anyhow::anyhow!("{}:{}: not a task: {e}", path.display(), n + 1))?;
        anyhow::ensure!(
            !task.steps.is_empty(),
            "{}:{}: task `{}` has no steps",
            path.display(),
            n + 1,
            task.tid
        );
        tasks.push(task);
    }
    Ok(tasks)
}

/// The measuring loop, over one catalog and model.
struct Measure<'a> {
    catalog: &'a Catalog,
    definition_tokens: &'a [usize],
    search_tokens: usize,
    count: &'a dyn Fn(&ModelRequest) -> usize,
    model: &'a dyn ModelClient,
    timings: &'a Mutex<Vec<f64>>,
}

impl Measure<'_> {
    async fn row(&self, selection: &Selection, items: &Items) -> Row {
        let catalog = self.catalog;
        let allowed: Vec<&ToolInfo> = catalog.infos.iter().collect();
        let core: Vec<String> = selection
            .config
            .core_tools
            .iter()
            .filter(|c| catalog.index.contains_key(c.as_str()))
            .cloned()
            .collect();
        self.timings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
        let mut row = Row {
            top_k: selection.config.top_k,
            ..Row::default()
        };
        let mut filter_tokens = Vec::new();
        let mut selection_ms = Vec::new();
        let mut input_tokens = 0u64;
        let mut output_tokens = 0u64;
        let mut offered_tokens = 0usize;
        let mut offered_tools = 0usize;
        let (mut recall_c, mut recall_o) = (0.0, 0.0);
        let (mut complete_c, mut complete_o) = (0usize, 0usize);
        let (mut tasks_c, mut tasks_o) = (0usize, 0usize);
        for item in &items.items {
            let mut state = RunSelection::default();
            let mut messages = vec![Message::User {
                text: item.request.clone(),
                images: Vec::new(),
            }];
            let (mut all_c, mut all_o) = (true, true);
            let mut previous: Vec<String> = Vec::new();
            for (n, step) in item.steps.iter().enumerate() {
                push_step(&mut messages, n, step, &previous, &mut state);
                let start = Instant::now();
                let chosen = select::choose(
                    selection,
                    self.model,
                    &allowed,
                    &messages,
                    &item.request,
                    &mut state,
                )
                .await;
                selection_ms.push(start.elapsed().as_secs_f64() * 1000.0);
                input_tokens += chosen.usage.input_tokens;
                output_tokens += chosen.usage.output_tokens;
                match &chosen.filter {
                    Some(FilterOutcome::Picked(_)) => row.filter_calls += 1,
                    Some(FilterOutcome::FellBack(_)) => {
                        row.filter_calls += 1;
                        row.filter_fell_back += 1;
                    }
                    None => {}
                }
                let candidate_names: Vec<String> =
                    chosen.candidates.iter().map(|(n, _)| n.clone()).collect();
                let request = select::filter_request(
                    &selection.config,
                    &candidate_names,
                    &catalog.rank_tools,
                    &messages,
                    &item.request,
                );
                filter_tokens.push((self.count)(&request));

                let handed = catalog.units_of(
                    core.iter()
                        .chain(candidate_names.iter())
                        .chain(state.kept.iter()),
                );
                let offered = catalog.units_of(chosen.names.iter());
                let (rc, cc) = share(&step.needed, &handed);
                if !cc {
                    let tools = step
                        .labels
                        .iter()
                        .filter(|l| {
                            catalog
                                .id_unit
                                .get(l.as_str())
                                .is_none_or(|u| !handed.contains(u))
                        })
                        .cloned()
                        .collect();
                    row.missed.push(Miss {
                        id: item.id.clone(),
                        step: n + 1,
                        tools,
                    });
                }
                let (ro, co) = share(&step.needed, &offered);
                recall_c += rc;
                recall_o += ro;
                complete_c += usize::from(cc);
                complete_o += usize::from(co);
                all_c &= cc;
                all_o &= co;
                offered_tools += chosen.names.len() + 1;
                offered_tokens += self.search_tokens
                    + chosen
                        .names
                        .iter()
                        .filter_map(|n| catalog.index.get(n))
                        .map(|&i| self.definition_tokens[i])
                        .sum::<usize>();
                previous = step.calls.clone();
            }
            tasks_c += usize::from(all_c);
            tasks_o += usize::from(all_o);
        }
        let selections = selection_ms.len().max(1) as f64;
        row.selections = selection_ms.len();
        row.candidates_recall = recall_c / selections;
        row.offered_recall = recall_o / selections;
        row.candidates_complete = complete_c as f64 / selections;
        row.offered_complete = complete_o as f64 / selections;
        if items.items.iter().any(|i| i.steps.len() > 1) {
            let tasks = items.items.len().max(1) as f64;
            row.tasks_complete_candidates = Some(tasks_c as f64 / tasks);
            row.tasks_complete_offered = Some(tasks_o as f64 / tasks);
        }
        row.filter_request_tokens_max = filter_tokens.iter().copied().max().unwrap_or(0);
        row.filter_request_tokens_mean = filter_tokens.iter().sum::<usize>() as f64 / selections;
        row.offered_tokens_mean = offered_tokens as f64 / selections;
        row.offered_tools_mean = offered_tools as f64 / selections;
        row.filter_input_tokens_mean = input_tokens as f64 / selections;
        row.filter_output_tokens_mean = output_tokens as f64 / selections;
        (_, row.selection_p50_ms) = cairn_select::bench::mean_p50(&mut selection_ms);
        let mut filter_ms = self
            .timings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        (row.filter_mean_ms, row.filter_p50_ms) = cairn_select::bench::mean_p50(&mut filter_ms);
        row
    }
}

/// Adds what the conversation shows before step `n`: the first step's plan as the assistant's
/// text; for a later step, the previous step's calls and their result, which the step's `say`
/// describes (the tools called stay on offer, as in a run).
fn push_step(
    messages: &mut Vec<Message>,
    n: usize,
    step: &ItemStep,
    previous: &[String],
    state: &mut RunSelection,
) {
    let Some(say) = &step.say else {
        return;
    };
    if n == 0 || previous.is_empty() {
        messages.push(Message::Assistant {
            text: say.clone(),
            tool_calls: Vec::new(),
        });
        return;
    }
    let calls: Vec<ToolCallRequest> = previous
        .iter()
        .enumerate()
        .map(|(j, name)| ToolCallRequest {
            id: format!("call-{n}-{j}"),
            name: name.clone(),
            arguments: "{}".to_owned(),
        })
        .collect();
    messages.push(Message::Assistant {
        text: String::new(),
        tool_calls: calls.clone(),
    });
    for (j, call) in calls.iter().enumerate() {
        state.keep(&call.name);
        messages.push(Message::Tool {
            call_id: call.id.clone(),
            name: call.name.clone(),
            // The last result carries the step's text: what came back and what follows.
            content: if j + 1 == calls.len() {
                say.clone()
            } else {
                "done".to_owned()
            },
            is_error: false,
        });
    }
}

/// The share of `needed` in `found`, and whether all of it is.
fn share(needed: &HashSet<u32>, found: &HashSet<u32>) -> (f64, bool) {
    if needed.is_empty() {
        return (1.0, true);
    }
    let hit = needed.iter().filter(|u| found.contains(u)).count();
    (hit as f64 / needed.len() as f64, hit == needed.len())
}

/// The report as Markdown: a line of context, then one row per k.
pub fn markdown(report: &Report) -> String {
    let mut out = format!(
        "{} {} over {} tools ({} scored, {} distractors); {} unknown relevant ids\n",
        report.items,
        if report.mode == "steps" {
            "tasks"
        } else {
            "requests"
        },
        report.tools,
        report.scored_tools,
        report.tools - report.scored_tools,
        report.unknown_relevant,
    );
    out.push_str(&format!(
        "selection: core tools [{}], stage 1 top_k candidates, at most {} chosen; filter: {}\n",
        report.core_tools.join(", "),
        report.max_tools,
        match &report.model {
            Some(model) => format!("on ({model})"),
            None => "off (offered: stage 1's best max_tools)".to_owned(),
        }
    ));
    if let Some(why) = &report.lexical_only {
        out.push_str(&format!("ranking by keywords only: {why}\n"));
    }
    out.push_str(
        "recall and complete are per selection (a request, or a step of a task); candidates: what \
         the filter is handed (stage 1's top_k, core tools, tools the run keeps); offered: what the \
         acting model sees; tokens: o200k_base\n\n",
    );
    let steps = report.mode == "steps";
    out.push_str("| top_k | candidates recall | candidates complete |");
    if steps {
        out.push_str(" tasks complete (candidates) |");
    }
    out.push_str(" filter request tokens (mean / max) | offered recall | offered complete |");
    if steps {
        out.push_str(" tasks complete (offered) |");
    }
    out.push_str(
        " offered tools / tokens | filter tokens in / out | filter calls (fell back) | filter p50 / mean ms | selection p50 ms |\n",
    );
    let columns = if steps { 13 } else { 11 };
    out.push('|');
    out.push_str(&" ---: |".repeat(columns));
    out.push('\n');
    for r in &report.rows {
        out.push_str(&format!(
            "| {} | {:.3} | {:.3} |",
            r.top_k, r.candidates_recall, r.candidates_complete
        ));
        if steps {
            out.push_str(&format!(
                " {:.3} |",
                r.tasks_complete_candidates.unwrap_or(0.0)
            ));
        }
        out.push_str(&format!(
            " {:.0} / {} | {:.3} | {:.3} |",
            r.filter_request_tokens_mean,
            r.filter_request_tokens_max,
            r.offered_recall,
            r.offered_complete
        ));
        if steps {
            out.push_str(&format!(
                " {:.3} |",
                r.tasks_complete_offered.unwrap_or(0.0)
            ));
        }
        out.push_str(&format!(
            " {:.1} / {:.0} | {:.0} / {:.0} | {} ({}) | {:.0} / {:.0} | {:.1} |\n",
            r.offered_tools_mean,
            r.offered_tokens_mean,
            r.filter_input_tokens_mean,
            r.filter_output_tokens_mean,
            r.filter_calls,
            r.filter_fell_back,
            r.filter_p50_ms,
            r.filter_mean_ms,
            r.selection_p50_ms,
        ));
    }
    out
}

/// Stands in for the model when the filter is off: `choose` never calls it then.
struct NoModel;

impl ModelClient for NoModel {
    fn describe(&self) -> String {
        "no model (filter off)".into()
    }

    fn stream(&self, _: ModelRequest) -> BoxFuture<'_, Result<ModelStream, ModelError>> {
        Box::pin(async {
            Err(ModelError::NotConfigured {
                provider: "benchmark".into(),
                message: "the filter is off in this run".into(),
            })
        })
    }
}

/// The configured model, timing each call from its start until its stream is dropped (the
/// filter drops it once read to the end, or on its timeout).
struct Timed {
    inner: Arc<dyn ModelClient>,
    timings: Arc<Mutex<Vec<f64>>>,
}

impl ModelClient for Timed {
    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn stream(&self, request: ModelRequest) -> BoxFuture<'_, Result<ModelStream, ModelError>> {
        let start = Instant::now();
        let timings = self.timings.clone();
        Box::pin(async move {
            let stream = self.inner.stream(request).await?;
            let guard = TimeOnDrop { start, timings };
            let timed: ModelStream = Box::pin(futures::stream::unfold(
                (stream, guard),
                |(mut stream, guard)| async move {
                    use futures::StreamExt;
                    let next = stream.next().await?;
                    Some((next, (stream, guard)))
                },
            ));
            Ok(timed)
        })
    }
}

struct TimeOnDrop {
    start: Instant,
    timings: Arc<Mutex<Vec<f64>>>,
}

impl Drop for TimeOnDrop {
    fn drop(&mut self) {
        self.timings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(self.start.elapsed().as_secs_f64() * 1000.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_counts_found_units() {
        let needed: HashSet<u32> = [1, 2].into();
        assert_eq!(share(&needed, &[2, 3].into()), (0.5, false));
        assert_eq!(share(&needed, &[1, 2].into()), (1.0, true));
        assert_eq!(share(&HashSet::new(), &HashSet::new()), (1.0, true));
    }

    #[test]
    fn a_later_step_shows_the_previous_calls_and_their_result() {
        let mut messages = Vec::new();
        let mut state = RunSelection::default();
        let step = |say: &str| ItemStep {
            say: Some(say.into()),
            needed: HashSet::new(),
            labels: Vec::new(),
            calls: Vec::new(),
        };
        push_step(
            &mut messages,
            0,
            &step("Running the tests."),
            &[],
            &mut state,
        );
        push_step(
            &mut messages,
            1,
            &step("test_parse fails at src/parser.rs:88"),
            &["run_tests".to_owned()],
            &mut state,
        );
        assert!(
            matches!(&messages[0], Message::Assistant { text, .. } if text == "Running the tests.")
        );
        assert!(
            matches!(&messages[1], Message::Assistant { tool_calls, .. } if tool_calls[0].name == "run_tests")
        );
        assert!(
            matches!(&messages[2], Message::Tool { content, .. } if content.contains("parser.rs:88"))
        );
        assert!(state.kept.contains("run_tests"));
    }
}
