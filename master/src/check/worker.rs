//! One check in one worker process: [`Supervisor`] (the checker's side) starts
//! `cosim check-worker --extracted DIR --check ID --plan JSON -- FMU` in its own process group,
//! and [`serve`] (the worker's side) loads the FMU and runs the check.
//!
//! The worker reports over its stdout pipe, one line each: `call WHAT` before every FMU call it
//! makes (so that a crash or a hang names the call it happened in), `found TEXT` for partial
//! results (kept as evidence should it die later), and `result JSON` (an
//! [`Outcome`]) at the end. Before loading the FMU it points descriptors 0 and 1 at /dev/null and
//! stderr, so nothing the FMU prints can garble the report. The supervisor reads the lines with a
//! deadline (the check's timeout): no result because the process died is a FAIL naming how it
//! died and the last call; no result within the timeout is a FAIL "hung" (the worker is killed).
//! Either way the worker's whole process group is killed afterwards (an FMU that forked leaves
//! nothing behind) and the FMU's last stderr lines are part of the evidence.

use super::probe::Probe;
use super::{find, Outcome, Plan, Runner};
use crate::error::{MasterError, Result};
use crate::fmu::{Archive, Fmu};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The FMU's stderr lines kept for the evidence of a crash.
const STDERR_TAIL: usize = 3;

/// The longest worker line read whole (64 MiB); the rest of a longer line is skipped. The
/// worker cuts its evidence to [`EVIDENCE_LIMIT`], so a genuine line always fits.
const LINE_LIMIT: usize = 64 << 20;

/// The longest evidence (1 MiB) a worker sends: a longer one (a check quoting a 16 MB FMU log
/// line) is cut with a note, and keeps its verdict.
const EVIDENCE_LIMIT: usize = 1 << 20;

/// Set by [`reap_descendants`]: after each worker, every process adopted meanwhile is killed.
static REAPER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// For a process that runs checks and nothing else (`cosim check`): makes it a subreaper
/// (`PR_SET_CHILD_SUBREAPER`), so that whatever a worker's FMU forked (even a `setsid()`ed
/// daemon) is adopted by it when its parent dies, and is killed after each worker. Not for a
/// process with children of its own (a Python interpreter): they would be killed too.
pub fn reap_descendants() -> std::io::Result<()> {
    cosim_os::process::become_subreaper()?;
    REAPER.store(true, std::sync::atomic::Ordering::SeqCst);
    Ok(())
}

