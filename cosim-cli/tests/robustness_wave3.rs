#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Issue 30 (robustness, wave 3): the SSP surface (bare file names, parsing speed, units,
//! export safety), non-finite settings, tune's failures, iterative coupling, the worker
//! protocol and misleading messages. Each test failed on the code before its fix.

use fmu_harness::paths;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;
use support::{cosim, scenario, tmp};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `cosim ARGS` in `dir`.
fn cosim_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cosim")).current_dir(dir).args(args).output().unwrap()
}

/// oscillator-fd exported as an SSP in a fresh folder; returns (folder, .ssp).
fn oscillator_ssp(name: &str) -> (PathBuf, PathBuf) {
    paths::fmu("oscillator-fd-m1");
    let dir = tmp(name);
    let toml = scenario("oscillator-fd.toml", &dir);
    let ssp = dir.join("oscillator-fd.ssp");
    let o = cosim(&["export-ssp", s(&toml), "--out", s(&ssp)]);
    assert!(o.status.success(), "{}", stderr(&o));
    (dir, ssp)
}

/// The package's entries extracted into `dir/unpacked`.
fn unpack(ssp: &Path, dir: &Path) -> PathBuf {
    let out = dir.join("unpacked");
    let mut zip = zip::ZipArchive::new(std::fs::File::open(ssp).unwrap()).unwrap();
    zip.extract(&out).unwrap();
    out
}

