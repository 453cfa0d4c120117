#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Live inputs and outputs (`[live]`, `cosim run --serve`): a value set over JSON lines or a
//! WebSocket reaches the FMU at the next communication point and appears in results.csv;
//! hostile clients (garbage, oversized lines and frames, 1,000 messages/s, abrupt
//! disconnects, more clients than served) leave the run and its results intact.

use live_common::*;
use std::io::{BufRead, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

mod live_common;
mod support;
use fmu_harness::paths;
use support::tmp;

#[test]
fn a_value_set_over_json_lines_reaches_the_fmu_at_the_next_communication_point() {
    let dir = tmp("live-lines");
    let sys = operator(&dir);
    let out = dir.join("out");
    // Paused until the client starts it: the value set before the start acts from step 1.
    let run = start(&[
        "run",
        sys.to_str().unwrap(),
        "--stop-time",
        "1.5",
        "--real-time",
        "2",
        "--paused",
        "--out",
        out.to_str().unwrap(),
    ]);
    let mut c = Lines::connect(&run.addr);
    let info = c.ask(r#"{"info": true}"#);
    assert_eq!(info["info"]["inputs"][0]["name"], "hyd.U_ref");
    assert_eq!(info["info"]["inputs"][0]["max"], 10.0);
    assert_eq!(c.ask(r#"{"set": {"hyd.U_ref": 7.5}}"#)["ok"], true);
    assert_eq!(c.ask(r#"{"pause": false}"#)["ok"], true);
    std::thread::sleep(Duration::from_millis(250));
    assert_eq!(c.ask(r#"{"set": {"hyd.U_ref": -4.0}}"#)["ok"], true);
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(c.ask(r#"{"release": "hyd.U_ref"}"#)["ok"], true);
    let got = c.ask(r#"{"get": true}"#);
    assert!(got["values"]["mech.s"].as_f64().unwrap() > 0.0, "{got}");
    drop(c);
    run.wait();
    seven_point_five_then_minus_four_then_released(&out);
}

/// What the JSON-lines and UDP tests did, in results.csv: 7.5 set before the start, −4 set
/// later, then released (1.5 s at H = 1 ms).
fn seven_point_five_then_minus_four_then_released(out: &Path) {
    let rows = spool(out);
    assert_eq!(rows.len(), 1501);
    // t = 0: the start value; every row from the first step until the second value: 7.5 (the
    // table says 0 there: the live value overrides it).
    assert_eq!(rows[0].1, 0.0);
    assert_eq!(rows[1].1, 7.5, "the value set before the start acts in the first step");
    let second = rows.iter().position(|r| r.1 == -4.0).expect("the second value is recorded");
    assert!(rows[1..second].iter().all(|r| r.1 == 7.5));
    let released = rows.iter().skip(second).position(|r| r.1 != -4.0).expect("released") + second;
    // Released: the table (0 V) again, to the end.
    assert!(rows[released..].iter().all(|r| r.1 == 0.0));
    // The FMU saw it: its spool U follows U_ref (a first-order valve), towards 7.5 then -4.
    assert!(rows[second - 1].2 > 5.0, "U before the second value: {}", rows[second - 1].2);
    assert!(rows[released - 1].2 < -1.0, "U before the release: {}", rows[released - 1].2);
}

#[test]
fn a_value_set_in_a_udp_datagram_reaches_the_fmu_and_garbage_gets_an_error_reply() {
    let dir = tmp("live-udp");
    let sys = operator(&dir);
    let out = dir.join("out");
    let run = start(&[
        "run",
        sys.to_str().unwrap(),
        "--stop-time",
        "1.5",
        "--real-time",
        "2",
        "--paused",
        "--out",
        out.to_str().unwrap(),
    ]);
    // The same port number as the TCP side; the sender proves its address first (the cookie).
    let (u, cookie) = udp_proven(&run.addr);
    let ask = |msg: &[u8]| {
        u.send(msg).unwrap();
        udp_next(&u, false)
    };
    // Proven by a datagram that carries the cookie: from now on replies may be larger than
    // the datagrams that caused them.
    assert_eq!(ask(&with_cookie(r#"{"get": true}"#, &cookie))["ok"], true);
    let info = ask(br#"{"info": true}"#);
    assert_eq!(info["info"]["inputs"][0]["name"], "hyd.U_ref", "{info}");
    // Garbage: each datagram gets an error reply naming what is wrong, and changes nothing.
    for (bad, says) in [
        (&b"hello"[..], "not JSON"),
        (b"\xff\xfe{}", "UTF-8"),
        (b"[1, 2]", "JSON object"),
        (br#"{"set": {"hyd.U_ref": "x"}}"#, "not a number"),
        (br#"{"set": {"hyd.nope": 1}}"#, "not a live input"),
        (br#"{"set": {"hyd.U_ref": 9}, "jump": true}"#, "unknown field"),
        (br#"{"set": {"hyd.U_ref": 50}}"#, "outside its range [-10, 10]"),
        (br#"{"get": 0}"#, "get: 0 is not true or false"),
    ] {
        let r = ask(bad);
        let e = r["error"].as_str().unwrap_or_else(|| panic!("no error for {bad:?}: {r}"));
        assert!(e.contains(says), "{bad:?}: {e}");
    }
    // One message per datagram; a trailing newline is allowed.
    assert_eq!(ask(b"{\"set\": {\"hyd.U_ref\": 7.5}}\n")["ok"], true);
    assert_eq!(ask(&with_cookie(r#"{"pause": false, "subscribe": 10}"#, &cookie))["every"], 10);
    let rows = udp_next(&u, true);
    assert!(rows["rows"].as_array().is_some_and(|r| !r.is_empty()), "{rows}");
    std::thread::sleep(Duration::from_millis(250));
    assert_eq!(ask(br#"{"set": {"hyd.U_ref": -4.0}}"#)["ok"], true);
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(ask(br#"{"release": "hyd.U_ref"}"#)["ok"], true);
    let got = ask(br#"{"get": true}"#);
    assert!(got["values"]["mech.s"].as_f64().unwrap() > 0.0, "{got}");
    run.wait();
    seven_point_five_then_minus_four_then_released(&out);
    // The stream's last datagram carries the final status.
    let mut last = udp_next(&u, true);
    while last["status"] == "running" {
        last = udp_next(&u, true);
    }
    assert_eq!(last["status"], "ok", "{last}");
}

#[test]
fn a_value_set_over_a_websocket_reaches_the_fmu_and_rows_stream_back() {
    let dir = tmp("live-ws");
    let sys = operator(&dir);
    let out = dir.join("out");
    let run = start(&[
        "run",
        sys.to_str().unwrap(),
        "--stop-time",
        "1",
        "--real-time",
        "2",
        "--paused",
        "--out",
        out.to_str().unwrap(),
    ]);
    // The page itself.
    let mut page = TcpStream::connect(&run.addr).unwrap();
    write!(page, "GET / HTTP/1.1\r\nHost: {}\r\n\r\n", run.addr).unwrap();
    let mut html = String::new();
    page.read_to_string(&mut html).unwrap();
    assert!(html.starts_with("HTTP/1.1 200") && html.contains("<canvas") && html.contains("/ws"), "{html:.300}");
    let mut c = Ws::connect(&run.addr);
    c.send(r#"{"info": true, "subscribe": 1}"#);
    let info = c.reply();
    assert_eq!(info["every"], 1, "{info}");
    let columns: Vec<String> = serde_json::from_value(info["info"]["columns"].clone()).unwrap();
    assert_eq!(columns, ["mech.s", "hyd.p1", "hyd.p2", "hyd.p3", "hyd.U_ref", "cylinder.energy"]);
    c.send(r#"{"set": {"hyd.U_ref": -6.25}, "pause": false}"#);
    assert_eq!(c.reply()["ok"], true);
    // A ping is answered with its payload.
    c.send_raw(&client_frame(9, b"hello", [1, 2, 3, 4]));
    // Rows arrive with the live value in them until the run ends.
    let k = 1 + columns.iter().position(|c| c == "hyd.U_ref").unwrap();
    let (mut rows, mut pong, mut last_t, mut skipped) = (0, false, 0.0, 0);
    let mut status = String::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline && (status.is_empty() || status == "running") {
        let (op, p) = c.frame();
        if op == 10 {
            pong = p == b"hello";
            continue;
        }
        let v: serde_json::Value = serde_json::from_slice(&p).unwrap();
        if let Some(rs) = v["rows"].as_array() {
            for r in rs {
                let t = r[0].as_f64().unwrap();
                assert!(t >= last_t, "rows in order");
                last_t = t;
                if t > 0.0 {
                    assert_eq!(r[k].as_f64(), Some(-6.25), "{r}");
                }
                rows += 1;
            }
            status = v["status"].as_str().unwrap().to_owned();
            skipped = v["stats"]["skipped_rows"].as_u64().unwrap();
        }
    }
    assert!(pong, "no pong");
    assert_eq!(status, "ok");
    // Every row is streamed, except those the stepping thread did not wait for while a client
    // read the ring (counted in skipped_rows; a loaded machine skips a few).
    assert!(rows + skipped >= 1000 && last_t == 1.0, "{rows} rows (+ {skipped} skipped) to t = {last_t}");
    drop(c);
    run.wait();
    let spool = spool(&out);
    assert!(spool[1..].iter().all(|r| r.1 == -6.25));
    assert!(spool.last().unwrap().2 < -3.0, "the valve followed: U = {}", spool.last().unwrap().2);
}

#[test]
fn hostile_clients_leave_the_run_and_its_results_intact() {
    let dir = tmp("live-hostile");
    let sys = operator(&dir);
    // The reference: the same system without a server, as fast as possible.
    let plain = dir.join("plain.toml");
    let text = std::fs::read_to_string(&sys).unwrap();
    std::fs::write(&plain, text[..text.find("[live]").unwrap()].replace("real_time = 1.0", "")).unwrap();
    let reference = dir.join("reference");
    let o = support::cosim(&["run", plain.to_str().unwrap(), "--stop-time", "8", "--out", reference.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let out = dir.join("out");
    let run = start(&["run", sys.to_str().unwrap(), "--stop-time", "8", "--out", out.to_str().unwrap()]);
    let addr = run.addr.clone();
    let mut attackers = Vec::new();
    // Garbage of every kind, each answered with an error.
    let a = addr.clone();
    attackers.push(spawn("garbage", move || {
        let mut c = Lines::connect(&a);
        for bad in [
            "garbage",
            "[1, 2]",
            r#"{"set": {"hyd.U_ref": "ten"}}"#,
            r#"{"set": {"hyd.U_ref": 1e400}}"#,
            r#"{"set": {"mech.s": 1.0}}"#,
            r#"{"set": {"hyd.U_ref": 1.0}, "bogus": 1}"#,
            r#"{"release": 3}"#,
            r#"{"pause": "yes"}"#,
            r#"{"subscribe": -1}"#,
        ] {
            let r = c.ask(bad);
            assert!(r["error"].is_string(), "{bad} → {r}");
        }
        c.w.write_all(&[0xff, 0xfe, 0x00, b'\n']).unwrap();
        assert!(c.reply()["error"].as_str().unwrap().contains("UTF-8"));
    }));
    // 1,000 messages/s for a second: refused sets and reads (none changes the run; the run
    // lasts 8 s so that the flood ends before it even on a loaded machine).
    let a = addr.clone();
    attackers.push(spawn("flood", move || {
        let mut c = Lines::connect(&a);
        let t0 = Instant::now();
        for k in 0..1000u32 {
            let msg = if k % 2 == 0 { r#"{"set": {"hyd.U_ref": null}}"# } else { r#"{"get": true}"# };
            c.w.write_all(format!("{msg}\n").as_bytes()).unwrap();
            let mut line = String::new();
            c.r.read_line(&mut line).unwrap();
            assert!(!line.is_empty(), "closed after {k} messages, {:?}", t0.elapsed());
            let r: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert!(r.get("error").is_some() == (k % 2 == 0), "{r}");
            let due = Duration::from_millis(u64::from(k));
            if let Some(wait) = due.checked_sub(t0.elapsed()) {
                std::thread::sleep(wait);
            }
        }
    }));
    // An oversized line: an error, then the connection is closed.
    let a = addr.clone();
    attackers.push(spawn("oversized-line", move || {
        let mut c = Lines::connect(&a);
        let _ = c.w.write_all(&vec![b'x'; 200_000]);
        let r = c.reply();
        assert!(r["error"].as_str().unwrap().contains("longer than"), "{r}");
        let mut rest = String::new();
        assert_eq!(c.r.read_line(&mut rest).unwrap_or(0), 0, "closed after the error");
    }));
    // An oversized WebSocket frame (a 1 GB length): closed with 1009.
    let a = addr.clone();
    attackers.push(spawn("websocket", move || {
        let mut c = Ws::connect(&a);
        let mut c2 = Ws::connect(&a);
        let mut f = vec![0x81, 0x80 | 127];
        f.extend_from_slice(&(1u64 << 30).to_be_bytes());
        f.extend_from_slice(&[1, 2, 3, 4]);
        c.send_raw(&f);
        let (op, p) = c.frame();
        assert_eq!(op, 1, "an error reply first");
        assert!(String::from_utf8_lossy(&p).contains("error"));
        let (op, p) = c.frame();
        assert_eq!((op, &p[..2]), (8, &1009u16.to_be_bytes()[..]));
        // An unmasked frame on another connection: closed with 1002.
        c2.send_raw(&unmasked_frame(1, b"{}"));
        let _ = c2.frame();
        let (op, p) = c2.frame();
        assert_eq!((op, &p[..2]), (8, &1002u16.to_be_bytes()[..]));
    }));
    // UDP: 1,000 datagrams in a second (garbage, refused sets, reads), each answered; more
    // subscribers than served, which then vanish (their sockets closed without a word).
    let a = addr.clone();
    attackers.push(spawn("udp", move || {
        // A proven sender (replies larger than its datagrams).
        let (u, cookie) = udp_proven(&a);
        u.send(&with_cookie(r#"{"get": true}"#, &cookie)).unwrap();
        assert_eq!(udp_next(&u, false)["ok"], true);
        let t0 = Instant::now();
        for k in 0..1000u32 {
            let msg: &[u8] = match k % 4 {
                0 => b"\x00\x01garbage",
                1 => br#"{"set": {"hyd.U_ref": null}}"#,
                2 => br#"{"set": {"hyd.U_ref": 1.0}, "bogus": 1}"#,
                _ => br#"{"get": true}"#,
            };
            u.send(msg).unwrap();
            let r = udp_next(&u, false);
            assert!(r.get("error").is_some() == (k % 4 != 3), "{k}: {r}");
            let due = Duration::from_millis(u64::from(k));
            if let Some(wait) = due.checked_sub(t0.elapsed()) {
                std::thread::sleep(wait);
            }
        }
        let subscribers: Vec<(std::net::UdpSocket, String)> = (0..40).map(|_| udp_proven(&a)).collect();
        let refused = subscribers
            .iter()
            .filter(|(s, cookie)| {
                s.send(&with_cookie(r#"{"subscribe": 1}"#, cookie)).unwrap();
                udp_next(s, false).get("error").is_some()
            })
            .count();
        assert_eq!(refused, 40 - 32, "at most 32 UDP subscribers");
    }));
    // Abrupt disconnects, half-sent requests, and more clients at once than are served.
    let a = addr.clone();
    attackers.push(spawn("disconnects", move || {
        // After the others have connected (beyond 32 clients new ones are closed at once).
        std::thread::sleep(Duration::from_millis(300));
        for round in 0..5 {
            let mut held = Vec::new();
            for k in 0..40 {
                let Ok(mut s) = TcpStream::connect(&a) else { continue };
                let _ = match k % 4 {
                    0 => s.write_all(b"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\n"),
                    1 => s.write_all(b"{\"set\": {\"hyd.U_r"),
                    2 => s.write_all(b"{\"subscribe\": 1}\n"),
                    _ => Ok(()),
                };
                held.push(s);
            }
            std::thread::sleep(Duration::from_millis(50 + 20 * round));
            drop(held);
        }
    }));
    for a in attackers {
        a.join().unwrap();
    }
    // Still served after all that.
    let mut c = Lines::connect(&addr);
    assert_eq!(c.ask(r#"{"get": true}"#)["ok"], true);
    drop(c);
    run.wait();
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["status"], "ok");
    assert_eq!(s["steps"], 8000);
    // The results are those of the run without any client, bit for bit.
    assert_eq!(
        std::fs::read_to_string(out.join("results.csv")).unwrap(),
        std::fs::read_to_string(reference.join("results.csv")).unwrap()
    );
    assert_eq!(
        std::fs::read_to_string(out.join("bonds.csv")).unwrap(),
        std::fs::read_to_string(reference.join("bonds.csv")).unwrap()
    );
}

#[test]
fn live_table_errors_name_the_key_and_value() {
    let dir = tmp("live-bad");
    let sys = operator(&dir);
    let text = std::fs::read_to_string(&sys).unwrap();
    for (from, to, needles) in [
        ("inputs = [\"hyd.U_ref\"]", "inputs = [\"hyd.s\"]", &["live.inputs[0]", "hyd.s", "connection"][..]),
        ("inputs = [\"hyd.U_ref\"]", "inputs = [\"hyd.p1\"]", &["live.inputs[0]", "not a Real input"][..]),
        ("outputs = [\"mech.s\",", "outputs = [\"mech.zz\",", &["outputs.variables", "no variable \"zz\""][..]),
        ("[-10.0, 10.0]", "[10.0, -10.0]", &["live.range", "not a range"][..]),
        ("addr = \"127.0.0.1:0\"", "addr = \"no-such-host-x:1\"", &["live server address", "no-such-host-x"][..]),
        ("keys = {", "colour = 1\nkeys = {", &["colour"][..]),
    ] {
        let p = dir.join("bad.toml");
        std::fs::write(&p, text.replace(from, to)).unwrap();
        let o = support::cosim(&[
            "run",
            p.to_str().unwrap(),
            "--stop-time",
            "0.01",
            "--out",
            dir.join("o").to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{to}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        for n in needles {
            assert!(err.contains(n), "{to}: expected {n:?} in {err}");
        }
    }
}

#[test]
fn the_dashboard_in_headless_chromium_moves_the_spool_and_both_the_plot_and_the_results_respond() {
    // Debian's chromium + chromium-driver (`cargo xtask test` installs them) and selenium (cargo xtask test
    // installs it into .venv).
    let python = paths::python();
    let selenium = Command::new(&python).args(["-c", "import selenium"]).output().is_ok_and(|o| o.status.success());
    assert!(
        selenium && Path::new("/usr/bin/chromium").exists() && Path::new("/usr/bin/chromedriver").exists(),
        "the browser test needs `apt-get install chromium chromium-driver` and selenium in {} \
         (cargo xtask test installs it)",
        python.display()
    );
    let dir = tmp("live-browser");
    let sys = operator(&dir);
    let out = dir.join("out");
    // Paused until the page's Start button; 12 s of real time.
    let run = start(&["run", sys.to_str().unwrap(), "--stop-time", "12", "--paused", "--out", out.to_str().unwrap()]);
    let script = paths::root().join("cosim-cli/tests/browser/dashboard.py");
    let o = Command::new(&python).arg(&script).arg(format!("http://{}/", run.addr)).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}\n{}", String::from_utf8_lossy(&o.stdout));
    let page: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    eprintln!("the page saw: {page}");
    run.wait();
    let slider = page["slider"].as_f64().unwrap();
    assert!(slider > 5.0 && slider <= 10.0, "the drag moved the slider to {slider} V");
    assert!(page["plot_pixels"].as_u64().unwrap() > 100, "the plot of mech.s is drawn: {page}");
    // results.csv: 0 V (neutral) until the operator's value, which holds to the end.
    let (h, rows) = results(&out);
    let (is, ir) = (col(&h, "mech.s"), col(&h, "hyd.U_ref"));
    let first = rows.iter().position(|r| r[ir] == slider).expect("the slider's value is in results.csv");
    assert!(first > 1 && rows[..first].iter().all(|r| r[ir] == 0.0));
    assert!(rows[first..].iter().all(|r| r[ir] == slider));
    let s_first = rows[first][is];
    let s_end = rows.last().unwrap()[is];
    assert!(s_end > s_first + 0.02, "the piston moved out: s from {s_first} to {s_end} m");
    // The page plotted exactly what the run recorded.
    for (t, s) in [("t0", "s0"), ("t1", "s1")] {
        let t = page[t].as_f64().unwrap();
        let row = rows.iter().find(|r| (r[0] - t).abs() < 1e-9).unwrap();
        assert_eq!(row[is], page[s].as_f64().unwrap(), "mech.s at t = {t}: page vs results.csv");
    }
    assert!(page["s1"].as_f64().unwrap() > page["s0"].as_f64().unwrap() + 0.005, "{page}");
    // Axis labels with units in engineering scale.
    for (c, label) in [
        ("mech.s", "mech.s [mm]"),
        ("hyd.p1", "hyd.p1 [bar]"),
        ("hyd.U_ref", "hyd.U_ref [V]"),
        ("cylinder.energy", "cylinder.energy [J]"),
    ] {
        assert_eq!(page["labels"][c], label, "{page}");
    }
    assert_eq!(page["start_disabled_paused"], false, "Start is enabled while paused");
    // The schematic's boom turned (counter-clockwise on screen: a more negative angle) as the
    // piston went out.
    let angle = |k: &str| {
        let t = page[k].as_str().unwrap_or_else(|| panic!("{k}: {page}"));
        t.split("rotate(").nth(1).unwrap().split(' ').next().unwrap().parse::<f64>().unwrap()
    };
    assert!(angle("boom1") < angle("boom0") - 0.3, "the boom turned: {} -> {} deg", angle("boom0"), angle("boom1"));
    // A second page opened later shows the slider where the first left it.
    assert_eq!(page["second_slider"].as_f64(), Some(slider), "{page}");
    // It got the history the server keeps, not only rows from its opening on.
    assert!(page["history_s"].as_f64().unwrap() > 1.0, "{page}");
    // A phone: every plot at least 150 px high, nothing wider than the screen; 1080p: every
    // plot above the fold.
    let phone = &page["sizes"]["390x844"];
    assert!(phone[0].as_f64().unwrap() >= 150.0 && phone[1].as_f64().unwrap() <= 390.0, "{phone}");
    let hd = &page["sizes"]["1920x1080"];
    assert!(hd[2].as_f64().unwrap() <= 1080.0 && hd[3] == 6, "{hd}");
}

#[test]
fn a_reset_runs_the_system_again_from_its_start_into_the_same_files() {
    let dir = tmp("live-reset");
    let sys = operator(&dir);
    let out = dir.join("out");
    let run = start(&[
        "run",
        sys.to_str().unwrap(),
        "--stop-time",
        "1",
        "--real-time",
        "2",
        "--paused",
        "--out",
        out.to_str().unwrap(),
    ]);
    let mut c = Lines::connect(&run.addr);
    assert_eq!(c.ask(r#"{"set": {"hyd.U_ref": 5.0}, "pause": false}"#)["ok"], true);
    std::thread::sleep(Duration::from_millis(200));
    // Mid-run: released and started again; the second run never sees the 5 V.
    assert_eq!(c.ask(r#"{"release": "hyd.U_ref", "reset": true}"#)["ok"], true);
    assert!(c.ask(r#"{"reset": 1}"#)["error"].as_str().unwrap().contains("reset"));
    drop(c);
    let err = run.wait();
    assert!(err.contains("live: reset at t = "), "{err}");
    let rows = spool(&out);
    assert_eq!(rows.len(), 1001, "one complete run in results.csv");
    assert!(rows.iter().all(|r| r.1 == 0.0 && r.2 == 0.0), "the run after the reset has the spool in neutral");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!((s["status"].as_str(), s["steps"].as_u64()), (Some("ok"), Some(1000)), "{s}");
    // Issue 48 (low item): summary.json says the run was reset, and when.
    let resets = s["live_resets"].as_array().unwrap_or_else(|| panic!("no live_resets in {s}"));
    assert_eq!(resets.len(), 1, "{s}");
    assert!(resets[0].as_f64().is_some_and(|t| t > 0.0 && t < 1.0), "{s}");
}

#[test]
fn cosim_serve_of_the_exported_ssp_waits_for_start_and_serves_the_same_live_variables() {
    let dir = tmp("live-serve-ssp");
    let sys = operator(&dir);
    let ssp = dir.join("operator.ssp");
    let o = support::cosim(&["export-ssp", sys.to_str().unwrap(), "--out", ssp.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // What the system file serves, asked of a paused `cosim run --serve`.
    let toml_run = start(&[
        "run",
        sys.to_str().unwrap(),
        "--stop-time",
        "0.01",
        "--paused",
        "--out",
        dir.join("o1").to_str().unwrap(),
    ]);
    let mut c = Lines::connect(&toml_run.addr);
    let want = c.ask(r#"{"info": true}"#)["info"].clone();
    assert_eq!(c.ask(r#"{"pause": false}"#)["ok"], true);
    drop(c);
    toml_run.wait();
    // `cosim serve` of the SSP: its [live] (in our settings annotation) serves the same inputs
    // (ranges, keys) and columns, on the address the annotation gives (port 0: a free one).
    let out = dir.join("o2");
    let run =
        start(&["serve", ssp.to_str().unwrap(), "--stop-time", "0.3", "--timing", "--out", out.to_str().unwrap()]);
    let mut c = Lines::connect(&run.addr);
    let info = c.ask(r#"{"info": true}"#)["info"].clone();
    for key in ["inputs", "columns", "start", "step"] {
        assert_eq!(info[key], want[key], "{key}: the SSP serves what the system file serves");
    }
    assert_eq!(info["stop"], 0.3);
    assert_eq!(info["inputs"][0]["keys"][0], "ArrowUp", "{info}");
    // Paused until a client starts it: only the start row is published meanwhile.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(c.ask(r#"{"get": true}"#)["published"], 1);
    assert_eq!(c.ask(r#"{"set": {"hyd.U_ref": 6.0}, "pause": false}"#)["ok"], true);
    drop(c);
    run.wait();
    let rows = spool(&out);
    assert_eq!(rows.len(), 301);
    assert!(rows[1..].iter().all(|r| r.1 == 6.0), "the value set before the start holds from step 1");
    // In real time (factor 1) by default.
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["real_time"]["factor"], 1.0, "{s}");
    assert_eq!(s["real_time"]["steps"], 300, "{s}");
    assert!(s["real_time"]["paused_s"].as_f64().unwrap() >= 0.25, "it waited for the start: {s}");
}
