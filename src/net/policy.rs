//! The address policy: which hosts and addresses a target request may reach.
//!
//! Users type the URLs this crate fetches, so every address is judged before a connection is
//! made. The rules follow the IANA IPv4 and IPv6 special-purpose registries: anything that is
//! not ordinary public unicast space is refused. IPv6 forms that carry an IPv4 address
//! (IPv4-mapped, IPv4-compatible, NAT64, 6to4) are judged by the address they carry, so
//! `::ffff:127.0.0.1` is as loopback as `127.0.0.1`.
//!
//! Everything here is pure: no lookups, no I/O.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::{IpNet, Ipv4Net, Ipv6Net};
use url::{Host, Url};

/// How strict the address policy is. Only the operator chooses it; input never does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PolicyMode {
    /// Only public unicast addresses are reachable. The default.
    #[default]
    Public,
    /// Operator override for self-hosted servers: loopback and private ranges (RFC 1918,
    /// shared address space, IPv6 unique-local) become reachable as well. Cloud metadata
    /// addresses and every other reserved range stay refused.
    AllowPrivate,
}

impl PolicyMode {
    fn permits(self, class: Class) -> bool {
        match class {
            Class::Loopback | Class::Private => self == PolicyMode::AllowPrivate,
            Class::Metadata | Class::Reserved => false,
        }
    }
}

/// Why a range is special; decides which [`PolicyMode`] may reach it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Loopback: reachable only with [`PolicyMode::AllowPrivate`].
    Loopback,
    /// Private networks: reachable only with [`PolicyMode::AllowPrivate`].
    Private,
    /// Cloud instance metadata endpoints: never reachable.
    Metadata,
    /// Everything else that is not public unicast: never reachable.
    Reserved,
}

/// One row of a range table.
struct Rule<N> {
    net: N,
    label: &'static str,
    class: Class,
}

const fn v4(
    a: u8,
    b: u8,
    c: u8,
    d: u8,
    prefix: u8,
    label: &'static str,
    class: Class,
) -> Rule<Ipv4Net> {
    Rule {
        net: Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), prefix),
        label,
        class,
    }
}

const fn v6(segments: [u16; 8], prefix: u8, label: &'static str, class: Class) -> Rule<Ipv6Net> {
    let [a, b, c, d, e, f, g, h] = segments;
    Rule {
        net: Ipv6Net::new_assert(Ipv6Addr::new(a, b, c, d, e, f, g, h), prefix),
        label,
        class,
    }
}

/// IPv4 special-purpose ranges. The first matching row decides, so single addresses come
/// before the ranges that contain them.
const IPV4_RULES: &[Rule<Ipv4Net>] = &[
    v4(169, 254, 169, 254, 32, "cloud metadata", Class::Metadata),
    v4(100, 100, 100, 200, 32, "cloud metadata", Class::Metadata),
    v4(255, 255, 255, 255, 32, "limited broadcast", Class::Reserved),
    v4(0, 0, 0, 0, 8, "\"this network\"", Class::Reserved),
    v4(10, 0, 0, 0, 8, "private (RFC 1918)", Class::Private),
    v4(
        100,
        64,
        0,
        0,
        10,
        "shared address space (CGNAT)",
        Class::Private,
    ),
    v4(127, 0, 0, 0, 8, "loopback", Class::Loopback),
    v4(169, 254, 0, 0, 16, "link-local", Class::Reserved),
    v4(172, 16, 0, 0, 12, "private (RFC 1918)", Class::Private),
    v4(
        192,
        0,
        0,
        0,
        24,
        "IETF protocol assignments",
        Class::Reserved,
    ),
    v4(
        192,
        0,
        2,
        0,
        24,
        "documentation (TEST-NET-1)",
        Class::Reserved,
    ),
    v4(
        192,
        88,
        99,
        0,
        24,
        "6to4 relay anycast (deprecated)",
        Class::Reserved,
    ),
    v4(192, 168, 0, 0, 16, "private (RFC 1918)", Class::Private),
    v4(198, 18, 0, 0, 15, "benchmarking", Class::Reserved),
    v4(
        198,
        51,
        100,
        0,
        24,
        "documentation (TEST-NET-2)",
        Class::Reserved,
    ),
    v4(
        203,
        0,
        113,
        0,
        24,
        "documentation (TEST-NET-3)",
        Class::Reserved,
    ),
    v4(224, 0, 0, 0, 4, "multicast", Class::Reserved),
    v4(240, 0, 0, 0, 4, "reserved", Class::Reserved),
];

