//! Family 4, illegal calls: each on a new instance, then a normal run shows the FMU is still
//! usable. An error status is the right answer (PASS); accepting the call is a WARN (the standard
//! leaves an illegal call's effect undefined, but a master's bug then goes unnoticed); a crash or a
//! hang is the worker's FAIL, naming the call. NULL pointers only where FMI 2.0 says what happens:
//! `fmi2FreeInstance(NULL)` (§2.1.5) and `fmi2FreeFMUstate` of a NULL state (§2.1.8) are ignored.

use super::probe::Probe;
use super::raw;
use super::Outcome;
use crate::fmu::ffi;
use crate::fmu::FmuInstance;
use model_description::{BaseType, Causality};

/// The verdict of one illegal call from its status: refused (PASS) or accepted (WARN).
fn refused(p: &Probe, what: &str, status: i32, notes: &mut Vec<String>, accepted: &mut Vec<String>) {
    if status > ffi::WARNING {
        notes.push(format!("{what}: {}", ffi::status_name(status)));
        p.found(format_args!("{what}: {}", ffi::status_name(status)));
    } else {
        accepted.push(format!("{what}: accepted ({})", ffi::status_name(status)));
        p.found(format_args!("{what}: accepted ({})", ffi::status_name(status)));
    }
}

/// Wrong-state calls, unknown value references, setting an output, NULL instance/state, a wrong
/// GUID; then a normal run.
pub fn illegal(p: &mut Probe) -> Outcome {
    let mut notes = Vec::new();
    let mut accepted = Vec::new();
    let h = p.plan.step;
    let t0 = p.plan.start;
    let go = |notes: &mut Vec<String>, accepted: &mut Vec<String>| -> Result<(), String> {
        // fmi2DoStep in the state "instantiated".
        let mut s = p.instantiate("illegal1")?;
        p.note("fmi2DoStep before initialization");
        let st = raw::do_step(&mut s, t0, h);
        refused(p, "fmi2DoStep before initialization", st, notes, accepted);
        p.note("fmi2FreeInstance");
        drop(s);

        // fmi2ExitInitializationMode without fmi2EnterInitializationMode.
        let mut s = p.instantiate("illegal2")?;
        p.note("fmi2ExitInitializationMode without fmi2EnterInitializationMode");
        let st = raw::exit_initialization_mode(&mut s);
        refused(p, "fmi2ExitInitializationMode before fmi2EnterInitializationMode", st, notes, accepted);
        drop(s);

        // An unknown value reference, after initialization.
        let unknown = p.fmu.variables().iter().map(|v| v.value_reference).max().map_or(0, |m| m.saturating_add(1000));
        let mut s = p.instantiate("illegal3")?;
        p.init(&mut s)?;
        p.note(format_args!("fmi2GetReal of the unknown value reference {unknown}"));
        let mut out = [0.0];
        let st = raw::get_real(&mut s, &[unknown], &mut out);
        refused(p, &format!("fmi2GetReal of unknown value reference {unknown}"), st, notes, accepted);
        drop(s);

        // Setting an output.
        if let Some(y) =
            p.fmu.variables().iter().find(|v| v.causality == Causality::Output && v.kind.base_type() == BaseType::Real)
        {
            let mut s = p.instantiate("illegal4")?;
            p.init(&mut s)?;
            p.note(format_args!("fmi2SetReal of the output {}", y.name));
            let st = raw::set_real(&mut s, &[y.value_reference], &[1.0]);
            refused(p, &format!("fmi2SetReal of the output {}", y.name), st, notes, accepted);
            drop(s);
        }

        // fmi2DoStep after fmi2Terminate.
        let mut s = p.instantiate("illegal5")?;
        p.init(&mut s)?;
        p.note("fmi2Terminate");
        s.terminate().map_err(|e| e.to_string())?;
        p.note("fmi2DoStep after fmi2Terminate");
        let st = raw::do_step(&mut s, t0, h);
        refused(p, "fmi2DoStep after fmi2Terminate", st, notes, accepted);
        drop(s);

        // A GUID that is not the description's.
        p.note("fmi2Instantiate with a wrong GUID");
        if raw::instantiate_with_wrong_guid(&p.fmu) {
            accepted.push("fmi2Instantiate with a wrong GUID: accepted (an instance, not NULL)".into());
            p.found("fmi2Instantiate with a wrong GUID: accepted");
        } else {
            notes.push("fmi2Instantiate with a wrong GUID: NULL".into());
            p.found("fmi2Instantiate with a wrong GUID: NULL");
        }

        // Still usable.
        let n = p.plan.short_steps.min(5);
        p.fresh_run("after", n)?;
        notes.push(format!("a new instance then runs {n} steps"));
        p.found(format_args!("a new instance then runs {n} steps"));
        // NULL where the standard says the call is ignored (last: a crash here loses nothing else).
        if p.cs().can_get_and_set_fmu_state {
            let mut s = p.instantiate("illegal6")?;
            p.init(&mut s)?;
            p.note("fmi2FreeFMUstate of a NULL state");
            let st = raw::free_null_state(&mut s);
            if st > ffi::WARNING {
                accepted
                    .push(format!("fmi2FreeFMUstate(NULL state): {} (FMI 2.0 §2.1.8: ignored)", ffi::status_name(st)));
            } else {
                notes.push("fmi2FreeFMUstate(NULL state): ignored".into());
            }
            p.found("fmi2FreeFMUstate(NULL state): no crash");
            drop(s);
        }
        p.note("fmi2FreeInstance(NULL)");
        raw::free_null_instance(&p.fmu);
        notes.push("fmi2FreeInstance(NULL): ignored".into());
        Ok(())
    };
    if let Err(e) = go(&mut notes, &mut accepted) {
        return Outcome::fail(e);
    }
    if accepted.is_empty() {
        Outcome::pass(notes.join("; "))
    } else {
        Outcome::warn(format!("{}; refused or ignored: {}", accepted.join("; "), notes.join("; ")))
    }
}
