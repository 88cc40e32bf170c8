//! The origin of a request: the client's address and country (docs/API.md, `ipAddress` and
//! `country`).
//!
//! The address is the TCP peer's, unless the peer is a trusted proxy (`SLUICE_TRUSTED_PROXIES`):
//! then the forwarding headers are read from the right, past every trusted hop, and the first
//! untrusted hop is the client. Taking the right-most untrusted hop, not the left-most, is what
//! keeps a client from choosing its own address: every hop left of it was written by someone
//! we do not trust. `Forwarded` (RFC 7239) is read when present, else `X-Forwarded-For`.
//!
//! The country is `CF-IPCountry` when a trusted proxy sent it, else a MaxMind-format country
//! database's answer for the address (`SLUICE_GEOIP_DB`), else absent.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;

use actix_web::http::header::HeaderMap;
use ipnetwork::IpNetwork;
use maxminddb::Reader;

/// What the request says about its sender.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    /// The client's address, canonical (an IPv4-mapped IPv6 address is written as IPv4).
    pub ip: Option<IpAddr>,
    /// ISO 3166-1 alpha-2, upper case.
    pub country: Option<String>,
}

/// Why the client settings were refused at start.
#[derive(Debug, thiserror::Error)]
pub enum OriginConfigError {
    /// An entry of `SLUICE_TRUSTED_PROXIES` is not an address or CIDR block.
    #[error("SLUICE_TRUSTED_PROXIES: {0:?} is not an IP address or CIDR block")]
    Proxy(String),
    /// The GeoIP database cannot be opened.
    #[error("SLUICE_GEOIP_DB: cannot open {path}: {reason}")]
    GeoIp {
        /// The file named.
        path: String,
        /// What went wrong.
        reason: String,
    },
}

/// Resolves [`Origin`]s: the trusted proxies and the country database, shared by every worker.
#[derive(Default)]
pub struct OriginResolver {
    trusted: Vec<IpNetwork>,
    countries: Option<Reader<Vec<u8>>>,
}

impl std::fmt::Debug for OriginResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OriginResolver")
            .field("trusted", &self.trusted)
            .field("countries", &self.countries.is_some())
            .finish()
    }
}

/// Parses a list of addresses and CIDR blocks, separated by commas or white space
/// (`10.0.0.0/8, 192.168.1.7 ::1`). A bare address is a block of one.
pub fn parse_trusted_proxies(list: &str) -> Result<Vec<IpNetwork>, OriginConfigError> {
    list.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|entry| !entry.is_empty())
        .map(|entry| entry.parse::<IpNetwork>().map_err(|_| OriginConfigError::Proxy(entry.to_owned())))
        .collect()
}

/// Opens a MaxMind-format database (GeoLite2-Country, GeoIP2-Country or anything with a
/// `country.iso_code`), read into memory once.
pub fn open_country_database(path: &Path) -> Result<Reader<Vec<u8>>, OriginConfigError> {
    Reader::open_readfile(path)
        .map_err(|error| OriginConfigError::GeoIp { path: path.display().to_string(), reason: error.to_string() })
}

impl OriginResolver {
    /// A resolver trusting `trusted` and looking countries up in `countries`.
    pub fn new(trusted: Vec<IpNetwork>, countries: Option<Reader<Vec<u8>>>) -> Self {
        Self { trusted, countries }
    }

    fn is_trusted(&self, address: IpAddr) -> bool {
        self.trusted.iter().any(|network| network.contains(address))
    }

    /// Whether a request from `peer` came over TLS: `X-Forwarded-Proto: https` from a trusted
    /// proxy (the server itself speaks plain HTTP).
    pub fn is_https(&self, peer: Option<SocketAddr>, headers: &HeaderMap) -> bool {
        let trusted = peer.is_some_and(|peer| self.is_trusted(peer.ip().to_canonical()));
        trusted
            && headers
                .get("x-forwarded-proto")
                .and_then(|value| value.to_str().ok())
                .is_some_and(|value| value.trim().eq_ignore_ascii_case("https"))
    }

    /// The client of a request from `peer` with these headers.
    pub fn resolve(&self, peer: Option<SocketAddr>, headers: &HeaderMap) -> Origin {
        let Some(peer) = peer.map(|peer| peer.ip().to_canonical()) else { return Origin::default() };
        if !self.is_trusted(peer) {
            return Origin { ip: Some(peer), country: self.country_of(peer) };
        }
        let ip = self.forwarded_client(headers).unwrap_or(peer);
        let country = cloudflare_country(headers).or_else(|| self.country_of(ip));
        Origin { ip: Some(ip), country }
    }

