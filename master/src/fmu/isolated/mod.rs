//! Instances out of process (`cosim run --isolate`): [`IsolatedSlave`] implements [`Slave`] by
//! forwarding every call to a worker process (`cosim worker -- FMU INSTANCE`, see [`serve`]) that
//! loads the FMU and owns the one instance. A vendor FMU that crashes (abort, segfault, stack
//! overflow…) then kills its worker, not the master: the call in flight fails with
//! [`MasterError::Worker`] naming the instance, the function, the time and how the process died,
//! and the run stops with everything up to that point on disk.
//!
//! # Protocol
//! The worker reports once over its stdout pipe (the handshake, a frame `[u32 length][body]`,
//! little-endian as everything here): `0` when the FMU is loaded and instantiated, or
//! `2, message` when it cannot be (the master reads the model description from the extraction
//! it shares with the worker). Every call after that goes through shared memory ([`shm`]): the
//! master writes a *batch* and the worker answers it once. A batch is the setters made since the
//! last round trip (`fmi2Set*` return no values, so they wait for the next call) followed by
//! the call that needs an answer, each as `[u32 length][request]`.
//!
//! *Getters after a step are prefetched*: the master remembers the getters it made after the
//! last `fmi2DoStep` (before any other call) and sends them with the next `fmi2DoStep`, after a
//! zero length that marks them as speculative. When the step succeeded the worker executes
//! them on the instance as it is after the step and appends each one's response
//! (`[u32 length][response]`, stopping at a failing one). A getter that then asks exactly the
//! same (op, value references, count) before any other call takes its values from there; any
//! other call drops what is left. Getters have no effect on the instance, so results are the
//! same bit for bit; a communication step costs one round trip per instance (inputs,
//! `fmi2DoStep` and outputs) once the pattern is known.
//!
//! - request: a [`Call`]: its op code (`u8`, [`Op`]'s discriminant) then its arguments
//!   ([`encode_request`]). A getter sends its value references and the number of values it
//!   wants.
//! - response: `u32 index` of the request it answers (the last, or the first that failed: the
//!   ones after it are not executed), then `0` and the results of a getter
//!   ([`encode_results`]), or `1, time: f64, status, last_log` for an [`MasterError::Call`], or
//!   `2, message` for any other error. An error of a deferred setter is reported by the call
//!   that sent it, naming the setter.
//!
//! Every [`Call`] goes to the worker, `SaveState`/`RestoreState` included: the worker's
//! instance keeps the saved `fmi2FMUstate` (iterative coupling works isolated).
//!
//! Scalars are `u8`/`u32`/`i32`/`f64`; a slice is `u32 count` then the elements (booleans as
//! `u8`); a string is `u32 length` then UTF-8 bytes. Closing the channel ([`shm::Channel::close`])
//! ends the worker (it frees the instance and exits 0). The worker points its descriptors 0 and
//! 1 at `/dev/null` and stderr before loading the FMU, so nothing the FMU prints can corrupt
//! the handshake.
//!
//! # Processes and files
//! The master extracts each FMU once ([`Archive`], shared by the workers of all its instances
//! through `cosim worker --extracted DIR`) and removes the folder after the last of them ended:
//! a worker that dies leaves no files. Each worker runs in its own process group, so the
//! terminal's Ctrl-C (sent to the foreground group) and `timeout`'s signal reach only the master,
//! which decides: it stops at the next communication point, and kills a worker whose call does
//! not return within [`WORKER_GRACE`] (the run's status is then `interrupted`). Waiting for an
//! answer watches the worker process every 100 ms: a worker that died is reported (with the call
//! it died in, which it records in the shared header before each call) and its process group
//! killed; one that does not answer within its timeout ([`DEFAULT_WORKER_TIMEOUT`],
//! `[simulation] worker_timeout`) is killed and reported as hung.

use super::archive::Archive;
use super::ffi;
use super::instance::Fmu2;
use super::shm;
use super::{Call, Op, Slave};
use crate::error::{MasterError, Result};
use model_description::ModelDescription;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a worker's call may go on after SIGINT/SIGTERM before the master kills the worker
/// (shorter than `cosim`'s signal guard's grace, so the run ends in order).
pub const WORKER_GRACE: Duration = Duration::from_millis(500);

/// How long a worker may take to answer one call before the master kills it as hung (default
/// of `[simulation] worker_timeout`).
pub const DEFAULT_WORKER_TIMEOUT: Duration = Duration::from_secs(60);

/// A batch of deferred setters is sent once it holds this many bytes, whatever comes next.
const BATCH_FLUSH: usize = 1 << 20;

/// Environment variable naming the executable that serves `worker` (default: the running
/// executable, which is right for `cosim`; a program embedding the master library sets it to
/// the `cosim` binary).
pub const WORKER_EXE_ENV: &str = "COSIM_WORKER_EXE";

/// Largest frame accepted (a garbled length must not make either side allocate gigabytes):
/// the shared buffers' size. The model description does not cross (the master reads it from the
/// extraction), so this bounds only the values of one batch.
const MAX_FRAME: usize = shm::CAPACITY;

const TAG_OK: u8 = 0;
const TAG_CALL_ERROR: u8 = 1;
const TAG_OTHER_ERROR: u8 = 2;

/// A decoded response header.
enum Reply {
    Ok,
    Call { time: f64, status: String, last_log: String },
    Other(String),
    Garbled(String),
}

// ---------------------------------------------------------------------------------------------
// Encoding

/// Appends protocol values to a frame body.
struct Enc<'a>(&'a mut Vec<u8>);

impl Enc<'_> {
    fn u8(&mut self, x: u8) -> &mut Self {
        self.0.push(x);
        self
    }
    fn u32(&mut self, x: u32) -> &mut Self {
        self.0.extend_from_slice(&x.to_le_bytes());
        self
    }
    fn i32(&mut self, x: i32) -> &mut Self {
        self.0.extend_from_slice(&x.to_le_bytes());
        self
    }
    fn f64(&mut self, x: f64) -> &mut Self {
        self.0.extend_from_slice(&x.to_le_bytes());
        self
    }
    fn len(&mut self, n: usize) -> &mut Self {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX))
    }
    fn str(&mut self, s: &str) -> &mut Self {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    fn u32s(&mut self, v: &[u32]) -> &mut Self {
        self.len(v.len());
        v.iter().for_each(|x| self.0.extend_from_slice(&x.to_le_bytes()));
        self
    }
    fn i32s(&mut self, v: &[i32]) -> &mut Self {
        self.len(v.len());
        v.iter().for_each(|x| self.0.extend_from_slice(&x.to_le_bytes()));
        self
    }
    fn f64s(&mut self, v: &[f64]) -> &mut Self {
        self.len(v.len());
        v.iter().for_each(|x| self.0.extend_from_slice(&x.to_le_bytes()));
        self
    }
    fn bools(&mut self, v: &[bool]) -> &mut Self {
        self.len(v.len());
        self.0.extend(v.iter().map(|b| u8::from(*b)));
        self
    }
    fn strs<S: AsRef<str>>(&mut self, v: &[S]) -> &mut Self {
        self.len(v.len());
        for s in v {
            self.str(s.as_ref());
        }
        self
    }
}