/// A per-worker secret (32 hexadecimal digits from /dev/urandom) the worker receives on its
/// stdin before it loads the FMU and puts in front of every line: a line an FMU writes to the
/// protocol pipe (a forged `result`) lacks it and is not taken.
fn secret() -> String {
    let mut b = [0u8; 16];
    let ok = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b)).is_ok();
    if !ok {
        // Unpredictable enough for this purpose: the time and our address space layout.
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos();
        let addr = &b as *const _ as usize as u128;
        b.copy_from_slice(&(t ^ addr.rotate_left(64)).to_le_bytes());
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Evidence cut to [`EVIDENCE_LIMIT`].
pub(crate) fn cut_evidence(text: String) -> String {
    cut(text, EVIDENCE_LIMIT)
}

/// `text` cut to at most `limit` bytes (at a character boundary) with a note of the cut.
fn cut(mut text: String, limit: usize) -> String {
    if text.len() > limit {
        let total = text.len();
        let mut at = limit;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
        text.push_str(&format!("… [cut: {total} bytes in all]"));
    }
    text
}

/// What one worker run gave.
pub struct WorkerResult {
    /// The finding (a FAIL when the worker died or hung).
    pub outcome: Outcome,
    /// The worker did not answer within the timeout and was killed.
    pub hung: bool,
}

/// Starts the workers of one FMU's checks: the archive is extracted once and shared.
pub struct Supervisor {
    fmu: PathBuf,
    archive: Archive,
    /// How a worker starts: `program ARGS… check-worker …` (the `cosim` binary, or the Python
    /// package's interpreter with its extension module).
    command: crate::host::WorkerCommand,
    plan: String,
    timeout: Duration,
}

impl Supervisor {
    /// Extracts `fmu` and prepares workers running `plan`.
    pub fn new(fmu: &Path, plan: &Plan, opts: &super::Options) -> Result<Self> {
        let archive = Archive::extract_in(fmu, &opts.host)?;
        let command = match &opts.worker_exe {
            Some(p) => crate::host::WorkerCommand::exe(p),
            None => crate::fmu::isolated::worker_command(&opts.host)?,
        };
        let plan = serde_json::to_string(plan).map_err(|e| MasterError::Fmu {
            path: fmu.to_path_buf(),
            message: format!("cannot encode the check plan: {e}"),
        })?;
        Ok(Self { fmu: fmu.to_path_buf(), archive, command, plan, timeout: opts.timeout })
    }

    /// Runs check `id` in a new worker and waits for its result, at most the timeout.
    pub fn run(&mut self, id: &str) -> WorkerResult {
        use std::os::unix::process::CommandExt;
        // Its own working directory (inside the extraction, removed with it): files the FMU
        // writes do not land in the user's.
        let cwd = self.archive.dir().join(format!("cosim-check-cwd-{id}"));
        let _ = std::fs::create_dir_all(&cwd);
        let key = secret();
        let mut command = Command::new(&self.command.program);
        command
            .args(&self.command.args)
            .current_dir(&cwd)
            .arg("check-worker")
            .arg("--extracted")
            .arg(self.archive.dir())
            .arg("--check")
            .arg(id)
            .arg("--plan")
            .arg(&self.plan)
            .arg("--")
            .arg(&self.fmu)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = match command.spawn() {
            Ok(c) => c,
            Err(e) => {
                return WorkerResult {
                    outcome: Outcome::fail(format!(
                        "cannot start the worker process {}: {e}",
                        self.command.program.display()
                    )),
                    hung: false,
                }
            }
        };
        self.archive.host().track_group(child.id());
        if let Some(mut stdin) = child.stdin.take() {
            let _ = writeln!(stdin, "{key}");
        }
        let (lines, stdout_done) = spawn_reader(child.stdout.take(), usize::MAX);
        let (_, stderr_tail) = spawn_reader(child.stderr.take(), STDERR_TAIL);
        let mut found = Vec::new();
        let r = self.supervise(&mut child, &lines, &mut found, &key);
        // The whole group: the worker and anything the FMU forked.
        crate::host::kill_group(child.id());
        let _ = child.kill();
        let status = child.wait().ok();
        if REAPER.load(std::sync::atomic::Ordering::SeqCst) {
            // What the FMU forked and detached, adopted by us once its parent died.
            cosim_os::process::kill_adopted(&[], Duration::from_secs(2));
        }
        self.archive.host().untrack_group(child.id());
        let _ = std::fs::remove_dir_all(&cwd);
        let tail = stderr_tail.recv_timeout(Duration::from_millis(500)).unwrap_or_default();
        drop(stdout_done);
        let (last_call, result, hung, forged) = r;
        let outcome = match result {
            Some(o) => o,
            None => {
                let mut what = if hung {
                    format!("hung: no answer within {} s (worker killed)", fmt_secs(self.timeout.as_secs_f64()))
                } else {
                    status.map_or_else(|| "worker process died".to_owned(), crate::fmu::isolated::describe_exit)
                };
                if let Some(call) = last_call {
                    what += &format!(" in {call}");
                }
                if !found.is_empty() {
                    what += &format!("; before that: {}", found.join("; "));
                }
                if !tail.is_empty() {
                    what += &format!("; its last stderr lines: {}", tail.join(" | "));
                }
                if forged > 0 {
                    what += &format!(
                        "; {forged} line(s) without the worker's secret were written to its protocol pipe \
                         (by the FMU?) and ignored"
                    );
                }
                Outcome::fail(what)
            }
        };
        WorkerResult { outcome, hung: hung && !matches!(status, Some(s) if s.success()) }
    }

    /// Reads the worker's lines until its result, its end or the timeout: (last call, result, hung).
    fn supervise(
        &self,
        child: &mut Child,
        lines: &mpsc::Receiver<Vec<String>>,
        found: &mut Vec<String>,
        key: &str,
    ) -> (Option<String>, Option<Outcome>, bool, usize) {
        let deadline = Instant::now() + self.timeout;
        let mut last_call = None;
        let mut result = None;
        let mut exited_at: Option<Instant> = None;
        let mut forged = 0;
        loop {
            let now = Instant::now();
            if self.archive.host().stop_requested() {
                return (
                    last_call,
                    Some(Outcome::skip("interrupted (SIGINT/SIGTERM/SIGHUP): the worker was killed")),
                    false,
                    forged,
                );
            }
            if now >= deadline {
                let hung = result.is_none();
                return (last_call, result, hung, forged);
            }
            match lines.recv_timeout(Duration::from_millis(20).min(deadline - now)) {
                Ok(batch) => {
                    for line in batch {
                        let Some(line) = line.strip_prefix(key).and_then(|l| l.strip_prefix(' ')) else {
                            forged += usize::from(!line.is_empty());
                            continue;
                        };
                        if let Some(c) = line.strip_prefix("call ") {
                            last_call = Some(c.to_owned());
                        } else if let Some(f) = line.strip_prefix("found ") {
                            found.push(f.to_owned());
                        } else if let Some(j) = line.strip_prefix("result ") {
                            result = Some(serde_json::from_str(j).unwrap_or_else(|e| {
                                Outcome::fail(format!("the worker's result cannot be read ({e}): {j}"))
                            }));
                        }
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                // End of the pipe: the worker (and whatever it forked) is gone.
                Err(mpsc::RecvTimeoutError::Disconnected) => return (last_call, result, false, forged),
            }
            if result.is_some() {
                // The worker exits right after its result.
                if matches!(child.try_wait(), Ok(Some(_))) {
                    return (last_call, result, false, forged);
                }
                continue;
            }
            // The worker died but a process it forked holds the pipe: give the last lines a moment.
            if matches!(child.try_wait(), Ok(Some(_))) {
                let at = *exited_at.get_or_insert(now);
                if now.duration_since(at) > Duration::from_millis(200) {
                    return (last_call, result, false, forged);
                }
            }
        }
    }
}

/// `12`, `0.5`.
fn fmt_secs(s: f64) -> String {
    format!("{s}")
}

/// A thread reading lines from `r`: batches of lines on the first channel (when `keep` is
/// `usize::MAX`), or the last `keep` lines on the second at the end.
fn spawn_reader(
    r: Option<impl Read + Send + 'static>,
    keep: usize,
) -> (mpsc::Receiver<Vec<String>>, mpsc::Receiver<Vec<String>>) {
    let (tx, rx) = mpsc::channel();
    let (tail_tx, tail_rx) = mpsc::channel();
    if let Some(r) = r {
        std::thread::spawn(move || {
            let mut tail: std::collections::VecDeque<String> = std::collections::VecDeque::new();
            let mut reader = BufReader::new(r);
            let mut buf = Vec::new();
            loop {
                buf.clear();
                // At most LINE_LIMIT per line: a garbled stream cannot make the checker allocate
                // without bound; the rest of a longer line is skipped.
                match reader.by_ref().take(LINE_LIMIT as u64).read_until(b'\n', &mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                if buf.len() >= LINE_LIMIT && buf.last() != Some(&b'\n') {
                    let mut rest = Vec::new();
                    loop {
                        rest.clear();
                        match reader.by_ref().take(1 << 20).read_until(b'\n', &mut rest) {
                            Ok(0) | Err(_) => break,
                            Ok(_) if rest.last() == Some(&b'\n') => break,
                            Ok(_) => {}
                        }
                    }
                }
                let line = String::from_utf8_lossy(&buf).trim_end().to_owned();
                if keep == usize::MAX {
                    if tx.send(vec![line]).is_err() {
                        break;
                    }
                } else if !line.is_empty() {
                    let mut line = line;
                    if line.len() > 300 {
                        let mut cut = 300;
                        while !line.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        line.truncate(cut);
                        line.push('…');
                    }
                    tail.push_back(line);
                    if tail.len() > keep {
                        tail.pop_front();
                    }
                }
            }
            let _ = tail_tx.send(tail.into_iter().collect());
        });
    }
    (rx, tail_rx)
}

/// The worker: loads the FMU extracted at `extracted`, runs check `id` with `plan` (JSON) and
/// writes its result; exits the process (no destructors of the FMU's library run after the result).
pub fn serve(fmu: &Path, extracted: &Path, id: &str, plan: &str) -> std::io::Result<()> {
    crate::fmu::isolated::die_with_the_master();
    let (requests, mut out) = crate::fmu::ffi::take_stdio_for_protocol()?;
    // The secret, read before the FMU is loaded; stdin is /dev/null from here on.
    let mut key = String::new();
    BufReader::new(requests).take(256).read_line(&mut key)?;
    let key = key.trim().to_owned();
    let outcome = (|| {
        let check = find(id).ok_or_else(|| format!("no check {id}"))?;
        let Runner::Worker(f) = check.runner else { return Err(format!("check {id} does not run in a worker")) };
        let plan: Plan = serde_json::from_str(plan).map_err(|e| format!("bad plan: {e}"))?;
        let _ = writeln!(out, "{key} call loading the binary (dlopen, fmi2GetTypesPlatform, fmi2GetVersion)");
        let loaded = Fmu::load_extracted(fmu, extracted, Some(std::sync::Arc::new(crate::host::StderrLog::default())))
            .map_err(|e| e.to_string())?;
        let mut probe = Probe::new(loaded, plan, out.try_clone().ok()).with_key(&key);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(&mut probe)));
        // Unloading runs the library's destructors (FMU code): a crash there is named as such,
        // not blamed on the last FMI call (fmi2FreeInstance).
        let _ = writeln!(out, "{key} call unloading the binary (dlclose: the library's destructors)");
        drop(probe);
        r.map_err(|p| {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            format!("the check panicked: {msg}")
        })
    })()
    .unwrap_or_else(Outcome::fail);
    let outcome = Outcome { evidence: cut_evidence(outcome.evidence), ..outcome };
    let json = serde_json::to_string(&outcome).unwrap_or_else(|_| "{}".into());
    writeln!(out, "{key} result {json}")?;
    out.flush()?;
    std::process::exit(0)
}