/// IPv6 special-purpose ranges that do not carry an IPv4 address. The first matching row
/// decides. Anything outside 2000::/3 that no row names is refused as well.
const IPV6_RULES: &[Rule<Ipv6Net>] = &[
    v6(
        [0, 0, 0, 0, 0, 0, 0, 0],
        128,
        "unspecified",
        Class::Reserved,
    ),
    v6([0, 0, 0, 0, 0, 0, 0, 1], 128, "loopback", Class::Loopback),
    v6(
        [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254],
        128,
        "cloud metadata",
        Class::Metadata,
    ),
    v6(
        [0x64, 0xff9b, 1, 0, 0, 0, 0, 0],
        48,
        "local-use NAT64",
        Class::Reserved,
    ),
    v6(
        [0x100, 0, 0, 0, 0, 0, 0, 0],
        64,
        "discard-only",
        Class::Reserved,
    ),
    v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32, "Teredo", Class::Reserved),
    v6(
        [0x2001, 2, 0, 0, 0, 0, 0, 0],
        48,
        "benchmarking",
        Class::Reserved,
    ),
    v6(
        [0x2001, 0x10, 0, 0, 0, 0, 0, 0],
        28,
        "ORCHID (deprecated)",
        Class::Reserved,
    ),
    v6(
        [0x2001, 0x20, 0, 0, 0, 0, 0, 0],
        28,
        "ORCHIDv2",
        Class::Reserved,
    ),
    v6(
        [0x2001, 0xdb8, 0, 0, 0, 0, 0, 0],
        32,
        "documentation",
        Class::Reserved,
    ),
    v6(
        [0x2001, 0, 0, 0, 0, 0, 0, 0],
        23,
        "IETF protocol assignments",
        Class::Reserved,
    ),
    v6(
        [0x2002, 0, 0, 0, 0, 0, 0, 0],
        16,
        "6to4 (deprecated)",
        Class::Reserved,
    ),
    v6(
        [0x3fff, 0, 0, 0, 0, 0, 0, 0],
        20,
        "documentation",
        Class::Reserved,
    ),
    v6(
        [0x5f00, 0, 0, 0, 0, 0, 0, 0],
        16,
        "SRv6 segment identifiers",
        Class::Reserved,
    ),
    v6(
        [0xfc00, 0, 0, 0, 0, 0, 0, 0],
        7,
        "unique-local (ULA)",
        Class::Private,
    ),
    v6(
        [0xfe80, 0, 0, 0, 0, 0, 0, 0],
        10,
        "link-local",
        Class::Reserved,
    ),
    v6(
        [0xfec0, 0, 0, 0, 0, 0, 0, 0],
        10,
        "site-local (deprecated)",
        Class::Reserved,
    ),
    v6(
        [0xff00, 0, 0, 0, 0, 0, 0, 0],
        8,
        "multicast",
        Class::Reserved,
    ),
];

const IPV4_MAPPED: Ipv6Net = Ipv6Net::new_assert(Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0), 96);
const IPV4_COMPATIBLE: Ipv6Net = Ipv6Net::new_assert(Ipv6Addr::UNSPECIFIED, 96);
const NAT64: Ipv6Net = Ipv6Net::new_assert(Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96);
const SIX_TO_FOUR: Ipv6Net = Ipv6Net::new_assert(Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16);
const GLOBAL_UNICAST: Ipv6Net = Ipv6Net::new_assert(Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3);

/// Why one address is refused: the range it falls in and, for IPv6 forms that carry an IPv4
/// address, the IPv4 address that was judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddressRefusal {
    /// The refused address as it was presented.
    pub address: IpAddr,
    /// The IPv4 address carried inside `address`, when that is what was judged.
    pub embedded: Option<Ipv4Addr>,
    /// The special-purpose range that matched.
    pub range: IpNet,
    /// A short name of that range, such as `loopback` or `cloud metadata`.
    pub label: &'static str,
    /// The operator override (`--allow-private-targets`) would make it reachable: loopback
    /// and private ranges. The message then names the override.
    pub operator_may_allow: bool,
}

impl fmt::Display for AddressRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.address)?;
        if let Some(embedded) = self.embedded {
            write!(f, " (carries IPv4 {embedded})")?;
        }
        write!(f, ", which is in {} space {}", self.label, self.range)?;
        if self.operator_may_allow {
            f.write_str(PRIVATE_OVERRIDE_HINT)?;
        }
        Ok(())
    }
}

/// How a refusal the operator override would lift says so: it names the flag and the
/// environment variable, since a developer testing a local server needs exactly that.
const PRIVATE_OVERRIDE_HINT: &str = " (reachable only with --allow-private-targets or \
     LEDGER_ALLOW_PRIVATE_TARGETS=1, outside the Apify platform)";

