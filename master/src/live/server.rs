//! The live server: one TCP port (127.0.0.1 by default) speaking, by the first bytes a client
//! sends, HTTP (`GET /` the dashboard page, `GET /ws` upgraded to a WebSocket) or JSON lines
//! (anything else). Both carry the same messages (docs/live.md). One thread accepts, one thread
//! per client (at most [`MAX_CLIENTS`]) reads with a short timeout and streams rows; a client
//! that sends garbage gets an error reply, one that sends too much at once (a line or frame
//! over [`MAX_MESSAGE`]) or stops reading is dropped. Nothing here blocks the run: inputs go
//! through the [`Hub`]'s atomics and rows are copied out of its ring.

use super::ws::{self, Frame, FrameError};
use super::Hub;
use crate::error::{MasterError, Result};
use serde_json::{json, Map, Value};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Clients served at once; more are closed at once.
pub const MAX_CLIENTS: usize = 32;
/// Largest message (a JSON line or a WebSocket frame's payload), bytes.
pub const MAX_MESSAGE: usize = 64 * 1024;
/// Rows are streamed to a subscribed client this often.
pub(super) const STREAM_EVERY: Duration = Duration::from_millis(40);
/// Rows per second a subscription without an explicit `every` gets at most.
const AUTO_ROWS_PER_S: f64 = 250.0;

/// The dashboard page (our own HTML + JavaScript, no third-party code).
pub const DASHBOARD: &str = include_str!("dashboard.html");

/// A running server; stops (and closes every client) when dropped.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    udp: Option<JoinHandle<()>>,
}

impl Server {
    /// Binds `addr` and serves `hub` on a thread of its own.
    pub fn start(hub: Arc<Hub>, addr: &str) -> Result<Self> {
        let io = |source| MasterError::Io { path: format!("live server address {addr}").into(), source };
        let (listener, socket) = bind(addr).map_err(io)?;
        listener.set_nonblocking(true).map_err(io)?;
        let local = listener.local_addr().map_err(io)?;
        let stop = Arc::new(AtomicBool::new(false));
        let (flag, udp_hub, udp_flag) = (Arc::clone(&stop), Arc::clone(&hub), Arc::clone(&stop));
        let udp = std::thread::Builder::new()
            .name("cosim-live-udp".into())
            .spawn(move || super::udp::serve(&socket, &udp_hub, &udp_flag))
            .map_err(io)?;
        let thread = std::thread::Builder::new()
            .name("cosim-live".into())
            .spawn(move || accept_loop(&listener, &hub, &flag))
            .map_err(io)?;
        Ok(Self { addr: local, stop, thread: Some(thread), udp: Some(udp) })
    }

    /// The address bound (the port chosen when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        if let Some(t) = self.udp.take() {
            let _ = t.join();
        }
    }
}

/// TCP and UDP on the same address and port number. With port 0 the port is the one the
/// system picks for TCP, tried again (a few times) when UDP has it taken.
fn bind(addr: &str) -> std::io::Result<(TcpListener, UdpSocket)> {
    use std::net::ToSocketAddrs;
    let any_port = addr.to_socket_addrs()?.next().is_some_and(|a| a.port() == 0);
    let mut tries = 0;
    loop {
        let listener = TcpListener::bind(addr)?;
        match UdpSocket::bind(listener.local_addr()?) {
            Ok(socket) => return Ok((listener, socket)),
            Err(e) if any_port && e.kind() == std::io::ErrorKind::AddrInUse && tries < 20 => tries += 1,
            Err(e) => {
                return Err(std::io::Error::new(e.kind(), format!("UDP on {}: {e}", listener.local_addr()?)));
            }
        }
    }
}

fn accept_loop(listener: &TcpListener, hub: &Arc<Hub>, stop: &Arc<AtomicBool>) {
    let active = Arc::new(AtomicUsize::new(0));
    let mut clients: Vec<JoinHandle<()>> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => {
                if active.load(Ordering::Relaxed) >= MAX_CLIENTS {
                    drop(stream);
                    continue;
                }
                active.fetch_add(1, Ordering::Relaxed);
                let (hub, stop, count) = (Arc::clone(hub), Arc::clone(stop), Arc::clone(&active));
                let spawned = std::thread::Builder::new().name("cosim-live-client".into()).spawn(move || {
                    let _ = serve_client(stream, &hub, &stop);
                    count.fetch_sub(1, Ordering::Relaxed);
                });
                match spawned {
                    Ok(h) => clients.push(h),
                    Err(_) => {
                        active.fetch_sub(1, Ordering::Relaxed);
                    }
                }
                clients.retain(|h| !h.is_finished());
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    for h in clients {
        let _ = h.join();
    }
}

/// What a client speaks.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Proto {
    Lines,
    WebSocket,
}

