//! `format_convert`: a JSON, YAML or TOML document (given text or a workspace file) rewritten in
//! another of the three. It only returns the text: writing it is the file tools' job, where the
//! user's approval for writes already applies.

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::system::System;
use crate::util::doc::{Format, capped, parse, render, source};

/// The `format_convert` tool.
pub struct FormatConvert;

/// Arguments of `format_convert`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The document as text (or give `file`).
    #[serde(default)]
    text: Option<String>,
    /// A workspace file holding the document (or give `text`).
    #[serde(default)]
    file: Option<String>,
    /// Its format: json, yaml or toml (default: from the file's extension, else detected).
    #[serde(default)]
    from: Option<Format>,
    /// The format to write: json, yaml or toml.
    to: Format,
}

impl Tool for FormatConvert {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "format_convert";
    const TITLE: &'static str = "Convert JSON/YAML/TOML";
    const DESCRIPTION: &'static str = "Convert a document between JSON, YAML and TOML (given as text or a workspace file, up to 8 MiB) and return the converted text; it writes nothing (save the result with a file tool). TOML cannot hold nulls or a non-table top level; comments are not kept.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::none().and_read_opt(args.file.as_deref())
    }

    async fn call(host: &System, args: Args, _: CallContext) -> CallToolResult {
        let ws = host.workspace.clone();
        let run = move || {
            let from = args
                .from
                .or_else(|| args.file.as_deref().and_then(Format::of_path));
            let src = source(ws.as_deref(), args.text, args.file.as_deref(), "document")?;
            let (value, found) = parse(&src, from)?;
            let out = render(&value, args.to)
                .map_err(|e| format!("cannot write it as {}: {e}", args.to.name()))?;
            Ok::<_, String>(format!(
                "{} → {}:\n{}",
                found.name(),
                args.to.name(),
                capped(out)
            ))
        };
        match tokio::task::spawn_blocking(run).await {
            Ok(Ok(t)) => text(t),
            Ok(Err(e)) => error(e),
            Err(e) => error(format!("internal error: format_convert failed ({e})")),
        }
    }
}
