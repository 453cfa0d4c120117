#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! FMUs that fail during a run (issue 7 §2–3), on the test FMU `testing-faulty` whose steps
//! misbehave from `fault_time` on: a warning is logged and the run goes on; discard, error, NaN
//! and panic stop the run with a message naming the instance, the time and what happened; an
//! abort kills only the worker process under `--isolate`. Every case checks that results.csv
//! holds the rows up to the failure and that summary.json says what happened. Also: diverging
//! residual energy (`max_residual_energy`), non-finite values reaching the master, and a worker
//! killed from outside.

mod support;

use fmu_harness::paths;
use master::fmu::FmuCache;
use master::fmu::IsolatedInstance;
use master::observer::Status;
use master::system::SystemBuilder;
use master::{Execution, FmuInstance, MasterError};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cosim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cosim")).args(args).output().unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cosim-failures-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text.replace("FMUDIR", &paths::fmu_dir().display().to_string())).unwrap();
    p
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(str::to_owned).collect();
    (header, lines.map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect())
}

fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// The faulty FMU integrating an oscillator's position (u = osc.x): y moves, so the rows before
/// the failure carry real values. H = 10 ms, faults from t = 0.05 s (the sixth step).
fn faulty_system(fault: &str, extra_simulation: &str) -> String {
    format!(
        r#"
[simulation]
stop = 0.1
step = 0.01
{extra_simulation}
[instances.faulty]
fmu = "FMUDIR/testing-faulty.fmu"
start = {{ fault = "{fault}", fault_time = 0.05 }}
[instances.osc]
fmu = "FMUDIR/oscillator-fd-m2.fmu"
[[connections]]
from = "osc.x"
to = "faulty.u"
[outputs]
variables = ["faulty.y", "osc.x"]
"#
    )
}

struct Run {
    code: Option<i32>,
    stderr: String,
    out: PathBuf,
    summary: serde_json::Value,
    rows: Vec<Vec<f64>>,
}

fn run_system(tag: &str, text: &str, flags: &[&str]) -> Run {
    paths::fmu("testing-faulty");
    let dir = tmp(tag);
    let p = write(&dir, "sys.toml", text);
    let out = dir.join("out");
    let mut args = vec!["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(flags);
    let o = cosim(&args);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!stderr.contains("panicked at master/"), "the master panicked: {stderr}");
    let (header, rows) = read_csv(&out.join("results.csv"));
    assert_eq!(header, ["time", "faulty.y", "osc.x"]);
    Run { code: o.status.code(), stderr, summary: summary(&out), out, rows }
}

/// A failure at t = 0.05: exit 1, the message on stderr and in summary.json, the rows at
/// t = 0 … 0.05 on disk (5 steps done), and the same rows as the run without the fault.
fn assert_stopped_at_fault(r: &Run, needles: &[&str], reference: &[Vec<f64>]) {
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    let message = r.summary["message"].as_str().unwrap();
    for n in needles {
        assert!(message.contains(n), "expected {n:?} in summary message: {message}");
        assert!(r.stderr.contains(n), "expected {n:?} on stderr: {}", r.stderr);
    }
    assert_eq!(r.summary["status"], "failed");
    assert_eq!(r.summary["steps"], 5);
    assert!((r.summary["time"].as_f64().unwrap() - 0.05).abs() < 1e-12);
    assert_eq!(r.rows.len(), 6, "rows at t = 0, 0.01, …, 0.05");
    assert_eq!(r.rows[..], reference[..6], "the rows before the failure are those of the faultless run");
    assert!(r.stderr.contains(&r.out.display().to_string()), "stderr says where the results are: {}", r.stderr);
}

