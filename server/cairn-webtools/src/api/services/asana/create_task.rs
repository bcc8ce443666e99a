//! `asana_create_task`: a new task in a project (agent-only, effect `write`: the approval shows
//! the project, the name and the notes).

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::{PUBLIC, SERVICE, data, gid};
use crate::api::services::Services;
use crate::api::services::gitlab::field;
use cairn_web::Method;

/// Longer names are refused: a task's name is a line, the rest belongs in its notes.
const MAX_NAME: usize = 1024;
/// Asana's limit on a task's notes (64 KiB of text).
const MAX_NOTES: usize = 65_535;

/// The `asana_create_task` tool.
pub struct AsanaCreateTask;

/// Arguments of `asana_create_task`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The project's gid (digits) the task goes in.
    project: String,
    /// The task's name (one line).
    name: String,
    /// The task's notes, plain text (paragraphs separated by blank lines).
    notes: Option<String>,
    /// The due date, `YYYY-MM-DD`.
    due_on: Option<String>,
    /// Who it is assigned to: `me`, a user's gid or e-mail address.
    assignee: Option<String>,
}

impl Tool for AsanaCreateTask {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "asana_create_task";
    const TITLE: &'static str = "Create an Asana task";
    const DESCRIPTION: &'static str = "Create a task in an Asana project with a name, plain-text notes, a due date and an assignee; answers with its gid and address.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let project = match gid("project", &args.project) {
            Ok(p) => p,
            Err(e) => return error(format!("{e}; nothing was created")),
        };
        let name = args.name.trim();
        if name.is_empty() {
            return error("`name` is empty: a task needs a name; nothing was created");
        }
        if name.contains('\n') {
            return error(
                "`name` has more than one line: put the rest in `notes`; nothing was created",
            );
        }
        let count = name.chars().count();
        if count > MAX_NAME {
            return error(format!(
                "`name` has {count} characters, more than {MAX_NAME}: shorten it and put the rest in `notes`; nothing was created"
            ));
        }
        let mut task = Map::new();
        task.insert("name".into(), json!(name));
        task.insert("projects".into(), json!([project]));
        if let Some(n) = args.notes.as_deref().filter(|n| !n.trim().is_empty()) {
            let count = n.chars().count();
            if count > MAX_NOTES {
                return error(format!(
                    "`notes` has {count} characters, more than Asana's {MAX_NOTES}: shorten them; nothing was created"
                ));
            }
            task.insert("notes".into(), json!(n));
        }
        if let Some(d) = args
            .due_on
            .as_deref()
            .map(str::trim)
            .filter(|d| !d.is_empty())
        {
            if !is_date(d) {
                return error(format!(
                    "`due_on` {d:?} is not a date like 2025-03-31; nothing was created"
                ));
            }
            task.insert("due_on".into(), json!(d));
        }
        if let Some(a) = args
            .assignee
            .as_deref()
            .map(str::trim)
            .filter(|a| !a.is_empty())
        {
            task.insert("assignee".into(), json!(a));
        }
        let body = json!({ "data": Value::Object(task) });
        match services
            .call(
                &cx,
                SERVICE,
                PUBLIC,
                Method::POST,
                "tasks",
                &[],
                Some(&body),
                &format!("project {project}"),
            )
            .await
        {
            Ok((_, json)) => {
                let created = data(&json);
                let mut out = format!(
                    "created task {} in project {project}: {}",
                    field(created, "gid"),
                    field(created, "name")
                );
                let url = field(created, "permalink_url");
                if !url.is_empty() {
                    out.push_str(&format!("\n{url}"));
                }
                text(out)
            }
            Err(e) => error(format!("{e}; the task was not created")),
        }
    }
}

/// Whether `d` is `YYYY-MM-DD` with a month 1–12 and a day 1–31 (Asana checks the rest).
fn is_date(d: &str) -> bool {
    let parts: Vec<&str> = d.split('-').collect();
    let num = |s: &str, len: usize| s.len() == len && s.chars().all(|c| c.is_ascii_digit());
    match parts.as_slice() {
        [y, m, day] if num(y, 4) && num(m, 2) && num(day, 2) => {
            matches!(m.parse::<u8>(), Ok(1..=12)) && matches!(day.parse::<u8>(), Ok(1..=31))
        }
        _ => false,
    }
}
