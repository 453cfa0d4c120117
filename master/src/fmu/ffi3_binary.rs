//! FMI 3.0 Binary values (`fmi3GetBinary`/`fmi3SetBinary`), which have no FMI 2.0 function to
//! stand behind: called by `Instance::get_binary`/`set_binary` directly with the adapter.

use super::{adapter, arr, Component, Type3, Vr, ERROR, OK, WARNING};
use std::ffi::c_int;

/// `fmi3GetBinary`, one value reference per call: each value's bytes are copied into its `out`
/// buffer at once (the FMU's pointer is only valid until its next call); a NULL value reads as
/// empty. No allocation once the buffers have grown.
///
/// # Safety
/// `c` per [`adapter`].
pub(in crate::fmu) unsafe fn get_binary(c: Component, vr: &[Vr], out: &mut [Vec<u8>]) -> c_int {
    // SAFETY: per this function's contract.
    let Some(a) = (unsafe { adapter(c) }) else { return ERROR };
    let Some(get) = a.api().get_binary else { return a.say(ERROR, "the binary does not export fmi3GetBinary") };
    let mut status = OK;
    for (r, o) in vr.iter().zip(out) {
        if a.ty(*r) != Some(Type3::Binary) {
            return a.wrong(*r, "Binary");
        }
        let (mut size, mut value) = (0usize, std::ptr::null::<u8>());
        // SAFETY: the live instance; one reference, one size and one pointer to write.
        let s = unsafe { get(a.inst, r, 1, &mut size, &mut value, 1) };
        if s > WARNING {
            return s;
        }
        o.clear();
        // SAFETY: on success `value` points to `size` bytes of the FMU, valid until its next call.
        o.extend_from_slice(unsafe { arr(value, size) });
        status = status.max(s);
    }
    status
}

/// `fmi3SetBinary`, one value reference per call (no allocation).
///
/// # Safety
/// `c` per [`adapter`].
pub(in crate::fmu) unsafe fn set_binary(c: Component, vr: &[Vr], values: &[&[u8]]) -> c_int {
    // SAFETY: per this function's contract.
    let Some(a) = (unsafe { adapter(c) }) else { return ERROR };
    let Some(set) = a.api().set_binary else { return a.say(ERROR, "the binary does not export fmi3SetBinary") };
    let mut status = OK;
    for (r, v) in vr.iter().zip(values) {
        if a.ty(*r) != Some(Type3::Binary) {
            return a.wrong(*r, "Binary");
        }
        // SAFETY: the live instance; one reference, its size and a pointer to that many bytes,
        // which outlive the call (the FMU copies them).
        let s = unsafe { set(a.inst, r, 1, &v.len(), &v.as_ptr(), 1) };
        if s > WARNING {
            return s;
        }
        status = status.max(s);
    }
    status
}
