//! Who may talk to the live server (docs/live.md "Security"): an HTTP request or WebSocket
//! upgrade is served only when its `Host` is the server's own address (DNS rebinding names
//! another host) and its `Origin`, if it has one, is the server's own page or listed in
//! `[live] allow_origins` (cross-site WebSocket hijacking comes from another origin). The
//! access token (`[live] token`) guards set/release/pause/reset on every protocol.

use std::net::SocketAddr;

/// The origin and host policy of a server bound at one address.
#[derive(Debug, Clone)]
pub struct Policy {
    bound: SocketAddr,
    allow_origins: Vec<String>,
    /// The access token, if any.
    pub token: Option<String>,
}

impl Policy {
    /// The policy of a server bound at `bound` (its port, its address).
    pub fn new(bound: SocketAddr, allow_origins: &[String], token: Option<String>) -> Self {
        let allow_origins = allow_origins.iter().map(|o| o.trim_end_matches('/').to_ascii_lowercase()).collect();
        Self { bound, allow_origins, token }
    }

    /// Whether `host` (a `Host` header: `name:port` or `[v6]:port`) names this server: an IP
    /// literal of this server (any, when bound to every interface) or `localhost` with its port,
    /// or the host of an allowed origin.
    pub fn host_ok(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        if self.allow_origins.iter().any(|o| o.split_once("://").is_some_and(|(_, h)| h == host)) {
            return true;
        }
        let port = self.bound.port();
        if let Ok(a) = host.parse::<SocketAddr>() {
            let ip = a.ip();
            return a.port() == port
                && (self.bound.ip().is_unspecified()
                    || ip == self.bound.ip()
                    || (ip.is_loopback() && self.bound.ip().is_loopback()));
        }
        host == format!("localhost:{port}") && (self.bound.ip().is_loopback() || self.bound.ip().is_unspecified())
    }

    /// Whether a request with these `Host` and `Origin` headers may be served.
    pub fn request_ok(&self, host: Option<&str>, origin: Option<&str>) -> Result<(), String> {
        let Some(host) = host else { return Err("no Host header".into()) };
        if !self.host_ok(host) {
            return Err(format!(
                "Host {host:?} is not this server's address (DNS rebinding?); list its origin in [live] allow_origins"
            ));
        }
        let Some(origin) = origin else { return Ok(()) };
        let o = origin.trim().trim_end_matches('/').to_ascii_lowercase();
        if self.allow_origins.contains(&o) {
            return Ok(());
        }
        match o.strip_prefix("http://") {
            Some(h) if self.host_ok(h) => Ok(()),
            _ => Err(format!("Origin {origin:?} is not this server's page; list it in [live] allow_origins")),
        }
    }
}

/// Whether binding `addr` serves beyond this machine.
pub fn beyond_loopback(addr: SocketAddr) -> bool {
    !addr.ip().is_loopback()
}

/// A random access token: 128 bits from the OS, in hex.
pub fn random_token() -> std::io::Result<String> {
    use std::io::Read;
    let mut b = [0u8; 16];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// Checks a token from `[live] token`: 8 to 128 characters of `A-Z a-z 0-9 - _ .` (it goes
/// into a URL as it is).
pub fn check_token(t: &str) -> Result<(), String> {
    if (8..=128).contains(&t.len()) && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)) {
        Ok(())
    } else {
        Err(format!("{t:?} is not a token: 8 to 128 characters of A-Z, a-z, 0-9, '-', '_', '.'"))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn own_host_and_origin_pass_and_foreign_ones_do_not() {
        let p = Policy::new("127.0.0.1:8033".parse().unwrap(), &["http://hmi.example:9000".into()], None);
        assert!(p.request_ok(Some("127.0.0.1:8033"), None).is_ok());
        assert!(p.request_ok(Some("localhost:8033"), Some("http://localhost:8033")).is_ok());
        assert!(p.request_ok(Some("127.0.0.1:8033"), Some("http://127.0.0.1:8033")).is_ok());
        assert!(p.request_ok(Some("127.0.0.1:8033"), Some("http://hmi.example:9000")).is_ok());
        assert!(p.request_ok(Some("127.0.0.1:8033"), Some("http://evil.example.com")).is_err());
        assert!(p.request_ok(Some("127.0.0.1:8033"), Some("null")).is_err());
        assert!(p.request_ok(Some("evil.example.com:8033"), None).is_err());
        assert!(p.request_ok(Some("127.0.0.1:8034"), None).is_err());
        assert!(p.request_ok(None, None).is_err());
        let any = Policy::new("0.0.0.0:8033".parse().unwrap(), &[], None);
        assert!(any.request_ok(Some("192.168.1.7:8033"), Some("http://192.168.1.7:8033")).is_ok());
        assert!(any.request_ok(Some("crane.example:8033"), None).is_err());
    }

    #[test]
    fn tokens_are_checked() {
        assert!(check_token("abcdefgh").is_ok());
        assert!(check_token("short").is_err());
        assert!(check_token("has space in it").is_err());
        assert_eq!(random_token().unwrap().len(), 32);
    }
}
