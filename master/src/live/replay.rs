//! Replay of a live run (`cosim run SYSTEM --replay OUT`): the live inputs as results.csv
//! recorded them, applied at the communication points where the operator's values took effect,
//! the way the live mailbox applied them ([`super::hub::LiveInputs`]) — so the same system
//! reproduces the run bit for bit (results.csv and bonds.csv).
//!
//! The row at t_{n+1} shows the value an input had over the step [t_n, t_{n+1}] (a live value
//! is taken at the step's start and still holds at its end, when the row is read). So before
//! step n the replay applies row n + 1's value of each live input where it differs from the
//! value applied last (row 0's at the start): a time table's input is overridden
//! (`Coupling::override_signal`), any other input set. A value the operator released back to a
//! table is replayed as the table's value held; the same unless the table changes while it is
//! in force (the operator scenario's table is constant). The file must have a row at every
//! communication point of the run (`record_every = 1`, the same start and step), which is
//! checked before the run starts.

use super::hub::Target;
use super::LiveSpec;
use crate::coupling::Coupling;
use crate::error::{MasterError, Result};
use crate::execution::InputHook;
use crate::fmu::FmuInstance;
use crate::system::input_file;
use std::path::Path;

/// The replaying input hook: the recorded file read one row a step (memory O(live inputs), not
/// O(rows)), each live input's column in it, and the value last applied.
#[derive(Debug)]
pub struct ReplayInputs {
    targets: Vec<Target>,
    rows: input_file::Rows<std::fs::File>,
    /// Per target: its column among the row's values.
    columns: Vec<usize>,
    applied: Vec<u64>,
    /// Rows the validating pass counted.
    checked: u64,
    file: std::path::PathBuf,
}

impl InputHook for ReplayInputs {
    fn apply(&mut self, coupling: &mut Coupling, instances: &mut [Box<dyn FmuInstance>]) -> Result<()> {
        let err = |message: String| MasterError::System { path: self.file.clone(), key: "--replay".into(), message };
        if self.rows.rows() >= self.checked {
            return Ok(());
        }
        if !self.rows.next_row().map_err(|e| err(e.to_string()))? {
            return Err(err(format!(
                "{} rows, {} when checked: the file changed since it was checked before the run",
                self.rows.rows(),
                self.checked
            )));
        }
        for ((target, c), applied) in self.targets.iter().zip(&self.columns).zip(&mut self.applied) {
            let v = self.rows.values()[*c];
            if v.to_bits() == *applied {
                continue;
            }
            *applied = v.to_bits();
            match target.signal {
                Some(k) => coupling.override_signal(k, Some(v)),
                None => instances[target.var.instance].set_real(&[target.var.vr], &[v])?,
            }
        }
        Ok(())
    }
}

/// Attaches the replay of `results` (a live run's results.csv, or the folder holding it) to
/// `execution`: the live inputs of `spec` from their columns. Checks before the run, in one pass
/// that keeps nothing: every live input is a Real input with a column, and the rows are the
/// run's communication points.
pub fn replay(execution: &mut crate::Execution, spec: &LiveSpec, results: &Path) -> Result<()> {
    let sys = execution.system();
    let file = if results.is_dir() { results.join("results.csv") } else { results.to_path_buf() };
    let err = |message: String| MasterError::System { path: file.clone(), key: "--replay".into(), message };
    if spec.inputs.is_empty() {
        return Err(err(format!("{} has no [live] inputs to replay", sys.path().display())));
    }
    let mut targets = Vec::new();
    for name in &spec.inputs {
        let var = sys
            .variable(name)
            .cloned()
            .ok_or_else(|| err(format!("no variable \"{name}\" (a live input) in this system")))?;
        let signal = sys.signals().iter().position(|s| s.to.instance == var.instance && s.to.vr == var.vr);
        targets.push(Target { var, signal });
    }
    let live = |n: &str| spec.inputs.iter().any(|i| i == n);
    let checked = input_file::check(&file, Some("time"), live, |row, t, _| {
        let k = row - 1;
        let expected = sys.time_at(k);
        if t.to_bits() != expected.to_bits() || k > sys.steps() {
            return Err(format!(
                "row {row} is at t = {t}, the run's communication point {k} at t = {expected}: a replay needs every \
                 communication point recorded (record_every = 1) with the run's start and step"
            ));
        }
        Ok(())
    })
    .map_err(|e| err(e.to_string()))?;
    let mut columns = Vec::new();
    for name in &spec.inputs {
        let c = checked.names.iter().position(|n| n == name);
        columns.push(c.ok_or_else(|| err(format!("no column \"{name}\" (the live input)")))?);
    }
    let mut rows = input_file::Rows::open(&file, Some("time"), live).map_err(|e| err(e.to_string()))?;
    if !rows.next_row().map_err(|e| err(e.to_string()))? {
        return Err(err("the file changed since it was checked before the run: no rows".into()));
    }
    let applied = columns.iter().map(|c| rows.values()[*c].to_bits()).collect();
    let hook = ReplayInputs { targets, rows, columns, applied, checked: checked.rows, file: file.clone() };
    execution.live_inputs(Box::new(hook));
    Ok(())
}
