#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code
//! Fuzzing `cosim run`'s inputs (issue 22): mutated system files and mutated FMU archives go
//! through the whole front end in process — `run::detect`, `run::prepare`, loading and
//! validating every FMU, setting the system up, then at most `MAX_STEPS` communication steps
//! with the file observers — and `cosim info`'s report. Properties: no panic, no hang (each
//! case runs on a thread with a watchdog), and an error names the file it is about.
//!
//! Seeds: the oscillator scenarios (when `cargo xtask fmus` has packaged their FMUs), systems of
//! the C test FMU (`cfmu/`), the C FMU itself and `testing-faulty.fmu`. Mutations: lines
//! deleted, duplicated or swapped; numbers and strings replaced by hostile values (±1e308, NaN,
//! 0, 1e-300, names with dots, commas, quotes, newlines, paths leaving the folder); keys added
//! with hostile values; random bytes; truncation; for archives also the description mutated the
//! same way, entries renamed, symbolic links and `..` entries added, the binary replaced by
//! garbage, bytes of the zip flipped.
//!
//! Deterministic: seed `FUZZ_SEED` (default 22), `FUZZ_CASES` cases per property (default 150:
//! a few seconds in a debug build). `cargo xtask fuzz` runs 5000 per property in release.
//! A failing case is written to `target/fuzz-failures/` and its seed printed.

mod cfmu;

use cosim_cli::run::{detect, prepare, RunOptions};
use master::fmu::FmuCache;
use master::Execution;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// Communication steps run per case (the setup, with every check, runs in full).
const MAX_STEPS: u64 = 50;
/// A case that takes longer hangs.
const WATCHDOG: Duration = Duration::from_secs(60);

/// SplitMix64: small, seedable, good enough to pick mutations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

