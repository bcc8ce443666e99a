//! `archive_list`: the entries of a workspace archive with their sizes and types, flagging the
//! dangerous ones (`..`, absolute paths, links out, devices, bomb ratios) that archive_extract
//! would refuse.

use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits as TableLimits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use crate::system::System;
use crate::util::archive::{EntryType, Kind, LIMITS, link_inside, safe_path, walk};
use crate::util::with_workspace;

/// The `archive_list` tool.
pub struct ArchiveList;

/// Arguments of `archive_list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The archive in the workspace: .tar, .tar.gz/.tgz, .tar.zst, .zip, .gz or .zst.
    archive: String,
    /// Entries to show, 1 to 1000 (default 200); all are still checked.
    #[serde(default)]
    max_rows: Option<usize>,
}

/// Why an entry is dangerous, if it is.
pub(crate) fn danger(
    name: &str,
    kind: &EntryType,
    size: u64,
    compressed: Option<u64>,
) -> Option<String> {
    let path = match safe_path(name) {
        Ok(p) => p,
        Err(why) => return Some(why),
    };
    match kind {
        _ if link_inside(kind, &path) == Some(false) => {
            return Some("a link out of the extraction root".to_owned());
        }
        EntryType::Special(k) => return Some(format!("a {k}")),
        _ => {}
    }
    if let Some(c) = compressed
        && size > LIMITS.ratio_floor
        && size > c.saturating_mul(LIMITS.max_ratio)
    {
        return Some(format!("ratio {}:1 (a bomb?)", size / c.max(1)));
    }
    None
}

impl Tool for ArchiveList {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "archive_list";
    const TITLE: &'static str = "List an archive";
    const DESCRIPTION: &'static str = "List the entries of a tar, tar.gz, tar.zst, zip, .gz or .zst archive in the workspace (path, type, size, compression ratio) and flag dangerous ones: `..` or absolute paths, links out, devices, decompression bombs. Read before archive_extract.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(args: &Args) -> Paths {
        Paths::read(&args.archive)
    }

    async fn call(host: &System, args: Args, cx: CallContext) -> CallToolResult {
        let max_rows = args.max_rows.unwrap_or(200);
        if max_rows == 0 || max_rows > 1000 {
            return error("max_rows must be 1 to 1000");
        }
        let Some(kind) = Kind::of(&args.archive) else {
            return error(Kind::unknown(&args.archive));
        };
        with_workspace(host, Self::NAME, move |ws| {
            let (file, shown, size) = match ws
                .resolve(&args.archive)
                .and_then(|p| Ok((ws.open_read(&p)?, p.display_path(), ws.stat(&p)?.len)))
            {
                Ok(x) => x,
                Err(e) => return error(e.to_string()),
            };
            let mut rows = Vec::new();
            let mut dangerous = 0usize;
            let mut count = 0usize;
            let mut claimed: u64 = 0;
            let result = walk(file, kind, &shown, LIMITS, &cx.cancel, &mut |e, _| {
                count += 1;
                claimed = claimed.saturating_add(e.size);
                let flag = danger(&e.name, &e.kind, e.size, e.compressed);
                if flag.is_some() {
                    dangerous += 1;
                }
                // Dangerous entries are always shown, whatever the row cap.
                if rows.len() < max_rows || flag.is_some() {
                    let ratio = e
                        .compressed
                        .filter(|c| *c > 0 && e.kind == EntryType::File)
                        .map(|c| format!("{:.1}:1", e.size as f64 / c as f64));
                    rows.push(vec![
                        Cell::Text(e.name.clone()),
                        Cell::Text(e.kind.label()),
                        Cell::Text(if kind == Kind::Gz || kind == Kind::Zst { "?".to_owned() } else { e.size.to_string() }),
                        ratio.map_or(Cell::Null, Cell::Text),
                        flag.map_or(Cell::Null, |f| Cell::Text(format!("DANGER: {f}"))),
                    ]);
                }
                Ok(())
            });
            let mut heading = format!("{shown}: {} archive, {size} bytes, {count} entries", kind.name());
            match &result {
                Ok(p) => heading.push_str(&format!(
                    ", {} bytes uncompressed (counted while reading)",
                    p.total.get()
                )),
                Err(why) => heading.push_str(&format!(
                    "\nSTOPPED reading: {why}. archive_extract refuses this archive."
                )),
            }
            if dangerous > 0 {
                heading.push_str(&format!(
                    "\n{dangerous} dangerous entr{}: archive_extract refuses this archive as a whole.",
                    if dangerous == 1 { "y" } else { "ies" }
                ));
            }
            let more = count > rows.len();
            let table = Table {
                columns: ["path", "type", "size", "ratio", "flag"].map(String::from).to_vec(),
                rows,
                more,
            };
            table.result_hinting(&heading, &TableLimits::default(), "raise max_rows")
        })
        .await
    }
}
