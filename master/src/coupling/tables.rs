//! The time tables (`[[inputs]]`) as the coupling evaluates them: a table held in memory by
//! binary search, a file's table through a streaming window of its rows (one per file, shared
//! by the inputs it drives; [`crate::system::input_stream`]) — the same formula, so the same
//! values bit for bit — and a live value replacing a table while set ([`crate::live`]).

use crate::error::{MasterError, Result};
use crate::fmu::{FmuInstance, Value};
use crate::system::input_stream::Window;
use crate::system::Signal;
use model_description::BaseType;

/// Every time table of a run.
#[derive(Debug, Default)]
pub(crate) struct Tables {
    pub(crate) signals: Vec<Signal>,
    /// One window per input file.
    windows: Vec<Window>,
    /// Per signal: its file's window and column, `None` for a table in memory.
    file: Vec<Option<(usize, usize)>>,
    /// A live value replacing each table while set (NaN: the table's).
    pub(crate) overridden: Vec<f64>,
}

impl Tables {
    pub(crate) fn new(signals: &[Signal]) -> Self {
        let mut windows: Vec<Window> = Vec::new();
        let mut file = Vec::with_capacity(signals.len());
        for sig in signals {
            file.push(sig.file.as_ref().map(|f| {
                let w = windows.iter().position(|w| std::ptr::eq(w.source(), f.source.as_ref())).unwrap_or_else(|| {
                    windows.push(Window::new(f.source.clone()));
                    windows.len() - 1
                });
                (w, f.column)
            }));
        }
        Self { signals: signals.to_vec(), windows, file, overridden: vec![f64::NAN; signals.len()] }
    }

    /// Table k's value at t and slope there ([`Signal::at`]).
    pub(crate) fn at(&mut self, k: usize, t: f64) -> Result<(f64, f64)> {
        let sig = &self.signals[k];
        match self.file[k] {
            None => Ok(sig.at(t)),
            Some((w, c)) => self.windows[w].at(c, sig.linear, t).map_err(|e| stream_error(&self.windows[w], e)),
        }
    }

    /// Table k's value just before t ([`Signal::before`]).
    pub(crate) fn before(&mut self, k: usize, t: f64) -> Result<f64> {
        let sig = &self.signals[k];
        match self.file[k] {
            None => Ok(sig.before(t)),
            Some((w, c)) => self.windows[w].before(c, sig.linear, t).map_err(|e| stream_error(&self.windows[w], e)),
        }
    }

    /// The run is at t_n = `t`: no table is asked for an earlier time any more.
    pub(crate) fn advance(&mut self, t: f64) {
        for w in &mut self.windows {
            w.advance(t);
        }
    }
}

fn stream_error(w: &Window, e: crate::system::input_file::CsvError) -> MasterError {
    MasterError::System {
        path: w.source().path.clone(),
        key: "inputs".into(),
        message: format!("{}: {e}", w.source().path.display()),
    }
}

/// Sets a time table's value `x` on its input: a Real one's as is, a non-Real one's (held) as
/// a value of the input's own type.
pub(crate) fn set_signal(instance: &mut dyn FmuInstance, sig: &Signal, x: f64) -> Result<()> {
    let mut v =
        if sig.to.ty == BaseType::Real { Value::Float(x) } else { Value::zero(super::carrier(instance, &sig.to)) };
    match &mut v {
        Value::Int(i) => *i = x as i64,
        Value::UInt(i) => *i = x as u64,
        Value::Boolean(b) => *b = x != 0.0,
        _ => {}
    }
    v.write(instance, sig.to.vr)
}