/// Each fault, in process and with `--isolate` (the worker forwards every status and message).
#[test]
fn failing_fmus_stop_the_run_with_a_message_and_keep_the_results() {
    let reference = run_system("none", &faulty_system("none", ""), &[]);
    assert_eq!(reference.code, Some(0), "{}", reference.stderr);
    assert_eq!(reference.rows.len(), 11);
    assert_eq!(reference.summary["status"], "ok");
    let y_end = reference.rows[10][1];
    assert!((y_end - 1.0).abs() > 1e-4, "y integrates osc.x: y(0.1) = {y_end}");

    for flags in [&[][..], &["--isolate"][..]] {
        let tag = if flags.is_empty() { "in-process" } else { "isolated" };

        // fmi2Warning: logged with the FMU's message, the run goes on to the end.
        let r = run_system(&format!("warning-{tag}"), &faulty_system("warning", ""), flags);
        assert_eq!(r.code, Some(0), "{tag}: {}", r.stderr);
        assert_eq!(r.summary["status"], "ok");
        assert_eq!(r.rows, reference.rows, "{tag}: a warning changes nothing");
        assert!(
            r.stderr.contains("faulty") && r.stderr.contains("fault = warning: warning in the step from t = 0.05"),
            "{tag}: the warning is logged: {}",
            r.stderr
        );
        assert_eq!(r.stderr.matches("fault = warning").count(), 5, "{tag}: steps from t = 0.05 on warn: {}", r.stderr);

        let r = run_system(&format!("discard-{tag}"), &faulty_system("discard", ""), flags);
        assert_stopped_at_fault(
            &r,
            &[
                "faulty: fmi2DoStep at t = 0.05 returned fmi2Discard (the FMU could not complete the step; cosim does \
                 not retry steps)",
                "the step from t = 0.05 cannot be completed",
            ],
            &reference.rows,
        );

        let r = run_system(&format!("error-{tag}"), &faulty_system("error", ""), flags);
        assert_stopped_at_fault(
            &r,
            &["faulty: fmi2DoStep at t = 0.05 returned fmi2Error", "fault = error: failure in the step from t = 0.05"],
            &reference.rows,
        );

        // NaN: the export layer refuses to hand out a NaN output and names it.
        let r = run_system(&format!("nan-{tag}"), &faulty_system("nan", ""), flags);
        assert_stopped_at_fault(
            &r,
            &["faulty: fmi2DoStep at t = 0.05 returned fmi2Error", "output \"y\" = NaN after the step from t = 0.05"],
            &reference.rows,
        );

        // A panic in model code is caught at the C boundary: fmi2Error with the panic message.
        let r = run_system(&format!("panic-{tag}"), &faulty_system("panic", ""), flags);
        assert_stopped_at_fault(
            &r,
            &[
                "faulty: fmi2DoStep at t = 0.05 returned fmi2Error",
                "internal error (panic): fault = panic: deliberate panic in the step from t = 0.05",
            ],
            &reference.rows,
        );
    }
}

#[test]
fn an_fmu_that_aborts_kills_only_its_worker_process() {
    // --isolate on the command line.
    let r = run_system("abort-flag", &faulty_system("abort", ""), &["--isolate"]);
    let reference = run_system("abort-ref", &faulty_system("none", ""), &[]);
    assert_stopped_at_fault(
        &r,
        &["faulty: fmi2DoStep at t = 0.05: worker process died (signal 6, SIGABRT)"],
        &reference.rows,
    );
    // The same from the system file, with Gauss-Seidel (the order of calls differs).
    let r = run_system(
        "abort-file",
        &faulty_system("abort", "isolate = true\nalgorithm = \"gauss-seidel\""),
        &["--algorithm", "gauss-seidel"],
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.summary["message"].as_str().unwrap().contains("worker process died (signal 6, SIGABRT)"));
    assert_eq!(r.summary["status"], "failed");
    assert_eq!(r.rows.len() as u64, r.summary["steps"].as_u64().unwrap() + 1);
    assert_eq!(r.summary["steps"], 5);
}

