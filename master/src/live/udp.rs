//! The live server's datagram side: UDP on the same address and port number as the TCP side,
//! one JSON message per datagram (the messages of [`super::protocol`]), each answered with one
//! datagram to its sender. For HMIs, joysticks and other simulators that send a value per
//! frame and want no connection.
//!
//! No amplification: a UDP sender's address can be forged, so a reply is never larger than
//! the datagram that caused it unless the sender proved its address, by sending back the
//! `cookie` the server gave it (a keyed hash of its address, valid for [`LEASE`] after its last
//! datagram that carried it). `{"cookie": ""}` asks for it; that datagram, and any whose reply
//! does not fit, gets the cookie (`{"cookie":"<16 hex digits>"}`, 29 bytes) if it is at least
//! as long, else nothing. A proven sender that subscribes gets the row stream (every
//! 40 ms, in datagrams of at most [`MAX_DATAGRAM`] bytes) until it unsubscribes, its proof
//! lapses, or the server stops.

use super::protocol::{handle, stream_messages, Reply, Request, Session, MAX_MESSAGE};
use super::Hub;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Largest datagram sent (bytes; an IPv4 UDP payload is at most 65,507).
pub const MAX_DATAGRAM: usize = 60_000;
/// A proof (and a subscription) lapses when its sender sent no datagram with its cookie for
/// this long.
pub const LEASE: Duration = Duration::from_secs(10);
/// Subscribers at once.
pub const MAX_SUBSCRIBERS: usize = 32;
/// Proven addresses remembered at once (the oldest proof is forgotten first).
const MAX_PROVEN: usize = 1024;

/// The server's side of the address proofs.
struct Proofs {
    key: std::collections::hash_map::RandomState,
    /// Address → when it last sent its cookie.
    proven: HashMap<SocketAddr, Instant>,
}

impl Proofs {
    /// The cookie of `addr`: SipHash of the address under a key drawn at start.
    fn cookie(&self, addr: SocketAddr) -> String {
        let mut h = self.key.build_hasher();
        h.write(addr.to_string().as_bytes());
        format!("{:016x}", h.finish())
    }

    fn proven(&self, addr: SocketAddr) -> bool {
        self.proven.get(&addr).is_some_and(|t| t.elapsed() <= LEASE)
    }

    fn prove(&mut self, addr: SocketAddr) {
        if self.proven.len() >= MAX_PROVEN && !self.proven.contains_key(&addr) {
            self.proven.retain(|_, t| t.elapsed() <= LEASE);
            if self.proven.len() >= MAX_PROVEN {
                if let Some(oldest) = self.proven.iter().min_by_key(|(_, t)| **t).map(|(a, _)| *a) {
                    self.proven.remove(&oldest);
                }
            }
        }
        self.proven.insert(addr, Instant::now());
    }
}

/// Serves `hub` on `socket` until `stop` (run on a thread of its own).
pub(super) fn serve(socket: &UdpSocket, hub: &Arc<Hub>, token: Option<&str>, stop: &AtomicBool) {
    let _ = socket.set_read_timeout(Some(Duration::from_millis(10)));
    let _ = socket.set_write_timeout(Some(Duration::from_millis(100)));
    // One byte more than the largest message: a longer datagram is seen as too long.
    let mut buf = vec![0u8; MAX_MESSAGE + 1];
    let mut subscribers: Vec<(SocketAddr, Session)> = Vec::new();
    let mut proofs = Proofs { key: std::collections::hash_map::RandomState::new(), proven: HashMap::new() };
    while !stop.load(Ordering::Relaxed) {
        // A timeout, an ICMP "port unreachable" for an earlier datagram (Linux reports it on
        // the next receive) or another transient error: go on.
        if let Ok((n, from)) = socket.recv_from(&mut buf) {
            if let Some(reply) = answer(hub, token, &mut subscribers, &mut proofs, from, &buf[..n]) {
                if socket.send_to(reply.as_bytes(), from).is_err() {
                    subscribers.retain(|(a, _)| *a != from);
                }
            }
        }
        for (addr, session) in &mut subscribers {
            if !proofs.proven(*addr) {
                session.subscribed = false;
            }
            if session.due() && send_rows(socket, hub, session, *addr).is_err() {
                session.subscribed = false;
            }
        }
        subscribers.retain(|(_, s)| s.subscribed);
    }
    // The last rows and the final status to every subscriber.
    for (addr, session) in &mut subscribers {
        let _ = send_rows(socket, hub, session, *addr);
    }
}

