//! Which addresses a user-aimed request may reach: the globally reachable
//! internet only. Everything in IANA's special-purpose address registries
//! (IPv4 and IPv6) is refused, and an IPv6 address that carries an IPv4
//! address for a translator to reach (mapped, SIIT, NAT64, 6to4) is judged
//! by the IPv4 address it carries, so `[2002:7f00:1::1]` is loopback.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether a request to `ip` could reach something that is not the public
/// internet: this machine, a private or shared network, cloud metadata,
/// or a range the registries reserve.
pub fn is_forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => forbidden_v4(v4),
        IpAddr::V6(v6) => forbidden_v6(v6),
    }
}

/// IPv4 special-purpose ranges (RFC 6890 and IANA's registry).
fn forbidden_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    ip.is_unspecified()
        || ip.is_loopback() // 127.0.0.0/8
        || ip.is_private() // 10/8, 172.16/12, 192.168/16
        || ip.is_link_local() // 169.254/16: cloud metadata at 169.254.169.254
        || ip.is_broadcast()
        || ip.is_multicast() // 224/4
        || ip.is_documentation() // 192.0.2/24, 198.51.100/24, 203.0.113/24
        || a == 0 // "this network", 0/8
        || (a == 100 && (64..128).contains(&b)) // shared (carrier-grade NAT), 100.64/10
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments, 192.0.0/24
        || (a == 192 && b == 31 && c == 196) // AS112-v4, 192.31.196/24
        || (a == 192 && b == 52 && c == 193) // AMT, 192.52.193/24
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast (deprecated), 192.88.99/24
        || (a == 192 && b == 175 && c == 48) // direct delegation AS112, 192.175.48/24
        || (a == 198 && (b == 18 || b == 19)) // benchmarking, 198.18/15
        || a >= 240 // reserved 240/4
}

/// IPv6: the IPv4 inside a translating prefix is judged as IPv4; outside
/// global unicast (2000::/3) nothing is allowed; inside it, the
/// special-purpose blocks are refused.
fn forbidden_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return forbidden_v4(v4);
    }
    let s = ip.segments();
    let global_unicast = (s[0] & 0xe000) == 0x2000;
    !global_unicast
        // 2001::/23 IETF protocol assignments (Teredo 2001::/32, which
        // hides an IPv4 address, among them).
        || (s[0] == 0x2001 && s[1] < 0x0200)
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation 2001:db8::/32
        || (s[0] & 0xfff0) == 0x3ff0 // documentation 3fff::/20
}

/// The IPv4 address an IPv6 address carries for a translator, if it lies
/// in a translating prefix:
/// - `::ffff:0:0/96` IPv4-mapped, and `::ffff:0:0:0/96` IPv4-translated
///   (SIIT), and `::/96` IPv4-compatible (deprecated): the last 32 bits;
/// - `64:ff9b::/96` (NAT64 well-known prefix): the last 32 bits;
/// - `2002::/16` (6to4): bits 16 to 48.
///
/// `64:ff9b:1::/48` (local-use NAT64) is not here: its translator is the
/// network's own, so it is refused whole as outside global unicast.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let o = ip.octets();
    let last32 = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    match s {
        [0, 0, 0, 0, 0, 0xffff, _, _] => Some(last32),
        [0, 0, 0, 0, 0xffff, 0, _, _] => Some(last32),
        // `::` and `::1` are themselves (unspecified, loopback), not
        // IPv4-compatible addresses; both are refused either way.
        [0, 0, 0, 0, 0, 0, _, _] => Some(last32),
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(last32),
        [0x2002, ..] => Some(Ipv4Addr::new(o[2], o[3], o[4], o[5])),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forbidden(text: &str) -> bool {
        is_forbidden(text.parse().expect("an address"))
    }

    #[test]
    fn special_purpose_ipv4_is_refused() {
        for ip in [
            "127.0.0.1",
            "127.255.0.9",
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.10",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.254",
            "192.0.0.9",
            "192.0.2.1",
            "192.31.196.1",
            "192.52.193.1",
            "192.88.99.1",
            "192.175.48.1",
            "198.18.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "224.0.0.1",
            "240.0.0.1",
            "255.255.255.255",
        ] {
            assert!(forbidden(ip), "{ip} must be refused");
        }
        for ip in ["93.184.216.34", "8.8.8.8", "100.128.0.1", "172.32.0.1"] {
            assert!(!forbidden(ip), "{ip} is public");
        }
    }

    #[test]
    fn ipv6_that_reaches_ipv4_is_judged_by_its_ipv4() {
        for ip in [
            "::ffff:127.0.0.1",       // mapped
            "::ffff:0:7f00:1",        // SIIT ::ffff:0:0:0/96
            "::127.0.0.1",            // IPv4-compatible
            "64:ff9b::7f00:1",        // NAT64
            "64:ff9b::a00:1",         // NAT64 to 10.0.0.1
            "2002:7f00:1::1",         // 6to4 of 127.0.0.1
            "2002:a9fe:a9fe::1",      // 6to4 of 169.254.169.254
            "2002:c0a8:0101:ffff::1", // 6to4 of 192.168.1.1
        ] {
            assert!(forbidden(ip), "{ip} must be refused");
        }
        for ip in [
            "::ffff:93.184.216.34",
            "64:ff9b::808:808",
            "2002:5db8:d822::1",
        ] {
            assert!(!forbidden(ip), "{ip} reaches a public IPv4 address");
        }
    }

    #[test]
    fn special_purpose_ipv6_is_refused() {
        for ip in [
            "::",
            "::1",
            "64:ff9b:1::7f00:1", // local-use NAT64
            "64:ff9b:1:ffff::1",
            "100::1",      // discard-only
            "100::ffff:1", // discard-only
            "2001::1",     // Teredo
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:2::1",   // benchmarking
            "2001:db8::1", // documentation
            "3fff::1",     // documentation
            "5f00::1",     // SRv6 SIDs (outside 2000::/3)
            "fc00::1",
            "fd00:ec2::254", // cloud metadata
            "fe80::1",
            "fec0::1", // site-local (deprecated)
            "ff02::1",
        ] {
            assert!(forbidden(ip), "{ip} must be refused");
        }
        for ip in [
            "2606:2800:220:1:248:1893:25c8:1946",
            "2a00:1450:4001:81b::200e",
        ] {
            assert!(!forbidden(ip), "{ip} is public");
        }
    }
}
