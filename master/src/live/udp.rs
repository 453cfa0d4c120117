//! The live server's datagram side: UDP on the same address and port number as the TCP side,
//! one JSON message per datagram (the messages of docs/live.md), each answered with one
//! datagram to its sender. A sender that subscribes gets the row stream in datagrams (every
//! 40 ms, split so that none is larger than [`MAX_DATAGRAM`]) until it unsubscribes, sends
//! nothing for [`LEASE`] (UDP says nothing when a peer goes away), or the server stops. For HMIs, joysticks and other simulators
//! that send a value per frame and want no connection.

use super::server::{handle, stream_message, Session, MAX_CLIENTS, STREAM_EVERY};
use super::Hub;
use serde_json::json;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Largest datagram sent (bytes; an IPv4 UDP payload is at most 65,507).
pub const MAX_DATAGRAM: usize = 60_000;
/// A subscription lapses when its subscriber sent nothing for this long (any message renews it).
pub const LEASE: Duration = Duration::from_secs(10);

/// A subscriber: its address, its session, and when it last sent a datagram.
type Subscriber = (SocketAddr, Session, Instant);

/// Serves `hub` on `socket` until `stop` (run on a thread of its own).
pub(super) fn serve(socket: &UdpSocket, hub: &Arc<Hub>, stop: &AtomicBool) {
    let _ = socket.set_read_timeout(Some(Duration::from_millis(10)));
    let _ = socket.set_write_timeout(Some(Duration::from_millis(100)));
    // One byte more than the largest message: a longer datagram is seen as too long.
    let mut buf = vec![0u8; super::server::MAX_MESSAGE + 1];
    let mut subscribers: Vec<Subscriber> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        match socket.recv_from(&mut buf) {
            Ok((n, from)) => {
                let reply = answer(hub, &mut subscribers, from, &buf[..n]);
                if let Some(reply) = reply {
                    if socket.send_to(reply.as_bytes(), from).is_err() {
                        subscribers.retain(|(a, _, _)| *a != from);
                    }
                }
            }
            Err(e) if super::server::timed_out(&e) => {}
            // An ICMP "port unreachable" for an earlier datagram (Linux reports it on the next
            // receive) or another transient error: go on.
            Err(_) => {}
        }
        for (addr, session, heard) in &mut subscribers {
            if heard.elapsed() > LEASE {
                session.subscribed = false;
            }
            if session.due() && send_rows(socket, hub, session, *addr).is_err() {
                session.subscribed = false;
            }
        }
        subscribers.retain(|(_, s, _)| s.subscribed);
    }
    // The last rows and the final status to every subscriber.
    for (addr, session, _) in &mut subscribers {
        let _ = send_rows(socket, hub, session, *addr);
    }
}

/// The reply to one datagram (`None`: nothing to answer, an empty datagram).
fn answer(hub: &Hub, subscribers: &mut Vec<Subscriber>, from: SocketAddr, data: &[u8]) -> Option<String> {
    if data.len() > super::server::MAX_MESSAGE {
        let max = super::server::MAX_MESSAGE;
        return Some(json!({ "error": format!("a datagram longer than {max} bytes") }).to_string());
    }
    let text = match std::str::from_utf8(data) {
        Ok(t) if t.trim().is_empty() => return None,
        Ok(t) => t.to_owned(),
        Err(_) => "\u{fffd}not UTF-8".to_owned(),
    };
    let k = subscribers.iter().position(|(a, _, _)| *a == from);
    let mut fresh = Session::new(hub);
    let session = match k {
        Some(k) => {
            subscribers[k].2 = Instant::now();
            &mut subscribers[k].1
        }
        None => &mut fresh,
    };
    let reply = handle(hub, session, &text);
    if k.is_none() && fresh.subscribed {
        if subscribers.len() < MAX_CLIENTS {
            subscribers.push((from, fresh, Instant::now()));
        } else {
            return Some(json!({ "error": format!("{MAX_CLIENTS} subscribers already; not subscribed") }).to_string());
        }
    }
    Some(reply)
}

/// The rows since the session's cursor, in as many datagrams as they need.
fn send_rows(socket: &UdpSocket, hub: &Hub, session: &mut Session, to: SocketAddr) -> std::io::Result<()> {
    session.last_sent = Instant::now();
    for msg in stream_message(hub, session, MAX_DATAGRAM) {
        socket.send_to(msg.as_bytes(), to)?;
    }
    Ok(())
}

impl Session {
    /// Whether a subscribed session's next stream message is due.
    fn due(&self) -> bool {
        self.subscribed && self.last_sent.elapsed() >= STREAM_EVERY
    }
}