/// The reply to one datagram (`None`: nothing to send).
fn answer(
    hub: &Hub,
    token: Option<&str>,
    subscribers: &mut Vec<(SocketAddr, Session)>,
    proofs: &mut Proofs,
    from: SocketAddr,
    data: &[u8],
) -> Option<String> {
    let cookie = proofs.cookie(from);
    let reply = |text: String, proven: bool| fit(text, data.len(), proven, &cookie);
    let was_proven = proofs.proven(from);
    if data.len() > MAX_MESSAGE {
        return reply(Reply::error(format!("a datagram longer than {MAX_MESSAGE} bytes")).text(), was_proven);
    }
    let text = match std::str::from_utf8(data) {
        Ok(t) if t.trim().is_empty() => return None,
        Ok(t) => t,
        Err(_) => return reply(Reply::error("not UTF-8: messages are JSON objects in UTF-8 text").text(), was_proven),
    };
    let req = match Request::parse(text) {
        Ok(r) => r,
        Err(e) => return reply(Reply::error(e).text(), was_proven),
    };
    if req.cookie.as_deref() == Some("") {
        // Asking for the cookie: `{"cookie": ""}`, padded so that the answer fits.
        let c = Reply { cookie: Some(cookie.clone()), ..Reply::default() }.text();
        return (c.len() <= data.len()).then_some(c);
    }
    if let Some(c) = &req.cookie {
        if super::protocol::token_matches(c, &cookie) {
            proofs.prove(from);
        } else {
            return reply(Reply::error("wrong cookie (the server gives each address its own)").text(), was_proven);
        }
    }
    let proven = proofs.proven(from);
    if req.wants_data() && !proven && req.controls() {
        // Acting now and answering later would act twice when the sender retries with its
        // cookie: refuse the whole message instead.
        return reply(Reply::error("prove your address first: send the cookie").text(), false);
    }
    // A datagram carries its own token: a UDP "session" is an address anyone can forge.
    let k = subscribers.iter().position(|(a, _)| *a == from);
    let mut fresh = Session::new(false);
    let session = match k {
        Some(k) => &mut subscribers[k].1,
        None => &mut fresh,
    };
    session.authorized = false;
    let was = session.subscribed;
    let text = handle(hub, token, session, &req).text();
    session.authorized = false;
    if session.subscribed && !was && !proven {
        // A stream to an unproven address would be an amplifier.
        session.subscribed = false;
        return reply(Reply::error("prove your address first: send the cookie").text(), false);
    }
    if k.is_none() && fresh.subscribed {
        if subscribers.len() >= MAX_SUBSCRIBERS {
            return reply(
                Reply::error(format!("{MAX_SUBSCRIBERS} subscribers already; not subscribed")).text(),
                proven,
            );
        }
        fresh.cursor = hub.latest().0;
        subscribers.push((from, fresh));
    }
    reply(text, proven)
}

/// `text` if the sender is proven or it is no larger than the request (`len` bytes); else
/// the cookie, if that fits; else nothing.
fn fit(text: String, len: usize, proven: bool, cookie: &str) -> Option<String> {
    if proven || text.len() <= len {
        return Some(text);
    }
    let c = Reply { cookie: Some(cookie.to_owned()), ..Reply::default() }.text();
    (c.len() <= len).then_some(c)
}

/// The rows since the session's cursor, in as many datagrams as they need.
fn send_rows(socket: &UdpSocket, hub: &Hub, session: &mut Session, to: SocketAddr) -> std::io::Result<()> {
    for msg in stream_messages(hub, session, MAX_DATAGRAM) {
        socket.send_to(msg.as_bytes(), to)?;
    }
    Ok(())
}
