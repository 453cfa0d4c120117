//! The replay floor of `cosim bench`: every FMU call a master run makes is recorded (arguments
//! and order), then replayed on fresh instances in a bare loop. The replay's wall time is the
//! time inside FMU calls that any master must spend for this run — the FMUs do exactly the
//! same work, since they receive the same calls with the same values — so the master's
//! overhead is its wall time minus the replay's, without clock reads around every call.

use master::error::Result;
use master::fmu::{Call, Op};
use master::FmuInstance;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A range of the log's flat argument arrays.
type Span = (u32, u32);

/// One recorded [`Call`]: its operation and scalar arguments; its arrays live in the log's flat
/// buffers (read in order by the replay, so the replay streams through memory instead of
/// chasing one heap block per call). Made by [`Log::record`], turned back into the [`Call`] by
/// [`replay`].
#[derive(Debug, Clone, Copy)]
struct Entry {
    instance: u32,
    op: Op,
    /// Value references (getters: how many values too).
    vr: Span,
    /// Values in the array of their type (`reals`, `ints`, `bools`, `strings`).
    values: Span,
    /// `start`/`stop` of Setup, `t`/`h` of DoStep; `order` of SetInputDerivatives, whether
    /// Setup has a stop, the status kind of GetBooleanStatus/GetRealStatus.
    x: f64,
    y: f64,
    n: i32,
}

/// The calls of one master run, in order, with their arguments in flat arrays.
#[derive(Debug, Default)]
pub struct Log {
    calls: Vec<Entry>,
    /// Index of the first call timed (after the warm-up).
    mark: usize,
    vrs: Vec<u32>,
    reals: Vec<f64>,
    ints: Vec<i32>,
    bools: Vec<bool>,
    strings: Vec<String>,
    blobs: Vec<Vec<u8>>,
}

fn span<T: Clone>(buf: &mut Vec<T>, x: &[T]) -> Span {
    let start = buf.len() as u32;
    buf.extend_from_slice(x);
    (start, x.len() as u32)
}

fn at<T>(buf: &[T], (start, len): Span) -> &[T] {
    &buf[start as usize..(start + len) as usize]
}

impl Log {
    /// Marks the start of the measured steps.
    pub fn mark(&mut self) {
        self.mark = self.calls.len();
    }

    /// Appends `call` made on instance `instance`: the one mapping of a [`Call`] to its record.
    fn record(&mut self, instance: usize, call: &Call<'_>) {
        let mut e =
            Entry { instance: instance as u32, op: call.op(), vr: (0, 0), values: (0, 0), x: 0.0, y: 0.0, n: 0 };
        match call {
            Call::Setup { start, stop } => {
                e.x = *start;
                e.y = stop.unwrap_or(0.0);
                e.n = i32::from(stop.is_some());
            }
            Call::GetReal { vr, .. }
            | Call::GetInteger { vr, .. }
            | Call::GetBoolean { vr, .. }
            | Call::GetString { vr, .. }
            | Call::GetBinary { vr, .. } => e.vr = span(&mut self.vrs, vr),
            Call::SetReal { vr, values } => {
                e.vr = span(&mut self.vrs, vr);
                e.values = span(&mut self.reals, values);
            }
            Call::SetInteger { vr, values } => {
                e.vr = span(&mut self.vrs, vr);
                e.values = span(&mut self.ints, values);
            }
            Call::SetBoolean { vr, values } => {
                e.vr = span(&mut self.vrs, vr);
                e.values = span(&mut self.bools, values);
            }
            Call::SetString { vr, values } => {
                e.vr = span(&mut self.vrs, vr);
                let start = self.strings.len() as u32;
                self.strings.extend(values.iter().map(|v| (*v).to_owned()));
                e.values = (start, values.len() as u32);
            }
            Call::SetBinary { vr, values } => {
                e.vr = span(&mut self.vrs, vr);
                let start = self.blobs.len() as u32;
                self.blobs.extend(values.iter().map(|v| v.to_vec()));
                e.values = (start, values.len() as u32);
            }
            Call::SetInputDerivatives { vr, order, values } => {
                e.vr = span(&mut self.vrs, vr);
                e.values = span(&mut self.reals, values);
                e.n = *order;
            }
            Call::DoStep { t, h } => (e.x, e.y) = (*t, *h),
            Call::GetBooleanStatus { kind, .. } | Call::GetRealStatus { kind, .. } => e.n = *kind,
            Call::EnterInitialization
            | Call::ExitInitialization
            | Call::Terminate
            | Call::SaveState
            | Call::RestoreState => {}
        }
        self.calls.push(e);
    }
}

