//! The replay floor of `cosim bench`: every FMU call a master run makes is recorded (arguments
//! and order), then replayed on fresh instances in a bare loop. The replay's wall time is the
//! time inside FMU calls that any master must spend for this run — the FMUs do exactly the
//! same work, since they receive the same calls with the same values — so the master's
//! overhead is its wall time minus the replay's, without clock reads around every call.

use master::error::Result;
use master::Slave;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A range of the log's flat argument arrays.
type Span = (u32, u32);

/// One recorded call; its arrays live in the log's flat buffers (read in order by the replay,
/// so the replay streams through memory instead of chasing one heap block per call).
#[derive(Debug, Clone, Copy)]
enum Call {
    Setup(f64, Option<f64>),
    EnterInit,
    ExitInit,
    GetReal(Span),
    SetReal(Span, Span),
    GetInteger(Span),
    SetInteger(Span, Span),
    GetBoolean(Span),
    SetBoolean(Span, Span),
    GetString(Span),
    SetString(Span, Span),
    Derivatives(Span, i32, Span),
    DoStep(f64, f64),
    SaveState,
    RestoreState,
    /// Timing starts here (after the warm-up).
    Mark,
}

/// The calls of one master run, in order, with their arguments in flat arrays.
#[derive(Debug, Default)]
pub struct Log {
    calls: Vec<(usize, Call)>,
    vrs: Vec<u32>,
    reals: Vec<f64>,
    ints: Vec<i32>,
    bools: Vec<bool>,
    strings: Vec<String>,
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
        self.calls.push((usize::MAX, Call::Mark));
    }

    fn vr(&mut self, vr: &[u32]) -> Span {
        span(&mut self.vrs, vr)
    }
}

/// A [`Slave`] that records every call into a shared [`Log`] and forwards it.
pub struct Recorder {
    inner: Box<dyn Slave>,
    index: usize,
    log: Arc<Mutex<Log>>,
}

impl Recorder {
    /// Wraps instance `index`.
    pub fn new(inner: Box<dyn Slave>, index: usize, log: Arc<Mutex<Log>>) -> Self {
        Self { inner, index, log }
    }

    fn push(&self, c: impl FnOnce(&mut Log) -> Call) {
        if let Ok(mut l) = self.log.lock() {
            let call = c(&mut l);
            l.calls.push((self.index, call));
        }
    }
}

