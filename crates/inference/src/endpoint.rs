//! Telling a server on this machine or this network from a hosted API, by its URL.

use std::net::{Ipv4Addr, Ipv6Addr};

/// Whether `url`'s host is a loopback or private address: `localhost` (and `*.localhost`),
/// 127.0.0.0/8, 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 169.254.0.0/16 (link-local),
/// 100.64.0.0/10 (shared address space), `::1`, fc00::/7 (unique local), fe80::/10, and IPv4
/// addresses mapped into IPv6 in those ranges. A host name other than `localhost` is not
/// resolved: it counts as remote (say otherwise with the setting that uses this).
///
/// ```
/// use inference::is_local_endpoint;
///
/// assert!(is_local_endpoint("http://127.0.0.1:8080/v1"));
/// assert!(is_local_endpoint("http://localhost:11434/v1"));
/// assert!(is_local_endpoint("http://192.168.1.20:8000/v1"));
/// assert!(is_local_endpoint("http://[::1]:8080"));
/// assert!(!is_local_endpoint("https://api.openai.com/v1"));
/// assert!(!is_local_endpoint("https://api.anthropic.com"));
/// assert!(!is_local_endpoint("not a url"));
/// ```
pub fn is_local_endpoint(url: &str) -> bool {
    let Ok(parsed) = url::Url::parse(url) else {
        return false;
    };
    match parsed.host() {
        Some(url::Host::Domain(name)) => {
            let name = name.trim_end_matches('.').to_ascii_lowercase();
            name == "localhost" || name.ends_with(".localhost")
        }
        Some(url::Host::Ipv4(ip)) => is_private_v4(ip),
        Some(url::Host::Ipv6(ip)) => is_private_v6(ip),
        None => false,
    }
}

fn is_private_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || (a == 100 && (64..128).contains(&b))
}

fn is_private_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_loopback()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || ip.to_ipv4_mapped().is_some_and(is_private_v4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_and_loopback_hosts_are_local_public_ones_are_not() {
        for url in [
            "http://127.0.0.1:18190/v1",
            "http://127.5.4.3/v1",
            "http://10.1.2.3:8000",
            "http://172.16.0.1",
            "http://172.31.255.255",
            "http://192.168.0.10:1234/v1",
            "http://169.254.1.1",
            "http://100.64.0.1",
            "http://LOCALHOST:8080",
            "http://gpu.localhost/v1",
            "http://[::1]:8080/v1",
            "http://[fd12:3456::1]/v1",
            "http://[fe80::1]/v1",
            "http://[::ffff:192.168.1.1]/v1",
        ] {
            assert!(is_local_endpoint(url), "{url}");
        }
        for url in [
            "https://api.openai.com/v1",
            "https://api.anthropic.com",
            "http://172.32.0.1",
            "http://8.8.8.8",
            "http://100.128.0.1",
            "http://[2001:db8::1]",
            "http://localhost.example.com",
            "http://my-gpu-box:8080",
            "",
        ] {
            assert!(!is_local_endpoint(url), "{url}");
        }
    }
}