/// A [`FmuInstance`] that records every call into a shared [`Log`] and forwards it.
pub struct Recorder {
    inner: Box<dyn FmuInstance>,
    index: usize,
    log: Arc<Mutex<Log>>,
}

impl Recorder {
    /// Wraps instance `index`.
    pub fn new(inner: Box<dyn FmuInstance>, index: usize, log: Arc<Mutex<Log>>) -> Self {
        Self { inner, index, log }
    }
}

impl FmuInstance for Recorder {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn execute(&mut self, call: Call<'_>) -> Result<()> {
        if let Ok(mut l) = self.log.lock() {
            l.record(self.index, &call);
        }
        self.inner.execute(call)
    }
    fn can_interpolate_inputs(&self) -> bool {
        self.inner.can_interpolate_inputs()
    }
    fn overlap_steps(&mut self, on: bool) {
        self.inner.overlap_steps(on);
    }
    fn finish_step(&mut self) -> Result<()> {
        self.inner.finish_step()
    }
}

/// Replays `log` on fresh `instances` (same instances, same order); returns the seconds from the
/// mark to the end.
pub fn replay(log: &Log, instances: &mut [Box<dyn FmuInstance>]) -> Result<f64> {
    let widest = log
        .calls
        .iter()
        .filter(|e| matches!(e.op, Op::GetReal | Op::GetInteger | Op::GetBoolean))
        .map(|e| e.vr.1 as usize)
        .max()
        .unwrap_or(0);
    let (mut reals, mut ints, mut bools) = (vec![0.0; widest], vec![0; widest], vec![false; widest]);
    let mut strings = Vec::new();
    let mut blobs: Vec<Vec<u8>> = Vec::new();
    let (mut flag, mut real) = (false, 0.0);
    let mut t0 = Instant::now();
    for (k, e) in log.calls.iter().enumerate() {
        if k == log.mark {
            t0 = Instant::now();
        }
        let Some(s) = instances.get_mut(e.instance as usize) else { continue };
        let vr = at(&log.vrs, e.vr);
        let n = e.vr.1 as usize;
        let call = match e.op {
            Op::Setup => Call::Setup { start: e.x, stop: (e.n != 0).then_some(e.y) },
            Op::EnterInitialization => Call::EnterInitialization,
            Op::ExitInitialization => Call::ExitInitialization,
            Op::GetReal => Call::GetReal { vr, out: &mut reals[..n] },
            Op::SetReal => Call::SetReal { vr, values: at(&log.reals, e.values) },
            Op::GetInteger => Call::GetInteger { vr, out: &mut ints[..n] },
            Op::SetInteger => Call::SetInteger { vr, values: at(&log.ints, e.values) },
            Op::GetBoolean => Call::GetBoolean { vr, out: &mut bools[..n] },
            Op::SetBoolean => Call::SetBoolean { vr, values: at(&log.bools, e.values) },
            Op::GetString => Call::GetString { vr, out: &mut strings },
            Op::SetString => {
                let refs: Vec<&str> = at(&log.strings, e.values).iter().map(String::as_str).collect();
                s.execute(Call::SetString { vr, values: &refs })?;
                continue;
            }
            Op::SetInputDerivatives => Call::SetInputDerivatives { vr, order: e.n, values: at(&log.reals, e.values) },
            Op::DoStep => Call::DoStep { t: e.x, h: e.y },
            Op::Terminate => Call::Terminate,
            Op::SaveState => Call::SaveState,
            Op::RestoreState => Call::RestoreState,
            Op::GetBooleanStatus => Call::GetBooleanStatus { kind: e.n, out: &mut flag },
            Op::GetRealStatus => Call::GetRealStatus { kind: e.n, out: &mut real },
            Op::GetBinary => {
                blobs.resize_with(n, Vec::new);
                Call::GetBinary { vr, out: &mut blobs[..n] }
            }
            Op::SetBinary => {
                let refs: Vec<&[u8]> = at(&log.blobs, e.values).iter().map(Vec::as_slice).collect();
                s.execute(Call::SetBinary { vr, values: &refs })?;
                continue;
            }
        };
        s.execute(call)?;
    }
    Ok(t0.elapsed().as_secs_f64())
}
