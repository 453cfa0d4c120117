//! The hostile FMU of `hostile.c` built per behaviour, a test folder with a private TMPDIR, and
//! helpers to run `cosim` in it: shared by `hostile_runs.rs` and `robustness_wave4.rs`.
#![allow(dead_code, reason = "each test file uses part of it")]

use super::support;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A test's folder with a private TMPDIR inside.
pub struct Scratch {
    pub dir: PathBuf,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Kept when the test fails, for a look.
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl Scratch {
    pub fn new(name: &str) -> Self {
        let dir = support::tmp(&format!("hostile-{name}"));
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        Self { dir }
    }
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
    pub fn tmpdir(&self) -> PathBuf {
        self.dir.join("tmp")
    }
    /// `cosim-fmu-*` folders left in the private TMPDIR.
    pub fn leftovers(&self) -> Vec<String> {
        std::fs::read_dir(self.tmpdir())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("cosim-fmu-"))
            .collect()
    }
    /// The hostile FMU compiled with `defines` (e.g. `MODE=1`, `AT=3`).
    pub fn fmu(&self, name: &str, defines: &[&str]) -> PathBuf {
        let so = self.path(&format!("{name}.so"));
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hostile_runs/hostile.c");
        let mut cc = Command::new("cc");
        cc.args(["-shared", "-fPIC", "-O1", "-o"]).arg(&so).arg(&src);
        for d in defines {
            cc.arg(format!("-D{d}"));
        }
        let out = cc.output().expect("the system's C compiler `cc` runs");
        assert!(out.status.success(), "cc failed: {}", String::from_utf8_lossy(&out.stderr));
        let fmu = self.path(&format!("{name}.fmu"));
        let mut z = zip::ZipWriter::new(std::fs::File::create(&fmu).unwrap());
        let o = zip::write::SimpleFileOptions::default();
        z.start_file("modelDescription.xml", o).unwrap();
        z.write_all(description("hostile").as_bytes()).unwrap();
        z.start_file("binaries/linux64/hostile.so", o).unwrap();
        z.write_all(&std::fs::read(&so).unwrap()).unwrap();
        z.finish().unwrap();
        fmu
    }
    /// A system file running `fmu` as instance `h` for `steps` steps of 1 ms.
    pub fn system(&self, name: &str, fmu: &Path, steps: u32) -> PathBuf {
        let p = self.path(name);
        let text = format!(
            "[simulation]\nstop = {}\nstep = 1e-3\n[instances.h]\nfmu = \"{}\"\n",
            f64::from(steps) * 1e-3,
            fmu.display()
        );
        std::fs::write(&p, text).unwrap();
        p
    }
    /// `cosim ARGS` started in this folder with the private TMPDIR; stderr to `stderr.txt`.
    /// The stop signals have their default dispositions, whatever this test inherited (under
    /// `nohup` SIGHUP is ignored, and cosim keeps an inherited ignored signal ignored).
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.spawn_ignoring(args, &[])
    }
    /// [`Self::spawn`] with `ignored` ignored from the start, as `nohup` does with SIGHUP.
    pub fn spawn_ignoring(&self, args: &[&str], ignored: &'static [i32]) -> Child {
        use std::os::unix::process::CommandExt;
        let mut command = crate::support::cosim_stoppable();
        command
            .args(args)
            .current_dir(&self.dir)
            .env("TMPDIR", self.tmpdir())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(self.path("stderr.txt")).unwrap());
        // SAFETY: sigaction only (async-signal-safe) in the forked child, after the defaults.
        unsafe {
            command.pre_exec(move || {
                for s in ignored {
                    cosim_os::signal::ignore(*s)?;
                }
                Ok(())
            })
        };
        command.spawn().unwrap()
    }
    /// `cosim ARGS` to the end: (status, stderr).
    pub fn run(&self, args: &[&str]) -> (ExitStatus, String) {
        let mut c = self.spawn(args);
        let status = wait(&mut c, Duration::from_secs(60)).expect("cosim did not end within 60 s");
        (status, std::fs::read_to_string(self.path("stderr.txt")).unwrap())
    }
}

/// hostile.xml (the description of every hostile FMU, also the Python tests') for the model `id`.
pub fn description(id: &str) -> String {
    include_str!("hostile.xml")
        .replace("modelName=\"hostile\"", &format!("modelName=\"{id}\""))
        .replace("modelIdentifier=\"hostile\"", &format!("modelIdentifier=\"{id}\""))
}

/// Waits for `c` to end, at most `limit`.
pub fn wait(c: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if let Some(s) = c.try_wait().unwrap() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = c.kill();
    let _ = c.wait();
    None
}

/// Waits until `cond` holds, at most 60 s.
pub fn wait_until(what: &str, cond: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < Duration::from_secs(60), "gave up waiting for {what} after 60 s");
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub fn kill(c: &Child, signal: &str) {
    let ok = Command::new("kill").args([signal, &c.id().to_string()]).status().unwrap();
    assert!(ok.success());
}

pub fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// The times of results.csv's rows.
pub fn times(out: &Path) -> Vec<f64> {
    let text = std::fs::read_to_string(out.join("results.csv")).unwrap();
    text.lines().skip(1).map(|l| l.split(',').next().unwrap().parse().unwrap()).collect()
}

pub fn snapshot(out: &Path) -> Vec<(String, Vec<u8>)> {
    ["results.csv", "bonds.csv", "summary.json"]
        .iter()
        .map(|f| (f.to_string(), std::fs::read(out.join(f)).unwrap()))
        .collect()
}

pub fn signal_of(s: ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    s.signal()
}
