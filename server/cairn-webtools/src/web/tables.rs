//! `web_tables`: the HTML tables of a page as numbered Markdown tables.

use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::content::{
    MAX_TABLE_OUTPUT, MAX_TABLE_ROWS, MAX_TABLES_LISTED, ROWS_WHEN_LISTED, extract_tables,
    render_table,
};
use super::report::header_lines;
use super::{WebTools, answer};

/// The `web_tables` tool.
pub struct WebTables;

/// Arguments of `web_tables`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// An http or https URL.
    url: String,
    /// The number of one table to show in full (as numbered in the listing).
    #[schemars(range(min = 1))]
    table: Option<usize>,
}

impl Tool for WebTables {
    type Host = WebTools;
    type Args = Args;
    const NAME: &'static str = "web_tables";
    const TITLE: &'static str = "Page tables";
    const DESCRIPTION: &'static str = "Extract the HTML tables of a web page as Markdown tables, numbered. Without `table`, lists up to 10 tables with their first 20 rows; with `table`, shows that one table (up to 200 rows).";
    const CATEGORY: Category = Category::Web;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(web: &WebTools, args: Args, cx: CallContext) -> CallToolResult {
        answer(&cx, tables(web, args)).await
    }
}

async fn tables(web: &WebTools, args: Args) -> Result<String, String> {
    let (r, html) = web.get_html(&args.url).await?;
    let tables = extract_tables(&html);
    let mut out = header_lines(&r);
    if tables.is_empty() {
        out.push_str("The page has no tables.\n");
        return Ok(out);
    }
    match args.table {
        Some(n) => {
            let Some(t) = n.checked_sub(1).and_then(|i| tables.get(i)) else {
                return Err(format!(
                    "{} has {} tables; there is no table {n} (they are numbered from 1)",
                    r.final_url,
                    tables.len()
                ));
            };
            out.push_str(&render_table(n, t, MAX_TABLE_ROWS, false));
        }
        None => {
            out.push_str(&format!("{} tables\n", tables.len()));
            for (i, t) in tables.iter().take(MAX_TABLES_LISTED).enumerate() {
                if out.len() > MAX_TABLE_OUTPUT {
                    out.push_str(&format!(
                        "\n(output cap reached; tables {} and on not shown: ask for one with table: N)\n",
                        i + 1
                    ));
                    break;
                }
                out.push_str(&render_table(i + 1, t, ROWS_WHEN_LISTED, true));
            }
            if tables.len() > MAX_TABLES_LISTED {
                out.push_str(&format!(
                    "\n(only the first {MAX_TABLES_LISTED} are shown; ask for another with table: N)\n"
                ));
            }
        }
    }
    Ok(out)
}
