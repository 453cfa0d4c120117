//! The master side: [`IsolatedInstance`], one instance in a worker process.

use super::codec::{Dec, Enc, Reply, MAX_FRAME, TAG_CALL_ERROR, TAG_OK, TAG_OTHER_ERROR};
use super::command::WorkerCommand;
use super::frame::{framed, next_entry, push_entry, read_frame};
use super::request::{decode_results, encode_request, prefetchable};
use super::{DEFAULT_WORKER_TIMEOUT, WORKER_GRACE};
use crate::error::{MasterError, Result};
use crate::fmu::archive::Archive;
use crate::fmu::{shm, Call, FmuInstance, Op, Version};
use model_description::ModelDescription;
use std::io::BufReader;
use std::path::Path;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A batch of deferred setters is sent once it holds this many bytes, whatever comes next.
const BATCH_FLUSH: usize = 1 << 20;

/// One instance running in a worker process. Implements [`FmuInstance`]; errors name the instance as
/// [`crate::fmu::Instance`]'s do, plus [`MasterError::Worker`] when the process dies. Dropping it
/// closes the worker's stdin (the worker frees the instance and exits) and reaps the process,
/// killing it if it does not exit within a second.
pub struct IsolatedInstance {
    name: String,
    child: Child,
    /// The FMU as extracted by the master (removed after the last worker using it ended: this
    /// field drops after [`Drop::drop`] has reaped the worker).
    archive: Arc<Archive>,
    /// The handshake's pipe (the worker's stdout); every call after it goes through `channel`.
    responses: BufReader<ChildStdout>,
    channel: shm::Channel,
    /// The batch being built (deferred setters, then the call that needs an answer) and the op
    /// of each of its requests; then the response body (all reused: no allocation per call).
    out: Vec<u8>,
    pending: Vec<Op>,
    inb: Vec<u8>,
    /// How long one round trip may take before the worker is killed as hung.
    timeout: Duration,
    time: f64,
    busy: Duration,
    steps: u64,
    can_interpolate_inputs: bool,
    /// The FMU's version (the functions named in errors).
    version: Version,
    /// FMI 3.0: the type of each variable (read from the description the master reads).
    types: std::collections::HashMap<u32, crate::fmu::ValueType>,
    /// FMI 3.0: the `<Clock>` variables (clock connections join them).
    clocks: Vec<model_description::Clock3>,
    /// Set once the worker is gone: every later call fails with this message.
    dead: Option<String>,
    /// Prefetch (module docs): the getter requests made since the last `fmi2DoStep` before any
    /// other call (`seen`, while `learning`), those sent with the last `fmi2DoStep` (`learned`)
    /// and the worker's responses to them (`prefetched`), each as `[u32 length][bytes]`, with
    /// the read position in both; `request` holds the current getter's encoded request.
    seen: Vec<u8>,
    learning: bool,
    learned: Vec<u8>,
    prefetched: Vec<u8>,
    learned_at: usize,
    prefetched_at: usize,
    /// The number of requests of the batch in flight before the speculative getters.
    sent_main: usize,
    request: Vec<u8>,
    /// [`FmuInstance::overlap_steps`]: `fmi2DoStep` returns once sent.
    overlap: bool,
    /// A step sent and not waited for yet: (the send's outcome, when it was sent, t, h).
    in_flight: Option<InFlight>,
    /// The worker integrates a Model Exchange instance (it has solver statistics).
    model_exchange: bool,
}

/// A step sent by [`IsolatedInstance`] with overlap on: (sequence number or why sending failed,
/// when it was sent, t, h).
type InFlight = (std::result::Result<u32, String>, Instant, f64, f64);

impl std::fmt::Debug for IsolatedInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IsolatedInstance")
            .field("name", &self.name)
            .field("pid", &self.child.id())
            .field("time", &self.time)
            .finish_non_exhaustive()
    }
}

/// `worker process died (signal 6, SIGABRT)`, `… (exit code 3)`.
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = status.signal() {
        match cosim_os::signal::name(sig) {
            Some(name) => format!("worker process died (signal {sig}, {name})"),
            None => format!("worker process died (signal {sig})"),
        }
    } else {
        match status.code() {
            Some(0) => "worker process exited (exit code 0) without answering".to_owned(),
            Some(c) => format!("worker process died (exit code {c})"),
            None => "worker process died".to_owned(),
        }
    }
}

