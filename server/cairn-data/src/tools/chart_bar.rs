//! `chart_bar`: a bar chart of a data file, written as SVG and PNG.

use cairn_toolkit::{CallContext, Category, Effect, Paths, Tool};
use rmcp::model::CallToolResult;

use crate::Data;
use crate::chart::Kind;
use crate::tools::charts::{Spec, draw_spec};
use crate::tools::failed;

/// The `chart_bar` tool.
pub struct ChartBar;

impl Tool for ChartBar {
    type Host = Data;
    type Args = Spec;
    const NAME: &'static str = "chart_bar";
    const TITLE: &'static str = "Bar chart";
    const DESCRIPTION: &'static str = "Draw a bar chart of a data file (categories along x; one or more numeric series, grouped; optionally summed/averaged/counted per category) and write it as SVG and PNG in the workspace; the picture is shown in the chat.";
    const CATEGORY: Category = Category::Data;
    const EFFECT: Effect = Effect::Write;
    const AGENT_ONLY: bool = true;
    const NEEDS_WORKSPACE: bool = true;

    fn paths(args: &Spec) -> Paths {
        let (svg, png) = args.outputs();
        Paths::read(args.file()).and_write(svg).and_write(png)
    }

    async fn call(data: &Data, args: Spec, cx: CallContext) -> CallToolResult {
        match draw_spec(data, &args, Kind::Bar, &cx.cancel).await {
            Ok(r) => r,
            Err(e) => failed(&e),
        }
    }
}
