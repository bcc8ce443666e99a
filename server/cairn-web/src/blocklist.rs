//! The malicious-URL filter, fed by plain files the user can update.
//!
//! One entry a line; `#` starts a comment. A line is a domain (`evil.test`), a hosts-file line
//! (`0.0.0.0 evil.test`), or a URL as in the URLhaus lists (`http://evil.test/bins/x.sh`).
//! Every entry goes through the same WHATWG parsing as the requests (lower case, IDNA, IPv4
//! spellings), so matching compares normalised hosts, never raw strings.
//! A domain entry blocks the host and all its subdomains; a URL entry with a path blocks that
//! path and what lies below it on that host, whatever the scheme or port, because URLhaus lists
//! single files on shared hosts where blocking the whole host would be wrong.

use std::collections::HashSet;
use std::net::IpAddr;
use std::path::Path;

use url::Url;

use crate::error::WebError;

/// Hosts and URL prefixes to refuse.
#[derive(Debug, Clone, Default)]
pub struct Blocklist {
    hosts: HashSet<String>,
    /// `host/path[?query]` prefixes.
    urls: Vec<String>,
}

/// Which blocklist entry a URL matched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlocklistMatch {
    /// The entry, normalised (`evil.test` or `evil.test/bins/x.sh`).
    pub entry: String,
}

impl Blocklist {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parse list text; lines that are not a host or URL are skipped (feeds carry headers).
    pub fn parse(text: &str) -> Self {
        let mut list = Self::new();
        list.add_text(text);
        list
    }

    /// Read and merge the given list files.
    pub fn load<P: AsRef<Path>>(paths: &[P]) -> Result<Self, WebError> {
        let mut list = Self::new();
        for path in paths {
            let path = path.as_ref();
            let text = std::fs::read_to_string(path).map_err(|source| WebError::BlocklistIo {
                path: path.to_path_buf(),
                source,
            })?;
            list.add_text(&text);
        }
        Ok(list)
    }

    /// Add every entry in `text`.
    pub fn add_text(&mut self, text: &str) {
        for line in text.lines() {
            self.add_line(line);
        }
    }

    /// Add one line; returns whether it held an entry.
    pub fn add_line(&mut self, line: &str) -> bool {
        let line = line.split('#').next().unwrap_or_default().trim();
        let mut tokens = line.split_whitespace();
        let Some(first) = tokens.next() else {
            return false;
        };
        // Hosts-file form: "0.0.0.0 evil.test".
        let token = match tokens.next() {
            Some(second) if first.parse::<IpAddr>().is_ok() => second,
            _ => first,
        };
        let with_scheme = if token.contains("://") {
            token.to_string()
        } else {
            format!("http://{token}")
        };
        let Ok(url) = Url::parse(&with_scheme) else {
            return false;
        };
        let Some(host) = url.host_str().map(normalise_host) else {
            return false;
        };
        if host.is_empty() {
            return false;
        }
        if url.path() == "/" && url.query().is_none() {
            self.hosts.insert(host);
        } else {
            self.urls.push(url_key(&host, &url));
        }
        true
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.hosts.len() + self.urls.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entry `url` matches, if any: its host or a parent domain, or a URL prefix.
    pub fn check(&self, url: &Url) -> Option<BlocklistMatch> {
        let host = normalise_host(url.host_str()?);
        if let Some(hit) = host_suffixes(&host).find(|h| self.hosts.contains(*h)) {
            return Some(BlocklistMatch {
                entry: hit.to_string(),
            });
        }
        let key = url_key(&host, url);
        self.urls
            .iter()
            .find(|prefix| key.starts_with(prefix.as_str()))
            .map(|prefix| BlocklistMatch {
                entry: prefix.clone(),
            })
    }
}

fn url_key(host: &str, url: &Url) -> String {
    match url.query() {
        Some(q) => format!("{host}{}?{q}", url.path()),
        None => format!("{host}{}", url.path()),
    }
}

/// Lower case without the trailing dot (`evil.test.` is the same host as `evil.test`).
pub(crate) fn normalise_host(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// The host and its parent domains (`a.b.test`, `b.test`, `test`); an IP literal only itself.
pub(crate) fn host_suffixes(host: &str) -> impl Iterator<Item = &str> {
    let is_ip = host.trim_matches(['[', ']']).parse::<IpAddr>().is_ok();
    let mut next = Some(host);
    std::iter::from_fn(move || {
        let current = next?;
        next = if is_ip {
            None
        } else {
            current.split_once('.').map(|(_, rest)| rest)
        };
        Some(current)
    })
}

/// Normalise a user-written host (deny or allow list) the way request hosts are normalised.
pub(crate) fn normalise_user_host(text: &str) -> Option<String> {
    let text = text.trim();
    let with_scheme = if text.contains("://") {
        text.to_string()
    } else {
        format!("http://{text}/")
    };
    Url::parse(&with_scheme)
        .ok()?
        .host_str()
        .map(normalise_host)
        .filter(|h| !h.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        match Url::parse(text) {
            Ok(u) => u,
            Err(e) => panic!("{text}: {e}"),
        }
    }

    const FEED: &str = "\
################################################
# URLhaus style header
################################################
http://malware.test/bins/x.sh
https://1.2.3.4:8080/i
Evil.Test
0.0.0.0 tracker.test   # hosts-file line
not a url at all ::
";

    #[test]
    fn domains_and_subdomains_match() {
        let list = Blocklist::parse(FEED);
        for hit in [
            "http://evil.test/",
            "https://a.b.evil.test/x",
            "http://EVIL.test./",
        ] {
            let m = list.check(&url(hit));
            assert_eq!(m.map(|m| m.entry), Some("evil.test".into()), "{hit}");
        }
        assert!(list.check(&url("http://tracker.test/")).is_some());
        assert!(list.check(&url("http://notevil.test/")).is_none());
        assert!(list.check(&url("http://evil.test.example/")).is_none());
    }

    #[test]
    fn url_entries_match_their_path_only() {
        let list = Blocklist::parse(FEED);
        assert!(list.check(&url("https://malware.test/bins/x.sh")).is_some());
        assert!(
            list.check(&url("http://malware.test:81/bins/x.sh"))
                .is_some()
        );
        assert!(list.check(&url("http://malware.test/index.html")).is_none());
        assert!(list.check(&url("http://1.2.3.4/i")).is_some());
        // Spelled differently, same address.
        assert!(list.check(&url("http://0x01020304/i")).is_some());
    }

    #[test]
    fn idna_entries_match_normalised_hosts() {
        let list = Blocklist::parse("bücher.test");
        assert!(list.check(&url("http://xn--bcher-kva.test/")).is_some());
        assert!(list.check(&url("http://BÜCHER.test/")).is_some());
    }

    #[test]
    fn suffixes() {
        let all: Vec<_> = host_suffixes("a.b.test").collect();
        assert_eq!(all, ["a.b.test", "b.test", "test"]);
        let ip: Vec<_> = host_suffixes("10.0.0.1").collect();
        assert_eq!(ip, ["10.0.0.1"]);
    }
}
