//! Family 2, the life cycle: loading and instantiating (with the capability flags checked against
//! what the functions do), reset, freeing without terminating, two instances at once, two
//! instances on two threads.

use super::probe::{Probe, Rows};
use super::Outcome;
use crate::fmu::FmuInstance;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The FMU loads (the worker did: `fmi2GetTypesPlatform` = "default", `fmi2GetVersion` = "2.0"),
/// instantiates without changing the process's working directory, exports the status functions,
/// and answers `fmi2GetRealOutputDerivatives` when it declares `maxOutputDerivativeOrder` > 0.
pub fn load(p: &mut Probe) -> Outcome {
    let cwd = std::env::current_dir().ok();
    let mut s = match p.instantiate("load") {
        Ok(s) => s,
        Err(e) => return Outcome::fail(e),
    };
    let after = std::env::current_dir().ok();
    if cwd != after {
        return Outcome::fail(format!(
            "fmi2Instantiate changed the working directory of the importing process from {:?} to {:?}",
            cwd.unwrap_or_default(),
            after.unwrap_or_default()
        ));
    }
    let mut notes = vec!["fmi2GetTypesPlatform \"default\", fmi2GetVersion \"2.0\"; instantiated and freed".to_owned()];
    let order = p.cs().max_output_derivative_order;
    let mut partial = None;
    if order > 0 && !p.outputs.is_empty() {
        if let Err(e) = p.init(&mut s) {
            return Outcome::fail(format!("initialization: {e}"));
        }
        let reals: Vec<u32> =
            p.outputs.iter().filter(|v| v.ty == model_description::BaseType::Real).map(|v| v.vr).collect();
        // FMI 2.0 §4.3.1: fmi2GetRealOutputDerivatives "is allowed for all orders k <=
        // maxOutputDerivativeOrder"; asked output by output, order by order.
        let mut refused = Vec::new();
        let mut provided = 0;
        for &vr in &reals {
            for k in 1..=order.min(3) as i32 {
                let mut out = [0.0];
                p.note(format_args!("fmi2GetRealOutputDerivatives(vr {vr}, order {k}) after initialization"));
                match s.get_output_derivatives(&[vr], k, &mut out) {
                    Ok(()) => provided += 1,
                    Err(_) => {
                        let name = p.outputs.iter().find(|v| v.vr == vr).map_or("?", |v| v.name.as_str());
                        refused.push(format!("{name} (order {k})"));
                        break;
                    }
                }
            }
        }
        if provided == 0 && !reals.is_empty() {
            return Outcome::fail(format!(
                "declares maxOutputDerivativeOrder = {order} but fmi2GetRealOutputDerivatives refuses every output: {}",
                super::statics::some(&refused, 4)
            ));
        }
        notes.push(format!(
            "fmi2GetRealOutputDerivatives: {provided} output derivatives of {} Real outputs",
            reals.len()
        ));
        if !refused.is_empty() {
            partial = Some(format!(
                "maxOutputDerivativeOrder = {order}, but fmi2GetRealOutputDerivatives refuses {} output derivatives: {}",
                refused.len(),
                super::statics::some(&refused, 4)
            ));
        }
        p.note("fmi2Terminate");
        // After a refused call (fmi2Error) the FMU may be in its error state, where only
        // fmi2Reset and fmi2FreeInstance are allowed: terminate only counts when none was refused.
        if let Err(e) = s.terminate() {
            if partial.is_none() {
                return Outcome::fail(e.to_string());
            }
        }
    }
    p.note("fmi2FreeInstance of load");
    drop(s);
    let missing = p.fmu.binary().map(|b| b.missing_optional()).unwrap_or_default();
    if !missing.is_empty() {
        partial = Some(format!(
            "the binary does not export {}: a master cannot learn that the FMU ended the simulation (FMI 2.0 §4.2.3)",
            missing.join(", ")
        ));
    }
    if let Some(w) = partial {
        return Outcome::warn(format!("{w}; {}", notes.join("; ")));
    }
    Outcome::pass(notes.join("; "))
}

