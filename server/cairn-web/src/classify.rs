//! Address classification: which IP addresses a tool may connect to.
//!
//! Only globally routable unicast addresses are [`AddressClass::Public`]; everything else has a
//! class that names why it is refused (private, loopback, link-local, CGNAT, ...). IPv6 forms
//! that carry an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4) are judged by the
//! embedded IPv4 address, because the packet ends up there: `[::ffff:127.0.0.1]` is loopback.
//! Teredo also embeds addresses, but obfuscated and relayed through a third party, so it is
//! refused outright, as Smokescreen does.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of address an IP is, for the connect decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressClass {
    /// Globally routable unicast: allowed.
    Public,
    /// 127.0.0.0/8 and `::1`: allowed only when the configuration says so.
    Loopback,
    /// RFC 1918 (10/8, 172.16/12, 192.168/16) and deprecated IPv6 site-local (fec0::/10).
    Private,
    /// 169.254.0.0/16 (including the cloud metadata address 169.254.169.254) and fe80::/10.
    LinkLocal,
    /// Carrier-grade NAT, 100.64.0.0/10: the provider's internal network.
    Cgnat,
    /// 224.0.0.0/4 and ff00::/8.
    Multicast,
    /// 255.255.255.255.
    Broadcast,
    /// 0.0.0.0 and `::` (on Linux a connect to them reaches the local host).
    Unspecified,
    /// IPv6 unique-local fc00::/7.
    UniqueLocal,
    /// Documentation ranges (192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20).
    Documentation,
    /// Teredo (2001::/32): embeds an obfuscated address behind a relay.
    Tunnel,
    /// Anything else that is not global unicast: 0/8, 192.0.0/24, 198.18/15, 240/4,
    /// the IETF protocol ranges, local-use NAT64, discard-only, unassigned IPv6.
    Reserved,
}

impl AddressClass {
    /// Whether a connection to an address of this class is allowed.
    pub fn is_allowed(self, allow_loopback: bool) -> bool {
        match self {
            AddressClass::Public => true,
            AddressClass::Loopback => allow_loopback,
            _ => false,
        }
    }
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddressClass::Public => "public",
            AddressClass::Loopback => "loopback",
            AddressClass::Private => "private network",
            AddressClass::LinkLocal => "link-local (cloud metadata range)",
            AddressClass::Cgnat => "carrier-grade NAT",
            AddressClass::Multicast => "multicast",
            AddressClass::Broadcast => "broadcast",
            AddressClass::Unspecified => "unspecified (this host)",
            AddressClass::UniqueLocal => "IPv6 unique-local",
            AddressClass::Documentation => "documentation",
            AddressClass::Tunnel => "Teredo tunnel",
            AddressClass::Reserved => "reserved",
        })
    }
}

/// Classify `ip` for the connect decision; IPv6 forms embedding IPv4 are judged by the IPv4.
pub fn classify(ip: IpAddr) -> AddressClass {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - prefix)
    };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

fn in_v6(ip: Ipv6Addr, net: [u16; 8], prefix: u32) -> bool {
    let mask = if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - prefix)
    };
    let n = Ipv6Addr::new(
        net[0], net[1], net[2], net[3], net[4], net[5], net[6], net[7],
    );
    (u128::from(ip) & mask) == (u128::from(n) & mask)
}

fn classify_v4(ip: Ipv4Addr) -> AddressClass {
    use AddressClass::*;
    // Order matters only where ranges nest; these do not overlap except 0/8 containing 0.0.0.0.
    let table: &[([u8; 4], u32, AddressClass)] = &[
        ([0, 0, 0, 0], 32, Unspecified),
        ([255, 255, 255, 255], 32, Broadcast),
        ([0, 0, 0, 0], 8, Reserved),
        ([10, 0, 0, 0], 8, Private),
        ([100, 64, 0, 0], 10, Cgnat),
        ([127, 0, 0, 0], 8, Loopback),
        ([169, 254, 0, 0], 16, LinkLocal),
        ([172, 16, 0, 0], 12, Private),
        ([192, 0, 0, 0], 24, Reserved),
        ([192, 0, 2, 0], 24, Documentation),
        ([192, 88, 99, 0], 24, Reserved),
        ([192, 168, 0, 0], 16, Private),
        ([198, 18, 0, 0], 15, Reserved),
        ([198, 51, 100, 0], 24, Documentation),
        ([203, 0, 113, 0], 24, Documentation),
        ([224, 0, 0, 0], 4, Multicast),
        ([240, 0, 0, 0], 4, Reserved),
    ];
    table
        .iter()
        .find(|(net, prefix, _)| in_v4(ip, *net, *prefix))
        .map_or(Public, |(_, _, class)| *class)
}

/// The IPv4 address an IPv6 form carries, when the packet would end up at it.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let o = ip.octets();
    let tail = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    // IPv4-mapped ::ffff:a.b.c.d.
    if in_v6(ip, [0, 0, 0, 0, 0, 0xffff, 0, 0], 96) {
        return Some(tail);
    }
    // IPv4-compatible ::a.b.c.d (deprecated); :: and ::1 are handled before this is called.
    if in_v6(ip, [0; 8], 96) {
        return Some(tail);
    }
    // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052).
    if in_v6(ip, [0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96) {
        return Some(tail);
    }
    // 6to4 2002:AABB:CCDD::/48 carries AA.BB.CC.DD (RFC 3056).
    if in_v6(ip, [0x2002, 0, 0, 0, 0, 0, 0, 0], 16) {
        return Some(Ipv4Addr::new(o[2], o[3], o[4], o[5]));
    }
    None
}