#[test]
fn a_bare_ssd_file_name_runs_from_its_folder() {
    // Item 3: `cosim run SystemStructure.ssd` failed: "cannot make an empty path absolute".
    let (dir, ssp) = oscillator_ssp("bare");
    let unpacked = unpack(&ssp, &dir);
    let o = cosim_in(&unpacked, &["run", "SystemStructure.ssd", "--stop-time", "0.1", "--out", "out"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = std::fs::read_to_string(unpacked.join("out/results.csv")).unwrap().lines().count();
    assert_eq!(rows, 102);
}

/// The unpacked oscillator SSP with `m2.x0` in the parameter set as `<ssv:Real value unit>`,
/// `units` added to the parameter set and `connector` to m2's connectors.
fn ssv_with_unit(name: &str, value: &str, unit: &str, units: &str, connector: &str) -> PathBuf {
    let (dir, ssp) = oscillator_ssp(name);
    let d = unpack(&ssp, &dir);
    let ssv = d.join("resources/start-values.ssv");
    let text = std::fs::read_to_string(&ssv).unwrap().replace(
        "  </ssv:Parameters>",
        &format!(
            "    <ssv:Parameter name=\"m2.x0\"><ssv:Real value=\"{value}\" unit=\"{unit}\"/></ssv:Parameter>\n  \
             </ssv:Parameters>{units}"
        ),
    );
    std::fs::write(&ssv, text).unwrap();
    let ssd = d.join("SystemStructure.ssd");
    let text = std::fs::read_to_string(&ssd).unwrap().replace(
        "<ssd:Connector name=\"x\" kind=\"output\"><ssc:Real unit=\"m\"/></ssd:Connector>",
        &format!("<ssd:Connector name=\"x\" kind=\"output\"><ssc:Real unit=\"m\"/></ssd:Connector>{connector}"),
    );
    std::fs::write(&ssd, text).unwrap();
    ssd
}

fn first_row_x(out: &Path) -> f64 {
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let col = lines.next().unwrap().split(',').position(|h| h == "m2.x").unwrap();
    lines.next().unwrap().split(',').nth(col).unwrap().parse().unwrap()
}

#[test]
fn units_on_ssv_values_are_converted_or_refused() {
    // Item 5: `<ssv:Real value="1" unit="mm"/>` set 1 m.
    let param = r#"<ssd:Connector name="x0" kind="parameter"><ssc:Real unit="m"/></ssd:Connector>"#;
    let units = r#"<ssv:Units><ssc:Unit xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" name="mm"><ssc:BaseUnit m="1" factor="0.001"/></ssc:Unit></ssv:Units>"#;
    // Converted: mm defined in the parameter set, m in the SSD (exported), the connector declared.
    let ssd = ssv_with_unit("unit-ok", "250", "mm", units, param);
    let out = ssd.parent().unwrap().join("out");
    let o = cosim(&["run", s(&ssd), "--stop-time", "0.01", "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(first_row_x(&out), 0.25);
    // The same unit as the variable's: as is.
    let ssd = ssv_with_unit("unit-same", "0.5", "m", "", param);
    let out = ssd.parent().unwrap().join("out");
    let o = cosim(&["run", s(&ssd), "--stop-time", "0.01", "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(first_row_x(&out), 0.5);
    // Refused: no definition of mm; no declared unit of the variable; another dimension.
    for (name, units, connector, needle) in [
        ("unit-undefined", "", param, "unit \"mm\" has no ssc:Unit definition"),
        ("unit-undeclared", units, "", "variable's unit is not declared"),
        (
            "unit-dimension",
            units,
            r#"<ssd:Connector name="x0" kind="parameter"><ssc:Real unit="N"/></ssd:Connector>"#,
            "different dimensions",
        ),
    ] {
        let ssd = ssv_with_unit(name, "250", "mm", units, connector);
        let o = cosim(&["run", s(&ssd), "--stop-time", "0.01", "--out", s(&ssd.parent().unwrap().join("out"))]);
        let e = stderr(&o);
        assert!(
            !o.status.success() && e.contains("start-values.ssv") && e.contains("m2.x0") && e.contains(needle),
            "{name}: {e}"
        );
    }
}

#[test]
fn export_ssp_refuses_to_overwrite_its_inputs_and_leaves_nothing_on_failure() {
    // Item 6: `--out` naming one of the system's FMUs destroyed it (a 49-byte copy in the
    // package); `--out sys.toml` replaced the system file by a zip.
    paths::fmu("oscillator-fd-m1");
    let dir = tmp("export-inputs");
    let toml = scenario("oscillator-fd.toml", &dir);
    let fmu = paths::fmu_dir().join("oscillator-fd-m1.fmu");
    let before = std::fs::read(&fmu).unwrap();
    let toml_before = std::fs::read(&toml).unwrap();
    for out in [fmu.clone(), toml.clone()] {
        let o = cosim(&["export-ssp", s(&toml), "--out", s(&out)]);
        let e = stderr(&o);
        assert!(!o.status.success() && e.contains("names an input of the export"), "{e}");
    }
    assert_eq!(std::fs::read(&fmu).unwrap(), before);
    assert_eq!(std::fs::read(&toml).unwrap(), toml_before);
    // A failing export (an FMU that is not there) leaves no package and no temporary file.
    let broken = dir.join("broken.toml");
    std::fs::write(&broken, std::fs::read_to_string(&toml).unwrap().replace("oscillator-fd-m2.fmu", "gone.fmu"))
        .unwrap();
    let out = dir.join("broken.ssp");
    let o = cosim(&["export-ssp", s(&broken), "--out", s(&out)]);
    assert!(!o.status.success());
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(!out.exists() && left.len() == 2, "{left:?}");
}

#[test]
fn exported_resource_names_never_collide() {
    // Item 7: m1 from a/x.fmu, m2 from c/m3-x.fmu, m3 from b/x.fmu: m3's fallback name
    // resources/m3-x.fmu was m2's, "Duplicate filename", and the package left behind bound an
    // instance to the wrong FMU.
    paths::fmu("oscillator-fd-m1");
    let dir = tmp("export-names");
    for (sub, fmu, name) in
        [("a", "oscillator-fd-m1", "x.fmu"), ("b", "oscillator-fd-m1", "x.fmu"), ("c", "oscillator-fd-m2", "m3-x.fmu")]
    {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        std::fs::copy(paths::fmu_dir().join(format!("{fmu}.fmu")), dir.join(sub).join(name)).unwrap();
    }
    let text = std::fs::read_to_string(scenario("oscillator-fd.toml", &dir)).unwrap();
    let text = text
        .replace(&format!("{}/oscillator-fd-m1.fmu", paths::fmu_dir().display()), "a/x.fmu")
        .replace(&format!("{}/oscillator-fd-m2.fmu", paths::fmu_dir().display()), "c/m3-x.fmu")
        .replacen("[[connections]]", "[instances.m3]\nfmu = \"b/x.fmu\"\n\n[[connections]]", 1);
    let toml = dir.join("sys.toml");
    std::fs::write(&toml, text).unwrap();
    let ssp = dir.join("sys.ssp");
    let o = cosim(&["export-ssp", s(&toml), "--out", s(&ssp)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (a, b) = (dir.join("toml"), dir.join("ssp"));
    for (input, out) in [(&toml, &a), (&ssp, &b)] {
        let o = cosim(&["run", s(input), "--stop-time", "0.1", "--out", s(out)]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let csv = |d: &Path| std::fs::read(d.join("results.csv")).unwrap();
    assert_eq!(csv(&a), csv(&b), "the package binds every instance to its own FMU");
}

#[test]
fn tune_refuses_a_sweep_too_large_before_it_starts() {
    // Item 10: exit 101 "capacity overflow" (the message in fmu-warnings.log).
    paths::fmu("oscillator-fd-m1");
    let dir = tmp("tune-huge");
    let system = scenario("oscillator-tune.toml", &dir);
    let o = cosim(&["tune", s(&system), "--h-inc", "1e-300", "--out", s(&dir.join("out"))]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("oscillator-tune.toml") && e.contains("H grid") && e.contains("h_inc = 1e-300"), "{e}");
}

#[test]
fn non_finite_numbers_are_refused_before_any_file_is_written() {
    // Item 11: non-finite gain/offset, LinearTransformation factors, .ssm factors and .ssv
    // values started the run, replaced earlier results in --out, and the error blamed an FMU.
    paths::fmu("oscillator-fd-m1");
    let dir = tmp("non-finite");
    let toml = scenario("oscillator-fd.toml", &dir);
    let out = dir.join("out");
    let o = cosim(&["run", s(&toml), "--stop-time", "0.01", "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let earlier = std::fs::read(out.join("results.csv")).unwrap();
    let text = std::fs::read_to_string(&toml).unwrap();
    let cases = [
        ("gain", text.replacen("to = \"m1.xi\"", "to = \"m1.xi\"\ngain = inf", 1), "connections[0].gain: gain = inf"),
        ("offset", text.replacen("to = \"m1.xi\"", "to = \"m1.xi\"\noffset = nan", 1), "connections[0].offset"),
        ("start", text.replacen("damping = \"case1\" }", "damping = \"case1\", x0 = -inf }", 1), "start.x0: -inf"),
        (
            "tolerance",
            text.replacen("[simulation]", "[simulation]\niteration_tolerance = inf", 1),
            "positive and finite",
        ),
    ];
    for (name, system, needle) in cases {
        let p = dir.join(format!("{name}.toml"));
        std::fs::write(&p, system).unwrap();
        let o = cosim(&["run", s(&p), "--stop-time", "0.01", "--out", s(&out)]);
        let e = stderr(&o);
        assert!(!o.status.success() && e.contains(&format!("{name}.toml")) && e.contains(needle), "{name}: {e}");
        assert!(!e.contains("fmi2"), "{name}: the FMU is not blamed: {e}");
    }
    // SSP: a LinearTransformation factor, an .ssm factor, an .ssv value.
    let (sdir, ssp) = oscillator_ssp("non-finite-ssp");
    let d = unpack(&ssp, &sdir);
    let ssd = d.join("SystemStructure.ssd");
    let ssd_text = std::fs::read_to_string(&ssd).unwrap();
    let ssv = d.join("resources/start-values.ssv");
    let ssv_text = std::fs::read_to_string(&ssv).unwrap();
    let conn = r#"endElement="m1" endConnector="xi"/>"#;
    let mapped = r#"<ssd:ParameterBinding source="resources/start-values.ssv"><ssd:ParameterMapping source="resources/map.ssm"/></ssd:ParameterBinding>"#;
    std::fs::write(
        d.join("resources/map.ssm"),
        r#"<ssm:ParameterMapping xmlns:ssm="http://ssp-standard.org/SSP1/SystemStructureParameterMapping" xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" version="1.0"><ssm:MappingEntry source="m2.x0" target="m2.x0"><ssc:LinearTransformation factor="INF"/></ssm:MappingEntry></ssm:ParameterMapping>"#,
    )
    .unwrap();
    let x0 = ssv_text.replace(
        "  </ssv:Parameters>",
        "    <ssv:Parameter name=\"m2.x0\"><ssv:Real value=\"0.1\"/></ssv:Parameter>\n  </ssv:Parameters>",
    );
    let ssp_cases = [
        (
            ssd_text.replace(
                conn,
                r#"endElement="m1" endConnector="xi"><ssc:LinearTransformation factor="INF"/></ssd:Connection>"#,
            ),
            ssv_text.clone(),
            "SystemStructure.ssd",
        ),
        (
            ssd_text.replace(r#"<ssd:ParameterBinding source="resources/start-values.ssv"/>"#, mapped),
            x0.clone(),
            "map.ssm",
        ),
        (ssd_text.clone(), x0.replace("value=\"0.1\"", "value=\"NaN\""), "start-values.ssv"),
    ];
    for (ssd_new, ssv_new, file) in ssp_cases {
        std::fs::write(&ssd, ssd_new).unwrap();
        std::fs::write(&ssv, ssv_new).unwrap();
        let o = cosim(&["run", s(&ssd), "--stop-time", "0.01", "--out", s(&out)]);
        let e = stderr(&o);
        assert!(!o.status.success() && e.contains(file) && e.contains("not a finite number"), "{file}: {e}");
    }
    assert_eq!(std::fs::read(out.join("results.csv")).unwrap(), earlier, "the earlier results are untouched");
}

#[test]
fn unconverged_iterative_coupling_is_counted_and_warned_and_huge_pass_limits_are_refused() {
    // Item 12: iterative coupling that never converged ended "ok" with nothing said;
    // `iterations = 4e9` passed the guard.
    paths::fmu("oscillator-fd-m1");
    let dir = tmp("iterations");
    let text = std::fs::read_to_string(scenario("oscillator-fd.toml", &dir)).unwrap();
    let strict = dir.join("strict.toml");
    std::fs::write(
        &strict,
        text.replacen("[simulation]", "[simulation]\niterations = 2\niteration_tolerance = 1e-300", 1),
    )
    .unwrap();
    let out = dir.join("out");
    let o = cosim(&["run", s(&strict), "--stop-time", "0.05", "--out", s(&out)]);
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    assert!(
        e.contains("warning:") && e.contains("50 of 50 communication steps did not converge within iterations = 2"),
        "{e}"
    );
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(summary.contains("\"unconverged_steps\": 50") && summary.contains("\"passes\": 100"), "{summary}");
    // Converging runs say nothing.
    let loose = dir.join("loose.toml");
    std::fs::write(
        &loose,
        text.replacen("[simulation]", "[simulation]\niterations = 50\niteration_tolerance = 1e-6", 1),
    )
    .unwrap();
    let o = cosim(&["run", s(&loose), "--stop-time", "0.05", "--out", s(&dir.join("out2"))]);
    assert!(o.status.success() && !stderr(&o).contains("did not converge"), "{}", stderr(&o));
    let huge = dir.join("huge.toml");
    std::fs::write(&huge, text.replacen("[simulation]", "[simulation]\niterations = 4000000000", 1)).unwrap();
    let o = cosim(&["run", s(&huge), "--out", s(&dir.join("out3"))]);
    let e = stderr(&o);
    assert!(
        !o.status.success() && e.contains("simulation.iterations") && e.contains("× up to 4000000000 iterations"),
        "{e}"
    );
}

#[test]
fn tune_stops_in_order_on_sigint_and_leaves_no_extractions() {
    // Item 13: `cosim tune` had no run guard: SIGINT/SIGTERM ended it at once and the FMU
    // extraction folders stayed in $TMPDIR.
    paths::fmu("oscillator-fd-m1");
    let dir = tmp("tune-sigint");
    let system = scenario("oscillator-tune.toml", &dir);
    let private = dir.join("tmp");
    std::fs::create_dir_all(&private).unwrap();
    let out = dir.join("out");
    // A long sweep: 50 000 H values per sequence.
    let child = support::cosim_stoppable()
        .args(["tune", s(&system), "--h-ini", "1e-4", "--h-inc", "1e-6", "--h-max", "5e-2", "--out", s(&out)])
        .env("TMPDIR", &private)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let csv = out.join("tune.csv");
    let started = std::time::Instant::now();
    while std::fs::read_to_string(&csv).map_or(0, |t| t.lines().count()) < 3 {
        assert!(started.elapsed().as_secs() < 60, "no runs within 60 s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(std::fs::read_dir(&private).unwrap().count() > 0, "the sweep extracted its FMUs into $TMPDIR");
    Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{e}");
    assert!(e.contains("interrupted (SIGINT)") && e.contains("the same command resumes the sweep"), "{e}");
    let left: Vec<_> = std::fs::read_dir(&private).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "extraction folders left behind: {left:?}");
    // Every row written is whole.
    let text = std::fs::read_to_string(&csv).unwrap();
    let width = text.lines().next().unwrap().split(',').count();
    assert!(text.lines().all(|l| l.split(',').count() >= width), "{text}");
}

#[test]
fn misleading_messages_say_what_is_wrong() {
    // Item 17, the rest of it (the guard's and iteration_tolerance's messages: items 4, 11).
    paths::fmu("oscillator-fd-m1");
    let dir = tmp("messages");
    let toml = scenario("oscillator-fd.toml", &dir);
    let text = std::fs::read_to_string(&toml).unwrap();
    let out = dir.join("out");
    // A duplicate output name: refused before the run (was: after it), no file written.
    let dup = dir.join("dup.toml");
    std::fs::write(&dup, text.replace("variables = [\"m1.x\",", "variables = [\"m1.x\", \"m1.x\",")).unwrap();
    let o = cosim(&["run", s(&dup), "--out", s(&out)]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("outputs.variables[1]: m1.x is listed twice"), "{e}");
    assert!(!out.join("results.csv").exists());
    // No recorded variable: the header is `time` (was `time,`).
    let none = dir.join("none.toml");
    std::fs::write(
        &none,
        text.replace("variables = [\"m1.x\", \"m1.v\", \"m2.x\", \"m2.v\", \"m1.F\"]", "variables = []"),
    )
    .unwrap();
    let o = cosim(&["run", s(&none), "--stop-time", "0.002", "--out", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().collect::<Vec<_>>(), ["time", "0.0", "0.001", "0.002"]);
    // export-ssp, tune and bench given an FMU or an SSP (was: "stream did not contain valid UTF-8").
    let fmu = paths::fmu("oscillator-fd-m1");
    let ssp = dir.join("x.ssp");
    assert!(cosim(&["export-ssp", s(&toml), "--out", s(&ssp)]).status.success());
    for (args, kind) in [
        (vec!["export-ssp", s(&fmu), "--out", s(&dir.join("y.ssp"))], "an FMU"),
        (vec!["tune", s(&ssp), "--out", s(&dir.join("t"))], "an SSP"),
        (vec!["bench", s(&fmu), "--no-peers"], "an FMU"),
    ] {
        let o = cosim(&args);
        let e = stderr(&o);
        assert!(!o.status.success() && e.contains(&format!("this is {kind}")) && !e.contains("UTF-8"), "{args:?}: {e}");
    }
    // bench --steps u64::MAX (wrapped around).
    let o = cosim(&["bench", s(&toml), "--no-peers", "--steps", "18446744073709551615"]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("--steps 18446744073709551615: more than 1e9"), "{e}");
    // tune: misspelled names in range, extrapolate and compare (were accepted).
    let tune = scenario("oscillator-tune.toml", &dir);
    let tune_text = std::fs::read_to_string(&tune).unwrap();
    let input = tune_text.lines().find(|l| l.starts_with("inputs")).unwrap().to_owned();
    for (line, needle) in [
        ("range = { \"m1.nope\" = [0.0, 1.0] }", "[tune].range: "),
        ("extrapolate = [\"m1.xii\"]", "[tune].extrapolate: "),
        ("compare = [\"m3.x\"]", "[tune].compare: "),
    ] {
        let p = dir.join("bad-tune.toml");
        let base = tune_text.replace("compare = [\"m1.x\", \"m2.x\"]\n", "");
        std::fs::write(&p, base.replace(&input, &format!("{input}\n{line}"))).unwrap();
        let o = cosim(&["tune", s(&p), "--out", s(&dir.join("t2"))]);
        let e = stderr(&o);
        assert!(!o.status.success() && e.contains(needle) && e.contains("bad-tune.toml"), "{line}: {e}");
    }
}

#[test]
fn a_second_linear_transformation_is_refused() {
    // Item 17: the second ssc:LinearTransformation of a connection silently replaced the first.
    let (dir, ssp) = oscillator_ssp("two-lin");
    let d = unpack(&ssp, &dir);
    let ssd = d.join("SystemStructure.ssd");
    let text = std::fs::read_to_string(&ssd).unwrap().replace(
        r#"endElement="m1" endConnector="xi"/>"#,
        r#"endElement="m1" endConnector="xi"><ssc:LinearTransformation factor="2"/><ssc:LinearTransformation offset="1"/></ssd:Connection>"#,
    );
    std::fs::write(&ssd, text).unwrap();
    let o = cosim(&["run", s(&ssd), "--stop-time", "0.01", "--out", s(&dir.join("out"))]);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("a second ssc:LinearTransformation"), "{e}");
}

#[test]
fn a_parameter_set_that_is_no_xml_is_named_with_the_ssd_line_that_names_it() {
    // Found by `cargo xtask fuzz` (SSP reader, FUZZ_SEED=22 case 177) while verifying issue 30:
    // an unpacked SSD binding `source="../../x"` to a file that is not XML was refused naming
    // only that file ("…/x: XML: XML error: no root element"), not the SSD nor the binding.
    let (dir, ssp) = oscillator_ssp("binding-not-xml");
    let unpacked = unpack(&ssp, &dir);
    std::fs::write(dir.join("passwd"), "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    let ssd = unpacked.join("SystemStructure.ssd");
    let text = std::fs::read_to_string(&ssd).unwrap();
    let bound = text.replacen("source=\"resources/start-values.ssv\"", "source=\"../passwd\"", 1);
    assert_ne!(bound, text, "the export binds resources/start-values.ssv");
    std::fs::write(&ssd, &bound).unwrap();
    let line = bound.lines().position(|l| l.contains("../passwd")).unwrap() + 1;
    let column = bound.lines().nth(line - 1).and_then(|l| l.find("source=")).unwrap() + 1;
    let o = cosim(&["run", s(&ssd), "--out", s(&dir.join("out"))]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("passwd") && e.contains("no root element"), "{e}");
    let by = format!("named by ssd:ParameterBinding/@source (line {line}, column {column}) of {}", ssd.display());
    assert!(e.contains(&by), "{e}");
}
