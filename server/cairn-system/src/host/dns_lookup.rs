//! `dns_lookup`: the addresses a name resolves to, through the web guard's resolver, each with
//! the class the guard judges it by.

use std::net::IpAddr;
use std::time::Duration;

use cairn_toolkit::reply::error;
use cairn_toolkit::{CallContext, Category, Effect, JsonSchema, Paths, Tool};
use cairn_web::classify;
use rmcp::model::CallToolResult;
use serde::Deserialize;

use super::table;
use crate::system::System;

/// The `dns_lookup` tool.
pub struct DnsLookup;

/// Arguments of `dns_lookup`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Args {
    /// The host name to resolve (`example.com`); an IP address is only classified.
    name: String,
}

/// A resolver that does not answer must not hang the call.
const TIME_LIMIT: Duration = Duration::from_secs(10);

impl Tool for DnsLookup {
    type Host = System;
    type Args = Args;
    const NAME: &'static str = "dns_lookup";
    const TITLE: &'static str = "DNS lookup";
    const DESCRIPTION: &'static str = "Resolve a host name to its IPv4 and IPv6 addresses through the web guard's resolver, each with its class (public, private, loopback, link-local...) and whether the guard would connect to it. Needs web access to be enabled.";
    const CATEGORY: Category = Category::System;
    const EFFECT: Effect = Effect::Network;
    const AGENT_ONLY: bool = false;
    const READ_ONLY: bool = true;

    fn paths(_: &Args) -> Paths {
        Paths::none()
    }

    async fn call(system: &System, args: Args, cx: CallContext) -> CallToolResult {
        let Some(guard) = &system.guard else {
            return error(
                "refused: DNS lookups go through the web guard, and web access is disabled (`web.enabled`); enable it in the user configuration to look names up",
            );
        };
        let allow_loopback = guard.config().allow_loopback;
        let name = args.name.trim().trim_end_matches('.').to_ascii_lowercase();
        let verdict = |ip: IpAddr| {
            let class = classify(ip);
            let allowed = if class.is_allowed(allow_loopback) {
                "yes"
            } else {
                "no"
            };
            vec![
                ip.to_string(),
                if ip.is_ipv4() { "A" } else { "AAAA" }.to_owned(),
                class.to_string(),
                allowed.to_owned(),
            ]
        };
        let columns = ["address", "record", "class", "guard connects"];
        if let Ok(ip) = name.trim_matches(['[', ']']).parse::<IpAddr>() {
            return table(
                &format!("{ip} is an address; nothing to resolve"),
                &columns,
                vec![verdict(ip)],
                false,
                "",
            );
        }
        if name.is_empty()
            || name.len() > 253
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
        {
            return error(format!(
                "refused: {:?} is not a host name (letters, digits, `-`, `.`, up to 253 characters)",
                args.name
            ));
        }
        if let Err(e) = guard.check_url(&format!("https://{name}/")) {
            return error(format!("refused by the web guard: {e}"));
        }
        let resolver = guard.resolver();
        let answer = tokio::select! {
            () = cx.cancel.cancelled() => return error("cancelled"),
            r = tokio::time::timeout(TIME_LIMIT, resolver.resolve(&name, 0)) => r,
        };
        let addrs = match answer {
            Err(_) => {
                return error(format!(
                    "no answer for {name} within {} s; the resolver may be unreachable",
                    TIME_LIMIT.as_secs()
                ));
            }
            Ok(Err(e)) => {
                return error(format!(
                    "{name} does not resolve: {e}; check the spelling, or whether it exists only on another network"
                ));
            }
            Ok(Ok(a)) => a,
        };
        let mut ips: Vec<IpAddr> = addrs.into_iter().map(|a| a.ip()).collect();
        ips.sort_by_key(|ip| (ip.is_ipv6(), *ip));
        ips.dedup();
        if ips.is_empty() {
            return error(format!("{name} resolved to no address"));
        }
        table(
            &format!("{name} resolves to"),
            &columns,
            ips.into_iter().map(verdict).collect(),
            false,
            "",
        )
    }
}
