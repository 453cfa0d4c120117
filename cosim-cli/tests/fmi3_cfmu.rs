#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! A small C FMI 3.0 FMU (`cfmu3/cfmu3.c`, built here with the system's `cc`, packaged with the
//! description below) through the master's instance abstraction: Int64, UInt64, Int8, Float32,
//! Boolean and String variables through the 3.0 functions of their types (64-bit integers exact
//! from start values to results.csv, values outside a variable's type refused naming it),
//! Int64 and String connections, Binary variables through
//! fmi3GetBinary/fmi3SetBinary (start values, connections, hex columns of results.csv, maxSize
//! and type refusals, FMPy's bytes; Binary arrays left out and listed), array variables, FMU
//! state get/set/serialize, `terminateSimulation` ending a run at `lastSuccessfulTime`, `earlyReturnAllowed = false` at instantiation (an FMU that returns early
//! anyway fails the run with the reason), `eventHandlingNeeded` reported as a warning.

use master::fmu::{Fmu, FmuInstance};
use std::path::{Path, PathBuf};
use std::process::Command;

mod support;
use support::{cosim, python, run_in as run, tmp};

#[path = "../../master/tests/cfmu3/build.rs"]
mod cfmu3_build;
use cfmu3_build::{build, build_with, XML};

#[test]
fn every_scalar_type_goes_through_the_3_0_function_of_its_type() {
    let dir = tmp("cfmu3-types");
    let fmu = Fmu::load(&build(&dir, "cfmu3", &[])).unwrap();
    let md = fmu.model_description();
    let names: Vec<&str> = md.model_variables.iter().map(|v| v.name.as_str()).collect();
    // Scalar Binary variables are in; Binary arrays are left out; array elements are scalars `name[i]`.
    assert_eq!(
        names,
        [
            "time",
            "u",
            "x",
            "count",
            "big",
            "label",
            "small",
            "xf",
            "positive",
            "early_allowed",
            "term_at",
            "blob",
            "arr[1]",
            "arr[2]",
            "arr[3]",
            "ain[1]",
            "ain[2]",
            "flags[1]",
            "flags[2]",
            "aout[1]",
            "aout[2]",
            "bin_in",
            "bin_out",
            "big_in",
            "big_echo",
            "huge",
            "label_in",
            "label_out",
            "label_len"
        ]
    );
    let vr = |n: &str| md.variable(n).unwrap().value_reference;
    let (arr, ain, flags) =
        ([vr("arr[1]"), vr("arr[2]"), vr("arr[3]")], [vr("ain[1]"), vr("ain[2]")], [vr("flags[1]"), vr("flags[2]")]);
    let mut s = fmu.instantiate("c").unwrap();
    s.setup(0.0, Some(1.0)).unwrap();
    s.enter_initialization().unwrap();
    s.set_int64(&[6], &[-5]).unwrap();
    s.set_string(&[5], &["hello"]).unwrap();
    // The Int8 range is checked with the variable named, and the error names the FMI 3.0 function.
    let e = s.set_int64(&[6], &[300]).unwrap_err().to_string();
    assert!(e.contains("small (value reference 6): 300 is outside the range of Int8 (-128 to 127)"), "{e}");
    assert!(e.contains("fmi3SetInt8"), "{e}");
    // 64-bit integers are exact: UInt64 5,000,000,000 read through both integer carriers.
    let mut i = [0];
    s.get_int64(&[4], &mut i).unwrap();
    assert_eq!(i, [5_000_000_000]);
    let mut u = [0u64];
    s.get_uint64(&[4], &mut u).unwrap();
    assert_eq!(u, [5_000_000_000]);
    s.set_uint64(&[4], &[(1 << 63) + 1]).unwrap();
    s.get_uint64(&[4], &mut u).unwrap();
    assert_eq!(u, [(1 << 63) + 1]);
    let e = s.get_int64(&[4], &mut i).unwrap_err().to_string();
    assert!(e.contains("big (value reference 4) = 9223372036854775809 does not fit Int64: read it as UInt64"), "{e}");
    // A type FMI 3.0 does not have under that name: the error names the real function.
    let mut r1 = [0.0];
    let e = s.get_real(&[3], &mut r1).unwrap_err().to_string();
    assert!(e.contains("fmi3GetFloat64") && e.contains("its type is Int64, not Float64 or Float32"), "{e}");
    s.set_int64(&[4], &[7]).unwrap();
    s.exit_initialization().unwrap();
    s.set_real(&[1], &[2.0]).unwrap();
    let mut t = 0.0;
    for _ in 0..3 {
        s.do_step(t, 0.1).unwrap();
        t += 0.1;
    }
    let mut ints = [0; 3];
    s.get_int64(&[3, 4, 6], &mut ints).unwrap();
    assert_eq!(ints, [3, 7, -5], "count (Int64), big (UInt64), small (Int8)");
    let mut r = [0.0; 3];
    s.get_real(&[0, 2, 7], &mut r).unwrap();
    let x = 0.1 * 2.0 + 0.1 * 2.0 + 0.1 * 2.0;
    assert_eq!(r, [t, x, f64::from(x as f32)], "time, x (Float64), xf (Float32)");
    let mut b = [true, true];
    s.get_boolean(&[8, 9], &mut b).unwrap();
    assert_eq!(b, [true, false], "positive; earlyReturnAllowed was false at instantiation");
    assert_eq!(s.get_string(&[5]).unwrap(), ["hello"]);

    // FMU state: save at t = 0.3, step on, restore, step again: the same values.
    s.save_state().unwrap();
    s.do_step(t, 0.1).unwrap();
    let mut after = [0.0; 2];
    s.get_real(&[0, 2], &mut after).unwrap();
    s.restore_state().unwrap();
    let mut restored = [0.0; 2];
    s.get_real(&[0, 2], &mut restored).unwrap();
    assert_eq!(restored, [t, x]);
    s.do_step(t, 0.1).unwrap();
    let mut again = [0.0; 2];
    s.get_real(&[0, 2], &mut again).unwrap();
    assert_eq!(again, after);
    s.get_int64(&[3], &mut i).unwrap();
    assert_eq!(i, [4]);

    // Array elements: read from the whole array, an input element set within the whole array
    // (the other element keeps its start value 1.5).
    let mut a = [0.0; 3];
    s.get_real(&arr, &mut a).unwrap();
    assert_eq!(a, [again[1], 2.0 * again[1], 3.0 * again[1]]);
    s.set_real(&[ain[0]], &[1.5]).unwrap();
    let mut ains = [0.0; 2];
    s.get_real(&ain, &mut ains).unwrap();
    assert_eq!(ains, [1.5, 1.5]);
    let x0 = again[1];
    s.do_step(t + 0.1, 0.1).unwrap();
    s.get_real(&[2], &mut r[..1]).unwrap();
    assert_eq!(r[0], x0 + 0.1 * (2.0 + 1.5 - 0.5), "x' = u + ain[1] - 0.5");
    let mut fl = [false; 2];
    s.get_boolean(&flags, &mut fl).unwrap();
    assert_eq!(fl, [true, r[0] > 1.0]);
    s.terminate().unwrap();
}