/// A client's subscription.
#[derive(Debug)]
pub(super) struct Session {
    pub(super) cursor: u64,
    pub(super) every: u64,
    pub(super) subscribed: bool,
    pub(super) last_sent: Instant,
}

impl Session {
    /// Not subscribed; a subscription streams rows from the latest one published by now.
    pub(super) fn new(hub: &Hub) -> Self {
        Self { cursor: hub.latest().0, every: 1, subscribed: false, last_sent: Instant::now() }
    }
}

fn serve_client(mut stream: TcpStream, hub: &Hub, stop: &AtomicBool) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_millis(20)))?;
    stream.set_write_timeout(Some(Duration::from_secs(2)))?;
    let _ = stream.set_nodelay(true);
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut chunk = [0u8; 8192];
    // The first bytes decide: "GET " is HTTP, anything else JSON lines.
    let opened = Instant::now();
    while buf.len() < 4 && !buf.contains(&b'\n') {
        if stop.load(Ordering::Relaxed) || opened.elapsed() > Duration::from_secs(30) {
            return Ok(());
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if timed_out(&e) => {}
            Err(e) => return Err(e),
        }
    }
    let proto = if buf.starts_with(b"GET ") {
        match http(&mut stream, &mut buf, &mut chunk, stop)? {
            Some(()) => Proto::WebSocket,
            None => return Ok(()),
        }
    } else {
        Proto::Lines
    };
    let mut session = Session { cursor: 0, every: 1, subscribed: false, last_sent: Instant::now() };
    loop {
        if stop.load(Ordering::Relaxed) {
            // The last rows and the final status, then goodbye.
            if session.subscribed {
                for msg in stream_message(hub, &mut session, usize::MAX) {
                    let _ = send(&mut stream, proto, &msg);
                }
            }
            if proto == Proto::WebSocket {
                let _ = ws::write_close(&mut stream, 1001, "server stopping");
            }
            return Ok(());
        }
        // Every complete message in the buffer.
        loop {
            match next_message(proto, &mut buf) {
                Ok(None) => break,
                Ok(Some(Incoming::Text(text))) => {
                    let reply = handle(hub, &mut session, &text);
                    send(&mut stream, proto, &reply)?;
                }
                Ok(Some(Incoming::Ping(p))) => ws::write_frame(&mut stream, 10, &p)?,
                Ok(Some(Incoming::Ignore)) => {}
                Ok(Some(Incoming::Close)) => {
                    let _ = ws::write_close(&mut stream, 1000, "");
                    return Ok(());
                }
                Err((code, message)) => {
                    send(&mut stream, proto, &json!({ "error": message }).to_string())?;
                    if proto == Proto::WebSocket {
                        let _ = ws::write_close(&mut stream, code, &message);
                    }
                    // Read what the client still sends for a moment, so that closing does not
                    // reset the connection before it has read the reply.
                    let _ = stream.shutdown(std::net::Shutdown::Write);
                    let until = Instant::now() + Duration::from_millis(200);
                    while Instant::now() < until {
                        match stream.read(&mut chunk) {
                            Ok(0) => break,
                            Ok(_) => {}
                            Err(e) if timed_out(&e) => {}
                            Err(_) => break,
                        }
                    }
                    return Ok(());
                }
            }
        }
        if session.subscribed && session.last_sent.elapsed() >= STREAM_EVERY {
            session.last_sent = Instant::now();
            for msg in stream_message(hub, &mut session, usize::MAX) {
                send(&mut stream, proto, &msg)?;
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if timed_out(&e) => {}
            Err(e) => return Err(e),
        }
    }
}

pub(super) fn timed_out(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut | std::io::ErrorKind::Interrupted)
}

