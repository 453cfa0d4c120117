//! The instance handle behind an `fmi2Component` and an `fmi3Instance`, the same for both FMI
//! versions: the pointer an importer holds, what it points to (the [`Component`] with the
//! state machine, logging, value checks and FMU states, plus whatever one API keeps beside it,
//! e.g. the FMI 3.0 variable types), the set of live handles, the catching of panics at every
//! entry point, and the conversion of C arguments. The entry points of [`crate::fmi2`] and
//! [`crate::fmi3`] sit beside each other over this module; neither imports the other.
//!
//! This module, [`crate::common`], [`crate::fmi2`] and [`crate::fmi3::ffi`] are the only places
//! of the workspace's FMU side with `unsafe` code.
#![allow(clippy::missing_safety_doc)] // the safety contract is the FMI standards', stated once here

use crate::component::Component;
use crate::factory::Fmu;
use crate::types::Status;
use std::any::TypeId;
use std::collections::HashSet;
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

/// Marks a live handle (and a live FMU state, [`crate::common`]).
pub(crate) const SLOT_MAGIC: u64 = 0x4843_4f53_494d_3230; // "HCOSIM20"

/// What every handle starts with, whichever API made it.
#[repr(C)]
struct Head {
    magic: u64,
    /// The type of the API's data beside the component (`()` for FMI 2.0).
    api: TypeId,
    /// Frees the whole handle, knowing the type of its API data.
    free: unsafe fn(*mut Head),
    inner: Box<dyn Component>,
}

/// What an `fmi2Component` or `fmi3Instance` points to: the head, then the data of the API
/// that instantiated it (`repr(C)`: the head is at offset 0, so any handle can be read as one).
#[repr(C)]
struct Handle<X> {
    head: Head,
    api: X,
}

/// Publishes a new instance made by an API that keeps `api` beside it: the pointer handed to
/// the importer.
pub(crate) fn register<X: Send + 'static>(inner: Box<dyn Component>, api: X) -> *mut c_void {
    let head = Head { magic: SLOT_MAGIC, api: TypeId::of::<X>(), free: free_as::<X>, inner };
    let p = Box::into_raw(Box::new(Handle { head, api }));
    live(|s| s.insert(p as usize));
    p.cast()
}

/// Drops the handle at `p`, a `Handle<X>`.
unsafe fn free_as<X>(p: *mut Head) {
    // SAFETY: `p` came from `Box::into_raw` of a `Handle<X>` in `register`, which stored this
    // function (monomorphized for that `X`) in its head.
    drop(unsafe { Box::from_raw(p.cast::<Handle<X>>()) });
}

/// Live handles of this process, so that a second free of the same pointer is ignored instead
/// of freeing memory twice. Touched only by instantiate and free.
static LIVE: Mutex<Option<HashSet<usize>>> = Mutex::new(None);

fn live(f: impl FnOnce(&mut HashSet<usize>) -> bool) -> bool {
    match LIVE.lock() {
        Ok(mut g) => f(g.get_or_insert_with(HashSet::new)),
        Err(poisoned) => f(poisoned.into_inner().get_or_insert_with(HashSet::new)),
    }
}

/// Frees the handle `c` (any API's): NULL and already-freed pointers are ignored.
pub(crate) unsafe fn free(c: *mut c_void) {
    if c.is_null() || !live(|s| s.remove(&(c as usize))) {
        return;
    }
    let _ = catch_unwind(AssertUnwindSafe(|| {
        let head = c.cast::<Head>();
        // SAFETY: `c` came from `Box::into_raw` in `register` and was live until just now; its
        // head is at offset 0 and records how to free it.
        unsafe {
            (*head).magic = 0;
            ((*head).free)(head);
        }
    }));
}