/// Reads protocol values from a frame body; every error is a protocol error message.
struct Dec<'a>(&'a [u8]);

type DecResult<T> = std::result::Result<T, String>;

impl<'a> Dec<'a> {
    fn take(&mut self, n: usize) -> DecResult<&'a [u8]> {
        if self.0.len() < n {
            return Err(format!("message truncated: {n} bytes wanted, {} left", self.0.len()));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    fn array<const N: usize>(&mut self) -> DecResult<[u8; N]> {
        let mut a = [0; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u8(&mut self) -> DecResult<u8> {
        Ok(self.array::<1>()?[0])
    }
    fn u32(&mut self) -> DecResult<u32> {
        self.array().map(u32::from_le_bytes)
    }
    fn i32(&mut self) -> DecResult<i32> {
        self.array().map(i32::from_le_bytes)
    }
    fn f64(&mut self) -> DecResult<f64> {
        self.array().map(f64::from_le_bytes)
    }
    /// A count of elements of `size` bytes each, checked against the bytes left.
    fn count(&mut self, size: usize) -> DecResult<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(size) > self.0.len() {
            return Err(format!("count {n} exceeds the message"));
        }
        Ok(n)
    }
    fn str(&mut self) -> DecResult<String> {
        let n = self.count(1)?;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| "string is not UTF-8".to_owned())
    }
    fn u32s(&mut self, out: &mut Vec<u32>) -> DecResult<()> {
        let n = self.count(4)?;
        out.clear();
        for _ in 0..n {
            out.push(self.u32()?);
        }
        Ok(())
    }
    fn i32s(&mut self, out: &mut Vec<i32>) -> DecResult<()> {
        let n = self.count(4)?;
        out.clear();
        for _ in 0..n {
            out.push(self.i32()?);
        }
        Ok(())
    }
    fn f64s(&mut self, out: &mut Vec<f64>) -> DecResult<()> {
        let n = self.count(8)?;
        out.clear();
        for _ in 0..n {
            out.push(self.f64()?);
        }
        Ok(())
    }
    fn bools(&mut self, out: &mut Vec<bool>) -> DecResult<()> {
        let n = self.count(1)?;
        out.clear();
        for _ in 0..n {
            out.push(self.u8()? != 0);
        }
        Ok(())
    }
    fn strs(&mut self) -> DecResult<Vec<String>> {
        let n = self.count(4)?;
        (0..n).map(|_| self.str()).collect()
    }
    /// Fills `out` exactly (a response must have as many values as asked for).
    fn f64s_into(&mut self, out: &mut [f64]) -> DecResult<()> {
        let n = self.count(8)?;
        if n != out.len() {
            return Err(format!("{n} values returned for {} requested", out.len()));
        }
        out.iter_mut().try_for_each(|o| self.f64().map(|x| *o = x))
    }
    fn i32s_into(&mut self, out: &mut [i32]) -> DecResult<()> {
        let n = self.count(4)?;
        if n != out.len() {
            return Err(format!("{n} values returned for {} requested", out.len()));
        }
        out.iter_mut().try_for_each(|o| self.i32().map(|x| *o = x))
    }
    fn bools_into(&mut self, out: &mut [bool]) -> DecResult<()> {
        let n = self.count(1)?;
        if n != out.len() {
            return Err(format!("{n} values returned for {} requested", out.len()));
        }
        out.iter_mut().try_for_each(|o| self.u8().map(|x| *o = x != 0))
    }
}

// ---------------------------------------------------------------------------------------------
// Calls on the wire: the one encoding of a [`Call`], used by both sides

/// Appends `call`'s request: op code, then the arguments (a getter: its value references and
/// the number of values wanted).
fn encode_request(call: &Call<'_>, e: &mut Enc<'_>) {
    e.u8(call.op() as u8);
    match call {
        Call::Setup { start, stop } => {
            e.f64(*start).u8(u8::from(stop.is_some())).f64(stop.unwrap_or(0.0));
        }
        Call::GetReal { vr, out } => {
            e.u32s(vr).len(out.len());
        }
        Call::GetInteger { vr, out } => {
            e.u32s(vr).len(out.len());
        }
        Call::GetBoolean { vr, out } => {
            e.u32s(vr).len(out.len());
        }
        Call::GetString { vr, .. } => {
            e.u32s(vr);
        }
        Call::SetReal { vr, values } => {
            e.u32s(vr).f64s(values);
        }
        Call::SetInteger { vr, values } => {
            e.u32s(vr).i32s(values);
        }
        Call::SetBoolean { vr, values } => {
            e.u32s(vr).bools(values);
        }
        Call::SetString { vr, values } => {
            e.u32s(vr).strs(values);
        }
        Call::SetInputDerivatives { vr, order, values } => {
            e.u32s(vr).i32(*order).f64s(values);
        }
        Call::DoStep { t, h } => {
            e.f64(*t).f64(*h);
        }
        Call::GetBooleanStatus { kind, .. } | Call::GetRealStatus { kind, .. } => {
            e.i32(*kind);
        }
        Call::EnterInitialization
        | Call::ExitInitialization
        | Call::Terminate
        | Call::SaveState
        | Call::RestoreState => {}
    }
}

/// Reusable argument and result buffers of the worker loop.
#[derive(Default)]
struct Buffers {
    vrs: Vec<u32>,
    reals: Vec<f64>,
    ints: Vec<i32>,
    bools: Vec<bool>,
    strings: Vec<String>,
    flag: bool,
    real: f64,
}

/// Decodes a request written by [`encode_request`] into a [`Call`] whose arrays live in `b`,
/// and passes it to `f`. The whole request must be consumed.
fn decode_request<R>(req: &[u8], b: &mut Buffers, f: impl FnOnce(Call<'_>) -> R) -> DecResult<R> {
    let mut d = Dec(req);
    let code = d.u8()?;
    let op = Op::from_code(code).ok_or_else(|| format!("unknown request {code}"))?;
    /// The number of values a getter wants, each `size` bytes in the response.
    fn wanted(d: &mut Dec<'_>, size: usize) -> DecResult<usize> {
        let n = d.u32()? as usize;
        if n.saturating_mul(size) > MAX_FRAME {
            return Err(format!("{n} values requested"));
        }
        Ok(n)
    }
    let refs: Vec<&str>;
    let call = match op {
        Op::Setup => {
            let (start, has_stop, stop) = (d.f64()?, d.u8()?, d.f64()?);
            Call::Setup { start, stop: (has_stop != 0).then_some(stop) }
        }
        Op::EnterInitialization => Call::EnterInitialization,
        Op::ExitInitialization => Call::ExitInitialization,
        Op::GetReal => {
            d.u32s(&mut b.vrs)?;
            let n = wanted(&mut d, 8)?;
            b.reals.clear();
            b.reals.resize(n, 0.0);
            Call::GetReal { vr: &b.vrs, out: &mut b.reals }
        }
        Op::SetReal => {
            d.u32s(&mut b.vrs)?;
            d.f64s(&mut b.reals)?;
            Call::SetReal { vr: &b.vrs, values: &b.reals }
        }
        Op::GetInteger => {
            d.u32s(&mut b.vrs)?;
            let n = wanted(&mut d, 4)?;
            b.ints.clear();
            b.ints.resize(n, 0);
            Call::GetInteger { vr: &b.vrs, out: &mut b.ints }
        }
        Op::SetInteger => {
            d.u32s(&mut b.vrs)?;
            d.i32s(&mut b.ints)?;
            Call::SetInteger { vr: &b.vrs, values: &b.ints }
        }
        Op::GetBoolean => {
            d.u32s(&mut b.vrs)?;
            let n = wanted(&mut d, 1)?;
            b.bools.clear();
            b.bools.resize(n, false);
            Call::GetBoolean { vr: &b.vrs, out: &mut b.bools }
        }
        Op::SetBoolean => {
            d.u32s(&mut b.vrs)?;
            d.bools(&mut b.bools)?;
            Call::SetBoolean { vr: &b.vrs, values: &b.bools }
        }
        Op::GetString => {
            d.u32s(&mut b.vrs)?;
            b.strings.clear();
            Call::GetString { vr: &b.vrs, out: &mut b.strings }
        }
        Op::SetString => {
            d.u32s(&mut b.vrs)?;
            b.strings = d.strs()?;
            refs = b.strings.iter().map(String::as_str).collect();
            Call::SetString { vr: &b.vrs, values: &refs }
        }
        Op::SetInputDerivatives => {
            d.u32s(&mut b.vrs)?;
            let order = d.i32()?;
            d.f64s(&mut b.reals)?;
            Call::SetInputDerivatives { vr: &b.vrs, order, values: &b.reals }
        }
        Op::DoStep => {
            let (t, h) = (d.f64()?, d.f64()?);
            Call::DoStep { t, h }
        }
        Op::Terminate => Call::Terminate,
        Op::SaveState => Call::SaveState,
        Op::RestoreState => Call::RestoreState,
        Op::GetBooleanStatus => Call::GetBooleanStatus { kind: d.i32()?, out: &mut b.flag },
        Op::GetRealStatus => Call::GetRealStatus { kind: d.i32()?, out: &mut b.real },
    };
    if !d.0.is_empty() {
        return Err(format!("{} bytes left after request {}", d.0.len(), op.function()));
    }
    Ok(f(call))
}

/// Appends the results of an executed `call` (a getter's values) to an OK response.
fn encode_results(call: &Call<'_>, e: &mut Enc<'_>) {
    match call {
        Call::GetReal { out, .. } => {
            e.f64s(out);
        }
        Call::GetInteger { out, .. } => {
            e.i32s(out);
        }
        Call::GetBoolean { out, .. } => {
            e.bools(out);
        }
        Call::GetString { out, .. } => {
            e.strs(out);
        }
        Call::GetBooleanStatus { out, .. } => {
            e.u8(u8::from(**out));
        }
        Call::GetRealStatus { out, .. } => {
            e.f64(**out);
        }
        Call::Setup { .. }
        | Call::EnterInitialization
        | Call::ExitInitialization
        | Call::SetReal { .. }
        | Call::SetInteger { .. }
        | Call::SetBoolean { .. }
        | Call::SetString { .. }
        | Call::SetInputDerivatives { .. }
        | Call::DoStep { .. }
        | Call::Terminate
        | Call::SaveState
        | Call::RestoreState => {}
    }
}

/// Reads the results written by [`encode_results`] into `call`'s outputs (exactly as many
/// values as asked for).
fn decode_results(call: &mut Call<'_>, d: &mut Dec<'_>) -> DecResult<()> {
    match call {
        Call::GetReal { out, .. } => d.f64s_into(out),
        Call::GetInteger { out, .. } => d.i32s_into(out),
        Call::GetBoolean { out, .. } => d.bools_into(out),
        Call::GetString { out, .. } => {
            **out = d.strs()?;
            Ok(())
        }
        Call::GetBooleanStatus { out, .. } => {
            **out = d.u8()? != 0;
            Ok(())
        }
        Call::GetRealStatus { out, .. } => {
            **out = d.f64()?;
            Ok(())
        }
        Call::Setup { .. }
        | Call::EnterInitialization
        | Call::ExitInitialization
        | Call::SetReal { .. }
        | Call::SetInteger { .. }
        | Call::SetBoolean { .. }
        | Call::SetString { .. }
        | Call::SetInputDerivatives { .. }
        | Call::DoStep { .. }
        | Call::Terminate
        | Call::SaveState
        | Call::RestoreState => Ok(()),
    }
}

/// Writes one frame and flushes.
fn write_frame(w: &mut impl Write, body: &[u8]) -> std::io::Result<()> {
    let n = u32::try_from(body.len()).map_err(|_| std::io::Error::other("message too large"))?;
    w.write_all(&n.to_le_bytes())?;
    w.write_all(body)?;
    w.flush()
}

/// Reads one frame into `buf`; `Ok(false)` on a clean end of stream before a frame.
fn read_frame(r: &mut impl Read, buf: &mut Vec<u8>) -> std::io::Result<bool> {
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut len[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let n = u32::from_le_bytes(len) as usize;
    if n > MAX_FRAME {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a message of {n} bytes, more than the protocol's limit of {MAX_FRAME} bytes"),
        ));
    }
    buf.clear();
    buf.resize(n, 0);
    r.read_exact(buf)?;
    Ok(true)
}

// ---------------------------------------------------------------------------------------------
// Master side

/// One instance running in a worker process. Implements [`Slave`]; errors name the instance as
/// [`super::Fmu2Slave`]'s do, plus [`MasterError::Worker`] when the process dies. Dropping it
/// closes the worker's stdin (the worker frees the instance and exits) and reaps the process,
/// killing it if it does not exit within a second.
pub struct IsolatedSlave {
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
    /// [`Slave::overlap_steps`]: `fmi2DoStep` returns once sent.
    overlap: bool,
    /// A step sent and not waited for yet: (the send's outcome, when it was sent, t, h).
    in_flight: Option<InFlight>,
}

/// A step sent by [`IsolatedSlave`] with overlap on: (sequence number or why sending failed,
/// when it was sent, t, h).
type InFlight = (std::result::Result<u32, String>, Instant, f64, f64);

/// The next `[u32 length][bytes]` entry of `buf` at `*at`: its bytes' range; advances `*at`.
fn next_entry(buf: &[u8], at: &mut usize) -> Option<std::ops::Range<usize>> {
    let len = buf.get(*at..*at + 4)?;
    let n = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
    let range = *at + 4..*at + 4 + n;
    if range.end > buf.len() {
        return None;
    }
    *at = range.end;
    Some(range)
}

/// Appends `bytes` to `buf` as a `[u32 length][bytes]` entry.
fn push_entry(buf: &mut Vec<u8>, bytes: &[u8]) {
    framed(buf, |b| b.extend_from_slice(bytes));
}

/// Appends a `[u32 length][bytes]` entry to `buf` whose bytes `write` appends; returns what
/// `write` returns.
fn framed<R>(buf: &mut Vec<u8>, write: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    let at = buf.len();
    buf.extend_from_slice(&[0; 4]);
    let r = write(buf);
    let len = (buf.len() - at - 4) as u32;
    buf[at..at + 4].copy_from_slice(&len.to_le_bytes());
    r
}

/// Getters whose requests are learned and prefetched after a step.
fn prefetchable(op: Op) -> bool {
    matches!(op, Op::GetReal | Op::GetInteger | Op::GetBoolean)
}

impl std::fmt::Debug for IsolatedSlave {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IsolatedSlave")
            .field("name", &self.name)
            .field("pid", &self.child.id())
            .field("time", &self.time)
            .finish_non_exhaustive()
    }
}

