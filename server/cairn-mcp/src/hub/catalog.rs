//! The catalog: every running server's tools under their public names. Built-in tools keep
//! their own names; external tools are `server__tool`; a name two tools could carry is left out
//! and kept as a collision, so the hub can say why it is missing.

use std::collections::{BTreeMap, HashMap, HashSet};

use cairn_agent::tools::{Effect, ToolInfo, ToolOrigin};
use rmcp::model::Tool;

use super::slot::{Kind, Slot};
use crate::names::{Collision, NameIndex, is_valid_server_tool_name, public_name};

pub(super) struct Entry {
    pub(super) server: String,
    pub(super) original: String,
    pub(super) tool: Tool,
    pub(super) info: ToolInfo,
    pub(super) builtin: bool,
}

#[derive(Default)]
pub(super) struct Catalog {
    pub(super) entries: Vec<Entry>,
    pub(super) by_name: HashMap<String, usize>,
    /// Names left out because two tools could carry them.
    pub(super) collisions: BTreeMap<String, Collision>,
}

/// Keeps the tools whose names follow the SEP, once each.
pub(super) fn accept_tools(server: &str, tools: Vec<Tool>) -> Vec<Tool> {
    let mut seen = HashSet::new();
    tools
        .into_iter()
        .filter(|t| {
            if !is_valid_server_tool_name(&t.name) {
                tracing::warn!(
                    server = %server,
                    "rejecting tool with invalid name {:?}",
                    t.name.chars().take(140).collect::<String>()
                );
                return false;
            }
            if !seen.insert(t.name.to_string()) {
                tracing::warn!(server = %server, tool = %t.name, "rejecting duplicate tool");
                return false;
            }
            true
        })
        .collect()
}

/// Computes every public name from the servers' tool lists: built-ins first under their own
/// names, then external tools as `server__tool` ([`crate::names::public_name`], a function of
/// the pair alone). A name two pairs could carry, counting every configured server whether it
/// runs or not, is left out of the catalog and kept in `collisions`, so the hub can say why.
impl Catalog {
    pub(super) fn build(
        servers: &BTreeMap<String, Slot>,
        configured: &[String],
        mut reserved: HashSet<String>,
    ) -> Catalog {
        let mut entries = Vec::new();
        for (name, slot) in servers.iter() {
            if let Kind::InProcess { meta, .. } = &slot.kind {
                for tool in &slot.tools {
                    // Built-ins are trusted and always present: a duplicate among them takes the
                    // `server__tool` form, which no external tool can then take.
                    let public = if reserved.insert(tool.name.to_string()) {
                        tool.name.to_string()
                    } else {
                        let public = public_name(name, &tool.name);
                        reserved.insert(public.clone());
                        public
                    };
                    let m = meta(tool);
                    let mut shown = tool.clone();
                    shown.name = public.clone().into();
                    entries.push(Entry {
                        server: name.clone(),
                        original: tool.name.to_string(),
                        tool: tool.clone(),
                        info: ToolInfo {
                            tool: shown,
                            effect: m.effect,
                            category: m.category,
                            agent_only: m.agent_only,
                            origin: Some(ToolOrigin {
                                server: name.clone(),
                                tool: tool.name.to_string(),
                            }),
                        },
                        builtin: true,
                    });
                }
            }
        }
        let external: Vec<(&str, &Tool)> = servers
            .iter()
            .filter(|(_, slot)| matches!(slot.kind, Kind::External(_)))
            .flat_map(|(name, slot)| slot.tools.iter().map(move |t| (name.as_str(), t)))
            .collect();
        let index = NameIndex::build(
            &reserved,
            configured.iter().map(String::as_str),
            external.iter().map(|(s, t)| (*s, t.name.as_ref())),
        );
        for (name, tool) in &external {
            let public = public_name(name, &tool.name);
            if !index.names.contains_key(&public) {
                continue;
            }
            let mut shown = (*tool).clone();
            shown.name = public.into();
            entries.push(Entry {
                server: (*name).to_owned(),
                original: tool.name.to_string(),
                tool: (*tool).clone(),
                info: ToolInfo {
                    tool: shown,
                    effect: Effect::Execute,
                    category: format!("mcp:{name}"),
                    agent_only: false,
                    origin: Some(ToolOrigin {
                        server: (*name).to_owned(),
                        tool: tool.name.to_string(),
                    }),
                },
                builtin: false,
            });
        }
        let by_name = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.info.tool.name.to_string(), i))
            .collect();
        Catalog {
            entries,
            by_name,
            collisions: index.collisions,
        }
    }
}
