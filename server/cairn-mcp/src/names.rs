//! Public tool names. Model providers accept `[A-Za-z0-9_-]{1,64}` (OpenAI's limit, the
//! strictest we target), while MCP servers may use `[A-Za-z0-9_.-]{1,128}` (rmcp's tool-name
//! SEP). External tools are named `server__tool`, sanitised, and can never take a built-in's
//! name, so a server cannot shadow a trusted tool (SECURITY.md F8).
//!
//! A public name is a function of (server, tool) alone, whatever else is running: policy rules
//! and approvals name tools by it, so a name that moved to another tool when a server went down
//! would carry an approval with it. Where two (server, tool) pairs could carry one name, the
//! name belongs to neither: [`NameIndex`] finds such collisions among the tools it is shown and
//! against every configured server (running or not, since a server that is down lists nothing
//! but may list a colliding tool when it comes back), and the hub refuses the name, saying which
//! tools collide and that renaming a server fixes it.
//!
//! A `server__tool` longer than 64 characters is cut to 55 and ends with `_` and the first 8 hex
//! digits of the SHA-256 of `server`, a NUL byte and `tool`, so two long names that share their
//! first 55 characters stay apart without an order-dependent suffix.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;
use sha2::{Digest, Sha256};

/// Longest name model providers accept.
pub const MAX_PUBLIC_NAME: usize = 64;
/// Longest tool name the MCP SEP allows from a server.
pub const MAX_SERVER_TOOL_NAME: usize = 128;
/// Separator between the server and the tool in a public name.
pub const SEPARATOR: &str = "__";
/// Hex digits of the hash that ends a cut name.
const HASH_DIGITS: usize = 8;
/// What a cut name keeps of `server__tool` before `_` and the hash.
const CUT_KEEP: usize = MAX_PUBLIC_NAME - 1 - HASH_DIGITS;

/// Whether a tool name sent by a server follows the SEP (`[A-Za-z0-9_.-]{1,128}`). Names outside it
/// (spaces, homoglyphs, 300 characters) are rejected rather than repaired: repairing would let
/// `reаd_file` (Cyrillic a) pass as `read_file`.
pub fn is_valid_server_tool_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_SERVER_TOOL_NAME
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Maps every character outside `[A-Za-z0-9_-]` to `_`; an empty result becomes `_`.
pub fn sanitize(raw: &str) -> String {
    let s: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() { "_".to_owned() } else { s }
}

/// The public name of `tool` of external server `server`: `server__tool` sanitised, or, when
/// that is longer than 64 characters, its first 55, `_`, and 8 hex digits of a hash of the pair.
pub fn public_name(server: &str, tool: &str) -> String {
    let full = format!("{}{SEPARATOR}{}", sanitize(server), sanitize(tool));
    if full.len() <= MAX_PUBLIC_NAME {
        return full;
    }
    let mut hasher = Sha256::new();
    hasher.update(server.as_bytes());
    hasher.update([0u8]);
    hasher.update(tool.as_bytes());
    let hash: String = hasher
        .finalize()
        .iter()
        .take(HASH_DIGITS / 2)
        .map(|b| format!("{b:02x}"))
        .collect();
    // `full` is ASCII after `sanitize`, so any byte index is a character boundary.
    format!("{}_{hash}", &full[..CUT_KEEP])
}

/// Whether some tool of `server` could be given the public name `name` by [`public_name`]:
/// decided from the names alone, so it holds for a server that is not running.
pub fn could_name(server: &str, name: &str) -> bool {
    let prefix = format!("{}{SEPARATOR}", sanitize(server));
    let plain = name.len() > prefix.len() && name.starts_with(&prefix);
    let cut = name.len() == MAX_PUBLIC_NAME
        && name.as_bytes().get(CUT_KEEP) == Some(&b'_')
        && name[CUT_KEEP + 1..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && (name[..CUT_KEEP].starts_with(&prefix) || prefix.starts_with(&name[..CUT_KEEP]));
    plain || cut
}

/// One of the tools that would carry a colliding name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Claimant {
    /// A tool a server lists.
    Tool { server: String, tool: String },
    /// A configured server that lists no such tool now (or is not running) but could.
    Server { server: String },
    /// A built-in tool, which keeps its name.
    Builtin,
}

