//! Loading any FMI 2.0 or FMI 3.0 Co-Simulation FMU and driving its instances through one safe,
//! version-neutral API: the schemes, observers and checker see [`FmuInstance`] and [`Call`]
//! only, with the values of [`value`] (every FMI 3.0 type).
//!
//! - `cache`: [`FmuCache`], each FMU loaded once.
//! - `archive`: unzips into a private temporary folder (removed on drop), refusing unsafe entries.
//! - `value`: [`ValueType`], [`Value`], [`Shape`]: the value model of every version.
//! - `call`: [`Call`], the one list of FMU operations; [`FmuInstance::execute`] dispatches it.
//! - `ffi` (FMI 2.0) and `ffi3` (FMI 3.0): the only modules that hold raw pointers: library,
//!   resolved symbols (the tables of `fmi-api`), callbacks (a C shim formats FMI 2.0's variadic
//!   log messages; both versions' messages go to the host's log sink, [`crate::host::FmuLog`]).
//! - `load`: [`Fmu`], a loaded FMU of either version.
//! - `instance`: [`Instance`] (by version), [`Fmi2Instance`]; `instance3`: [`Fmi3Instance`]. Each
//!   calls its own version's functions; errors name them (`fmi3GetFloat64`, not `fmi2GetReal`).
//! - `binary`: FMI 3.0 Binary `maxSize`, checked before `fmi3SetBinary`.
//! - `isolated`: [`FmuInstance`] implemented by [`IsolatedInstance`], an instance in a worker process
//!   (`cosim run --isolate`).
//! - `me`: [`MeInstance`], a Model Exchange instance integrated by the master (version-neutral,
//!   over the [`me::ModelExchange`] calls of FMI 2.0's `instance.rs` and FMI 3.0's `me3.rs`).
//!
//! A Model Exchange instance driven by the master's solver is a variant of [`Instance`]
//! ([`Instance::Me2`], [`Instance::Me3`]) made by [`Fmu::instantiate`] of an FMU loaded for
//! Model Exchange (issue 52). Arrays sized by structural parameters
//! ([`Shape::Structural`]) are read with the parameters' values ([`Fmu::configured`]);
//! `capabilities`: what the loader refuses and `cosim info` reports. Event mode: the calls
//! [`Call::EnterEventMode`], [`Call::UpdateDiscreteStates`], [`Call::EnterStepMode`],
//! [`Call::GetClock`] and [`Call::SetClock`]; `events`: FMI 3.0 Co-Simulation in event mode
//! (early return, `nextEventTime`); `scheduled`: Scheduled Execution.

use crate::error::{MasterError, Result};

