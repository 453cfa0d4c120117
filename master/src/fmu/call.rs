//! [`Call`]: every FMU operation the master makes, as one value. The list below is the only list
//! of FMU calls: [`super::FmuInstance::execute`] is the one dispatch point every instance implements,
//! the typed methods ([`super::FmuInstance::set_real`], …) build a `Call`, the isolated protocol
//! encodes and decodes a `Call` (its op codes are [`Op`]'s), and `cosim bench` records and
//! replays `Call`s. [`Op`] (the operation without its arguments) is generated from the same list,
//! so adding a call here makes the compiler point at every place that must handle it.

use crate::error::MasterError;

/// Defines [`Call`] and [`Op`] from one list:
/// `Variant { fields } = op code, "fmi2Function", "fmi3Function";` (`""`: the version has no such
/// function; the instance refuses the call naming the operation).
macro_rules! calls {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident $({ $($field:ident : $ty:ty),* $(,)? })? = $code:literal, $f2:literal, $f3:literal;
    )*) => {
        /// One FMU call with its arguments; results are written to the `out` slices.
        #[derive(Debug)]
        #[allow(missing_docs, reason = "fields are the FMI function's arguments: `vr` value references, `values` to set, `out` to get")]
        pub enum Call<'a> {
            $( $(#[doc = $doc])* $variant $({ $($field: $ty),* })?, )*
        }

        /// The operation of a [`Call`] without its arguments; its discriminant is the op code of
        /// the isolated protocol.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum Op {
            $( $(#[doc = $doc])* $variant = $code, )*
        }

        impl Op {
            /// Every operation, in op-code order.
            pub const ALL: &'static [Op] = &[$(Op::$variant),*];

            /// The operation with op code `code`.
            pub const fn from_code(code: u8) -> Option<Op> {
                match code {
                    $( $code => Some(Op::$variant), )*
                    _ => None,
                }
            }

            /// The operation's name, the same for every version (`GetFloat64`).
            pub const fn name(self) -> &'static str {
                match self {
                    $( Op::$variant => stringify!($variant), )*
                }
            }

            /// The FMI function this operation calls in `version` (named in errors), or "" when
            /// that version has none.
            pub const fn function_of(self, version: Version) -> &'static str {
                match (self, version) {
                    $( (Op::$variant, Version::Fmi2) => $f2, (Op::$variant, Version::Fmi3) => $f3, )*
                }
            }
        }

        impl Call<'_> {
            /// The operation.
            #[inline]
            pub const fn op(&self) -> Op {
                match self {
                    $( Call::$variant { .. } => Op::$variant, )*
                }
            }
        }
    };
}

/// The FMI version of an instance: which C API its calls go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    /// FMI 2.0 (`fmi2*`).
    Fmi2,
    /// FMI 3.0 (`fmi3*`).
    Fmi3,
}

impl Op {
    /// The FMI function named in errors: that of `version`, or, where it has none, the
    /// operation's name.
    pub const fn function(self, version: Version) -> &'static str {
        let f = self.function_of(version);
        if f.is_empty() {
            self.name()
        } else {
            f
        }
    }
}