impl std::fmt::Display for Claimant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Claimant::Tool { server, tool } => write!(f, "tool `{tool}` of MCP server `{server}`"),
            Claimant::Server { server } => {
                write!(f, "a tool that MCP server `{server}` may list")
            }
            Claimant::Builtin => write!(f, "the built-in tool"),
        }
    }
}

/// A public name two or more tools would carry, so none of the external ones may use it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Collision {
    pub name: String,
    /// Who would carry it, in order.
    pub claimants: Vec<Claimant>,
}

impl Collision {
    /// The servers a rename would fix it for.
    fn servers(&self) -> Vec<&str> {
        let mut servers: Vec<&str> = self
            .claimants
            .iter()
            .filter_map(|c| match c {
                Claimant::Tool { server, .. } | Claimant::Server { server } => {
                    Some(server.as_str())
                }
                Claimant::Builtin => None,
            })
            .collect();
        servers.dedup();
        servers
    }
}

impl std::fmt::Display for Collision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let who: Vec<String> = self.claimants.iter().map(ToString::to_string).collect();
        write!(
            f,
            "the name `{}` is claimed by {}, so it is not used: a rule or approval for one \
             must never run another",
            self.name,
            who.join(" and ")
        )?;
        match self.servers().as_slice() {
            [] => Ok(()),
            [one] => write!(
                f,
                "; rename MCP server `{one}` in the configuration ([mcp.servers.<new name>])"
            ),
            many => write!(
                f,
                "; rename one of the MCP servers {} in the configuration ([mcp.servers.<new name>])",
                many.iter()
                    .map(|s| format!("`{s}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// The public names of a catalog's external tools, with the names that collide.
#[derive(Debug, Default, Clone)]
pub struct NameIndex {
    /// Usable name to its (server, tool).
    pub names: BTreeMap<String, (String, String)>,
    /// Unusable names and why.
    pub collisions: BTreeMap<String, Collision>,
}

impl NameIndex {
    /// Names `tools` ((server, tool) pairs of external servers) given the names the built-ins
    /// hold (`reserved`) and every configured server (`configured`, running or not).
    pub fn build<'a>(
        reserved: &HashSet<String>,
        configured: impl IntoIterator<Item = &'a str>,
        tools: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> NameIndex {
        let configured: Vec<&str> = configured.into_iter().collect();
        let mut claims: BTreeMap<String, Vec<Claimant>> = BTreeMap::new();
        for (server, tool) in tools {
            let claimant = Claimant::Tool {
                server: server.to_owned(),
                tool: tool.to_owned(),
            };
            let list = claims.entry(public_name(server, tool)).or_default();
            if !list.contains(&claimant) {
                list.push(claimant);
            }
        }
        let mut index = NameIndex::default();
        for (name, mut claimants) in claims {
            if reserved.contains(&name) {
                claimants.insert(0, Claimant::Builtin);
            }
            for other in &configured {
                let listed = claimants
                    .iter()
                    .any(|c| matches!(c, Claimant::Tool { server, .. } if server == other));
                if !listed && could_name(other, &name) {
                    claimants.push(Claimant::Server {
                        server: (*other).to_owned(),
                    });
                }
            }
            match claimants.as_slice() {
                [Claimant::Tool { server, tool }] => {
                    index.names.insert(name, (server.clone(), tool.clone()));
                }
                _ => {
                    claimants.sort();
                    index
                        .collisions
                        .insert(name.clone(), Collision { name, claimants });
                }
            }
        }
        index
    }
}