/// How to start a worker: `program ARGS… worker --extracted DIR --shm-fd N -- FMU NAME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerCommand {
    /// An absolute path (a worker is never looked up in `$PATH` or the working directory).
    pub program: PathBuf,
    /// Arguments before `worker` (e.g. an interpreter's `-c CODE`).
    pub args: Vec<std::ffi::OsString>,
}

impl WorkerCommand {
    /// An executable that serves `worker` itself (the `cosim` binary).
    pub fn exe(program: &Path) -> Self {
        Self { program: program.to_path_buf(), args: Vec::new() }
    }
}

static WORKER: std::sync::Mutex<Option<WorkerCommand>> = std::sync::Mutex::new(None);

/// Declares how this program starts workers: the `cosim` binary registers itself, the Python
/// package its interpreter with the extension module. A program that registers nothing must
/// set `$COSIM_WORKER_EXE` to run isolated instances (the running executable is not assumed
/// to serve `worker`: an interpreter would run a script named `worker` from the working
/// directory).
pub fn set_worker_command(command: WorkerCommand) {
    *WORKER.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(command);
}

/// How workers are started: `$COSIM_WORKER_EXE` (an absolute path to a `cosim` binary), else
/// what the program registered ([`set_worker_command`]), else an error saying so.
pub fn worker_command() -> Result<WorkerCommand> {
    let err = |message: String| MasterError::Isolation { message };
    if let Some(p) = std::env::var_os(WORKER_EXE_ENV) {
        let p = PathBuf::from(p);
        if !p.is_absolute() {
            return Err(err(format!(
                "${WORKER_EXE_ENV} = {:?} is not an absolute path; name the cosim binary by its absolute path",
                p.display().to_string()
            )));
        }
        return Ok(WorkerCommand::exe(&p));
    }
    if let Some(c) = WORKER.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone() {
        return Ok(c);
    }
    let exe = std::env::current_exe().map_or_else(|_| "this program".to_owned(), |p| p.display().to_string());
    Err(err(format!(
        "isolated instances run in `cosim worker` processes, and {exe} does not serve them; \
         set ${WORKER_EXE_ENV} to the absolute path of the cosim binary"
    )))
}

