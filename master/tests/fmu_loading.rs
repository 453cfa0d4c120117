#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! The master's FMU loading layer on real FMUs (ours from `cargo xtask fmus`, and the
//! OpenModelica FMUs of the PyPI package gemseo-fmu) and on hostile archives built here.

use fmu_harness::paths;
use master::fmu::{info, Archive};
use master::{Fmu, FmuInstance, MasterError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use zip::write::SimpleFileOptions;

// ---------------------------------------------------------------------------------------------
// Helpers

/// A scratch folder under the system temp folder, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Self {
        static N: AtomicU64 = AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "cosim-fmu-loading-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

enum Entry<'a> {
    File(&'a str, Vec<u8>),
    Symlink(&'a str, &'a str),
}

fn write_zip(path: &Path, entries: Vec<Entry<'_>>) {
    let mut w = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let o = SimpleFileOptions::default().unix_permissions(0o644);
    for e in entries {
        match e {
            Entry::File(name, bytes) => {
                w.start_file(name, o).unwrap();
                w.write_all(&bytes).unwrap();
            }
            Entry::Symlink(name, target) => w.add_symlink(name, target, o).unwrap(),
        }
    }
    w.finish().unwrap();
}

/// A minimal valid FMI 2.0 description with the given interfaces.
fn description(id: &str, cs: bool, me: bool) -> Vec<u8> {
    let cs = if cs { format!(r#"<CoSimulation modelIdentifier="{id}"/>"#) } else { String::new() };
    let me = if me { format!(r#"<ModelExchange modelIdentifier="{id}"/>"#) } else { String::new() };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<fmiModelDescription fmiVersion="2.0" modelName="{id}" guid="{{0000}}">
  {me}{cs}
  <ModelVariables>
    <ScalarVariable name="y" valueReference="0" causality="output"><Real/></ScalarVariable>
  </ModelVariables>
  <ModelStructure><Outputs><Unknown index="1"/></Outputs></ModelStructure>
</fmiModelDescription>
"#
    )
    .into_bytes()
}

fn load_err(path: &Path) -> String {
    match Fmu::load(path) {
        Ok(_) => panic!("{} loaded but should have been refused", path.display()),
        Err(e) => {
            assert!(matches!(e, MasterError::Fmu { .. }), "{e:?}");
            let msg = e.to_string();
            assert!(msg.contains(&path.display().to_string()), "the message must name the file: {msg}");
            msg
        }
    }
}

/// Copies the archive at `from` to `to`, replacing `modelDescription.xml` by `edit(xml)`.
fn with_description(from: &Path, to: &Path, edit: impl Fn(&str) -> String) {
    let mut src = zip::ZipArchive::new(std::fs::File::open(from).unwrap()).unwrap();
    let mut w = zip::ZipWriter::new(std::fs::File::create(to).unwrap());
    for i in 0..src.len() {
        let name = src.name_for_index(i).unwrap().to_owned();
        if name == "modelDescription.xml" {
            let mut xml = String::new();
            src.by_index(i).unwrap().read_to_string(&mut xml).unwrap();
            w.start_file(name, SimpleFileOptions::default()).unwrap();
            w.write_all(edit(&xml).as_bytes()).unwrap();
        } else {
            w.raw_copy_file(src.by_index(i).unwrap()).unwrap();
        }
    }
    w.finish().unwrap();
}

/// The gemseo-fmu wheel: `$GEMSEO_FMU_WHEEL` or `target/thirdparty/gemseo_fmu-*.whl`.
fn gemseo_wheel() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GEMSEO_FMU_WHEEL") {
        let p = PathBuf::from(p);
        assert!(p.is_file(), "GEMSEO_FMU_WHEEL={} does not exist", p.display());
        return Some(p);
    }
    let mut wheels: Vec<PathBuf> = std::fs::read_dir(paths::root().join("target/thirdparty"))
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("gemseo_fmu-") && n.ends_with(".whl"))
        })
        .collect();
    wheels.sort();
    wheels.pop()
}

