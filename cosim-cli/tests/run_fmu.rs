#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! `cosim run MODEL.fmu` (issue 19): one FMU run as FMPy runs it (its DefaultExperiment, typed
//! `--start-value`s, `--output-interval`, `--output-variables`), with the same results as FMPy's
//! `simulate_fmu`; the input's kind decided by its content; and the FMI 2.0 termination protocol
//! (`testing-faulty` with `fault = terminate`): the run ends successfully at the FMU's
//! `fmi2LastSuccessfulTime`, in process, isolated, and in a system of several instances.

use fmu_harness::paths;
use master::fmu::FmuCache;
use master::observer::{SharedRecorder, Status};
use master::system::SystemBuilder;
use master::{Execution, MasterError};
use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
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

struct Run {
    code: Option<i32>,
    stderr: String,
    out: PathBuf,
}

impl Run {
    fn ok(&self) -> &Self {
        assert_eq!(self.code, Some(0), "{}", self.stderr);
        self
    }
    fn failed(&self) -> &str {
        assert_eq!(self.code, Some(1), "{}", self.stderr);
        assert!(!self.stderr.contains("panicked"), "{}", self.stderr);
        &self.stderr
    }
    fn csv(&self) -> (Vec<String>, Vec<Vec<f64>>) {
        read_csv(&self.out.join("results.csv"))
    }
}

