//! Loading any FMI 2.0 Co-Simulation FMU and driving its instances through a safe API.
//!
//! - `cache`: [`FmuCache`], each FMU loaded once.
//! - `archive`: unzips into a private temporary folder (removed on drop), refusing unsafe entries.
//! - `ffi`: the only module that holds raw pointers: library, resolved `fmi2*` symbols, callbacks
//!   (a C shim formats the FMU's variadic log messages).
//! - `call`: [`Call`], the one list of FMU operations; [`Slave::execute`] dispatches it.
//! - `instance`: [`Slave`] implemented by [`Fmu2Slave`].
//! - `isolated`: [`Slave`] implemented by [`IsolatedSlave`], an instance in a worker process
//!   (`cosim run --isolate`).

use crate::error::Result;

/// One simulator instance as the algorithms see it. Value references are those of the FMU;
/// strings and status handling stay inside the implementation. Every error names the instance,
/// the function, the time and the FMU's last log message.
///
/// An implementation provides [`Slave::execute`], the one dispatch point of every FMU call
/// ([`Call`] lists them); the typed methods (`set_real`, `do_step`, …) build the [`Call`] and
/// execute it.
///
/// Call order: `setup` → (`set_*`)* → `enter_initialization` → (`set_*`/`get_*`)* →
/// `exit_initialization` → repeatedly (`set_*`, `set_input_derivatives`, `do_step`, `get_*`;
/// with iterative coupling `save_state` before and `restore_state` between repetitions)
/// → `terminate`. Dropping frees the instance.
pub trait Slave: Send {
    /// Instance name.
    fn name(&self) -> &str;
    /// Executes one FMU call: the one dispatch point. A call the instance does not implement
    /// fails (see [`Call::unsupported`]).
    fn execute(&mut self, call: Call<'_>) -> Result<()>;
    /// Whether the FMU declares `canInterpolateInputs`.
    fn can_interpolate_inputs(&self) -> bool;
    /// Time spent inside FMU calls so far (s) and the number of `fmi2DoStep` calls.
    fn call_stats(&self) -> (f64, u64) {
        (0.0, 0)
    }
    /// Switches the measurement of time inside FMU calls on or off (default off: two clock reads
    /// per call cost more than a small FMU's setter; `cosim bench` switches it on for its timed run).
    fn set_timing(&mut self, _on: bool) {}

    /// `fmi2SetupExperiment` (no tolerance, start, optional stop).
    #[inline]
    fn setup(&mut self, start: f64, stop: Option<f64>) -> Result<()> {
        self.execute(Call::Setup { start, stop })
    }
    /// `fmi2EnterInitializationMode`.
    #[inline]
    fn enter_initialization(&mut self) -> Result<()> {
        self.execute(Call::EnterInitialization)
    }
    /// `fmi2ExitInitializationMode`.
    #[inline]
    fn exit_initialization(&mut self) -> Result<()> {
        self.execute(Call::ExitInitialization)
    }
    /// `fmi2GetReal`.
    #[inline]
    fn get_real(&mut self, vr: &[u32], out: &mut [f64]) -> Result<()> {
        self.execute(Call::GetReal { vr, out })
    }
    /// `fmi2SetReal`.
    #[inline]
    fn set_real(&mut self, vr: &[u32], values: &[f64]) -> Result<()> {
        self.execute(Call::SetReal { vr, values })
    }
    /// `fmi2GetInteger` (also Enumerations).
    #[inline]
    fn get_integer(&mut self, vr: &[u32], out: &mut [i32]) -> Result<()> {
        self.execute(Call::GetInteger { vr, out })
    }
    /// `fmi2SetInteger`.
    #[inline]
    fn set_integer(&mut self, vr: &[u32], values: &[i32]) -> Result<()> {
        self.execute(Call::SetInteger { vr, values })
    }
    /// `fmi2GetBoolean`.
    #[inline]
    fn get_boolean(&mut self, vr: &[u32], out: &mut [bool]) -> Result<()> {
        self.execute(Call::GetBoolean { vr, out })
    }
    /// `fmi2SetBoolean`.
    #[inline]
    fn set_boolean(&mut self, vr: &[u32], values: &[bool]) -> Result<()> {
        self.execute(Call::SetBoolean { vr, values })
    }
    /// `fmi2GetString`.
    fn get_string(&mut self, vr: &[u32]) -> Result<Vec<String>> {
        let mut out = Vec::new();
        self.execute(Call::GetString { vr, out: &mut out })?;
        Ok(out)
    }
    /// `fmi2SetString`.
    fn set_string(&mut self, vr: &[u32], values: &[&str]) -> Result<()> {
        self.execute(Call::SetString { vr, values })
    }
    /// `fmi2SetRealInputDerivatives` (one order for all given references).
    #[inline]
    fn set_input_derivatives(&mut self, vr: &[u32], order: i32, values: &[f64]) -> Result<()> {
        self.execute(Call::SetInputDerivatives { vr, order, values })
    }
    /// `fmi2DoStep(t, h, noSetFMUStatePriorToCurrentPoint = true)`.
    #[inline]
    fn do_step(&mut self, t: f64, h: f64) -> Result<()> {
        self.execute(Call::DoStep { t, h })
    }
    /// `fmi2Terminate`.
    fn terminate(&mut self) -> Result<()> {
        self.execute(Call::Terminate)
    }
    /// Saves the instance's state (`fmi2GetFMUstate`) so that [`Slave::restore_state`] can
    /// repeat a step (iterative coupling).
    fn save_state(&mut self) -> Result<()> {
        self.execute(Call::SaveState)
    }
    /// Restores the state saved last (`fmi2SetFMUstate`).
    fn restore_state(&mut self) -> Result<()> {
        self.execute(Call::RestoreState)
    }
}

pub mod archive;
mod cache;
pub mod call;
mod ffi;
pub mod info;
pub mod instance;
pub mod isolated;

pub use archive::Archive;
pub use cache::FmuCache;
pub use call::{Call, Op};
pub use info::info;
pub use instance::{Fmu2, Fmu2Slave};
pub use isolated::IsolatedSlave;