/// The executable that serves `worker` ([`worker_command`]'s program; its arguments ignored).
pub fn worker_exe() -> Result<PathBuf> {
    worker_command().map(|c| c.program)
}

/// `worker --extracted DIR --shm-fd N -- FMU NAME` (what [`IsolatedSlave::spawn_shared`]
/// passes) for a front end without `cosim`'s command line: parses and [`serve`]s.
pub fn serve_args(args: &[String]) -> std::io::Result<()> {
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("worker arguments: {m}"));
    let mut it = args.iter().map(String::as_str).skip_while(|a| *a != "worker").skip(1);
    let (mut extracted, mut fd) = (None, None);
    loop {
        match it.next() {
            Some("--extracted") => extracted = Some(PathBuf::from(it.next().ok_or_else(|| bad("no DIR"))?)),
            Some("--shm-fd") => fd = Some(it.next().and_then(|n| n.parse().ok()).ok_or_else(|| bad("no FD"))?),
            Some("--") => break,
            other => return Err(bad(&format!("unexpected {other:?}"))),
        }
    }
    let fmu = PathBuf::from(it.next().ok_or_else(|| bad("no FMU"))?);
    let name = it.next().ok_or_else(|| bad("no instance name"))?;
    serve(&fmu, extracted.as_deref(), name, fd.ok_or_else(|| bad("no --shm-fd"))?)
}

/// `worker process died (signal 6, SIGABRT)`, `… (exit code 3)`.
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(sig) = status.signal() {
        let name = match sig {
            4 => ", SIGILL",
            6 => ", SIGABRT",
            7 => ", SIGBUS",
            8 => ", SIGFPE",
            9 => ", SIGKILL",
            11 => ", SIGSEGV",
            15 => ", SIGTERM",
            _ => "",
        };
        format!("worker process died (signal {sig}{name})")
    } else {
        match status.code() {
            Some(0) => "worker process exited (exit code 0) without answering".to_owned(),
            Some(c) => format!("worker process died (exit code {c})"),
            None => "worker process died".to_owned(),
        }
    }
}

impl IsolatedSlave {
    /// Starts `exe worker -- FMU NAME` (see [`worker_exe`]), which loads the FMU at `fmu` and
    /// instantiates it as `name`. Returns the slave and the FMU's model description. Load and
    /// instantiation errors are [`MasterError::Fmu`] naming the file, as without isolation.
    pub fn spawn(exe: &Path, fmu: &Path, name: &str) -> Result<(Self, ModelDescription)> {
        Self::spawn_shared(&WorkerCommand::exe(exe), &Arc::new(Archive::extract(fmu)?), name)
    }