impl IsolatedInstance {
    /// Starts `exe worker -- FMU NAME` (see [`super::worker_exe`]), which loads the FMU at `fmu` and
    /// instantiates it as `name`. Returns the instance and the FMU's model description. Load and
    /// instantiation errors are [`MasterError::Fmu`] naming the file, as without isolation.
    /// `cpu`: the CPU the worker is pinned to ([`super::worker_cpus`]), or `None`.
    pub fn spawn(exe: &Path, fmu: &Path, name: &str, cpu: Option<usize>) -> Result<(Self, ModelDescription)> {
        Self::spawn_shared(&WorkerCommand::exe(exe), &Arc::new(Archive::extract(fmu)?), name, cpu)
    }

    /// [`IsolatedInstance::spawn`] on an FMU the master extracted already: every instance of one
    /// FMU shares one extraction (`cosim worker --extracted DIR -- FMU NAME`).
    pub fn spawn_shared(
        worker: &WorkerCommand,
        archive: &Arc<Archive>,
        name: &str,
        cpu: Option<usize>,
    ) -> Result<(Self, ModelDescription)> {
        use std::os::unix::process::CommandExt;
        let fmu = archive.source();
        let fmu_err = |message: String| MasterError::Fmu { path: fmu.to_path_buf(), message };
        let xml = archive.model_description()?;
        let md = model_description::from_str_any(&xml).map_err(|e| fmu_err(format!("modelDescription.xml: {e}")))?;
        let (types, clocks) = match model_description::from_str3(&xml) {
            Ok((md3, x)) => (
                md3.model_variables
                    .iter()
                    .zip(&x.types)
                    .map(|(v, t)| (v.value_reference, crate::fmu::ValueType::of3(*t)))
                    .chain(x.clocks.iter().map(|c| (c.vr, crate::fmu::ValueType::Clock)))
                    .collect(),
                x.clocks,
            ),
            Err(_) => (std::collections::HashMap::new(), Vec::new()),
        };
        drop(xml);
        let channel = shm::Channel::create(&archive.host().busy_workers)
            .map_err(|e| fmu_err(format!("cannot create the worker's shared memory: {e}")))?;
        let fd = channel.fd();
        let exe = &worker.program;
        let mut command = Command::new(exe);
        command
            .args(&worker.args)
            .arg("worker")
            .arg("--extracted")
            .arg(archive.dir())
            .arg("--shm-fd")
            .arg(fd.to_string())
            .arg("--fmu-log")
            .arg(archive.host().log_level().name())
            .args(super::command::model_exchange_args(archive.host()))
            .arg("--")
            .arg(fmu)
            .arg(name)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            // Its own process group: the terminal's SIGINT goes to the master only.
            .process_group(0);
        // SAFETY: the closure only calls fcntl and sched_setaffinity (async-signal-safe) in the
        // forked child.
        unsafe {
            command.pre_exec(move || {
                if let Some(cpu) = cpu {
                    super::cpus::pin_self(cpu);
                }
                shm::Channel::inherit_in_child(fd)
            })
        };
        let mut child =
            command.spawn().map_err(|e| fmu_err(format!("cannot start the worker process {}: {e}", exe.display())))?;
        archive.host().track_group(child.id());
        let Some(stdout) = child.stdout.take() else {
            let _ = child.kill();
            let _ = child.wait();
            archive.host().untrack_group(child.id());
            return Err(fmu_err("the worker process has no pipes".into()));
        };
        let mut instance = Self {
            name: name.to_owned(),
            child,
            archive: Arc::clone(archive),
            responses: BufReader::with_capacity(256, stdout),
            channel,
            out: Vec::with_capacity(256),
            pending: Vec::with_capacity(8),
            inb: Vec::with_capacity(256),
            timeout: DEFAULT_WORKER_TIMEOUT,
            time: 0.0,
            busy: Duration::ZERO,
            steps: 0,
            can_interpolate_inputs: false,
            version: if md.fmi_version.starts_with("3.") { Version::Fmi3 } else { Version::Fmi2 },
            types,
            clocks,
            dead: None,
            seen: Vec::with_capacity(64),
            learning: false,
            learned: Vec::with_capacity(64),
            prefetched: Vec::with_capacity(256),
            learned_at: 0,
            prefetched_at: 0,
            sent_main: 0,
            request: Vec::with_capacity(64),
            overlap: false,
            in_flight: None,
            model_exchange: crate::host::Interface::used(
                archive.host().interface,
                md.co_simulation.is_some(),
                md.model_exchange.is_some(),
            ) == Some(crate::host::Interface::ModelExchange),
        };
        match instance.wait_readable() {
            Wait::Ready => {}
            Wait::Dead(how) => return Err(fmu_err(format!("instance \"{name}\": {how} while loading the FMU"))),
            Wait::Interrupted => return Err(MasterError::Interrupted { time: 0.0 }),
            Wait::Garbled(e) => return Err(fmu_err(format!("instance \"{name}\": {e} while loading the FMU"))),
        }
        let got = read_frame(&mut instance.responses, &mut instance.inb);
        if !matches!(got, Ok(true)) {
            let how = instance.reap();
            return Err(fmu_err(format!("instance \"{name}\": {how} while loading the FMU")));
        }
        let mut d = Dec(&instance.inb);
        let parsed = match d.u8() {
            Ok(TAG_OK) => Ok(Ok(())),
            Ok(TAG_OTHER_ERROR) => d.str().map(Err),
            Ok(t) => Err(format!("unknown handshake tag {t}")),
            Err(e) => Err(e),
        };
        match parsed {
            Ok(Ok(())) => {}
            // The worker's message names the FMU already; fmu_err names it once more.
            Ok(Err(message)) => {
                let prefix = format!("{}: ", fmu.display());
                return Err(fmu_err(message.strip_prefix(&prefix).unwrap_or(&message).to_owned()));
            }
            Err(e) => return Err(fmu_err(format!("instance \"{name}\": worker protocol error: {e}"))),
        }
        // A Model Exchange instance takes input derivatives (its integrator extrapolates them), as in
        // process ([`crate::fmu::MeInstance`]).
        instance.can_interpolate_inputs =
            instance.model_exchange || md.co_simulation.as_ref().is_some_and(|cs| cs.can_interpolate_inputs);
        Ok((instance, md))
    }

