//! `network_interfaces`: the host's network interfaces with their state and addresses.

use std::collections::BTreeMap;
use std::fs;

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use nix::ifaddrs::getifaddrs;
use nix::net::if_::InterfaceFlags;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::{blocking, table};
use crate::system::System;

/// The `network_interfaces` tool.
pub struct NetworkInterfaces;

/// Arguments of `network_interfaces` (none).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {}

impl Tool for NetworkInterfaces {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "network_interfaces";
    const TITLE: &'static str = "Network interfaces";
    const DESCRIPTION: &'static str = "List the host's network interfaces: name, state (up/down), MTU, MAC address, and IPv4/IPv6 addresses with prefix lengths.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Read;
    const AGENT_ONLY: bool = false;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(_: &System, _: Args, _: CallContext) -> CallToolResult {
        match blocking(rows).await {
            Ok(Ok(rows)) => table(
                "Network interfaces",
                &["name", "state", "mtu", "mac", "addresses"],
                rows,
                false,
                "",
            ),
            Ok(Err(e)) | Err(e) => error(e),
        }
    }
}

#[derive(Default)]
struct Interface {
    up: bool,
    running: bool,
    addresses: Vec<String>,
}

fn sys(name: &str, what: &str) -> String {
    // Interface names come from the kernel; still, never let one climb out of the directory.
    if name.contains('/') || name.starts_with('.') {
        return String::new();
    }
    fs::read_to_string(format!("/sys/class/net/{name}/{what}"))
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

fn rows() -> Result<Vec<Vec<String>>, String> {
    let addrs = getifaddrs().map_err(|e| format!("the interfaces could not be read: {e}"))?;
    let mut by_name: BTreeMap<String, Interface> = BTreeMap::new();
    for a in addrs {
        let entry = by_name.entry(a.interface_name.clone()).or_default();
        entry.up |= a.flags.contains(InterfaceFlags::IFF_UP);
        entry.running |= a.flags.contains(InterfaceFlags::IFF_RUNNING);
        let Some(addr) = a.address else { continue };
        let prefix = |mask: Option<u32>| mask.map_or(String::new(), |m| format!("/{m}"));
        if let Some(v4) = addr.as_sockaddr_in() {
            let mask = a
                .netmask
                .as_ref()
                .and_then(|m| m.as_sockaddr_in())
                .map(|m| m.ip().to_bits().count_ones());
            entry.addresses.push(format!("{}{}", v4.ip(), prefix(mask)));
        } else if let Some(v6) = addr.as_sockaddr_in6() {
            let mask = a
                .netmask
                .as_ref()
                .and_then(|m| m.as_sockaddr_in6())
                .map(|m| m.ip().to_bits().count_ones());
            entry.addresses.push(format!("{}{}", v6.ip(), prefix(mask)));
        }
    }
    Ok(by_name
        .into_iter()
        .map(|(name, i)| {
            let oper = sys(&name, "operstate");
            let state = match (i.up, oper.as_str()) {
                (false, _) => "down".to_owned(),
                (true, "" | "unknown") if i.running => "up".to_owned(),
                (true, "") => "up (no carrier)".to_owned(),
                (true, s) => s.to_owned(),
            };
            let mac = sys(&name, "address");
            vec![
                name.clone(),
                state,
                sys(&name, "mtu"),
                if mac.is_empty() { "-".to_owned() } else { mac },
                if i.addresses.is_empty() {
                    "-".to_owned()
                } else {
                    i.addresses.join(", ")
                },
            ]
        })
        .collect())
}
