//! The live server: one TCP port (127.0.0.1 by default) speaking, by the first bytes a client
//! sends, HTTP (an upper-case method: `GET /` the dashboard page, `GET /ws` upgraded to a
//! WebSocket by `tungstenite`; any other method is refused) or JSON lines (anything else).
//! Both carry the messages of [`super::protocol`]; [`super::udp`] serves them in datagrams on
//! the same port number. One thread accepts, one thread per client (at most [`MAX_CLIENTS`];
//! when all are taken, the client quiet for longest, if quiet for [`EVICTABLE_AFTER`], makes
//! room) reads with a short timeout and streams rows; a client that sends garbage gets an
//! error reply, one that sends too much at once (a message over [`MAX_MESSAGE`]), leaves a
//! message unfinished for [`PARTIAL_TIMEOUT`] or stops reading is dropped. HTTP requests are
//! served only under the origin policy ([`Policy`]). Nothing here blocks the run: inputs go
//! through the [`Hub`]'s atomics and rows are copied out of its ring.

use super::policy::Policy;
use super::protocol::{handle, stream_messages, Reply, Request, Session};
use super::Hub;
use crate::error::{MasterError, Result};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tungstenite::protocol::{frame::coding::CloseCode, CloseFrame, Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

/// Clients served at once.
pub const MAX_CLIENTS: usize = 32;
pub use super::protocol::MAX_MESSAGE;
/// A message (an HTTP request head, a JSON line) must be complete this long after its first byte.
pub const PARTIAL_TIMEOUT: Duration = Duration::from_secs(5);
/// With every slot taken, a client that has sent no complete message for this long (and is
/// not subscribed) is closed to make room for a new one.
pub const EVICTABLE_AFTER: Duration = Duration::from_secs(1);
/// Largest stream message over TCP (more rows go in several).
const MAX_STREAM_MESSAGE: usize = 256 * 1024;

/// The dashboard page (our own HTML + JavaScript, no third-party code).
pub const DASHBOARD: &str = include_str!("dashboard.html");

/// What every client thread shares.
#[derive(Debug)]
struct Ctx {
    hub: Arc<Hub>,
    policy: Policy,
    stop: AtomicBool,
    epoch: Instant,
}

impl Ctx {
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }
}

/// A client as the accepting thread sees it.
#[derive(Debug)]
struct Client {
    last_message_ms: AtomicU64,
    subscribed: AtomicBool,
    evict: AtomicBool,
}

/// A running server; stops (and closes every client) when dropped.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    ctx: Arc<Ctx>,
    thread: Option<JoinHandle<()>>,
    udp: Option<JoinHandle<()>>,
}

impl Server {
    /// Binds `addr` and serves `hub` on threads of its own, under the origin policy of
    /// `allow_origins` and the access token `token`.
    pub fn start(hub: Arc<Hub>, addr: &str, allow_origins: &[String], token: Option<String>) -> Result<Self> {
        let io = |source| MasterError::Io { path: format!("live server address {addr}").into(), source };
        let (listener, socket) = bind(addr).map_err(io)?;
        listener.set_nonblocking(true).map_err(io)?;
        let local = listener.local_addr().map_err(io)?;
        let ctx = Arc::new(Ctx {
            hub,
            policy: Policy::new(local, allow_origins, token),
            stop: AtomicBool::new(false),
            epoch: Instant::now(),
        });
        let (c1, c2) = (Arc::clone(&ctx), Arc::clone(&ctx));
        let udp = std::thread::Builder::new()
            .name("cosim-live-udp".into())
            .spawn(move || super::udp::serve(&socket, &c1.hub, c1.policy.token.as_deref(), &c1.stop))
            .map_err(io)?;
        let thread = std::thread::Builder::new()
            .name("cosim-live".into())
            .spawn(move || accept_loop(&listener, &c2))
            .map_err(io)?;
        Ok(Self { addr: local, ctx, thread: Some(thread), udp: Some(udp) })
    }