/// Run, terminate, `fmi2Reset`, the start values again, run again: bit-identical.
pub fn reset(p: &mut Probe) -> Outcome {
    let n = p.plan.short_steps;
    let go = || -> Result<(Rows, Rows), String> {
        let mut s = p.instantiate("reset")?;
        p.init(&mut s)?;
        let mut a = vec![p.read(&mut s)?];
        a.extend(p.run(&mut s, 0, n)?);
        p.note("fmi2Terminate");
        s.terminate().map_err(|e| e.to_string())?;
        p.note("fmi2Reset");
        s.reset().map_err(|e| e.to_string())?;
        p.init(&mut s)?;
        let mut b = vec![p.read(&mut s)?];
        b.extend(p.run(&mut s, 0, n)?);
        p.note("fmi2Terminate");
        s.terminate().map_err(|e| e.to_string())?;
        p.note("fmi2FreeInstance");
        Ok((a, b))
    };
    match go() {
        Err(e) => Outcome::fail(e),
        Ok((a, b)) => match p.diff(&a, &b, 0) {
            Some(d) => Outcome::fail(format!("the run after fmi2Reset differs from the first {d}")),
            None => Outcome::pass(format!(
                "{n} steps before and after fmi2Reset bit-identical ({} values)",
                Probe::count(&a)
            )),
        },
    }
}

/// An instance freed while stepping (no `fmi2Terminate`); a new instance then runs exactly as one
/// before it did.
pub fn free_without_terminate(p: &mut Probe) -> Outcome {
    let n = p.plan.short_steps;
    let go = || -> Result<(Rows, Rows), String> {
        let before = p.fresh_run("before", n)?;
        let mut s = p.instantiate("freed")?;
        p.init(&mut s)?;
        p.run(&mut s, 0, n.min(3))?;
        p.note("fmi2FreeInstance without fmi2Terminate");
        drop(s);
        let after = p.fresh_run("after", n)?;
        Ok((before, after))
    };
    match go() {
        Err(e) => Outcome::fail(e),
        Ok((a, b)) => match p.diff(&a, &b, 0) {
            Some(d) => Outcome::fail(format!("a new instance runs differently after one was freed while stepping {d}")),
            None => Outcome::pass(format!(
                "freed in stepComplete after {} steps; the next instance's {n} steps bit-identical to the first's",
                n.min(3)
            )),
        },
    }
}

/// Two instances alive at once, stepped alternately, each bit-identical to a run alone.
pub fn instances(p: &mut Probe) -> Outcome {
    if p.cs().can_be_instantiated_only_once_per_process {
        return Outcome::skip("the FMU declares canBeInstantiatedOnlyOncePerProcess");
    }
    let n = p.plan.short_steps;
    let go = || -> Result<(Rows, Rows, Rows), String> {
        let alone = p.fresh_run("alone", n)?;
        let mut a = p.instantiate("a")?;
        let mut b = p.instantiate("b")?;
        p.init(&mut a)?;
        p.init(&mut b)?;
        let mut ra = vec![p.read(&mut a)?];
        let mut rb = vec![p.read(&mut b)?];
        for k in 0..n {
            p.step(&mut a, k)?;
            p.step(&mut b, k)?;
            ra.push(p.read(&mut a)?);
            rb.push(p.read(&mut b)?);
        }
        p.note("fmi2Terminate and fmi2FreeInstance of a and b");
        a.terminate().map_err(|e| e.to_string())?;
        b.terminate().map_err(|e| e.to_string())?;
        Ok((alone, ra, rb))
    };
    match go() {
        Err(e) => Outcome::fail(e),
        Ok((alone, a, b)) => {
            if let Some(d) = p.diff(&alone, &a, 0) {
                return Outcome::fail(format!("instance a, stepped alternately with b, differs from a run alone {d}"));
            }
            if let Some(d) = p.diff(&alone, &b, 0) {
                return Outcome::fail(format!("instance b, stepped alternately with a, differs from a run alone {d}"));
            }
            Outcome::pass(format!("a and b stepped alternately for {n} steps: both bit-identical to a run alone"))
        }
    }
}

/// Rounds of the `threads` check: a race shows only sometimes (the OpenModelica FMUs of
/// docs/check-gemseo-example.md crash in about one check of five), so the two threads start this
/// many times.
const THREAD_ROUNDS: u64 = 50;

