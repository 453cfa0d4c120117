//! The calls FMI 2.0 and FMI 3.0 share (the same arguments up to the C type names): freeing an
//! instance, debug logging, leaving initialization, terminate, reset and the FMU states. The
//! entry points of both [`crate::fmi2`] and [`crate::fmi3`] call these over the
//! [`crate::handle`]; the messages name the FMI 2.0 functions.
#![allow(clippy::missing_safety_doc)] // the safety contract is the FMI standards'

use crate::component::Snapshot;
use crate::handle::{null_arg, slice, slice_mut, text, with, SLOT_MAGIC};
use crate::types::*;

/// What an `fmi2FMUstate` points to.
struct StateSlot {
    magic: u64,
    state: Snapshot,
}

/// `fmi2FreeInstance` / `fmi3FreeInstance`: NULL and already-freed pointers are ignored.
pub unsafe fn free_instance(c: fmi2Component) {
    // SAFETY: forwarded.
    unsafe { crate::handle::free(c) }
}

/// `fmi2SetDebugLogging`.
pub unsafe fn set_debug_logging(c: fmi2Component, on: fmi2Boolean, n: usize, categories: *const fmi2String) -> Status {
    const F: &str = "fmi2SetDebugLogging";
    // SAFETY: `c` per `with`; `categories` is an array of n strings.
    unsafe {
        with(c, F, |comp| match slice(categories, n) {
            Some(cats) => {
                let names: Vec<Option<&str>> = cats.iter().map(|p| text(*p)).collect();
                comp.set_debug_logging(on != FMI2_FALSE, &names)
            }
            None => null_arg!(comp, F, "categories"),
        })
    }
}

/// `fmi2ExitInitializationMode`.
pub unsafe fn exit_initialization_mode(c: fmi2Component) -> Status {
    // SAFETY: see `with`.
    unsafe { with(c, "fmi2ExitInitializationMode", |comp| comp.exit_initialization_mode()) }
}

/// `fmi2Terminate`.
pub unsafe fn terminate(c: fmi2Component) -> Status {
    // SAFETY: see `with`.
    unsafe { with(c, "fmi2Terminate", |comp| comp.terminate()) }
}

/// `fmi2Reset`.
pub unsafe fn reset(c: fmi2Component) -> Status {
    // SAFETY: see `with`.
    unsafe { with(c, "fmi2Reset", |comp| comp.reset()) }
}

/// The snapshot behind an `fmi2FMUstate`, if it is one of ours.
unsafe fn state_slot<'a>(s: fmi2FMUstate) -> Option<&'a mut StateSlot> {
    // SAFETY: a non-null state came from our fmi2GetFMUstate/fmi2DeSerializeFMUstate and was not
    // freed (FMI 2.0 contract); the magic check rejects most foreign pointers.
    let slot = unsafe { (s as *mut StateSlot).as_mut() }?;
    (slot.magic == SLOT_MAGIC).then_some(slot)
}

fn new_state(state: Snapshot) -> fmi2FMUstate {
    Box::into_raw(Box::new(StateSlot { magic: SLOT_MAGIC, state })).cast()
}

/// `fmi2GetFMUstate`: a new state if `*state` is NULL, else overwrites that state.
pub unsafe fn get_fmu_state(c: fmi2Component, state: *mut fmi2FMUstate) -> Status {
    const F: &str = "fmi2GetFMUstate";
    // SAFETY: `c` per `with`; `state` points to a writable fmi2FMUstate.
    unsafe {
        with(c, F, |comp| {
            let Some(out) = state.as_mut() else { return null_arg!(comp, F, "FMUstate") };
            let reuse = if out.is_null() { None } else { state_slot(*out) };
            if !out.is_null() && reuse.is_none() {
                return comp.fail(F, "*FMUstate is neither NULL nor a state returned by this FMU");
            }
            match comp.get_fmu_state(reuse.map(|s| &mut s.state)) {
                Ok(Some(fresh)) => {
                    *out = new_state(fresh);
                    Status::Ok
                }
                Ok(None) => Status::Ok,
                Err(s) => s,
            }
        })
    }
}

