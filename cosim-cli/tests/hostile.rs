#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Hostile inputs of issue 22 (items 7–10, 13): huge and deeply nested model descriptions, names
//! that need CSV quoting, unrepresentable times, own steps of interpolating FMUs, and the small
//! items. The FMUs are C FMUs built here with the system's `cc` (`cfmu/`).

mod cfmu;
mod support;

use cfmu::Spec;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::{cosim, tmp};

/// Runs `cosim args` and waits at most `limit` for it: a guard against hangs (the quadratic
/// readers of issue 22 took minutes), not a speed measurement (see the `read` benchmark).
fn cosim_within(args: &[&str], limit: Duration) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_cosim"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_within(child, limit, args)
}

/// Waits for `child` (its pipes drained by threads, so a chatty child cannot block), killing it
/// and failing after `limit`.
fn wait_within(mut child: Child, limit: Duration, what: &[&str]) -> Output {
    fn drain(mut r: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    }
    let out = child.stdout.take().map(drain);
    let err = child.stderr.take().map(drain);
    let t0 = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("cosim {what:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let join = |h: Option<std::thread::JoinHandle<Vec<u8>>>| h.map(|h| h.join().unwrap()).unwrap_or_default();
    Output { status, stdout: join(out), stderr: join(err) }
}

/// Whether `e` names `file` and, after it, `rest`: `file: rest` or, with the line of the key,
/// `file:LINE: rest`.
fn at(e: &str, file: &str, rest: &str) -> bool {
    e.contains(&format!("{file}: {rest}"))
        || e.match_indices(&format!("{file}:")).any(|(i, m)| {
            let after = &e[i + m.len()..];
            let digits = after.chars().take_while(char::is_ascii_digit).count();
            digits > 0 && after[digits..].starts_with(&format!(": {rest}"))
        })
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The fields of the CSV text, per RFC 4180 (quoted fields with doubled quotes, CRLF or LF):
/// an implementation independent of the writer.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    field.push('"');
                    chars.next();
                }
                '"' => quoted = false,
                c => field.push(c),
            }
            continue;
        }
        match c {
            '"' if field.is_empty() => quoted = true,
            ',' => row.push(std::mem::take(&mut field)),
            '\r' => {}
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            c => field.push(c),
        }
    }
    assert!(!quoted, "unterminated quoted field");
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

// ---------------------------------------------------------------------------------------------
// Item 7: linear-time reading

#[test]
fn huge_one_line_and_deeply_nested_descriptions_are_read_in_linear_time() {
    let dir = tmp("linear-md");
    // 20 000 variables on one line (main: 73 s in `cosim info`, quadratic column counting).
    let mut wide = Spec::new("wide");
    wide.n_real = 20_000;
    wide.one_line = true;
    let wide = wide.build(&dir);
    let o = cosim_within(&["info", s(&wide)], Duration::from_secs(60));
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("y19999"), "the last variable is listed");

    // 200 000 nested elements in a vendor annotation, on one line (main: 22 s).
    let mut deep = Spec::new("deep");
    deep.vendor_annotation = format!("{}{}", "<a>".repeat(200_000), "</a>".repeat(200_000));
    let deep = deep.build(&dir);
    let o = cosim_within(&["info", s(&deep)], Duration::from_secs(60));
    assert!(o.status.success(), "{}", stderr(&o));

    // An error at the end of such a line still has the right column (counted in characters).
    let mut bad = Spec::new("bad");
    bad.n_real = 5_000;
    bad.one_line = true;
    let xml = bad.description().replacen("<ModelStructure>", "<ModelStructure><Outputs x=1/>", 1);
    let xml = format!("\n{xml}"); // the description on line 2
    let column = xml.lines().nth(1).unwrap().find("x=1").unwrap() + 3; // at the unquoted 1
    let md = model_description::from_str(&xml).unwrap_err();
    assert_eq!((md.line(), md.column() as usize), (2, column), "{md}");
}