/// Extracts `gemseo_fmu/problems/fmu_files/linux/<name>` from the wheel into `dir`; `None`
/// (with a loud message) when the wheel is absent.
fn gemseo_fmu(name: &str, dir: &Scratch) -> Option<PathBuf> {
    let Some(wheel) = gemseo_wheel() else {
        missing_tool::skip_or_fail(
            "the gemseo-fmu wheel (GEMSEO_FMU_WHEEL or target/thirdparty/gemseo_fmu-*.whl)",
            "`cargo xtask test` downloads it, or `pip download --no-deps gemseo-fmu -d target/thirdparty`",
        );
        return None;
    };
    let mut whl = zip::ZipArchive::new(std::fs::File::open(wheel).unwrap()).unwrap();
    let mut bytes = Vec::new();
    whl.by_name(&format!("gemseo_fmu/problems/fmu_files/linux/{name}")).unwrap().read_to_end(&mut bytes).unwrap();
    let out = dir.path(name);
    std::fs::write(&out, bytes).unwrap();
    Some(out)
}

fn vr(fmu: &Fmu, name: &str) -> u32 {
    fmu.variable(name).unwrap_or_else(|| panic!("no variable {name}")).value_reference
}

// ---------------------------------------------------------------------------------------------
// Our FMUs

#[test]
fn two_instances_of_one_fmu_step_independently() {
    let fmu = Fmu::load(&paths::fmu("oscillator-fd-m2")).unwrap();
    assert_eq!(fmu.model_identifier(), "oscillator_fd_m2");
    assert!(fmu.resource_uri().starts_with("file:///") && fmu.resource_uri().ends_with("/resources/"));
    let (x, v, x0, f) = (vr(&fmu, "x"), vr(&fmu, "v"), vr(&fmu, "x0"), vr(&fmu, "F"));
    let mut a = fmu.instantiate("a").unwrap();
    a.set_timing(true);
    let mut b = fmu.instantiate("b").unwrap();
    assert_eq!(fmu.instances(), 2);
    assert_eq!(a.name(), "a");
    assert!(a.can_interpolate_inputs());
    for (s, start_x) in [(&mut a, 0.0), (&mut b, 0.25)] {
        s.setup(0.0, Some(1.0)).unwrap();
        s.set_real(&[x0], &[start_x]).unwrap();
        s.enter_initialization().unwrap();
        s.set_real(&[f], &[0.0]).unwrap();
        s.exit_initialization().unwrap();
    }
    let mut out = [0.0; 2];
    b.get_real(&[x, v], &mut out).unwrap();
    assert_eq!(out[0], 0.25, "b starts where its parameter says");
    let h = 1e-3;
    for n in 0..100 {
        let t = f64::from(n) * h;
        a.do_step(t, h).unwrap();
        b.do_step(t, h).unwrap();
    }
    let mut xa = [0.0; 2];
    let mut xb = [0.0; 2];
    a.get_real(&[x, v], &mut xa).unwrap();
    b.get_real(&[x, v], &mut xb).unwrap();
    // Free oscillation (F = 0): x = x0 cos(wt) + v0/w sin(wt), w = sqrt(k2/m2), v0 = -100 m/s.
    let w = (1000.0f64 / 1.0).sqrt();
    let exact = |x0: f64| x0 * (w * 0.1).cos() - 100.0 / w * (w * 0.1).sin();
    assert!((xa[0] - exact(0.0)).abs() < 1e-3, "{xa:?} vs {}", exact(0.0));
    assert!((xb[0] - exact(0.25)).abs() < 1e-3, "{xb:?} vs {}", exact(0.25));
    assert!((a.time() - 0.1).abs() < 1e-12);
    let (busy, steps) = a.call_stats();
    assert_eq!(steps, 100);
    assert!(busy > 0.0 && busy < 10.0, "{busy}");
    a.terminate().unwrap();
    drop(a);
    assert_eq!(fmu.instances(), 1);
    // b still works after a is freed.
    b.do_step(0.1, h).unwrap();
}

#[test]
fn the_fmu_stays_loaded_while_an_instance_lives() {
    let fmu = Fmu::load(&paths::fmu("oscillator-fd-m1")).unwrap();
    let dir = fmu.extracted_dir().to_path_buf();
    assert!(dir.join("modelDescription.xml").is_file());
    let mut s = fmu.instantiate("m1").unwrap();
    drop(fmu);
    assert!(dir.is_dir(), "the instance keeps the FMU (library and folder)");
    s.setup(0.0, None).unwrap();
    s.enter_initialization().unwrap();
    s.exit_initialization().unwrap();
    s.do_step(0.0, 1e-3).unwrap();
    drop(s);
    assert!(!dir.exists(), "the extracted folder is removed with the last reference");
}

