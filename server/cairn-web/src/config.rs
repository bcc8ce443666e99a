//! The guard's settings, with safe defaults: loopback refused, 1 MiB, 5 redirects,
//! 10 requests a minute per user.

use std::time::Duration;

use url::Url;

use crate::blocklist::Blocklist;

/// How the [`crate::WebGuard`] decides and limits.
#[derive(Debug, Clone)]
pub struct GuardConfig {
    /// Allow loopback addresses (127/8, `::1`). Off by default; for local test servers and a
    /// user who explicitly wants to reach services on their own machine.
    pub allow_loopback: bool,
    /// The most decoded body bytes kept; the rest is not read and the response is truncated.
    pub max_bytes: usize,
    /// Time allowed to open the TCP (and TLS) connection of one hop.
    pub connect_timeout: Duration,
    /// Time allowed for the whole exchange: all hops and the body (against slowloris).
    pub total_timeout: Duration,
    /// The most redirects followed.
    pub max_redirects: usize,
    /// Requests per minute per user (each [`crate::WebRequest::user`]); 0 turns the limit off.
    pub per_user_per_minute: u32,
    /// Requests per minute per host, counting every hop; 0 turns the limit off.
    pub per_host_per_minute: u32,
    /// Hosts always refused (a host matches its parent domains too).
    pub deny_hosts: Vec<String>,
    /// Hosts the blocklist may not refuse (false positives in a feed); the address checks and
    /// the deny list still apply.
    pub allow_hosts: Vec<String>,
    /// The malicious-URL filter.
    pub blocklist: Blocklist,
    /// An explicitly configured proxy; environment proxies (`HTTP_PROXY`, ...) are always
    /// ignored, because DNS and the connect would happen at the proxy, outside the checks.
    /// The guard still checks the target's addresses before handing the request to the proxy.
    pub proxy: Option<Url>,
}

impl Default for GuardConfig {
    fn default() -> Self {
        Self {
            allow_loopback: false,
            max_bytes: 1024 * 1024,
            connect_timeout: Duration::from_secs(10),
            total_timeout: Duration::from_secs(30),
            max_redirects: 5,
            per_user_per_minute: 10,
            per_host_per_minute: 30,
            deny_hosts: Vec::new(),
            allow_hosts: Vec::new(),
            blocklist: Blocklist::default(),
            proxy: None,
        }
    }
}
