//! Listening sockets from `/proc/net/{tcp,tcp6,udp,udp6}`, and the processes that own them
//! through the socket inodes in `/proc/*/fd`.

use std::collections::HashMap;
use std::fs;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::procfs;

/// The TCP state `LISTEN` in `/proc/net/tcp*`.
const TCP_LISTEN: &str = "0A";
/// The UDP "state" of a bound, unconnected socket (`TCP_CLOSE`), which is how a UDP server
/// waits.
const UDP_UNCONNECTED: &str = "07";

/// One listening socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Listener {
    /// `tcp`, `tcp6`, `udp` or `udp6`.
    pub protocol: &'static str,
    pub address: IpAddr,
    pub port: u16,
    pub inode: u64,
}

/// Every listening TCP socket and bound, unconnected UDP socket of this network namespace.
pub(crate) fn listeners() -> Vec<Listener> {
    let mut out = Vec::new();
    for protocol in ["tcp", "tcp6", "udp", "udp6"] {
        let Ok(text) = fs::read_to_string(format!("/proc/net/{protocol}")) else {
            continue;
        };
        let wanted = if protocol.starts_with("tcp") {
            TCP_LISTEN
        } else {
            UDP_UNCONNECTED
        };
        out.extend(
            text.lines()
                .skip(1)
                .filter_map(|line| parse_line(protocol, line, wanted)),
        );
    }
    out
}

fn parse_line(protocol: &'static str, line: &str, wanted: &str) -> Option<Listener> {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.get(3)? != &wanted {
        return None;
    }
    let (addr, port) = f.get(1)?.split_once(':')?;
    // A UDP socket connected to a peer is a client, not a listener.
    if protocol.starts_with("udp") && !f.get(2)?.bytes().all(|b| b == b'0' || b == b':') {
        return None;
    }
    Some(Listener {
        protocol,
        address: parse_address(addr)?,
        port: u16::from_str_radix(port, 16).ok()?,
        inode: f.get(9)?.parse().ok()?,
    })
}

/// An address as `/proc/net` writes it: the bytes of each 32-bit word in host order (little
/// endian on every machine cairn runs on).
fn parse_address(hex: &str) -> Option<IpAddr> {
    let word = |i: usize| {
        u32::from_str_radix(hex.get(i * 8..i * 8 + 8)?, 16)
            .ok()
            .map(u32::to_le_bytes)
    };
    match hex.len() {
        8 => Some(IpAddr::V4(Ipv4Addr::from(word(0)?))),
        32 => {
            let mut bytes = [0u8; 16];
            for i in 0..4 {
                bytes[i * 4..i * 4 + 4].copy_from_slice(&word(i)?);
            }
            Some(IpAddr::V6(Ipv6Addr::from(bytes)))
        }
        _ => None,
    }
}

/// The pids holding each socket inode (every process whose `fd` directory can be read).
pub(crate) fn owners() -> HashMap<u64, Vec<i32>> {
    let mut map: HashMap<u64, Vec<i32>> = HashMap::new();
    for pid in procfs::pids() {
        for inode in socket_inodes(pid) {
            let pids = map.entry(inode).or_default();
            if !pids.contains(&pid) {
                pids.push(pid);
            }
        }
    }
    map
}

/// The socket inodes among `pid`'s open files.
pub(crate) fn socket_inodes(pid: i32) -> Vec<u64> {
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let target = fs::read_link(e.ok()?.path()).ok()?;
        let text = target.to_str()?;
        text.strip_prefix("socket:[")?
            .strip_suffix(']')?
            .parse()
            .ok()
    })
    .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn proc_net_lines_parse_for_both_families() {
        let v4 = "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 12345 1 0000000000000000 100 0 0 10 0";
        let l = parse_line("tcp", v4, TCP_LISTEN).unwrap();
        assert_eq!(l.address, IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert_eq!((l.port, l.inode), (8080, 12345));
        let v6 = "   0: 00000000000000000000000001000000:0035 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 999 2 0000000000000000 0";
        let l = parse_line("udp6", v6, UDP_UNCONNECTED).unwrap();
        assert_eq!(l.address, IpAddr::V6(Ipv6Addr::LOCALHOST));
        assert_eq!(l.port, 53);
        // An established connection is not a listener.
        let est = v4.replace(" 0A ", " 01 ");
        assert!(parse_line("tcp", &est, TCP_LISTEN).is_none());
    }
}
