//! What the live server's tests share: the operator scenario, a served run, and JSON-lines,
//! WebSocket and UDP clients (the WebSocket one writes its frames by hand, so that tests can
//! send what no library would).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use fmu_harness::paths;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A masked client frame (RFC 6455 §5.2), as a browser sends it.
pub fn client_frame(opcode: u8, payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
    let mut f = vec![0x80 | opcode];
    match payload.len() {
        n if n < 126 => f.push(0x80 | n as u8),
        n if n <= 0xFFFF => {
            f.push(0x80 | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(0x80 | 127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    f.extend_from_slice(&mask);
    f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    f
}

/// An unmasked frame (as a server sends it; a client must not).
pub fn unmasked_frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    assert!(payload.len() < 126);
    let mut f = vec![0x80 | opcode, payload.len() as u8];
    f.extend_from_slice(payload);
    f
}

/// A UDP socket connected to `addr` that proved its address: the cookie the server gave it
/// (asked with a datagram padded so that the cookie reply fits).
pub fn udp_proven(addr: &str) -> (std::net::UdpSocket, String) {
    let u = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    u.connect(addr).unwrap();
    u.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    u.send(format!("{:<32}", r#"{"cookie": ""}"#).as_bytes()).unwrap();
    let r = udp_next(&u, false);
    let cookie = r["cookie"].as_str().unwrap_or_else(|| panic!("no cookie: {r}")).to_owned();
    (u, cookie)
}

/// `msg` (a JSON object) with `"cookie": cookie` added.
pub fn with_cookie(msg: &str, cookie: &str) -> Vec<u8> {
    let mut v: serde_json::Value = serde_json::from_str(msg).unwrap();
    v["cookie"] = cookie.into();
    v.to_string().into_bytes()
}

/// The operator scenario in `dir` with the FMUs under test, served on a free port.
pub fn operator(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(paths::root().join("scenarios/crane-pub3-operator.toml")).unwrap();
    let text = text
        .replace("../target/fmu", &paths::fmu_dir().display().to_string())
        .replace("addr = \"127.0.0.1:8033\"", "addr = \"127.0.0.1:0\"")
        .replace(
            "crane-pub3-operator.svg",
            &paths::root().join("scenarios/crane-pub3-operator.svg").display().to_string(),
        );
    let p = dir.join("operator.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// A running `cosim run` with its live address; stderr collected.
pub struct Run {
    pub child: Child,
    pub addr: String,
    pub stderr: std::thread::JoinHandle<String>,
}

pub fn start(args: &[&str]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cosim"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    let addr = loop {
        let line = lines.next().unwrap_or_else(|| panic!("no live address in: {seen}")).unwrap();
        seen += &line;
        seen += "\n";
        if let Some(rest) = line.strip_prefix("live: dashboard on http://") {
            break rest.split('/').next().unwrap().to_owned();
        }
    };
    let stderr = std::thread::spawn(move || {
        for l in lines.map_while(Result::ok) {
            seen += &l;
            seen += "\n";
        }
        seen
    });
    Run { child, addr, stderr }
}

impl Run {
    pub fn wait(mut self) -> String {
        let status = self.child.wait().unwrap();
        let err = self.stderr.join().unwrap();
        assert!(status.success(), "{err}");
        err
    }
}

/// A JSON-lines client.
pub struct Lines {
    pub r: BufReader<TcpStream>,
    pub w: TcpStream,
}

impl Lines {
    pub fn connect(addr: &str) -> Self {
        let w = TcpStream::connect(addr).unwrap();
        w.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        w.set_nodelay(true).unwrap();
        Self { r: BufReader::new(w.try_clone().unwrap()), w }
    }
    pub fn ask(&mut self, msg: &str) -> serde_json::Value {
        // One write per line (with Nagle, a second small write would wait for a delayed ACK).
        self.w.write_all(format!("{msg}\n").as_bytes()).unwrap();
        self.reply()
    }
    /// The next reply that is not a row stream message.
    pub fn reply(&mut self) -> serde_json::Value {
        loop {
            let mut line = String::new();
            self.r.read_line(&mut line).unwrap();
            let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"));
            if v.get("rows").is_none() {
                return v;
            }
        }
    }
}

pub fn results(out: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(str::to_owned).collect();
    (header, lines.map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect())
}

pub fn col(h: &[String], name: &str) -> usize {
    h.iter().position(|c| c == name).unwrap_or_else(|| panic!("no column {name} in {h:?}"))
}

/// What the operator's values did in results.csv: the rows (t, U_ref, U) after the start.
pub fn spool(out: &Path) -> Vec<(f64, f64, f64)> {
    let (h, rows) = results(out);
    let (ir, iu) = (col(&h, "hyd.U_ref"), col(&h, "hyd.U"));
    rows.iter().map(|r| (r[0], r[ir], r[iu])).collect()
}

/// The next datagram from `u` that is (`rows`) or is not a row stream message.
pub fn udp_next(u: &std::net::UdpSocket, rows: bool) -> serde_json::Value {
    let mut buf = vec![0u8; 65_536];
    loop {
        let n = u.recv(&mut buf).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&buf[..n]).unwrap();
        if v.get("rows").is_some() == rows {
            return v;
        }
    }
}

/// A WebSocket client: handshake, masked frames out, unmasked frames in.
pub struct Ws {
    pub s: TcpStream,
    pub buf: Vec<u8>,
    /// What the server sent at connect (`{"state": …}`).
    pub hello: serde_json::Value,
}

impl Ws {
    pub fn connect(addr: &str) -> Self {
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let key = "dGhlIHNhbXBsZSBub25jZQ==";
        write!(
            s,
            "GET /ws HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .unwrap();
        let mut buf = Vec::new();
        let mut b = [0u8; 1024];
        let end = loop {
            let n = s.read(&mut b).unwrap();
            assert!(n > 0, "closed during the handshake");
            buf.extend_from_slice(&b[..n]);
            if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break p + 4;
            }
        };
        let head = String::from_utf8_lossy(&buf[..end]).to_string();
        assert!(head.starts_with("HTTP/1.1 101"), "{head}");
        // RFC 6455's own example key and answer.
        assert!(head.to_ascii_lowercase().contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="), "{head}");
        buf.drain(..end);
        Self::opened(s, buf)
    }
    /// A WebSocket after its handshake (`buf`: what came after it): reads the state the server
    /// sends at connect.
    pub fn opened(s: TcpStream, buf: Vec<u8>) -> Self {
        let mut ws = Self { s, buf, hello: serde_json::Value::Null };
        let (op, p) = ws.frame();
        assert_eq!(op, 1, "a text message first");
        ws.hello = serde_json::from_slice(&p).unwrap();
        assert!(ws.hello["state"].is_object(), "{}", ws.hello);
        ws
    }
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.s.write_all(bytes).unwrap();
    }
    pub fn send(&mut self, text: &str) {
        self.send_raw(&client_frame(1, text.as_bytes(), [0x12, 0x34, 0x56, 0x78]));
    }
    /// The next server frame: (opcode, payload).
    pub fn frame(&mut self) -> (u8, Vec<u8>) {
        loop {
            if self.buf.len() >= 2 {
                let len0 = (self.buf[1] & 0x7f) as usize;
                let (hl, len) = match len0 {
                    126 if self.buf.len() >= 4 => (4, u16::from_be_bytes([self.buf[2], self.buf[3]]) as usize),
                    127 if self.buf.len() >= 10 => {
                        (10, u64::from_be_bytes(self.buf[2..10].try_into().unwrap()) as usize)
                    }
                    126 | 127 => (usize::MAX, 0),
                    n => (2, n),
                };
                if hl != usize::MAX && self.buf.len() >= hl + len {
                    let op = self.buf[0] & 0x0f;
                    let payload = self.buf[hl..hl + len].to_vec();
                    self.buf.drain(..hl + len);
                    return (op, payload);
                }
            }
            let mut b = [0u8; 65536];
            let n = self.s.read(&mut b).unwrap();
            assert!(n > 0, "closed");
            self.buf.extend_from_slice(&b[..n]);
        }
    }
    /// The next text reply that is not a row stream message.
    pub fn reply(&mut self) -> serde_json::Value {
        loop {
            let (op, p) = self.frame();
            assert_eq!(op, 1, "{}", String::from_utf8_lossy(&p));
            let v: serde_json::Value = serde_json::from_slice(&p).unwrap();
            if v.get("rows").is_none() {
                return v;
            }
        }
    }
}

pub fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new().name(name.into()).spawn(f).unwrap()
}
