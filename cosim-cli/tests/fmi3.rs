#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! FMI 3.0 Co-Simulation FMUs in the master (issue 32): our models exported as 3.0
//! (`target/fmu3/`, `cargo xtask fmus`) run through the same instance abstraction as 2.0 ones.
//! - `cosim run X.fmu` on a 3.0 FMU equals FMPy's `simulate_fmu` on it bit for bit, and the
//!   2.0 run of the same model byte for byte;
//! - crane-pub3 with the crane as 3.0 and the hydraulics as 2.0 gives the all-2.0 results byte
//!   for byte: Jacobi with power bonds, Gauss-Seidel, each instance in its own worker process
//!   (`--isolate`); iterative coupling restores 3.0 FMU states (in process and isolated);
//! - `terminateSimulation` ends the run successfully at `lastSuccessfulTime`, in process and
//!   isolated;
//! - what the master does not support (clocks, scheduled execution) is refused up front with
//!   the feature named, and a malformed 3.0 description with line and column.

use fmu_harness::paths;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::{cosim, tmp};

fn fmu3(name: &str) -> PathBuf {
    let p = paths::fmu3_dir().join(format!("{name}.fmu"));
    assert!(p.exists(), "{} is missing: run `cargo xtask fmus`", p.display());
    p
}

fn run(tag: &str, input: &Path, flags: &[&str]) -> (PathBuf, String) {
    let out = tmp(tag).join("out");
    let mut args = vec!["run", input.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(flags);
    let o = cosim(&args);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "cosim {args:?}: {stderr}");
    (out, stderr)
}