    /// [`IsolatedSlave::spawn`] on an FMU the master extracted already: every instance of one
    /// FMU shares one extraction (`cosim worker --extracted DIR -- FMU NAME`).
    pub fn spawn_shared(
        worker: &WorkerCommand,
        archive: &Arc<Archive>,
        name: &str,
    ) -> Result<(Self, ModelDescription)> {
        use std::os::unix::process::CommandExt;
        let fmu = archive.source();
        let fmu_err = |message: String| MasterError::Fmu { path: fmu.to_path_buf(), message };
        let xml = archive.model_description()?;
        let md = model_description::from_str_any(&xml).map_err(|e| fmu_err(format!("modelDescription.xml: {e}")))?;
        drop(xml);
        let channel =
            shm::Channel::create().map_err(|e| fmu_err(format!("cannot create the worker's shared memory: {e}")))?;
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
            .arg("--")
            .arg(fmu)
            .arg(name)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            // Its own process group: the terminal's SIGINT goes to the master only.
            .process_group(0);
        // SAFETY: the closure only calls fcntl (async-signal-safe) in the forked child.
        unsafe { command.pre_exec(move || shm::Channel::inherit_in_child(fd)) };
        let mut child =
            command.spawn().map_err(|e| fmu_err(format!("cannot start the worker process {}: {e}", exe.display())))?;
        archive.host().track_group(child.id());
        let Some(stdout) = child.stdout.take() else {
            let _ = child.kill();
            let _ = child.wait();
            archive.host().untrack_group(child.id());
            return Err(fmu_err("the worker process has no pipes".into()));
        };
        let mut slave = Self {
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
        };
        match slave.wait_readable() {
            Wait::Ready => {}
            Wait::Dead(how) => return Err(fmu_err(format!("instance \"{name}\": {how} while loading the FMU"))),
            Wait::Interrupted => return Err(MasterError::Interrupted { time: 0.0 }),
            Wait::Garbled(e) => return Err(fmu_err(format!("instance \"{name}\": {e} while loading the FMU"))),
        }
        let got = read_frame(&mut slave.responses, &mut slave.inb);
        if !matches!(got, Ok(true)) {
            let how = slave.reap();
            return Err(fmu_err(format!("instance \"{name}\": {how} while loading the FMU")));
        }
        let mut d = Dec(&slave.inb);
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
        slave.can_interpolate_inputs = md.co_simulation.as_ref().is_some_and(|cs| cs.can_interpolate_inputs);
        Ok((slave, md))
    }