#[test]
fn terminate_simulation_ends_the_run_at_last_successful_time() {
    for flags in [&[][..], &["--isolate"][..]] {
        let dir = tmp("cfmu3-term");
        let fmu = build(&dir, "cfmu3", &[]);
        let mut args = vec!["--start-value", "term_at=0.35", "--start-value", "u=1"];
        args.extend_from_slice(flags);
        let (code, stderr, out) = run(&dir, &fmu, &args);
        assert_eq!(code, Some(0), "{stderr}");
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(s["status"], "terminated", "{stderr}");
        assert_eq!(s["time"], 0.35);
        assert_eq!(s["message"], "terminated by cfmu3 at t = 0.35");
    }
}

#[test]
fn early_return_is_not_allowed_and_event_handling_needed_is_reported() {
    let dir = tmp("cfmu3-early");
    // The FMU offers early return (mightReturnEarlyFromDoStep); the master does not allow it,
    // so a conforming FMU completes every step.
    let (code, stderr, _) = run(&dir, &build(&dir, "cfmu3", &[]), &["--start-value", "u=1"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("10 steps to t = 1"), "{stderr}");
    // One that returns early anyway fails the run, saying why.
    let dir = tmp("cfmu3-always-early");
    let (code, stderr, _) = run(&dir, &build(&dir, "cfmu3", &["-DALWAYS_EARLY"]), &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr
            .contains("returned early at t = 0.05 although the master instantiated it with earlyReturnAllowed = false"),
        "{stderr}"
    );
    // eventHandlingNeeded: logged as a warning, the run goes on.
    let dir = tmp("cfmu3-event");
    let (code, stderr, _) = run(&dir, &build(&dir, "cfmu3", &["-DEVENT_AT=3"]), &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("eventHandlingNeeded = true; cosim does not use event mode"), "{stderr}");
    assert!(stderr.contains("10 steps to t = 1"), "{stderr}");
}

#[test]
fn cosim_info_lists_binary_variables_with_mime_type_and_max_size() {
    let dir = tmp("cfmu3-info");
    let fmu = build(&dir, "cfmu3", &[]);
    let o = cosim(&["info", fmu.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A row of the variable table, its cells separated by single spaces.
    let row = |name: &str| {
        let line = text.lines().find(|l| l.split_whitespace().next() == Some(name));
        line.unwrap_or_else(|| panic!("no row {name} in {text}")).split_whitespace().collect::<Vec<_>>().join(" ")
    };
    // name, vr, type (mimeType, maxSize), causality, variability, initial, start (hex).
    assert_eq!(row("blob"), "blob 11 Binary (application/octet-stream, maxSize 16) parameter tunable exact c0ffee");
    assert_eq!(row("bin_in"), "bin_in 16 Binary (application/x-cfmu3, maxSize 8) input discrete 0102");
    assert_eq!(row("bin_out"), "bin_out 17 Binary (application/octet-stream) output discrete calculated");
    // A Binary array is the one variable left out, with its line.
    let section = text
        .split_once("\nVariables cosim does not address (1; not settable, connectable or recorded):\n")
        .unwrap_or_else(|| panic!("no such section in {text}"))
        .1;
    let line = XML.lines().position(|l| l.contains("<Binary name=\"blob_arr\"")).unwrap() + 1;
    assert_eq!(
        section.lines().next().unwrap(),
        format!(
            "  array variable <Binary name=\"blob_arr\"> (line {line}): String and Binary arrays are not supported"
        )
    );
}

#[test]
fn binary_values_go_through_fmi3_get_and_set_binary() {
    let dir = tmp("cfmu3-binary");
    let fmu = Fmu::load(&build(&dir, "cfmu3", &[])).unwrap();
    let vr = |n: &str| fmu.variable(n).unwrap().value_reference;
    let (blob, bin_in, bin_out) = (vr("blob"), vr("bin_in"), vr("bin_out"));
    let mut s = fmu.instantiate("c").unwrap();
    s.setup(0.0, Some(1.0)).unwrap();
    let mut out = vec![Vec::new(); 2];
    s.get_binary(&[blob, bin_in], &mut out).unwrap();
    assert_eq!(out, [vec![0xc0, 0xff, 0xee], vec![1, 2]], "the FMU's start values");
    // An empty value, and one of exactly maxSize bytes.
    s.set_binary(&[blob, bin_in], &[&[], &[1, 2, 3, 4, 5, 6, 7, 8]]).unwrap();
    s.get_binary(&[blob, bin_in], &mut out).unwrap();
    assert_eq!(out, [vec![], vec![1, 2, 3, 4, 5, 6, 7, 8]]);
    // maxSize: refused before the FMU is called, naming the variable and both sizes.
    let e = s.set_binary(&[bin_in], &[&[0; 9]]).unwrap_err().to_string();
    assert!(e.contains("not called: the value of bin_in has 9 bytes, more than its maxSize of 8 bytes"), "{e}");
    s.get_binary(&[bin_in], &mut out[..1]).unwrap();
    assert_eq!(out[0], [1, 2, 3, 4, 5, 6, 7, 8], "unchanged");
    // A value reference of another type.
    let e = s.get_binary(&[vr("x")], &mut out[..1]).unwrap_err().to_string();
    assert!(e.contains("fmi3GetBinary") && e.contains("x (value reference 2): its type is Float64, not Binary"), "{e}");
    s.enter_initialization().unwrap();
    s.set_binary(&[bin_in], &[&[0xaa, 0xbb, 0xcc]]).unwrap();
    s.exit_initialization().unwrap();
    s.do_step(0.0, 0.1).unwrap();
    s.do_step(0.1, 0.1).unwrap();
    // bin_out = bin_in reversed, then the step count; copied before the next call reuses the
    // FMU's buffer.
    s.get_binary(&[bin_out, bin_in], &mut out).unwrap();
    assert_eq!(out, [vec![0xcc, 0xbb, 0xaa, 2], vec![0xaa, 0xbb, 0xcc]]);
    // The FMU state carries Binary values.
    s.save_state().unwrap();
    s.set_binary(&[bin_in], &[&[7]]).unwrap();
    s.restore_state().unwrap();
    s.get_binary(&[bin_in], &mut out[..1]).unwrap();
    assert_eq!(out[0], [0xaa, 0xbb, 0xcc]);
    s.terminate().unwrap();
}

/// The columns of `out/results.csv` as text: header names (unquoted) and rows.
fn csv_text(out: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let header = lines.next().unwrap().split(',').map(|h| h.trim_matches('"').to_owned()).collect();
    (header, lines.map(|l| l.split(',').map(str::to_owned).collect()).collect())
}

#[test]
fn binary_connections_and_start_values_reach_results_csv_as_hex() {
    for flags in [&[][..], &["--isolate"][..]] {
        let dir = tmp("cfmu3-binary-system");
        let sys = two_instances(
            &dir,
            "[[connections]]\nfrom = \"a.bin_out\"\nto = \"b.bin_in\"\n\n\
             [outputs]\nvariables = [\"a.bin_out\", \"a.count\", \"b.bin_in\", \"b.bin_out\", \"b.blob\", \"a.blob\"]\n",
        );
        // Start values from TOML: hexadecimal, either case; "" is the empty value.
        let t = std::fs::read_to_string(&sys)
            .unwrap()
            .replace("start = { ain = [2.0, 3.0] }", "start = { ain = [2.0, 3.0], bin_in = \"0A0b0C\" }");
        let t = t.replace("[instances.b]\n", "[instances.b]\nstart = { blob = \"\" }\n");
        std::fs::write(&sys, t).unwrap();
        let out = dir.join("out");
        let mut args = vec!["run", sys.to_str().unwrap(), "--out", out.to_str().unwrap()];
        args.extend_from_slice(flags);
        let o = cosim(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let (header, rows) = csv_text(&out);
        assert_eq!(header, ["time", "a.bin_out", "a.count", "b.bin_in", "b.bin_out", "b.blob", "a.blob"]);
        assert_eq!(rows.len(), 11);
        for (k, r) in rows.iter().enumerate() {
            // a.bin_out = a.bin_in reversed + a's step count k.
            assert_eq!(r[1], format!("0c0b0a{k:02x}"), "row {k}: {r:?}");
            assert_eq!(r[2], format!("{k}.0"));
            assert_eq!((r[5].as_str(), r[6].as_str()), ("", "c0ffee"), "b.blob set empty, a.blob the FMU's start");
            // b.bin_in: a.bin_out of the row's time, copied byte for byte when the row's point
            // is exchanged (issue 47: a row shows the inputs of its time); b.bin_out feeds
            // through from it (read afterwards: b.bin_in reversed + b's step count).
            assert_eq!(r[3], format!("0c0b0a{k:02x}"), "row {k}: {r:?}");
            assert_eq!(r[4], format!("{k:02x}0a0b0c{k:02x}"), "row {k}: {r:?}");
        }
    }
}

#[test]
fn a_binary_connection_and_start_value_survive_an_ssp_round_trip() {
    let dir = tmp("cfmu3-binary-ssp");
    let sys = two_instances(
        &dir,
        "[[connections]]\nfrom = \"a.bin_out\"\nto = \"b.bin_in\"\n\n[outputs]\nvariables = [\"a.bin_out\", \"b.bin_out\"]\n",
    );
    let t = std::fs::read_to_string(&sys).unwrap().replace("ain = [2.0, 3.0]", "bin_in = \"0a0b\"");
    std::fs::write(&sys, t).unwrap();
    let ssp = dir.join("binary.ssp");
    let o = cosim(&["export-ssp", sys.to_str().unwrap(), "--out", ssp.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // ssc:Binary connectors and the ssv:Binary start value in the package.
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&ssp).unwrap()).unwrap();
    let mut text = String::new();
    for k in 0..zip.len() {
        let mut f = zip.by_index(k).unwrap();
        if f.name().ends_with(".ssd") || f.name().ends_with(".ssv") {
            std::io::Read::read_to_string(&mut f, &mut text).unwrap();
        }
    }
    assert!(text.contains("<ssc:Binary/>") && text.contains("<ssv:Binary value=\"0a0b\"/>"), "{text}");
    let (a, b) = (dir.join("toml"), dir.join("ssp"));
    for (src, out) in [(&sys, &a), (&ssp, &b)] {
        let o = cosim(&["run", src.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let results = std::fs::read_to_string(a.join("results.csv")).unwrap();
    assert_eq!(results, std::fs::read_to_string(b.join("results.csv")).unwrap());
    // b.bin_out at 1 s: a.bin_out of 1 s reversed (exchanged before the row, issue 47), count 10.
    assert!(results.ends_with(",0b0a0a,0a0a0b0a\n"), "{results}");
}

#[test]
fn cosim_run_takes_a_binary_start_value_in_hex() {
    let dir = tmp("cfmu3-binary-run");
    let fmu = build(&dir, "cfmu3", &[]);
    let (code, stderr, out) =
        run(&dir, &fmu, &["--start-value", "bin_in=DEADbeef", "--output-variables", "bin_in,bin_out,x"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (header, rows) = csv_text(&out);
    assert_eq!(header, ["time", "cfmu3.bin_in", "cfmu3.bin_out", "cfmu3.x"]);
    assert_eq!(rows[0][1..3], ["deadbeef", "efbeadde00"]);
    assert_eq!(rows[10][1..3], ["deadbeef", "efbeadde0a"]);
    // summary.json names the hex columns; results.mat (numbers only) leaves them out.
    let (code, stderr, out) = run(&dir, &fmu, &["--output-variables", "bin_out,x", "--mat"]);
    assert_eq!(code, Some(0), "{stderr}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["binary_columns"], serde_json::json!(["cfmu3.bin_out"]));
    let mat = std::fs::read(out.join("results.mat")).unwrap();
    let has = |name: &str| mat.windows(name.len()).any(|w| w == name.as_bytes());
    assert!(has("cfmu3.x") && !has("cfmu3.bin_out"));
    // Malformed, too long, or not a string: refused before the run, naming the variable.
    for (value, expected) in [
        ("bin_in=0xZZ", "\"0xZZ\" is not a Binary value for bin_in: 'x' at position 1 is not a hexadecimal digit"),
        ("bin_in=abc", "\"abc\" is not a Binary value for bin_in: 3 hexadecimal digits: an odd count"),
        ("bin_in=000102030405060708", "the value of bin_in has 9 bytes, more than its maxSize of 8 bytes"),
    ] {
        let (code, stderr, _) = run(&dir, &fmu, &["--start-value", value]);
        assert_ne!(code, Some(0), "{value}");
        assert!(stderr.contains(expected), "{value}: {stderr}");
    }
}

#[test]
fn fmpy_reads_and_writes_the_same_binary_bytes_as_cosim() {
    let dir = tmp("cfmu3-binary-fmpy");
    let fmu = build(&dir, "cfmu3", &[]);
    // FMPy, calling fmi3SetBinary/fmi3GetBinary itself.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../master/tests/cfmu3/fmpy_binary.py");
    let o = Command::new(python()).arg(&script).arg(&fmu).args(["10", "DEADbeef"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    // The description's start values (written in upper case): FMPy's reading and ours.
    let md = Fmu::load(&fmu).unwrap();
    let ours: Vec<String> = md
        .variables()
        .iter()
        .filter_map(|v| match &v.kind {
            model_description::VariableKind::Binary { start: Some(b), .. } => {
                Some(format!("start,{},{}", v.name, model_description::to_hex(b)))
            }
            _ => None,
        })
        .collect();
    let theirs: Vec<&str> = stdout.lines().filter(|l| l.starts_with("start,")).collect();
    assert_eq!(theirs, ["start,blob,c0ffee", "start,bin_in,0102"]);
    assert_eq!(ours, theirs);
    // The same run through cosim: every row's bytes equal FMPy's.
    let (code, stderr, out) =
        run(&dir, &fmu, &["--start-value", "bin_in=DEADbeef", "--output-variables", "bin_in,bin_out"]);
    assert_eq!(code, Some(0), "{stderr}");
    let (_, rows) = csv_text(&out);
    let fmpy: Vec<&str> = stdout.lines().filter(|l| !l.starts_with("start,")).collect();
    assert_eq!(fmpy.len(), 11, "{stdout}");
    for (k, (ours, theirs)) in rows.iter().zip(&fmpy).enumerate() {
        assert_eq!(format!("{k},{},{}", ours[1], ours[2]), *theirs);
    }
    assert_eq!(fmpy[10], "10,deadbeef,efbeadde0a");
}

#[test]
fn binary_and_other_types_do_not_connect() {
    let dir = tmp("cfmu3-binary-refused");
    for (from, to, expected) in [
        ("a.bin_out", "b.u", "type mismatch: a.bin_out is Binary, b.u is Real"),
        ("a.x", "b.bin_in", "type mismatch: a.x is Real, b.bin_in is Binary"),
        ("a.count", "b.bin_in", "type mismatch: a.count is Integer, b.bin_in is Binary"),
    ] {
        let sys = two_instances(&dir, &format!("[[connections]]\nfrom = \"{from}\"\nto = \"{to}\"\n"));
        let o = cosim(&["run", sys.to_str().unwrap(), "--out", dir.join("out").to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{stderr}");
        assert!(stderr.contains("connections[0]") && stderr.contains(expected), "{expected}: {stderr}");
    }
    // A TOML start value that is not a string of hex digits.
    let sys = two_instances(&dir, "");
    let t = std::fs::read_to_string(&sys).unwrap().replace("ain = [2.0, 3.0]", "bin_in = 5");
    std::fs::write(&sys, t).unwrap();
    let o = cosim(&["run", sys.to_str().unwrap(), "--out", dir.join("out").to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert!(
        stderr.contains("instances.a.start.bin_in") && stderr.contains("5 is not a valid Binary value"),
        "{stderr}"
    );
}

#[test]
fn a_malformed_binary_start_in_the_description_names_line_and_column() {
    let dir = tmp("cfmu3-binary-malformed");
    let xml = XML.replace("<Start value=\"0102\"/>", "<Start value=\"01x2\"/>");
    let fmu = build_with(&dir, "cfmu3", &[], &xml);
    let line = xml.lines().position(|l| l.contains("01x2")).unwrap() + 1;
    let column = xml.lines().nth(line - 1).unwrap().find("value=\"01x2\"").unwrap() + 1;
    let (code, stderr, _) = run(&dir, &fmu, &[]);
    assert_ne!(code, Some(0));
    let expected = format!("line {line}, column {column}: <Start>: attribute value=\"01x2\" is not xs:hexBinary");
    assert!(stderr.contains(&expected), "{expected}: {stderr}");
}

/// A system file of two cfmu3 instances with `extra` appended.
fn two_instances(dir: &Path, extra: &str) -> PathBuf {
    let fmu = build(dir, "cfmu3", &[]);
    let sys = dir.join("system.toml");
    let text = format!(
        "[simulation]\nstop = 1.0\nstep = 0.1\n\n[instances.a]\nfmu = \"{f}\"\nstart = {{ ain = [2.0, 3.0] }}\n\n\
         [instances.b]\nfmu = \"{f}\"\n\n{extra}",
        f = fmu.display()
    );
    std::fs::write(&sys, text).unwrap();
    sys
}

#[test]
fn a_whole_array_start_value_and_connection_address_every_element() {
    let dir = tmp("cfmu3-whole-array");
    let sys = two_instances(
        &dir,
        "[[connections]]\nfrom = \"a.aout\"\nto = \"b.ain\"\n\n[outputs]\nvariables = [\"a.x\", \"a.aout[1]\", \"a.aout[2]\", \"b.ain[1]\", \"b.ain[2]\", \"b.aout[2]\"]\n",
    );
    let out = dir.join("out");
    let o = cosim(&["run", sys.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let last: Vec<f64> = lines.last().unwrap().split(',').map(|x| x.parse().unwrap()).collect();
    let col = |name: &str| {
        last[header.iter().position(|h| h.trim_matches('"') == name).unwrap_or_else(|| panic!("{name}: {header:?}"))]
    };
    // a.ain = [2, 3] from the TOML array: aout = 10 ain, x' = u + ain[1] - 0.5 = 1.5 (explicit Euler, exact for a constant rate).
    assert_eq!((col("a.aout[1]"), col("a.aout[2]")), (20.0, 30.0));
    assert!((col("a.x") - 1.5).abs() < 1e-12, "{}", col("a.x"));
    // The connection a.aout → b.ain, element by element.
    assert_eq!((col("b.ain[1]"), col("b.ain[2]")), (20.0, 30.0));
    assert_eq!(col("b.aout[2]"), 300.0);
}

#[test]
fn whole_arrays_of_other_shapes_or_counts_are_refused_naming_both() {
    let dir = tmp("cfmu3-array-shapes");
    let check = |extra: &str, a_start: Option<&str>, expected: &[&str]| {
        let sys = two_instances(&dir, extra);
        if let Some(s) = a_start {
            let t = std::fs::read_to_string(&sys).unwrap().replace("start = { ain = [2.0, 3.0] }", s);
            std::fs::write(&sys, t).unwrap();
        }
        let o = cosim(&["run", sys.to_str().unwrap(), "--out", dir.join("out").to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{stderr}");
        for e in expected {
            assert!(stderr.contains(e), "expected {e:?} in: {stderr}");
        }
    };
    check(
        "[[connections]]\nfrom = \"a.arr\"\nto = \"b.ain\"\n",
        None,
        &["connections[0]", "a.arr has shape [3] but b.ain has shape [2]"],
    );
    check(
        "[[connections]]\nfrom = \"a.arr\"\nto = \"b.u\"\n",
        None,
        &["connections[0].from", "a.arr is an array of shape [3] but b.u is not", "arr[1]"],
    );
    check(
        "",
        Some("start = { ain = [1.0] }"),
        &["instances.a.start.ain", "ain has shape [2] (2 elements) but 1 start values were given"],
    );
    check("", Some("start = { ain = 1.0 }"), &["ain is an array of shape [2]: give a TOML array of 2 values"]);
    check("", Some("start = { u = [1.0, 2.0] }"), &["u is a scalar: a TOML array [1.0, 2.0]"]);
}

#[test]
fn a_whole_array_start_value_on_the_command_line_sets_every_element() {
    let dir = tmp("cfmu3-start-value-array");
    let fmu = build(&dir, "cfmu3", &[]);
    let args = ["--start-value", "ain=[2, 3]", "--start-value", "u=1", "--output-variables", "x,aout[1],aout[2]"];
    let (code, stderr, out) = run(&dir, &fmu, &args);
    assert_eq!(code, Some(0), "{stderr}");
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let last: Vec<f64> = csv.lines().last().unwrap().split(',').map(|x| x.parse().unwrap()).collect();
    // time, x, aout[1], aout[2]: aout = 10 ain; x' = u + ain[1] - 0.5 = 2.5 from x = 0 (explicit
    // Euler, exact for a constant rate).
    assert_eq!(&last[2..], [20.0, 30.0]);
    assert!((last[1] - 2.5).abs() < 1e-12, "{}", last[1]);
    // Nested brackets read row by row: the same values.
    let (code, stderr, out2) = run(&dir.join("nested"), &fmu, &["--start-value", "ain=[[2],[3]]"]);
    assert_eq!(code, Some(0), "{stderr}");
    let header = std::fs::read_to_string(out2.join("results.csv")).unwrap();
    assert!(header.lines().next().unwrap().contains("aout[1]"), "{header}");

    for (arg, expected) in [
        ("ain=[1]", "--start-value ain=[1]: ain has shape [2] (2 elements) but 1 values were given: [1]"),
        ("ain=1", "--start-value ain=1: ain is an array of shape [2]: give its 2 values in brackets, row-major (e.g. ain=[0,0]), or name an element, e.g. ain[1]"),
        ("ain=[1,abc]", "--start-value ain=[1,abc]: \"abc\" is not a finite number (ain[2] is Real)"),
        ("ain=[1,2", "ain is an array of shape [2]: give its 2 values in brackets"),
        ("aout=[1,2]", "--start-value aout=[1,2]: aout[1] has causality output and cannot be given a start value"),
    ] {
        let (code, stderr, _) = run(&dir.join("bad"), &fmu, &["--start-value", arg]);
        assert_eq!(code, Some(1), "{arg}: {stderr}");
        assert!(stderr.contains(expected), "{arg}: expected {expected:?} in: {stderr}");
        assert!(stderr.contains("cfmu3.fmu"), "{stderr}");
    }
}

#[test]
fn an_ssp_connection_of_connectors_naming_whole_arrays_joins_every_element() {
    let dir = tmp("cfmu3-ssp-array");
    build(&dir, "cfmu3", &[]);
    let ssd = |to: &str| {
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription" xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" version="1.0" name="arrays">
  <ssd:System name="arrays">
    <ssd:Elements>
      <ssd:Component name="a" source="cfmu3.fmu">
        <ssd:Connectors>
          <ssd:Connector name="aout" kind="output"><ssc:Real/></ssd:Connector>
          <ssd:Connector name="arr" kind="output"><ssc:Real/></ssd:Connector>
        </ssd:Connectors>
        <ssd:ParameterBindings>
          <ssd:ParameterBinding>
            <ssd:ParameterValues>
              <ssv:ParameterSet version="1.0" name="a-start">
                <ssv:Parameters>
                  <ssv:Parameter name="ain[1]"><ssv:Real value="2"/></ssv:Parameter>
                  <ssv:Parameter name="ain[2]"><ssv:Real value="3"/></ssv:Parameter>
                </ssv:Parameters>
              </ssv:ParameterSet>
            </ssd:ParameterValues>
          </ssd:ParameterBinding>
        </ssd:ParameterBindings>
      </ssd:Component>
      <ssd:Component name="b" source="cfmu3.fmu">
        <ssd:Connectors>
          <ssd:Connector name="ain" kind="input"><ssc:Real/></ssd:Connector>
        </ssd:Connectors>
      </ssd:Component>
    </ssd:Elements>
    <ssd:Connections>
      <ssd:Connection startElement="a" startConnector="{to}" endElement="b" endConnector="ain"/>
    </ssd:Connections>
  </ssd:System>
  <ssd:DefaultExperiment startTime="0" stopTime="1"/>
  <ssd:Annotations>
    <ssc:Annotation type="org.hydraulic-cosim.settings">
      <cosim:Settings xmlns:cosim="https://example.invalid/hydraulic-cosim/ssp/settings/1.0"><![CDATA[
[simulation]
step = 0.1
[outputs]
variables = ["a.aout[1]", "a.aout[2]", "b.ain[1]", "b.ain[2]", "b.aout[2]"]
]]></cosim:Settings>
    </ssc:Annotation>
  </ssd:Annotations>
</ssd:SystemStructureDescription>
"#
        )
    };
    let path = dir.join("arrays.ssd");
    std::fs::write(&path, ssd("aout")).unwrap();
    let out = dir.join("out");
    let o = cosim(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let last: Vec<f64> = csv.lines().last().unwrap().split(',').map(|x| x.parse().unwrap()).collect();
    // a.ain = [2, 3] element by element from the SSV; a.aout = 10 a.ain reaches b.ain element
    // by element; b.aout = 10 b.ain.
    assert_eq!(&last[1..], [20.0, 30.0, 20.0, 30.0, 300.0], "{csv}");

    // Arrays of other shapes: refused naming the SSD, both connectors and both shapes.
    std::fs::write(&path, ssd("arr")).unwrap();
    let o = cosim(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{stderr}");
    assert!(
        stderr.contains("arrays.ssd") && stderr.contains("a.arr has shape [3] but b.ain has shape [2]"),
        "{stderr}"
    );
}

/// 64-bit integers are exact end to end: an Int64 start value of 5,000,000,000 (over 32 bits)
/// reaches the FMU, which echoes it, and the UInt64 output 2^63 + 1 (not an f64) reaches
/// results.csv digit for digit, in process and isolated.
#[test]
fn int64_start_values_and_uint64_outputs_reach_results_csv_exactly() {
    for flags in [&[][..], &["--isolate"][..]] {
        let dir = tmp("cfmu3-int64");
        let fmu = build(&dir, "cfmu3", &[]);
        let mut args = vec!["--start-value", "big_in=5000000000", "--output-variables", "big_echo,huge,x"];
        args.extend_from_slice(flags);
        let (code, stderr, out) = run(&dir, &fmu, &args);
        assert_eq!(code, Some(0), "{stderr}");
        let (header, rows) = csv_text(&out);
        assert_eq!(header, ["time", "cfmu3.big_echo", "cfmu3.huge", "cfmu3.x"]);
        assert_eq!(rows.len(), 11);
        for r in &rows {
            // As every integral number of results.csv up to 2^53 (".0"); beyond, its digits.
            assert_eq!((r[1].as_str(), r[2].as_str()), ("5000000000.0", "9223372036854775809"), "{r:?}");
        }
        // Out of the variable's range: refused naming the variable, its type and the function.
        let (code, stderr, _) = run(&dir, &fmu, &["--start-value", "small=300"]);
        assert_eq!(code, Some(1), "{stderr}");
        assert!(
            stderr.contains("small (value reference 6): 300 is outside the range of Int8 (-128 to 127)"),
            "{stderr}"
        );
    }
}

/// Int64, String and Binary values through connections: a.big_echo → b.big_in (5,000,000,000),
/// a.label_out → b.label_in (a String), in process and isolated.
#[test]
fn int64_and_string_values_flow_through_connections() {
    for flags in [&[][..], &["--isolate"][..]] {
        let dir = tmp("cfmu3-int64-system");
        let sys = two_instances(
            &dir,
            "[[connections]]\nfrom = \"a.big_echo\"\nto = \"b.big_in\"\n\n\
             [[connections]]\nfrom = \"a.label_out\"\nto = \"b.label_in\"\n\n\
             [outputs]\nvariables = [\"b.big_echo\", \"b.label_len\", \"a.huge\"]\n",
        );
        let t = std::fs::read_to_string(&sys).unwrap().replace(
            "start = { ain = [2.0, 3.0] }",
            "start = { ain = [2.0, 3.0], big_in = 5000000000, label = \"hello\" }",
        );
        std::fs::write(&sys, t).unwrap();
        let out = dir.join("out");
        let mut args = vec!["run", sys.to_str().unwrap(), "--out", out.to_str().unwrap()];
        args.extend_from_slice(flags);
        let o = cosim(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let (header, rows) = csv_text(&out);
        assert_eq!(header, ["time", "b.big_echo", "b.label_len", "a.huge"]);
        // Every row, the start time's included, is written after its point's exchange (issue 47):
        // b's echo of its connected input already at t = 0.
        assert_eq!(rows.len(), 11);
        for r in &rows {
            // b.label_in = a.label_out = "hello/" (a's label_in is empty): 6 characters.
            assert_eq!(r[1..], ["5000000000.0", "6.0", "9223372036854775809"], "{r:?}");
        }
    }
}

/// UInt64 values above Int64's range are exact as start values (issue 43): `--start-value`
/// and a system file (as a string, since TOML integers stop at 2^63 − 1) set the UInt64
/// parameter `big` to 2^64 − 1 and 2^63 + 5, and results.csv shows their digits.
#[test]
fn uint64_start_values_above_int64_reach_the_fmu_exactly() {
    for flags in [&[][..], &["--isolate"][..]] {
        let dir = tmp("cfmu3-uint64");
        let fmu = build(&dir, "cfmu3", &[]);
        let mut args = vec!["--start-value", "big=18446744073709551615", "--output-variables", "big"];
        args.extend_from_slice(flags);
        let (code, stderr, out) = run(&dir, &fmu, &args);
        assert_eq!(code, Some(0), "{stderr}");
        let (_, rows) = csv_text(&out);
        assert!(rows.iter().all(|r| r[1] == "18446744073709551615"), "{rows:?}");
        // One more than UInt64 holds: refused naming the variable and the range.
        let (code, stderr, _) = run(&dir, &fmu, &["--start-value", "big=18446744073709551616"]);
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stderr.contains("big") && stderr.contains("18446744073709551616"), "{stderr}");
    }
}

/// The same through a system file (the digits in a string: TOML's integers stop at 2^63 − 1)
/// and its SSP export (an `ssv:Integer` of the digits), read back and run: the same results.csv.
#[test]
fn uint64_start_values_above_int64_travel_through_toml_and_ssp() {
    let dir = tmp("cfmu3-uint64-system");
    let sys = two_instances(&dir, "[outputs]\nvariables = [\"a.big\", \"b.big\"]\n");
    let t = std::fs::read_to_string(&sys)
        .unwrap()
        .replace("start = { ain = [2.0, 3.0] }", "start = { ain = [2.0, 3.0], big = \"9223372036854775813\" }");
    std::fs::write(&sys, t).unwrap();
    let out = dir.join("out");
    let o = cosim(&["run", sys.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (header, rows) = csv_text(&out);
    assert_eq!(header, ["time", "a.big", "b.big"]);
    // b keeps its description's start, 5,000,000,000.
    assert!(rows.iter().all(|r| r[1..] == ["9223372036854775813", "5000000000.0"]), "{rows:?}");
    let ssp = dir.join("system.ssp");
    let o = cosim(&["export-ssp", sys.to_str().unwrap(), "--out", ssp.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out2 = dir.join("out-ssp");
    let o = cosim(&["run", ssp.to_str().unwrap(), "--out", out2.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(out.join("results.csv")).unwrap(), std::fs::read(out2.join("results.csv")).unwrap());
    // Not a UInt64's digits: refused naming the key and the value.
    let t = std::fs::read_to_string(&sys).unwrap().replace("\"9223372036854775813\"", "\"9e18\"");
    std::fs::write(&sys, t).unwrap();
    let o = cosim(&["run", sys.to_str().unwrap(), "--out", dir.join("out3").to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && stderr.contains("9e18") && stderr.contains("big"), "{stderr}");
}