fn failed(tag: &str, input: &Path) -> String {
    let out = tmp(tag).join("out");
    let o = cosim(&["run", input.to_str().unwrap(), "--out", out.to_str().unwrap(), "--stop-time", "0.1"]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn cosim_run_of_a_fmi3_fmu_equals_fmpy_simulate_fmu_and_the_fmi2_run_bit_for_bit() {
    for (name, flags) in [
        ("oscillator-fd-m1", &["--stop-time", "1", "--start-value", "x0=0.1"][..]),
        ("hydraulics-lumped3", &["--stop-time", "0.2"][..]),
    ] {
        let (out3, stderr) = run("fmi3-run", &fmu3(name), flags);
        let (out2, _) = run("fmi2-run", &paths::fmu(name), flags);
        assert_eq!(read(&out3.join("results.csv")), read(&out2.join("results.csv")), "{name}: 3.0 vs 2.0");
        assert!(stderr.contains("steps to t ="), "{stderr}");
        // FMPy on the same 3.0 FMU, on the same grid, values printed with repr (round trip).
        let s = summary(&out3);
        let step = s["step_size"].as_f64().unwrap();
        let stop: f64 = flags[1].parse().unwrap();
        let script = "import sys\n\
            from fmpy import simulate_fmu\n\
            kw = dict(fmi_type='CoSimulation', stop_time=float(sys.argv[3]), output_interval=float(sys.argv[2]))\n\
            if sys.argv[4] == 'x0': kw['start_values'] = {'x0': 0.1}\n\
            r = simulate_fmu(sys.argv[1], **kw)\n\
            print(','.join(r.dtype.names))\n\
            for row in r: print(','.join(repr(float(x)) for x in row))\n";
        let x0 = if name.starts_with("oscillator") { "x0" } else { "-" };
        let o = Command::new(paths::python())
            .args(["-c", script])
            .arg(fmu3(name))
            .arg(format!("{step:e}"))
            .arg(format!("{stop:e}"))
            .arg(x0)
            .output()
            .unwrap();
        assert!(o.status.success(), "FMPy: {}", String::from_utf8_lossy(&o.stderr));
        let fmpy = String::from_utf8_lossy(&o.stdout).into_owned();
        let mut lines = fmpy.lines().filter(|l| !l.starts_with("Warning"));
        let fh: Vec<&str> = lines.next().unwrap().split(',').collect();
        let frows: Vec<Vec<f64>> = lines.map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect();
        let ours = read(&out3.join("results.csv"));
        let mut ours = ours.lines();
        let header: Vec<String> = ours.next().unwrap().split(',').map(str::to_owned).collect();
        let rows: Vec<Vec<f64>> = ours.map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect();
        assert_eq!(rows.len(), frows.len(), "{name}: FMPy samples the same points");
        let instance = name.replace('-', "_");
        let mut compared = 0;
        for (k, col) in header.iter().enumerate() {
            let short = col.strip_prefix(&format!("{instance}.")).unwrap_or(col);
            let Some(j) = fh.iter().position(|h| *h == short) else { continue };
            for (a, b) in rows.iter().zip(&frows) {
                assert_eq!(
                    a[k].to_bits(),
                    b[j].to_bits(),
                    "{name}: {col} cosim {} vs FMPy {} at t = {}",
                    a[k],
                    b[j],
                    a[0]
                );
            }
            compared += 1;
        }
        assert!(compared >= 3, "{name}: only {compared} columns in common: {header:?} vs {fh:?}");
    }
}

/// crane-pub3 with `mech` from `crane` and `hyd` from `target/fmu/`; `settings` added to
/// `[simulation]`.
fn mixed_crane(dir: &Path, crane: &Path, settings: &str) -> PathBuf {
    let text = read(&paths::root().join("scenarios/crane-pub3.toml"));
    let text = text
        .replace("[simulation]\n", &format!("[simulation]\n{settings}"))
        .replace("\"../target/fmu/multibody-crane.fmu\"", &format!("{:?}", crane.display().to_string()))
        .replace("../target/fmu", &paths::fmu_dir().display().to_string());
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join("crane-pub3.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// The same model gives the same bits whichever FMI version carries it, in every coupling
/// mode. With `--extrapolation 0`: with extrapolation ≥ 1 the master hands the 2.0 crane its
/// input ramps through `fmi2SetRealInputDerivatives`, which FMI 3.0 does not have (the 3.0 crane
/// holds its inputs over a step, as any FMU without `canInterpolateInputs`), so the runs then
/// differ by the physics of ramp vs hold (see `extrapolated_inputs_are_held_by_a_fmi3_fmu`).
#[test]
fn crane_pub3_with_the_crane_as_fmi3_equals_the_all_fmi2_run_byte_for_byte() {
    let dir = tmp("crane3");
    for (k, (settings, flags)) in [
        ("", &["--stop-time", "1.5", "--extrapolation", "0"][..]),
        ("", &["--stop-time", "0.8", "--extrapolation", "0", "--algorithm", "gauss-seidel"][..]),
        ("", &["--stop-time", "0.6", "--extrapolation", "0", "--isolate"][..]),
        // Multirate setting: the crane with its own step h = H/4 (`[instances.mech] step`).
        ("", &["--stop-time", "0.6", "--extrapolation", "0", "--step", "4e-3"][..]),
    ]
    .into_iter()
    .enumerate()
    {
        let multirate = flags.contains(&"4e-3");
        let own_step = |p: PathBuf| {
            if multirate {
                let t = read(&p).replace("[instances.mech]\n", "[instances.mech]\nstep = 1e-3\n");
                std::fs::write(&p, t).unwrap();
            }
            p
        };
        let all2 = own_step(mixed_crane(&dir.join(format!("v2-{k}")), &paths::fmu("multibody-crane"), settings));
        let mixed = own_step(mixed_crane(&dir.join(format!("v3-{k}")), &fmu3("multibody-crane"), settings));
        if multirate {
            assert!(read(&mixed).contains("[instances.mech]\nstep = 1e-3"));
        }
        assert!(read(&mixed).contains("fmu3/multibody-crane.fmu"));
        let (o2, _) = run("crane-v2", &all2, flags);
        let (o3, _) = run("crane-v3", &mixed, flags);
        for file in ["results.csv", "bonds.csv"] {
            let (a, b) = (read(&o2.join(file)), read(&o3.join(file)));
            assert!(a.lines().count() > 100, "{flags:?}: {file} has {} lines", a.lines().count());
            assert!(a == b, "{flags:?}: {file} differs between the all-2.0 and the mixed 2.0/3.0 run");
        }
        let (s2, s3) = (summary(&o2), summary(&o3));
        assert_eq!(s2["steps"], s3["steps"]);
        assert_eq!(s2["bonds"], s3["bonds"], "{flags:?}");
        assert!(o2.join("results.csv").exists());
    }
}

/// Iterative coupling with the 3.0 crane: each repeated pass restores its FMU state
/// (`fmi3SetFMUState`), in process and in a worker process (byte-identical results); the
/// results stay within the ramp-vs-hold difference of the all-2.0 iterative run (iterative
/// coupling hands interpolating FMUs linear input ramps, which FMI 3.0 cannot take).
#[test]
fn iterative_coupling_restores_fmi3_states_in_process_and_isolated() {
    let dir = tmp("crane3-iter");
    let all2 = mixed_crane(&dir.join("v2"), &paths::fmu("multibody-crane"), "iterations = 3\n");
    let mixed = mixed_crane(&dir.join("v3"), &fmu3("multibody-crane"), "iterations = 3\n");
    let flags = ["--stop-time", "0.8", "--extrapolation", "0"];
    let (o3, _) = run("iter-v3", &mixed, &flags);
    let (o3i, _) = run("iter-v3-isolated", &mixed, &[&flags[..], &["--isolate"]].concat());
    let (o2, _) = run("iter-v2", &all2, &flags);
    let s = summary(&o3);
    let passes = s["iterations"]["passes"].as_u64().unwrap();
    assert!(passes > s["steps"].as_u64().unwrap(), "steps were repeated: {s}");
    assert_eq!(read(&o3.join("results.csv")), read(&o3i.join("results.csv")));
    let parse = |p: &Path| -> Vec<Vec<f64>> {
        read(p).lines().skip(1).map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect()
    };
    let (a, b) = (parse(&o2.join("results.csv")), parse(&o3.join("results.csv")));
    for j in 1..a[0].len() {
        let range = a.iter().map(|r| r[j].abs()).fold(0.0, f64::max);
        for (x, y) in a.iter().zip(&b) {
            assert!((x[j] - y[j]).abs() <= 0.05 * range, "column {j} at t = {}: {} vs {}", x[0], x[j], y[j]);
        }
    }
}

/// With extrapolation order 1 (crane-pub3's setting) the 2.0 crane receives input ramps and the
/// 3.0 crane cannot: the runs agree before the valve opens (t < 0.5 s, constant inputs) and
/// differ after, by less than 5 % of each signal's range over the first 1.5 s.
#[test]
fn extrapolated_inputs_are_held_by_a_fmi3_fmu() {
    let dir = tmp("crane3-ramps");
    let all2 = mixed_crane(&dir.join("v2"), &paths::fmu("multibody-crane"), "");
    let mixed = mixed_crane(&dir.join("v3"), &fmu3("multibody-crane"), "");
    let (o2, _) = run("ramps-v2", &all2, &["--stop-time", "1.5"]);
    let (o3, _) = run("ramps-v3", &mixed, &["--stop-time", "1.5"]);
    let parse = |p: &Path| -> Vec<Vec<f64>> {
        read(p).lines().skip(1).map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect()
    };
    let (a, b) = (parse(&o2.join("results.csv")), parse(&o3.join("results.csv")));
    assert_eq!(a.len(), b.len());
    let mut differs = false;
    for j in 1..a[0].len() {
        let range = a.iter().map(|r| r[j].abs()).fold(0.0, f64::max);
        for (x, y) in a.iter().zip(&b) {
            if x[0] <= 0.5 {
                assert_eq!(x[j].to_bits(), y[j].to_bits(), "column {j} at t = {}", x[0]);
            }
            differs |= x[j] != y[j];
            assert!((x[j] - y[j]).abs() <= 0.05 * range, "column {j} at t = {}: {} vs {}", x[0], x[j], y[j]);
        }
    }
    assert!(differs, "the 2.0 crane interpolates its inputs, the 3.0 crane holds them");
}

#[test]
fn a_fmi3_fmu_that_sets_terminate_simulation_ends_the_run_at_its_last_successful_time() {
    for flags in [&[][..], &["--isolate"][..]] {
        let mut args = vec![
            "--stop-time",
            "1",
            "--step",
            "0.1",
            "--start-value",
            "fault=terminate",
            "--start-value",
            "u=2",
            "--start-value",
            "fault_time=0.55",
        ];
        args.extend_from_slice(flags);
        let (out, stderr) = run("terminate3", &fmu3("testing-faulty"), &args);
        let s = summary(&out);
        assert_eq!(s["status"], "terminated", "{stderr}");
        assert_eq!(s["message"], "terminated by testing_faulty at t = 0.55");
        assert_eq!(s["time"], 0.55);
        let csv = read(&out.join("results.csv"));
        let last = csv.lines().last().unwrap();
        let y: f64 = last.split(',').nth(1).unwrap().parse().unwrap();
        assert!(last.starts_with("0.55,") && (y - 2.1).abs() < 1e-12, "{last}");
    }
}

/// A zip holding only `modelDescription.xml` (the loader refuses before it looks for a binary).
fn xml_only_fmu(dir: &Path, name: &str, xml: &str) -> PathBuf {
    let path = dir.join(format!("{name}.fmu"));
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    zip.start_file("modelDescription.xml", zip::write::SimpleFileOptions::default()).unwrap();
    zip.write_all(xml.as_bytes()).unwrap();
    zip.finish().unwrap();
    path
}

const CLOCKED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="3.0" modelName="clocked" instantiationToken="{c}">
  <CoSimulation modelIdentifier="clocked"/>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent"/>
    <Clock name="tick" valueReference="1" causality="input" intervalVariability="constant" intervalDecimal="0.1"/>
    <Float64 name="y" valueReference="2" causality="output" clocks="1" variability="discrete"/>
  </ModelVariables>
  <ModelStructure><Output valueReference="2"/></ModelStructure>
</fmiModelDescription>"#;

#[test]
fn clocks_and_scheduled_execution_are_refused_up_front_with_the_feature_named() {
    let dir = tmp("refused3");
    let e = failed("clocked", &xml_only_fmu(&dir, "clocked", CLOCKED));
    assert!(e.contains("clocked.fmu") && e.contains("FMI 3.0"), "{e}");
    assert!(e.contains("clocks: <Clock name=\"tick\"> (line 6)"), "{e}");
    assert!(e.contains("clocked variables: <Float64 name=\"y\""), "{e}");
    assert!(e.contains("hasEventMode"), "clocks in Co-Simulation need event mode: {e}");
    assert!(!e.contains("binaries/"), "refused before the binary is looked at: {e}");
    // With event mode the clocks run (fmi3_clocks.rs): this one gets as far as its binary.
    let with_events =
        CLOCKED.replace("modelIdentifier=\"clocked\"/>", "modelIdentifier=\"clocked\" hasEventMode=\"true\"/>");
    let e = failed("clocked-events", &xml_only_fmu(&dir, "clocked-events", &with_events));
    assert!(e.contains("binaries/x86_64-linux/clocked.so is missing"), "{e}");
    let se = CLOCKED
        .replace("<CoSimulation modelIdentifier=\"clocked\"/>", "<ScheduledExecution modelIdentifier=\"se\"/>")
        .replace("<Clock name=\"tick\" valueReference=\"1\" causality=\"input\" intervalVariability=\"constant\" intervalDecimal=\"0.1\"/>", "")
        .replace(" clocks=\"1\"", "");
    // Scheduled Execution only is run (fmi3_scheduled.rs): this one gets as far as its binary.
    let e = failed("scheduled", &xml_only_fmu(&dir, "scheduled", &se));
    assert!(e.contains("binaries/x86_64-linux/se.so is missing"), "{e}");
}

#[test]
fn a_malformed_fmi3_description_is_reported_with_line_and_column() {
    let dir = tmp("malformed3");
    let bad =
        CLOCKED.replace("valueReference=\"2\" causality=\"output\"", "valueReference=\"two\" causality=\"output\"");
    let e = failed("malformed", &xml_only_fmu(&dir, "malformed", &bad));
    assert!(e.contains("modelDescription.xml (FMI 3.0): line 7, column 23"), "{e}");
    assert!(e.contains("valueReference=\"two\" is not an unsigned integer"), "{e}");
    let unclosed = CLOCKED.replace("</ModelVariables>", "");
    let e = failed("unclosed", &xml_only_fmu(&dir, "unclosed", &unclosed));
    assert!(e.contains("malformed XML") && e.contains("line "), "{e}");
}

#[test]
fn cosim_info_reads_a_fmi3_fmu() {
    let o = cosim(&["info", fmu3("hydraulics-naya").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{text}{}", String::from_utf8_lossy(&o.stderr));
    assert!(text.contains("FMI version:      3.0"), "{text}");
    assert!(text.contains("Runs with cosim:  yes (binaries/x86_64-linux/hydraulics_naya.so)"), "{text}");
}

/// `cosim export-ssp` embeds the 3.0 crane beside the 2.0 hydraulics; `cosim run x.ssp` gives the
/// system file's results byte for byte.
#[test]
fn an_ssp_with_a_fmi3_component_runs_like_its_system_file() {
    let dir = tmp("crane3-ssp");
    let mixed = mixed_crane(&dir.join("v3"), &fmu3("multibody-crane"), "");
    let ssp = dir.join("mixed.ssp");
    let o = cosim(&["export-ssp", mixed.to_str().unwrap(), "--out", ssp.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let flags = ["--stop-time", "0.8", "--extrapolation", "0"];
    let (from_ssp, _) = run("ssp3", &ssp, &flags);
    let (from_toml, _) = run("toml3", &mixed, &flags);
    assert_eq!(read(&from_ssp.join("results.csv")), read(&from_toml.join("results.csv")));
}

fn description_in(fmu: &Path) -> String {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(fmu).unwrap()).unwrap();
    let mut xml = String::new();
    std::io::Read::read_to_string(&mut zip.by_name("modelDescription.xml").unwrap(), &mut xml).unwrap();
    xml
}

/// Every 3.0 description we export reads back (`from_str3`) into the data model with no
/// validation error and the 2.0 description's variables (plus `time`), types and structure.
#[test]
fn our_fmi3_descriptions_read_back_into_the_fmi2_data_model() {
    use model_description::{from_str, from_str3, validate, Severity};
    for fmu in paths::all_fmus() {
        let name = fmu.file_stem().unwrap().to_str().unwrap();
        let md2 = from_str(&description_in(&fmu)).unwrap();
        let (md3, x) = from_str3(&description_in(&fmu3(name))).unwrap();
        assert!(x.unsupported.is_empty() && x.skipped.is_empty(), "{name}: {x:?}");
        let errors: Vec<String> =
            validate(&md3).into_iter().filter(|p| p.severity == Severity::Error).map(|p| p.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
        assert_eq!(md3.guid, md2.guid, "{name}: instantiationToken is the 2.0 GUID");
        assert_eq!(md3.model_variables[0].name, "time");
        assert_eq!(md3.model_variables.len(), md2.model_variables.len() + 1);
        for (a, b) in md2.model_variables.iter().zip(&md3.model_variables[1..]) {
            assert_eq!((&a.name, a.value_reference, a.causality), (&b.name, b.value_reference, b.causality), "{name}");
            // A state's derivative is named by index, which shifts by one for `time` too.
            let mut kind3 = b.kind.clone();
            if let model_description::VariableKind::Real { derivative: Some(d), .. } = &mut kind3 {
                *d -= 1;
            }
            assert_eq!(a.kind, kind3, "{name}: {}", a.name);
        }
        // ModelStructure: the same unknowns and dependencies (indices shift by one for `time`).
        let shift = |u: &model_description::Unknown| {
            (u.index - 1, u.dependencies.clone().map(|d| d.iter().map(|i| i - 1).collect::<Vec<_>>()))
        };
        let plain = |u: &model_description::Unknown| (u.index, u.dependencies.clone());
        assert_eq!(
            md3.model_structure.outputs.iter().map(shift).collect::<Vec<_>>(),
            md2.model_structure.outputs.iter().map(plain).collect::<Vec<_>>(),
            "{name}"
        );
        assert_eq!(md3.unit_definitions, md2.unit_definitions, "{name}");
    }
}

#[test]
fn cosim_check_checks_a_fmi3_fmu_through_the_fmi3_functions() {
    let fmu = fmu3("testing-faulty");
    let o = cosim(&["check", fmu.to_str().unwrap(), "--steps", "5", "--cycles", "20", "--repeat", "2"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    // The header names the model (issue 46: it was empty for FMI 3.0).
    assert!(!stdout.lines().next().unwrap_or_default().ends_with("()"), "{stdout}");
    let line = |id: &str| {
        stdout.lines().find(|l| l.split_whitespace().nth(1) == Some(id)).unwrap_or_else(|| panic!("{id}: {stdout}"))
    };
    // Every behavioural family runs, naming the FMI 3.0 functions and sections.
    for id in ["load", "run", "reset", "instances", "threads", "illegal", "state", "serialize", "feedthrough"] {
        assert!(line(id).starts_with("PASS") || line(id).starts_with("WARN"), "{}", line(id));
        assert!(line(id).contains("FMI 3.0"), "{}", line(id));
    }
    assert!(line("illegal").contains("fmi3DoStep before initialization: fmi3Error"), "{}", line("illegal"));
    assert!(!stdout.contains("fmi2"), "{stdout}");
    assert!(
        line("interpolate").starts_with("SKIP") && line("interpolate").contains("FMI 3.0 has no input derivatives")
    );
}