fn run(tag: &str, input: &Path, flags: &[&str]) -> Run {
    let out = tmp(tag).join("out");
    let mut args = vec!["run", input.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(flags);
    let o = cosim(&args);
    Run { code: o.status.code(), stderr: String::from_utf8_lossy(&o.stderr).into_owned(), out }
}

/// FMPy's `simulate_fmu` on `fmu`: stop 1 s, x0 = 0.1, sampled every `interval` (our step), as
/// CSV (FMPy's own `write_csv`).
fn fmpy_simulate(fmu: &Path, interval: f64, csv: &Path) {
    let script = "import sys\n\
                  from fmpy import simulate_fmu\n\
                  from fmpy.util import write_csv\n\
                  r = simulate_fmu(sys.argv[1], fmi_type='CoSimulation', stop_time=1.0, \
                  start_values={'x0': 0.1}, output_interval=float(sys.argv[2]))\n\
                  write_csv(sys.argv[3], r)\n";
    let o = Command::new(paths::python())
        .args(["-c", script])
        .arg(fmu)
        .arg(format!("{interval:e}"))
        .arg(csv)
        .output()
        .expect("running FMPy");
    assert!(o.status.success(), "FMPy failed: {}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn an_fmu_runs_like_fmpy_simulate_fmu() {
    let fmu = paths::fmu("oscillator-fd-m1");
    let r = run("fmpy", &fmu, &["--stop-time", "1", "--start-value", "x0=0.1"]);
    r.ok();
    assert!(r.stderr.contains("as an FMU (FMI 2.0 or 3.0 Co-Simulation)"), "{}", r.stderr);
    assert!(
        r.stderr.contains("stop 1 s (--stop-time)") && r.stderr.contains("step 0.001 s (DefaultExperiment stepSize)"),
        "the experiment and where it came from: {}",
        r.stderr
    );
    let s = summary(&r.out);
    assert_eq!(s["status"], "ok");
    assert_eq!(s["steps"], 1000);
    assert_eq!(s["instances"][0]["name"], "oscillator_fd_m1");
    let (header, rows) = r.csv();
    assert_eq!(header, ["time", "oscillator_fd_m1.F", "oscillator_fd_m1.x", "oscillator_fd_m1.v"]);
    assert_eq!(rows.len(), 1001);
    assert_eq!(rows[0][2], 0.1, "x0 = 0.1 was set");

    let csv = r.out.join("fmpy.csv");
    fmpy_simulate(&fmu, s["step_size"].as_f64().unwrap(), &csv);
    let (fh, frows) = read_csv(&csv);
    assert_eq!(frows.len(), rows.len(), "FMPy samples the same points");
    // Within 1e-12 (both step the FMU by t_{n+1} − t_n on the grid t_n = start + n·H, so the
    // values agree bit for bit; with a fixed H instead F differed by ~3e-11 N).
    let mut worst: f64 = 0.0;
    for (k, name) in header.iter().enumerate() {
        let short = name.strip_prefix("oscillator_fd_m1.").unwrap_or(name);
        let j = fh.iter().position(|h| h == short).unwrap_or_else(|| panic!("no {short} in FMPy's {fh:?}"));
        for (a, b) in rows.iter().zip(&frows) {
            worst = worst.max((a[k] - b[j]).abs());
        }
    }
    assert!(worst <= 1e-12, "cosim and FMPy differ by {worst}");
}

#[test]
fn output_options_and_start_value_errors() {
    let fmu = paths::fmu("oscillator-fd-m1");
    let r = run(
        "options",
        &fmu,
        &["--stop-time", "0.1", "--step", "0.01", "--output-interval", "0.05", "--output-variables", "x,v"],
    );
    r.ok();
    let (header, rows) = r.csv();
    assert_eq!(header, ["time", "oscillator_fd_m1.x", "oscillator_fd_m1.v"]);
    assert_eq!(rows.iter().map(|r| r[0]).collect::<Vec<_>>(), [0.0, 0.05, 0.1]);
    assert_eq!(summary(&r.out)["steps"], 10);
    // An enumeration by item name and by number; a start time.
    run("enum", &fmu, &["--start-time", "1", "--stop-time", "1.01", "--start-value", "damping=case1"]).ok();
    run("enum-number", &fmu, &["--stop-time", "0.01", "--start-value", "damping=1"]).ok();

    let f = fmu.display().to_string();
    for (args, needles) in [
        (
            &["--start-value", "x0=abc"][..],
            &["--start-value x0=abc", "\"abc\" is not a finite number (x0 is Real)"][..],
        ),
        (&["--start-value", "damping=nosuch"], &["\"nosuch\" is not an item of damping (", "case1"]),
        (&["--start-value", "nosuch=1"], &["no variable \"nosuch\""]),
        (&["--start-value", "x00=1"], &["no variable \"x00\" in", "; did you mean \"x0\"?"]),
        (&["--start-value", "x=1"], &["x has causality output and cannot be given a start value"]),
        (&["--start-value", "x0"], &["expected name=value"]),
        (&["--output-interval", "0.0015"], &["--output-interval", "0.0015 s is not a whole multiple", "0.001 s"]),
        (&["--output-variables", "x,zz"], &["no variable \"zz\""]),
        (&["--step", "0.003"], &["not a whole number of communication steps 0.003 s (--step): a step of", "would fit"]),
    ] {
        let r = run("bad", &fmu, args);
        let e = r.failed();
        assert!(e.contains(&f), "{args:?}: the file is named: {e}");
        for n in needles {
            assert!(e.contains(n), "{args:?}: expected {n:?} in: {e}");
        }
    }
}

#[test]
fn the_input_kind_is_decided_by_content_not_by_name() {
    let dir = tmp("detect");
    let as_toml = dir.join("model.toml");
    std::fs::copy(paths::fmu("oscillator-fd-m1"), &as_toml).unwrap();
    let r = run("fmu-named-toml", &as_toml, &["--stop-time", "0.01"]);
    r.ok();
    assert!(r.stderr.contains("model.toml as an FMU (FMI 2.0 or 3.0 Co-Simulation)"), "{}", r.stderr);

    let as_fmu = dir.join("system.fmu");
    let text = std::fs::read_to_string(paths::root().join("scenarios/oscillator-fd.toml")).unwrap();
    std::fs::write(&as_fmu, text.replace("../target/fmu", &paths::fmu_dir().display().to_string())).unwrap();
    let r = run("toml-named-fmu", &as_fmu, &["--stop-time", "0.01"]);
    r.ok();
    assert!(r.stderr.contains("system.fmu as a system file (TOML)"), "{}", r.stderr);
    assert_eq!(r.csv().0[1], "m1.x");

    let ssd = dir.join("system.ssd");
    std::fs::write(&ssd, "<?xml version=\"1.0\"?>\n<ssd:SystemStructureDescription name=\"s\" version=\"1.0\"/>\n")
        .unwrap();
    let r = run("ssd", &ssd, &[]);
    let e = r.failed();
    // Read by the SSP reader, which names the file and the line of what it cannot use.
    assert!(e.contains("as an SSP") && e.contains("system.ssd") && e.contains("line 2"), "{e}");
}

/// `testing-faulty` ending the simulation at `fault_time` (u = 2, x0 = 1: y = 1 + 2 t).
fn terminating(tag: &str, fault_time: &str, flags: &[&str]) -> Run {
    let mut args =
        vec!["--stop-time", "1", "--step", "0.1", "--start-value", "fault=terminate", "--start-value", "u=2"];
    let ft = format!("fault_time={fault_time}");
    args.extend(["--start-value", ft.as_str()]);
    args.extend_from_slice(flags);
    run(tag, &paths::fmu("testing-faulty"), &args)
}

#[test]
fn an_fmu_that_terminates_ends_the_run_successfully_at_its_last_successful_time() {
    for flags in [&[][..], &["--isolate"][..]] {
        // Inside a step: the last row is at fault_time, between communication points.
        let r = terminating("terminate", "0.55", flags);
        r.ok();
        let s = summary(&r.out);
        assert_eq!(s["status"], "terminated", "{flags:?}");
        assert_eq!(s["message"], "terminated by testing_faulty at t = 0.55");
        // Six doStep calls, the sixth ended the run at 0.55: six steps.
        assert_eq!(s["steps"], 6);
        assert_eq!(s["instances"][0]["do_step_calls"], 6);
        assert_eq!(s["time"], 0.55);
        assert!(r.stderr.contains("terminated by testing_faulty at t = 0.55"), "{}", r.stderr);
        let (header, rows) = r.csv();
        assert_eq!(header, ["time", "testing_faulty.y"]);
        let times: Vec<f64> = rows.iter().map(|r| r[0]).collect();
        assert_eq!(times.len(), 7, "{times:?}");
        assert_eq!(times[6], 0.55, "{times:?}");
        let y = rows[6][1];
        assert!((y - 2.1).abs() < 1e-12, "y(0.55) = 1 + 2 * 0.55 = {y}");
        // bonds.csv ends at the last communication point.
        assert_eq!(read_csv(&r.out.join("bonds.csv")).1.len(), 5);

        // At a communication point: that row is not repeated.
        let r = terminating("terminate-grid", "0.5", flags);
        r.ok();
        let s = summary(&r.out);
        assert_eq!((s["status"].as_str(), s["time"].as_f64()), (Some("terminated"), Some(0.5)));
        let times: Vec<f64> = r.csv().1.iter().map(|r| r[0]).collect();
        assert_eq!(times.len(), 6, "{times:?}");
        assert!((times[5] - 0.5).abs() < 1e-12);
    }
    // With an output interval the end is recorded even between rows.
    let r = terminating("terminate-interval", "0.55", &["--output-interval", "0.2"]);
    r.ok();
    let times: Vec<f64> = r.csv().1.iter().map(|r| r[0]).collect();
    assert_eq!(times, [0.0, 0.2, 0.4, 0.55]);
    // A discard without termination stays an error.
    let r = run(
        "discard",
        &paths::fmu("testing-faulty"),
        &["--stop-time", "1", "--step", "0.1", "--start-value", "fault=discard", "--start-value", "fault_time=0.5"],
    );
    let e = r.failed();
    assert!(e.contains("fmi2Discard") && e.contains("cosim does not retry steps"), "{e}");
    assert_eq!(summary(&r.out)["status"], "failed");
}

/// In a system, the first instance to terminate ends the whole run at its time; through the
/// library: `run` is `Ok`, the step that terminated returns `MasterError::Terminated`.
#[test]
fn a_terminating_instance_ends_a_system_run() {
    let mut b = SystemBuilder::new();
    b.stop(0.1).step(0.01);
    b.instance("faulty", paths::fmu("testing-faulty")).start("fault", "terminate").start("fault_time", 0.055);
    b.instance("osc", paths::fmu("oscillator-fd-m2"));
    b.connect("osc.x", "faulty.u");
    b.outputs(["faulty.y", "osc.x"]);
    let mut fmus = FmuCache::default();
    let system = b.load(&mut fmus).unwrap();
    let mut run = Execution::new(system, &fmus).unwrap();
    let trace = SharedRecorder::default();
    run.observe(Box::new(trace.clone()));
    run.run().unwrap();
    let e = run.value("osc.xx").unwrap_err().to_string();
    assert!(e.contains("no variable \"osc.xx\"") && e.contains("did you mean \"osc.x0\" or \"osc.x\"?"), "{e}");
    assert!(run.is_terminated());
    assert_eq!((run.steps(), run.time()), (6, 0.055));
    match run.step() {
        Err(MasterError::Stopped { message }) => assert_eq!(message, "terminated by faulty at t = 0.055"),
        other => panic!("{other:?}"),
    }
    let summary = run.finish().unwrap();
    assert_eq!(summary.status, Status::Terminated);
    assert_eq!(summary.message, "terminated by faulty at t = 0.055");
    let t = trace.lock().unwrap();
    assert_eq!(t.times.len(), 7);
    assert_eq!(t.times[6], 0.055);

    // Stepping by hand: the step that terminates says so.
    let mut fmus = FmuCache::default();
    let system = b.load(&mut fmus).unwrap();
    let mut run = Execution::new(system, &fmus).unwrap();
    let mut n = 0;
    let end = loop {
        match run.step() {
            Ok(()) => n += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(n, 5);
    assert!(matches!(end, MasterError::Terminated { ref instance, time } if instance == "faulty" && time == 0.055));
}

/// An FMI 3.0 FMU is read as one (issue 32): this one has no binary, which the error names with
/// the FMI 3.0 platform directory.
#[test]
fn an_fmi3_fmu_without_binary_is_refused_naming_the_3_0_platform() {
    use std::io::Write as _;
    let dir = tmp("fmi3");
    let fmu = dir.join("fmi3.fmu");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&fmu).unwrap());
    zip.start_file("modelDescription.xml", zip::write::SimpleFileOptions::default()).unwrap();
    zip.write_all(
        br#"<?xml version="1.0"?><fmiModelDescription fmiVersion="3.0" modelName="m" instantiationToken="{1}"><CoSimulation modelIdentifier="m"/></fmiModelDescription>"#,
    )
    .unwrap();
    zip.finish().unwrap();
    let r = run("fmi3", &fmu, &["--stop-time", "1"]);
    let e = r.failed();
    assert!(e.contains("fmi3.fmu") && e.contains("binaries/x86_64-linux/m.so is missing"), "{e}");
}