/// One FMU instance as the algorithms see it, whatever its FMI version. Value references are those of the FMU;
/// strings and status handling stay inside the implementation. Every error names the instance,
/// the function, the time and the FMU's last log message.
///
/// An implementation provides [`FmuInstance::execute`], the one dispatch point of every FMU call
/// ([`Call`] lists them); the typed methods (`set_real`, `do_step`, …) build the [`Call`] and
/// execute it.
///
/// Call order: `setup` → (`set_*`)* → `enter_initialization` → (`set_*`/`get_*`)* →
/// `exit_initialization` → repeatedly (`set_*`, `set_input_derivatives`, `do_step`, `get_*`;
/// with iterative coupling `save_state` before and `restore_state` between repetitions)
/// → `terminate`. Dropping frees the instance. After a step that returned `fmi2Discard`:
/// `get_boolean_status`/`get_real_status` and the getters, then `terminate`.
pub trait FmuInstance: Send {
    /// Instance name.
    fn name(&self) -> &str;
    /// The FMI version whose functions the calls go to (named in errors).
    fn version(&self) -> call::Version {
        call::Version::Fmi2
    }
    /// Executes one FMU call: the one dispatch point. A call the instance does not implement
    /// fails (see [`Call::unsupported`]).
    fn execute(&mut self, call: Call<'_>) -> Result<()>;
    /// The type of variable `vr` where the instance knows it (FMI 3.0: every type; `None`: take
    /// the base type of the description, whose integers are Int32). Asked once per variable when
    /// a run is set up, never per step.
    fn value_type(&self, _vr: u32) -> Option<ValueType> {
        None
    }
    /// Whether the FMU declares `canInterpolateInputs`.
    fn can_interpolate_inputs(&self) -> bool;
    /// Time spent inside FMU calls so far (s) and the number of `fmi2DoStep` calls.
    fn call_stats(&self) -> (f64, u64) {
        (0.0, 0)
    }
    /// Warnings the FMU gave so far (messages of status fmi2Warning, calls that returned it),
    /// handed to the log sink or not; 0 where they are not counted (worker processes).
    fn fmu_warnings(&self) -> u64 {
        0
    }
    /// Switches the measurement of time inside FMU calls on or off (default off: two clock reads
    /// per call cost more than a small FMU's setter; `cosim bench` switches it on for its timed run).
    fn set_timing(&mut self, _on: bool) {}
    /// The integration statistics of a Model Exchange instance (summary.json); `None` for a
    /// Co-Simulation instance. An isolated instance asks its worker (one round trip per counter).
    fn solver_stats(&mut self) -> Option<me::MeStats> {
        None
    }
    /// Lets `fmi2DoStep` return once the step is sent, before it is done, so that the caller can
    /// start the other instances' steps meanwhile (an instance in a worker process: the Jacobi
    /// scheme sends every isolated instance's step, then waits for all with
    /// [`FmuInstance::finish_step`]). Any later call waits for the step first; its error is reported
    /// by [`FmuInstance::finish_step`] or by that call. Default: no effect (a step is done when
    /// `do_step` returns).
    fn overlap_steps(&mut self, _on: bool) {}
    /// Waits for a step started with [`FmuInstance::overlap_steps`] on; `Err` is that step's error.
    fn finish_step(&mut self) -> Result<()> {
        Ok(())
    }

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
    /// Float64 and Float32 values ([`Call::GetFloat64`]: `fmi2GetReal`, `fmi3GetFloat64`, …).
    #[inline]
    fn get_real(&mut self, vr: &[u32], out: &mut [f64]) -> Result<()> {
        self.execute(Call::GetFloat64 { vr, out })
    }
    /// [`Call::SetFloat64`].
    #[inline]
    fn set_real(&mut self, vr: &[u32], values: &[f64]) -> Result<()> {
        self.execute(Call::SetFloat64 { vr, values })
    }
    /// Integer and Enumeration values but UInt64, exact ([`Call::GetInt64`]).
    #[inline]
    fn get_int64(&mut self, vr: &[u32], out: &mut [i64]) -> Result<()> {
        self.execute(Call::GetInt64 { vr, out })
    }
    /// [`Call::SetInt64`] (a value outside the variable's type is refused naming it).
    #[inline]
    fn set_int64(&mut self, vr: &[u32], values: &[i64]) -> Result<()> {
        self.execute(Call::SetInt64 { vr, values })
    }
    /// UInt64 values, exact ([`Call::GetUInt64`], FMI 3.0).
    #[inline]
    fn get_uint64(&mut self, vr: &[u32], out: &mut [u64]) -> Result<()> {
        self.execute(Call::GetUInt64 { vr, out })
    }
    /// [`Call::SetUInt64`].
    #[inline]
    fn set_uint64(&mut self, vr: &[u32], values: &[u64]) -> Result<()> {
        self.execute(Call::SetUInt64 { vr, values })
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
    /// `fmi3GetBinary` into `out` (one buffer per reference, reused: see [`Call::GetBinary`]).
    fn get_binary(&mut self, vr: &[u32], out: &mut [Vec<u8>]) -> Result<()> {
        self.execute(Call::GetBinary { vr, out })
    }
    /// `fmi3SetBinary`.
    fn set_binary(&mut self, vr: &[u32], values: &[&[u8]]) -> Result<()> {
        self.execute(Call::SetBinary { vr, values })
    }
    /// `fmi2SetRealInputDerivatives` (one order for all given references).
    #[inline]
    fn set_input_derivatives(&mut self, vr: &[u32], order: i32, values: &[f64]) -> Result<()> {
        self.execute(Call::SetInputDerivatives { vr, order, values })
    }
    /// `fmi2DoStep(t, h, noSetFMUStatePriorToCurrentPoint = true)`.
    ///
    /// The FMI 2.0 termination protocol: when the step returns `fmi2Discard`, the instance is
    /// asked `fmi2GetBooleanStatus(fmi2Terminated)`; if it wants to end the simulation, the
    /// result is [`MasterError::Terminated`] at its `fmi2GetRealStatus(fmi2LastSuccessfulTime)`
    /// (t when it cannot tell, or tells a time outside [t, t + h]). Any other discard (or an
    /// instance that cannot answer, e.g. an FMU without `fmi2GetBooleanStatus`) stays the
    /// discard's [`MasterError::Call`].
    #[inline]
    fn do_step(&mut self, t: f64, h: f64) -> Result<()> {
        match self.execute(Call::DoStep { t, h }) {
            Err(e) if e.is_discard() => Err(self.discarded(e, t, h)),
            r => r,
        }
    }
    /// After `fmi2DoStep(t, h)` returned `fmi2Discard` (`discard`): [`MasterError::Terminated`]
    /// when the instance says it terminated the simulation, else `discard` (see [`FmuInstance::do_step`]).
    #[cold]
    fn discarded(&mut self, discard: MasterError, t: f64, h: f64) -> MasterError {
        let mut terminated = false;
        if self.get_boolean_status(call::status_kind::TERMINATED, &mut terminated).is_err() || !terminated {
            return discard;
        }
        let mut time = f64::NAN;
        let tol = 1e-9 * h;
        if self.get_real_status(call::status_kind::LAST_SUCCESSFUL_TIME, &mut time).is_err()
            || !(time >= t - tol && time <= t + h + tol)
        {
            time = t;
        }
        let time = time.max(t).min(t + h);
        MasterError::Terminated { instance: self.name().to_owned(), time }
    }
    /// `fmi2GetBooleanStatus(kind)` (`kind`: [`call::status_kind`]).
    fn get_boolean_status(&mut self, kind: i32, out: &mut bool) -> Result<()> {
        self.execute(Call::GetBooleanStatus { kind, out })
    }
    /// `fmi2GetRealStatus(kind)` (`kind`: [`call::status_kind`]).
    fn get_real_status(&mut self, kind: i32, out: &mut f64) -> Result<()> {
        self.execute(Call::GetRealStatus { kind, out })
    }
    /// `fmi2Terminate`.
    fn terminate(&mut self) -> Result<()> {
        self.execute(Call::Terminate)
    }
    /// Saves the instance's state (`fmi2GetFMUstate`) so that [`FmuInstance::restore_state`] can
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
mod binary;
mod cache;
pub mod call;
pub mod capabilities;
mod clocks;
mod elf;
mod events;
pub(crate) mod ffi;
pub(crate) mod ffi3;
pub mod info;
pub mod instance;
mod instance3;
pub mod isolated;
pub(crate) mod load;
pub mod me;
mod me3;
pub mod mock;
mod scheduled;
mod shm;
pub mod value;

pub use archive::Archive;
pub use cache::{Configuration, FmuCache};
pub use call::{Call, DiscreteStates, Op, Version};
pub use info::info;
pub use instance::{Fmi2Instance, Instance};
pub use instance3::Fmi3Instance;
pub use isolated::IsolatedInstance;
pub use load::{Fmu, Interface};
pub use me::MeInstance;
pub use value::{Shape, Value, ValueType};

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    /// An instance whose every step is discarded; it answers fmi2Terminated with `terminated`
    /// (`None`: it cannot answer) and fmi2LastSuccessfulTime with `last`.
    struct Ends {
        terminated: Option<bool>,
        last: Option<f64>,
    }

    impl FmuInstance for Ends {
        fn name(&self) -> &str {
            "ends"
        }
        fn execute(&mut self, call: Call<'_>) -> Result<()> {
            match call {
                Call::DoStep { t, .. } => Err(MasterError::Call {
                    instance: "ends".into(),
                    function: "fmi2DoStep",
                    time: t,
                    status: "fmi2Discard".into(),
                    last_log: String::new(),
                }),
                Call::GetBooleanStatus { kind: call::status_kind::TERMINATED, out } if self.terminated.is_some() => {
                    *out = self.terminated.unwrap_or(false);
                    Ok(())
                }
                Call::GetRealStatus { kind: call::status_kind::LAST_SUCCESSFUL_TIME, out } if self.last.is_some() => {
                    *out = self.last.unwrap_or(f64::NAN);
                    Ok(())
                }
                other => Err(other.unsupported("ends")),
            }
        }
        fn can_interpolate_inputs(&self) -> bool {
            false
        }
    }

    fn step(terminated: Option<bool>, last: Option<f64>) -> MasterError {
        Ends { terminated, last }.do_step(0.5, 0.1).unwrap_err()
    }

    #[test]
    fn a_discard_with_fmi2_terminated_is_a_termination_at_the_last_successful_time() {
        match step(Some(true), Some(0.55)) {
            MasterError::Terminated { instance, time } => assert_eq!((instance.as_str(), time), ("ends", 0.55)),
            e => panic!("{e}"),
        }
        assert_eq!(step(Some(true), Some(0.55)).to_string(), "terminated by ends at t = 0.55");
        // No or a nonsensical last successful time: the step's start.
        assert!(matches!(step(Some(true), None), MasterError::Terminated { time, .. } if time == 0.5));
        assert!(matches!(step(Some(true), Some(7.0)), MasterError::Terminated { time, .. } if time == 0.5));
        assert!(matches!(step(Some(true), Some(f64::NAN)), MasterError::Terminated { time, .. } if time == 0.5));
        // Not terminated, or cannot tell: the discard stays an error.
        for e in [step(Some(false), Some(0.55)), step(None, Some(0.55))] {
            assert!(e.is_discard(), "{e}");
        }
    }
}