calls! {
    /// `fmi2SetupExperiment` (no tolerance, start, optional stop); FMI 3.0 passes them to
    /// `fmi3EnterInitializationMode`.
    Setup { start: f64, stop: Option<f64> } = 1, "fmi2SetupExperiment", "fmi3EnterInitializationMode";
    /// `fmi2EnterInitializationMode` / `fmi3EnterInitializationMode`.
    EnterInitialization = 2, "fmi2EnterInitializationMode", "fmi3EnterInitializationMode";
    /// `fmi2ExitInitializationMode` / `fmi3ExitInitializationMode`.
    ExitInitialization = 3, "fmi2ExitInitializationMode", "fmi3ExitInitializationMode";
    /// Float64 and Float32 values (`fmi2GetReal`, `fmi3GetFloat64`, `fmi3GetFloat32` widened
    /// exactly; fixed-size array elements).
    GetFloat64 { vr: &'a [u32], out: &'a mut [f64] } = 4, "fmi2GetReal", "fmi3GetFloat64";
    /// `fmi2SetReal`, `fmi3SetFloat64` (`fmi3SetFloat32`: rounded to the nearest `f32`, as the
    /// FMU stores it).
    SetFloat64 { vr: &'a [u32], values: &'a [f64] } = 5, "fmi2SetReal", "fmi3SetFloat64";
    /// Int8…Int64, UInt8…UInt32 and Enumeration values, exact in `i64` (`fmi2GetInteger`,
    /// `fmi3GetInt64`, `fmi3GetInt8`, …).
    GetInt64 { vr: &'a [u32], out: &'a mut [i64] } = 6, "fmi2GetInteger", "fmi3GetInt64";
    /// `fmi2SetInteger`, `fmi3SetInt64`, … (a value outside the variable's type is refused
    /// naming it).
    SetInt64 { vr: &'a [u32], values: &'a [i64] } = 7, "fmi2SetInteger", "fmi3SetInt64";
    /// `fmi2GetBoolean` / `fmi3GetBoolean`.
    GetBoolean { vr: &'a [u32], out: &'a mut [bool] } = 8, "fmi2GetBoolean", "fmi3GetBoolean";
    /// `fmi2SetBoolean` / `fmi3SetBoolean`.
    SetBoolean { vr: &'a [u32], values: &'a [bool] } = 9, "fmi2SetBoolean", "fmi3SetBoolean";
    /// `fmi2GetString` / `fmi3GetString`; `out` is replaced by the values.
    GetString { vr: &'a [u32], out: &'a mut Vec<String> } = 10, "fmi2GetString", "fmi3GetString";
    /// `fmi2SetString` / `fmi3SetString`.
    SetString { vr: &'a [u32], values: &'a [&'a str] } = 11, "fmi2SetString", "fmi3SetString";
    /// `fmi2SetRealInputDerivatives` (one order for all given references; FMI 3.0 has none).
    SetInputDerivatives { vr: &'a [u32], order: i32, values: &'a [f64] } = 12, "fmi2SetRealInputDerivatives", "";
    /// `fmi2DoStep(t, h, noSetFMUStatePriorToCurrentPoint = true)` / `fmi3DoStep`.
    DoStep { t: f64, h: f64 } = 13, "fmi2DoStep", "fmi3DoStep";
    /// `fmi2Terminate` / `fmi3Terminate`.
    Terminate = 14, "fmi2Terminate", "fmi3Terminate";
    /// `fmi2GetFMUstate` / `fmi3GetFMUState` into the instance's one saved-state slot (reused:
    /// a later save overwrites it; the instance frees it when dropped).
    SaveState = 15, "fmi2GetFMUstate", "fmi3GetFMUState";
    /// `fmi2SetFMUstate` / `fmi3SetFMUState` from the state saved last.
    RestoreState = 16, "fmi2SetFMUstate", "fmi3SetFMUState";
    /// After a discarded step: did the instance end the simulation ([`status_kind::TERMINATED`]:
    /// `fmi2GetBooleanStatus`; FMI 3.0: the last `fmi3DoStep`'s `terminateSimulation`).
    GetBooleanStatus { kind: i32, out: &'a mut bool } = 17, "fmi2GetBooleanStatus", "fmi3DoStep";
    /// Where it ended ([`status_kind::LAST_SUCCESSFUL_TIME`]: `fmi2GetRealStatus`; FMI 3.0: the
    /// last `fmi3DoStep`'s `lastSuccessfulTime`).
    GetRealStatus { kind: i32, out: &'a mut f64 } = 18, "fmi2GetRealStatus", "fmi3DoStep";
    /// `fmi3GetBinary` (FMI 3.0 only): each value's bytes copied into the `out` buffer of the same
    /// position (cleared first; no allocation once a buffer has grown to the value's size).
    GetBinary { vr: &'a [u32], out: &'a mut [Vec<u8>] } = 19, "", "fmi3GetBinary";
    /// `fmi3SetBinary` (FMI 3.0 only).
    SetBinary { vr: &'a [u32], values: &'a [&'a [u8]] } = 20, "", "fmi3SetBinary";
    /// UInt64 values (`fmi3GetUInt64`, FMI 3.0 only), exact.
    GetUInt64 { vr: &'a [u32], out: &'a mut [u64] } = 21, "", "fmi3GetUInt64";
    /// `fmi3SetUInt64` (FMI 3.0 only).
    SetUInt64 { vr: &'a [u32], values: &'a [u64] } = 22, "", "fmi3SetUInt64";
    /// `fmi3GetClock` (FMI 3.0 only, in event mode): which output clocks ticked.
    GetClock { vr: &'a [u32], out: &'a mut [bool] } = 23, "", "fmi3GetClock";
    /// `fmi3SetClock` (FMI 3.0 only, in event mode): input clocks that tick now.
    SetClock { vr: &'a [u32], values: &'a [bool] } = 24, "", "fmi3SetClock";
    /// `fmi3EnterEventMode` (FMI 3.0 only; from step mode, continuous-time mode or
    /// initialization's end).
    EnterEventMode = 25, "", "fmi3EnterEventMode";
    /// `fmi3UpdateDiscreteStates` (FMI 3.0 only, in event mode): one iteration of the event
    /// iteration; its outputs in `out`.
    UpdateDiscreteStates { out: &'a mut DiscreteStates } = 26, "", "fmi3UpdateDiscreteStates";
    /// `fmi3EnterStepMode` (FMI 3.0 Co-Simulation only): event mode back to step mode.
    EnterStepMode = 27, "", "fmi3EnterStepMode";
}

/// The outputs of one `fmi3UpdateDiscreteStates` call (FMI 3.0 §3.2.2).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DiscreteStates {
    /// `discreteStatesNeedUpdate`: call `fmi3UpdateDiscreteStates` again.
    pub need_update: bool,
    /// `terminateSimulation`.
    pub terminate: bool,
    /// `nominalsOfContinuousStatesChanged`.
    pub nominals_changed: bool,
    /// `valuesOfContinuousStatesChanged`.
    pub values_changed: bool,
    /// `nextEventTime` when `nextEventTimeDefined`.
    pub next_event_time: Option<f64>,
}

/// `fmi2StatusKind` values (FMI 2.0 §4.2.3), the `kind` of [`Call::GetBooleanStatus`] and
/// [`Call::GetRealStatus`].
pub mod status_kind {
    /// `fmi2DoStepStatus`.
    pub const DO_STEP_STATUS: i32 = 0;
    /// `fmi2PendingStatus`.
    pub const PENDING_STATUS: i32 = 1;
    /// `fmi2LastSuccessfulTime` (Real): the time the instance reached before it ended or discarded.
    pub const LAST_SUCCESSFUL_TIME: i32 = 2;
    /// `fmi2Terminated` (Boolean): the instance wants to end the simulation.
    pub const TERMINATED: i32 = 3;
}

impl Call<'_> {
    /// The same call borrowed for a shorter time, so that `self` (its `out` slices) can be read
    /// after [`super::FmuInstance::execute`] consumed the reborrow.
    #[inline]
    pub fn reborrow(&mut self) -> Call<'_> {
        match self {
            Call::Setup { start, stop } => Call::Setup { start: *start, stop: *stop },
            Call::EnterInitialization => Call::EnterInitialization,
            Call::ExitInitialization => Call::ExitInitialization,
            Call::GetFloat64 { vr, out } => Call::GetFloat64 { vr, out },
            Call::SetFloat64 { vr, values } => Call::SetFloat64 { vr, values },
            Call::GetInt64 { vr, out } => Call::GetInt64 { vr, out },
            Call::SetInt64 { vr, values } => Call::SetInt64 { vr, values },
            Call::GetUInt64 { vr, out } => Call::GetUInt64 { vr, out },
            Call::SetUInt64 { vr, values } => Call::SetUInt64 { vr, values },
            Call::GetClock { vr, out } => Call::GetClock { vr, out },
            Call::SetClock { vr, values } => Call::SetClock { vr, values },
            Call::EnterEventMode => Call::EnterEventMode,
            Call::UpdateDiscreteStates { out } => Call::UpdateDiscreteStates { out },
            Call::EnterStepMode => Call::EnterStepMode,
            Call::GetBoolean { vr, out } => Call::GetBoolean { vr, out },
            Call::SetBoolean { vr, values } => Call::SetBoolean { vr, values },
            Call::GetString { vr, out } => Call::GetString { vr, out },
            Call::SetString { vr, values } => Call::SetString { vr, values },
            Call::SetInputDerivatives { vr, order, values } => Call::SetInputDerivatives { vr, order: *order, values },
            Call::DoStep { t, h } => Call::DoStep { t: *t, h: *h },
            Call::Terminate => Call::Terminate,
            Call::SaveState => Call::SaveState,
            Call::RestoreState => Call::RestoreState,
            Call::GetBooleanStatus { kind, out } => Call::GetBooleanStatus { kind: *kind, out },
            Call::GetRealStatus { kind, out } => Call::GetRealStatus { kind: *kind, out },
            Call::GetBinary { vr, out } => Call::GetBinary { vr, out },
            Call::SetBinary { vr, values } => Call::SetBinary { vr, values },
        }
    }

    /// The error of an instance that does not implement this call (e.g. a test double without
    /// FMU states): [`MasterError::Worker`] naming the instance and the FMI function.
    pub fn unsupported(&self, instance: &str) -> MasterError {
        self.unsupported_in(instance, Version::Fmi2)
    }

    /// [`Call::unsupported`] of an instance of `version`: a call that version has no function
    /// for says so; event mode and clocks say which issue brings them.
    pub fn unsupported_in(&self, instance: &str, version: Version) -> MasterError {
        let op = self.op();
        let function = op.function(version);
        let message = match op {
            Op::SaveState | Op::RestoreState => {
                "this instance cannot save and restore its state (iterative coupling needs canGetAndSetFMUstate)"
                    .to_owned()
            }
            Op::GetClock | Op::SetClock | Op::EnterEventMode | Op::UpdateDiscreteStates | Op::EnterStepMode => {
                format!("{function}: this instance has no event mode (the FMU does not declare it, or does not export {function})")
            }
            _ if op.function_of(version).is_empty() => {
                let v = match version {
                    Version::Fmi2 => "FMI 2.0",
                    Version::Fmi3 => "FMI 3.0",
                };
                format!("{v} has no function for {} (the variable's type does not exist in {v})", op.name())
            }
            _ => format!("this instance does not implement {function}"),
        };
        MasterError::Worker { instance: instance.to_owned(), function, time: f64::NAN, message }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn op_codes_are_unique_and_decode_back() {
        for (i, op) in Op::ALL.iter().enumerate() {
            assert_eq!(Op::from_code(*op as u8), Some(*op));
            assert_eq!(*op as u8 as usize, i + 1, "op codes are 1.. in list order");
            let (f2, f3) = (op.function_of(Version::Fmi2), op.function_of(Version::Fmi3));
            assert!(f2.is_empty() || f2.starts_with("fmi2"), "{f2}");
            assert!(f3.is_empty() || f3.starts_with("fmi3"), "{f3}");
        }
        assert_eq!(Op::from_code(0), None);
        assert_eq!(Op::from_code(Op::ALL.len() as u8 + 1), None);
        assert_eq!(Call::SaveState.op().function(Version::Fmi2), "fmi2GetFMUstate");
        assert_eq!(Op::GetFloat64.function(Version::Fmi3), "fmi3GetFloat64");
        assert_eq!(Op::GetUInt64.function(Version::Fmi2), "GetUInt64");
        let mut out = [0.0; 2];
        assert_eq!(Call::GetFloat64 { vr: &[1, 2], out: &mut out }.op(), Op::GetFloat64);
        let e = Call::EnterEventMode.unsupported_in("a", Version::Fmi3).to_string();
        assert!(e.contains("fmi3EnterEventMode") && e.contains("no event mode"), "{e}");
    }
}