fn classify_v6(ip: Ipv6Addr) -> AddressClass {
    use AddressClass::*;
    if ip.is_unspecified() {
        return Unspecified;
    }
    if ip.is_loopback() {
        return Loopback;
    }
    if let Some(v4) = embedded_v4(ip) {
        return classify_v4(v4);
    }
    let table: &[([u16; 8], u32, AddressClass)] = &[
        ([0xff00, 0, 0, 0, 0, 0, 0, 0], 8, Multicast),
        ([0xfe80, 0, 0, 0, 0, 0, 0, 0], 10, LinkLocal),
        ([0xfec0, 0, 0, 0, 0, 0, 0, 0], 10, Private),
        ([0xfc00, 0, 0, 0, 0, 0, 0, 0], 7, UniqueLocal),
        ([0x2001, 0x0db8, 0, 0, 0, 0, 0, 0], 32, Documentation),
        ([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20, Documentation),
        ([0x2001, 0, 0, 0, 0, 0, 0, 0], 32, Tunnel),
        // IETF protocol assignments (ORCHID, AMT, benchmarking, ...): not ordinary hosts.
        ([0x2001, 0, 0, 0, 0, 0, 0, 0], 23, Reserved),
        // Local-use NAT64 (RFC 8215): translates into the operator's own network.
        ([0x64, 0xff9b, 1, 0, 0, 0, 0, 0], 48, Reserved),
        // Discard-only (RFC 6666).
        ([0x100, 0, 0, 0, 0, 0, 0, 0], 64, Reserved),
        // SRv6 SIDs (RFC 9602).
        ([0x5f00, 0, 0, 0, 0, 0, 0, 0], 16, Reserved),
    ];
    if let Some((_, _, class)) = table
        .iter()
        .find(|(net, prefix, _)| in_v6(ip, *net, *prefix))
    {
        return *class;
    }
    // Only 2000::/3 is allocated as global unicast; the rest is unassigned.
    if in_v6(ip, [0x2000, 0, 0, 0, 0, 0, 0, 0], 3) {
        Public
    } else {
        Reserved
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AddressClass::*;

    /// A Smokescreen-style table: every range with an inside address and the edges around it.
    #[test]
    fn classify_table() {
        let cases: &[(&str, AddressClass)] = &[
            ("8.8.8.8", Public),
            ("1.1.1.1", Public),
            ("93.184.216.34", Public),
            ("0.0.0.0", Unspecified),
            ("0.1.2.3", Reserved),
            ("10.0.0.1", Private),
            ("10.255.255.255", Private),
            ("11.0.0.1", Public),
            ("172.15.255.255", Public),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("172.32.0.0", Public),
            ("192.168.1.1", Private),
            ("192.169.0.1", Public),
            ("127.0.0.1", Loopback),
            ("127.1.2.3", Loopback),
            ("169.254.169.254", LinkLocal),
            ("169.254.0.1", LinkLocal),
            ("100.63.255.254", Public),
            ("100.64.0.1", Cgnat),
            ("100.127.255.255", Cgnat),
            ("100.128.0.0", Public),
            ("224.0.0.1", Multicast),
            ("239.255.255.250", Multicast),
            ("255.255.255.255", Broadcast),
            ("240.0.0.1", Reserved),
            ("192.0.0.170", Reserved),
            ("192.0.2.1", Documentation),
            ("198.51.100.7", Documentation),
            ("203.0.113.9", Documentation),
            ("198.18.0.1", Reserved),
            ("198.19.255.255", Reserved),
            ("::", Unspecified),
            ("::1", Loopback),
            ("::ffff:127.0.0.1", Loopback),
            ("::ffff:169.254.169.254", LinkLocal),
            ("::ffff:10.0.0.1", Private),
            ("::ffff:8.8.8.8", Public),
            ("::127.0.0.1", Loopback),
            ("::10.0.0.1", Private),
            ("64:ff9b::a9fe:a9fe", LinkLocal),
            ("64:ff9b::7f00:1", Loopback),
            ("64:ff9b::808:808", Public),
            ("64:ff9b:1::1", Reserved),
            ("2002:a9fe:a9fe::1", LinkLocal),
            ("2002:7f00:1::", Loopback),
            ("2002:0a00:0001::1", Private),
            ("2002:0808:0808::1", Public),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", Tunnel),
            ("2001:db8::1", Documentation),
            ("3fff::1", Documentation),
            ("2001:2::1", Reserved),
            ("100::1", Reserved),
            ("fc00::1", UniqueLocal),
            ("fd00::1", UniqueLocal),
            ("fe80::1", LinkLocal),
            ("febf::1", LinkLocal),
            ("fec0::1", Private),
            ("ff02::2", Multicast),
            ("ff05::1:3", Multicast),
            ("2606:4700:4700::1111", Public),
            ("2a00:1450:4001:81a::200e", Public),
            ("4000::1", Reserved),
            ("5f00::1", Reserved),
        ];
        for (text, want) in cases {
            let ip: IpAddr = match text.parse() {
                Ok(ip) => ip,
                Err(e) => panic!("bad fixture {text}: {e}"),
            };
            assert_eq!(classify(ip), *want, "{text}");
        }
    }

    #[test]
    fn only_public_and_allowed_loopback_pass() {
        assert!(Public.is_allowed(false));
        assert!(!Loopback.is_allowed(false));
        assert!(Loopback.is_allowed(true));
        for class in [
            Private,
            LinkLocal,
            Cgnat,
            Multicast,
            Broadcast,
            Unspecified,
            UniqueLocal,
        ] {
            assert!(!class.is_allowed(true), "{class}");
        }
        for class in [Documentation, Tunnel, Reserved] {
            assert!(!class.is_allowed(true), "{class}");
        }
    }
}