#[test]
fn an_instance_moves_to_another_thread_with_identical_results() {
    let fmu = Fmu::load(&paths::fmu("oscillator-fd-m2")).unwrap();
    let x = vr(&fmu, "x");
    let run = move |mut s: master::Instance| {
        s.setup(0.0, None).unwrap();
        s.enter_initialization().unwrap();
        s.exit_initialization().unwrap();
        for n in 0..50 {
            s.set_real(&[vr(s.fmu(), "F")], &[f64::from(n)]).unwrap();
            s.do_step(f64::from(n) * 1e-3, 1e-3).unwrap();
        }
        let mut out = [0.0];
        s.get_real(&[x], &mut out).unwrap();
        out[0]
    };
    let here = run(fmu.instantiate("here").unwrap());
    let s = fmu.instantiate("there").unwrap();
    let there = std::thread::spawn(move || run(s)).join().unwrap();
    assert_eq!(here.to_bits(), there.to_bits());
}

#[test]
fn the_fmus_log_message_reaches_the_call_error() {
    let fmu = Fmu::load(&paths::fmu("oscillator-fd-m1")).unwrap();
    let mut s = fmu.instantiate("early").unwrap();
    let err = s.do_step(0.0, 1e-3).unwrap_err();
    let MasterError::Call { instance, function, time, status, last_log } = &err else { panic!("{err:?}") };
    assert_eq!(instance, "early");
    assert_eq!(*function, "fmi2DoStep");
    assert_eq!(*time, 0.0);
    assert_eq!(status, "fmi2Error");
    assert!(last_log.contains("illegal call sequence"), "{last_log}");
    assert!(err.to_string().contains("early: fmi2DoStep at t = 0 returned fmi2Error: "), "{err}");
    assert_eq!(s.last_log(), *last_log);
    // A value the FMU refuses: the error names the variable (the FMU's message).
    let m1 = vr(&fmu, "m1");
    let err = s.set_real(&[m1], &[-1.0]).unwrap_err().to_string();
    assert!(err.contains("fmi2SetReal") && err.contains("\"m1\""), "{err}");
    // Mismatched slices are refused before the FMU is called.
    let err = s.set_real(&[m1, m1], &[1.0]).unwrap_err().to_string();
    assert!(err.contains("not called: 2 value references but 1 values"), "{err}");
}

#[test]
fn integer_boolean_and_string_access() {
    let fmu = Fmu::load(&paths::fmu("oscillator-fd-m1")).unwrap();
    let damping = vr(&fmu, "damping");
    let mut s = fmu.instantiate("types").unwrap();
    s.setup(0.0, None).unwrap();
    s.set_int64(&[damping], &[2]).unwrap();
    s.enter_initialization().unwrap();
    let mut out = [0];
    s.get_int64(&[damping], &mut out).unwrap();
    assert_eq!(out, [2]);
    let err = s.set_int64(&[damping], &[7]).unwrap_err().to_string();
    assert!(err.contains("fmi2SetInteger") && err.contains("DampingCase"), "{err}");
    // The oscillator has no Boolean or String variables: the FMU refuses unknown references.
    assert!(s.get_boolean(&[4242], &mut [false]).is_err());
    assert!(s.get_string(&[4242]).is_err());
    assert!(s.set_string(&[4242], &["a\0b"]).unwrap_err().to_string().contains("NUL"));
}

#[test]
fn guid_mismatch_is_refused_with_the_fmus_message() {
    let dir = Scratch::new("guid");
    let path = dir.path("wrong-guid.fmu");
    with_description(&paths::fmu("oscillator-fd-m1"), &path, |xml| {
        let start = xml.find("guid=\"").unwrap() + 6;
        let end = start + xml[start..].find('"').unwrap();
        format!("{}{{00000000-0000-0000-0000-000000000000}}{}", &xml[..start], &xml[end..])
    });
    let fmu = Fmu::load(&path).unwrap();
    let err = fmu.instantiate("g").unwrap_err().to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("fmi2Instantiate(\"g\") returned NULL"), "{err}");
    assert!(err.contains("{00000000-0000-0000-0000-000000000000}") && err.contains("matches no model"), "{err}");
    assert_eq!(fmu.instances(), 0);
}