/// Why a URL, host name or address may not be contacted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Blocked {
    /// A literal address in the URL, or the peer of a connection, is not reachable.
    #[error("refused address {0}")]
    Address(AddressRefusal),
    /// A host name resolved to at least one address that is not reachable.
    #[error("refused host {host}: it resolves to {refusal}")]
    Resolved {
        /// The host name that was looked up.
        host: String,
        /// The first refused address among its answers.
        refusal: AddressRefusal,
    },
    /// The URL scheme is not `http` or `https`.
    #[error("refused URL scheme \"{0}\": only http and https are allowed")]
    Scheme(String),
    /// The URL carries a user name or password.
    #[error(
        "refused URL with credentials: target URLs may not carry a user name or password; \
         give the server a credential as a header instead: server_credentials in the input \
         ({{\"origin\", \"header\", \"value\"}}, e.g. Authorization: Basic …), or --header \
         (--header-file) with snapshot and diff"
    )]
    Credentials,
    /// The URL has no host.
    #[error("refused URL without a host")]
    NoHost,
    /// The host is `localhost` or a name under `.localhost`, and the operator override
    /// (`--allow-private-targets`) is off.
    #[error("refused host {0}: local-only name{PRIVATE_OVERRIDE_HINT}")]
    LocalName(String),
    /// A local-only name resolved to an address that is not loopback: with the override,
    /// `localhost` and names under `.localhost` must resolve to loopback only.
    #[error("refused host {host}: a local-only name must resolve to loopback only, not {address}")]
    LocalNotLoopback {
        /// The host name that was looked up.
        host: String,
        /// The first answer that is not loopback.
        address: IpAddr,
    },
    /// The host name ends in a numeric label: it is an address in disguise, not a name.
    #[error("refused host {0}: numeric host name that is not a valid address")]
    NumericName(String),
    /// `allowed_hosts` is set and does not admit the host.
    #[error("refused host {0}: not in allowed_hosts")]
    NotAllowed(String),
}

impl Blocked {
    /// The refused address, when the refusal is about an address.
    pub fn address(&self) -> Option<IpAddr> {
        match self {
            Blocked::Address(refusal) | Blocked::Resolved { refusal, .. } => Some(refusal.address),
            Blocked::LocalNotLoopback { address, .. } => Some(*address),
            _ => None,
        }
    }
}

/// Whether `addr` is loopback or private (reachable only under [`PolicyMode::AllowPrivate`]):
/// an address whose traffic never crosses the public internet.
pub fn is_private_or_loopback(addr: IpAddr) -> bool {
    is_allowed(addr, PolicyMode::Public).is_err()
        && is_allowed(addr, PolicyMode::AllowPrivate).is_ok()
}

/// Decides whether `addr` may be contacted under `mode`.
pub fn is_allowed(addr: IpAddr, mode: PolicyMode) -> Result<(), Blocked> {
    let refusal = match addr {
        IpAddr::V4(v4) => judge_v4(v4, mode),
        IpAddr::V6(v6) => judge_v6(v6, mode),
    };
    match refusal {
        Some(refusal) => Err(Blocked::Address(refusal)),
        None => Ok(()),
    }
}

fn judge_v4(addr: Ipv4Addr, mode: PolicyMode) -> Option<AddressRefusal> {
    let rule = IPV4_RULES.iter().find(|rule| rule.net.contains(&addr))?;
    if mode.permits(rule.class) {
        return None;
    }
    Some(AddressRefusal {
        address: IpAddr::V4(addr),
        embedded: None,
        range: IpNet::V4(rule.net),
        label: rule.label,
        operator_may_allow: PolicyMode::AllowPrivate.permits(rule.class),
    })
}

