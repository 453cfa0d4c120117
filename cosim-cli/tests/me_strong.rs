#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Strong coupling of Model Exchange instances (issue 52 item 2): a group integrated as one ODE,
//! its connections resolved at every right-hand-side evaluation.
//! - two first-order lags in series (a C ME FMU, tests/mefmu/lag.c) give the closed-form
//!   second-order step response, strongly coupled to the solver's tolerance; weakly coupled (held
//!   inputs over the communication step) they do not;
//! - events are the group's: a bouncing ball (state events) and a stair (time events) in one
//!   group keep their closed forms; a member that terminates ends the run;
//! - an algebraic loop among the members is refused with the loop named;
//! - the Publication III crane as two ME FMUs (scenarios/crane-pub3-me.toml) against the unified
//!   reference (crane-pub3-unified.toml) on work cycle J1: max |Δs| ≤ 1e-6 m.

use fmu_harness::paths;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

mod mefmu;
mod support;
use mefmu::Model;
use support::{cosim, tmp};

/// The lag FMU (`tests/mefmu/lag.c`) in `dir`, its output y = x + d·u declared with direct
/// feedthrough from u when `feedthrough` (and d = 1 then), without (d = 0) otherwise.
fn lag_fmu(dir: &Path, feedthrough: bool) -> PathBuf {
    lag_fmu_with(dir, feedthrough, r#"canGetAndSetFMUstate="true""#)
}

/// [`lag_fmu`] with `me_attributes` in its `<ModelExchange>` element (the FMU-state flags).
fn lag_fmu_with(dir: &Path, feedthrough: bool, me_attributes: &str) -> PathBuf {
    let id = "lag";
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mefmu/lag.c");
    let so = dir.join("lag.so");
    let out = Command::new("cc")
        .args(["-shared", "-fPIC", "-fvisibility=hidden", "-O1", "-Wall", "-Werror", "-o"])
        .arg(&so)
        .arg(&src)
        .output()
        .expect("the system's `cc` is needed to build the test FMUs");
    assert!(out.status.success(), "cc failed: {}", String::from_utf8_lossy(&out.stderr));
    let (d, deps) = if feedthrough { (1, "1 4") } else { (0, "1") };
    let xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="{id}" guid="{{mefmu-lag}}" numberOfEventIndicators="0">
<ModelExchange modelIdentifier="{id}" {me_attributes}/>
<ModelVariables>
<ScalarVariable name="x" valueReference="0" causality="local" variability="continuous" initial="exact"><Real start="0"/></ScalarVariable>
<ScalarVariable name="der(x)" valueReference="1" causality="local" variability="continuous"><Real derivative="1"/></ScalarVariable>
<ScalarVariable name="tau" valueReference="2" causality="parameter" variability="fixed"><Real start="1"/></ScalarVariable>
<ScalarVariable name="u" valueReference="3" causality="input" variability="continuous"><Real start="0"/></ScalarVariable>
<ScalarVariable name="y" valueReference="4" causality="output" variability="continuous"><Real/></ScalarVariable>
<ScalarVariable name="d" valueReference="5" causality="parameter" variability="fixed"><Real start="{d}"/></ScalarVariable>
</ModelVariables>
<ModelStructure>
<Outputs><Unknown index="5" dependencies="{deps}"/></Outputs>
<Derivatives><Unknown index="2"/></Derivatives>
</ModelStructure>
</fmiModelDescription>
"#
    );
    let stem = if feedthrough { "lag-ft" } else { "lag" };
    let fmu = dir.join(if me_attributes.contains("canGetAndSetFMUstate=\"true\"") {
        format!("{stem}.fmu")
    } else {
        format!("{stem}-stateless.fmu")
    });
    let mut w = zip::ZipWriter::new(std::fs::File::create(&fmu).unwrap());
    let o = zip::write::SimpleFileOptions::default().unix_permissions(0o755);
    w.start_file("modelDescription.xml", o).unwrap();
    w.write_all(xml.as_bytes()).unwrap();
    w.start_file(format!("binaries/linux64/{id}.so"), o).unwrap();
    w.write_all(&std::fs::read(&so).unwrap()).unwrap();
    w.finish().unwrap();
    fmu
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(|s| s.trim_matches('"').to_owned()).collect();
    (header, lines.map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect())
}