    /// Waits until the worker's handshake can be read, watching the worker process and the
    /// stop request of the host ([`crate::host::Host`], from the FMU's archive) every 100 ms: a worker that ended while
    /// its pipe stays open (a process it forked holds it) is dead; after SIGINT/SIGTERM a call
    /// that does not return within [`WORKER_GRACE`] gets the worker killed. Either way its
    /// process group is killed.
    fn wait_readable(&mut self) -> Wait {
        if !self.responses.buffer().is_empty() {
            return Wait::Ready;
        }
        let mut interrupted: Option<Instant> = None;
        loop {
            let readable = cosim_os::fd::wait_readable(self.responses.get_ref(), Duration::from_millis(100));
            if !matches!(readable, Ok(false)) {
                // Readable, closed or an error: reading tells which.
                return Wait::Ready;
            }
            if let Some(end) = self.watch(&mut interrupted) {
                return end;
            }
        }
    }

    /// The checks of every 100 ms of waiting: a worker that ended is dead (its group killed);
    /// after SIGINT/SIGTERM (first seen at `interrupted`) a call that does not return within
    /// [`WORKER_GRACE`] gets the worker killed.
    fn watch(&mut self, interrupted: &mut Option<Instant>) -> Option<Wait> {
        if let Ok(Some(status)) = self.child.try_wait() {
            crate::host::kill_group(self.child.id());
            return Some(Wait::Dead(describe_exit(status)));
        }
        if self.archive.host().stop_requested()
            && interrupted.get_or_insert_with(Instant::now).elapsed() >= WORKER_GRACE
        {
            crate::host::kill_group(self.child.id());
            let _ = self.child.wait();
            return Some(Wait::Interrupted);
        }
        None
    }

    /// FMI 3.0: the FMU's `<Clock>` variables.
    pub fn clocks(&self) -> &[model_description::Clock3] {
        &self.clocks
    }

