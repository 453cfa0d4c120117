//! Family 5, FMU states: get, step, set, the same steps bit-identical (what iterative coupling
//! relies on); serialize into bytes, deserialize into a new instance, the same continuation.

use super::probe::{Probe, Rows};
use super::raw;
use super::Outcome;
use crate::fmu::{ffi, FmuInstance};

/// `fmi2GetFMUstate` at the middle of the short run, the rest of the run, `fmi2SetFMUstate`, the
/// rest again: bit-identical (outputs right after the restore included); the state freed.
pub fn restore(p: &mut Probe) -> Outcome {
    if !p.cs().can_get_and_set_fmu_state {
        return Outcome::skip("canGetAndSetFMUstate = false");
    }
    restore_declared(p)
}

/// [`restore`] of an FMU that declares `canGetAndSetFMUstate` (in the interface `p` has loaded).
pub fn restore_declared(p: &mut Probe) -> Outcome {
    let n = p.plan.short_steps.max(2);
    let k0 = n / 2;
    let go = || -> Result<Outcome, String> {
        let mut s = p.instantiate("state")?;
        p.init(&mut s)?;
        p.run(&mut s, 0, k0)?;
        let mut first = vec![p.read(&mut s)?];
        p.note(format_args!("fmi2GetFMUstate at t = {}", p.time(k0)));
        s.save_state().map_err(|e| e.to_string())?;
        first.extend(p.run(&mut s, k0, n)?);
        p.note(format_args!("fmi2SetFMUstate (back to t = {})", p.time(k0)));
        s.restore_state().map_err(|e| e.to_string())?;
        let mut again = vec![p.read(&mut s)?];
        again.extend(p.run(&mut s, k0, n)?);
        if let Some(d) = p.diff(&first, &again, k0) {
            return Ok(Outcome::fail(format!(
                "the state saved at t = {} does not restore: the steps after fmi2SetFMUstate differ {d}",
                p.time(k0)
            )));
        }
        p.note("fmi2FreeFMUstate");
        let st = raw::free_saved_state(&mut s);
        p.note("fmi2Terminate");
        s.terminate().map_err(|e| e.to_string())?;
        let text = format!(
            "saved at t = {}, {} steps, restored, the same steps bit-identical ({} values)",
            p.time(k0),
            n - k0,
            Probe::count(&first)
        );
        if st > ffi::WARNING {
            return Ok(Outcome::warn(format!("{text}; fmi2FreeFMUstate returned {}", ffi::status_name(st))));
        }
        Ok(Outcome::pass(format!("{text}; state freed")))
    };
    go().unwrap_or_else(Outcome::fail)
}

/// The state at the middle of the short run serialized, deserialized into a new (initialized)
/// instance and set there: its continuation is bit-identical to the original's.
pub fn serialize(p: &mut Probe) -> Outcome {
    if !p.cs().can_serialize_fmu_state || !p.cs().can_get_and_set_fmu_state {
        return Outcome::skip("canSerializeFMUstate = false");
    }
    serialize_declared(p)
}

/// [`serialize`] of an FMU that declares `canSerializeFMUstate` (in the interface `p` has loaded).
pub fn serialize_declared(p: &mut Probe) -> Outcome {
    let n = p.plan.short_steps.max(2);
    let k0 = n / 2;
    let go = || -> Result<Outcome, String> {
        let mut a = p.instantiate("original")?;
        p.init(&mut a)?;
        p.run(&mut a, 0, k0)?;
        p.note("fmi2GetFMUstate");
        a.save_state().map_err(|e| e.to_string())?;
        p.note("fmi2SerializedFMUstateSize, fmi2SerializeFMUstate");
        let (st, bytes) = raw::serialize_saved(&mut a);
        if st > ffi::WARNING {
            return Ok(Outcome::fail(format!("fmi2SerializeFMUstate returned {}", ffi::status_name(st))));
        }
        let mut first: Rows = vec![p.read(&mut a)?];
        first.extend(p.run(&mut a, k0, n)?);
        p.note("fmi2FreeFMUstate, fmi2Terminate, fmi2FreeInstance of the original");
        let _ = raw::free_saved_state(&mut a);
        drop(a);
        let mut b = p.instantiate("copy")?;
        p.init(&mut b)?;
        p.note(format_args!("fmi2DeSerializeFMUstate of {} bytes into a new instance", bytes.len()));
        let st = raw::deserialize_into_saved(&mut b, &bytes);
        if st > ffi::WARNING {
            return Ok(Outcome::fail(format!("fmi2DeSerializeFMUstate returned {}", ffi::status_name(st))));
        }
        p.note("fmi2SetFMUstate of the deserialized state");
        b.restore_state().map_err(|e| e.to_string())?;
        let mut again: Rows = vec![p.read(&mut b)?];
        again.extend(p.run(&mut b, k0, n)?);
        if let Some(d) = p.diff(&first, &again, k0) {
            return Ok(Outcome::fail(format!(
                "the instance restored from the {} serialized bytes continues differently {d}",
                bytes.len()
            )));
        }
        p.note("fmi2FreeFMUstate");
        let _ = raw::free_saved_state(&mut b);
        Ok(Outcome::pass(format!(
            "{} bytes at t = {}, deserialized into a new instance: the next {} steps bit-identical",
            bytes.len(),
            p.time(k0),
            n - k0
        )))
    };
    go().unwrap_or_else(Outcome::fail)
}