fn column(header: &[String], name: &str) -> usize {
    header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

/// `cosim run SYSTEM --out DIR FLAGS`: (exit code, stderr).
fn run(system: &Path, out: &Path, flags: &[&str]) -> (Option<i32>, String) {
    let mut args = vec!["run", system.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(flags);
    let o = cosim(&args);
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

const TAU_A: f64 = 1.0;
const TAU_B: f64 = 0.25;
const GAIN: f64 = 2.0;

/// The two lags in series, a unit step into a.u, b.u = GAIN · a.y.
fn series_system(dir: &Path, coupling: &str) -> PathBuf {
    let fmu = lag_fmu(dir, false);
    let text = format!(
        r#"[simulation]
stop = 3.0
step = 0.1
solver = "bdf"
relative_tolerance = 1e-10
absolute_tolerance = 1e-12
me_coupling = "{coupling}"

[instances.a]
fmu = "{fmu}"
start = {{ tau = {TAU_A} }}

[instances.b]
fmu = "{fmu}"
start = {{ tau = {TAU_B} }}

[[connections]]
from = "a.y"
to = "b.u"
gain = {GAIN}

[[inputs]]
to = "a.u"
times = [0.0]
values = [1.0]

[outputs]
variables = ["a.y", "b.y"]
"#,
        fmu = fmu.display()
    );
    let p = dir.join(format!("series-{coupling}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

/// Largest |b.y − closed form| over the rows of a run of the series.
fn series_error(coupling: &str) -> f64 {
    let dir = tmp(&format!("me-strong-series-{coupling}"));
    let system = series_system(&dir, coupling);
    let out = dir.join("out");
    let (code, stderr) = run(&system, &out, &[]);
    assert_eq!(code, Some(0), "{coupling}: {stderr}");
    let (header, rows) = read_csv(&out.join("results.csv"));
    let (a, b) = (column(&header, "a.y"), column(&header, "b.y"));
    assert_eq!(rows.len(), 31);
    // summary.json: each member reports its integrator's work (strongly coupled: the group's).
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let solver = |k: usize| s["instances"][k]["solver"].clone();
    assert!(solver(0)["steps"].as_u64().unwrap() > 0, "{s}");
    assert_eq!(solver(0) == solver(1), coupling == "strong", "{s}");
    let mut worst = 0.0f64;
    for r in &rows {
        let t = r[0];
        // a: 1 − e^(−t/τa); b: the step response of the two lags in series, times the gain.
        let (ya, yb) = series_closed_form(t);
        assert!((r[a] - ya).abs() < 1e-7, "{coupling}: a.y at t = {t}: {} vs {ya}", r[a]);
        worst = worst.max((r[b] - yb).abs());
    }
    worst
}

#[test]
fn two_lags_strongly_coupled_give_the_closed_form_step_response() {
    let strong = series_error("strong");
    assert!(strong < 1e-7, "strongly coupled: max |Δy| = {strong:e}");
    // Weakly coupled, b holds a's output over each 0.1 s step: an error of the order of the step.
    let weak = series_error("weak");
    assert!(weak > 1e-3, "weakly coupled: max |Δy| = {weak:e}");
    println!("two lags in series: max |Δy| strongly coupled {strong:e}, weakly coupled {weak:e}");
}

/// The closed forms of the series: a.y and b.y at t.
fn series_closed_form(t: f64) -> (f64, f64) {
    let ya = 1.0 - (-t / TAU_A).exp();
    let yb = GAIN * (1.0 - (TAU_A * (-t / TAU_A).exp() - TAU_B * (-t / TAU_B).exp()) / (TAU_A - TAU_B));
    (ya, yb)
}

#[test]
fn the_group_is_one_participant_to_the_scheme() {
    // The series as group "g" and a third lag c outside it (a group of its own), fed by b.y at
    // the communication points: Jacobi holds b.y(t_n) over each step, so c follows the
    // zero-order hold c_{n+1} = u_n + (c_n − u_n) e^(−H/τc) exactly.
    let dir = tmp("me-strong-participant");
    let series = series_system(&dir, "weak");
    let text = std::fs::read_to_string(&series).unwrap();
    let fmu = dir.join("lag.fmu");
    let text = text
        .replace("start = { tau = 1 }", "start = { tau = 1 }\nme_group = \"g\"")
        .replace("start = { tau = 0.25 }", "start = { tau = 0.25 }\nme_group = \"g\"")
        .replace("variables = [\"a.y\", \"b.y\"]", "variables = [\"a.y\", \"b.y\", \"c.y\"]")
        + &format!(
            "\n[instances.c]\nfmu = \"{}\"\nstart = {{ tau = 0.5 }}\n\n[[connections]]\nfrom = \"b.y\"\nto = \"c.u\"\n",
            fmu.display()
        );
    assert_eq!(text.matches("me_group = \"g\"").count(), 2, "{text}");
    let system = dir.join("participant.toml");
    std::fs::write(&system, text).unwrap();
    let out = dir.join("out");
    let (code, stderr) = run(&system, &out, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let (header, rows) = read_csv(&out.join("results.csv"));
    let (a, b, c) = (column(&header, "a.y"), column(&header, "b.y"), column(&header, "c.y"));
    let mut held = 0.0;
    for (n, r) in rows.iter().enumerate() {
        let (ya, yb) = series_closed_form(r[0]);
        assert!((r[a] - ya).abs() < 1e-7 && (r[b] - yb).abs() < 1e-7, "t = {}: {r:?}", r[0]);
        assert!((r[c] - held).abs() < 1e-8, "c.y at t = {}: {} vs the zero-order hold {held}", r[0], r[c]);
        let u = series_closed_form(n as f64 * 0.1).1;
        held = u + (held - u) * (-0.1f64 / 0.5).exp();
    }
}

const G: f64 = 9.81;
const E: f64 = 0.7;

#[test]
fn state_and_time_events_of_the_members_are_the_groups() {
    let dir = tmp("me-strong-events");
    let (ball, stair) = (Model::Ball.build(&dir), Model::Stair.build(&dir));
    let text = format!(
        "[simulation]\nstop = 2.0\nstep = 0.01\nsolver = \"rk4\"\nsolver_step = 1e-3\n\n\
         [instances.ball]\nfmu = \"{}\"\n\n[instances.stair]\nfmu = \"{}\"\n",
        ball.display(),
        stair.display()
    );
    let system = dir.join("events.toml");
    std::fs::write(&system, text).unwrap();
    let out = dir.join("out");
    let (code, stderr) = run(&system, &out, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let (header, rows) = read_csv(&out.join("results.csv"));
    let (h, v, x, k) =
        (column(&header, "ball.h"), column(&header, "ball.v"), column(&header, "stair.x"), column(&header, "stair.k"));
    // The ball's bounces: t1 = √(2/g), then flights of 2 eⁿ v1 / g; each row after a bounce
    // gives the bounce's time from its h and v (a parabola since).
    let t1 = (2.0 / G).sqrt();
    let mut bounces = vec![t1];
    while bounces.len() < 4 {
        let n = bounces.len() as i32;
        bounces.push(bounces[bounces.len() - 1] + 2.0 * E.powi(n) * G * t1 / G);
    }
    let mut seen = [false; 4];
    for r in &rows {
        let t = r[0];
        match bounces.iter().rposition(|tb| *tb < t - 1e-9) {
            None => assert!((r[h] - (1.0 - G * t * t / 2.0)).abs() < 1e-9, "h at t = {t}: {}", r[h]),
            Some(n) if t - bounces[n] > 1e-3 && n + 1 < bounces.len() && bounces[n + 1] > t => {
                let tb = t - ((r[v] * r[v] + 2.0 * G * r[h]).sqrt() - r[v]) / G;
                assert!((tb - bounces[n]).abs() < 1e-6, "bounce {n} at {tb}, closed form {}", bounces[n]);
                seen[n] = true;
            }
            Some(_) => {}
        }
        // The stair: k = ⌊t⌋, x' = k.
        let n = t.floor();
        assert_eq!(r[k], n, "k at t = {t}");
        let exact = n * (n - 1.0) / 2.0 + n * (t - n);
        assert!((r[x] - exact).abs() < 1e-12, "x at t = {t}: {} vs {exact}", r[x]);
    }
    assert!(seen[..3].iter().all(|s| *s), "bounces checked: {seen:?}");
}

#[test]
fn a_member_that_terminates_ends_the_groups_run() {
    let dir = tmp("me-strong-stop");
    let (stop, lag) = (Model::Stop.build(&dir), lag_fmu(&dir, false));
    // stop.x = e^-t (u = 0) feeds the lag; the run ends once x < 0.5 (t = ln 2).
    let text = format!(
        "[simulation]\nstop = 2.0\nstep = 0.1\nsolver = \"rk4\"\nsolver_step = 1e-3\n\n\
         [instances.stop]\nfmu = \"{}\"\n\n[instances.lag]\nfmu = \"{}\"\n\n\
         [[connections]]\nfrom = \"stop.x\"\nto = \"lag.u\"\n",
        stop.display(),
        lag.display()
    );
    let system = dir.join("stop.toml");
    std::fs::write(&system, text).unwrap();
    let out = dir.join("out");
    let (code, stderr) = run(&system, &out, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("terminated by stop at t = "), "{stderr}");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["status"], "terminated", "{s}");
    let t_end = s["time"].as_f64().unwrap();
    assert!(t_end >= 2f64.ln() && t_end <= 2f64.ln() + 1.001e-3, "ended at {t_end}");
    // The lag driven by e^-t from 0 (τ = 1): y = t e^-t.
    let (header, rows) = read_csv(&out.join("results.csv"));
    let y = column(&header, "lag.y");
    for r in &rows {
        let exact = r[0] * (-r[0]).exp();
        assert!((r[y] - exact).abs() < 1e-9, "lag.y at t = {}: {} vs {exact}", r[0], r[y]);
    }
}

#[test]
fn an_algebraic_loop_among_the_members_is_refused_with_the_loop_named() {
    let dir = tmp("me-strong-loop");
    let fmu = lag_fmu(&dir, true);
    let text = format!(
        r#"[simulation]
stop = 1.0
step = 0.1

[instances.a]
fmu = "{fmu}"

[instances.b]
fmu = "{fmu}"

[[connections]]
from = "a.y"
to = "b.u"

[[connections]]
from = "b.y"
to = "a.u"
"#,
        fmu = fmu.display()
    );
    let system = dir.join("loop.toml");
    std::fs::write(&system, text).unwrap();
    let (code, stderr) = run(&system, &dir.join("out"), &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("algebraic loop among the strongly coupled Model Exchange instances a, b"), "{stderr}");
    assert!(
        stderr.contains("a.y → b.u → b.y → a.u → a.y") || stderr.contains("b.y → a.u → a.y → b.u → b.y"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_group_key_on_a_co_simulation_instance_is_refused() {
    let dir = tmp("me-strong-cs-group");
    let text = format!(
        "[simulation]\nstop = 0.1\nstep = 0.01\n\n[instances.osc]\nfmu = \"{}\"\nme_group = \"g\"\n",
        paths::fmu("oscillator-fd-m1").display()
    );
    let system = dir.join("cs.toml");
    std::fs::write(&system, text).unwrap();
    let (code, stderr) = run(&system, &dir.join("out"), &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("instances.osc.me_group") && stderr.contains("runs as Co-Simulation"), "{stderr}");
}

/// A copy of `scenarios/<name>` in `dir` with the FMU paths pointing at the FMUs under test.
fn localized(name: &str, dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(paths::root().join("scenarios").join(name)).unwrap();
    let text = text.replace("../target/fmu", &paths::fmu_dir().display().to_string());
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// Largest |mech.s − unified.s| over the rows up to `stop` (s), and the wall times of the two runs.
fn crane_against_unified(stop: &str) -> (f64, f64, f64) {
    paths::fmu("multibody-crane-me");
    paths::fmu("hydraulics-lumped3-me");
    paths::fmu("unified-crane");
    let dir = tmp("me-strong-crane");
    let mut columns = Vec::new();
    let mut walls = Vec::new();
    for (scenario, s) in [("crane-pub3-me.toml", "mech.s"), ("crane-pub3-unified.toml", "unified.s")] {
        let system = localized(scenario, &dir);
        let out = dir.join(scenario.trim_end_matches(".toml"));
        let t0 = std::time::Instant::now();
        let (code, stderr) = run(&system, &out, &["--stop-time", stop]);
        walls.push(t0.elapsed().as_secs_f64());
        assert_eq!(code, Some(0), "{scenario}: {stderr}");
        let (header, rows) = read_csv(&out.join("results.csv"));
        let k = column(&header, s);
        columns.push(rows.iter().map(|r| (r[0], r[k])).collect::<Vec<_>>());
    }
    assert_eq!(columns[0].len(), columns[1].len());
    let mut worst = 0.0f64;
    for (a, b) in columns[0].iter().zip(&columns[1]) {
        assert!((a.0 - b.0).abs() < 1e-9, "rows at {} and {}", a.0, b.0);
        worst = worst.max((a.1 - b.1).abs());
    }
    (worst, walls[0], walls[1])
}

/// The whole of J1 (20 s; 6 s in a debug build): `--nocapture` prints the numbers.
#[test]
fn the_crane_strongly_coupled_equals_the_unified_reference_over_j1() {
    let (ds, strong, unified) = crane_against_unified("20");
    println!(
        "crane-pub3-me strongly coupled vs crane-pub3-unified, 0–20 s: max |Δs| = {ds:e} m \
         (wall {strong:.1} s, unified {unified:.1} s)"
    );
    assert!(ds <= 1e-6, "max |Δs| = {ds:e} m");
}

/// The iteration tests' system: lag a (τ = 1, u = 1 from the start: no input is set during the
/// run, so the BDF steps past the communication points), lag b fed by `GAIN · a.y`, and lag c fed
/// by a time table that steps inside a communication step; `extra` appended. Each lag is its own
/// Model Exchange instance unless `extra` says otherwise.
fn iteration_system(dir: &Path, name: &str, iterations: u32, extra: &str) -> PathBuf {
    let fmu = lag_fmu(dir, false);
    let text = format!(
        r#"[simulation]
stop = 3.0
step = 0.1
solver = "bdf"
relative_tolerance = 1e-10
absolute_tolerance = 1e-12
me_coupling = "weak"
iterations = {iterations}
iteration_tolerance = 1e-300

[instances.a]
fmu = "{fmu}"
start = {{ tau = {TAU_A}, u = 1.0 }}

[instances.b]
fmu = "{fmu}"
start = {{ tau = {TAU_B} }}

[instances.c]
fmu = "{fmu}"
start = {{ tau = 0.5 }}

[[connections]]
from = "a.y"
to = "b.u"
gain = {GAIN}

[[inputs]]
to = "c.u"
times = [0.0, 0.55]
values = [0.0, 1.0]

[outputs]
variables = ["a.y", "b.y", "c.y"]
{extra}"#,
        fmu = fmu.display()
    );
    let p = dir.join(format!("{name}-{iterations}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

/// Runs `system`: results.csv's text and summary.json.
fn run_ok(system: &Path) -> (String, serde_json::Value) {
    let out = system.with_extension("out");
    let (code, stderr) = run(system, &out, &[]);
    assert_eq!(code, Some(0), "{}: {stderr}", system.display());
    let summary = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    (std::fs::read_to_string(out.join("results.csv")).unwrap(), summary)
}

/// The text of column `name` of a results.csv.
fn text_column(csv: &str, name: &str) -> Vec<String> {
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').map(|h| h.trim_matches('"')).collect();
    let k = header.iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name} in {header:?}"));
    csv.lines().skip(1).map(|l| l.split(',').nth(k).unwrap().to_owned()).collect()
}

#[test]
fn iterations_redo_model_exchange_steps_bit_for_bit() {
    // Each step is done twice (a.y changes in the first pass, b sees it in the second), the
    // second pass from the restored FMU and integrator states. a and c have no coupling inputs:
    // their redone steps must be bit-identical, or a.y would change again and, the tolerance
    // being 1e-300, every step would take all three passes. So: exactly 2 passes per step, a.y
    // and c.y byte-identical to iterations = 1, b.y closer to the closed form.
    let dir = tmp("me-iterate-redo");
    let (once, s1) = run_ok(&iteration_system(&dir, "redo", 1, ""));
    let system = iteration_system(&dir, "redo", 3, "");
    let (thrice, s3) = run_ok(&system);
    // In worker processes (`--isolate`) the same, bit for bit: the worker's ME instance saves and
    // restores its integrator, and takes the input derivatives as in process.
    let isolated = dir.join("isolated");
    let (code, stderr) = run(&system, &isolated, &["--isolate"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(std::fs::read_to_string(isolated.join("results.csv")).unwrap(), thrice, "--isolate");
    assert_eq!(s3["algorithm"], "iterative-jacobi", "{s3}");
    let steps = s3["steps"].as_u64().unwrap();
    assert_eq!(steps, 30);
    assert_eq!(s3["algorithm_stats"]["iterations"].as_u64(), Some(2 * steps), "{s3}");
    assert_eq!(s3["algorithm_stats"]["unconverged_steps"].as_u64(), Some(0), "{s3}");
    for v in ["a.y", "c.y"] {
        assert_eq!(text_column(&once, v), text_column(&thrice, v), "{v}");
    }
    // The integrators' counters include the redone work.
    let work = |s: &serde_json::Value, k: usize| s["instances"][k]["solver"]["steps"].as_u64().unwrap();
    assert!(work(&s3, 0) > work(&s1, 0), "{s1}\n{s3}");
    let error = |csv: &str| {
        let b = text_column(csv, "b.y");
        let t = text_column(csv, "time");
        t.iter()
            .zip(&b)
            .map(|(t, b)| (b.parse::<f64>().unwrap() - series_closed_form(t.parse().unwrap()).1).abs())
            .fold(0.0, f64::max)
    };
    let (explicit, iterative) = (error(&once), error(&thrice));
    println!("b.y against the closed form: iterations = 1 {explicit:e}, iterations = 3 {iterative:e}");
    assert!(explicit > 1e-3 && iterative < explicit / 20.0, "{explicit:e} vs {iterative:e}");
}

#[test]
fn iterations_with_a_strongly_coupled_group_redo_its_steps_bit_for_bit() {
    // a and b strongly coupled (group "g": one participant), c fed by b.y from outside: the
    // group's redone steps are bit-identical (2 passes per step; a.y, b.y as with iterations = 1)
    // and c sees b's end-of-step value.
    let dir = tmp("me-iterate-group");
    let group = |n| {
        let p = iteration_system(&dir, "group", n, "\n[[connections]]\nfrom = \"b.y\"\nto = \"c.u\"\n");
        let text = std::fs::read_to_string(&p).unwrap();
        let text = text
            .replace("u = 1.0 }\n", "u = 1.0 }\nme_group = \"g\"\n")
            .replace("tau = 0.25 }\n", "tau = 0.25 }\nme_group = \"g\"\n")
            .replace("[[inputs]]\nto = \"c.u\"\ntimes = [0.0, 0.55]\nvalues = [0.0, 1.0]\n", "");
        assert_eq!(text.matches("me_group").count(), 2, "{text}");
        std::fs::write(&p, text).unwrap();
        run_ok(&p)
    };
    let (once, _) = group(1);
    let (thrice, s3) = group(3);
    let steps = s3["steps"].as_u64().unwrap();
    assert_eq!(s3["algorithm_stats"]["iterations"].as_u64(), Some(2 * steps), "{s3}");
    for v in ["a.y", "b.y"] {
        assert_eq!(text_column(&once, v), text_column(&thrice, v), "{v}");
    }
    assert_ne!(text_column(&once, "c.y"), text_column(&thrice, "c.y"));
}

#[test]
fn converged_iterations_remove_the_coupling_error_of_a_model_exchange_feedback_loop() {
    // a.u = 1 − b.y / 2, b.u = 2 a.y: a loop, each lag its own ME instance. The reference is the
    // same loop strongly coupled (one ODE, tolerance 1e-10). Jacobi with held inputs
    // (iterations = 1) carries an O(H) coupling error; iterated to convergence the links are
    // interpolated between the ends of the step, an O(H²) error.
    let dir = tmp("me-iterate-loop");
    let fmu = lag_fmu(&dir, false);
    let system = |name: &str, settings: &str| {
        let text = format!(
            "[simulation]\nstop = 3.0\nstep = 0.1\nsolver = \"bdf\"\nrelative_tolerance = 1e-10\n\
             absolute_tolerance = 1e-12\n{settings}\n\n\
             [instances.a]\nfmu = \"{f}\"\nstart = {{ tau = {TAU_A} }}\n\n\
             [instances.b]\nfmu = \"{f}\"\nstart = {{ tau = {TAU_B} }}\n\n\
             [[connections]]\nfrom = \"a.y\"\nto = \"b.u\"\ngain = {GAIN}\n\n\
             [[connections]]\nfrom = \"b.y\"\nto = \"a.u\"\ngain = -0.5\noffset = 1.0\n",
            f = fmu.display()
        );
        let p = dir.join(format!("{name}.toml"));
        std::fs::write(&p, text).unwrap();
        let (csv, summary) = run_ok(&p);
        let column = |v| text_column(&csv, v).iter().map(|x| x.parse::<f64>().unwrap()).collect::<Vec<_>>();
        (column("a.y"), column("b.y"), summary)
    };
    let (ra, rb, _) = system("strong", "me_coupling = \"strong\"");
    let error = |(a, b, _): &(Vec<f64>, Vec<f64>, serde_json::Value)| {
        a.iter().zip(&ra).chain(b.iter().zip(&rb)).map(|(x, r)| (x - r).abs()).fold(0.0, f64::max)
    };
    let explicit = system("explicit", "me_coupling = \"weak\"");
    let iterative = system("iterative", "me_coupling = \"weak\"\niterations = 30\niteration_tolerance = 1e-12");
    let (e1, en) = (error(&explicit), error(&iterative));
    println!("ME loop against the strongly coupled reference: iterations = 1 {e1:e}, iterated {en:e}");
    assert_eq!(iterative.2["algorithm_stats"]["unconverged_steps"].as_u64(), Some(0), "{}", iterative.2);
    assert!(e1 > 1e-3 && en < e1 / 20.0, "{e1:e} vs {en:e}");
}

#[test]
fn iterations_refuse_a_model_exchange_fmu_without_states_naming_its_element() {
    // canGetAndSetFMUstate is read from the element of the interface the FMU runs as.
    let dir = tmp("me-iterate-stateless");
    let fmu = lag_fmu_with(&dir, false, "");
    let text =
        format!("[simulation]\nstop = 1.0\nstep = 0.1\niterations = 3\n\n[instances.a]\nfmu = \"{}\"\n", fmu.display());
    let system = dir.join("stateless.toml");
    std::fs::write(&system, text).unwrap();
    let (code, stderr) = run(&system, &dir.join("out"), &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("simulation.iterations: iterations = 3 repeats each step from saved FMU states, but a (lag) cannot get and set FMU states (canGetAndSetFMUstate is not \"true\" in <ModelExchange>"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn iterations_redo_steps_with_state_and_time_events_bit_for_bit_fmi3_and_fmi2() {
    // The FMI 3.0 ball (state events) feeds a lag; the FMI 2.0 stair (time events) runs beside
    // them; each its own ME instance. Redone steps across bounces and stair steps are
    // bit-identical: 2 passes per step, the ball's and the stair's columns as with iterations = 1.
    let dir = tmp("me-iterate-events");
    let (ball, stair, lag) = (Model::Ball.build3(&dir.join("b3")), Model::Stair.build(&dir), lag_fmu(&dir, false));
    for solver in ["bdf", "rk4"] {
        let system = |iterations: u32| {
            let text = format!(
                "[simulation]\nstop = 2.0\nstep = 0.01\nsolver = \"{solver}\"\nsolver_step = 1e-3\n\
                 me_coupling = \"weak\"\niterations = {iterations}\niteration_tolerance = 1e-300\n\n\
                 [instances.ball]\nfmu = \"{}\"\n\n[instances.stair]\nfmu = \"{}\"\n\n[instances.lag]\nfmu = \"{}\"\n\n\
                 [[connections]]\nfrom = \"ball.h\"\nto = \"lag.u\"\n",
                ball.display(),
                stair.display(),
                lag.display()
            );
            let p = dir.join(format!("events-{solver}-{iterations}.toml"));
            std::fs::write(&p, text).unwrap();
            run_ok(&p)
        };
        let (once, _) = system(1);
        let (thrice, s3) = system(3);
        let steps = s3["steps"].as_u64().unwrap();
        assert_eq!(s3["algorithm_stats"]["iterations"].as_u64(), Some(2 * steps), "{solver}: {s3}");
        assert!(s3["instances"][0]["solver"]["state_events"].as_u64().unwrap() >= 3, "{solver}: {s3}");
        for v in ["ball.h", "ball.v", "stair.x", "stair.k"] {
            assert_eq!(text_column(&once, v), text_column(&thrice, v), "{solver}: {v}");
        }
    }
}

#[test]
fn the_crane_weakly_coupled_and_iterated_approaches_the_unified_reference() {
    // Our ME FMUs declare canGetAndSetFMUstate in <ModelExchange>: crane-pub3-me-weak.toml
    // (H = 1 ms, held inputs) iterated to 1e-10 against crane-pub3-unified.toml over 0–2 s
    // (measured: 3.7e-5 m explicit, 5.8e-7 m iterated; strongly coupled 9.3e-9 m).
    paths::fmu("multibody-crane-me");
    paths::fmu("hydraulics-lumped3-me");
    paths::fmu("unified-crane");
    let dir = tmp("me-iterate-crane");
    let s_column = |scenario: &str, edit: Option<&dyn Fn(String) -> String>, s: &str| {
        let system = localized(scenario, &dir);
        let system = match edit {
            Some(edit) => {
                let p = dir.join("iterated.toml");
                std::fs::write(&p, edit(std::fs::read_to_string(&system).unwrap())).unwrap();
                p
            }
            None => system,
        };
        let out = system.with_extension("out");
        let (code, stderr) = run(&system, &out, &["--stop-time", "2"]);
        assert_eq!(code, Some(0), "{scenario}: {stderr}");
        let (header, rows) = read_csv(&out.join("results.csv"));
        let k = column(&header, s);
        rows.iter().map(|r| r[k]).collect::<Vec<_>>()
    };
    let unified = s_column("crane-pub3-unified.toml", None, "unified.s");
    let error = |s: Vec<f64>| {
        assert_eq!(s.len(), unified.len());
        s.iter().zip(&unified).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max)
    };
    let weak = error(s_column("crane-pub3-me-weak.toml", None, "mech.s"));
    let iterate = |t: String| {
        let to = "\nme_coupling = \"weak\"\niterations = 20\niteration_tolerance = 1e-10\n";
        assert!(t.contains("\nme_coupling = \"weak\"\n"), "{t}");
        t.replace("\nme_coupling = \"weak\"\n", to)
    };
    let iterated = error(s_column("crane-pub3-me-weak.toml", Some(&iterate), "mech.s"));
    println!("crane-pub3-me-weak against the unified reference, 0–2 s: max |Δs| {weak:e} m, iterated {iterated:e} m");
    assert!(weak > 1e-5 && iterated < weak / 20.0, "{weak:e} vs {iterated:e}");
}