#[test]
fn info_reports_metadata_variables_and_problems() {
    let text = info(&paths::fmu("oscillator-fd-m2")).unwrap();
    for expected in [
        "Model name:       OscillatorFdM2",
        "FMI version:      2.0",
        "GUID:             {",
        "Generation tool:  hydraulic-cosim fmu-export",
        "Runs with cosim:  yes (binaries/linux64/oscillator_fd_m2.so)",
        "canInterpolateInputs                    true",
        "maxOutputDerivativeOrder                1",
        "Default experiment: start 0 s, stop 10 s, step 0.001 s, tolerance -",
        "logStatusError - ",
        "Variables (10):",
        "Enumeration DampingCase",
        "1 (case1)",
        "Validation: no problems",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    let header = text.lines().find(|l| l.trim_start().starts_with("name")).unwrap();
    for col in ["vr", "type", "causality", "variability", "initial", "start", "unit", "description"] {
        assert!(header.contains(col), "{header}");
    }
    let x = text.lines().find(|l| l.trim_start().starts_with("x ")).unwrap();
    for cell in ["8", "Real", "output", "continuous", "calculated", "m"] {
        assert!(x.split_whitespace().any(|c| c == cell), "{cell} not in {x}");
    }
}

#[test]
fn info_works_without_a_runnable_binary_and_shows_validation_problems() {
    let dir = Scratch::new("info");
    let me = dir.path("me-only.fmu");
    write_zip(&me, vec![Entry::File("modelDescription.xml", description("m", false, true))]);
    let text = info(&me).unwrap();
    assert!(text.contains("Model Exchange (modelIdentifier m)"), "{text}");
    // FMI 2.0 Model Exchange runs on cosim's solver; this archive has no binary.
    assert!(text.contains("cosim uses:       Model Exchange"), "{text}");
    assert!(text.contains("Runs with cosim:  no: ") && text.contains("binaries/linux64/m.so"), "{text}");
    assert!(text.contains("event indicators") && text.contains("solver (default)"), "{text}");
    // An output without <InitialUnknowns> entry and a CS FMU without the binary.
    let cs = dir.path("no-binary.fmu");
    write_zip(&cs, vec![Entry::File("modelDescription.xml", description("m", true, false))]);
    let text = info(&cs).unwrap();
    assert!(text.contains("no: binaries/linux64/m.so is missing"), "{text}");
    assert!(text.contains("Validation: ") && !text.contains("Validation: no problems"), "{text}");
    assert!(text.contains("error") || text.contains("warning"), "{text}");
    // info refuses what cannot be read at all.
    let bad = dir.path("bad.fmu");
    std::fs::write(&bad, b"nope").unwrap();
    assert!(info(&bad).unwrap_err().to_string().contains("not a zip archive"));
}

// ---------------------------------------------------------------------------------------------
// A vendor FMU: OpenModelica 1.21

#[test]
fn openmodelica_mass_spring_subsystem_runs_one_second() {
    let dir = Scratch::new("om");
    let Some(path) = gemseo_fmu("MassSpringSubSystem1.fmu", &dir) else { return };
    let fmu = Fmu::load(&path).unwrap();
    assert!(fmu.co_simulation().can_interpolate_inputs);
    let (x1, v1, x2) = (vr(&fmu, "x1"), vr(&fmu, "v1"), vr(&fmu, "x2"));
    let mut s = fmu.instantiate("ms1").unwrap();
    s.setup(0.0, Some(1.0)).unwrap();
    s.enter_initialization().unwrap();
    s.exit_initialization().unwrap();
    let h = 1e-3;
    for n in 0..1000 {
        s.set_real(&[x2], &[1.0]).unwrap();
        s.do_step(f64::from(n) * h, h).unwrap();
        let mut out = [0.0; 2];
        s.get_real(&[x1, v1], &mut out).unwrap();
        assert!(out.iter().all(|v| v.is_finite()), "step {n}: {out:?}");
    }
    let mut out = [0.0; 2];
    s.get_real(&[x1, v1], &mut out).unwrap();
    // m1 x1'' = -k1 x1 + k2 (x2 - x1), k1 = k2 = m1 = 1, x2 = 1, x1(0) = 0, v1(0) = 1.
    let w = 2f64.sqrt();
    let exact = [0.5 - 0.5 * w.cos() + w.sin() / w, 0.5 * w * w.sin() + w.cos()];
    assert!((out[0] - exact[0]).abs() < 1e-2 && (out[1] - exact[1]).abs() < 1e-2, "{out:?} vs {exact:?}");
    assert_eq!(s.call_stats().1, 1000);
    s.terminate().unwrap();
    // Several instances of the vendor FMU.
    let mut t = fmu.instantiate("ms1b").unwrap();
    t.setup(0.0, None).unwrap();
    t.enter_initialization().unwrap();
    t.exit_initialization().unwrap();
    t.do_step(0.0, h).unwrap();
}

#[test]
fn openmodelica_guid_mismatch_message_is_formatted_from_printf_arguments() {
    let dir = Scratch::new("om-guid");
    let Some(orig) = gemseo_fmu("MassSpringSubSystem1.fmu", &dir) else { return };
    let path = dir.path("MassSpringSubSystem1-wrong-guid.fmu");
    with_description(&orig, &path, |xml| xml.replace("{aa410c3d-2cd8-42f4-8d0e-0a542e75e445}", "{wrong-guid}"));
    let fmu = Fmu::load(&path).unwrap();
    let err = fmu.instantiate("ms1").unwrap_err().to_string();
    // OpenModelica logs "fmi2Instantiate: Wrong GUID %s. Expected %s." with both GUIDs as
    // arguments: they appear in the text, no '%s' is left.
    assert!(err.contains("{wrong-guid}"), "{err}");
    assert!(err.contains("{aa410c3d-2cd8-42f4-8d0e-0a542e75e445}"), "{err}");
    assert!(!err.contains("%s"), "{err}");
}

#[test]
fn info_on_the_openmodelica_fmu() {
    let dir = Scratch::new("om-info");
    let Some(path) = gemseo_fmu("MassSpringSubSystem1.fmu", &dir) else { return };
    let text = info(&path).unwrap();
    assert!(text.contains("OpenModelica Compiler"), "{text}");
    assert!(text.contains("Co-Simulation (modelIdentifier MassSpringSubSystem1), Model Exchange"), "{text}");
    assert!(text.contains("der(_D_outputAlias_v1)"), "{text}");
    assert!(text.contains("logStatusError"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// Hostile and broken archives

#[test]
fn a_missing_file_is_named() {
    let err = Fmu::load(Path::new("/nonexistent/x.fmu")).unwrap_err();
    assert!(matches!(err, MasterError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("/nonexistent/x.fmu"), "{err}");
}

#[test]
fn not_a_zip() {
    let dir = Scratch::new("notzip");
    let path = dir.path("text.fmu");
    std::fs::write(&path, "this is not an FMU\n").unwrap();
    let msg = load_err(&path);
    assert!(msg.contains("not a zip archive"), "{msg}");
}

#[test]
fn zip_without_model_description() {
    let dir = Scratch::new("nomd");
    let path = dir.path("empty.fmu");
    write_zip(&path, vec![Entry::File("documentation/index.html", b"<p/>".to_vec())]);
    let msg = load_err(&path);
    assert!(msg.contains("no modelDescription.xml"), "{msg}");
    // Zipped with its parent folder: the message says where the description is.
    let nested = dir.path("nested.fmu");
    write_zip(&nested, vec![Entry::File("model/modelDescription.xml", description("m", true, false))]);
    let msg = load_err(&nested);
    assert!(msg.contains("found \"model/modelDescription.xml\""), "{msg}");
}

#[test]
fn malformed_xml_names_line_and_column() {
    let dir = Scratch::new("xml");
    let path = dir.path("malformed.fmu");
    let xml = "<?xml version=\"1.0\"?>\n<fmiModelDescription fmiVersion=\"2.0\" modelName=\"m\" guid=\"{1}\">\n  <CoSimulation modelIdentifier=\"m\">\n</fmiModelDescription>\n";
    write_zip(&path, vec![Entry::File("modelDescription.xml", xml.into())]);
    let msg = load_err(&path);
    assert!(msg.contains("modelDescription.xml: line "), "{msg}");
    assert!(msg.contains("column"), "{msg}");
    assert!(msg.contains("malformed XML"), "{msg}");
}

#[test]
fn fmi_1_is_named_and_3_is_read_as_3() {
    let dir = Scratch::new("versions");
    let v1 = dir.path("fmi1.fmu");
    let xml1 = r#"<?xml version="1.0"?><fmiModelDescription fmiVersion="1.0" modelName="m" modelIdentifier="m" guid="{1}"><ModelVariables/></fmiModelDescription>"#;
    write_zip(&v1, vec![Entry::File("modelDescription.xml", xml1.into())]);
    let msg = load_err(&v1);
    assert!(msg.contains("FMI 1.0") && msg.contains("only FMI 2.0 is supported"), "{msg}");
    let v3 = dir.path("fmi3.fmu");
    let xml3 = r#"<?xml version="1.0"?><fmiModelDescription fmiVersion="3.0" modelName="m" instantiationToken="{1}"><CoSimulation modelIdentifier="m"/></fmiModelDescription>"#;
    write_zip(&v3, vec![Entry::File("modelDescription.xml", xml3.into())]);
    let msg = load_err(&v3);
    // FMI 3.0 is read (issue 32); this one has no binary for the 3.0 platform name.
    assert!(msg.contains("binaries/x86_64-linux/m.so is missing"), "{msg}");
}

#[test]
fn model_exchange_only_is_loaded_for_model_exchange() {
    let dir = Scratch::new("me");
    let path = dir.path("me.fmu");
    write_zip(
        &path,
        vec![
            Entry::File("modelDescription.xml", description("m", false, true)),
            Entry::File("binaries/linux64/m.so", b"\x7fELF".to_vec()),
        ],
    );
    // FMI 2.0 Model Exchange is run (issue 52): the description passes, the binary is tried.
    let msg = load_err(&path);
    assert!(msg.contains("binaries/linux64/m.so: cannot be loaded"), "{msg}");
}

#[test]
fn missing_linux_binary_lists_what_is_there() {
    let dir = Scratch::new("nobin");
    let path = dir.path("windows.fmu");
    write_zip(
        &path,
        vec![
            Entry::File("modelDescription.xml", description("m", true, false)),
            Entry::File("binaries/win64/m.dll", b"MZ".to_vec()),
        ],
    );
    let msg = load_err(&path);
    assert!(msg.contains("binaries/linux64/m.so is missing"), "{msg}");
    assert!(msg.contains("binaries/win64/m.dll"), "{msg}");
    let source_only = dir.path("source-only.fmu");
    write_zip(
        &source_only,
        vec![
            Entry::File("modelDescription.xml", description("m", true, false)),
            Entry::File("sources/m.c", b"int x;".to_vec()),
        ],
    );
    let msg = load_err(&source_only);
    assert!(msg.contains("no binaries at all"), "{msg}");
}

#[test]
fn a_binary_without_the_fmi_api_names_the_missing_symbol() {
    let libm = ["/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6", "/lib64/libm.so.6"]
        .into_iter()
        .map(Path::new)
        .find(|p| p.is_file())
        .expect("libm.so.6 not found");
    let dir = Scratch::new("nosym");
    let path = dir.path("libm.fmu");
    write_zip(
        &path,
        vec![
            Entry::File("modelDescription.xml", description("libm", true, false)),
            Entry::File("binaries/linux64/libm.so", std::fs::read(libm).unwrap()),
        ],
    );
    let msg = load_err(&path);
    assert!(msg.contains("binaries/linux64/libm.so: missing required symbol fmi2GetTypesPlatform"), "{msg}");
    // Not a shared library at all.
    let garbage = dir.path("garbage.fmu");
    write_zip(
        &garbage,
        vec![
            Entry::File("modelDescription.xml", description("g", true, false)),
            Entry::File("binaries/linux64/g.so", b"not an ELF file".to_vec()),
        ],
    );
    let msg = load_err(&garbage);
    assert!(msg.contains("binaries/linux64/g.so: cannot be loaded"), "{msg}");
}

#[test]
fn a_model_identifier_with_a_path_is_refused() {
    let dir = Scratch::new("id");
    let path = dir.path("id.fmu");
    write_zip(&path, vec![Entry::File("modelDescription.xml", description("../../evil", true, false))]);
    let msg = load_err(&path);
    assert!(msg.contains("modelIdentifier \"../../evil\" is not a valid file name"), "{msg}");
}

#[test]
fn zip_slip_entries_are_refused_and_nothing_is_written_outside() {
    let dir = Scratch::new("slip");
    let tag = format!("cosim-evil-{}-{}", std::process::id(), dir.0.file_name().unwrap().to_string_lossy());
    // `../x` from the private folder lands in the system temp folder.
    let parent_target = std::env::temp_dir().join(&tag);
    let absolute_target = dir.path("absolute-evil");
    let cases: Vec<(String, &str)> = vec![
        (format!("../{tag}"), "\"..\" component"),
        (format!("resources/../../{tag}"), "\"..\" component"),
        (absolute_target.display().to_string(), "absolute path"),
        ("..\\evil".to_owned(), "backslash"),
        ("C:/evil".to_owned(), "drive prefix"),
    ];
    for (i, (name, why)) in cases.iter().enumerate() {
        let path = dir.path(&format!("slip{i}.fmu"));
        write_zip(
            &path,
            vec![
                Entry::File("modelDescription.xml", description("m", true, false)),
                Entry::File(name, b"pwned".to_vec()),
            ],
        );
        let msg = load_err(&path);
        assert!(msg.contains(&format!("entry \"{name}\" refused")) && msg.contains(why), "{name}: {msg}");
        assert!(!parent_target.exists(), "{} was written", parent_target.display());
        assert!(!absolute_target.exists(), "{} was written", absolute_target.display());
    }
}

#[test]
fn symlink_entries_are_refused() {
    let dir = Scratch::new("symlink");
    let outside = dir.path("outside");
    std::fs::create_dir(&outside).unwrap();
    let path = dir.path("symlink.fmu");
    let target = outside.display().to_string();
    write_zip(
        &path,
        vec![
            Entry::File("modelDescription.xml", description("m", true, false)),
            Entry::Symlink("resources/link", &target),
            Entry::File("resources/link/evil", b"pwned".to_vec()),
        ],
    );
    let msg = load_err(&path);
    assert!(msg.contains("entry \"resources/link\" refused: symbolic links are not allowed"), "{msg}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "something was written through the link");
}

#[test]
fn zip_bombs_hit_the_size_and_entry_limits() {
    let dir = Scratch::new("bomb");
    let path = dir.path("bomb.fmu");
    let mut entries = vec![Entry::File("modelDescription.xml", description("m", true, false))];
    entries.push(Entry::File("resources/zeros.bin", vec![0u8; 1 << 20]));
    write_zip(&path, entries);
    assert!(std::fs::metadata(&path).unwrap().len() < 20_000, "1 MiB of zeros compresses well");
    // Fine with the default limits.
    let a = Archive::extract(&path).unwrap();
    assert_eq!(std::fs::metadata(a.resources_dir().join("zeros.bin")).unwrap().len(), 1 << 20);
    drop(a);
    let err = Archive::extract_with_limits(&path, 64 * 1024, 100).unwrap_err().to_string();
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(
        err.contains("entry \"resources/zeros.bin\"") && err.contains("more than the limit of 65536 bytes"),
        "{err}"
    );

    let many = dir.path("many.fmu");
    let mut entries = vec![Entry::File("modelDescription.xml", description("m", true, false))];
    let names: Vec<String> = (0..50).map(|i| format!("resources/f{i}")).collect();
    entries.extend(names.iter().map(|n| Entry::File(n, Vec::new())));
    write_zip(&many, entries);
    assert!(Archive::extract(&many).is_ok());
    let err = Archive::extract_with_limits(&many, 1 << 30, 10).unwrap_err().to_string();
    assert!(
        err.contains(&many.display().to_string()) && err.contains("51 entries, more than the limit of 10"),
        "{err}"
    );
}

#[test]
fn entries_naming_the_same_file_are_refused() {
    // "resources//a.txt" and "resources/./a.txt" are other zip names for resources/a.txt: the
    // second one must not silently replace the first.
    let dir = Scratch::new("dup");
    let path = dir.path("dup.fmu");
    write_zip(
        &path,
        vec![
            Entry::File("modelDescription.xml", description("m", true, false)),
            Entry::File("resources/a.txt", b"1".to_vec()),
            Entry::File("resources/./a.txt", b"2".to_vec()),
        ],
    );
    let msg = load_err(&path);
    assert!(msg.contains("entry \"resources/./a.txt\" refused: duplicate entry name"), "{msg}");
}
