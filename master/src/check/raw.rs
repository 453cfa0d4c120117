//! The calls `cosim check` makes that the [`crate::fmu::FmuInstance`] API does not (illegal calls
//! whose raw status is the evidence, FMU state serialization, NULL arguments), for an
//! [`Instance`] of either FMI version: each returns the function's raw status, calling the
//! version's own function (`fmi2DoStep` or `fmi3DoStep`, …). A Model Exchange instance has none
//! of the Co-Simulation calls (NOT_CALLED); its FMU states are its inner instance's (the `me-state`
//! check).

use crate::fmu::ffi::NOT_CALLED;
use crate::fmu::{Fmu, Instance};
use std::ffi::c_int;

/// `fmi2DoStep` / `fmi3DoStep(t, h)`: its status.
pub fn do_step(s: &mut Instance, t: f64, h: f64) -> c_int {
    match s {
        Instance::Fmi2(i) => i.raw().do_step(t, h, true),
        Instance::Fmi3(i) => i.raw.do_step(t, h, true).0,
        Instance::Me2(_) | Instance::Me3(_) => NOT_CALLED,
    }
}

/// `fmi2ExitInitializationMode` / `fmi3ExitInitializationMode`: its status.
pub fn exit_initialization_mode(s: &mut Instance) -> c_int {
    match s {
        Instance::Fmi2(i) => i.raw().exit_initialization_mode(),
        Instance::Fmi3(i) => i.raw.exit_initialization_mode(),
        Instance::Me2(_) | Instance::Me3(_) => NOT_CALLED,
    }
}

/// `fmi2GetReal` / `fmi3GetFloat64` of `vr` (no type lookup: an unknown reference goes to the
/// FMU as it is): its status.
pub fn get_real(s: &mut Instance, vr: &[u32], out: &mut [f64]) -> c_int {
    match s {
        Instance::Fmi2(i) => i.raw().get_real(vr, out),
        Instance::Fmi3(i) => {
            let get = i.raw.api().get_float64;
            i.raw.get(get, vr, out)
        }
        Instance::Me2(_) | Instance::Me3(_) => NOT_CALLED,
    }
}

/// `fmi2SetReal` / `fmi3SetFloat64` of `vr`: its status.
pub fn set_real(s: &mut Instance, vr: &[u32], values: &[f64]) -> c_int {
    match s {
        Instance::Fmi2(i) => i.raw().set_real(vr, values),
        Instance::Fmi3(i) => {
            let set = i.raw.api().set_float64;
            i.raw.set(set, vr, values)
        }
        Instance::Me2(_) | Instance::Me3(_) => NOT_CALLED,
    }
}

/// Serializes the saved state: (status, bytes).
pub fn serialize_saved(s: &mut Instance) -> (c_int, Vec<u8>) {
    match s {
        Instance::Fmi2(i) => i.raw().serialize_saved(),
        Instance::Fmi3(i) => i.raw.serialize_saved(),
        Instance::Me2(i) => i.inner_mut().raw().serialize_saved(),
        Instance::Me3(i) => i.inner_mut().raw.serialize_saved(),
    }
}

/// Deserializes `bytes` into the saved state slot: its status.
pub fn deserialize_into_saved(s: &mut Instance, bytes: &[u8]) -> c_int {
    match s {
        Instance::Fmi2(i) => i.raw().deserialize_into_saved(bytes),
        Instance::Fmi3(i) => i.raw.deserialize_into_saved(bytes),
        Instance::Me2(i) => i.inner_mut().raw().deserialize_into_saved(bytes),
        Instance::Me3(i) => i.inner_mut().raw.deserialize_into_saved(bytes),
    }
}

/// Frees the saved state: its status.
pub fn free_saved_state(s: &mut Instance) -> c_int {
    match s {
        Instance::Fmi2(i) => i.raw().free_saved_state(),
        Instance::Fmi3(i) => i.raw.free_saved_state(),
        Instance::Me2(i) => i.inner_mut().raw().free_saved_state(),
        Instance::Me3(i) => i.inner_mut().raw.free_saved_state(),
    }
}