fn judge_v6(addr: Ipv6Addr, mode: PolicyMode) -> Option<AddressRefusal> {
    let refuse = |net: Ipv6Net, label, class: Class| AddressRefusal {
        address: IpAddr::V6(addr),
        embedded: None,
        range: IpNet::V6(net),
        label,
        operator_may_allow: PolicyMode::AllowPrivate.permits(class),
    };
    let carried = |v4: Ipv4Addr| {
        judge_v4(v4, mode).map(|inner| AddressRefusal {
            address: IpAddr::V6(addr),
            embedded: Some(v4),
            ..inner
        })
    };

    if let Some(rule) = IPV6_RULES
        .iter()
        .take(2)
        .find(|rule| rule.net.contains(&addr))
    {
        // `::` and `::1` sit inside the IPv4-compatible block but are not IPv4 forms.
        return (!mode.permits(rule.class)).then(|| refuse(rule.net, rule.label, rule.class));
    }
    if IPV4_MAPPED.contains(&addr) || NAT64.contains(&addr) {
        return carried(low_ipv4(addr));
    }
    // The deprecated forms stay refused whatever they carry, override or not.
    let deprecated = |refusal: AddressRefusal| AddressRefusal {
        operator_may_allow: false,
        ..refusal
    };
    if IPV4_COMPATIBLE.contains(&addr) {
        return carried(low_ipv4(addr)).map(deprecated).or_else(|| {
            Some(refuse(
                IPV4_COMPATIBLE,
                "IPv4-compatible (deprecated)",
                Class::Reserved,
            ))
        });
    }
    if SIX_TO_FOUR.contains(&addr) {
        return carried(six_to_four_ipv4(addr))
            .map(deprecated)
            .or_else(|| Some(refuse(SIX_TO_FOUR, "6to4 (deprecated)", Class::Reserved)));
    }
    if let Some(rule) = IPV6_RULES.iter().find(|rule| rule.net.contains(&addr)) {
        return (!mode.permits(rule.class)).then(|| refuse(rule.net, rule.label, rule.class));
    }
    if !GLOBAL_UNICAST.contains(&addr) {
        let block = Ipv6Net::new(addr, 8)
            .map(|net| net.trunc())
            .unwrap_or(GLOBAL_UNICAST);
        return Some(refuse(
            block,
            "unassigned (outside global unicast 2000::/3)",
            Class::Reserved,
        ));
    }
    None
}

/// The IPv4 address in the last 32 bits (IPv4-mapped, IPv4-compatible, NAT64 /96).
fn low_ipv4(addr: Ipv6Addr) -> Ipv4Addr {
    let [.., a, b, c, d] = addr.octets();
    Ipv4Addr::new(a, b, c, d)
}

/// The IPv4 address in bits 16..48 of a 6to4 address.
fn six_to_four_ipv4(addr: Ipv6Addr) -> Ipv4Addr {
    let [_, _, a, b, c, d, ..] = addr.octets();
    Ipv4Addr::new(a, b, c, d)
}

/// Decides whether `url` may be requested: scheme, credentials, local names, literal
/// addresses (judged by `mode`) and the optional allow-list. Host names that pass still have
/// their addresses judged when they are resolved.
///
/// `allowed_hosts` narrows the reachable set when it is not empty: an entry admits that host
/// and every name under it. It never admits an address the policy refuses.
pub fn check_url(url: &Url, mode: PolicyMode, allowed_hosts: &[String]) -> Result<(), Blocked> {
    let scheme = url.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(Blocked::Scheme(scheme.to_string()));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Blocked::Credentials);
    }
    let host = url.host().ok_or(Blocked::NoHost)?;
    match &host {
        Host::Ipv4(addr) => is_allowed(IpAddr::V4(*addr), mode)?,
        Host::Ipv6(addr) => is_allowed(IpAddr::V6(*addr), mode)?,
        Host::Domain(name) => check_name(name, mode)?,
    }
    if !allowed_hosts.is_empty() && !allowed_hosts.iter().any(|entry| admits(entry, &host)) {
        return Err(Blocked::NotAllowed(host.to_string()));
    }
    Ok(())
}

/// Refuses host names that are addresses in disguise, and local-only names unless the
/// operator override is on (then their answers must all be loopback, see
/// [`check_local_answers`]).
pub(crate) fn check_name(name: &str, mode: PolicyMode) -> Result<(), Blocked> {
    let trimmed = normalize_name(name);
    if trimmed.is_empty() {
        return Err(Blocked::NoHost);
    }
    if is_local_name(name) && mode != PolicyMode::AllowPrivate {
        return Err(Blocked::LocalName(name.to_string()));
    }
    let last_label = trimmed.rsplit('.').next().unwrap_or_default();
    if looks_numeric(last_label) {
        return Err(Blocked::NumericName(name.to_string()));
    }
    Ok(())
}

/// True for `localhost` and names under `.localhost` (RFC 6761: they are loopback names).
pub(crate) fn is_local_name(name: &str) -> bool {
    let trimmed = normalize_name(name);
    trimmed == "localhost" || trimmed.ends_with(".localhost")
}

/// A local-only name may be used (with the override) only when every answer is loopback; a
/// `localhost` that resolves elsewhere is a misconfigured or hostile resolver.
pub(crate) fn check_local_answers(name: &str, answers: &[IpAddr]) -> Result<(), Blocked> {
    if !is_local_name(name) {
        return Ok(());
    }
    match answers.iter().find(|addr| !is_loopback(**addr)) {
        Some(address) => Err(Blocked::LocalNotLoopback {
            host: name.to_string(),
            address: *address,
        }),
        None => Ok(()),
    }
}

