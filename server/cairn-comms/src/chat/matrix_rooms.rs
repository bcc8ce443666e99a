//! `matrix_rooms`: the rooms the account has joined, with name, alias and member count, and
//! which of them the user allowed. One filtered `/sync` (names, aliases and counts only, no
//! messages), so a long room list is one request.

use cairn_toolkit::reply::error;
use cairn_toolkit::table::{Cell, Limits, Table};
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::Method;
use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;

use super::matrix::{Matrix, is_allowed};
use crate::comms::Comms;

/// Rooms shown at most.
const MAX_ROOMS: usize = 200;

/// The `matrix_rooms` tool.
pub struct MatrixRooms;

/// Arguments of `matrix_rooms`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Only rooms whose name, alias or id contains this text (any case). Default: all.
    filter: Option<String>,
}

impl Tool for MatrixRooms {
    type Host = Comms;
    type Args = Args;
    const NAME: &'static str = "matrix_rooms";
    const TITLE: &'static str = "List Matrix rooms";
    const DESCRIPTION: &'static str = "List the Matrix rooms the configured account has joined, with name, alias, id and member count, marking those allowed in `[comms.matrix] allow_rooms` (only those can be read or posted to); at most 200.";
    const CATEGORY: Category = Category::Communication;
    const EFFECT: Effect = Effect::Network;
    const READ_ONLY: bool = true;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(host: &Comms, args: Args, cx: CallContext) -> CallToolResult {
        let matrix = match Matrix::of(host) {
            Ok(m) => m,
            Err(e) => return e,
        };
        // Homeservers cache a sync answer by its request (Synapse: two minutes), so a room just
        // joined would be missing; an event type no room has, unique per call, makes the
        // request new without changing what it selects.
        let filter = format!(
            r#"{{"room":{{"timeline":{{"limit":0,"not_types":["cairn.fresh.{}"]}},"state":{{"types":["m.room.name","m.room.canonical_alias"],"lazy_load_members":true}},"ephemeral":{{"types":[]}},"account_data":{{"types":[]}}}},"presence":{{"types":[]}},"account_data":{{"types":[]}}}}"#,
            uuid::Uuid::new_v4().simple()
        );
        let path = format!(
            "/_matrix/client/v3/sync?timeout=0&filter={}",
            utf8_percent_encode(&filter, NON_ALPHANUMERIC)
        );
        let sync = match matrix.call(Method::GET, &path, None, &cx).await {
            Ok(v) => v,
            Err(e) => return error(format!("could not list the rooms: {e}")),
        };
        let wanted = args
            .filter
            .as_deref()
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(str::to_lowercase);
        let mut rooms: Vec<(bool, String, String, String, String)> = sync["rooms"]["join"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(id, room)| {
                let state = |kind: &str, field: &str| {
                    room["state"]["events"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .find(|e| e["type"] == kind)
                        .and_then(|e| e["content"][field].as_str())
                        .unwrap_or("")
                        .to_owned()
                };
                let (name, alias) = (
                    state("m.room.name", "name"),
                    state("m.room.canonical_alias", "alias"),
                );
                let members = count(&room["summary"]["m.joined_member_count"]);
                let allowed = is_allowed(matrix.settings, id)
                    || (!alias.is_empty() && is_allowed(matrix.settings, &alias));
                (allowed, name, alias, id.clone(), members)
            })
            .filter(|(_, name, alias, id, _)| {
                wanted.as_ref().is_none_or(|w| {
                    [name, alias, id]
                        .iter()
                        .any(|s| s.to_lowercase().contains(w.as_str()))
                })
            })
            .collect();
        // Allowed rooms first, then by name. A room without a name or alias shows an empty cell.
        rooms.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then_with(|| a.1.cmp(&b.1))
                .then_with(|| a.3.cmp(&b.3))
        });
        let total = rooms.len();
        let table = Table {
            columns: ["allowed", "name", "alias", "room id", "members"]
                .map(String::from)
                .to_vec(),
            rows: rooms
                .into_iter()
                .take(MAX_ROOMS)
                .map(|(allowed, name, alias, id, members)| {
                    vec![
                        Cell::Text(if allowed { "yes" } else { "no" }.into()),
                        Cell::Text(name),
                        Cell::Text(alias),
                        Cell::Text(id),
                        Cell::Text(members),
                    ]
                })
                .collect(),
            more: total > MAX_ROOMS,
        };
        let heading = format!(
            "{total} joined room{}{} on {} (only allowed ones can be read or posted to; `{}` in your config)",
            if total == 1 { "" } else { "s" },
            if wanted.is_some() {
                " matching the filter"
            } else {
                ""
            },
            matrix.settings.homeserver,
            super::matrix::ALLOW_SETTING,
        );
        table.result_hinting(
            &heading,
            &Limits {
                max_rows: MAX_ROOMS,
                ..Limits::default()
            },
            "give a `filter`",
        )
    }
}

/// A member count, or `?` when the homeserver gave none.
fn count(v: &Value) -> String {
    v.as_u64().map_or_else(|| "?".into(), |n| n.to_string())
}