    /// The worker's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// How long one call may take before the worker is killed as hung (default
    /// [`DEFAULT_WORKER_TIMEOUT`]).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Waits for the response to request `seq` in `self.inb`, watching the worker process
    /// every 100 ms (dead: reported, its group killed), the interrupt flag (after
    /// [`WORKER_GRACE`] the worker is killed) and the timeout (hung: killed).
    fn wait_response(&mut self, seq: u32) -> Wait {
        let start = Instant::now();
        let mut interrupted: Option<Instant> = None;
        loop {
            match self.channel.wait_response(seq, Duration::from_millis(100), &mut self.inb) {
                Ok(true) => return Wait::Ready,
                Ok(false) => {}
                Err(e) => return Wait::Garbled(e.to_string()),
            }
            if let Some(end) = self.watch(&mut interrupted) {
                return end;
            }
            if start.elapsed() >= self.timeout {
                crate::host::kill_group(self.child.id());
                let _ = self.child.wait();
                return Wait::Dead(format!(
                    "worker process did not answer within {} s (worker_timeout) and was killed",
                    self.timeout.as_secs_f64()
                ));
            }
        }
    }

    /// Waits for the worker to end (it is dying: its pipe closed or broke) and says how it ended;
    /// kills it if it is still alive after 5 s.
    fn reap(&mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    // Whatever it forked goes with it.
                    crate::host::kill_group(self.child.id());
                    return describe_exit(status);
                }
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(2)),
                Ok(None) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return "worker process closed its pipe and was killed".to_owned();
                }
                Err(e) => return format!("worker process lost: {e}"),
            }
        }
    }

    fn worker_error(&self, function: &'static str, message: String) -> MasterError {
        MasterError::Worker { instance: self.name.clone(), function, time: self.time, message }
    }

    /// Appends `call` to the batch.
    fn push(&mut self, call: &Call<'_>) {
        framed(&mut self.out, |out| encode_request(call, &mut Enc(out)));
        self.pending.push(call.op());
    }

    /// Sends the batch in `self.out` and reads the response into `self.inb`; returns the
    /// response body after the OK tag, or the error the worker reported (naming the call of the
    /// batch it concerns).
    fn round_trip(&mut self) -> Result<Dec<'_>> {
        let last = self.pending.last().map_or(Op::DoStep, |op| *op).function(self.version);
        if let Some(m) = &self.dead {
            let e = self.worker_error(last, m.clone());
            self.clear_batch();
            return Err(e);
        }
        let t0 = Instant::now();
        let sent = self.channel.send_request(&self.out).map_err(|e| e.to_string());
        self.receive(sent, t0)
    }

    /// The second half of [`Self::round_trip`]: waits for the answer to the batch sent at `t0`.
    fn receive(&mut self, sent: std::result::Result<u32, String>, t0: Instant) -> Result<Dec<'_>> {
        let last = self.pending.last().map_or(Op::DoStep, |op| *op).function(self.version);
        let waited = match sent {
            Ok(seq) => self.wait_response(seq),
            Err(e) => Wait::Garbled(e),
        };
        self.busy += t0.elapsed();
        // The call a dying worker was in (it records each before starting it).
        let in_flight = |s: &Self| {
            let i = s.channel.progress() as usize;
            match s.pending.get(i) {
                Some(op) => op.function(s.version),
                // A speculative getter after the step.
                None if i >= s.sent_main => {
                    let mut at = 0;
                    let entry = (s.sent_main..=i).map(|_| next_entry(&s.learned, &mut at)).last().flatten();
                    entry
                        .and_then(|r| s.learned.get(r.start))
                        .and_then(|c| Op::from_code(*c))
                        .map_or(last, |op| op.function(s.version))
                }
                None => last,
            }
        };
        let outcome = match waited {
            Wait::Ready => None,
            Wait::Dead(how) => {
                self.dead = Some(how.clone());
                Some(self.worker_error(in_flight(self), how))
            }
            Wait::Interrupted => {
                self.dead = Some("worker process killed after SIGINT/SIGTERM/SIGHUP".into());
                Some(MasterError::Interrupted { time: self.time })
            }
            Wait::Garbled(e) if self.out.len() > MAX_FRAME => Some(self.worker_error(last, e)),
            Wait::Garbled(e) => Some(self.garbled(last, e)),
        };
        if let Some(e) = outcome {
            self.clear_batch();
            return Err(e);
        }
        let reply = {
            let mut d = Dec(&self.inb);
            let index = d.u32().map(|i| i as usize);
            let reply = match d.u8() {
                Ok(TAG_OK) => Reply::Ok,
                Ok(TAG_CALL_ERROR) => match (|| Ok::<_, String>((d.f64()?, d.str()?, d.str()?)))() {
                    Ok((time, status, last_log)) => Reply::Call { time, status, last_log },
                    Err(e) => Reply::Garbled(e),
                },
                Ok(TAG_OTHER_ERROR) => d.str().map_or_else(Reply::Garbled, Reply::Other),
                Ok(t) => Reply::Garbled(format!("unknown response tag {t}")),
                Err(e) => Reply::Garbled(e),
            };
            match index {
                Ok(i) if i < self.pending.len() && (i + 1 == self.pending.len() || !matches!(reply, Reply::Ok)) => {
                    (self.pending[i].function(self.version), reply)
                }
                Ok(i) => (last, Reply::Garbled(format!("response to request {i} of {}", self.pending.len()))),
                Err(e) => (last, Reply::Garbled(e)),
            }
        };
        self.clear_batch();
        match reply {
            (_, Reply::Ok) => Ok(Dec(self.inb.get(5..).unwrap_or_default())),
            (function, Reply::Call { time, status, last_log }) => {
                Err(MasterError::Call { instance: self.name.clone(), function, time, status, last_log })
            }
            (function, Reply::Other(m)) => Err(self.worker_error(function, m)),
            (function, Reply::Garbled(e)) => Err(self.garbled(function, e)),
        }
    }

    /// Waits for the step in flight, if any (overlap on); `Err` is its error.
    fn complete_step(&mut self) -> Result<()> {
        let Some((sent, t0, t, h)) = self.in_flight.take() else { return Ok(()) };
        match self.receive(sent, t0) {
            Ok(_) => {}
            // The termination protocol of `FmuInstance::do_step`, for a step that returned early.
            Err(e) if e.is_discard() => return Err(self.discarded(e, t, h)),
            Err(e) => return Err(e),
        }
        self.stepped(t, h);
        Ok(())
    }

    /// After a successful step: the time, and the speculative getters' responses that follow
    /// the (result-less) step's response.
    fn stepped(&mut self, t: f64, h: f64) {
        self.time = t + h;
        self.prefetched.clear();
        self.prefetched.extend_from_slice(self.inb.get(5..).unwrap_or_default());
        self.learning = true;
    }

    fn clear_batch(&mut self) {
        self.out.clear();
        self.pending.clear();
        self.sent_main = 0;
    }

    /// The range in `prefetched` of the results of the getter in `request`, when it is the next
    /// learned one and its prefetch succeeded; otherwise drops the prefetch.
    fn take_prefetched(&mut self) -> Option<std::ops::Range<usize>> {
        let learned = next_entry(&self.learned, &mut self.learned_at);
        let response = next_entry(&self.prefetched, &mut self.prefetched_at);
        match (learned, response) {
            (Some(l), Some(r))
                if self.learned[l.clone()] == self.request[..] && self.prefetched.get(r.start) == Some(&TAG_OK) =>
            {
                Some(r.start + 1..r.end)
            }
            _ => {
                self.drop_prefetched();
                None
            }
        }
    }

    fn drop_prefetched(&mut self) {
        self.prefetched.clear();
        self.prefetched_at = 0;
        self.learned_at = 0;
    }

    /// A response that does not decode: the worker cannot be trusted any more; it is killed.
    fn garbled(&mut self, function: &'static str, what: String) -> MasterError {
        let _ = self.child.kill();
        let message = format!("worker protocol error: {what}");
        self.dead = Some(message.clone());
        self.worker_error(function, message)
    }
}

