//! The replay floor of `cosim bench`: every FMU call a master run makes is recorded (arguments
//! and order), then replayed on fresh instances through the typed methods the master calls
//! (`set_real`, `do_step`, …), so that the instances run the same code. The replay's wall time,
//! less that of its loop alone ([`loop_cost`]: the same replay on instances that do nothing), is
//! the time inside FMU calls that any master must spend for this run — the FMUs do exactly the
//! same work, since they receive the same calls with the same values — so the master's overhead
//! is its wall time minus that, without clock reads around every call. (Replayed through the one
//! dispatch point instead, with the loop's cost left in, the floor counted 150–170 instructions
//! per call that are not FMU time, and understated the overhead of a master making more calls per
//! step: issue 32's FMI 2.0/3.0 comparison.)

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
    /// Values in the array of their type (`reals`, `ints`, `uints`, `bools`, `strings`).
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
    ints: Vec<i64>,
    uints: Vec<u64>,
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
            Call::GetFloat64 { vr, .. }
            | Call::GetInt64 { vr, .. }
            | Call::GetUInt64 { vr, .. }
            | Call::GetClock { vr, .. }
            | Call::GetBoolean { vr, .. }
            | Call::GetString { vr, .. }
            | Call::GetBinary { vr, .. } => e.vr = span(&mut self.vrs, vr),
            Call::SetFloat64 { vr, values } => {
                e.vr = span(&mut self.vrs, vr);
                e.values = span(&mut self.reals, values);
            }
            Call::SetInt64 { vr, values } => {
                e.vr = span(&mut self.vrs, vr);
                e.values = span(&mut self.ints, values);
            }
            Call::SetUInt64 { vr, values } => {
                e.vr = span(&mut self.vrs, vr);
                e.values = span(&mut self.uints, values);
            }
            Call::SetBoolean { vr, values } | Call::SetClock { vr, values } => {
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
            | Call::RestoreState
            | Call::EnterEventMode
            | Call::UpdateDiscreteStates => {}
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
///
/// Each call is made through the typed method the master uses (`set_real`, `do_step`, …), so the
/// replay runs the same instance code as the master run; the loop's own cost per call (reading
/// the record, the dispatch on its operation) is what [`loop_cost`] measures.
pub fn replay(log: &Log, instances: &mut [Box<dyn FmuInstance>]) -> Result<f64> {
    let mark = log.mark.min(log.calls.len());
    let (warm, timed) = log.calls.split_at(mark);
    let mut scratch = Scratch::for_log(log);
    for e in warm {
        make(log, e, instances, &mut scratch)?;
    }
    let t0 = Instant::now();
    for e in timed {
        make(log, e, instances, &mut scratch)?;
    }
    Ok(t0.elapsed().as_secs_f64())
}

/// The seconds [`replay`] takes for `log`'s measured calls on instances that do nothing: the
/// replay loop's own cost, which is not time inside FMU calls.
pub fn loop_cost(log: &Log, n_instances: usize) -> Result<f64> {
    let mut idle: Vec<Box<dyn FmuInstance>> =
        (0..n_instances).map(|_| Box::new(Idle) as Box<dyn FmuInstance>).collect();
    replay(log, &mut idle)
}

/// An instance whose every call succeeds at once (see [`loop_cost`]).
struct Idle;

impl FmuInstance for Idle {
    fn name(&self) -> &str {
        "idle"
    }
    #[inline(always)]
    fn execute(&mut self, _call: Call<'_>) -> Result<()> {
        Ok(())
    }
    fn can_interpolate_inputs(&self) -> bool {
        false
    }
}

/// The getters' output buffers, as wide as the widest getter of the log.
struct Scratch {
    reals: Vec<f64>,
    ints: Vec<i64>,
    uints: Vec<u64>,
    bools: Vec<bool>,
    blobs: Vec<Vec<u8>>,
    flag: bool,
    real: f64,
}

impl Scratch {
    fn for_log(log: &Log) -> Self {
        let widest = log
            .calls
            .iter()
            .filter(|e| matches!(e.op, Op::GetFloat64 | Op::GetInt64 | Op::GetUInt64 | Op::GetBoolean | Op::GetClock))
            .map(|e| e.vr.1 as usize)
            .max()
            .unwrap_or(0);
        Self {
            reals: vec![0.0; widest],
            ints: vec![0; widest],
            uints: vec![0; widest],
            bools: vec![false; widest],
            blobs: Vec::new(),
            flag: false,
            real: 0.0,
        }
    }
}

/// Makes the recorded call `e` on its instance, through the typed method of its operation.
#[inline(always)]
fn make(log: &Log, e: &Entry, instances: &mut [Box<dyn FmuInstance>], b: &mut Scratch) -> Result<()> {
    let Some(s) = instances.get_mut(e.instance as usize) else { return Ok(()) };
    let vr = at(&log.vrs, e.vr);
    let n = vr.len();
    match e.op {
        Op::Setup => s.setup(e.x, (e.n != 0).then_some(e.y)),
        Op::EnterInitialization => s.enter_initialization(),
        Op::ExitInitialization => s.exit_initialization(),
        Op::GetFloat64 => s.get_real(vr, &mut b.reals[..n]),
        Op::SetFloat64 => s.set_real(vr, at(&log.reals, e.values)),
        Op::GetInt64 => s.get_int64(vr, &mut b.ints[..n]),
        Op::SetInt64 => s.set_int64(vr, at(&log.ints, e.values)),
        Op::GetUInt64 => s.get_uint64(vr, &mut b.uints[..n]),
        Op::SetUInt64 => s.set_uint64(vr, at(&log.uints, e.values)),
        Op::GetClock => s.execute(Call::GetClock { vr, out: &mut b.bools[..n] }),
        Op::SetClock => s.execute(Call::SetClock { vr, values: at(&log.bools, e.values) }),
        Op::EnterEventMode => s.execute(Call::EnterEventMode),
        Op::UpdateDiscreteStates => s.execute(Call::UpdateDiscreteStates),
        Op::GetBoolean => s.get_boolean(vr, &mut b.bools[..n]),
        Op::SetBoolean => s.set_boolean(vr, at(&log.bools, e.values)),
        Op::GetString => s.get_string(vr).map(drop),
        Op::SetString => {
            let refs: Vec<&str> = at(&log.strings, e.values).iter().map(String::as_str).collect();
            s.set_string(vr, &refs)
        }
        Op::SetInputDerivatives => s.set_input_derivatives(vr, e.n, at(&log.reals, e.values)),
        Op::DoStep => s.do_step(e.x, e.y),
        Op::Terminate => s.terminate(),
        Op::SaveState => s.save_state(),
        Op::RestoreState => s.restore_state(),
        Op::GetBooleanStatus => s.get_boolean_status(e.n, &mut b.flag),
        Op::GetRealStatus => s.get_real_status(e.n, &mut b.real),
        Op::GetBinary => {
            b.blobs.resize_with(n, Vec::new);
            s.get_binary(vr, &mut b.blobs[..n])
        }
        Op::SetBinary => {
            let refs: Vec<&[u8]> = at(&log.blobs, e.values).iter().map(Vec::as_slice).collect();
            s.set_binary(vr, &refs)
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// Writes each call it gets (operation and arguments, `Debug`) into a shared list.
    struct Echo(Arc<Mutex<Vec<String>>>);

    impl FmuInstance for Echo {
        fn name(&self) -> &str {
            "echo"
        }
        fn execute(&mut self, call: Call<'_>) -> Result<()> {
            self.0.lock().unwrap().push(format!("{call:?}"));
            Ok(())
        }
        fn can_interpolate_inputs(&self) -> bool {
            true
        }
    }

    /// Every operation once, on two instances, with distinct arguments.
    fn every_call(s: &mut [Box<dyn FmuInstance>]) -> Result<()> {
        let (mut reals, mut ints, mut uints, mut bools) = ([0.0; 2], [0; 3], [0u64; 1], [false; 1]);
        let (mut flag, mut real) = (false, 0.0);
        s[0].setup(0.5, Some(2.0))?;
        s[1].setup(0.0, None)?;
        s[0].enter_initialization()?;
        s[0].set_real(&[1, 2], &[1.5, -2.5])?;
        s[1].set_int64(&[3, 4, 5], &[7, -8, 5_000_000_000])?;
        s[0].set_uint64(&[20], &[(1 << 63) + 1])?;
        s[1].execute(Call::SetClock { vr: &[21], values: &[true] })?;
        s[0].execute(Call::EnterEventMode)?;
        s[0].execute(Call::UpdateDiscreteStates)?;
        s[0].set_boolean(&[6], &[true])?;
        s[1].set_string(&[7, 8], &["a", "b c"])?;
        s[0].exit_initialization()?;
        s[1].set_input_derivatives(&[9], 2, &[0.25])?;
        s[0].do_step(0.5, 0.125)?;
        s[1].get_real(&[10, 11], &mut reals)?;
        s[0].get_int64(&[12, 13, 14], &mut ints)?;
        s[1].get_uint64(&[22], &mut uints)?;
        s[1].execute(Call::GetClock { vr: &[23], out: &mut bools })?;
        s[1].get_boolean(&[15], &mut bools)?;
        s[0].get_string(&[16])?;
        s[1].save_state()?;
        s[1].restore_state()?;
        s[0].get_boolean_status(3, &mut flag)?;
        s[1].get_real_status(2, &mut real)?;
        s[1].set_binary(&[17, 19], &[&[1u8, 2][..], &[][..]])?;
        s[0].get_binary(&[18], &mut [Vec::new()])?;
        s[0].terminate()
    }

    #[test]
    fn the_replay_makes_the_recorded_calls_in_order_with_their_arguments() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::new(Mutex::new(Log::default()));
        let mut recorders: Vec<Box<dyn FmuInstance>> = (0..2)
            .map(|i| {
                Box::new(Recorder::new(Box::new(Echo(Arc::clone(&seen))), i, Arc::clone(&log))) as Box<dyn FmuInstance>
            })
            .collect();
        every_call(&mut recorders).unwrap();
        let made = std::mem::take(&mut *seen.lock().unwrap());
        assert_eq!(made.len(), 27);
        // Every operation is covered: a new one must be added to `every_call`.
        let ops: std::collections::HashSet<Op> = log.lock().unwrap().calls.iter().map(|e| e.op).collect();
        assert_eq!(ops.len(), Op::ALL.len());

        let mut log = std::mem::take(&mut *log.lock().unwrap());
        log.mark = 3;
        let mut fresh: Vec<Box<dyn FmuInstance>> =
            (0..2).map(|_| Box::new(Echo(Arc::clone(&seen))) as Box<dyn FmuInstance>).collect();
        let seconds = replay(&log, &mut fresh).unwrap();
        assert!(seconds >= 0.0);
        assert_eq!(*seen.lock().unwrap(), made);
        // The loop alone: the same calls, on instances that do nothing.
        assert!(loop_cost(&log, 2).unwrap() >= 0.0);
    }
}