/// `fmi2GetDirectionalDerivative` of `unknowns` with respect to `knowns` (seed `dv`) into `out`
/// (FMI 2.0 instances; NOT_CALLED for others).
pub fn directional_derivative(
    s: &mut Instance,
    unknowns: &[u32],
    knowns: &[u32],
    dv: &[f64],
    out: &mut [f64],
) -> c_int {
    match s {
        Instance::Fmi2(i) => i.raw().get_directional_derivative(unknowns, knowns, dv, out),
        Instance::Me2(i) => i.inner_mut().raw().get_directional_derivative(unknowns, knowns, dv, out),
        Instance::Fmi3(i) => i.raw.get_directional_derivative(unknowns, knowns, dv, out),
        Instance::Me3(i) => i.inner_mut().raw.get_directional_derivative(unknowns, knowns, dv, out),
    }
}

/// `fmi2FreeFMUstate` / `fmi3FreeFMUState` of a NULL state: its status.
pub fn free_null_state(s: &mut Instance) -> c_int {
    match s {
        Instance::Fmi2(i) => i.raw().free_null_state(),
        Instance::Fmi3(i) => i.raw.free_null_state(),
        Instance::Me2(_) | Instance::Me3(_) => NOT_CALLED,
    }
}

/// `fmi2FreeInstance(NULL)` / `fmi3FreeInstance(NULL)`.
pub fn free_null_instance(fmu: &Fmu) {
    if let Some(b) = fmu.binary() {
        b.free_null_instance();
    } else if let Some(b) = fmu.binary3() {
        b.free_null_instance();
    }
}

/// Instantiates `fmu` with a GUID / instantiation token that is not its own: whether the FMU
/// returned an instance (which is freed at once).
pub fn instantiate_with_wrong_guid(fmu: &Fmu) -> bool {
    const WRONG: &str = "{not-the-guid-of-this-fmu}";
    if let Some(b) = fmu.binary() {
        crate::fmu::ffi::Instance::new(b, "wrong-guid", WRONG, fmu.resource_uri(), false, None).is_ok()
    } else if let Some(b) = fmu.binary3() {
        crate::fmu::ffi3::Instance3::new(b, "wrong-guid", WRONG, fmu.resource_uri(), false, None, Default::default())
            .is_ok()
    } else {
        false
    }
}

/// The FMI 3.0 names of the FMI 2.0 functions in `text` (the checks and their evidence name the
/// 2.0 functions; a 3.0 FMU's report names the functions that were called).
pub fn names3(text: &str) -> String {
    const MAP: &[(&str, &str)] = &[
        ("fmi2GetTypesPlatform \"default\", fmi2GetVersion \"2.0\"", "fmi3GetVersion \"3.0\""),
        ("fmi2SetupExperiment", "fmi3EnterInitializationMode(start, stop)"),
        ("fmi2Instantiate", "fmi3InstantiateCoSimulation"),
        ("fmi2GetRealOutputDerivatives", "fmi3GetOutputDerivatives"),
        ("fmi2SetRealInputDerivatives", "fmi3SetInputDerivatives"),
        ("fmi2GetReal", "fmi3GetFloat64"),
        ("fmi2GetDerivatives", "fmi3GetContinuousStateDerivatives"),
        ("fmi2NewDiscreteStates", "fmi3UpdateDiscreteStates"),
        ("fmi2SetReal", "fmi3SetFloat64"),
        ("fmi2GetInteger", "fmi3GetInt*"),
        ("fmi2GetFMUstate", "fmi3GetFMUState"),
        ("fmi2SetFMUstate", "fmi3SetFMUState"),
        ("fmi2FreeFMUstate", "fmi3FreeFMUState"),
        ("fmi2SerializedFMUstateSize", "fmi3SerializedFMUStateSize"),
        ("fmi2SerializeFMUstate", "fmi3SerializeFMUState"),
        ("fmi2DeSerializeFMUstate", "fmi3DeserializeFMUState"),
        ("fmi2Warning", "fmi3Warning"),
        ("fmi2Discard", "fmi3Discard"),
        ("fmi2Error", "fmi3Error"),
        ("fmi2Fatal", "fmi3Fatal"),
        ("fmi2OK", "fmi3OK"),
        ("a wrong GUID", "a wrong instantiation token"),
        ("fmi2", "fmi3"),
    ];
    let mut out = text.to_owned();
    for (from, to) in MAP {
        if out.contains(from) {
            out = out.replace(from, to);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn fmi2_names_become_the_fmi3_functions() {
        let t = super::names3("fmi2DoStep(t = 1) after fmi2SetupExperiment; fmi2GetReal of y: fmi2Error");
        assert_eq!(
            t,
            "fmi3DoStep(t = 1) after fmi3EnterInitializationMode(start, stop); fmi3GetFloat64 of y: fmi3Error"
        );
    }
}