impl Drop for IsolatedInstance {
    fn drop(&mut self) {
        // Closing the channel ends the worker's loop: it frees the instance and exits.
        self.channel.close();
        let deadline = Instant::now() + Duration::from_secs(1);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
                Ok(None) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
            }
        }
        // Whatever the worker forked goes with it; then the shared extraction may be removed.
        crate::host::kill_group(self.child.id());
        self.archive.host().untrack_group(self.child.id());
    }
}

/// How waiting for a worker's answer ended.
enum Wait {
    /// The answer (or the end of the pipe) can be read.
    Ready,
    /// The worker process ended (how) while its pipe stayed open.
    Dead(String),
    /// SIGINT/SIGTERM, and the call did not return within [`WORKER_GRACE`]: the worker was
    /// killed.
    Interrupted,
    /// The request could not be sent or the response not read (why).
    Garbled(String),
}

impl FmuInstance for IsolatedInstance {
    fn name(&self) -> &str {
        &self.name
    }

    fn execute(&mut self, mut call: Call<'_>) -> Result<()> {
        let (op, version) = (call.op(), self.version);
        // Named only where an error needs it.
        let function = move || op.function(version);
        self.complete_step()?;
        match call {
            Call::Setup { start, .. } => self.time = start,
            Call::DoStep { t, .. } => {
                self.time = t;
                self.steps += 1;
            }
            _ => {}
        }
        if let Some(m) = &self.dead {
            let e = self.worker_error(function(), m.clone());
            self.clear_batch();
            return Err(e);
        }
        if prefetchable(call.op()) {
            self.request.clear();
            encode_request(&call, &mut Enc(&mut self.request));
            if self.learning {
                push_entry(&mut self.seen, &self.request);
            }
            if let Some(results) = self.take_prefetched() {
                let r = decode_results(&mut call, &mut Dec(&self.prefetched[results]));
                return r.map_err(|e| self.garbled(function(), e));
            }
        } else {
            self.learning = false;
            self.drop_prefetched();
        }
        self.push(&call);
        let speculate = matches!(call, Call::DoStep { .. });
        if speculate {
            // The getters after the last step go with this one.
            std::mem::swap(&mut self.learned, &mut self.seen);
            self.seen.clear();
            self.sent_main = self.pending.len();
            if !self.learned.is_empty() {
                self.out.extend_from_slice(&0u32.to_le_bytes());
                self.out.extend_from_slice(&self.learned);
            }
        }
        let deferred = matches!(
            call,
            Call::SetFloat64 { .. }
                | Call::SetInt64 { .. }
                | Call::SetUInt64 { .. }
                | Call::SetBoolean { .. }
                | Call::SetString { .. }
                | Call::SetBinary { .. }
                | Call::SetInputDerivatives { .. }
        );
        if deferred && self.out.len() < BATCH_FLUSH {
            return Ok(());
        }
        if let (Call::DoStep { t, h }, true, None) = (&call, self.overlap, &self.dead) {
            // Sent; waited for by `finish_step` or the next call.
            let t0 = Instant::now();
            let sent = self.channel.send_request(&self.out).map_err(|e| e.to_string());
            self.in_flight = Some((sent, t0, *t, *h));
            return Ok(());
        }
        let r = decode_results(&mut call, &mut self.round_trip()?);
        r.map_err(|e| self.garbled(function(), e))?;
        if let Call::DoStep { t, h } = call {
            self.stepped(t, h);
        }
        Ok(())
    }