#[test]
fn a_run_with_100000_outputs_is_set_up_in_linear_time() {
    let dir = tmp("many-outputs");
    let mut spec = Spec::new("many");
    spec.n_real = 100_004;
    let fmu = spec.build(&dir);
    let out = dir.join("out");
    // main: 12 s (release) in Coupling::new (now Coupling::build), a linear search per output.
    let o = cosim_within(&["run", s(&fmu), "--stop-time", "0.2", "--out", s(&out)], Duration::from_secs(90));
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let rows = parse_csv(&csv);
    assert_eq!(rows.len(), 4, "header and t = 0, 0.1, 0.2");
    assert_eq!(rows[0].len(), 100_004, "time and 100 003 outputs");
    assert_eq!(rows[0][100_003], "many.y100003");
    assert_eq!(rows[3][100_003].parse::<f64>().unwrap(), 100_003.0);
}

// ---------------------------------------------------------------------------------------------
// Item 8: names in CSV headers

#[test]
fn names_with_commas_quotes_and_newlines_are_quoted_in_csv_headers() {
    let dir = tmp("csv-names");
    let mut spec = Spec::new("named");
    spec.names = ["u", "x,1", "n \"q\"", "t\nline"].map(String::from).to_vec();
    spec.build(&dir);
    let system = write(
        &dir,
        "names.toml",
        r#"[simulation]
stop = 0.3
step = 0.1
[instances.'a,"b"']
fmu = "named.fmu"
[instances.c]
fmu = "named.fmu"
[[bonds]]
name = "p,\"q\"\nr"
ports = [ { instance = 'a,"b"', effort = "x,1", flow = "n \"q\"" }, { instance = "c", effort = "x,1", flow = "t\nline" } ]
"#,
    );
    let out = dir.join("out");
    let o = cosim(&["run", s(&system), "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));

    let results = parse_csv(&std::fs::read_to_string(out.join("results.csv")).unwrap());
    let mut header = vec!["time".to_owned()];
    for inst in ["a,\"b\"", "c"] {
        for var in ["x,1", "n \"q\"", "t\nline"] {
            header.push(format!("{inst}.{var}"));
        }
    }
    assert_eq!(results[0], header);
    assert_eq!(results.len(), 5, "header and t = 0 … 0.3");
    assert!(results.iter().all(|r| r.len() == header.len()), "every row has one field per column");
    // n counts the steps: 3 at t = 0.3.
    assert_eq!(results[4][2].parse::<f64>().unwrap(), 3.0);

    let bonds = parse_csv(&std::fs::read_to_string(out.join("bonds.csv")).unwrap());
    let b = "p,\"q\"\nr";
    assert_eq!(
        bonds[0],
        ["time".to_owned(), format!("{b}.dP"), format!("{b}.dE"), format!("{b}.E"), format!("{b}.E_abs")]
    );
    assert!(bonds.iter().all(|r| r.len() == 5));
}

#[test]
fn duplicate_bond_names_are_refused() {
    let dir = tmp("dup-bonds");
    Spec::new("d").build(&dir);
    let port =
        r#"ports = [ { instance = "a", effort = "x", flow = "n" }, { instance = "b", effort = "x", flow = "n" } ]"#;
    let system = write(
        &dir,
        "dup.toml",
        &format!(
            "[simulation]\nstop = 0.3\nstep = 0.1\n[instances.a]\nfmu = \"d.fmu\"\n[instances.b]\nfmu = \"d.fmu\"\n\
             [[bonds]]\nname = \"p\"\n{port}\n[[bonds]]\nname = \"p\"\n{port}\n"
        ),
    );
    let o = cosim(&["run", s(&system), "--out", s(&dir.join("out"))]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(at(&e, "dup.toml", "bonds[1].name: bond name \"p\" is already used by bonds[0]"), "{e}");
    assert!(!dir.join("out/results.csv").exists(), "refused before any output");
}

// ---------------------------------------------------------------------------------------------
// Item 9: time arithmetic

/// A system of one C FMU with `[simulation]` lines `sim`.
fn clock_system(dir: &Path, name: &str, sim: &str) -> PathBuf {
    if !dir.join("clock.fmu").exists() {
        Spec::new("clock").build(dir);
    }
    write(dir, name, &format!("[simulation]\n{sim}\n[instances.c]\nfmu = \"clock.fmu\"\n"))
}

#[test]
fn unrepresentable_times_and_huge_step_counts_are_refused() {
    let dir = tmp("times");
    let out = dir.join("out");
    let run = |system: &Path, extra: &[&str]| {
        let mut args = vec!["run", s(system), "--out", s(&out)];
        args.extend_from_slice(extra);
        let o = cosim_within(&args, Duration::from_secs(60));
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(!out.join("results.csv").exists(), "refused before any output: {}", stderr(&o));
        stderr(&o)
    };
    // main: ran forever, time −1e308 on every row.
    let f = clock_system(&dir, "overflow.toml", "start = -1e308\nstop = 1e308\nstep = 1e-3");
    let e = run(&f, &[]);
    assert!(at(&e, "overflow.toml", "simulation.stop: stop - start = 1e308 - (-1e308) s overflows a double"), "{e}");
    // main: "16000 steps" with two distinct times.
    let f = clock_system(&dir, "coarse.toml", "start = 1e17\nstop = 100000000000000016\nstep = 1e-3");
    let e = run(&f, &[]);
    assert!(at(&e, "coarse.toml", "simulation.step: step 1e-3 s is not representable at t = 1.0000000000000002e17 s (doubles there are 1.6e1 s apart"), "{e}");
    // main: 1e24 steps accepted.
    let f = clock_system(&dir, "many.toml", "stop = 1e21\nstep = 1e-3");
    let e = run(&f, &[]);
    assert!(at(&e, "many.toml", "simulation.step: step 1e-3 s is not representable at t = 1e21 s"), "{e}");
    // 1e10 steps: representable, but refused unless forced (main: accepted silently).
    let f = clock_system(&dir, "long.toml", "stop = 1e7\nstep = 1e-3");
    let e = run(&f, &[]);
    assert!(
        at(
            &e,
            "long.toml",
            "simulation.step: instance c would take 1e10 communication steps = 1e10 fmi2DoStep calls (more than 1e9"
        ),
        "{e}"
    );
    assert!(e.contains("--force"), "{e}");
    // The same count from the command line blames the flag, not the file's key.
    let f = clock_system(&dir, "short.toml", "stop = 1\nstep = 1e-3");
    let e = run(&f, &["--stop-time", "1e7"]);
    assert!(at(&e, "short.toml", "--stop-time: instance c would take 1e10"), "{e}");
    let e = run(&f, &["--step", "0.3"]);
    assert!(at(&e, "short.toml", "--step: stop - start = 1 s is not a whole number"), "{e}");
    let e = run(&f, &["--stop-time", "1.0005"]);
    assert!(at(&e, "short.toml", "--stop-time: stop - start = 1.0005 s is not a whole number"), "{e}");
    // An own step of 1e-10 s: 1e9 sub-steps per H = 0.1 s (1e-13 s is not representable at t = 1 s).
    let f = write(
        &dir,
        "substeps.toml",
        "[simulation]\nstop = 1\nstep = 0.1\n[instances.c]\nfmu = \"clock.fmu\"\nstep = 1e-10\n",
    );
    let e = run(&f, &[]);
    assert!(
        at(
            &e,
            "substeps.toml",
            "instances.c.step: instance c would take 1e1 communication steps of 1000000000 sub-steps each"
        ),
        "{e}"
    );

    // Forced, the long run starts; stopped here with SIGTERM, it ends as interrupted and leaves
    // nothing in its (private) TMPDIR.
    let f = clock_system(&dir, "forced.toml", "stop = 1e7\nstep = 1e-3");
    let private_tmp = dir.join("tmp");
    std::fs::create_dir_all(&private_tmp).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cosim"))
        .args(["run", s(&f), "--out", s(&out), "--force"])
        .env("TMPDIR", &private_tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while std::fs::metadata(out.join("results.csv")).map_or(0, |m| m.len()) < 100_000 {
        assert!(child.try_wait().unwrap().is_none(), "the forced run ended early");
        assert!(t0.elapsed() < Duration::from_secs(60), "no results after 60 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    let term = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(term.success());
    let o = wait_within(child, Duration::from_secs(60), &["run", "forced.toml"]);
    assert_eq!(o.status.code(), Some(143), "128 + SIGTERM");
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(summary.contains("\"status\": \"interrupted\""), "{summary}");
    assert_eq!(std::fs::read_dir(&private_tmp).unwrap().count(), 0, "temporary folders left");
}

// ---------------------------------------------------------------------------------------------
// Item 10: own step of an FMU that interpolates inputs

#[test]
fn an_interpolating_fmu_is_stepped_with_its_own_step() {
    let dir = tmp("own-step");
    let mut spec = Spec::new("interp");
    spec.interpolate = true;
    spec.build(&dir);
    // u(t) = t from a linear time table; the FMU holds u over each fmi2DoStep (x' = u).
    let system = write(
        &dir,
        "own.toml",
        r#"[simulation]
stop = 1.0
step = 0.1
[instances.a]
fmu = "interp.fmu"
step = 0.025
[[inputs]]
to = "a.u"
times = [0.0, 1.0]
values = [0.0, 1.0]
interpolation = "linear"
"#,
    );
    let out = dir.join("out");
    let o = cosim(&["run", s(&system), "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = parse_csv(&std::fs::read_to_string(out.join("results.csv")).unwrap());
    assert_eq!(rows[0], ["time", "a.x", "a.n", "a.t"]);
    let last: Vec<f64> = rows.last().unwrap().iter().map(|v| v.parse().unwrap()).collect();
    // 10 communication steps of 4 sub-steps (main: 10 calls, the own step ignored).
    assert_eq!(last[2], 40.0);
    // x(1) = Σ_j u(t_j)·h over the sub-step grid t_j = j·h, h = 0.025: a left Riemann sum of
    // ∫t dt, T²/2 − T·h/2 = 0.4875 (each sub-step starts from the table's value there; with
    // one step per H it would be 0.45).
    assert!((last[1] - 0.4875).abs() < 1e-12, "x(1) = {}", last[1]);
    assert!((last[3] - 1.0).abs() < 1e-12, "t = {}", last[3]);
}

// ---------------------------------------------------------------------------------------------
// Item 13: the small ones

/// The one "error: …" line of a failed run.
fn error_line(o: &Output) -> String {
    let e = stderr(o);
    e.lines().find(|l| l.starts_with("error: ")).unwrap_or_else(|| panic!("no error line in {e}")).to_owned()
}

#[test]
fn messages_name_the_os_error_and_the_file_once() {
    let dir = tmp("once");
    let missing = dir.join("missing.toml");
    let o = cosim(&["run", s(&missing)]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(error_line(&o), format!("error: {}: No such file or directory (os error 2)", missing.display()));
    let o = cosim(&["info", s(&dir.join("missing.fmu"))]);
    assert_eq!(error_line(&o).matches("(os error 2)").count(), 1, "{}", error_line(&o));

    let system = write(&dir, "nofmu.toml", "[simulation]\nstop = 1\nstep = 0.1\n[instances.a]\nfmu = \"gone.fmu\"\n");
    // … and names the system file and the key that asked for the FMU, in process or isolated.
    let out = dir.join("out");
    for isolate in [false, true] {
        let mut args = vec!["run", s(&system), "--out", s(&out)];
        if isolate {
            args.push("--isolate");
        }
        let line = error_line(&cosim(&args));
        assert_eq!(line.matches("(os error 2)").count(), 1, "{line}");
        assert_eq!(line.matches("gone.fmu").count(), 1, "{line}");
        assert!(at(&line, "nofmu.toml", "instances.a.fmu: "), "{line}");
    }
    // A system-file error names the file once (main: "running x.toml: x.toml: …").
    let system =
        write(&dir, "bad.toml", "[simulation]\nstop = 1\nstep = 0.1\n[instances.a]\nfmu = \"gone.fmu\"\nstep = 0.03\n");
    Spec::new("gone").build(&dir);
    let o = cosim(&["run", s(&system), "--out", s(&dir.join("out"))]);
    let line = error_line(&o);
    assert_eq!(line.matches("bad.toml").count(), 1, "{line}");
    assert!(at(&line, "bad.toml", "instances.a.step: step 0.03 s does not divide"), "{line}");
}

#[test]
fn info_says_runs_with_cosim_no_for_fmus_that_run_refuses() {
    let dir = tmp("info-runs");
    let good = Spec::new("good").build(&dir);
    let info = |fmu: &Path| {
        let o = cosim(&["info", s(fmu)]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        out.lines().find(|l| l.starts_with("Runs with cosim:")).unwrap().to_owned()
    };
    let runs = |fmu: &Path| cosim(&["run", s(fmu), "--out", s(&dir.join("out"))]).status.success();
    assert_eq!(info(&good), "Runs with cosim:  yes (binaries/linux64/good.so)");
    assert!(runs(&good));

    // A symbolic link entry (refused by the extraction).
    let spec = Spec::new("good");
    let linked = dir.join("linked.fmu");
    {
        let mut w = zip::ZipWriter::new(std::fs::File::create(&linked).unwrap());
        let o = zip::write::SimpleFileOptions::default();
        let mut src = zip::ZipArchive::new(std::fs::File::open(&good).unwrap()).unwrap();
        for i in 0..src.len() {
            w.raw_copy_file(src.by_index(i).unwrap()).unwrap();
        }
        w.add_symlink("resources/passwd", "/etc/passwd", o).unwrap();
        w.finish().unwrap();
    }
    assert_eq!(
        info(&linked),
        "Runs with cosim:  no: entry \"resources/passwd\" refused: symbolic links are not allowed in an FMU"
    );
    assert!(!runs(&linked));

    // A binary that is not ELF.
    let text = dir.join("text.fmu");
    spec.package(&text, b"#!/bin/sh\necho not a library\n");
    assert_eq!(
        info(&text),
        "Runs with cosim:  no: binaries/linux64/good.so is not an ELF file (a Linux shared library)"
    );
    assert!(!runs(&text));

    // A library without fmi2DoStep.
    let mut nostep = Spec::new("nostep");
    nostep.cflags.push("-DOMIT_DOSTEP".into());
    let nostep = nostep.build(&dir);
    assert_eq!(
        info(&nostep),
        "Runs with cosim:  no: binaries/linux64/nostep.so does not export fmi2DoStep (required FMI 2.0 Co-Simulation functions)"
    );
    assert!(!runs(&nostep));
}

/// Writes `name` with a system of instances `a` (and `b`) of `fmu` plus `extra` lines.
fn system_of(dir: &Path, name: &str, fmu: &str, extra: &str) -> PathBuf {
    write(
        dir,
        name,
        &format!(
            "[simulation]\nstop = 1\nstep = 0.1\n{extra}\n[instances.a]\nfmu = \"{fmu}\"\n[instances.b]\nfmu = \"{fmu}\"\n"
        ),
    )
}

fn refused(dir: &Path, system: &Path) -> String {
    let out = dir.join("out");
    let o = cosim_within(&["run", s(system), "--out", s(&out)], Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(!out.join("results.csv").exists(), "refused before any output");
    error_line(&o)
}

#[test]
fn configuration_errors_of_the_small_items_are_refused_up_front() {
    let dir = tmp("small");
    Spec::new("plain").build(&dir);
    // iterations > 1 without canGetAndSetFMUstate (main: fmi2Error at t = 0).
    let f = system_of(&dir, "iter.toml", "plain.fmu", "iterations = 3\n[[connections]]\nfrom = \"a.x\"\nto = \"b.u\"");
    let e = refused(&dir, &f);
    assert!(
        at(&e, "iter.toml", "simulation.iterations: iterations = 3 repeats each step from saved FMU states, but a (plain), b (plain) cannot get and set FMU states"),
        "{e}"
    );
    // Gauss-Seidel with iterations (main: ignored).
    let f = system_of(&dir, "gs.toml", "plain.fmu", "iterations = 3\nalgorithm = \"gauss-seidel\"");
    let e = refused(&dir, &f);
    assert!(at(&e, "gs.toml", "simulation.iterations: iterations = 3: iterative coupling is a Jacobi scheme, the gauss-seidel algorithm would ignore it"), "{e}");
    // I2 derivatives that are not Real outputs (main: accepted).
    let f = system_of(
        &dir,
        "i2.toml",
        "plain.fmu",
        "[[connections]]\nfrom = \"a.x\"\nto = \"b.u\"\nextrapolation = \"I2\"\nderivatives = [\"a.n\", \"b.u\"]",
    );
    let e = refused(&dir, &f);
    assert!(
        at(
            &e,
            "i2.toml",
            "connections[0].extrapolation.derivatives[1]: b.u is a Real input: I2 derivatives must be Real outputs"
        ),
        "{e}"
    );
    // A worker timeout that is not a positive duration, in process and isolated.
    for extra in ["", "isolate = true\n"] {
        let f = system_of(&dir, "timeout.toml", "plain.fmu", &format!("{extra}worker_timeout = -1"));
        let e = refused(&dir, &f);
        assert!(at(&e, "timeout.toml", "simulation.worker_timeout: -1 s must be positive and at most 1e9 s"), "{e}");
    }
    // An empty [instances] table (main: ran 10 steps of nothing).
    let f = write(&dir, "empty.toml", "[simulation]\nstop = 1\nstep = 0.1\n[instances]\n");
    let e = refused(&dir, &f);
    assert!(at(&e, "empty.toml", "instances: no instances"), "{e}");
    // A feedthrough output connected to its own instance's input: an algebraic loop like one
    // through two instances (main: accepted).
    let mut ft = Spec::new("ft");
    ft.feedthrough = true;
    ft.build(&dir);
    let f = system_of(&dir, "self.toml", "ft.fmu", "[[connections]]\nfrom = \"a.x\"\nto = \"a.u\"");
    let e = refused(&dir, &f);
    assert!(
        at(
            &e,
            "self.toml",
            "connections: algebraic loop: outputs with direct feedthrough form a cycle through instances a -> a"
        ),
        "{e}"
    );
    let f = system_of(
        &dir,
        "two.toml",
        "ft.fmu",
        "[[connections]]\nfrom = \"a.x\"\nto = \"b.u\"\n[[connections]]\nfrom = \"b.x\"\nto = \"a.u\"",
    );
    let e = refused(&dir, &f);
    assert!(at(&e, "two.toml", "connections: algebraic loop"), "{e}");
}

#[test]
fn record_every_keeps_the_final_point() {
    let dir = tmp("record-every");
    Spec::new("plain").build(&dir);
    let bond = "[[bonds]]\nname = \"p\"\nports = [ { instance = \"a\", effort = \"x\", flow = \"n\" }, { instance = \"b\", effort = \"x\", flow = \"n\" } ]";
    let f = system_of(&dir, "every.toml", "plain.fmu", &format!("record_every = 3\n{bond}"));
    let out = dir.join("out");
    let o = cosim(&["run", s(&f), "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let times = |file: &str| -> Vec<f64> {
        let rows = parse_csv(&std::fs::read_to_string(out.join(file)).unwrap());
        rows[1..].iter().map(|r| r[0].parse().unwrap()).collect()
    };
    let results = times("results.csv");
    assert_eq!(results.len(), 5, "{results:?}");
    for (t, want) in results.iter().zip([0.0, 0.3, 0.6, 0.9, 1.0]) {
        assert!((t - want).abs() < 1e-12, "{results:?}");
    }
    let bonds = times("bonds.csv");
    assert_eq!(bonds.len(), 4, "{bonds:?}");
    assert!((bonds[3] - 1.0).abs() < 1e-12, "{bonds:?}");
}

#[test]
fn symbolic_links_at_output_files_are_replaced_not_followed() {
    let dir = tmp("symlinks");
    Spec::new("plain").build(&dir);
    let f = system_of(&dir, "s.toml", "plain.fmu", "");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let victims: Vec<PathBuf> = ["summary.json", "results.csv", "bonds.csv"]
        .iter()
        .map(|name| {
            let victim = dir.join(format!("victim-{name}"));
            std::fs::write(&victim, "precious\n").unwrap();
            std::os::unix::fs::symlink(&victim, out.join(name)).unwrap();
            victim
        })
        .collect();
    let o = cosim(&["run", s(&f), "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    for (victim, name) in victims.iter().zip(["summary.json", "results.csv", "bonds.csv"]) {
        assert_eq!(std::fs::read_to_string(victim).unwrap(), "precious\n", "{name} followed its link");
        let meta = std::fs::symlink_metadata(out.join(name)).unwrap();
        assert!(meta.file_type().is_file(), "{name} is a regular file now");
    }
    assert!(std::fs::read_to_string(out.join("summary.json")).unwrap().contains("\"status\": \"ok\""));
}
