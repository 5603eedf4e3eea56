//! Property tests over URL strings for the address policy: it never panics, and no spelling
//! of a loopback, private or metadata address gets through in public mode.
//!
//! The oracle for "forbidden" here is built from the standard library's address predicates,
//! independent of the policy's own range tables.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code may panic on setup failures

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use mcp_surface_ledger::net::{PolicyMode, check_url};
use proptest::prelude::*;
use url::{Host, Url};

/// Independent judgement: addresses the standard library already knows are not public.
fn obviously_forbidden(addr: IpAddr) -> bool {
    match addr.to_canonical() {
        IpAddr::V4(v4) => {
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.octets()[0] == 0
                || (v4.octets()[0] == 100 && (64..128).contains(&v4.octets()[1]))
        }
        IpAddr::V6(v6) => {
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || v6.is_unique_local()
                || v6.is_unicast_link_local()
        }
    }
}

/// A random address inside one of the ranges that must never be reachable publicly.
fn forbidden_ipv4() -> impl Strategy<Value = Ipv4Addr> {
    let ranges: Vec<(u32, u8)> = vec![
        (0x7f00_0000, 8),  // 127/8
        (0x0a00_0000, 8),  // 10/8
        (0xac10_0000, 12), // 172.16/12
        (0xc0a8_0000, 16), // 192.168/16
        (0xa9fe_0000, 16), // 169.254/16
        (0x6440_0000, 10), // 100.64/10
        (0x0000_0000, 8),  // 0/8
        (0xa9fe_a9fe, 32), // metadata
    ];
    (proptest::sample::select(ranges), any::<u32>()).prop_map(|((base, prefix), noise)| {
        let host_bits = if prefix == 32 {
            0
        } else {
            noise & (u32::MAX >> prefix)
        };
        Ipv4Addr::from(base | host_bits)
    })
}

/// Ways to write an IPv4 address in a URL host that WHATWG parsers accept.
fn spell(addr: Ipv4Addr, style: u8) -> String {
    let n = u32::from(addr);
    let [a, b, c, d] = addr.octets();
    match style % 14 {
        0 => format!("{a}.{b}.{c}.{d}"),
        1 => format!("{n}"),
        2 => format!("0x{n:x}"),
        3 => format!("0{n:o}"),
        4 => format!("0x{a:x}.0x{b:x}.0x{c:x}.0x{d:x}"),
        5 => format!("0{a:o}.0{b:o}.0{c:o}.0{d:o}"),
        6 => format!("{a}.{b}.{}", n & 0xffff),
        7 => format!("{a}.{}", n & 0x00ff_ffff),
        8 => format!("{a}.{b}.{c}.{d}."),
        9 => format!("[::ffff:{a}.{b}.{c}.{d}]"),
        10 => format!("[::ffff:{:x}:{:x}]", n >> 16, n & 0xffff),
        11 => format!("[64:ff9b::{a}.{b}.{c}.{d}]"),
        12 => format!("[2002:{:x}:{:x}::1]", n >> 16, n & 0xffff),
        _ => format!("0X{n:X}"),
    }
}

fn decorate(host: &str, https: bool, port: Option<u16>, path: &str) -> String {
    let scheme = if https { "https" } else { "http" };
    let port = port.map(|p| format!(":{p}")).unwrap_or_default();
    format!("{scheme}://{host}{port}/{path}")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_strings_never_panic_and_never_admit_forbidden_literals(
        raw in "\\PC{0,60}",
        prefixed in "(http|https|ftp|HTTP)://[a-zA-Z0-9.:@\\[\\]%_~-]{0,40}(/[a-z]{0,5})?",
    ) {
        for input in [raw, prefixed] {
            let Ok(url) = Url::parse(&input) else { continue };
            let public = check_url(&url, PolicyMode::Public, &[]);
            let _ = check_url(&url, PolicyMode::AllowPrivate, &["example.com".to_string()]);
            if public.is_ok() {
                match url.host() {
                    Some(Host::Ipv4(v4)) => prop_assert!(!obviously_forbidden(IpAddr::V4(v4)), "{input}"),
                    Some(Host::Ipv6(v6)) => prop_assert!(!obviously_forbidden(IpAddr::V6(v6)), "{input}"),
                    Some(Host::Domain(name)) => {
                        let name = name.trim_end_matches('.');
                        prop_assert!(name != "localhost" && !name.ends_with(".localhost"), "{input}");
                        prop_assert!(name.parse::<IpAddr>().is_err(), "{input}");
                    }
                    None => prop_assert!(false, "accepted a URL without a host: {input}"),
                }
            }
        }
    }

    #[test]
    fn every_spelling_of_a_forbidden_ipv4_is_refused(
        addr in forbidden_ipv4(),
        style in any::<u8>(),
        https in any::<bool>(),
        port in proptest::option::of(1u16..),
        path in "[a-z0-9/]{0,12}",
    ) {
        let input = decorate(&spell(addr, style), https, port, &path);
        if let Ok(url) = Url::parse(&input) {
            prop_assert!(check_url(&url, PolicyMode::Public, &[]).is_err(), "{input} was admitted");
        }
    }

    #[test]
    fn metadata_is_refused_even_with_the_override(style in any::<u8>(), port in proptest::option::of(1u16..)) {
        let input = decorate(&spell(Ipv4Addr::new(169, 254, 169, 254), style), false, port, "latest/meta-data/");
        let url = Url::parse(&input).unwrap();
        prop_assert!(check_url(&url, PolicyMode::AllowPrivate, &[]).is_err(), "{input} was admitted");
    }

    #[test]
    fn forbidden_ipv6_literals_are_refused(
        kind in 0u8..5,
        low in any::<u64>(),
    ) {
        let addr = match kind {
            0 => Ipv6Addr::LOCALHOST,
            1 => Ipv6Addr::from((0xfc00u128 << 112) | u128::from(low)),
            2 => Ipv6Addr::from((0xfe80u128 << 112) | u128::from(low)),
            3 => Ipv6Addr::from((0xff02u128 << 112) | u128::from(low)),
            _ => Ipv6Addr::from((0xfd00_0ec2u128 << 96) | 0x254),
        };
        let url = Url::parse(&format!("http://[{addr}]/")).unwrap();
        prop_assert!(check_url(&url, PolicyMode::Public, &[]).is_err(), "{addr} was admitted");
    }
}

#[test]
fn the_spellings_really_parse_to_the_address() {
    // Guards the generator: most spellings must reach the IPv4 parser, or the property
    // above would pass by never producing a valid URL.
    let loopback = Ipv4Addr::new(127, 0, 0, 1);
    let parsed = (0..14)
        .filter(|style| {
            let url = Url::parse(&decorate(&spell(loopback, *style), false, None, "")).unwrap();
            match url.host() {
                Some(Host::Ipv4(v4)) => v4 == loopback,
                Some(Host::Ipv6(v6)) => {
                    v6.to_ipv4_mapped() == Some(loopback) || v6.segments()[0] != 0
                }
                _ => false,
            }
        })
        .count();
    assert_eq!(parsed, 14);
}