/// What the library allocated for the whole process, freed when it is unloaded: every model's
/// description table and the set of live handles (see [`crate::export_fmi2`]'s unload hook).
///
/// # Safety
/// Only at unload: no instance may be used after.
pub unsafe fn release(fmus: &[&dyn Fmu]) {
    for f in fmus {
        // SAFETY: forwarded from the caller.
        unsafe { f.release() };
    }
    let set = match LIVE.lock() {
        Ok(mut g) => g.take(),
        Err(poisoned) => poisoned.into_inner().take(),
    };
    drop(set);
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// Runs `f` on the component behind `c` (a handle of any API), catching panics. NULL or
/// foreign pointers give `Error` (there is no logger to tell, as the instance is unknown).
#[inline(always)] // the hot getters, setters and doStep: no call layer between the entry point and the component
pub(crate) unsafe fn with(c: *mut c_void, function: &str, f: impl FnOnce(&mut dyn Component) -> Status) -> Status {
    // SAFETY: a non-null `c` was returned by an instantiate function of ours and not yet freed
    // (the FMI contract); the magic check rejects most other pointers handed in by mistake.
    let Some(head) = (unsafe { c.cast::<Head>().as_mut() }) else { return Status::Error };
    if head.magic != SLOT_MAGIC {
        return Status::Error;
    }
    guarded(&mut head.inner, function, f)
}

/// As [`with`], with the data the API `X` keeps beside the component: `None` when another API
/// made the handle.
#[inline(always)] // as `with`
pub(crate) unsafe fn with_api<X: 'static>(
    c: *mut c_void,
    function: &str,
    f: impl FnOnce(&mut dyn Component, Option<&X>) -> Status,
) -> Status {
    let head = c.cast::<Head>();
    // SAFETY: as in `with`: NULL, a live handle, or a foreign pointer the magic check rejects.
    if head.is_null() || unsafe { (*head).magic } != SLOT_MAGIC {
        return Status::Error;
    }
    // SAFETY: a live handle; its head records the type of its API data.
    if unsafe { (*head).api } == TypeId::of::<X>() {
        // SAFETY: the handle is a `Handle<X>` (checked just above).
        let h = unsafe { &mut *c.cast::<Handle<X>>() };
        let api = &h.api;
        guarded(&mut h.head.inner, function, |comp| f(comp, Some(api)))
    } else {
        // SAFETY: as above; only the head is used.
        let head = unsafe { &mut *head };
        guarded(&mut head.inner, function, |comp| f(comp, None))
    }
}

/// Runs `f` on `inner`; a panic puts the instance in the error state and gives `Error`.
#[inline(always)]
fn guarded(inner: &mut Box<dyn Component>, function: &str, f: impl FnOnce(&mut dyn Component) -> Status) -> Status {
    match catch_unwind(AssertUnwindSafe(|| f(&mut **inner))) {
        Ok(s) => s,
        Err(p) => {
            let msg = panic_text(&*p);
            let _ = catch_unwind(AssertUnwindSafe(|| inner.poison(function, &msg)));
            Status::Error
        }
    }
}

/// A C string as `&str` (None for NULL or invalid UTF-8).
pub(crate) unsafe fn text<'a>(p: *const c_char) -> Option<&'a str> {
    if p.is_null() {
        return None;
    }
    // SAFETY: the caller passes a NUL-terminated string (FMI 2.0 fmi2String) valid for the call.
    unsafe { CStr::from_ptr(p) }.to_str().ok()
}

/// `n` elements at `p`; an empty slice for `n == 0` whatever `p` is; None for NULL with n > 0.
pub(crate) unsafe fn slice<'a, T>(p: *const T, n: usize) -> Option<&'a [T]> {
    if n == 0 {
        return Some(&[]);
    }
    if p.is_null() || n > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return None;
    }
    // SAFETY: the importer passes an array of n elements (FMI 2.0 argument contract).
    Some(unsafe { std::slice::from_raw_parts(p, n) })
}

/// As [`slice`], mutable.
pub(crate) unsafe fn slice_mut<'a, T>(p: *mut T, n: usize) -> Option<&'a mut [T]> {
    if n == 0 {
        return Some(&mut []);
    }
    if p.is_null() || n > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        return None;
    }
    // SAFETY: the importer passes a writable array of n elements (FMI 2.0 argument contract).
    Some(unsafe { std::slice::from_raw_parts_mut(p, n) })
}

/// `comp.fail(function, "argument NAME is NULL")`.
macro_rules! null_arg {
    ($comp:expr, $f:expr, $name:expr) => {
        $comp.fail($f, &format!("argument {} is NULL", $name))
    };
}
pub(crate) use null_arg;
