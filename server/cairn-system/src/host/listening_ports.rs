//! `listening_ports`: the TCP and UDP sockets waiting for connections, with their processes.

use std::net::SocketAddr;

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::procfs::{self, Users};
use super::{blocking, sockets, table};
use crate::system::System;

/// The `listening_ports` tool.
pub struct ListeningPorts;

/// Arguments of `listening_ports`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// Only this port.
    #[serde(default)]
    port: Option<u16>,
    /// Only `tcp` or `udp` (both families).
    #[serde(default)]
    protocol: Option<Protocol>,
}

/// A transport protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// TCP listeners.
    Tcp,
    /// Bound, unconnected UDP sockets.
    Udp,
}

/// Rows shown at most.
const MAX_ROWS: usize = 500;

impl Tool for ListeningPorts {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "listening_ports";
    const TITLE: &'static str = "Listening ports";
    const DESCRIPTION: &'static str = "List TCP listeners and bound UDP sockets (IPv4 and IPv6) with the pid, user and name of the process that owns each; filter by port or protocol. Use it to find what holds a port.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(_: &System, args: Args, _: CallContext) -> CallToolResult {
        let rows = blocking(move || {
            let owners = sockets::owners();
            let users = Users::load();
            let mut found: Vec<_> = sockets::listeners()
                .into_iter()
                .filter(|l| args.port.is_none_or(|p| p == l.port))
                .filter(|l| match args.protocol {
                    None => true,
                    Some(Protocol::Tcp) => l.protocol.starts_with("tcp"),
                    Some(Protocol::Udp) => l.protocol.starts_with("udp"),
                })
                .collect();
            found.sort_by_key(|l| (l.port, l.protocol));
            let more = found.len() > MAX_ROWS;
            found.truncate(MAX_ROWS);
            let rows: Vec<Vec<String>> = found
                .into_iter()
                .map(|l| {
                    let pids = owners.get(&l.inode).cloned().unwrap_or_default();
                    let procs: Vec<_> = pids.iter().filter_map(|p| procfs::read(*p)).collect();
                    let (pid, user, name) = if procs.is_empty() {
                        // Sockets of other users' processes are unreadable without privileges.
                        (
                            "?".to_owned(),
                            "?".to_owned(),
                            "(not visible to cairn)".to_owned(),
                        )
                    } else {
                        (
                            procs
                                .iter()
                                .map(|p| p.pid.to_string())
                                .collect::<Vec<_>>()
                                .join(","),
                            users.name(procs[0].uid),
                            procs[0].name.clone(),
                        )
                    };
                    vec![
                        l.protocol.to_owned(),
                        SocketAddr::new(l.address, l.port).to_string(),
                        pid,
                        user,
                        name,
                    ]
                })
                .collect();
            (rows, more)
        })
        .await;
        match rows {
            Ok((rows, more)) => {
                let heading = match args.port {
                    Some(p) if rows.is_empty() => format!("Nothing listens on port {p}"),
                    _ => "Listening sockets".to_owned(),
                };
                table(
                    &heading,
                    &["protocol", "address", "pid", "user", "process"],
                    rows,
                    more,
                    "filter by `port` or `protocol`",
                )
            }
            Err(e) => error(e),
        }
    }
}
