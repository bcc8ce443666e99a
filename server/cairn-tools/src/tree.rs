//! `tree`: the files under a directory as an indented tree, ignore-aware, to a depth.
//!
//! Built from [`Workspace::walk_sorted`], so ignored and hidden files, `.git` and symlinks are
//! left out, and so are directories that hold no file shown.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::sync::Arc;

use cairn_workspace::Workspace;
use rmcp::model::{CallToolResult, Tool};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::glob::{walk_options, with_walk_switches};
use crate::util::{
    MAX_OUTPUT_BYTES, blocking, error_result, object_schema, parse_args, text_result, tool,
};

const DEFAULT_DEPTH: usize = 3;
const MAX_DEPTH: usize = 20;
const MAX_ENTRIES: usize = 500;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    path: Option<String>,
    depth: Option<usize>,
    include_hidden: Option<bool>,
    include_ignored: Option<bool>,
}

pub(crate) fn definition() -> Tool {
    let schema = object_schema(
        with_walk_switches(json!({
            "path": {"type": "string", "description": "Directory to show, relative to the workspace root. Default: the root."},
            "depth": {"type": "integer", "minimum": 1, "maximum": MAX_DEPTH, "description": format!("Levels shown; deeper directories show a file count. Default {DEFAULT_DEPTH}.")}
        })),
        &[],
    );
    tool(
        "tree",
        "Directory tree",
        "Show the files under a directory as a tree (skipping files ignored by .gitignore and hidden ones), to a depth; use it to get an overview of a project's layout.",
        schema,
        true,
    )
}

#[derive(Default)]
struct Node {
    dirs: BTreeMap<String, Node>,
    files: Vec<String>,
    total: usize,
}

impl Node {
    /// Count a file under `parts` (its path below this node); names are copied only into new
    /// nodes, as most files land in directories already seen.
    fn add(&mut self, parts: &[Cow<'_, str>]) {
        self.total += 1;
        match parts {
            [file] => self.files.push(file.clone().into_owned()),
            [dir, rest @ ..] => match self.dirs.get_mut(dir.as_ref()) {
                Some(node) => node.add(rest),
                None => {
                    let mut node = Node::default();
                    node.add(rest);
                    self.dirs.insert(dir.clone().into_owned(), node);
                }
            },
            [] => {}
        }
    }

    fn render(&self, out: &mut String, indent: usize, depth: usize, shown: &mut usize) {
        for (name, dir) in &self.dirs {
            if *shown >= MAX_ENTRIES || out.len() > MAX_OUTPUT_BYTES {
                return;
            }
            *shown += 1;
            if depth <= 1 {
                let _ = writeln!(out, "{}{name}/ ({} files)", "  ".repeat(indent), dir.total);
            } else {
                let _ = writeln!(out, "{}{name}/", "  ".repeat(indent));
                dir.render(out, indent + 1, depth - 1, shown);
            }
        }
        for file in &self.files {
            if *shown >= MAX_ENTRIES || out.len() > MAX_OUTPUT_BYTES {
                return;
            }
            *shown += 1;
            let _ = writeln!(out, "{}{file}", "  ".repeat(indent));
        }
    }
}

pub(crate) async fn call(ws: Arc<Workspace>, arguments: Map<String, Value>) -> CallToolResult {
    let args: Args = match parse_args("tree", arguments) {
        Ok(args) => args,
        Err(result) => return result,
    };
    let depth = args.depth.unwrap_or(DEFAULT_DEPTH);
    if !(1..=MAX_DEPTH).contains(&depth) {
        return error_result(format!(
            "invalid argument `depth` for tree: it must be between 1 and {MAX_DEPTH}"
        ));
    }
    blocking(ws, move |ws| {
        let requested = args.path.as_deref().unwrap_or(".");
        let (start, walked) = match ws.resolve(requested).and_then(|p| {
            let options = walk_options(None, args.include_hidden, args.include_ignored);
            ws.walk_sorted(&p, &options, &|| false).map(|w| (p, w))
        }) {
            Ok(r) => r,
            Err(e) => return error_result(e.to_string()),
        };
        let mut root = Node::default();
        // Every file lies below `start`: its components after `start`'s own are its parts.
        let skip = start.relative().components().count();
        let mut parts = Vec::new();
        for file in &walked.files {
            parts.clear();
            parts.extend(
                file.relative()
                    .iter()
                    .skip(skip)
                    .map(OsStr::to_string_lossy),
            );
            root.add(&parts);
        }
        let mut out = format!("{}/ ({} files)\n", start.display_path(), root.total);
        let mut shown = 0;
        root.render(&mut out, 1, depth, &mut shown);
        if shown >= MAX_ENTRIES || out.len() > MAX_OUTPUT_BYTES {
            let _ = write!(
                out,
                "[tree cut after {shown} entries; show a subdirectory or a smaller depth]"
            );
        }
        text_result(out.trim_end().to_owned())
    })
    .await
}
