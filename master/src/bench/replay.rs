//! The replay floor of `cosim bench`: every FMU call a master run makes is recorded (arguments
//! and order), then replayed on fresh instances in a bare loop. The replay's wall time is the
//! time inside FMU calls that any master must spend for this run — the FMUs do exactly the
//! same work, since they receive the same calls with the same values — so the master's
//! overhead is its wall time minus the replay's, without clock reads around every call.

use master::error::Result;
use master::Slave;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One recorded call (instance index, function, arguments).
#[derive(Debug, Clone)]
enum Call {
    Setup(f64, Option<f64>),
    EnterInit,
    ExitInit,
    GetReal(Vec<u32>),
    SetReal(Vec<u32>, Vec<f64>),
    GetInteger(Vec<u32>),
    SetInteger(Vec<u32>, Vec<i32>),
    GetBoolean(Vec<u32>),
    SetBoolean(Vec<u32>, Vec<bool>),
    GetString(Vec<u32>),
    SetString(Vec<u32>, Vec<String>),
    Derivatives(Vec<u32>, i32, Vec<f64>),
    DoStep(f64, f64),
    SaveState,
    RestoreState,
    /// Timing starts here (after the warm-up).
    Mark,
}

/// The calls of one master run, in order.
#[derive(Debug, Default)]
pub struct Log {
    calls: Vec<(usize, Call)>,
}

impl Log {
    /// Marks the start of the measured steps.
    pub fn mark(&mut self) {
        self.calls.push((usize::MAX, Call::Mark));
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

    fn push(&self, c: Call) {
        if let Ok(mut l) = self.log.lock() {
            l.calls.push((self.index, c));
        }
    }
}

impl Slave for Recorder {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn setup(&mut self, start: f64, stop: Option<f64>) -> Result<()> {
        self.push(Call::Setup(start, stop));
        self.inner.setup(start, stop)
    }
    fn enter_initialization(&mut self) -> Result<()> {
        self.push(Call::EnterInit);
        self.inner.enter_initialization()
    }
    fn exit_initialization(&mut self) -> Result<()> {
        self.push(Call::ExitInit);
        self.inner.exit_initialization()
    }
    fn get_real(&mut self, vr: &[u32], out: &mut [f64]) -> Result<()> {
        self.push(Call::GetReal(vr.to_vec()));
        self.inner.get_real(vr, out)
    }
    fn set_real(&mut self, vr: &[u32], values: &[f64]) -> Result<()> {
        self.push(Call::SetReal(vr.to_vec(), values.to_vec()));
        self.inner.set_real(vr, values)
    }
    fn get_integer(&mut self, vr: &[u32], out: &mut [i32]) -> Result<()> {
        self.push(Call::GetInteger(vr.to_vec()));
        self.inner.get_integer(vr, out)
    }
    fn set_integer(&mut self, vr: &[u32], values: &[i32]) -> Result<()> {
        self.push(Call::SetInteger(vr.to_vec(), values.to_vec()));
        self.inner.set_integer(vr, values)
    }
    fn get_boolean(&mut self, vr: &[u32], out: &mut [bool]) -> Result<()> {
        self.push(Call::GetBoolean(vr.to_vec()));
        self.inner.get_boolean(vr, out)
    }
    fn set_boolean(&mut self, vr: &[u32], values: &[bool]) -> Result<()> {
        self.push(Call::SetBoolean(vr.to_vec(), values.to_vec()));
        self.inner.set_boolean(vr, values)
    }
    fn get_string(&mut self, vr: &[u32]) -> Result<Vec<String>> {
        self.push(Call::GetString(vr.to_vec()));
        self.inner.get_string(vr)
    }
    fn set_string(&mut self, vr: &[u32], values: &[&str]) -> Result<()> {
        self.push(Call::SetString(vr.to_vec(), values.iter().map(|s| (*s).to_owned()).collect()));
        self.inner.set_string(vr, values)
    }
    fn set_input_derivatives(&mut self, vr: &[u32], order: i32, values: &[f64]) -> Result<()> {
        self.push(Call::Derivatives(vr.to_vec(), order, values.to_vec()));
        self.inner.set_input_derivatives(vr, order, values)
    }
    fn do_step(&mut self, t: f64, h: f64) -> Result<()> {
        self.push(Call::DoStep(t, h));
        self.inner.do_step(t, h)
    }
    fn terminate(&mut self) -> Result<()> {
        self.inner.terminate()
    }
    fn can_interpolate_inputs(&self) -> bool {
        self.inner.can_interpolate_inputs()
    }
    fn save_state(&mut self) -> Result<()> {
        self.push(Call::SaveState);
        self.inner.save_state()
    }
    fn restore_state(&mut self) -> Result<()> {
        self.push(Call::RestoreState);
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
            Call::GetReal(v) | Call::GetInteger(v) | Call::GetBoolean(v) => v.len(),
            _ => 0,
        })
        .max()
        .unwrap_or(0);
    let (mut reals, mut ints, mut bools) = (vec![0.0; widest], vec![0; widest], vec![false; widest]);
    let mut t0 = Instant::now();
    for (i, c) in &log.calls {
        let Some(s) = slaves.get_mut(*i) else {
            t0 = Instant::now();
            continue;
        };
        match c {
            Call::Setup(start, stop) => s.setup(*start, *stop)?,
            Call::EnterInit => s.enter_initialization()?,
            Call::ExitInit => s.exit_initialization()?,
            Call::GetReal(vr) => s.get_real(vr, &mut reals[..vr.len()])?,
            Call::SetReal(vr, v) => s.set_real(vr, v)?,
            Call::GetInteger(vr) => s.get_integer(vr, &mut ints[..vr.len()])?,
            Call::SetInteger(vr, v) => s.set_integer(vr, v)?,
            Call::GetBoolean(vr) => s.get_boolean(vr, &mut bools[..vr.len()])?,
            Call::SetBoolean(vr, v) => s.set_boolean(vr, v)?,
            Call::GetString(vr) => {
                s.get_string(vr)?;
            }
            Call::SetString(vr, v) => {
                let refs: Vec<&str> = v.iter().map(String::as_str).collect();
                s.set_string(vr, &refs)?;
            }
            Call::Derivatives(vr, order, v) => s.set_input_derivatives(vr, *order, v)?,
            Call::DoStep(t, h) => s.do_step(*t, *h)?,
            Call::SaveState => s.save_state()?,
            Call::RestoreState => s.restore_state()?,
            Call::Mark => {}
        }
    }
    Ok(t0.elapsed().as_secs_f64())
}