fn cases() -> usize {
    std::env::var("FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(150)
}

fn seed() -> u64 {
    std::env::var("FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(22)
}

const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1e308",
    "-1e308",
    "1e-300",
    "nan",
    "inf",
    "-inf",
    "1e17",
    "1e-13",
    "0.3",
    "3",
    "1e10",
    "-0.0",
    "9223372036854775807",
    "4294967296",
    "2.5e-324",
];
const STRINGS: &[&str] = &[
    "",
    "a.b.c",
    "x,y",
    "q\\\"uote",
    "new\\nline",
    "../../../etc/passwd",
    "/dev/zero",
    "m1",
    "m2",
    "m1.x",
    "m2.F",
    "all",
    "I2",
    "gauss-seidel",
    "jacobi",
    "on",
    "\\u0000",
    "ü.ß",
    "m1.xi_dot",
];
const KEYS: &[&str] = &[
    "start",
    "stop",
    "step",
    "algorithm",
    "order",
    "extrapolation",
    "parallel",
    "record_every",
    "isolate",
    "worker_timeout",
    "max_residual_energy",
    "iterations",
    "iteration_tolerance",
    "fmu",
    "from",
    "to",
    "gain",
    "offset",
    "name",
    "times",
    "values",
    "interpolation",
    "derivatives",
    "variables",
    "sign",
];

/// One mutation of a text (TOML or XML).
fn mutate_text(rng: &mut Rng, text: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let n = lines.len();
    match rng.below(9) {
        0 => {
            lines.remove(rng.below(n));
        }
        1 => {
            let l = lines[rng.below(n)].clone();
            lines.insert(rng.below(n + 1), l);
        }
        2 => {
            let (a, b) = (rng.below(n), rng.below(n));
            lines.swap(a, b);
        }
        3 | 4 => {
            // A number (or a whole value) replaced.
            let k = rng.below(n);
            let line = &lines[k];
            let spans: Vec<(usize, usize)> = number_spans(line);
            if let Some(&(a, b)) = spans.get(rng.below(spans.len().max(1))) {
                lines[k] = format!("{}{}{}", &line[..a], rng.pick(NUMBERS), &line[b..]);
            } else if let Some(eq) = line.find(" = ") {
                lines[k] = format!("{} = {}", &line[..eq], rng.pick(NUMBERS));
            }
        }
        5 => {
            // A quoted string replaced.
            let k = rng.below(n);
            let line = lines[k].clone();
            let quotes: Vec<usize> = line.match_indices('"').map(|(i, _)| i).collect();
            if quotes.len() >= 2 {
                let q = 2 * rng.below(quotes.len() / 2);
                lines[k] = format!("{}\"{}\"{}", &line[..quotes[q]], rng.pick(STRINGS), &line[quotes[q + 1] + 1..]);
            }
        }
        6 => {
            // A key with a hostile value, in some table.
            let v =
                if rng.below(2) == 0 { rng.pick(NUMBERS).to_string() } else { format!("\"{}\"", rng.pick(STRINGS)) };
            lines.insert(rng.below(n + 1), format!("{} = {v}", rng.pick(KEYS)));
        }
        7 => {
            // Random bytes (valid UTF-8) into a line.
            let k = rng.below(n);
            let at = floor_char(&lines[k], rng.below(lines[k].len() + 1));
            let junk: String = (0..1 + rng.below(4))
                .map(|_| *rng.pick(&['[', ']', '{', '}', '=', '"', '\'', ',', '.', '\u{0}', '#', '<', '>', '&', 'é']))
                .collect();
            lines[k].insert_str(at, &junk);
        }
        _ => {
            // Truncation.
            let text = lines.join("\n");
            let cut = floor_char(&text, rng.below(text.len() + 1));
            return text[..cut].to_owned();
        }
    }
    lines.join("\n") + "\n"
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i.min(s.len())
}

/// Byte ranges of the numbers in a line.
fn number_spans(line: &str) -> Vec<(usize, usize)> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')) {
            let start = if i > 0 && b[i - 1] == b'-' { i - 1 } else { i };
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_digit() || matches!(b[j], b'.' | b'e' | b'E' | b'-' | b'+')) {
                j += 1;
            }
            out.push((start, j));
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// What one case did: `Ok(true)` ran, `Ok(false)` refused with a message naming the file, or
/// the failure.
fn exercise(path: &Path, out: &Path) -> Result<bool, String> {
    let run = || -> master::Result<()> {
        let input = detect(path)?;
        let prepared = prepare(path, input, &RunOptions::default())?;
        let mut fmus = FmuCache::default();
        let mut exec = Execution::from_builder(&prepared.builder, &prepared.over, &mut fmus)?;
        for o in master::execution::file_observers(exec.system(), out)? {
            exec.observe(o);
        }
        for _ in 0..exec.system().steps().min(MAX_STEPS) {
            if exec.step().is_err() {
                break;
            }
        }
        exec.finish().map(|_| ())
    };
    match run() {
        Ok(()) => Ok(true),
        Err(e) => {
            let msg = e.to_string();
            let name = path.file_name().unwrap().to_string_lossy();
            // An SSP's error may be about its parameter set or mapping file instead.
            let names_a_file = [".fmu", ".ssv", ".ssm"].iter().any(|ext| msg.contains(ext));
            if msg.trim().is_empty() || !(msg.contains(name.as_ref()) || names_a_file) {
                Err(format!("the error names neither {name} nor an FMU: {msg}"))
            } else {
                Ok(false)
            }
        }
    }
}

/// Runs `f` on a thread: a panic or a hang (> WATCHDOG) is a failure; the input is kept.
fn guarded(what: &str, case: usize, input: &Path, f: impl FnOnce() -> Result<bool, String> + Send + 'static) -> bool {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
            .unwrap_or_else(|p| Err(format!("panic: {}", panic_text(&p))));
        let _ = tx.send(r);
    });
    let failure = match rx.recv_timeout(WATCHDOG) {
        Ok(Ok(ran)) => return ran,
        Ok(Err(e)) => e,
        Err(_) => format!("no answer within {WATCHDOG:?} (a hang)"),
    };
    let keep = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fuzz-failures");
    std::fs::create_dir_all(&keep).unwrap();
    let kept = keep.join(format!("{what}-{}-{case}-{}", seed(), input.file_name().unwrap().to_string_lossy()));
    let _ = std::fs::copy(input, &kept);
    panic!("{what} case {case} (FUZZ_SEED={}): {failure}\ninput kept as {}", seed(), kept.display());
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned()).unwrap_or_default()
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cosim-fuzz-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn fmu_dir() -> PathBuf {
    std::env::var_os("FMU_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/fmu"))
}

