#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The live server under attack (issues 45 and 48), against real served runs: foreign origins
//! and hosts (cross-site WebSocket hijacking, DNS rebinding, a cross-site POST), the access
//! token on all three protocols, values outside an input's range, half-sent clients holding
//! every slot, UDP amplification, and WebSocket protocol errors (RFC 6455).

use live_common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

mod live_common;
mod support;
use support::tmp;

/// `cosim run` of the operator scenario (with `extra` lines added to its `[live]` table),
/// paused, for `stop` s at twice real time.
fn paused_run(dir: &Path, extra: &str, stop: &str) -> (Run, std::path::PathBuf) {
    let sys = operator(dir);
    if !extra.is_empty() {
        let text = std::fs::read_to_string(&sys).unwrap();
        std::fs::write(&sys, text.replace("[live]\n", &format!("[live]\n{extra}\n"))).unwrap();
    }
    let out = dir.join("out");
    let run = start(&[
        "run",
        sys.to_str().unwrap(),
        "--stop-time",
        stop,
        "--real-time",
        "2",
        "--paused",
        "--out",
        out.to_str().unwrap(),
    ]);
    (run, out)
}

/// Sends a raw HTTP request and returns the whole response (the server closes after it).
fn http(addr: &str, request: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// A WebSocket upgrade request.
fn upgrade(path: &str, host: &str, origin: &str) -> String {
    format!(
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nOrigin: {origin}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
}

/// A WebSocket client whose handshake carries `origin` and `path` (e.g. `/ws?token=…`).
fn ws_from(addr: &str, path: &str, origin: &str) -> Ws {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(upgrade(path, addr, origin).as_bytes()).unwrap();
    let mut buf = Vec::new();
    let mut b = [0u8; 1024];
    let end = loop {
        let n = s.read(&mut b).unwrap();
        assert!(n > 0, "closed during the handshake: {}", String::from_utf8_lossy(&buf));
        buf.extend_from_slice(&b[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    assert!(buf.starts_with(b"HTTP/1.1 101"), "{}", String::from_utf8_lossy(&buf));
    buf.drain(..end);
    Ws::opened(s, buf)
}

/// The state of the live input hyd.U_ref a new client is told about: (value, source, paused).
fn input_state(addr: &str) -> (Option<f64>, String, bool) {
    let mut c = Lines::connect(addr);
    let info = c.ask(r#"{"info": true}"#);
    let s = &info["state"];
    let i = &s["inputs"]["hyd.U_ref"];
    (i["value"].as_f64(), i["source"].as_str().unwrap().to_owned(), s["paused"].as_bool().unwrap())
}

#[test]
fn foreign_origins_and_hosts_are_refused_and_change_nothing_the_pages_own_origin_works() {
    let dir = tmp("live-origin");
    let (run, out) = paused_run(&dir, "", "0.3");
    let a = run.addr.clone();
    // Cross-site WebSocket hijacking: a page from elsewhere opens the WebSocket.
    let r = http(&a, &upgrade("/ws", &a, "http://evil.example.com"));
    assert!(r.starts_with("HTTP/1.1 403"), "{r}");
    assert!(r.contains("evil.example.com") && r.contains("allow_origins"), "{r}");
    // DNS rebinding: the page and the WebSocket under a foreign host name.
    let r = http(&a, &format!("GET / HTTP/1.1\r\nHost: evil.example.com:{}\r\n\r\n", a.split(':').nth(1).unwrap()));
    assert!(r.starts_with("HTTP/1.1 403"), "{r}");
    let r = http(&a, &upgrade("/ws", "rebound.example.com", "http://rebound.example.com"));
    assert!(r.starts_with("HTTP/1.1 403"), "{r}");
    // A cross-site fetch(…, {method: "POST", mode: "no-cors", body}) is not read as JSON lines.
    let body = r#"{"set": {"hyd.U_ref": -7.25}, "pause": false, "reset": true}"#;
    let r = http(
        &a,
        &format!(
            "POST / HTTP/1.1\r\nHost: {a}\r\nOrigin: https://evil.example\r\nContent-Type: text/plain\r\n\
             Content-Length: {}\r\n\r\n{body}\n",
            body.len() + 1
        ),
    );
    assert!(r.starts_with("HTTP/1.1 405"), "{r}");
    assert!(!r.contains("\"ok\""), "{r}");
    // Nothing changed: still paused, the input still the table's.
    let (_, source, paused) = input_state(&a);
    assert_eq!((source.as_str(), paused), ("table", true));
    // The page's own origin: the page and its WebSocket are served, and drive the run.
    let r = http(&a, &format!("GET / HTTP/1.1\r\nHost: {a}\r\n\r\n"));
    assert!(r.starts_with("HTTP/1.1 200") && r.contains("<canvas"), "{:.200}", r);
    // No other site may frame it either (a framed Start button is a click away from a trick).
    assert!(r.contains("X-Frame-Options: DENY") && r.contains("frame-ancestors 'none'"), "{:.400}", r);
    let r = http(&a, &format!("GET / HTTP/1.1\r\nHost: localhost:{}\r\n\r\n", a.split(':').nth(1).unwrap()));
    assert!(r.starts_with("HTTP/1.1 200"), "{:.200}", r);
    let mut ws = ws_from(&a, "/ws", &format!("http://{a}"));
    ws.send(r#"{"set": {"hyd.U_ref": -7.25}, "pause": false}"#);
    assert_eq!(ws.reply()["ok"], true);
    drop(ws);
    run.wait();
    let rows = spool(&out);
    assert_eq!(rows.len(), 301);
    assert!(rows[1..].iter().all(|r| r.1 == -7.25), "the own page's value from the first step");
}

#[test]
fn with_a_token_control_needs_it_on_json_lines_websocket_and_udp() {
    let dir = tmp("live-token");
    let token = "op-secret-42";
    let (run, out) = paused_run(&dir, &format!("token = \"{token}\""), "0.3");
    let a = run.addr.clone();
    let needs = |r: &serde_json::Value| r["error"].as_str().is_some_and(|e| e.contains("token"));
    // JSON lines: refused without the token (reading is allowed), accepted with it.
    let mut c = Lines::connect(&a);
    for msg in [
        r#"{"set": {"hyd.U_ref": 5}}"#,
        r#"{"pause": false}"#,
        r#"{"reset": true}"#,
        r#"{"release": "hyd.U_ref"}"#,
        r#"{"set": {"hyd.U_ref": 5}, "token": "wrong-token"}"#,
    ] {
        let r = c.ask(msg);
        assert!(r["error"].is_string() && !r["ok"].is_boolean(), "{msg}: {r}");
    }
    assert!(needs(&c.ask(r#"{"set": {"hyd.U_ref": 5}}"#)));
    assert_eq!(c.ask(r#"{"get": true}"#)["ok"], true);
    assert_eq!(c.ask(r#"{"info": true}"#)["info"]["token_required"], true);
    // WebSocket: the page's URL carries the token to /ws?token=…
    let mut ws = ws_from(&a, "/ws", &format!("http://{a}"));
    ws.send(r#"{"set": {"hyd.U_ref": 5}}"#);
    assert!(needs(&ws.reply()));
    let mut ws = ws_from(&a, &format!("/ws?token={token}"), &format!("http://{a}"));
    ws.send(r#"{"set": {"hyd.U_ref": 3}}"#);
    assert_eq!(ws.reply()["ok"], true);
    // A WebSocket is told the inputs' state as it connects.
    let later = ws_from(&a, "/ws", &format!("http://{a}"));
    let hello = &later.hello;
    assert_eq!(hello["state"]["inputs"]["hyd.U_ref"]["value"], 3.0, "{hello}");
    assert_eq!(
        (hello["state"]["inputs"]["hyd.U_ref"]["source"].as_str(), hello["state"]["paused"].as_bool()),
        (Some("live"), Some(true))
    );
    drop(later);
    // A new client is told the value, its source and the pause state.
    assert_eq!(input_state(&a), (Some(3.0), "live".to_owned(), true));
    // UDP: each datagram carries its own token.
    let (u, cookie) = udp_proven(&a);
    u.send(&with_cookie(r#"{"set": {"hyd.U_ref": 9}}"#, &cookie)).unwrap();
    assert!(needs(&udp_next(&u, false)));
    u.send(&with_cookie(&format!(r#"{{"set": {{"hyd.U_ref": 4}}, "token": "{token}"}}"#), &cookie)).unwrap();
    assert_eq!(udp_next(&u, false)["ok"], true);
    u.send(&with_cookie(r#"{"pause": false}"#, &cookie)).unwrap();
    assert!(needs(&udp_next(&u, false)), "a UDP sender's earlier token does not carry over");
    assert_eq!(input_state(&a), (Some(4.0), "live".to_owned(), true));
    // Given once on a connection, the token holds for it.
    assert_eq!(c.ask(&format!(r#"{{"token": "{token}"}}"#))["ok"], true);
    assert_eq!(c.ask(r#"{"pause": false}"#)["ok"], true);
    drop((c, ws));
    let err = run.wait();
    assert!(err.contains(&format!("?token={token}")), "the page's URL has the token: {err}");
    let rows = spool(&out);
    assert_eq!(rows.len(), 301);
    assert!(rows[1..].iter().all(|r| r.1 == 4.0), "only the values sent with the token were applied");
}

#[test]
fn a_server_bound_beyond_loopback_without_a_token_warns_and_makes_one() {
    let dir = tmp("live-any");
    let sys = operator(&dir);
    let text = std::fs::read_to_string(&sys).unwrap().replace("127.0.0.1:0", "0.0.0.0:0");
    std::fs::write(&sys, text).unwrap();
    // The same [live] address carried by an SSP's settings annotation (issue 48 row 12: a plain
    // `cosim run x.ssp` served an unauthenticated control port on every interface).
    let ssp = dir.join("any.ssp");
    let o = support::cosim(&["export-ssp", sys.to_str().unwrap(), "--out", ssp.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for (input, out) in [(&sys, "out-toml"), (&ssp, "out-ssp")] {
        let out = dir.join(out);
        let run =
            start(&["run", input.to_str().unwrap(), "--stop-time", "0.05", "--paused", "--out", out.to_str().unwrap()]);
        let port = run.addr.split(':').nth(1).unwrap().to_owned();
        let mut c = Lines::connect(&format!("127.0.0.1:{port}"));
        let r = c.ask(r#"{"pause": false}"#);
        assert!(r["error"].as_str().is_some_and(|e| e.contains("token")), "{input:?}: {r}");
        // The run is stopped by the test: kill it (it waits for a Start with the token).
        let mut child = run.child;
        let _ = child.kill();
        let _ = child.wait();
        let err = run.stderr.join().unwrap();
        assert!(err.contains("warning") && err.contains("beyond this machine"), "{input:?}: {err}");
        assert!(err.contains("?token="), "{input:?}: {err}");
    }
}

#[test]
fn out_of_range_sets_are_refused_or_clamped_and_results_csv_shows_the_value_applied() {
    for (clamp, want) in [(false, 5.0), (true, 10.0)] {
        let dir = tmp("live-range");
        let (run, out) = paused_run(&dir, if clamp { "clamp = true" } else { "" }, "0.2");
        let mut c = Lines::connect(&run.addr);
        if clamp {
            let r = c.ask(r#"{"set": {"hyd.U_ref": 1e300}}"#);
            assert_eq!(r["clamped"]["hyd.U_ref"], 10.0, "{r}");
            let r = c.ask(r#"{"set": {"hyd.U_ref": 50}}"#);
            assert_eq!((r["ok"].as_bool(), r["clamped"]["hyd.U_ref"].as_f64()), (Some(true), Some(10.0)), "{r}");
        } else {
            let r = c.ask(r#"{"set": {"hyd.U_ref": 1e300}, "pause": false}"#);
            let e = r["error"].as_str().unwrap_or_else(|| panic!("{r}"));
            assert!(e.contains("hyd.U_ref") && e.contains("[-10, 10]"), "{e}");
            let r = c.ask(r#"{"set": {"hyd.U_ref": 50}}"#);
            assert!(r["error"].as_str().unwrap().contains("outside its range [-10, 10]"), "{r}");
            // Refused whole: the pause in the refused message was not acted on either.
            assert!(input_state(&run.addr).2, "still paused");
            assert_eq!(c.ask(r#"{"set": {"hyd.U_ref": 5}}"#)["ok"], true);
        }
        assert_eq!(c.ask(r#"{"pause": false}"#)["ok"], true);
        drop(c);
        run.wait();
        let rows = spool(&out);
        assert!(rows[1..].iter().all(|r| r.1 == want), "clamp = {clamp}: results.csv has {want} V");
    }
}

#[test]
fn without_a_live_range_the_fmus_min_and_max_bound_a_set() {
    // hydraulics-lumped3 declares U_ref with min -10, max 10 (issue 48 row 9: 1e300 was taken).
    let dir = tmp("live-fmu-range");
    let sys = operator(&dir);
    let text = std::fs::read_to_string(&sys).unwrap();
    let range = text.lines().find(|l| l.starts_with("range = ")).unwrap().to_owned();
    std::fs::write(&sys, text.replace(&range, "")).unwrap();
    let out = dir.join("out");
    let run = start(&[
        "run",
        sys.to_str().unwrap(),
        "--stop-time",
        "0.1",
        "--real-time",
        "2",
        "--paused",
        "--out",
        out.to_str().unwrap(),
    ]);
    let mut c = Lines::connect(&run.addr);
    let info = c.ask(r#"{"info": true}"#);
    assert_eq!(
        (info["info"]["inputs"][0]["min"].as_f64(), info["info"]["inputs"][0]["max"].as_f64()),
        (Some(-10.0), Some(10.0))
    );
    let r = c.ask(r#"{"set": {"hyd.U_ref": 1e300}}"#);
    assert!(r["error"].as_str().is_some_and(|e| e.contains("outside its range [-10, 10]")), "{r}");
    assert_eq!(c.ask(r#"{"set": {"hyd.U_ref": -10}, "pause": false}"#)["ok"], true);
    drop(c);
    run.wait();
    assert!(spool(&out)[1..].iter().all(|r| r.1 == -10.0));
}

#[test]
fn half_sent_clients_do_not_hold_every_slot() {
    let dir = tmp("live-slots");
    let (run, _out) = paused_run(&dir, "", "0.05");
    let a = run.addr.clone();
    // 40 connections that send a fragment and nothing more (and 10 that send nothing).
    let held: Vec<TcpStream> = (0..50)
        .map(|k| {
            let mut s = TcpStream::connect(&a).unwrap();
            if k < 40 {
                let _ = s.write_all(b"{\"xx");
            }
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(1200));
    // After a second the dashboard and a JSON-lines client are served.
    let t = Instant::now();
    let r = http(&a, &format!("GET / HTTP/1.1\r\nHost: {a}\r\n\r\n"));
    assert!(r.starts_with("HTTP/1.1 200"), "{:.100}", r);
    let mut c = Lines::connect(&a);
    assert_eq!(c.ask(r#"{"get": true}"#)["ok"], true);
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    // An unfinished line is closed after 5 s with an error.
    let mut slow = TcpStream::connect(&a).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    slow.write_all(b"{\"get\": tr").unwrap();
    let mut reply = String::new();
    let _ = slow.read_to_string(&mut reply);
    assert!(reply.contains("unfinished"), "{reply}");
    assert_eq!(c.ask(r#"{"pause": false}"#)["ok"], true);
    drop((c, held));
    run.wait();
}

#[test]
fn udp_replies_to_an_unproven_sender_are_never_larger_than_its_datagrams() {
    let dir = tmp("live-amplify");
    let (run, _out) = paused_run(&dir, "", "0.6");
    let a = run.addr.clone();
    let mut c = Lines::connect(&a);
    // A forged sender's small requests: what comes back is no larger than each.
    let u = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    u.connect(&a).unwrap();
    u.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    let mut largest_ratio: f64 = 0.0;
    let mut buf = vec![0u8; 65536];
    for msg in
        [&br#"{"subscribe":1}"#[..], br#"{"info":true}"#, br#"{"get":true}"#, b"garbage", br#"{"subscribe": true}  "#]
    {
        u.send(msg).unwrap();
        let until = Instant::now() + Duration::from_millis(400);
        while Instant::now() < until {
            if let Ok(n) = u.recv(&mut buf) {
                largest_ratio = largest_ratio.max(n as f64 / msg.len() as f64);
            }
        }
    }
    assert!(largest_ratio <= 1.0, "amplification ×{largest_ratio}");
    // The cookie proves the address: then the stream flows.
    let (p, cookie) = udp_proven(&a);
    p.send(&with_cookie(r#"{"subscribe": 1}"#, &cookie)).unwrap();
    assert_eq!(udp_next(&p, false)["subscribed"], true);
    assert_eq!(c.ask(r#"{"pause": false}"#)["ok"], true);
    assert!(udp_next(&p, true)["rows"].as_array().is_some_and(|r| !r.is_empty()));
    // A cookie of another address is refused.
    u.send(&with_cookie(r#"{"subscribe": 1}"#, &cookie)).unwrap();
    let n = u.recv(&mut buf).unwrap_or(0);
    assert!(n <= with_cookie(r#"{"subscribe": 1}"#, &cookie).len());
    if n > 0 {
        let v: serde_json::Value = serde_json::from_slice(&buf[..n]).unwrap();
        assert!(v.get("rows").is_none() && v["subscribed"] != true, "{v}");
    }
    drop(c);
    run.wait();
}

#[test]
fn websocket_protocol_errors_and_odd_values_are_answered_as_rfc_6455_and_the_protocol_say() {
    let dir = tmp("live-ws-rfc");
    let (run, _out) = paused_run(&dir, "", "0.05");
    let a = run.addr.clone();
    let origin = format!("http://{a}");
    // A ping longer than 125 bytes: close 1002.
    let mut ws = ws_from(&a, "/ws", &origin);
    ws.send_raw(&client_frame(9, &[b'p'; 126], [1, 2, 3, 4]));
    let (op, p) = loop {
        let (op, p) = ws.frame();
        if op == 8 {
            break (op, p);
        }
    };
    assert_eq!((op, &p[..2]), (8, &1002u16.to_be_bytes()[..]));
    // A close with code 999 (not one a peer may send): close 1002.
    let mut ws = ws_from(&a, "/ws", &origin);
    ws.send_raw(&client_frame(8, &999u16.to_be_bytes(), [1, 2, 3, 4]));
    let (op, p) = ws.frame();
    assert_eq!((op, &p[..2]), (8, &1002u16.to_be_bytes()[..]));
    // A normal close is echoed.
    let mut ws = ws_from(&a, "/ws", &origin);
    ws.send_raw(&client_frame(8, &1000u16.to_be_bytes(), [1, 2, 3, 4]));
    let (op, p) = ws.frame();
    assert_eq!((op, &p[..2]), (8, &1000u16.to_be_bytes()[..]));
    // A message in two fragments is one message.
    let mut ws = ws_from(&a, "/ws", &origin);
    let mut f1 = client_frame(1, br#"{"get":"#, [5, 6, 7, 8]);
    f1[0] &= 0x7f; // not FIN
    let f2 = client_frame(0, b" true}", [5, 6, 7, 8]);
    ws.send_raw(&[f1, f2].concat());
    assert_eq!(ws.reply()["ok"], true);
    // {"subscribe": false} unsubscribes (no "every"), {"get": 0} is not a yes.
    ws.send(r#"{"subscribe": false}"#);
    let r = ws.reply();
    assert!(r["subscribed"] == false && r.get("every").is_none(), "{r}");
    ws.send(r#"{"get": 0}"#);
    assert!(ws.reply()["error"].as_str().unwrap().contains("get: 0 is not true or false"));
    ws.send(r#"{"pause": false}"#);
    assert_eq!(ws.reply()["ok"], true);
    drop(ws);
    run.wait();
}