    /// The right-most untrusted hop of the forwarding chain (the left-most hop when all are
    /// trusted); `None` without a chain. A hop that is not an address (`unknown`, an
    /// obfuscated name) ends the walk at the hop before it, the nearest one we can name.
    fn forwarded_client(&self, headers: &HeaderMap) -> Option<IpAddr> {
        let chain = forwarded_chain(headers);
        let mut nearest = None;
        for hop in chain.iter().rev() {
            let Some(address) = hop else { return nearest };
            if !self.is_trusted(*address) {
                return Some(*address);
            }
            nearest = Some(*address);
        }
        nearest
    }

    fn country_of(&self, address: IpAddr) -> Option<String> {
        let reader = self.countries.as_ref()?;
        let found: maxminddb::geoip2::Country<'_> = reader.lookup(address).ok()?.decode().ok()??;
        found.country.iso_code.and_then(country_code)
    }
}

/// `CF-IPCountry`, when it names a country (`XX`, unknown, and `T1`, Tor, do not).
fn cloudflare_country(headers: &HeaderMap) -> Option<String> {
    let value = headers.get("cf-ipcountry")?.to_str().ok()?.trim();
    if value.eq_ignore_ascii_case("XX") || value.eq_ignore_ascii_case("T1") {
        return None;
    }
    country_code(value)
}

/// Two ASCII letters, upper-cased; anything else is no country.
fn country_code(text: &str) -> Option<String> {
    (text.len() == 2 && text.bytes().all(|byte| byte.is_ascii_alphabetic())).then(|| text.to_ascii_uppercase())
}

/// The hops of `Forwarded` (its `for=` parameters), else of `X-Forwarded-For`, left to right,
/// across every line of the header; `None` for a hop that is not an address.
fn forwarded_chain(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let forwarded: Vec<&str> = headers.get_all("forwarded").filter_map(|value| value.to_str().ok()).collect();
    if !forwarded.is_empty() {
        return forwarded
            .iter()
            .flat_map(|line| line.split(','))
            .filter_map(|element| {
                element.split(';').find_map(|pair| {
                    let (name, value) = pair.split_once('=')?;
                    name.trim().eq_ignore_ascii_case("for").then(|| node_address(value))
                })
            })
            .collect();
    }
    headers
        .get_all("x-forwarded-for")
        .filter_map(|value| value.to_str().ok())
        .flat_map(|line| line.split(','))
        .map(str::trim)
        .filter(|hop| !hop.is_empty())
        .map(node_address)
        .collect()
}

/// The address of one hop: `192.0.2.1`, `192.0.2.1:4711`, `2001:db8::1`, `[2001:db8::1]`,
/// `"[2001:db8::1]:4711"` (quoted, as `Forwarded` writes IPv6 and ports).
fn node_address(hop: &str) -> Option<IpAddr> {
    let hop = hop.trim().trim_matches('"');
    if let Some(rest) = hop.strip_prefix('[') {
        return rest.split_once(']')?.0.parse::<IpAddr>().ok().map(|address| address.to_canonical());
    }
    hop.parse::<IpAddr>()
        .or_else(|_| hop.parse::<SocketAddr>().map(|socket| socket.ip()))
        .ok()
        .map(|address| address.to_canonical())
}