/// `127.0.0.0/8`, `::1`, and IPv4-mapped forms of the former.
fn is_loopback(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => v4.is_loopback(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// Lower-case without trailing dots: the form names are compared in.
fn normalize_name(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// A label that an address parser (such as `inet_aton`) could read as a number.
fn looks_numeric(label: &str) -> bool {
    let hex = label
        .strip_prefix("0x")
        .or_else(|| label.strip_prefix("0X"))
        .map(|rest| rest.chars().all(|c| c.is_ascii_hexdigit()));
    hex.unwrap_or(false) || (!label.is_empty() && label.chars().all(|c| c.is_ascii_digit()))
}

/// Whether one `allowed_hosts` entry admits `host`. Entries are parsed like URL hosts, so
/// case, trailing dots and internationalized names compare as the URL does.
fn admits(entry: &str, host: &Host<&str>) -> bool {
    let entry = entry.trim().trim_end_matches('.');
    let entry = entry.strip_prefix("*.").unwrap_or(entry);
    let Ok(parsed) = Host::parse(entry) else {
        return false;
    };
    match (parsed, host) {
        (Host::Ipv4(allowed), Host::Ipv4(actual)) => allowed == *actual,
        (Host::Ipv6(allowed), Host::Ipv6(actual)) => allowed == *actual,
        (Host::Domain(allowed), Host::Domain(actual)) => {
            let actual = normalize_name(actual);
            !allowed.is_empty()
                && (actual == allowed
                    || actual
                        .strip_suffix(allowed.as_str())
                        .is_some_and(|head| head.ends_with('.')))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: bool = false;
    const A: bool = true;

    /// (address, allowed in Public mode, allowed in AllowPrivate mode)
    const ADDRESSES: &[(&str, bool, bool)] = &[
        // 0.0.0.0/8 and its neighbour
        ("0.0.0.0", B, B),
        ("0.255.255.255", B, B),
        ("1.0.0.0", A, A),
        // 10/8
        ("9.255.255.255", A, A),
        ("10.0.0.0", B, A),
        ("10.255.255.255", B, A),
        ("11.0.0.0", A, A),
        // 100.64/10
        ("100.63.255.255", A, A),
        ("100.64.0.0", B, A),
        ("100.127.255.255", B, A),
        ("100.128.0.0", A, A),
        ("100.100.100.200", B, B),
        // 127/8
        ("126.255.255.255", A, A),
        ("127.0.0.0", B, A),
        ("127.0.0.1", B, A),
        ("127.255.255.255", B, A),
        ("128.0.0.0", A, A),
        // 169.254/16 and the metadata address
        ("169.253.255.255", A, A),
        ("169.254.0.0", B, B),
        ("169.254.169.254", B, B),
        ("169.254.255.255", B, B),
        ("169.255.0.0", A, A),
        // 172.16/12
        ("172.15.255.255", A, A),
        ("172.16.0.0", B, A),
        ("172.31.255.255", B, A),
        ("172.32.0.0", A, A),
        // 192.0.0/24, TEST-NET-1, 6to4 relay
        ("192.0.0.0", B, B),
        ("192.0.0.255", B, B),
        ("192.0.1.0", A, A),
        ("192.0.2.0", B, B),
        ("192.0.2.255", B, B),
        ("192.0.3.0", A, A),
        ("192.88.99.1", B, B),
        // 192.168/16
        ("192.167.255.255", A, A),
        ("192.168.0.0", B, A),
        ("192.168.255.255", B, A),
        ("192.169.0.0", A, A),
        // benchmarking 198.18/15
        ("198.17.255.255", A, A),
        ("198.18.0.0", B, B),
        ("198.19.255.255", B, B),
        ("198.20.0.0", A, A),
        // TEST-NET-2 and -3
        ("198.51.100.0", B, B),
        ("198.51.100.255", B, B),
        ("203.0.113.0", B, B),
        ("203.0.113.255", B, B),
        ("203.0.114.0", A, A),
        // multicast, 240/4, broadcast
        ("223.255.255.255", A, A),
        ("224.0.0.0", B, B),
        ("239.255.255.255", B, B),
        ("240.0.0.0", B, B),
        ("255.255.255.254", B, B),
        ("255.255.255.255", B, B),
        // public IPv4
        ("8.8.8.8", A, A),
        ("93.184.216.34", A, A),
        // IPv6 unspecified, loopback, IPv4-compatible
        ("::", B, B),
        ("::1", B, A),
        ("::2", B, B),
        ("::127.0.0.1", B, B),
        ("::8.8.8.8", B, B),
        // IPv4-mapped: judged by the carried address
        ("::ffff:0.0.0.0", B, B),
        ("::ffff:127.0.0.1", B, A),
        ("::ffff:10.0.0.1", B, A),
        ("::ffff:169.254.169.254", B, B),
        ("::ffff:8.8.8.8", A, A),
        // NAT64 well-known prefix: judged by the carried address; local-use prefix refused
        ("64:ff9b::8.8.8.8", A, A),
        ("64:ff9b::127.0.0.1", B, A),
        ("64:ff9b::169.254.169.254", B, B),
        ("64:ff9b::10.0.0.1", B, A),
        ("64:ff9b:1::1", B, B),
        ("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", B, B),
        // 6to4: carried address judged first, the form itself is refused
        ("2002:7f00:1::1", B, B),
        ("2002:a9fe:a9fe::1", B, B),
        ("2002:808:808::1", B, B),
        // discard-only
        ("100::", B, B),
        ("100::ffff:ffff:ffff:ffff", B, B),
        // 2001::/23 with Teredo, benchmarking, ORCHID
        ("2001::", B, B),
        ("2001:0:ffff:ffff:ffff:ffff:ffff:ffff", B, B),
        ("2001:2::1", B, B),
        ("2001:10::1", B, B),
        ("2001:20::1", B, B),
        ("2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", B, B),
        ("2001:200::", A, A),
        // documentation
        ("2001:db8::", B, B),
        ("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", B, B),
        ("2001:db9::", A, A),
        ("3fff::", B, B),
        ("3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", B, B),
        ("3fff:1000::", A, A),
        ("5f00::1", B, B),
        // ULA and the AWS metadata address inside it
        ("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B, B),
        ("fc00::", B, A),
        ("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B, A),
        ("fd00:ec2::254", B, B),
        // link-local, site-local, multicast
        ("fe80::", B, B),
        ("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B, B),
        ("fec0::1", B, B),
        ("feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B, B),
        ("ff00::", B, B),
        ("ff02::1", B, B),
        ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B, B),
        // outside 2000::/3
        ("4000::1", B, B),
        ("1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B, B),
        // public IPv6
        ("2000::", A, A),
        ("2606:4700:4700::1111", A, A),
        ("2a00:1450:4001::1", A, A),
        ("3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", A, A),
    ];

    #[test]
    fn address_table() {
        let mut failures = Vec::new();
        for &(text, public, private) in ADDRESSES {
            let addr: IpAddr = text.parse().unwrap();
            for (mode, expected) in [
                (PolicyMode::Public, public),
                (PolicyMode::AllowPrivate, private),
            ] {
                let verdict = is_allowed(addr, mode);
                if verdict.is_ok() != expected {
                    failures.push(format!(
                        "{text} in {mode:?}: expected allowed={expected}, got {verdict:?}"
                    ));
                }
                if let Err(blocked) = verdict {
                    assert_eq!(blocked.address(), Some(addr));
                    let message = blocked.to_string();
                    assert!(message.contains(&addr.to_string()), "{message}");
                    // Exactly the refusals the override lifts name it, flag and variable.
                    let names_override = message.contains("--allow-private-targets")
                        && message.contains("LEDGER_ALLOW_PRIVATE_TARGETS=1");
                    if names_override != (mode == PolicyMode::Public && private) {
                        failures.push(format!("{text} in {mode:?}: hint wrong in {message:?}"));
                    }
                }
            }
        }
        assert!(ADDRESSES.len() >= 60);
        assert!(failures.is_empty(), "{failures:#?}");
    }

    #[test]
    fn refusal_names_the_carried_address_and_range() {
        let addr: IpAddr = "::ffff:169.254.169.254".parse().unwrap();
        let text = is_allowed(addr, PolicyMode::AllowPrivate)
            .unwrap_err()
            .to_string();
        assert!(text.contains("169.254.169.254"), "{text}");
        assert!(text.contains("cloud metadata"), "{text}");
        assert!(text.contains("169.254.169.254/32"), "{text}");
    }

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Verdict {
        Ok,
        Address(&'static str),
        Scheme,
        Credentials,
        Local,
        Numeric,
        /// The URL does not even parse.
        Unparsable,
    }

    fn verdict(input: &str, mode: PolicyMode, allowed: &[String]) -> Verdict {
        let Ok(url) = Url::parse(input) else {
            return Verdict::Unparsable;
        };
        match check_url(&url, mode, allowed) {
            Ok(()) => Verdict::Ok,
            Err(Blocked::Address(refusal)) => Verdict::Address(leak(refusal.address.to_string())),
            Err(Blocked::Scheme(_)) => Verdict::Scheme,
            Err(Blocked::Credentials) => Verdict::Credentials,
            Err(Blocked::LocalName(_)) => Verdict::Local,
            Err(Blocked::NumericName(_)) => Verdict::Numeric,
            Err(other) => panic!("unexpected refusal for {input}: {other}"),
        }
    }

    fn leak(text: String) -> &'static str {
        Box::leak(text.into_boxed_str())
    }

    const URLS: &[(&str, Verdict)] = &[
        // numeric spellings of loopback
        ("http://2130706433/", Verdict::Address("127.0.0.1")),
        ("http://0x7f.1/", Verdict::Address("127.0.0.1")),
        ("http://017700000001/", Verdict::Address("127.0.0.1")),
        ("http://0177.0.0.1/", Verdict::Address("127.0.0.1")),
        ("http://0x7f000001/", Verdict::Address("127.0.0.1")),
        ("http://127.1/", Verdict::Address("127.0.0.1")),
        ("http://127.0.0.1./", Verdict::Address("127.0.0.1")),
        ("http://127.0.0.1:8080/mcp", Verdict::Address("127.0.0.1")),
        (
            "http://[::ffff:7f00:1]/",
            Verdict::Address("::ffff:127.0.0.1"),
        ),
        (
            "http://[::ffff:127.0.0.1]/",
            Verdict::Address("::ffff:127.0.0.1"),
        ),
        ("http://[::1]:3000/", Verdict::Address("::1")),
        ("http://[0:0:0:0:0:0:0:1]/", Verdict::Address("::1")),
        ("http://[::]/", Verdict::Address("::")),
        ("http://0.0.0.0/", Verdict::Address("0.0.0.0")),
        ("http://0/", Verdict::Address("0.0.0.0")),
        // metadata and private
        (
            "http://169.254.169.254/latest/meta-data/",
            Verdict::Address("169.254.169.254"),
        ),
        ("http://2852039166/", Verdict::Address("169.254.169.254")),
        (
            "http://0xa9.0xfe.0xa9.0xfe/",
            Verdict::Address("169.254.169.254"),
        ),
        (
            "http://[::ffff:a9fe:a9fe]/",
            Verdict::Address("::ffff:169.254.169.254"),
        ),
        ("http://[fd00:ec2::254]/", Verdict::Address("fd00:ec2::254")),
        ("http://10.0.0.5:8080/mcp", Verdict::Address("10.0.0.5")),
        ("https://192.168.1.1/", Verdict::Address("192.168.1.1")),
        ("https://[fe80::1]/", Verdict::Address("fe80::1")),
        ("http://[fe80::1%25eth0]/", Verdict::Unparsable),
        // local names, trailing dots
        ("http://localhost/", Verdict::Local),
        ("http://localhost./", Verdict::Local),
        ("http://localhost../", Verdict::Local),
        ("http://LOCALHOST:8080/mcp", Verdict::Local),
        ("http://foo.localhost/", Verdict::Local),
        ("http://a.b.localhost./", Verdict::Local),
        // names that are numbers in disguise
        ("http://127.0.0.1../", Verdict::Numeric),
        // credentials
        ("http://user:pass@example.com/", Verdict::Credentials),
        ("http://user@example.com/", Verdict::Credentials),
        ("http://:pass@example.com/", Verdict::Credentials),
        ("https://user@8.8.8.8/", Verdict::Credentials),
        // foreign schemes
        ("ftp://example.com/", Verdict::Scheme),
        ("file:///etc/passwd", Verdict::Scheme),
        ("gopher://example.com/", Verdict::Scheme),
        ("ws://example.com/", Verdict::Scheme),
        ("data:text/plain,hello", Verdict::Scheme),
        ("javascript:alert(1)", Verdict::Scheme),
        // public targets pass
        ("https://example.com/mcp", Verdict::Ok),
        ("https://example.com./mcp", Verdict::Ok),
        ("https://mcp.example.com:8443/mcp", Verdict::Ok),
        ("http://8.8.8.8/", Verdict::Ok),
        ("https://[2606:4700:4700::1111]/", Verdict::Ok),
        ("https://[::ffff:8.8.8.8]/", Verdict::Ok),
        ("https://localhost.example.com/", Verdict::Ok),
        ("https://1password.com/", Verdict::Ok),
        ("https://api.v2.example/", Verdict::Ok),
    ];

    #[test]
    fn url_table_in_public_mode() {
        let mut failures = Vec::new();
        for &(input, expected) in URLS {
            let got = verdict(input, PolicyMode::Public, &[]);
            if got != expected {
                failures.push(format!("{input}: expected {expected:?}, got {got:?}"));
            }
        }
        assert!(failures.is_empty(), "{failures:#?}");
    }

    #[test]
    fn override_admits_private_but_not_metadata_or_local_names() {
        let cases = [
            ("http://127.0.0.1:3000/mcp", Verdict::Ok),
            ("http://[::1]:3000/mcp", Verdict::Ok),
            ("http://10.1.2.3/", Verdict::Ok),
            ("http://[fd12::1]/", Verdict::Ok),
            (
                "http://169.254.169.254/",
                Verdict::Address("169.254.169.254"),
            ),
            (
                "http://[::ffff:169.254.169.254]/",
                Verdict::Address("::ffff:169.254.169.254"),
            ),
            ("http://[fd00:ec2::254]/", Verdict::Address("fd00:ec2::254")),
            (
                "http://100.100.100.200/",
                Verdict::Address("100.100.100.200"),
            ),
            ("http://224.0.0.1/", Verdict::Address("224.0.0.1")),
            // With the override, the name goes to the pinned resolver, which requires loopback.
            ("http://localhost/", Verdict::Ok),
            ("http://app.localhost:3000/mcp", Verdict::Ok),
        ];
        for (input, expected) in cases {
            assert_eq!(
                verdict(input, PolicyMode::AllowPrivate, &[]),
                expected,
                "{input}"
            );
        }
    }

    #[test]
    fn allowed_hosts_only_narrow() {
        let list = |entries: &[&str]| entries.iter().map(|e| e.to_string()).collect::<Vec<_>>();
        let cases: &[(&str, &[&str], bool)] = &[
            ("https://example.com/", &[], true),
            ("https://example.com/", &["example.com"], true),
            ("https://api.example.com/mcp", &["example.com"], true),
            ("https://EXAMPLE.com./", &["example.com"], true),
            ("https://example.com/", &["Example.COM."], true),
            ("https://a.example.com/", &["*.example.com"], true),
            ("https://badexample.com/", &["example.com"], false),
            ("https://example.com.evil.net/", &["example.com"], false),
            ("https://other.org/", &["example.com"], false),
            ("https://example.com/", &["api.example.com"], false),
            ("https://example.com/", &[""], false),
            ("https://8.8.8.8/", &["example.com"], false),
            ("https://8.8.8.8/", &["8.8.8.8"], true),
            ("http://127.0.0.1/", &["127.0.0.1"], false),
            ("http://localhost/", &["localhost"], false),
            ("https://bücher.example/", &["xn--bcher-kva.example"], true),
            ("https://xn--bcher-kva.example/", &["bücher.example"], true),
        ];
        for &(input, entries, expected) in cases {
            let url = Url::parse(input).unwrap();
            let result = check_url(&url, PolicyMode::Public, &list(entries));
            assert_eq!(
                result.is_ok(),
                expected,
                "{input} with {entries:?}: {result:?}"
            );
        }
    }

    #[test]
    fn messages_say_what_was_refused_and_why() {
        let literal = is_allowed("127.0.0.1".parse().unwrap(), PolicyMode::Public).unwrap_err();
        assert_eq!(
            literal.to_string(),
            "refused address 127.0.0.1, which is in loopback space 127.0.0.0/8 (reachable only \
             with --allow-private-targets or LEDGER_ALLOW_PRIVATE_TARGETS=1, outside the Apify \
             platform)"
        );
        let Blocked::Address(refusal) =
            is_allowed("10.0.0.5".parse().unwrap(), PolicyMode::Public).unwrap_err()
        else {
            panic!("expected an address refusal");
        };
        let resolved = Blocked::Resolved {
            host: "db.example".into(),
            refusal,
        };
        assert_eq!(
            resolved.to_string(),
            "refused host db.example: it resolves to 10.0.0.5, which is in private (RFC 1918) \
             space 10.0.0.0/8 (reachable only with --allow-private-targets or \
             LEDGER_ALLOW_PRIVATE_TARGETS=1, outside the Apify platform)"
        );
        let metadata =
            is_allowed("169.254.169.254".parse().unwrap(), PolicyMode::Public).unwrap_err();
        assert!(
            !metadata.to_string().contains("--allow-private-targets"),
            "the override does not lift cloud metadata: {metadata}"
        );
    }

    #[test]
    fn not_allowed_message_names_the_host() {
        let url = Url::parse("https://other.org/mcp").unwrap();
        let err = check_url(&url, PolicyMode::Public, &["example.com".to_string()]).unwrap_err();
        assert_eq!(err, Blocked::NotAllowed("other.org".to_string()));
        assert!(err.to_string().contains("other.org"));
        assert!(err.to_string().contains("allowed_hosts"));
    }
}