    /// Waits until the worker's handshake can be read, watching the worker process and the
    /// stop request of the host ([`crate::host::Host`], from the FMU's archive) every 100 ms: a worker that ended while
    /// its pipe stays open (a process it forked holds it) is dead; after SIGINT/SIGTERM a call
    /// that does not return within [`WORKER_GRACE`] gets the worker killed. Either way its
    /// process group is killed.
    fn wait_readable(&mut self) -> Wait {
        use std::os::fd::AsRawFd;
        #[repr(C)]
        struct PollFd {
            fd: i32,
            events: i16,
            revents: i16,
        }
        unsafe extern "C" {
            fn poll(fds: *mut PollFd, n: u64, timeout_ms: i32) -> i32;
        }
        const POLLIN: i16 = 1;
        if !self.responses.buffer().is_empty() {
            return Wait::Ready;
        }
        let fd = self.responses.get_ref().as_raw_fd();
        let mut interrupted: Option<Instant> = None;
        loop {
            let mut p = PollFd { fd, events: POLLIN, revents: 0 };
            // SAFETY: one valid pollfd for the duration of the call.
            let r = unsafe { poll(&mut p, 1, 100) };
            if r > 0 || (r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted) {
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
        let last = self.pending.last().map_or("fmi2DoStep", |op| op.function());
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
        let last = self.pending.last().map_or("fmi2DoStep", |op| op.function());
        let waited = match sent {
            Ok(seq) => self.wait_response(seq),
            Err(e) => Wait::Garbled(e),
        };
        self.busy += t0.elapsed();
        // The call a dying worker was in (it records each before starting it).
        let in_flight = |s: &Self| {
            let i = s.channel.progress() as usize;
            match s.pending.get(i) {
                Some(op) => op.function(),
                // A speculative getter after the step.
                None if i >= s.sent_main => {
                    let mut at = 0;
                    let entry = (s.sent_main..=i).map(|_| next_entry(&s.learned, &mut at)).last().flatten();
                    entry
                        .and_then(|r| s.learned.get(r.start))
                        .and_then(|c| Op::from_code(*c))
                        .map_or(last, |op| op.function())
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
                self.dead = Some("worker process killed after SIGINT/SIGTERM".into());
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
                    (self.pending[i].function(), reply)
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
            // The termination protocol of `Slave::do_step`, for a step that returned early.
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

impl Drop for IsolatedSlave {
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

impl Slave for IsolatedSlave {
    fn name(&self) -> &str {
        &self.name
    }

    fn execute(&mut self, mut call: Call<'_>) -> Result<()> {
        let function = call.op().function();
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
            let e = self.worker_error(function, m.clone());
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
                return r.map_err(|e| self.garbled(function, e));
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
            Call::SetReal { .. }
                | Call::SetInteger { .. }
                | Call::SetBoolean { .. }
                | Call::SetString { .. }
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
        r.map_err(|e| self.garbled(function, e))?;
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

    /// Round-trip time of every call (worker time plus the pipes) and the `fmi2DoStep` count.
    fn call_stats(&self) -> (f64, u64) {
        (self.busy.as_secs_f64(), self.steps)
    }
}

// ---------------------------------------------------------------------------------------------
// Worker side

/// The worker gets SIGKILL when the master dies, however it dies (`PR_SET_PDEATHSIG`): a worker
/// blocked in an FMU call would otherwise outlive a master ended by SIGKILL. (Linux ties this to
/// the master's thread that started the worker: a program that starts isolated instances on a
/// thread that ends before the run does loses its workers with that thread.)
pub(crate) fn die_with_the_master() {
    unsafe extern "C" {
        fn prctl(option: i32, arg2: u64, arg3: u64, arg4: u64, arg5: u64) -> i32;
        fn getppid() -> i32;
    }
    const PR_SET_PDEATHSIG: i32 = 1;
    const SIGKILL: u64 = 9;
    // SAFETY: prctl(PR_SET_PDEATHSIG) and getppid only change or read this process's attributes.
    unsafe {
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        // The master died before the prctl: nobody is left to serve.
        if getppid() == 1 {
            std::process::exit(1);
        }
    }
}

/// Encodes a slave error as a response (after the response's first `start` bytes).
fn encode_error(out: &mut Vec<u8>, start: usize, e: &MasterError) {
    out.truncate(start);
    match e {
        MasterError::Call { time, status, last_log, .. } => {
            Enc(out).u8(TAG_CALL_ERROR).f64(*time).str(status).str(last_log);
        }
        other => {
            Enc(out).u8(TAG_OTHER_ERROR).str(&other.to_string());
        }
    }
}

/// Executes one request on `slave` (the worker's in-process instance); its response is appended
/// to `out`. `Ok(false)` when the call failed (the response is the error); `Err` is a protocol
/// error.
fn execute(slave: &mut dyn Slave, req: &[u8], b: &mut Buffers, out: &mut Vec<u8>) -> DecResult<bool> {
    let start = out.len();
    out.push(TAG_OK);
    let result = decode_request(req, b, |mut call| {
        let r = slave.execute(call.reborrow());
        if r.is_ok() {
            encode_results(&call, &mut Enc(out));
        }
        r
    })?;
    match result {
        Ok(()) => Ok(true),
        Err(e) => {
            encode_error(out, start, &e);
            Ok(false)
        }
    }
}

/// Executes a batch (`[u32 length][request]`…) in order until a call fails; the response in
/// `out` is the index of the last request executed, then its response. `progress` is told the
/// index of each request before it runs.
fn execute_batch(
    slave: &mut dyn Slave,
    batch: &[u8],
    b: &mut Buffers,
    out: &mut Vec<u8>,
    mut progress: impl FnMut(u32),
) -> DecResult<()> {
    let mut d = Dec(batch);
    let mut index = 0u32;
    loop {
        let n = d.count(1)?;
        if n == 0 {
            if index == 0 {
                return Err("a batch without a call".into());
            }
            return speculate(slave, d, index, b, out, progress);
        }
        let req = d.take(n)?;
        progress(index);
        out.clear();
        out.extend_from_slice(&index.to_le_bytes());
        if !execute(slave, req, b, out)? || d.0.is_empty() {
            return Ok(());
        }
        index += 1;
    }
}

/// The speculative getters after a batch's calls all succeeded (module docs): each one's
/// response is appended to `out` as `[u32 length][response]`, until one fails.
fn speculate(
    slave: &mut dyn Slave,
    mut d: Dec<'_>,
    mut index: u32,
    b: &mut Buffers,
    out: &mut Vec<u8>,
    mut progress: impl FnMut(u32),
) -> DecResult<()> {
    while !d.0.is_empty() {
        let n = d.count(1)?;
        let req = d.take(n)?;
        if !req.first().and_then(|c| Op::from_code(*c)).is_some_and(prefetchable) {
            return Err("a speculative request that is not a getter".into());
        }
        progress(index);
        index += 1;
        if !framed(out, |out| execute(slave, req, b, out))? {
            break;
        }
    }
    Ok(())
}

/// The worker process (`cosim worker --shm-fd N -- FMU INSTANCE`): maps the master's shared
/// memory, loads the FMU, instantiates it, sends the handshake over stdout and serves batches
/// until the master closes the channel. Returns when the master is gone; `Err` only for I/O or
/// protocol errors (the master reports those as the death of the worker).
pub fn serve(fmu: &Path, extracted: Option<&Path>, name: &str, shm_fd: i32) -> std::io::Result<()> {
    die_with_the_master();
    let channel = shm::Channel::open(shm_fd)?;
    let (_stdin, responses) = ffi::take_stdio_for_protocol()?;
    let mut output: BufWriter<File> = BufWriter::with_capacity(256, responses);
    let mut out = Vec::with_capacity(256);
    let fmu2 = match extracted {
        Some(dir) => Fmu2::load_extracted(fmu, dir),
        None => Fmu2::load(fmu),
    };
    let loaded = fmu2.and_then(|f| f.instantiate(name));
    let mut slave = match loaded {
        Ok(slave) => {
            Enc(&mut out).u8(TAG_OK);
            write_frame(&mut output, &out)?;
            slave
        }
        Err(e) => {
            let message = match e {
                MasterError::Fmu { message, .. } => message,
                other => other.to_string(),
            };
            Enc(&mut out).u8(TAG_OTHER_ERROR).str(&message);
            return write_frame(&mut output, &out);
        }
    };
    drop(output);
    let mut req = Vec::with_capacity(256);
    let mut buffers = Buffers::default();
    let mut last = 0;
    // The master's death also ends the worker through PR_SET_PDEATHSIG; this is the fallback.
    let master_alive = || {
        unsafe extern "C" {
            fn getppid() -> i32;
        }
        // SAFETY: getppid has no preconditions.
        unsafe { getppid() != 1 }
    };
    while let Some(seq) = channel.wait_request(last, &mut req, master_alive)? {
        last = seq;
        execute_batch(&mut slave, &req, &mut buffers, &mut out, |i| channel.set_progress(i))
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        channel.send_response(seq, &out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn values_round_trip_through_the_encoding() {
        let mut buf = Vec::new();
        Enc(&mut buf)
            .u8(7)
            .u32s(&[1, 2, 3])
            .f64s(&[1.5, f64::NAN, -0.0])
            .i32(-4)
            .bools(&[true, false])
            .strs(&["a", "ß", ""]);
        let mut d = Dec(&buf);
        assert_eq!(d.u8(), Ok(7));
        let (mut v, mut f, mut b) = (Vec::new(), Vec::new(), Vec::new());
        d.u32s(&mut v).unwrap();
        d.f64s(&mut f).unwrap();
        assert_eq!(v, [1, 2, 3]);
        assert_eq!(f[0], 1.5);
        assert!(f[1].is_nan() && f[2].is_sign_negative());
        assert_eq!(d.i32(), Ok(-4));
        d.bools(&mut b).unwrap();
        assert_eq!(b, [true, false]);
        assert_eq!(d.strs().unwrap(), ["a", "ß", ""]);
        assert!(d.u8().is_err(), "nothing left");
    }

    /// A worker-side instance that answers getters with values derived from the references and
    /// remembers every call it executed (as `Debug` text).
    #[derive(Default)]
    struct Echo {
        seen: Vec<String>,
        saved: bool,
    }

    impl Slave for Echo {
        fn name(&self) -> &str {
            "echo"
        }
        fn execute(&mut self, call: Call<'_>) -> Result<()> {
            self.seen.push(format!("{call:?}"));
            match call {
                Call::GetReal { vr, out } => out.iter_mut().zip(vr).for_each(|(o, v)| *o = f64::from(*v) * 0.5),
                Call::GetInteger { vr, out } => out.iter_mut().zip(vr).for_each(|(o, v)| *o = -(*v as i32)),
                Call::GetBoolean { vr, out } => out.iter_mut().zip(vr).for_each(|(o, v)| *o = v % 2 == 1),
                Call::GetString { vr, out } => *out = vr.iter().map(|v| format!("s{v}")).collect(),
                Call::SaveState => self.saved = true,
                Call::GetBooleanStatus { kind, out } => *out = kind == 3,
                Call::GetRealStatus { kind, out } => *out = f64::from(kind) + 0.25,
                Call::RestoreState if !self.saved => {
                    return Err(MasterError::Call {
                        instance: "echo".into(),
                        function: "fmi2SetFMUstate",
                        time: 1.5,
                        status: "fmi2Error".into(),
                        last_log: "no state".into(),
                    })
                }
                _ => {}
            }
            Ok(())
        }
        fn can_interpolate_inputs(&self) -> bool {
            false
        }
    }

    /// `call` as the client sends it, decoded and executed by the worker on `slave`, the response
    /// decoded back into `call`: the path of every isolated call without the pipes.
    fn over_the_wire(slave: &mut Echo, mut call: Call<'_>) -> std::result::Result<(), String> {
        let (mut req, mut resp, mut b) = (Vec::new(), Vec::new(), Buffers::default());
        encode_request(&call, &mut Enc(&mut req));
        let sent = format!("{call:?}");
        execute(slave, &req, &mut b, &mut resp)?;
        assert_eq!(slave.seen.last().unwrap(), &sent, "the worker executes the call sent");
        let mut d = Dec(&resp);
        match d.u8()? {
            TAG_OK => {
                decode_results(&mut call, &mut d)?;
                assert!(d.0.is_empty(), "response fully read");
                Ok(())
            }
            TAG_CALL_ERROR => Err(format!("call error at t = {}: {}: {}", d.f64()?, d.str()?, d.str()?)),
            t => Err(format!("tag {t}")),
        }
    }

    #[test]
    fn every_call_round_trips_through_the_isolated_encoding() {
        let mut slave = Echo::default();
        let vr = [3, 1, 4];
        let (mut reals, mut ints, mut bools, mut strings) = ([0.0; 3], [0; 3], [false; 3], Vec::new());
        let calls = [
            Call::Setup { start: 0.25, stop: Some(2.0) },
            Call::Setup { start: -1.0, stop: None },
            Call::EnterInitialization,
            Call::ExitInitialization,
            Call::SetReal { vr: &vr, values: &[1.5, f64::NAN, -0.0] },
            Call::SetInteger { vr: &vr, values: &[7, -8, i32::MIN] },
            Call::SetBoolean { vr: &vr, values: &[true, false, true] },
            Call::SetString { vr: &vr, values: &["a", "ß", ""] },
            Call::SetInputDerivatives { vr: &vr, order: 2, values: &[0.5, 1e300, -3.0] },
            Call::DoStep { t: 0.125, h: 1e-3 },
            Call::SaveState,
            Call::RestoreState,
            Call::Terminate,
        ];
        let mut ops: Vec<Op> = calls.iter().map(Call::op).collect();
        for call in calls {
            over_the_wire(&mut slave, call).unwrap();
        }
        // Getters: the worker's values arrive in the caller's slices.
        over_the_wire(&mut slave, Call::GetReal { vr: &vr, out: &mut reals }).unwrap();
        over_the_wire(&mut slave, Call::GetInteger { vr: &vr, out: &mut ints }).unwrap();
        over_the_wire(&mut slave, Call::GetBoolean { vr: &vr, out: &mut bools }).unwrap();
        over_the_wire(&mut slave, Call::GetString { vr: &vr, out: &mut strings }).unwrap();
        let (mut flag, mut real) = (false, 0.0);
        over_the_wire(&mut slave, Call::GetBooleanStatus { kind: 3, out: &mut flag }).unwrap();
        over_the_wire(&mut slave, Call::GetRealStatus { kind: 2, out: &mut real }).unwrap();
        assert!(flag);
        assert_eq!(real, 2.25);
        ops.extend([
            Op::GetReal,
            Op::GetInteger,
            Op::GetBoolean,
            Op::GetString,
            Op::GetBooleanStatus,
            Op::GetRealStatus,
        ]);
        assert_eq!((reals, ints, bools), ([1.5, 0.5, 2.0], [-3, -1, -4], [true, true, false]));
        assert_eq!(strings, ["s3", "s1", "s4"]);
        for op in Op::ALL {
            assert!(ops.contains(op), "{op:?} is tested");
        }
        assert!(slave.seen[1].contains("stop: None") && slave.seen[0].contains("stop: Some(2.0)"));
        // An FMU error of a state call comes back as the same MasterError::Call fields.
        let mut fresh = Echo::default();
        let e = over_the_wire(&mut fresh, Call::RestoreState).unwrap_err();
        assert_eq!(e, "call error at t = 1.5: fmi2Error: no state");
        // A getter whose slice and references differ in length still reaches the instance (which
        // reports the mismatch); the client takes exactly as many values as it asked for.
        let mut two = [0.0; 2];
        over_the_wire(&mut slave, Call::GetReal { vr: &vr, out: &mut two }).unwrap();
        assert_eq!(two, [1.5, 0.5]);
    }

    /// A batch runs in order until a call fails; the response names that call's index and the
    /// calls after it are not executed.
    #[test]
    fn a_batch_stops_at_the_first_failing_call() {
        fn batch(calls: &[Call<'_>]) -> Vec<u8> {
            let mut out = Vec::new();
            for c in calls {
                let mut req = Vec::new();
                encode_request(c, &mut Enc(&mut req));
                Enc(&mut out).u32(req.len() as u32);
                out.extend_from_slice(&req);
            }
            out
        }
        let (mut b, mut out) = (Buffers::default(), Vec::new());
        let mut slave = Echo::default();
        let mut seen = Vec::new();
        let mut reals = [0.0; 2];
        let ok = batch(&[
            Call::SetReal { vr: &[1], values: &[2.0] },
            Call::DoStep { t: 0.0, h: 0.1 },
            Call::GetReal { vr: &[4, 6], out: &mut reals },
        ]);
        execute_batch(&mut slave, &ok, &mut b, &mut out, |i| seen.push(i)).unwrap();
        assert_eq!(seen, [0, 1, 2]);
        let mut d = Dec(&out);
        assert_eq!((d.u32(), d.u8()), (Ok(2), Ok(TAG_OK)));
        let mut got = Vec::new();
        d.f64s(&mut got).unwrap();
        assert_eq!(got, [2.0, 3.0], "the last call's results");
        // RestoreState fails on a fresh instance: index 1, the step after it never runs.
        let mut fresh = Echo::default();
        let failing =
            batch(&[Call::SetReal { vr: &[1], values: &[2.0] }, Call::RestoreState, Call::DoStep { t: 0.0, h: 0.1 }]);
        execute_batch(&mut fresh, &failing, &mut b, &mut out, |_| {}).unwrap();
        let mut d = Dec(&out);
        assert_eq!((d.u32(), d.u8()), (Ok(1), Ok(TAG_CALL_ERROR)));
        assert_eq!(fresh.seen.len(), 2, "{:?}", fresh.seen);
        // A length beyond the batch is a protocol error.
        let mut cut = ok.clone();
        cut.truncate(ok.len() - 1);
        assert!(execute_batch(&mut Echo::default(), &cut, &mut b, &mut out, |_| {}).is_err());
    }

    /// Speculative getters after a zero length run only when the calls before them succeeded;
    /// each one's response follows the last call's, length-prefixed.
    #[test]
    fn speculative_getters_follow_a_successful_batch() {
        fn request(c: &Call<'_>) -> Vec<u8> {
            let mut req = Vec::new();
            encode_request(c, &mut Enc(&mut req));
            req
        }
        let (mut reals, mut ints) = ([0.0; 2], [0; 1]);
        let spec = [
            request(&Call::GetReal { vr: &[4, 6], out: &mut reals }),
            request(&Call::GetInteger { vr: &[3], out: &mut ints }),
        ];
        let batch = |main: &[Call<'_>]| {
            let mut out = Vec::new();
            for c in main {
                push_entry(&mut out, &request(c));
            }
            out.extend_from_slice(&0u32.to_le_bytes());
            for r in &spec {
                push_entry(&mut out, r);
            }
            out
        };
        let (mut b, mut out, mut seen) = (Buffers::default(), Vec::new(), Vec::new());
        let mut slave = Echo::default();
        let ok = batch(&[Call::SetReal { vr: &[1], values: &[2.0] }, Call::DoStep { t: 0.0, h: 0.1 }]);
        execute_batch(&mut slave, &ok, &mut b, &mut out, |i| seen.push(i)).unwrap();
        assert_eq!(seen, [0, 1, 2, 3], "the speculative getters are numbered after the calls");
        assert_eq!(&out[..5], &[1, 0, 0, 0, TAG_OK], "the step's response comes first");
        let mut at = 5;
        let first = next_entry(&out, &mut at).unwrap();
        let second = next_entry(&out, &mut at).unwrap();
        assert_eq!(at, out.len());
        let mut d = Dec(&out[first]);
        assert_eq!(d.u8(), Ok(TAG_OK));
        let mut got = Vec::new();
        d.f64s(&mut got).unwrap();
        assert_eq!(got, [2.0, 3.0]);
        let mut d = Dec(&out[second]);
        assert_eq!(d.u8(), Ok(TAG_OK));
        let mut got = Vec::new();
        d.i32s(&mut got).unwrap();
        assert_eq!(got, [-3]);
        // A failing call: no speculation.
        let mut fresh = Echo::default();
        let failing = batch(&[Call::RestoreState]);
        execute_batch(&mut fresh, &failing, &mut b, &mut out, |_| {}).unwrap();
        let mut d = Dec(&out);
        assert_eq!((d.u32(), d.u8()), (Ok(0), Ok(TAG_CALL_ERROR)));
        assert_eq!((d.f64(), d.str(), d.str()), (Ok(1.5), Ok("fmi2Error".into()), Ok("no state".into())));
        assert!(d.0.is_empty(), "nothing after the error");
        assert_eq!(fresh.seen.len(), 1);
        // Only getters may be speculative; a batch cannot start with the marker.
        let mut bad = ok.clone();
        push_entry(&mut bad, &request(&Call::Terminate));
        assert!(execute_batch(&mut Echo::default(), &bad, &mut b, &mut out, |_| {}).is_err());
        assert!(execute_batch(&mut Echo::default(), &0u32.to_le_bytes(), &mut b, &mut out, |_| {}).is_err());
    }

    #[test]
    fn garbled_requests_are_protocol_errors() {
        let (mut b, mut out, mut slave) = (Buffers::default(), Vec::new(), Echo::default());
        assert!(execute(&mut slave, &[0], &mut b, &mut out).unwrap_err().contains("unknown request 0"));
        assert!(execute(&mut slave, &[Op::ALL.len() as u8 + 1], &mut b, &mut out).is_err());
        let mut req = Vec::new();
        encode_request(&Call::DoStep { t: 0.0, h: 1.0 }, &mut Enc(&mut req));
        req.push(0);
        assert!(execute(&mut slave, &req, &mut b, &mut out)
            .unwrap_err()
            .contains("1 bytes left after request fmi2DoStep"));
        req.truncate(req.len() - 2);
        assert!(execute(&mut slave, &req, &mut b, &mut out).unwrap_err().contains("truncated"));
        let mut req = Vec::new();
        Enc(&mut req).u8(Op::GetReal as u8).u32s(&[1]).u32(u32::MAX);
        assert!(execute(&mut slave, &req, &mut b, &mut out).unwrap_err().contains("values requested"));
        assert!(slave.seen.is_empty(), "nothing garbled was executed");
    }

    #[test]
    fn garbled_counts_and_frames_are_refused_without_allocating() {
        let mut buf = Vec::new();
        Enc(&mut buf).u32(u32::MAX);
        let mut v = Vec::new();
        assert!(Dec(&buf).f64s(&mut v).unwrap_err().contains("exceeds"));
        let mut out = [0.0; 2];
        let mut buf = Vec::new();
        Enc(&mut buf).f64s(&[1.0]);
        assert!(Dec(&buf).f64s_into(&mut out).unwrap_err().contains("1 values returned for 2"));
        let mut frame: &[u8] = &[0xff, 0xff, 0xff, 0x7f, 0];
        assert!(read_frame(&mut frame, &mut Vec::new()).is_err());
        let mut empty: &[u8] = &[];
        assert!(!read_frame(&mut empty, &mut Vec::new()).unwrap(), "clean end of stream");
        let mut cut: &[u8] = &[4, 0, 0, 0, 1];
        assert!(read_frame(&mut cut, &mut Vec::new()).is_err(), "truncated body");
    }

    #[test]
    fn exit_statuses_are_described() {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(describe_exit(ExitStatus::from_raw(6)), "worker process died (signal 6, SIGABRT)");
        assert_eq!(describe_exit(ExitStatus::from_raw(3 << 8)), "worker process died (exit code 3)");
        assert!(describe_exit(ExitStatus::from_raw(0)).contains("without answering"));
    }
}