/// Rounds of instantiate and free alone on both threads at the same moment, before the
/// [`THREAD_ROUNDS`]: the OpenModelica FMUs' race is in `fmi2Instantiate` (docs/check.md). It
/// shows in about half the worker processes, however many rounds each makes, so the check is
/// repeated in new workers (`cosim check --repeat`, [`super::Check::racy`]).
const INSTANTIATE_ROUNDS: u64 = 200;

/// Two threads in lockstep: each waits at every phase until the other reached it (or ended).
struct Lockstep {
    phase: [AtomicU64; 2],
    done: [AtomicBool; 2],
}

impl Lockstep {
    fn sync(&self, me: usize, phase: u64) {
        self.phase[me].store(phase, Ordering::SeqCst);
        let other = 1 - me;
        while self.phase[other].load(Ordering::SeqCst) < phase && !self.done[other].load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
    }
}

/// Two instances on two threads at once, in lockstep (both instantiate, initialize, step,
/// terminate and free at the same time), [`THREAD_ROUNDS`] times: each bit-identical to a run alone.
pub fn threads(p: &mut Probe) -> Outcome {
    if p.cs().can_be_instantiated_only_once_per_process {
        return Outcome::skip("the FMU declares canBeInstantiatedOnlyOncePerProcess");
    }
    let n = p.plan.short_steps.min(5);
    let alone = match p.fresh_run("alone", n) {
        Ok(r) => r,
        Err(e) => return Outcome::fail(e),
    };
    let probe: &Probe = p;
    let lock = Lockstep {
        phase: [AtomicU64::new(0), AtomicU64::new(0)],
        done: [AtomicBool::new(false), AtomicBool::new(false)],
    };
    let per_round = n + 8;
    let results: Vec<Result<(), String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = [0usize, 1]
            .into_iter()
            .map(|me| {
                let (lock, alone) = (&lock, &alone);
                scope.spawn(move || {
                    let name = format!("thread{}", me + 1);
                    let r = (|| -> Result<(), String> {
                        for round in 0..INSTANTIATE_ROUNDS {
                            lock.sync(me, 1 + 2 * round);
                            let s = probe.instantiate(&name)?;
                            lock.sync(me, 2 + 2 * round);
                            probe.note(format_args!("fmi2FreeInstance of {name}"));
                            drop(s);
                        }
                        for round in 0..THREAD_ROUNDS {
                            let base = 1 + 2 * INSTANTIATE_ROUNDS + round * per_round;
                            lock.sync(me, base);
                            let mut s = probe.instantiate(&name)?;
                            lock.sync(me, base + 1);
                            probe.init(&mut s)?;
                            lock.sync(me, base + 2);
                            let mut rows = vec![probe.read(&mut s)?];
                            for k in 0..n {
                                lock.sync(me, base + 3 + k);
                                probe.step(&mut s, k)?;
                                rows.push(probe.read(&mut s)?);
                            }
                            lock.sync(me, base + 3 + n);
                            probe.note(format_args!("fmi2Terminate of {name}"));
                            s.terminate().map_err(|e| e.to_string())?;
                            lock.sync(me, base + 4 + n);
                            probe.note(format_args!("fmi2FreeInstance of {name}"));
                            drop(s);
                            if let Some(d) = probe.diff(alone, &rows, 0) {
                                return Err(format!(
                                    "round {} of {THREAD_ROUNDS}: the instance differs from a run alone {d} (shared state between instances?)",
                                    round + 1
                                ));
                            }
                        }
                        Ok(())
                    })();
                    lock.done[me].store(true, Ordering::SeqCst);
                    r
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("the thread panicked".into()))).collect()
    });
    for (i, r) in results.iter().enumerate() {
        if let Err(e) = r {
            return Outcome::fail(format!("thread {}: {e}", i + 1));
        }
    }
    Outcome::pass(format!(
        "two instances on two threads in lockstep: {INSTANTIATE_ROUNDS} rounds of instantiate and free, then \
         {THREAD_ROUNDS} rounds of instantiate, initialize, {n} steps, terminate, free: every run bit-identical to a \
         run alone"
    ))
}