impl Slave for Recorder {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn setup(&mut self, start: f64, stop: Option<f64>) -> Result<()> {
        self.push(|_| Call::Setup(start, stop));
        self.inner.setup(start, stop)
    }
    fn enter_initialization(&mut self) -> Result<()> {
        self.push(|_| Call::EnterInit);
        self.inner.enter_initialization()
    }
    fn exit_initialization(&mut self) -> Result<()> {
        self.push(|_| Call::ExitInit);
        self.inner.exit_initialization()
    }
    fn get_real(&mut self, vr: &[u32], out: &mut [f64]) -> Result<()> {
        self.push(|l| Call::GetReal(l.vr(vr)));
        self.inner.get_real(vr, out)
    }
    fn set_real(&mut self, vr: &[u32], values: &[f64]) -> Result<()> {
        self.push(|l| Call::SetReal(l.vr(vr), span(&mut l.reals, values)));
        self.inner.set_real(vr, values)
    }
    fn get_integer(&mut self, vr: &[u32], out: &mut [i32]) -> Result<()> {
        self.push(|l| Call::GetInteger(l.vr(vr)));
        self.inner.get_integer(vr, out)
    }
    fn set_integer(&mut self, vr: &[u32], values: &[i32]) -> Result<()> {
        self.push(|l| Call::SetInteger(l.vr(vr), span(&mut l.ints, values)));
        self.inner.set_integer(vr, values)
    }
    fn get_boolean(&mut self, vr: &[u32], out: &mut [bool]) -> Result<()> {
        self.push(|l| Call::GetBoolean(l.vr(vr)));
        self.inner.get_boolean(vr, out)
    }
    fn set_boolean(&mut self, vr: &[u32], values: &[bool]) -> Result<()> {
        self.push(|l| Call::SetBoolean(l.vr(vr), span(&mut l.bools, values)));
        self.inner.set_boolean(vr, values)
    }
    fn get_string(&mut self, vr: &[u32]) -> Result<Vec<String>> {
        self.push(|l| Call::GetString(l.vr(vr)));
        self.inner.get_string(vr)
    }
    fn set_string(&mut self, vr: &[u32], values: &[&str]) -> Result<()> {
        self.push(|l| {
            let owned: Vec<String> = values.iter().map(|s| (*s).to_owned()).collect();
            Call::SetString(l.vr(vr), span(&mut l.strings, &owned))
        });
        self.inner.set_string(vr, values)
    }
    fn set_input_derivatives(&mut self, vr: &[u32], order: i32, values: &[f64]) -> Result<()> {
        self.push(|l| Call::Derivatives(l.vr(vr), order, span(&mut l.reals, values)));
        self.inner.set_input_derivatives(vr, order, values)
    }
    fn do_step(&mut self, t: f64, h: f64) -> Result<()> {
        self.push(|_| Call::DoStep(t, h));
        self.inner.do_step(t, h)
    }
    fn terminate(&mut self) -> Result<()> {
        self.inner.terminate()
    }
    fn can_interpolate_inputs(&self) -> bool {
        self.inner.can_interpolate_inputs()
    }
    fn save_state(&mut self) -> Result<()> {
        self.push(|_| Call::SaveState);
        self.inner.save_state()
    }
    fn restore_state(&mut self) -> Result<()> {
        self.push(|_| Call::RestoreState);
        self.inner.restore_state()
    }
}

/// Replays `log` on fresh `slaves` (same instances, same order); returns the seconds from the
/// mark to the end.
pub fn replay(log: &Log, slaves: &mut [Box<dyn Slave>]) -> Result<f64> {
    let widest = log
        .calls
        .iter()
        .map(|(_, c)| match c {
            Call::GetReal((_, n)) | Call::GetInteger((_, n)) | Call::GetBoolean((_, n)) => *n as usize,
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    let (mut reals, mut ints, mut bools) = (vec![0.0; widest], vec![0; widest], vec![false; widest]);
    let v = |s: Span| at(&log.vrs, s);
    let mut t0 = Instant::now();
    for (i, c) in &log.calls {
        let Some(s) = slaves.get_mut(*i) else {
            t0 = Instant::now();
            continue;
        };
        match *c {
            Call::Setup(start, stop) => s.setup(start, stop)?,
            Call::EnterInit => s.enter_initialization()?,
            Call::ExitInit => s.exit_initialization()?,
            Call::GetReal(vr) => s.get_real(v(vr), &mut reals[..vr.1 as usize])?,
            Call::SetReal(vr, x) => s.set_real(v(vr), at(&log.reals, x))?,
            Call::GetInteger(vr) => s.get_integer(v(vr), &mut ints[..vr.1 as usize])?,
            Call::SetInteger(vr, x) => s.set_integer(v(vr), at(&log.ints, x))?,
            Call::GetBoolean(vr) => s.get_boolean(v(vr), &mut bools[..vr.1 as usize])?,
            Call::SetBoolean(vr, x) => s.set_boolean(v(vr), at(&log.bools, x))?,
            Call::GetString(vr) => {
                s.get_string(v(vr))?;
            }
            Call::SetString(vr, x) => {
                let refs: Vec<&str> = at(&log.strings, x).iter().map(String::as_str).collect();
                s.set_string(v(vr), &refs)?;
            }
            Call::Derivatives(vr, order, x) => s.set_input_derivatives(v(vr), order, at(&log.reals, x))?,
            Call::DoStep(t, h) => s.do_step(t, h)?,
            Call::SaveState => s.save_state()?,
            Call::RestoreState => s.restore_state()?,
            Call::Mark => {}
        }
    }
    Ok(t0.elapsed().as_secs_f64())
}