#[test]
fn mutated_system_files_give_results_or_errors_naming_the_file() {
    let dir = scratch("systems");
    // The C FMU, with a system using every section.
    let mut spec = cfmu::Spec::new("c");
    spec.cs_attrs = r#"canGetAndSetFMUstate="false""#.into();
    spec.build(&dir);
    let mut seeds = vec![r#"[simulation]
start = 0.0
stop = 1.0
step = 0.1
algorithm = "jacobi"
extrapolation = 1
record_every = 2
[instances.a]
fmu = "c.fmu"
step = 0.05
start = { u = 0.5 }
[instances.b]
fmu = "c.fmu"
[[connections]]
from = "a.x"
to = "b.u"
gain = 2.0
extrapolation = 2
[[inputs]]
to = "a.u"
times = [0.0, 0.5]
values = [1.0, 2.0]
interpolation = "linear"
[[bonds]]
name = "p"
ports = [ { instance = "a", effort = "x", flow = "n" }, { instance = "b", effort = "x", flow = "t", sign = -1.0 } ]
[outputs]
variables = ["a.x", "b.x", "b.n"]
"#
    .to_owned()];
    // The oscillator scenarios, their FMU paths pointed at the packaged FMUs.
    let fmus = fmu_dir();
    let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    for name in ["oscillator-fd.toml", "oscillator-dd.toml", "oscillator-triple-fd.toml"] {
        let Ok(text) = std::fs::read_to_string(scenarios.join(name)) else { continue };
        let text = text.replace("../target/fmu/", &format!("{}/", fmus.display()));
        if text.lines().filter(|l| l.starts_with("fmu = ")).all(|l| {
            let p = l.trim_start_matches("fmu = ").trim_matches('"');
            Path::new(p).exists()
        }) {
            // Short runs: the scenario's stop stays, the steps run are capped.
            seeds.push(text);
        }
    }
    let mut rng = Rng(seed());
    let mut ran = 0;
    for case in 0..cases() {
        let mut text = rng.pick(&seeds).clone();
        for _ in 0..1 + rng.below(3) {
            text = mutate_text(&mut rng, &text);
        }
        let path = dir.join(format!("case{case}.toml"));
        std::fs::write(&path, &text).unwrap();
        let out = dir.join(format!("out{case}"));
        let p = path.clone();
        ran += usize::from(guarded("system", case, &path, move || exercise(&p, &out)));
        // Inputs are kept only on failure (in target/fuzz-failures/): thousands of cases must
        // not fill the disk.
        let _ = std::fs::remove_dir_all(dir.join(format!("out{case}")));
        let _ = std::fs::remove_file(&path);
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Not vacuous: mutations keep a fair share runnable, and refuse a fair share.
    eprintln!("system files: {ran} of {} ran, the others were refused", cases());
    assert!(cases() < 20 || (ran * 10 > cases() && ran * 10 < 9 * cases()), "{ran} of {} ran", cases());
}

/// The entries of an archive.
fn entries(path: &Path) -> Vec<(String, Vec<u8>)> {
    use std::io::Read;
    let mut zip = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    (0..zip.len())
        .map(|i| {
            let mut e = zip.by_index(i).unwrap();
            let mut bytes = Vec::new();
            e.read_to_end(&mut bytes).unwrap();
            (e.name().to_owned(), bytes)
        })
        .collect()
}

fn mutate_archive(rng: &mut Rng, seed: &[(String, Vec<u8>)], to: &Path) {
    use std::io::Write;
    let mut files: Vec<(String, Vec<u8>)> = seed.to_vec();
    let mut links: Vec<(String, String)> = Vec::new();
    for _ in 0..1 + rng.below(3) {
        let k = rng.below(files.len());
        match rng.below(8) {
            0..=3 => {
                if let Some(md) = files.iter_mut().find(|(n, _)| n == "modelDescription.xml") {
                    let text = String::from_utf8_lossy(&md.1).into_owned();
                    md.1 = mutate_xml(rng, &text).into_bytes();
                }
            }
            4 => {
                let name = rng.pick(&["../evil", "/abs", "binaries/linux64/../../x", "", "a\\b", "resources/"]);
                files.push((name.to_string(), b"x".to_vec()));
            }
            5 => links.push((
                rng.pick(&["resources/l", "binaries/linux64/c.so", "modelDescription.xml"]).to_string(),
                "/etc/passwd".into(),
            )),
            6 => {
                // The binary replaced: garbage, empty, or an ELF header alone.
                if let Some(so) = files.iter_mut().find(|(n, _)| n.ends_with(".so")) {
                    so.1 = match rng.below(3) {
                        0 => b"garbage".to_vec(),
                        1 => Vec::new(),
                        _ => so.1[..64.min(so.1.len())].to_vec(),
                    };
                }
            }
            _ => {
                let name = files[k].0.clone();
                files.push((name, b"duplicate".to_vec()));
            }
        }
    }
    let mut w = zip::ZipWriter::new(std::fs::File::create(to).unwrap());
    // Stored, not deflated: compressing the binary again in every case would dominate the time.
    let o = zip::write::SimpleFileOptions::default()
        .unix_permissions(0o755)
        .compression_method(zip::CompressionMethod::Stored);
    for (name, bytes) in &files {
        if w.start_file(name.as_str(), o).is_ok() {
            w.write_all(bytes).unwrap();
        }
    }
    for (name, target) in &links {
        let _ = w.add_symlink(name.as_str(), target.as_str(), o);
    }
    w.finish().unwrap();
    // Sometimes flip bytes of the zip itself.
    if rng.below(5) == 0 {
        let mut bytes = std::fs::read(to).unwrap();
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(bytes.len());
            bytes[i] ^= 1 << rng.below(8);
        }
        std::fs::write(to, bytes).unwrap();
    }
}

