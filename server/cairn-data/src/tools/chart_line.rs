//! `chart_line`: a line chart of a data file, written as SVG and PNG.

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use rmcp::model::CallToolResult;

use crate::Data;
use crate::chart::Kind;
use crate::tools::charts::{Spec, draw_spec};
use crate::tools::failed;

/// The `chart_line` tool.
pub struct ChartLine;

impl Tool for ChartLine {
    type Host = Data;
    type Args = Spec;
    const NAME: &'static str = "chart_line";
    const TITLE: &'static str = "Line chart";
    const DESCRIPTION: &'static str = "Draw a line chart of a data file (x as dates, numbers or categories; one line per series; optionally aggregated per x), such as sales by month, and write it as SVG and PNG in the workspace; the picture is shown in the chat.";
    const CATEGORY: Category = Category::Data;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Spec) -> Paths {
        let (svg, png) = args.outputs();
        Paths::read(args.file()).and_write(svg).and_write(png)
    }

    async fn call(data: &Data, args: Spec, cx: CallContext) -> CallToolResult {
        match draw_spec(data, &args, Kind::Line, &cx.cancel).await {
            Ok(r) => r,
            Err(e) => failed(&e),
        }
    }
}