/// `fmi2SetFMUstate`.
pub unsafe fn set_fmu_state(c: fmi2Component, state: fmi2FMUstate) -> Status {
    const F: &str = "fmi2SetFMUstate";
    // SAFETY: `c` per `with`; `state` per `state_slot`.
    unsafe {
        with(c, F, |comp| match state_slot(state) {
            Some(s) => comp.set_fmu_state(&s.state),
            None => comp.fail(F, "FMUstate is NULL or not a state returned by this FMU"),
        })
    }
}

/// `fmi2FreeFMUstate`: frees `*state` and sets it to NULL; NULL is accepted.
pub unsafe fn free_fmu_state(c: fmi2Component, state: *mut fmi2FMUstate) -> Status {
    const F: &str = "fmi2FreeFMUstate";
    // SAFETY: `c` per `with`; `state` points to an fmi2FMUstate we returned, or NULL.
    unsafe {
        with(c, F, |comp| {
            let Some(p) = state.as_mut() else { return Status::Ok };
            if p.is_null() {
                return Status::Ok;
            }
            let Some(slot) = state_slot(*p) else {
                return comp.fail(F, "*FMUstate is not a state returned by this FMU");
            };
            let status = comp.check_fmu_state(F, &slot.state);
            if status == Status::Ok {
                slot.magic = 0;
                drop(Box::from_raw(*p as *mut StateSlot));
                *p = std::ptr::null_mut();
            }
            status
        })
    }
}

/// `fmi2SerializedFMUstateSize`.
pub unsafe fn serialized_fmu_state_size(c: fmi2Component, state: fmi2FMUstate, size: *mut usize) -> Status {
    const F: &str = "fmi2SerializedFMUstateSize";
    // SAFETY: `c` per `with`; `state` per `state_slot`; `size` writable.
    unsafe {
        with(c, F, |comp| {
            let Some(size) = size.as_mut() else { return null_arg!(comp, F, "size") };
            let Some(slot) = state_slot(state) else {
                return comp.fail(F, "FMUstate is NULL or not a state returned by this FMU");
            };
            match comp.serialize_fmu_state(&slot.state) {
                Ok(bytes) => {
                    *size = bytes.len();
                    Status::Ok
                }
                Err(s) => s,
            }
        })
    }
}

/// `fmi2SerializeFMUstate`.
pub unsafe fn serialize_fmu_state(c: fmi2Component, state: fmi2FMUstate, out: *mut fmi2Byte, size: usize) -> Status {
    const F: &str = "fmi2SerializeFMUstate";
    // SAFETY: `c` per `with`; `state` per `state_slot`; `out` has `size` writable bytes.
    unsafe {
        with(c, F, |comp| {
            let Some(slot) = state_slot(state) else {
                return comp.fail(F, "FMUstate is NULL or not a state returned by this FMU");
            };
            let bytes = match comp.serialize_fmu_state(&slot.state) {
                Ok(b) => b,
                Err(s) => return s,
            };
            if bytes.len() != size {
                return comp.fail(
                    F,
                    &format!("size = {size} but the state needs {} bytes (fmi2SerializedFMUstateSize)", bytes.len()),
                );
            }
            let Some(out) = slice_mut(out.cast::<u8>(), size) else { return null_arg!(comp, F, "serializedState") };
            out.copy_from_slice(&bytes);
            Status::Ok
        })
    }
}

/// `fmi2DeSerializeFMUstate`.
pub unsafe fn deserialize_fmu_state(
    c: fmi2Component,
    bytes: *const fmi2Byte,
    size: usize,
    state: *mut fmi2FMUstate,
) -> Status {
    const F: &str = "fmi2DeSerializeFMUstate";
    // SAFETY: `c` per `with`; `bytes` has `size` readable bytes; `state` writable.
    unsafe {
        with(c, F, |comp| {
            let Some(out) = state.as_mut() else { return null_arg!(comp, F, "FMUstate") };
            let Some(bytes) = slice(bytes.cast::<u8>(), size) else { return null_arg!(comp, F, "serializedState") };
            match comp.deserialize_fmu_state(bytes) {
                Ok(snapshot) => {
                    // An existing state of ours is overwritten, as fmi2GetFMUstate does.
                    match (!out.is_null()).then(|| state_slot(*out)).flatten() {
                        Some(slot) => slot.state = snapshot,
                        None => *out = new_state(snapshot),
                    }
                    Status::Ok
                }
                Err(s) => s,
            }
        })
    }
}
