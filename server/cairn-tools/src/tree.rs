//! `tree`: the files under a directory as an indented tree, ignore-aware, to a depth.
//!
//! Built from [`Workspace::walk_sorted`], so ignored and hidden files, `.git` and symlinks are
//! left out, and so are directories that hold no file shown.
//!
//! [`Workspace::walk_sorted`]: cairn_workspace::Workspace::walk_sorted

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fmt::Write as _;

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::Files;
use crate::util::{MAX_OUTPUT_BYTES, blocking};
use crate::walk::walk_options;

const DEFAULT_DEPTH: usize = 3;
const MAX_DEPTH: usize = 20;
const MAX_ENTRIES: usize = 500;

/// The `tree` tool.
pub struct Tree;

/// Arguments of `tree`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Directory to show, relative to the workspace root. Default: the root.
    path: Option<String>,
    /// Levels shown; deeper directories show a file count. Default 3.
    #[schemars(range(min = 1, max = 20))]
    depth: Option<usize>,
    /// Also include hidden files and directories (names starting with `.`; `.git` never). Default false.
    include_hidden: Option<bool>,
    /// Also include files that .gitignore or .ignore rules leave out. Default false.
    include_ignored: Option<bool>,
}

impl Tool for Tree {
    type Host = Files;
    type Args = Args;
    const NAME: &'static str = "tree";
    const TITLE: &'static str = "Directory tree";
    const DESCRIPTION: &'static str = "Show the files under a directory as a tree (skipping files ignored by .gitignore and hidden ones), to a depth; use it to get an overview of a project's layout.";
    const CATEGORY: Category = Category::File;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    /// The walk skips what the user may not read.
    fn paths(_: &Args) -> Paths {
        Paths::walks()
    }

    async fn call(files: &Files, args: Args, _: CallContext) -> CallToolResult {
        let depth = args.depth.unwrap_or(DEFAULT_DEPTH);
        if !(1..=MAX_DEPTH).contains(&depth) {
            return error(format!(
                "invalid argument `depth` for tree: it must be between 1 and {MAX_DEPTH}"
            ));
        }
        blocking(files.workspace(), move |ws| {
            let requested = args.path.as_deref().unwrap_or(".");
            let (start, walked) = match ws.resolve(requested).and_then(|p| {
                let options = walk_options(None, args.include_hidden, args.include_ignored);
                ws.walk_sorted(&p, &options, &|| false).map(|w| (p, w))
            }) {
                Ok(r) => r,
                Err(e) => return error(e.to_string()),
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
            text(out.trim_end().to_owned())
        })
        .await
    }
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
