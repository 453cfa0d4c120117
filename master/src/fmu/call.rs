//! [`Call`]: every FMU operation the master makes, as one value. The list below is the only list
//! of FMU calls: [`super::FmuInstance::execute`] is the one dispatch point every instance implements,
//! the typed methods ([`super::FmuInstance::set_real`], …) build a `Call`, the isolated protocol
//! encodes and decodes a `Call` (its op codes are [`Op`]'s), and `cosim bench` records and
//! replays `Call`s. [`Op`] (the operation without its arguments) is generated from the same list,
//! so adding a call here makes the compiler point at every place that must handle it.

use crate::error::MasterError;

/// Defines [`Call`] and [`Op`] from one list: `Variant { fields } = op code, "fmi2Function";`.
macro_rules! calls {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident $({ $($field:ident : $ty:ty),* $(,)? })? = $code:literal, $function:literal;
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

            /// The FMI function this operation calls (named in errors).
            pub const fn function(self) -> &'static str {
                match self {
                    $( Op::$variant => $function, )*
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

calls! {
    /// `fmi2SetupExperiment` (no tolerance, start, optional stop).
    Setup { start: f64, stop: Option<f64> } = 1, "fmi2SetupExperiment";
    /// `fmi2EnterInitializationMode`.
    EnterInitialization = 2, "fmi2EnterInitializationMode";
    /// `fmi2ExitInitializationMode`.
    ExitInitialization = 3, "fmi2ExitInitializationMode";
    /// `fmi2GetReal`.
    GetReal { vr: &'a [u32], out: &'a mut [f64] } = 4, "fmi2GetReal";
    /// `fmi2SetReal`.
    SetReal { vr: &'a [u32], values: &'a [f64] } = 5, "fmi2SetReal";
    /// `fmi2GetInteger` (also Enumerations).
    GetInteger { vr: &'a [u32], out: &'a mut [i32] } = 6, "fmi2GetInteger";
    /// `fmi2SetInteger`.
    SetInteger { vr: &'a [u32], values: &'a [i32] } = 7, "fmi2SetInteger";
    /// `fmi2GetBoolean`.
    GetBoolean { vr: &'a [u32], out: &'a mut [bool] } = 8, "fmi2GetBoolean";
    /// `fmi2SetBoolean`.
    SetBoolean { vr: &'a [u32], values: &'a [bool] } = 9, "fmi2SetBoolean";
    /// `fmi2GetString`; `out` is replaced by the values.
    GetString { vr: &'a [u32], out: &'a mut Vec<String> } = 10, "fmi2GetString";
    /// `fmi2SetString`.
    SetString { vr: &'a [u32], values: &'a [&'a str] } = 11, "fmi2SetString";
    /// `fmi2SetRealInputDerivatives` (one order for all given references).
    SetInputDerivatives { vr: &'a [u32], order: i32, values: &'a [f64] } = 12, "fmi2SetRealInputDerivatives";
    /// `fmi2DoStep(t, h, noSetFMUStatePriorToCurrentPoint = true)`.
    DoStep { t: f64, h: f64 } = 13, "fmi2DoStep";
    /// `fmi2Terminate`.
    Terminate = 14, "fmi2Terminate";
    /// `fmi2GetFMUstate` into the instance's one saved-state slot (reused: a later save
    /// overwrites it; the instance frees it when dropped).
    SaveState = 15, "fmi2GetFMUstate";
    /// `fmi2SetFMUstate` from the state saved last.
    RestoreState = 16, "fmi2SetFMUstate";
    /// `fmi2GetBooleanStatus(kind)` (asked after a discarded step: [`status_kind::TERMINATED`]).
    GetBooleanStatus { kind: i32, out: &'a mut bool } = 17, "fmi2GetBooleanStatus";
    /// `fmi2GetRealStatus(kind)` (asked after a termination: [`status_kind::LAST_SUCCESSFUL_TIME`]).
    GetRealStatus { kind: i32, out: &'a mut f64 } = 18, "fmi2GetRealStatus";
    /// `fmi3GetBinary` (FMI 3.0 only): each value's bytes copied into the `out` buffer of the same
    /// position (cleared first; no allocation once a buffer has grown to the value's size).
    GetBinary { vr: &'a [u32], out: &'a mut [Vec<u8>] } = 19, "fmi3GetBinary";
    /// `fmi3SetBinary` (FMI 3.0 only).
    SetBinary { vr: &'a [u32], values: &'a [&'a [u8]] } = 20, "fmi3SetBinary";
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
            Call::GetReal { vr, out } => Call::GetReal { vr, out },
            Call::SetReal { vr, values } => Call::SetReal { vr, values },
            Call::GetInteger { vr, out } => Call::GetInteger { vr, out },
            Call::SetInteger { vr, values } => Call::SetInteger { vr, values },
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
        let op = self.op();
        let message = match op {
            Op::SaveState | Op::RestoreState => {
                "this instance cannot save and restore its state (iterative coupling needs canGetAndSetFMUstate)"
                    .to_owned()
            }
            _ => format!("this instance does not implement {}", op.function()),
        };
        MasterError::Worker { instance: instance.to_owned(), function: op.function(), time: f64::NAN, message }
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
            let binary = matches!(op, Op::GetBinary | Op::SetBinary);
            assert!(op.function().starts_with(if binary { "fmi3" } else { "fmi2" }));
        }
        assert_eq!(Op::from_code(0), None);
        assert_eq!(Op::from_code(Op::ALL.len() as u8 + 1), None);
        assert_eq!(Call::SaveState.op().function(), "fmi2GetFMUstate");
        let mut out = [0.0; 2];
        assert_eq!(Call::GetReal { vr: &[1, 2], out: &mut out }.op(), Op::GetReal);
    }
}