#[test]
fn isolated_runs_give_the_same_results_as_in_process_runs() {
    paths::fmu("oscillator-fd-m1");
    let text = std::fs::read_to_string(paths::root().join("scenarios/oscillator-fd.toml"))
        .unwrap()
        .replace("../target/fmu", "FMUDIR")
        .replace("stop = 10.0", "stop = 0.5");
    let dir = tmp("same");
    let p = write(&dir, "fd.toml", &text);
    let (a, b) = (dir.join("a"), dir.join("b"));
    for (out, flags) in [(&a, &[][..]), (&b, &["--isolate"][..])] {
        let mut args = vec!["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()];
        args.extend_from_slice(flags);
        let o = cosim(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    // results.csv: header and t = 0 … 0.5; bonds.csv: header and the 500 steps.
    for (f, lines) in [("results.csv", 502), ("bonds.csv", 501)] {
        let (x, y) = (std::fs::read_to_string(a.join(f)).unwrap(), std::fs::read_to_string(b.join(f)).unwrap());
        assert_eq!(x.lines().count(), lines, "{f}");
        assert!(x == y, "{f} differs between in-process and isolated runs");
    }
    assert_eq!(summary(&b)["instances"][1]["do_step_calls"], 500);
}

#[test]
fn isolated_load_errors_name_the_file() {
    let dir = tmp("isoload");
    std::fs::write(dir.join("junk.fmu"), b"not a zip").unwrap();
    let p = write(
        &dir,
        "sys.toml",
        "[simulation]\nstop = 1.0\nstep = 0.1\nisolate = true\n[instances.j]\nfmu = \"junk.fmu\"\n",
    );
    let o = cosim(&["run", p.to_str().unwrap(), "--out", dir.join("out").to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("junk.fmu") && err.contains("zip"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// Residual energy beyond `max_residual_energy` stops the run, naming the time and the bond.
#[test]
fn diverging_residual_energy_stops_the_run() {
    paths::fmu("oscillator-fd-m1");
    let bound = 1.5;
    let text = std::fs::read_to_string(paths::root().join("scenarios/oscillator-fd.toml"))
        .unwrap()
        .replace("../target/fmu", "FMUDIR")
        .replace("[simulation]\n", &format!("[simulation]\nmax_residual_energy = {bound}\n"));
    let dir = tmp("diverge");
    let p = write(&dir, "fd.toml", &text);
    let out = dir.join("out");
    let o = cosim(&["run", p.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let s = summary(&out);
    let message = s["message"].as_str().unwrap();
    assert!(message.starts_with("residual energy bound exceeded at t = "), "{message}");
    assert!(!message.contains("diverged"), "{message}");
    assert!(message.contains("bond \"coupling\" between m1 and m2"), "{message}");
    assert!(message.contains("exceeds max_residual_energy = 1.5 J"), "{message}");
    assert!(err.contains(message), "{err}");
    assert_eq!(s["status"], "failed");
    let steps = s["steps"].as_u64().unwrap();
    assert!(steps > 0 && steps < 10_000, "{steps}");
    let t_fail: f64 =
        message["residual energy bound exceeded at t = ".len()..].split(':').next().unwrap().parse().unwrap();
    assert!((t_fail - (steps + 1) as f64 * 1e-3).abs() < 1e-9, "fails in step {steps} + 1: {t_fail}");
    // Σ|δE| crossed the bound in the failing step: below it in the last recorded row, above in
    // the summary.
    let energy_abs = s["bonds"][0]["energy_abs"].as_f64().unwrap();
    assert!(energy_abs > bound, "{energy_abs}");
    let (bh, brows) = read_csv(&out.join("bonds.csv"));
    let i = bh.iter().position(|c| c == "coupling.E_abs").unwrap();
    assert_eq!(brows.len() as u64, steps);
    let last = brows.last().unwrap()[i];
    assert!(last <= bound && last > 0.5 * bound, "E_abs before the failing step: {last}");
    let (_, rows) = read_csv(&out.join("results.csv"));
    assert_eq!(rows.len() as u64, steps + 1);

    let bad =
        write(&dir, "bad.toml", &text.replace(&format!("max_residual_energy = {bound}"), "max_residual_energy = -1"));
    let o = cosim(&["run", bad.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("simulation.max_residual_energy") && err.contains("-1 J must be positive"), "{err}");
}

/// A vendor FMU that returns NaN with fmi2OK (ours refuse to): the engine stops at the first
/// non-finite output it reads, naming the instance, the variable and the time.
struct NanAfter {
    inner: master::Instance,
    from: f64,
    now: f64,
}

impl FmuInstance for NanAfter {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn execute(&mut self, mut call: master::Call<'_>) -> master::Result<()> {
        self.inner.execute(call.reborrow())?;
        match call {
            master::Call::GetFloat64 { out, .. } if self.now >= self.from - 1e-12 => {
                out.iter_mut().for_each(|x| *x = f64::NAN)
            }
            master::Call::DoStep { t, h } => self.now = t + h,
            _ => {}
        }
        Ok(())
    }
    fn can_interpolate_inputs(&self) -> bool {
        self.inner.can_interpolate_inputs()
    }
}

#[test]
fn non_finite_outputs_reaching_the_master_stop_the_run() {
    let dir = tmp("notfinite");
    let path = write(&dir, "sys.toml", &faulty_system("none", ""));
    let mut fmus = FmuCache::default();
    let sys = SystemBuilder::read(&path).unwrap().load(&mut fmus).unwrap();
    let mut instances: Vec<Box<dyn FmuInstance>> = Vec::new();
    let mut mds = Vec::new();
    for spec in sys.instances() {
        let fmu = fmus.get(&spec.fmu).unwrap();
        mds.push(fmu.model_description());
        let inner = fmu.instantiate(&spec.name).unwrap();
        if spec.name == "faulty" {
            instances.push(Box::new(NanAfter { inner, from: 0.05, now: 0.0 }));
        } else {
            instances.push(Box::new(inner));
        }
    }
    let out = dir.join("out");
    let mut run = Execution::with_instances(sys, instances, &mds).unwrap();
    cosim_cli::run::run_into(&mut run, &out).unwrap();
    let s = run.finish().unwrap();
    assert_eq!(s.status, Status::Failed);
    assert_eq!(s.message, "faulty.y = NaN at t = 0.05");
    assert_eq!(s.steps, 4, "the step ending at t = 0.05 produced the NaN");
    let (_, rows) = read_csv(&out.join("results.csv"));
    assert_eq!(rows.len(), 5);
    assert!(rows.iter().flatten().all(|x| x.is_finite()));
    assert_eq!(summary(&out)["message"], "faulty.y = NaN at t = 0.05");
}

/// A worker killed from outside (OOM killer, a user): the next call reports it, and every call
/// after that too, without touching the dead pipes again.
#[test]
fn a_killed_worker_is_reported_by_the_next_call() {
    let fmu = paths::fmu("testing-faulty");
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_cosim"));
    let (mut s, md) = IsolatedInstance::spawn(&exe, &fmu, "victim", None).unwrap();
    assert_eq!(md.model_name, "TestingFaulty");
    assert!(s.can_interpolate_inputs());
    let y = md.variable("y").unwrap().value_reference;
    s.setup(0.0, Some(1.0)).unwrap();
    s.enter_initialization().unwrap();
    s.exit_initialization().unwrap();
    s.do_step(0.0, 0.1).unwrap();
    let mut v = [0.0];
    s.get_real(&[y], &mut v).unwrap();
    assert_eq!(v, [1.0]);
    // Errors of the FMU come back as Call errors, as in process.
    match s.get_real(&[999], &mut v) {
        Err(MasterError::Call { instance, function, status, last_log, .. }) => {
            assert_eq!((instance.as_str(), function, status.as_str()), ("victim", "fmi2GetReal", "fmi2Error"));
            assert!(last_log.contains("value reference 999 does not exist"), "{last_log}");
        }
        other => panic!("{other:?}"),
    }
    let kill = Command::new("kill").args(["-KILL", &s.pid().to_string()]).status().unwrap();
    assert!(kill.success());
    let e = s.do_step(0.1, 0.1).unwrap_err().to_string();
    assert_eq!(e, "victim: fmi2DoStep at t = 0.1: worker process died (signal 9, SIGKILL)");
    let e = s.terminate().unwrap_err().to_string();
    assert!(e.contains("victim: fmi2Terminate") && e.contains("signal 9"), "{e}");
}

#[test]
fn sigint_stops_the_run_and_leaves_readable_results() {
    let out = std::env::temp_dir().join(format!("cosim-sigint-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let scenario = fmu_harness::paths::root().join("scenarios/oscillator-fd.toml");
    // 1000 s at H = 10 µs: 1e8 steps, minutes at ~1.5 µs per step, far longer than we wait.
    let mut child = support::cosim_stoppable()
        .args([
            "run",
            scenario.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--step",
            "1e-5",
            "--stop-time",
            "1000",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let status = std::process::Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let out_status = child.wait().unwrap();
    assert!(!out_status.success(), "an interrupted run must not exit 0");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["status"], "interrupted", "{summary}");
    assert!(summary["message"].as_str().unwrap().contains("interrupted"));
    let steps = summary["steps"].as_u64().unwrap();
    assert!(steps > 0 && steps < 100_000_000, "{steps}");
    let text = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len() as u64, steps + 2, "header + start + every completed step");
    assert!(rows.last().unwrap().split(',').all(|x| x.parse::<f64>().is_ok()), "last row is complete");
}