/// Reads an HTTP request: the page (then `None`: close) or a WebSocket upgrade (`Some`: the
/// handshake is answered, the rest of `buf` is WebSocket).
fn http(stream: &mut TcpStream, buf: &mut Vec<u8>, chunk: &mut [u8], stop: &AtomicBool) -> std::io::Result<Option<()>> {
    let opened = Instant::now();
    let end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        if buf.len() > 16 * 1024 {
            respond(stream, "431 Request Header Fields Too Large", "text/plain", b"request header too large\n")?;
            return Ok(None);
        }
        if stop.load(Ordering::Relaxed) || opened.elapsed() > Duration::from_secs(10) {
            return Ok(None);
        }
        match stream.read(chunk) {
            Ok(0) => return Ok(None),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if timed_out(&e) => {}
            Err(e) => return Err(e),
        }
    };
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    buf.drain(..end);
    let mut lines = head.split("\r\n");
    let path = lines.next().and_then(|l| l.split_whitespace().nth(1)).unwrap_or("/").to_owned();
    let header = |name: &str| {
        head.split("\r\n").skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim().eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
    };
    let upgrade = header("upgrade").is_some_and(|u| u.eq_ignore_ascii_case("websocket"));
    match (path.split('?').next().unwrap_or("/"), upgrade, header("sec-websocket-key")) {
        ("/ws", true, Some(key)) => {
            let reply = format!(
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
                 Sec-WebSocket-Accept: {}\r\n\r\n",
                ws::accept_key(&key)
            );
            stream.write_all(reply.as_bytes())?;
            Ok(Some(()))
        }
        ("/" | "/index.html", false, _) => {
            respond(stream, "200 OK", "text/html; charset=utf-8", DASHBOARD.as_bytes())?;
            Ok(None)
        }
        _ => {
            respond(
                stream,
                "404 Not Found",
                "text/plain",
                b"not found: the dashboard is at /, its WebSocket at /ws\n",
            )?;
            Ok(None)
        }
    }
}

fn respond(stream: &mut TcpStream, status: &str, ty: &str, body: &[u8]) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ty}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)
}

enum Incoming {
    Text(String),
    Ping(Vec<u8>),
    Ignore,
    Close,
}

/// The next complete message in `buf` (removed from it); `Err((close code, message))` ends
/// the connection.
fn next_message(proto: Proto, buf: &mut Vec<u8>) -> std::result::Result<Option<Incoming>, (u16, String)> {
    match proto {
        Proto::Lines => {
            let Some(p) = buf.iter().position(|b| *b == b'\n') else {
                if buf.len() > MAX_MESSAGE {
                    return Err((1009, format!("a line longer than {MAX_MESSAGE} bytes; closing")));
                }
                return Ok(None);
            };
            let line: Vec<u8> = buf.drain(..=p).collect();
            if p > MAX_MESSAGE {
                return Err((1009, format!("a line longer than {MAX_MESSAGE} bytes; closing")));
            }
            Ok(Some(match String::from_utf8(line) {
                Ok(s) if s.trim().is_empty() => Incoming::Ignore,
                Ok(s) => Incoming::Text(s),
                Err(_) => Incoming::Text("\u{fffd}not UTF-8".into()),
            }))
        }
        Proto::WebSocket => {
            let mut cur = &buf[..];
            match ws::read_frame(&mut cur, MAX_MESSAGE as u64) {
                Ok(f) => {
                    let used = buf.len() - cur.len();
                    buf.drain(..used);
                    Ok(Some(match f {
                        Frame::Text(t) => match String::from_utf8(t) {
                            Ok(s) => Incoming::Text(s),
                            Err(_) => return Err((1007, "a text frame that is not UTF-8".into())),
                        },
                        Frame::Binary => Incoming::Text("\u{fffd}binary".into()),
                        Frame::Ping(p) => Incoming::Ping(p),
                        Frame::Pong => Incoming::Ignore,
                        Frame::Close => Incoming::Close,
                    }))
                }
                Err(FrameError::Io(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
                Err(FrameError::Io(e)) => Err((1011, e.to_string())),
                Err(FrameError::Protocol(m)) => Err((1002, m.to_owned())),
                Err(FrameError::TooBig(n)) => Err((1009, format!("a frame of {n} bytes, more than {MAX_MESSAGE}"))),
            }
        }
    }
}

fn send(stream: &mut TcpStream, proto: Proto, text: &str) -> std::io::Result<()> {
    match proto {
        // One write per message: with two, a client with Nagle's algorithm on waits for a
        // delayed ACK between them.
        Proto::Lines => stream.write_all(format!("{text}\n").as_bytes()),
        Proto::WebSocket => ws::write_frame(stream, 1, text.as_bytes()),
    }
}

/// The reply to one message (docs/live.md): `{"ok": true, …}` or `{"error": "…"}`.
pub(super) fn handle(hub: &Hub, session: &mut Session, text: &str) -> String {
    match handle_value(hub, session, text) {
        Ok(reply) => Value::Object(reply).to_string(),
        Err(message) => json!({ "error": message }).to_string(),
    }
}

fn handle_value(hub: &Hub, session: &mut Session, text: &str) -> std::result::Result<Map<String, Value>, String> {
    if let Some(what) = text.strip_prefix('\u{fffd}') {
        return Err(format!("{what}: messages are JSON objects in UTF-8 text"));
    }
    let v: Value = serde_json::from_str(text.trim()).map_err(|e| format!("not JSON ({e})"))?;
    let Value::Object(msg) = v else {
        return Err("a message is a JSON object, e.g. {\"set\": {\"hyd.U_ref\": 2.5}}".into());
    };
    const KEYS: [&str; 7] = ["set", "release", "pause", "reset", "subscribe", "get", "info"];
    if let Some(k) = msg.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!("unknown key \"{k}\" (known: {})", KEYS.join(", ")));
    }
    // Check everything before acting on anything: a bad message changes nothing.
    let mut sets = Vec::new();
    if let Some(s) = msg.get("set") {
        let Value::Object(s) = s else { return Err("\"set\" takes an object {\"name\": number, …}".into()) };
        for (name, value) in s {
            let x = value.as_f64().ok_or_else(|| format!("set: {name} = {value} is not a number"))?;
            if !x.is_finite() {
                return Err(format!("set: {name} = {x} is not finite"));
            }
            hub.input(name)?;
            sets.push((name.clone(), x));
        }
    }
    let mut releases = Vec::new();
    match msg.get("release") {
        None => {}
        Some(Value::String(n)) => releases.push(n.clone()),
        Some(Value::Array(a)) => {
            for n in a {
                releases.push(n.as_str().ok_or_else(|| format!("release: {n} is not a name"))?.to_owned());
            }
        }
        Some(other) => return Err(format!("release: {other} is not a name or a list of names")),
    }
    for n in &releases {
        hub.input(n)?;
    }
    let pause = match msg.get("pause") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(other) => return Err(format!("pause: {other} is not true or false")),
    };
    let reset = match msg.get("reset") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(format!("reset: {other} is not true or false")),
    };
    let subscribe = match msg.get("subscribe") {
        None => None,
        Some(Value::Bool(false)) => Some(0),
        Some(Value::Bool(true)) => Some((1.0 / (AUTO_ROWS_PER_S * hub.step)).ceil().max(1.0) as u64),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Some(n),
            _ => return Err(format!("subscribe: {v} is not true, false or a whole number of steps ≥ 1")),
        },
    };
    for (n, x) in &sets {
        hub.set(n, *x)?;
    }
    for n in &releases {
        hub.release(n)?;
    }
    if let Some(p) = pause {
        hub.control.set_paused(p);
    }
    if reset {
        hub.control.request_reset();
    }
    let mut reply = Map::new();
    reply.insert("ok".into(), Value::Bool(true));
    if let Some(every) = subscribe {
        session.subscribed = every > 0;
        session.every = every.max(1);
        reply.insert("every".into(), json!(session.every));
    }
    if msg.get("info").is_some_and(|v| v != &Value::Bool(false)) {
        reply.insert(
            "info".into(),
            json!({
                "inputs": hub.inputs(),
                "columns": hub.columns(),
                "start": hub.start,
                "stop": hub.stop,
                "step": hub.step,
            }),
        );
    }
    if msg.get("get").is_some_and(|v| v != &Value::Bool(false)) {
        let (head, row) = hub.latest();
        let mut values = Map::new();
        for (name, x) in hub.columns().iter().zip(row.iter().skip(1)) {
            values.insert(name.clone(), json!(x));
        }
        reply.insert("t".into(), json!(row.first()));
        reply.insert("published".into(), json!(head));
        reply.insert("values".into(), Value::Object(values));
    }
    Ok(reply)
}