    fn overlap_steps(&mut self, on: bool) {
        self.overlap = on;
    }

    fn finish_step(&mut self) -> Result<()> {
        self.complete_step()
    }

    fn can_interpolate_inputs(&self) -> bool {
        self.can_interpolate_inputs
    }

    fn version(&self) -> Version {
        self.version
    }

    fn value_type(&self, vr: u32) -> Option<crate::fmu::ValueType> {
        self.types.get(&vr).copied()
    }

    /// Round-trip time of every call (worker time plus the pipes) and the `fmi2DoStep` count.
    fn call_stats(&self) -> (f64, u64) {
        (self.busy.as_secs_f64(), self.steps)
    }

    /// The worker's ME instance answers each counter as a status of its own kind
    /// ([`crate::fmu::me::SOLVER_STATS_KIND`]); `None` for Co-Simulation or a dead worker.
    fn solver_stats(&mut self) -> Option<crate::fmu::me::MeStats> {
        use crate::fmu::me::{MeStats, SOLVER_STATS_KIND};
        if !self.model_exchange || self.dead.is_some() {
            return None;
        }
        let mut counters = [0u64; MeStats::COUNTERS];
        for (i, c) in counters.iter_mut().enumerate() {
            let mut v = 0.0;
            let kind = SOLVER_STATS_KIND + i as i32;
            self.execute(Call::GetRealStatus { kind, out: &mut v }).ok()?;
            *c = v as u64;
        }
        Some(MeStats::from_counters(counters))
    }
}