    /// The address bound (the port chosen when 0 was asked for).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.ctx.stop.store(true, Ordering::Relaxed);
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

fn accept_loop(listener: &TcpListener, ctx: &Arc<Ctx>) {
    let mut clients: Vec<(JoinHandle<()>, Arc<Client>)> = Vec::new();
    while !ctx.stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => {
                clients.retain(|(h, _)| !h.is_finished());
                if !make_room(ctx, &clients) {
                    drop(stream);
                    continue;
                }
                let me = Arc::new(Client {
                    last_message_ms: AtomicU64::new(ctx.now_ms()),
                    subscribed: AtomicBool::new(false),
                    evict: AtomicBool::new(false),
                });
                let (c, m) = (Arc::clone(ctx), Arc::clone(&me));
                let spawned = std::thread::Builder::new().name("cosim-live-client".into()).spawn(move || {
                    let _ = serve_client(stream, &c, &m);
                });
                if let Ok(h) = spawned {
                    clients.push((h, me));
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    for (h, _) in clients {
        let _ = h.join();
    }
}

/// Whether a new client may be served: a free slot, or one freed by closing the client quiet
/// for longest (no complete message for [`EVICTABLE_AFTER`], not subscribed).
fn make_room(ctx: &Ctx, clients: &[(JoinHandle<()>, Arc<Client>)]) -> bool {
    let served = clients.iter().filter(|(_, c)| !c.evict.load(Ordering::Relaxed)).count();
    if served < MAX_CLIENTS {
        return true;
    }
    // Closing ones still count until their threads end: a bound on threads.
    if clients.len() >= MAX_CLIENTS + 16 {
        return false;
    }
    let now = ctx.now_ms();
    let quiet = EVICTABLE_AFTER.as_millis() as u64;
    let victim = clients
        .iter()
        .map(|(_, c)| c)
        .filter(|c| !c.evict.load(Ordering::Relaxed) && !c.subscribed.load(Ordering::Relaxed))
        .filter(|c| now.saturating_sub(c.last_message_ms.load(Ordering::Relaxed)) >= quiet)
        .min_by_key(|c| c.last_message_ms.load(Ordering::Relaxed));
    match victim {
        Some(v) => {
            v.evict.store(true, Ordering::Relaxed);
            true
        }
        None => false,
    }
}

pub(super) fn timed_out(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut | std::io::ErrorKind::Interrupted)
}

/// Whether `buf` starts like an HTTP request line: an upper-case method and a space.
fn looks_like_http(buf: &[u8]) -> bool {
    buf.iter()
        .position(|b| *b == b' ')
        .is_some_and(|end| (1..=16).contains(&end) && buf[..end].iter().all(u8::is_ascii_uppercase))
}

fn serve_client(mut stream: TcpStream, ctx: &Ctx, me: &Client) -> std::io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_millis(20)))?;
    stream.set_write_timeout(Some(Duration::from_secs(2)))?;
    let _ = stream.set_nodelay(true);
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut chunk = [0u8; 8192];
    // The first bytes decide: an HTTP method, or JSON lines.
    let mut first_byte: Option<Instant> = None;
    while !buf.contains(&b' ') && !buf.contains(&b'\n') && buf.len() < 17 {
        if ctx.stop.load(Ordering::Relaxed) || me.evict.load(Ordering::Relaxed) {
            return Ok(());
        }
        if first_byte.is_some_and(|t| t.elapsed() > PARTIAL_TIMEOUT) {
            return Ok(());
        }
        match stream.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => {
                first_byte.get_or_insert_with(Instant::now);
                buf.extend_from_slice(&chunk[..n]);
            }
            Err(e) if timed_out(&e) => {}
            Err(e) => return Err(e),
        }
    }
    if looks_like_http(&buf) {
        return match http(&mut stream, &mut buf, &mut chunk, ctx, me)? {
            Some((rest, authorized)) => websocket(stream, rest, ctx, me, authorized),
            None => Ok(()),
        };
    }
    lines(stream, buf, ctx, me)
}