const ATTR_VALUES: &[&str] = &[
    "",
    "-1",
    "0",
    "4294967295",
    "4294967296",
    "1e308",
    "-1e308",
    "NaN",
    "INF",
    "1e-13",
    "1e17",
    "true",
    "2.0",
    "3.0",
    "1.0",
    "x,y",
    "a&quot;b",
    "&#10;",
    "input",
    "output",
    "parameter",
    "exact",
    "calculated",
    "c",
    "../c",
];

/// One mutation of a model description: an attribute value replaced, an element removed or
/// duplicated, or a text mutation.
fn mutate_xml(rng: &mut Rng, xml: &str) -> String {
    match rng.below(4) {
        0 | 1 => {
            let values: Vec<(usize, usize)> = xml
                .match_indices("=\"")
                .filter_map(|(i, _)| xml[i + 2..].find('"').map(|j| (i + 2, i + 2 + j)))
                .collect();
            if values.is_empty() {
                return xml.to_owned();
            }
            let (a, b) = *rng.pick(&values);
            format!("{}{}{}", &xml[..a], rng.pick(ATTR_VALUES), &xml[b..])
        }
        2 => {
            let starts: Vec<usize> = xml.match_indices('<').map(|(i, _)| i).collect();
            let a = *rng.pick(&starts);
            let Some(len) = xml[a..].find('>') else { return xml.to_owned() };
            let tag = &xml[a..=a + len];
            if rng.below(2) == 0 {
                format!("{}{}", &xml[..a], &xml[a + len + 1..])
            } else {
                format!("{}{tag}{}", &xml[..a], &xml[a..])
            }
        }
        _ => mutate_text(rng, xml),
    }
}