/// Rows since the session's cursor and the run's figures: one message, or as many as keep
/// each within `max` bytes (each with some of the rows, the last with the newest).
pub(super) fn stream_message(hub: &Hub, session: &mut Session, max: usize) -> Vec<String> {
    let (head, rows) = hub.rows_since(session.cursor, session.every);
    session.cursor = head;
    let mut out = Vec::new();
    let mut rest = &rows[..];
    loop {
        // Halve the rows until the message fits (a single row always goes).
        let mut n = rest.len();
        let mut msg = stream_value(hub, &rest[..n]);
        while msg.len() > max && n > 1 {
            n /= 2;
            msg = stream_value(hub, &rest[..n]);
        }
        out.push(msg);
        rest = &rest[n..];
        if rest.is_empty() {
            return out;
        }
    }
}

fn stream_value(hub: &Hub, rows: &[Vec<f64>]) -> String {
    let s = &hub.stats;
    let (mut status, message) = hub.status();
    if status == "running" && hub.control.paused() {
        status = "paused".into();
    }
    let ns = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed) as f64 * 1e-9;
    json!({
        "rows": rows,
        "status": status,
        "message": message,
        "stats": {
            "steps": s.steps.load(Ordering::Relaxed),
            "overruns": s.overruns.load(Ordering::Relaxed),
            "max_lateness_s": ns(&s.max_lateness_ns),
            "last_step_s": ns(&s.last_step_ns),
            "max_step_s": ns(&s.max_step_ns),
            "skipped_rows": hub.skipped.load(Ordering::Relaxed),
        },
    })
    .to_string()
}
