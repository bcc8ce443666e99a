//! `schema_validate`: a JSON, YAML or TOML document checked against a JSON Schema, every error
//! listed with where it is in the document. Offline: a `$ref` to a remote or file URL is not
//! fetched (the schema is refused, saying so).

use cairn_toolkit::reply::{error, text};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::system::System;
use crate::util::doc::{Format, capped, parse, source};

/// Errors one result lists.
const MAX_ERRORS: usize = 200;

/// The `schema_validate` tool.
pub struct SchemaValidate;

/// Arguments of `schema_validate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The document as text (or give `file`).
    #[serde(default)]
    text: Option<String>,
    /// A workspace file holding the document (or give `text`).
    #[serde(default)]
    file: Option<String>,
    /// The document's format: json, yaml or toml (default: from the extension, else detected).
    #[serde(default)]
    format: Option<Format>,
    /// The JSON Schema as text (JSON or YAML), or give `schema_file`.
    #[serde(default)]
    schema: Option<String>,
    /// A workspace file holding the JSON Schema.
    #[serde(default)]
    schema_file: Option<String>,
}

impl Tool for SchemaValidate {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "schema_validate";
    const TITLE: &'static str = "Validate against a JSON Schema";
    const DESCRIPTION: &'static str = "Validate a JSON, YAML or TOML document (text or workspace file) against a JSON Schema (text or workspace file; drafts 4 to 2020-12) and list every error with its path in the document; remote `$ref`s are not fetched.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::none()
            .and_read_opt(args.file.as_deref())
            .and_read_opt(args.schema_file.as_deref())
    }

    async fn call(host: &System, args: Args, _: CallContext) -> CallToolResult {
        let ws = host.workspace.clone();
        let run = move || {
            let schema_src = source(
                ws.as_deref(),
                args.schema,
                args.schema_file.as_deref(),
                "schema",
            )?;
            let schema_format = args.schema_file.as_deref().and_then(Format::of_path);
            let (schema, _) =
                parse(&schema_src, schema_format).map_err(|e| format!("the schema: {e}"))?;
            let format = args
                .format
                .or_else(|| args.file.as_deref().and_then(Format::of_path));
            let src = source(ws.as_deref(), args.text, args.file.as_deref(), "document")?;
            let (doc, found) = parse(&src, format).map_err(|e| format!("the document: {e}"))?;
            let validator = jsonschema::validator_for(&schema).map_err(|e| {
                format!("the schema is not usable: {e} (remote and file `$ref`s are not fetched: inline them under `$defs`)")
            })?;
            let mut lines = Vec::new();
            let mut total = 0usize;
            for e in validator.iter_errors(&doc) {
                total += 1;
                if lines.len() < MAX_ERRORS {
                    let at = e.instance_path().to_string();
                    lines.push(format!(
                        "- at {}: {e}",
                        if at.is_empty() {
                            "the top (`/`)".to_owned()
                        } else {
                            format!("`{at}`")
                        }
                    ));
                }
            }
            if total == 0 {
                return Ok((
                    true,
                    format!("valid: the {} document matches the schema", found.name()),
                ));
            }
            let mut out = format!(
                "invalid: {total} error{} in the {} document\n{}",
                if total == 1 { "" } else { "s" },
                found.name(),
                lines.join("\n")
            );
            if total > lines.len() {
                out.push_str(&format!("\n({} more not listed)", total - lines.len()));
            }
            Ok::<_, String>((false, capped(out)))
        };
        match tokio::task::spawn_blocking(run).await {
            // An invalid document is a finding, not a failure of the tool.
            Ok(Ok((_, t))) => text(t),
            Ok(Err(e)) => error(e),
            Err(e) => error(format!("internal error: schema_validate failed ({e})")),
        }
    }
}