#[test]
fn mutated_fmu_archives_give_results_or_errors_naming_the_file() {
    let dir = scratch("archives");
    let mut spec = cfmu::Spec::new("c");
    spec.interpolate = true;
    let mut seeds = vec![entries(&spec.build(&dir))];
    if let Ok(true) = fmu_dir().join("testing-faulty.fmu").try_exists() {
        seeds.push(entries(&fmu_dir().join("testing-faulty.fmu")));
    }
    let mut rng = Rng(seed() ^ 0xA5A5);
    let mut ran = 0;
    for case in 0..cases() {
        let seed_entries = rng.pick(&seeds).clone();
        let path = dir.join(format!("case{case}.fmu"));
        mutate_archive(&mut rng, &seed_entries, &path);
        let out = dir.join(format!("out{case}"));
        let p = path.clone();
        ran += usize::from(guarded("archive", case, &path, move || {
            // `cosim info`: a report or an error naming the file.
            if let Err(e) = master::fmu::info::info(&p) {
                let msg = e.to_string();
                if !msg.contains(p.file_name().unwrap().to_string_lossy().as_ref()) {
                    return Err(format!("info: the error does not name the file: {msg}"));
                }
            }
            exercise(&p, &out)
        }));
        let _ = std::fs::remove_dir_all(dir.join(format!("out{case}")));
        let _ = std::fs::remove_file(&path);
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("archives: {ran} of {} ran, the others were refused", cases());
    assert!(cases() < 20 || (ran * 10 > cases() && ran * 10 < 9 * cases()), "{ran} of {} ran", cases());
}

/// Attribute values an SSP reader must survive (xs:double spellings, units, XML specials).
const XML_VALUES: &[&str] =
    &["INF", "-INF", "NaN", "1e400", "-0", "mm", "m", "N", "&lt;", "&#x0;", "]]>", "&amp;&amp;", "resources/", ""];

#[test]
fn mutated_ssp_files_give_results_or_errors_naming_the_file() {
    // Issue 30: the SSP reader (SSD, .ssv, .ssm; unpacked and as a package) under the same
    // mutations, plus hostile attribute values.
    let dir = scratch("ssp");
    let fmus = fmu_dir();
    let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let text = std::fs::read_to_string(scenarios.join("oscillator-fd.toml")).expect("scenarios/oscillator-fd.toml");
    if !fmus.join("oscillator-fd-m1.fmu").exists() {
        return missing_tool::skip_or_fail(
            &format!("the packaged oscillator FMUs ({}/oscillator-fd-m1.fmu)", fmus.display()),
            "run `cargo xtask fmus` (or the whole suite with `cargo xtask test`)",
        );
    }
    let toml = dir.join("osc.toml");
    std::fs::write(&toml, text.replace("../target/fmu/", &format!("{}/", fmus.display()))).unwrap();
    let package = dir.join("seed.ssp");
    master::ssp::export(&toml, &package).unwrap();
    let pkg = dir.join("pkg");
    zip::ZipArchive::new(std::fs::File::open(&package).unwrap()).unwrap().extract(&pkg).unwrap();
    let ssd = std::fs::read_to_string(pkg.join("SystemStructure.ssd")).unwrap();
    let ssv = std::fs::read_to_string(pkg.join("resources/start-values.ssv")).unwrap();
    // Seeds: as exported; with a mapping (.ssm with a linear transformation), a connection's
    // linear transformation, a Real value with a unit and its definitions.
    let ssm = r#"<?xml version="1.0" encoding="UTF-8"?>
<ssm:ParameterMapping xmlns:ssm="http://ssp-standard.org/SSP1/SystemStructureParameterMapping" xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" version="1.0">
  <ssm:MappingEntry source="m2.x0" target="m2.x0">
    <ssc:LinearTransformation factor="2" offset="0.1"/>
  </ssm:MappingEntry>
</ssm:ParameterMapping>
"#;
    std::fs::write(pkg.join("resources/map.ssm"), ssm).unwrap();
    let mapped = ssd
        .replace(
            r#"<ssd:ParameterBinding source="resources/start-values.ssv"/>"#,
            "<ssd:ParameterBinding source=\"resources/start-values.ssv\">\n        <ssd:ParameterMapping source=\"resources/map.ssm\"/>\n      </ssd:ParameterBinding>",
        )
        .replace(
            r#"endElement="m1" endConnector="xi"/>"#,
            "endElement=\"m1\" endConnector=\"xi\">\n        <ssc:LinearTransformation factor=\"1\" offset=\"0\"/>\n      </ssd:Connection>",
        )
        .replace(
            r#"<ssd:Connector name="x" kind="output"><ssc:Real unit="m"/></ssd:Connector>"#,
            "<ssd:Connector name=\"x\" kind=\"output\"><ssc:Real unit=\"m\"/></ssd:Connector>\n          <ssd:Connector name=\"x0\" kind=\"parameter\"><ssc:Real unit=\"m\"/></ssd:Connector>",
        );
    let with_unit = ssv.replace(
        "  </ssv:Parameters>",
        "    <ssv:Parameter name=\"m2.x0\"><ssv:Real value=\"100\" unit=\"mm\"/></ssv:Parameter>\n  </ssv:Parameters>\n  <ssv:Units>\n    <ssc:Unit xmlns:ssc=\"http://ssp-standard.org/SSP1/SystemStructureCommon\" name=\"mm\"><ssc:BaseUnit m=\"1\" factor=\"0.001\"/></ssc:Unit>\n  </ssv:Units>",
    );
    let ssds = [ssd, mapped];
    let ssvs = [ssv, with_unit];
    let mut rng = Rng(seed() ^ 0x55_5350);
    let mut ran = 0;
    for case in 0..cases() {
        let mut d = rng.pick(&ssds).clone();
        let mut v = rng.pick(&ssvs).clone();
        for _ in 0..1 + rng.below(3) {
            let target = if rng.below(3) == 0 { &mut v } else { &mut d };
            *target = if rng.below(3) == 0 {
                // A quoted attribute value replaced by a hostile one.
                let quotes: Vec<usize> = target.match_indices('"').map(|(i, _)| i).collect();
                if quotes.len() >= 2 {
                    let q = 2 * rng.below(quotes.len() / 2);
                    format!("{}\"{}\"{}", &target[..quotes[q]], rng.pick(XML_VALUES), &target[quotes[q + 1] + 1..])
                } else {
                    target.clone()
                }
            } else {
                mutate_text(&mut rng, target)
            };
        }
        std::fs::write(pkg.join("resources/start-values.ssv"), &v).unwrap();
        // Mostly unpacked (fast); every fourth case as a package.
        let path = if case % 4 == 3 {
            use std::io::Write;
            let p = dir.join(format!("case{case}.ssp"));
            let mut zip = zip::ZipWriter::new(std::fs::File::create(&p).unwrap());
            let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
            zip.start_file("SystemStructure.ssd", stored).unwrap();
            zip.write_all(d.as_bytes()).unwrap();
            for f in [
                "resources/start-values.ssv",
                "resources/map.ssm",
                "resources/oscillator-fd-m1.fmu",
                "resources/oscillator-fd-m2.fmu",
            ] {
                zip.start_file(f, stored).unwrap();
                zip.write_all(&std::fs::read(pkg.join(f)).unwrap()).unwrap();
            }
            zip.finish().unwrap();
            p
        } else {
            let p = pkg.join(format!("case{case}.ssd"));
            std::fs::write(&p, &d).unwrap();
            p
        };
        let out = dir.join(format!("out{case}"));
        let p = path.clone();
        ran += usize::from(guarded("ssp", case, &path, move || exercise(&p, &out)));
        let _ = std::fs::remove_dir_all(dir.join(format!("out{case}")));
        let _ = std::fs::remove_file(&path);
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("SSP files: {ran} of {} ran, the others were refused", cases());
    assert!(cases() < 20 || (ran * 10 > cases() && ran * 10 < 9 * cases()), "{ran} of {} ran", cases());
}
