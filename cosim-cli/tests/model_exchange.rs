#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Model Exchange FMUs run by `cosim run` (issue 52): the master integrates them between
//! communication points (master::ode), with their events. Small C ME FMUs (tests/mefmu) against
//! closed forms: the bouncing ball's bounce times (state events), the stair (time events), the
//! decay that terminates from a step event; the ME instance isolated in a worker process.

use std::path::{Path, PathBuf};

mod mefmu;
mod support;
use mefmu::Model;
use support::{cosim, tmp};

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(|s| s.trim_matches('"').to_owned()).collect();
    (header, lines.map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect())
}

fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// Builds the model's FMU into a fresh folder `tag`.
fn build(tag: &str, model: Model) -> PathBuf {
    model.build(&tmp(tag))
}

/// `cosim run FMU --out … FLAGS`: (exit code, stderr, output folder).
fn run(fmu: &Path, flags: &[&str]) -> (Option<i32>, String, PathBuf) {
    let out = fmu.parent().unwrap().join("out");
    let mut args = vec!["run", fmu.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(flags);
    let o = cosim(&args);
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned(), out)
}

fn column(header: &[String], name: &str) -> usize {
    header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

const G: f64 = 9.81;
const E: f64 = 0.7;

/// The ball's bounce times from h = 1 at rest: t1 = √(2/g), then flights of 2 eᵏ v1 / g.
fn bounce_times(until: f64) -> Vec<f64> {
    let t1 = (2.0 / G).sqrt();
    let v1 = G * t1;
    let mut t = vec![t1];
    let mut k = 1;
    loop {
        let next = t[t.len() - 1] + 2.0 * E.powi(k) * v1 / G;
        if next > until {
            return t;
        }
        t.push(next);
        k += 1;
    }
}

/// Each row after the first bounce gives the time of the last bounce from its h and v (a
/// parabolic flight since then): s = (√(v² + 2 g h) − v)/g before t. Checks them against the
/// closed form to `tol` s, and h, v before the first bounce.
fn check_ball(header: &[String], rows: &[Vec<f64>], tol: f64) {
    let (h, v) = (column(header, "ball.h"), column(header, "ball.v"));
    let bounces = bounce_times(2.0);
    assert_eq!(bounces.len(), 4);
    let mut seen = vec![false; bounces.len()];
    for r in rows {
        let t = r[0];
        match bounces.iter().rposition(|tb| *tb < t - 1e-9) {
            None => {
                assert!((r[h] - (1.0 - G * t * t / 2.0)).abs() < 1e-9, "h at t = {t}: {}", r[h]);
                assert!((r[v] + G * t).abs() < 1e-9, "v at t = {t}: {}", r[v]);
            }
            Some(k) if t - bounces[k] > 1e-3 => {
                let s = ((r[v] * r[v] + 2.0 * G * r[h]).sqrt() - r[v]) / G;
                let tb = t - s;
                assert!((tb - bounces[k]).abs() < tol, "bounce {k} at {tb} (row t = {t}), closed form {}", bounces[k]);
                seen[k] = true;
            }
            Some(_) => {}
        }
    }
    assert!(seen.iter().all(|s| *s), "every bounce checked: {seen:?}");
}

#[test]
fn the_bouncing_ball_bounces_at_the_closed_form_times() {
    let fmu = build("me-ball", Model::Ball);
    // RK4 is exact on the ball's parabolas: what is left is the location of the bounces.
    for solver_step in ["1e-3", "7e-4"] {
        let set = format!("solver_step={solver_step}");
        let (code, stderr, out) = run(&fmu, &["--step", "0.01", "--solver", "rk4", "--set", &set]);
        assert_eq!(code, Some(0), "{solver_step}: {stderr}");
        let s = summary(&out);
        assert_eq!(s["status"], "ok", "{s}");
        let (header, rows) = read_csv(&out.join("results.csv"));
        assert_eq!(rows.len(), 201);
        check_ball(&header, &rows, 1e-6);
    }
}

#[test]
fn the_stair_steps_at_its_time_events() {
    let fmu = build("me-stair", Model::Stair);
    let (code, stderr, out) = run(&fmu, &["--step", "0.25", "--solver", "rk4"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (header, rows) = read_csv(&out.join("results.csv"));
    let (x, k) = (column(&header, "stair.x"), column(&header, "stair.k"));
    assert_eq!(rows.len(), 15);
    for r in &rows {
        let t: f64 = r[0];
        let n = t.floor();
        assert_eq!(r[k], n, "k at t = {t}");
        // x' = k: x = Σ_{j<n} j + n (t − n).
        let exact = n * (n - 1.0) / 2.0 + n * (t - n);
        assert!((r[x] - exact).abs() < 1e-12, "x at t = {t}: {} vs {exact}", r[x]);
    }
}

#[test]
fn a_model_exchange_fmu_that_terminates_ends_the_run_cleanly() {
    let fmu = build("me-stop", Model::Stop);
    for isolate in [false, true] {
        let mut flags = vec!["--step", "0.1", "--solver", "rk4", "--set", "solver_step=1e-3"];
        if isolate {
            flags.push("--isolate");
        }
        let (code, stderr, out) = run(&fmu, &flags);
        assert_eq!(code, Some(0), "isolate {isolate}: {stderr}");
        let s = summary(&out);
        assert_eq!(s["status"], "terminated", "{s}");
        // x = e^-t falls below 0.5 at ln 2; the step event ends the run after the step that
        // crossed it (internal steps of 1e-3 s).
        let t_end = s["time"].as_f64().unwrap();
        assert!(t_end >= 2f64.ln() && t_end <= 2f64.ln() + 1.001e-3, "ended at {t_end}");
        assert!(stderr.contains("terminated by stop at t = "), "{stderr}");
        let (header, rows) = read_csv(&out.join("results.csv"));
        let x = column(&header, "stop.x");
        for r in &rows {
            let exact = (-r[0]).exp();
            assert!((r[x] - exact).abs() < 1e-10, "x at t = {}: {} vs {exact}", r[0], r[x]);
        }
    }
}

#[test]
fn interface_choices_are_checked() {
    let fmu = build("me-iface", Model::Ball);
    let (code, stderr, _) = run(&fmu, &["--interface", "cs"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("supports Model Exchange only") && stderr.contains("--interface me"), "{stderr}");
    // FMPy's spelling.
    let (code, stderr, _) = run(&fmu, &["--interface-type", "ModelExchange", "--solver", "rk4", "--step", "0.1"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (code, stderr, _) = run(&fmu, &["--set", "relative_tolerance=-1"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("relative_tolerance = -1 must be a positive number"), "{stderr}");
}

/// FMPy's Model Exchange simulation of `fmu` (CVode at `rtol`, every `interval` s to `stop`):
/// the header and rows of its result (events give two rows at one time).
fn fmpy_me(fmu: &Path, rtol: f64, interval: f64, stop: f64) -> (Vec<String>, Vec<Vec<f64>>) {
    fmpy_me_with(fmu, rtol, interval, stop, &[])
}

/// [`fmpy_me`] with start values `start`.
fn fmpy_me_with(
    fmu: &Path,
    rtol: f64,
    interval: f64,
    stop: f64,
    start: &[(&str, f64)],
) -> (Vec<String>, Vec<Vec<f64>>) {
    let script = "import sys\n\
                  from fmpy import simulate_fmu\n\
                  sv = {a.split('=')[0]: float(a.split('=')[1]) for a in sys.argv[5:]}\n\
                  r = simulate_fmu(sys.argv[1], fmi_type='ModelExchange', solver='CVode', start_values=sv, \
                  relative_tolerance=float(sys.argv[2]), output_interval=float(sys.argv[3]), stop_time=float(sys.argv[4]))\n\
                  print(','.join(r.dtype.names))\n\
                  for row in r: print(','.join(repr(float(x)) for x in row))\n";
    let o = std::process::Command::new(fmu_harness::paths::python())
        .args(["-c", script])
        .arg(fmu)
        .args([rtol, interval, stop].map(|x| format!("{x:e}")))
        .args(start.iter().map(|(k, v)| format!("{k}={v:e}")))
        .output()
        .expect("running FMPy");
    assert!(o.status.success(), "FMPy failed: {}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let mut lines = text.lines().filter(|l| !l.starts_with("Warning") && !l.is_empty());
    let header = lines.next().unwrap().split(',').map(str::to_owned).collect();
    (header, lines.map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect())
}

#[test]
fn the_ball_equals_fmpys_model_exchange_simulation() {
    let fmu = build("me-ball-fmpy", Model::Ball);
    let (header, rows) = ball_like_fmpy(&fmu);
    check_ball(&header, &rows, 1e-6);
}

/// FMPy's Model Exchange simulation (CVode) of the ball `fmu` and ours (RK4, step 0.01 s,
/// solver_step 1e-3): FMPy's event times (a repeated time) are the closed form's bounces to
/// 1e-6 s; ours at FMPy's output times are within 1e-4 of each variable's range. Our
/// results.csv: (header, rows).
fn ball_like_fmpy(fmu: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let (fh, frows) = fmpy_me(fmu, 1e-9, 0.01, 2.0);
    let events: Vec<f64> = frows.windows(2).filter(|w| w[0][0] == w[1][0]).map(|w| w[0][0]).collect();
    let bounces = bounce_times(2.0);
    assert_eq!(events.len(), bounces.len(), "{events:?}");
    for (a, b) in events.iter().zip(&bounces) {
        assert!((a - b).abs() < 1e-6, "FMPy's event at {a}, closed form {b}");
    }
    let (code, stderr, out) = run(fmu, &["--step", "0.01", "--solver", "rk4", "--set", "solver_step=1e-3"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (header, rows) = read_csv(&out.join("results.csv"));
    for (name, ours) in [("h", column(&header, "ball.h")), ("v", column(&header, "ball.v"))] {
        let theirs = column(&fh, name);
        let range = frows.iter().map(|r| r[theirs].abs()).fold(0.0, f64::max);
        let mut compared = 0;
        for r in &rows {
            // FMPy's row at this time, not an event's (an event time is no output point here).
            let Some(f) = frows.iter().find(|f| (f[0] - r[0]).abs() < 1e-9) else { continue };
            assert!(
                (r[ours] - f[theirs]).abs() <= 1e-4 * range,
                "{name} at t = {}: ours {}, FMPy {}",
                r[0],
                r[ours],
                f[theirs]
            );
            compared += 1;
        }
        assert!(compared >= 190, "{compared} rows compared");
    }
    (header, rows)
}

#[test]
fn an_openmodelica_fmu_runs_as_model_exchange_like_fmpy() {
    // OpenModelica's FMUs of gemseo-fmu have both interfaces; `--interface me` integrates the
    // ME one (which has no event indicators) with our RK4.
    let gemseo = fmu_harness::paths::root().join("target/thirdparty/gemseo/MassSpringSystem.fmu");
    assert!(gemseo.exists(), "{} missing: run `cargo xtask test` (it extracts gemseo-fmu's FMUs)", gemseo.display());
    let dir = tmp("me-gemseo");
    let fmu = dir.join("MassSpringSystem.fmu");
    std::fs::copy(&gemseo, &fmu).unwrap();
    let (code, stderr, out) =
        run(&fmu, &["--interface", "me", "--solver", "rk4", "--step", "0.002", "--set", "solver_step=2e-4"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (header, rows) = read_csv(&out.join("results.csv"));
    assert_eq!(rows.len(), 501);
    let (fh, frows) = fmpy_me(&fmu, 1e-10, 0.002, 1.0);
    for name in ["x1", "x2", "v1", "v2"] {
        let (ours, theirs) = (column(&header, &format!("MassSpringSystem.{name}")), column(&fh, name));
        let range = frows.iter().map(|r| r[theirs].abs()).fold(0.0, f64::max);
        for (r, f) in rows.iter().zip(&frows) {
            assert!((r[0] - f[0]).abs() < 1e-12, "times {} {}", r[0], f[0]);
            assert!(
                (r[ours] - f[theirs]).abs() <= 1e-4 * range,
                "{name} at t = {}: {} vs FMPy {}",
                r[0],
                r[ours],
                f[theirs]
            );
        }
    }
}

#[test]
fn robertson_needs_the_stiff_solver_and_equals_fmpy() {
    // Robertson's kinetics to t = 40: the literature's values (Hairer & Wanner) and FMPy's CVode.
    // FMPy's absolute tolerance is its relative one times the nominal (1): at rtol 1e-8 its y2
    // (~1e-5) is 2e-4 off SciPy's Radau at rtol 1e-12 where ours (rtol 1e-8, atol 1e-12) agrees
    // to 1e-9, so FMPy runs at rtol 1e-10 here.
    let fmu = build("me-robertson", Model::Robertson);
    let flags =
        ["--step", "1", "--solver", "bdf", "--set", "relative_tolerance=1e-8", "--set", "absolute_tolerance=1e-12"];
    let (code, stderr, out) = run(&fmu, &flags);
    assert_eq!(code, Some(0), "{stderr}");
    let (header, rows) = read_csv(&out.join("results.csv"));
    assert_eq!(rows.len(), 41);
    let last = &rows[40];
    let reference = [0.715_827_068_7, 9.185_534_765e-6, 0.284_163_745_7];
    let (fh, frows) = fmpy_me(&fmu, 1e-10, 1.0, 40.0);
    for (i, want) in reference.iter().enumerate() {
        let name = format!("y{}", i + 1);
        let ours = column(&header, &format!("robertson.{name}"));
        assert!((last[ours] - want).abs() <= 1e-4 * want, "{name}(40) = {} vs {want}", last[ours]);
        let theirs = column(&fh, &name);
        for (r, f) in rows.iter().zip(&frows) {
            let scale = f[theirs].abs().max(1e-12);
            assert!(
                (r[ours] - f[theirs]).abs() <= 1e-4 * scale,
                "{name} at t = {}: {} vs FMPy {}",
                r[0],
                r[ours],
                f[theirs]
            );
        }
    }
}

#[test]
fn the_bouncing_ball_with_the_bdf() {
    let fmu = build("me-ball-bdf", Model::Ball);
    let flags = ["--step", "0.01", "--set", "relative_tolerance=1e-10", "--set", "absolute_tolerance=1e-12"];
    let (code, stderr, out) = run(&fmu, &flags);
    assert_eq!(code, Some(0), "{stderr}");
    let (header, rows) = read_csv(&out.join("results.csv"));
    check_ball(&header, &rows, 1e-6);
}

/// The solver statistics of instance `name` in summary.json.
fn solver_stats(out: &Path, name: &str) -> serde_json::Value {
    let s = summary(out);
    let i = s["instances"].as_array().unwrap().iter().find(|i| i["name"] == name).unwrap_or_else(|| panic!("{s}"));
    i["solver"].clone()
}

#[test]
fn the_fmi3_bouncing_ball_bounces_at_the_closed_form_times_like_fmpy() {
    // FMI 3.0 Model Exchange (fmi3InstantiateModelExchange), a binary without the Co-Simulation
    // functions (no fmi3DoStep).
    let build = mefmu::Build { fmi3: true, defines: vec!["ME_ONLY".into()], ..mefmu::Build::default() };
    let fmu = Model::Ball.build_with(&tmp("me3-ball-only"), &build);
    // `cosim info` checks the binary's common and Model Exchange exports, not fmi3DoStep.
    let info = support::cosim(&["info", fmu.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(text.contains("Runs with cosim:  yes (binaries/x86_64-linux/ball.so, Model Exchange)"), "{text}");
    assert!(text.contains("cosim uses:       Model Exchange"), "{text}");
    for line in ["continuous states                       2", "event indicators                        1"] {
        assert!(text.contains(line), "{line:?} not in {text}");
    }
    for flags in [
        &["--step", "0.01", "--solver", "rk4", "--set", "solver_step=1e-3"][..],
        &["--step", "0.01", "--set", "relative_tolerance=1e-10", "--set", "absolute_tolerance=1e-12"][..],
    ] {
        for isolate in [false, true] {
            let mut flags = flags.to_vec();
            if isolate {
                flags.push("--isolate");
            }
            let (code, stderr, out) = run(&fmu, &flags);
            assert_eq!(code, Some(0), "{flags:?}: {stderr}");
            let (header, rows) = read_csv(&out.join("results.csv"));
            assert_eq!(rows.len(), 201);
            check_ball(&header, &rows, 1e-6);
            let st = solver_stats(&out, "ball");
            assert_eq!(st["state_events"], 4, "{flags:?}: {st}");
            assert_eq!(st["time_events"], 0, "{st}");
            assert!(st["steps"].as_u64().unwrap() > 100 && st["rhs_evaluations"].as_u64().unwrap() > 100, "{st}");
        }
    }
    // FMPy's FMI 3.0 ME simulation (CVode) of the same model (a binary with every FMI 3.0
    // function: FMPy resolves them all): its event times are the closed form's, its states ours
    // within 1e-4 of the range.
    let fmu = Model::Ball.build3(&tmp("me3-ball"));
    ball_like_fmpy(&fmu);
}

#[test]
fn solver_statistics_count_the_stairs_and_the_bounces() {
    // The stair's time events are its whole seconds before the stop time (3.5 s: three), in
    // FMI 2.0 and 3.0, in process and in a worker process.
    for fmi3 in [false, true] {
        let dir = tmp(if fmi3 { "me-stats3" } else { "me-stats2" });
        let stair = if fmi3 { Model::Stair.build3(&dir.join("stair")) } else { Model::Stair.build(&dir.join("stair")) };
        for isolate in [false, true] {
            let mut flags = vec!["--step", "0.25", "--solver", "rk4"];
            if isolate {
                flags.push("--isolate");
            }
            let (code, stderr, out) = run(&stair, &flags);
            assert_eq!(code, Some(0), "{stderr}");
            let st = solver_stats(&out, "stair");
            let stairs = 3.5f64.floor() as u64;
            assert_eq!(st["time_events"], stairs, "fmi3 {fmi3} isolate {isolate}: {st}");
            assert_eq!((st["events"].as_u64(), st["state_events"].as_u64()), (Some(stairs), Some(0)), "{st}");
            // RK4 at the default solver step (0.25 / 10): 14 communication steps of 10 steps.
            assert_eq!(st["steps"], 140, "{st}");
            assert_eq!(st["rhs_evaluations"].as_u64().unwrap() % 4, 0, "{st}");
            assert_eq!(st["jacobians"], 0, "{st}");
        }
        // The ball with the BDF: four bounces, Jacobians and error-test failures counted.
        let ball = if fmi3 { Model::Ball.build3(&dir.join("ball")) } else { Model::Ball.build(&dir.join("ball")) };
        for isolate in [false, true] {
            let mut flags = vec!["--step", "0.01", "--set", "relative_tolerance=1e-8"];
            if isolate {
                flags.push("--isolate");
            }
            let (code, stderr, out) = run(&ball, &flags);
            assert_eq!(code, Some(0), "{stderr}");
            let st = solver_stats(&out, "ball");
            assert_eq!((st["state_events"].as_u64(), st["events"].as_u64()), (Some(4), Some(4)), "{st}");
            assert!(st["jacobians"].as_u64().unwrap() >= 1, "{st}");
            let rejected = st["rejected_steps"].as_u64().unwrap();
            let split = st["error_test_failures"].as_u64().unwrap() + st["convergence_failures"].as_u64().unwrap();
            assert_eq!(rejected, split, "{st}");
            assert!(st["event_indicator_evaluations"].as_u64().unwrap() > st["steps"].as_u64().unwrap(), "{st}");
        }
    }
    // A Co-Simulation FMU's summary has no solver entry.
}

#[test]
fn our_fmi3_model_exchange_fmus_equal_fmpys_model_exchange_simulation() {
    // The crane's FMUs exported as Model Exchange (`cargo xtask fmus`), FMI 3.0 and 2.0, each
    // alone with a constant input that moves it, against FMPy's ME simulation (CVode).
    let root = fmu_harness::paths::root();
    for (file, start, vars) in [
        ("hydraulics-lumped3-me.fmu", ("U_ref", 5.0), &["p1", "p2", "p3", "F"][..]),
        ("multibody-crane-me.fmu", ("F", 9500.0), &["s", "s_dot", "theta1", "theta2"][..]),
    ] {
        for dir in ["target/fmu3", "target/fmu"] {
            let built = root.join(dir).join(file);
            assert!(built.exists(), "{} missing: run `cargo xtask fmus`", built.display());
            let tag = format!("me-ours-{}-{}", dir.replace('/', "-"), file.trim_end_matches(".fmu"));
            let fmu = tmp(&tag).join(file);
            std::fs::create_dir_all(fmu.parent().unwrap()).unwrap();
            std::fs::copy(&built, &fmu).unwrap();
            let sv = format!("{}={}", start.0, start.1);
            let flags = [
                "--interface",
                "me",
                "--step",
                "1e-3",
                "--stop-time",
                "0.5",
                "--start-value",
                &sv,
                "--set",
                "relative_tolerance=1e-9",
                "--set",
                "absolute_tolerance=1e-6",
            ];
            let (code, stderr, out) = run(&fmu, &flags);
            assert_eq!(code, Some(0), "{dir}/{file}: {stderr}");
            // Both interfaces: `cosim info` shows the Model Exchange one too.
            let info = support::cosim(&["info", fmu.to_str().unwrap()]);
            let text = String::from_utf8_lossy(&info.stdout);
            assert!(text.contains("Model Exchange (with --interface me):\n  continuous states"), "{text}");
            let (header, rows) = read_csv(&out.join("results.csv"));
            assert_eq!(rows.len(), 501);
            let id = file.trim_end_matches(".fmu").replace('-', "_");
            let (fh, frows) = fmpy_me_with(&fmu, 1e-10, 1e-3, 0.5, &[start]);
            let st = solver_stats(&out, &id);
            assert!(st["steps"].as_u64().unwrap() > 0, "{st}");
            for name in vars {
                let (ours, theirs) = (column(&header, &format!("{id}.{name}")), column(&fh, name));
                let range = frows.iter().map(|r| r[theirs].abs()).fold(0.0, f64::max);
                let mut worst: f64 = 0.0;
                for r in &rows {
                    let Some(f) = frows.iter().find(|f| (f[0] - r[0]).abs() < 1e-9) else { continue };
                    worst = worst.max((r[ours] - f[theirs]).abs() / range);
                }
                eprintln!("{dir}/{file} {name}: {worst:e} of the range off FMPy's");
                assert!(worst <= 1e-4, "{dir}/{file} {name}: {worst:e} of the range off FMPy's");
            }
        }
    }
}

#[test]
fn crane_pub3_me_runs_with_the_fmi3_fmus_as_with_the_fmi2_ones() {
    // scenarios/crane-pub3-me.toml (its coupling as it is) with the FMI 3.0 ME FMUs: the same
    // right-hand sides, so the same results as with the FMI 2.0 ones (first second of J1).
    let root = fmu_harness::paths::root();
    let scenario = std::fs::read_to_string(root.join("scenarios/crane-pub3-me.toml")).unwrap();
    let dir = tmp("me-crane3");
    std::fs::create_dir_all(&dir).unwrap();
    let mut results = Vec::new();
    for fmus in ["target/fmu", "target/fmu3"] {
        let text = scenario.replace("../target/fmu/", &format!("{}/", root.join(fmus).display()));
        assert_ne!(text, scenario);
        let sys = dir.join(format!("crane-{}.toml", fmus.replace('/', "-")));
        std::fs::write(&sys, text).unwrap();
        let out = dir.join(format!("out-{}", fmus.replace('/', "-")));
        let o = support::cosim(&["run", sys.to_str().unwrap(), "--out", out.to_str().unwrap(), "--stop-time", "1"]);
        assert!(o.status.success(), "{fmus}: {}", String::from_utf8_lossy(&o.stderr));
        let s = summary(&out);
        for i in s["instances"].as_array().unwrap() {
            assert!(i["solver"]["steps"].as_u64().unwrap() > 0, "{i}");
        }
        results.push(read_csv(&out.join("results.csv")));
    }
    let ((h2, r2), (h3, r3)) = (&results[0], &results[1]);
    assert_eq!(h2, h3);
    assert_eq!(r2.len(), 1001);
    let s = column(h2, "mech.s");
    let worst = r2.iter().zip(r3).map(|(a, b)| (a[s] - b[s]).abs()).fold(0.0, f64::max);
    assert!(worst <= 1e-9, "max |s(FMI 3.0) - s(FMI 2.0)| = {worst:e} m");
}

/// Writes the test ME FMUs to `target/mefmu/` for `cosim bench --model-exchange` (docs/performance.md):
/// `cargo test -p cosim-cli --test model_exchange -- --ignored bench_fmus`.
#[test]
#[ignore = "writes target/mefmu/ for the benchmark"]
fn bench_fmus() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/mefmu");
    std::fs::create_dir_all(&dir).unwrap();
    for m in [Model::Ball, Model::Stair, Model::Robertson] {
        let fmu = m.build(&dir);
        assert!(fmu.is_file(), "{}", fmu.display());
    }
}

#[test]
fn the_model_exchange_bench_measures_error_against_its_reference() {
    // `cosim bench --model-exchange` (issue 50): the ball's BDF rows carry errors of the order of
    // their tolerance against the tight reference, RK4 (exact on the parabolas) far below.
    let fmu = build("me-bench", Model::Ball);
    let o = cosim(&[
        "bench",
        "--model-exchange",
        fmu.to_str().unwrap(),
        "--no-peers",
        "--repeat",
        "1",
        "--tolerances",
        "1e-4,1e-7",
        "--fixed-divisions",
        "10",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}{}", String::from_utf8_lossy(&o.stderr));
    let error = |setting: &str| -> f64 {
        let line = text.lines().find(|l| l.starts_with(&format!("| cosim | {setting} |"))).unwrap_or_else(|| {
            panic!("no row {setting} in\n{text}");
        });
        line.split('|').nth(4).unwrap().trim().parse().unwrap()
    };
    let (loose, tight) = (error("bdf, rtol 1e-4"), error("bdf, rtol 1e-7"));
    assert!(loose > 0.0 && loose < 1e-2, "{loose}");
    assert!(tight < loose / 10.0 && tight < 1e-5, "{tight} vs {loose}");
    assert!(error("rk4, h 4e-4 s") < 1e-8, "{text}");
    assert!(text.contains("FMPy: not measured"), "{text}");
}
