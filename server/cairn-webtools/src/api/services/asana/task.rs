//! `asana_task`: one task with its fields, its notes (cut, read further by `notes_from`) and
//! its comments, newest last, a page at a time.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::{MAX_NOTES, PUBLIC, SERVICE, data, gid, name_of};
use crate::api::services::Services;
use crate::api::services::gitlab::{cut, field};
use crate::api::services::paging::{self, Items, List, Next, Paging, Size};
use cairn_web::Method;

/// Stories (comments and changes) read per call: Asana's largest page.
const STORY_PAGE: u32 = 100;
/// How the stories page: by the `next_page.offset` token the answer gives.
const STORIES: Paging = Paging {
    items: Items::At("/data"),
    size: Some(Size {
        param: "limit",
        max: STORY_PAGE as usize,
    }),
    next: Next::Token {
        at: "/next_page/offset",
        param: "offset",
        last: None,
    },
};
/// The most characters of one comment shown.
const MAX_COMMENT: usize = 1000;

/// The `asana_task` tool.
pub struct AsanaTask;

/// Arguments of `asana_task`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The task's gid (digits), as `asana_search` lists it or its address ends with.
    task: String,
    /// Show the notes from this character on (the first answer says where they were cut).
    notes_from: Option<usize>,
    /// The `offset` token an earlier answer gave, for the next page of comments.
    comments_offset: Option<String>,
}

impl Tool for AsanaTask {
    type Host = Services;
    type Args = Args;
    const NAME: &'static str = "asana_task";
    const TITLE: &'static str = "Asana task";
    const DESCRIPTION: &'static str = "Show one Asana task: name, state, assignee, dates, projects, tags, custom fields, its notes and its comments.";
    const CATEGORY: Category = Category::Api;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(services: &Services, args: Args, cx: CallContext) -> CallToolResult {
        let id = match gid("task", &args.task) {
            Ok(t) => t,
            Err(e) => return error(e),
        };
        let what = format!("task {id}");
        let json = match services
            .call(
                &cx,
                SERVICE,
                PUBLIC,
                Method::GET,
                &format!("tasks/{id}"),
                &[],
                None,
                &what,
            )
            .await
        {
            Ok((_, json)) => json,
            Err(e) => return error(e.to_string()),
        };
        let task = data(&json);
        let mut out = describe(task);
        out.push_str(&notes(&field(task, "notes"), args.notes_from.unwrap_or(0)));

        let mut query = vec![("limit", STORY_PAGE.to_string())];
        if let Some(o) = args
            .comments_offset
            .as_deref()
            .filter(|o| !o.trim().is_empty())
        {
            query.push(("offset", o.trim().to_owned()));
        }
        let path = format!("tasks/{id}/stories");
        let what = format!("the comments of {what}");
        let list = List {
            service: SERVICE,
            public: PUBLIC,
            label: "Asana",
            method: Method::GET,
            path: &path,
            query,
            body: None,
            what: &what,
        };
        match paging::list(services, &cx, &list, &STORIES, STORY_PAGE as usize, 1).await {
            Ok(listed) => out.push_str(&comments(&listed.items, listed.next.as_ref())),
            Err(e) => out.push_str(&format!("\n(comments not read: {e})\n")),
        }
        text(out)
    }
}

/// The task's heading and fields, one per line.
fn describe(task: &Value) -> String {
    let state = match task.get("completed").and_then(Value::as_bool) {
        Some(true) => format!("done {}", field(task, "completed_at")),
        _ => "open".to_owned(),
    };
    let mut out = format!(
        "task {}: {} ({})\n",
        field(task, "gid"),
        field(task, "name"),
        state.trim_end()
    );
    let due = [field(task, "due_at"), field(task, "due_on")]
        .into_iter()
        .find(|d| !d.is_empty())
        .unwrap_or_else(|| "-".to_owned());
    out.push_str(&format!(
        "assignee: {}; due: {due}; created {}, modified {}\n",
        name_of(task, "assignee"),
        field(task, "created_at"),
        field(task, "modified_at"),
    ));
    let names = |key: &str| -> Vec<String> {
        task.get(key)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.get("name").and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let sections: Vec<String> = task
        .get("memberships")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|m| format!("{} / {}", name_of(m, "project"), name_of(m, "section")))
                .collect()
        })
        .unwrap_or_default();
    if !sections.is_empty() {
        out.push_str(&format!("in: {}\n", sections.join(", ")));
    } else if !names("projects").is_empty() {
        out.push_str(&format!("projects: {}\n", names("projects").join(", ")));
    }
    if !names("tags").is_empty() {
        out.push_str(&format!("tags: {}\n", names("tags").join(", ")));
    }
    if let Some(parent) = task.get("parent").filter(|p| p.is_object()) {
        out.push_str(&format!(
            "subtask of {} ({})\n",
            field(parent, "gid"),
            field(parent, "name")
        ));
    }
    for f in task
        .get("custom_fields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let value = field(f, "display_value");
        if !value.is_empty() {
            out.push_str(&format!("{}: {value}\n", field(f, "name")));
        }
    }
    let url = field(task, "permalink_url");
    if !url.is_empty() {
        out.push_str(&format!("{url}\n"));
    }
    out
}

/// The notes from character `from`, at most [`MAX_NOTES`] of them, saying where to go on.
fn notes(all: &str, from: usize) -> String {
    let count = all.chars().count();
    if count == 0 {
        return "\nNo notes.\n".to_owned();
    }
    if from >= count {
        return format!("\nNotes: {count} characters in all; none from {from}.\n");
    }
    let shown: String = all.chars().skip(from).take(MAX_NOTES).collect();
    let end = from + shown.chars().count();
    let mut out = if from == 0 {
        format!("\nNotes:\n{shown}\n")
    } else {
        format!("\nNotes (from character {from}):\n{shown}\n")
    };
    if end < count {
        out.push_str(&format!(
            "(notes cut at character {end} of {count}: call again with notes_from={end})\n"
        ));
    }
    out
}

/// The comments among the stories (Asana's record of changes, counted but not shown), and
/// the offset of the next page.
fn comments(stories: &[Value], next: Option<&(&str, String)>) -> String {
    let comments: Vec<&Value> = stories
        .iter()
        .filter(|s| {
            field(s, "resource_subtype") == "comment_added" || field(s, "type") == "comment"
        })
        .collect();
    let mut out = format!(
        "\nComments ({} of {} stories; the rest are changes):\n",
        comments.len(),
        stories.len()
    );
    for c in &comments {
        out.push_str(&format!(
            "- {} at {}: {}\n",
            name_of(c, "created_by"),
            field(c, "created_at"),
            cut(&field(c, "text"), MAX_COMMENT)
        ));
    }
    if let Some((_, offset)) = next {
        out.push_str(&format!(
            "(more stories: call again with comments_offset={offset:?})\n"
        ));
    }
    out
}