#[cfg(test)]
mod tests {
    use actix_web::http::header::{HeaderName, HeaderValue};

    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).expect("name"),
                HeaderValue::from_str(value).expect("value"),
            );
        }
        map
    }

    fn resolver(trusted: &str) -> OriginResolver {
        OriginResolver::new(parse_trusted_proxies(trusted).expect("proxies"), None)
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().expect("address")
    }

    fn peer(text: &str) -> Option<SocketAddr> {
        Some(SocketAddr::new(ip(text), 40_000))
    }

    #[test]
    fn an_untrusted_peer_is_the_client_whatever_it_says() {
        let resolver = resolver("10.0.0.0/8");
        let spoofed = headers(&[("x-forwarded-for", "1.2.3.4"), ("forwarded", "for=5.6.7.8"), ("cf-ipcountry", "US")]);
        let client = resolver.resolve(peer("198.51.100.9"), &spoofed);
        assert_eq!(client, Origin { ip: Some(ip("198.51.100.9")), country: None });
    }

    #[test]
    fn behind_trusted_proxies_the_right_most_untrusted_hop_is_the_client() {
        let resolver = resolver("10.0.0.0/8, 192.168.1.7");
        // The client wrote "1.1.1.1" itself; 203.0.113.5 connected to our first proxy.
        let chain = headers(&[("x-forwarded-for", "1.1.1.1, 203.0.113.5, 10.1.2.3")]);
        assert_eq!(resolver.resolve(peer("192.168.1.7"), &chain).ip, Some(ip("203.0.113.5")));
        // Several header lines are one list.
        let lines = headers(&[("x-forwarded-for", "1.1.1.1"), ("x-forwarded-for", "203.0.113.5, 10.0.0.1")]);
        assert_eq!(resolver.resolve(peer("10.9.9.9"), &lines).ip, Some(ip("203.0.113.5")));
        // Every hop trusted: the left-most.
        let internal = headers(&[("x-forwarded-for", "10.0.0.2, 10.0.0.3")]);
        assert_eq!(resolver.resolve(peer("10.0.0.4"), &internal).ip, Some(ip("10.0.0.2")));
        // No chain: the proxy itself.
        assert_eq!(resolver.resolve(peer("10.0.0.4"), &HeaderMap::new()).ip, Some(ip("10.0.0.4")));
    }

    #[test]
    fn forwarded_wins_over_x_forwarded_for_and_its_forms_parse() {
        let resolver = resolver("10.0.0.0/8");
        let both = headers(&[
            ("x-forwarded-for", "1.1.1.1"),
            ("forwarded", r#"for=192.0.2.60;proto=http;by=10.0.0.1, For="[2001:db8:cafe::17]:4711""#),
        ]);
        assert_eq!(resolver.resolve(peer("10.0.0.1"), &both).ip, Some(ip("2001:db8:cafe::17")));
        let port = headers(&[("forwarded", r#"for="192.0.2.43:47011""#)]);
        assert_eq!(resolver.resolve(peer("10.0.0.1"), &port).ip, Some(ip("192.0.2.43")));
        let mapped = headers(&[("x-forwarded-for", "::ffff:192.0.2.44")]);
        assert_eq!(resolver.resolve(peer("10.0.0.1"), &mapped).ip, Some(ip("192.0.2.44")));
        // An unnamed hop stops the walk at the nearest hop we can name.
        let unknown = headers(&[("forwarded", "for=192.0.2.1, for=unknown, for=10.0.0.5")]);
        assert_eq!(resolver.resolve(peer("10.0.0.1"), &unknown).ip, Some(ip("10.0.0.5")));
        let hidden = headers(&[("forwarded", "for=_hidden")]);
        assert_eq!(resolver.resolve(peer("10.0.0.1"), &hidden).ip, Some(ip("10.0.0.1")));
    }

    #[test]
    fn an_ipv4_mapped_peer_is_matched_as_ipv4() {
        let resolver = resolver("127.0.0.1");
        let chain = headers(&[("x-forwarded-for", "203.0.113.5")]);
        assert_eq!(resolver.resolve(peer("::ffff:127.0.0.1"), &chain).ip, Some(ip("203.0.113.5")));
    }

    #[test]
    fn cloudflare_country_counts_only_from_a_trusted_proxy() {
        let resolver = resolver("10.0.0.0/8");
        let sent = headers(&[("cf-ipcountry", "nl")]);
        assert_eq!(resolver.resolve(peer("10.0.0.1"), &sent).country.as_deref(), Some("NL"));
        assert_eq!(resolver.resolve(peer("203.0.113.1"), &sent).country, None);
        for unknown in ["XX", "T1", "NLD", "1A", ""] {
            let sent = headers(&[("cf-ipcountry", unknown)]);
            assert_eq!(resolver.resolve(peer("10.0.0.1"), &sent).country, None, "{unknown}");
        }
    }

    #[test]
    fn bad_proxy_lists_are_refused() {
        assert!(parse_trusted_proxies("").expect("empty").is_empty());
        assert_eq!(parse_trusted_proxies("10.0.0.0/8 ::1,192.168.0.1").expect("list").len(), 3);
        for bad in ["10.0.0.0/33", "localhost", "10.0.0.0/8,,nope"] {
            assert!(parse_trusted_proxies(bad).is_err(), "{bad}");
        }
    }
}
