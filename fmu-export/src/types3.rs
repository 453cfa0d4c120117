//! The C types of the FMI 3.0 headers (`fmi3PlatformTypes.h`, `fmi3FunctionTypes.h`) that the
//! export layer uses, beside the FMI 2.0 ones of [`crate::types`]; [`crate::fmi3`] re-exports
//! them. (The logger, below both APIs, sends to an `fmi3LogMessageCallback`.)
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

/// `fmi3Instance`.
pub type fmi3Instance = *mut c_void;
/// `fmi3InstanceEnvironment`.
pub type fmi3InstanceEnvironment = *mut c_void;
/// `fmi3FMUState`.
pub type fmi3FMUState = *mut c_void;
/// `fmi3ValueReference`.
pub type fmi3ValueReference = u32;
/// `fmi3String`.
pub type fmi3String = *const c_char;
/// `fmi3Byte`.
pub type fmi3Byte = u8;
/// `fmi3Binary`.
pub type fmi3Binary = *const u8;
/// `fmi3Clock` (C `bool`).
pub type fmi3Clock = bool;
/// `fmi3Boolean` as it arrives in arrays: C `bool` (one byte, 0 or 1), read as bytes so that
/// an importer's other nonzero byte is `true` instead of undefined behaviour.
pub type fmi3BooleanIn = u8;
/// `fmi3LogMessageCallback`.
pub type LogMessageCallback =
    unsafe extern "C" fn(fmi3InstanceEnvironment, crate::types::Status, fmi3String, fmi3String);