/// A JSON-lines client.
fn lines(mut stream: TcpStream, mut buf: Vec<u8>, ctx: &Ctx, me: &Client) -> std::io::Result<()> {
    let hub = &*ctx.hub;
    let token = ctx.policy.token.as_deref();
    let mut chunk = [0u8; 8192];
    let mut session = Session::new(false);
    let mut partial: Option<Instant> = (!buf.is_empty()).then(Instant::now);
    loop {
        if ctx.stop.load(Ordering::Relaxed) {
            // The last rows and the final status, then goodbye.
            if session.subscribed {
                for msg in stream_messages(hub, &mut session, MAX_STREAM_MESSAGE) {
                    let _ = stream.write_all(format!("{msg}\n").as_bytes());
                }
            }
            return Ok(());
        }
        if me.evict.load(Ordering::Relaxed) {
            return refuse(&mut stream, &Reply::error("closed to make room for another client (all busy)").text());
        }
        // Every complete line in the buffer.
        while let Some(p) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=p).collect();
            if p > MAX_MESSAGE {
                return refuse(
                    &mut stream,
                    &Reply::error(format!("a line longer than {MAX_MESSAGE} bytes; closing")).text(),
                );
            }
            partial = None;
            let reply = match std::str::from_utf8(&line) {
                Ok(s) if s.trim().is_empty() => continue,
                Ok(s) => match Request::parse(s) {
                    Ok(req) => handle(hub, token, &mut session, &req).text(),
                    Err(e) => Reply::error(e).text(),
                },
                Err(_) => Reply::error("not UTF-8: messages are JSON objects in UTF-8 text").text(),
            };
            me.last_message_ms.store(ctx.now_ms(), Ordering::Relaxed);
            me.subscribed.store(session.subscribed, Ordering::Relaxed);
            // One write per message: with two, a client with Nagle's algorithm on waits for a
            // delayed ACK between them.
            stream.write_all(format!("{reply}\n").as_bytes())?;
        }
        if buf.len() > MAX_MESSAGE {
            return refuse(
                &mut stream,
                &Reply::error(format!("a line longer than {MAX_MESSAGE} bytes; closing")).text(),
            );
        }
        if !buf.is_empty() && partial.get_or_insert_with(Instant::now).elapsed() > PARTIAL_TIMEOUT {
            let e = format!("a line left unfinished for {} s; closing", PARTIAL_TIMEOUT.as_secs());
            return refuse(&mut stream, &Reply::error(e).text());
        }
        if session.due() {
            for msg in stream_messages(hub, &mut session, MAX_STREAM_MESSAGE) {
                stream.write_all(format!("{msg}\n").as_bytes())?;
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

/// Sends a last error line, then closes after reading what the client still sends for a
/// moment (so that closing does not reset the connection before it read the reply).
fn refuse(stream: &mut TcpStream, line: &str) -> std::io::Result<()> {
    stream.write_all(format!("{line}\n").as_bytes())?;
    linger(stream);
    Ok(())
}

fn linger(stream: &mut TcpStream) {
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let until = Instant::now() + Duration::from_millis(200);
    let mut chunk = [0u8; 4096];
    while Instant::now() < until {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if timed_out(&e) => {}
            Err(_) => break,
        }
    }
}

/// Reads and answers an HTTP request: the page, the schematic or a refusal (then `None`:
/// close), or a WebSocket upgrade (`Some`: the handshake is answered; the bytes after the
/// request and whether the URL's token was right).
fn http(
    stream: &mut TcpStream,
    buf: &mut Vec<u8>,
    chunk: &mut [u8],
    ctx: &Ctx,
    me: &Client,
) -> std::io::Result<Option<(Vec<u8>, bool)>> {
    let opened = Instant::now();
    let end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        if buf.len() > 16 * 1024 {
            respond(stream, "431 Request Header Fields Too Large", "text/plain", b"request header too large\n")?;
            return Ok(None);
        }
        if ctx.stop.load(Ordering::Relaxed) || me.evict.load(Ordering::Relaxed) || opened.elapsed() > PARTIAL_TIMEOUT {
            return Ok(None);
        }
        match stream.read(chunk) {
            Ok(0) => return Ok(None),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if timed_out(&e) => {}
            Err(e) => return Err(e),
        }
    };
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    match req.parse(&buf[..end]) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => {
            respond(stream, "400 Bad Request", "text/plain", b"bad request: incomplete\n")?;
            return Ok(None);
        }
        Err(e) => {
            respond(stream, "400 Bad Request", "text/plain", format!("bad request: {e}\n").as_bytes())?;
            return Ok(None);
        }
    }
    me.last_message_ms.store(ctx.now_ms(), Ordering::Relaxed);
    let header = |name: &str| {
        req.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .and_then(|h| std::str::from_utf8(h.value).ok())
            .map(str::to_owned)
    };
    if req.method != Some("GET") {
        respond(
            stream,
            "405 Method Not Allowed",
            "text/plain",
            b"only GET: the dashboard is at /, its WebSocket at /ws; JSON lines are not HTTP\n",
        )?;
        return Ok(None);
    }
    if let Err(why) = ctx.policy.request_ok(header("host").as_deref(), header("origin").as_deref()) {
        respond(stream, "403 Forbidden", "text/plain", format!("refused: {why}\n").as_bytes())?;
        return Ok(None);
    }
    let target = req.path.unwrap_or("/").to_owned();
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let upgrade = header("upgrade").is_some_and(|u| u.eq_ignore_ascii_case("websocket"));
    match (path, upgrade) {
        ("/ws", true) => {
            let mut r = tungstenite::http::Request::builder().method("GET").uri(&target);
            r = r.version(if req.version == Some(0) {
                tungstenite::http::Version::HTTP_10
            } else {
                tungstenite::http::Version::HTTP_11
            });
            for h in req.headers.iter() {
                r = r.header(h.name, h.value);
            }
            let response = r
                .body(())
                .map_err(|e| e.to_string())
                .and_then(|r| tungstenite::handshake::server::create_response(&r).map_err(|e| e.to_string()));
            let response = match response {
                Ok(r) => r,
                Err(e) => {
                    respond(
                        stream,
                        "400 Bad Request",
                        "text/plain",
                        format!("not a WebSocket upgrade: {e}\n").as_bytes(),
                    )?;
                    return Ok(None);
                }
            };
            let mut head = String::from("HTTP/1.1 101 Switching Protocols\r\n");
            for (k, v) in response.headers() {
                head += &format!("{}: {}\r\n", k, v.to_str().unwrap_or_default());
            }
            head += "\r\n";
            stream.write_all(head.as_bytes())?;
            let token = query.split('&').find_map(|kv| kv.strip_prefix("token="));
            let authorized = matches!((ctx.policy.token.as_deref(), token), (Some(want), Some(given))
                if super::protocol::token_matches(given, want));
            Ok(Some((buf[end..].to_vec(), authorized)))
        }
        ("/" | "/index.html", false) => {
            respond(stream, "200 OK", "text/html; charset=utf-8", DASHBOARD.as_bytes())?;
            Ok(None)
        }
        ("/schematic.svg", false) if ctx.hub.schematic.is_some() => {
            let svg = ctx.hub.schematic.as_deref().unwrap_or_default();
            respond(stream, "200 OK", "image/svg+xml", svg.as_bytes())?;
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
        "HTTP/1.1 {status}\r\nContent-Type: {ty}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n\
         X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\n\
         Content-Security-Policy: frame-ancestors 'none'\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    linger(stream);
    Ok(())
}

/// A WebSocket client (after the handshake): `tungstenite` reads and writes the frames.
fn websocket(stream: TcpStream, rest: Vec<u8>, ctx: &Ctx, me: &Client, authorized: bool) -> std::io::Result<()> {
    let hub = &*ctx.hub;
    let token = ctx.policy.token.as_deref();
    let config = WebSocketConfig::default().max_message_size(Some(MAX_MESSAGE)).max_frame_size(Some(MAX_MESSAGE));
    let mut ws = WebSocket::from_partially_read(stream, rest, Role::Server, Some(config));
    let mut session = Session::new(authorized);
    // At connect: where every input is, who drives it, and whether the run is paused.
    let hello = Reply { state: Some(super::protocol::state(hub)), ..Reply::default() };
    if ws.send(Message::text(hello.text())).is_err() {
        return Ok(());
    }
    let close = |ws: &mut WebSocket<TcpStream>, code: CloseCode, reason: &str| {
        let _ = ws.close(Some(CloseFrame { code, reason: reason.chars().take(120).collect::<String>().into() }));
        let _ = ws.flush();
        linger(ws.get_mut());
    };
    loop {
        if ctx.stop.load(Ordering::Relaxed) {
            if session.subscribed {
                for msg in stream_messages(hub, &mut session, MAX_STREAM_MESSAGE) {
                    let _ = ws.send(Message::text(msg));
                }
            }
            close(&mut ws, CloseCode::Away, "server stopping");
            return Ok(());
        }
        if me.evict.load(Ordering::Relaxed) {
            close(&mut ws, CloseCode::Again, "closed to make room for another client");
            return Ok(());
        }
        if session.due() {
            for msg in stream_messages(hub, &mut session, MAX_STREAM_MESSAGE) {
                if ws.send(Message::text(msg)).is_err() {
                    return Ok(());
                }
            }
        }
        let reply = match ws.read() {
            Ok(Message::Text(t)) => match Request::parse(t.as_str()) {
                Ok(req) => handle(hub, token, &mut session, &req).text(),
                Err(e) => Reply::error(e).text(),
            },
            Ok(Message::Binary(_)) => Reply::error("binary: messages are JSON objects in UTF-8 text").text(),
            Ok(Message::Close(_)) => {
                // tungstenite has queued its answer (1002 for a code a peer may not send).
                let _ = ws.flush();
                linger(ws.get_mut());
                return Ok(());
            }
            Ok(_) => {
                // Ping (its pong is queued), pong.
                let _ = ws.flush();
                continue;
            }
            Err(tungstenite::Error::Io(e)) if timed_out(&e) => continue,
            Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => return Ok(()),
            Err(tungstenite::Error::Io(_)) => return Ok(()),
            Err(e) => {
                let code = match e {
                    tungstenite::Error::Capacity(_) => CloseCode::Size,
                    tungstenite::Error::Utf8(_) => CloseCode::Invalid,
                    tungstenite::Error::Protocol(_) => CloseCode::Protocol,
                    _ => CloseCode::Error,
                };
                let message = e.to_string();
                let _ = ws.send(Message::text(Reply::error(format!("{message}; closing")).text()));
                close(&mut ws, code, &message);
                return Ok(());
            }
        };
        me.last_message_ms.store(ctx.now_ms(), Ordering::Relaxed);
        me.subscribed.store(session.subscribed, Ordering::Relaxed);
        if ws.send(Message::text(reply)).is_err() {
            return Ok(());
        }
    }
}
