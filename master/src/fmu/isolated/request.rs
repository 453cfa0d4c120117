//! Calls on the wire: the one encoding of a [`Call`] (request and results), used by both
//! the master and the worker.

use super::codec::{Dec, DecResult, Enc, MAX_FRAME};
use crate::fmu::{Call, DiscreteStates, Op};

/// Appends `call`'s request: op code, then the arguments (a getter: its value references and
/// the number of values wanted).
pub(super) fn encode_request(call: &Call<'_>, e: &mut Enc<'_>) {
    e.u8(call.op() as u8);
    match call {
        Call::Setup { start, stop } => {
            e.f64(*start).u8(u8::from(stop.is_some())).f64(stop.unwrap_or(0.0));
        }
        Call::GetFloat64 { vr, out } => {
            e.u32s(vr).len(out.len());
        }
        Call::GetInt64 { vr, out } => {
            e.u32s(vr).len(out.len());
        }
        Call::GetUInt64 { vr, out } => {
            e.u32s(vr).len(out.len());
        }
        Call::GetBoolean { vr, out } | Call::GetClock { vr, out } => {
            e.u32s(vr).len(out.len());
        }
        Call::GetString { vr, .. } => {
            e.u32s(vr);
        }
        Call::GetBinary { vr, out } => {
            e.u32s(vr).len(out.len());
        }
        Call::SetBinary { vr, values } => {
            e.u32s(vr).blobs(values);
        }
        Call::SetFloat64 { vr, values } => {
            e.u32s(vr).f64s(values);
        }
        Call::SetInt64 { vr, values } => {
            e.u32s(vr).i64s(values);
        }
        Call::SetUInt64 { vr, values } => {
            e.u32s(vr).u64s(values);
        }
        Call::SetBoolean { vr, values } | Call::SetClock { vr, values } => {
            e.u32s(vr).bools(values);
        }
        Call::SetString { vr, values } => {
            e.u32s(vr).strs(values);
        }
        Call::SetInputDerivatives { vr, order, values } => {
            e.u32s(vr).i32(*order).f64s(values);
        }
        Call::DoStep { t, h } => {
            e.f64(*t).f64(*h);
        }
        Call::GetBooleanStatus { kind, .. } | Call::GetRealStatus { kind, .. } => {
            e.i32(*kind);
        }
        Call::EnterInitialization
        | Call::ExitInitialization
        | Call::Terminate
        | Call::SaveState
        | Call::RestoreState
        | Call::EnterEventMode
        | Call::UpdateDiscreteStates { .. }
        | Call::EnterStepMode => {}
    }
}

/// Reusable argument and result buffers of the worker loop.
#[derive(Default)]
pub(super) struct Buffers {
    vrs: Vec<u32>,
    reals: Vec<f64>,
    ints: Vec<i64>,
    uints: Vec<u64>,
    bools: Vec<bool>,
    strings: Vec<String>,
    blobs: Vec<Vec<u8>>,
    flag: bool,
    real: f64,
    discrete: DiscreteStates,
}

/// Decodes a request written by [`encode_request`] into a [`Call`] whose arrays live in `b`,
/// and passes it to `f`. The whole request must be consumed.
pub(super) fn decode_request<R>(req: &[u8], b: &mut Buffers, f: impl FnOnce(Call<'_>) -> R) -> DecResult<R> {
    let mut d = Dec(req);
    let code = d.u8()?;
    let op = Op::from_code(code).ok_or_else(|| format!("unknown request {code}"))?;
    /// The number of values a getter wants, each `size` bytes in the response.
    fn wanted(d: &mut Dec<'_>, size: usize) -> DecResult<usize> {
        let n = d.u32()? as usize;
        if n.saturating_mul(size) > MAX_FRAME {
            return Err(format!("{n} values requested"));
        }
        Ok(n)
    }
    let refs: Vec<&str>;
    let blobs: Vec<&[u8]>;
    let call = match op {
        Op::Setup => {
            let (start, has_stop, stop) = (d.f64()?, d.u8()?, d.f64()?);
            Call::Setup { start, stop: (has_stop != 0).then_some(stop) }
        }
        Op::EnterInitialization => Call::EnterInitialization,
        Op::ExitInitialization => Call::ExitInitialization,
        Op::GetFloat64 => {
            d.u32s(&mut b.vrs)?;
            let n = wanted(&mut d, 8)?;
            b.reals.clear();
            b.reals.resize(n, 0.0);
            Call::GetFloat64 { vr: &b.vrs, out: &mut b.reals }
        }
        Op::SetFloat64 => {
            d.u32s(&mut b.vrs)?;
            d.f64s(&mut b.reals)?;
            Call::SetFloat64 { vr: &b.vrs, values: &b.reals }
        }
        Op::GetInt64 => {
            d.u32s(&mut b.vrs)?;
            let n = wanted(&mut d, 8)?;
            b.ints.clear();
            b.ints.resize(n, 0);
            Call::GetInt64 { vr: &b.vrs, out: &mut b.ints }
        }
        Op::SetInt64 => {
            d.u32s(&mut b.vrs)?;
            d.i64s(&mut b.ints)?;
            Call::SetInt64 { vr: &b.vrs, values: &b.ints }
        }
        Op::GetUInt64 => {
            d.u32s(&mut b.vrs)?;
            let n = wanted(&mut d, 8)?;
            b.uints.clear();
            b.uints.resize(n, 0);
            Call::GetUInt64 { vr: &b.vrs, out: &mut b.uints }
        }
        Op::SetUInt64 => {
            d.u32s(&mut b.vrs)?;
            d.u64s(&mut b.uints)?;
            Call::SetUInt64 { vr: &b.vrs, values: &b.uints }
        }
        Op::GetBoolean | Op::GetClock => {
            d.u32s(&mut b.vrs)?;
            let n = wanted(&mut d, 1)?;
            b.bools.clear();
            b.bools.resize(n, false);
            if op == Op::GetClock {
                Call::GetClock { vr: &b.vrs, out: &mut b.bools }
            } else {
                Call::GetBoolean { vr: &b.vrs, out: &mut b.bools }
            }
        }
        Op::SetBoolean | Op::SetClock => {
            d.u32s(&mut b.vrs)?;
            d.bools(&mut b.bools)?;
            if op == Op::SetClock {
                Call::SetClock { vr: &b.vrs, values: &b.bools }
            } else {
                Call::SetBoolean { vr: &b.vrs, values: &b.bools }
            }
        }
        Op::EnterEventMode => Call::EnterEventMode,
        Op::UpdateDiscreteStates => Call::UpdateDiscreteStates { out: &mut b.discrete },
        Op::EnterStepMode => Call::EnterStepMode,
        Op::GetString => {
            d.u32s(&mut b.vrs)?;
            b.strings.clear();
            Call::GetString { vr: &b.vrs, out: &mut b.strings }
        }
        Op::SetString => {
            d.u32s(&mut b.vrs)?;
            b.strings = d.strs()?;
            refs = b.strings.iter().map(String::as_str).collect();
            Call::SetString { vr: &b.vrs, values: &refs }
        }
        Op::SetInputDerivatives => {
            d.u32s(&mut b.vrs)?;
            let order = d.i32()?;
            d.f64s(&mut b.reals)?;
            Call::SetInputDerivatives { vr: &b.vrs, order, values: &b.reals }
        }
        Op::DoStep => {
            let (t, h) = (d.f64()?, d.f64()?);
            Call::DoStep { t, h }
        }
        Op::Terminate => Call::Terminate,
        Op::SaveState => Call::SaveState,
        Op::RestoreState => Call::RestoreState,
        Op::GetBooleanStatus => Call::GetBooleanStatus { kind: d.i32()?, out: &mut b.flag },
        Op::GetRealStatus => Call::GetRealStatus { kind: d.i32()?, out: &mut b.real },
        Op::GetBinary => {
            d.u32s(&mut b.vrs)?;
            let n = wanted(&mut d, 4)?;
            b.blobs.resize_with(n, Vec::new);
            b.blobs.iter_mut().for_each(Vec::clear);
            Call::GetBinary { vr: &b.vrs, out: &mut b.blobs }
        }
        Op::SetBinary => {
            d.u32s(&mut b.vrs)?;
            d.blobs(&mut b.blobs)?;
            blobs = b.blobs.iter().map(Vec::as_slice).collect();
            Call::SetBinary { vr: &b.vrs, values: &blobs }
        }
    };
    if !d.0.is_empty() {
        return Err(format!("{} bytes left after request {}", d.0.len(), op.name()));
    }
    Ok(f(call))
}

/// Appends the results of an executed `call` (a getter's values) to an OK response.
pub(super) fn encode_results(call: &Call<'_>, e: &mut Enc<'_>) {
    match call {
        Call::GetFloat64 { out, .. } => {
            e.f64s(out);
        }
        Call::GetInt64 { out, .. } => {
            e.i64s(out);
        }
        Call::GetUInt64 { out, .. } => {
            e.u64s(out);
        }
        Call::GetBoolean { out, .. } | Call::GetClock { out, .. } => {
            e.bools(out);
        }
        Call::GetString { out, .. } => {
            e.strs(out);
        }
        Call::GetBinary { out, .. } => {
            e.blobs(out);
        }
        Call::GetBooleanStatus { out, .. } => {
            e.u8(u8::from(**out));
        }
        Call::GetRealStatus { out, .. } => {
            e.f64(**out);
        }
        Call::UpdateDiscreteStates { out } => {
            let flags = [
                out.need_update,
                out.terminate,
                out.nominals_changed,
                out.values_changed,
                out.next_event_time.is_some(),
            ];
            e.bools(&flags).f64(out.next_event_time.unwrap_or(0.0));
        }
        Call::Setup { .. }
        | Call::EnterInitialization
        | Call::ExitInitialization
        | Call::SetFloat64 { .. }
        | Call::SetInt64 { .. }
        | Call::SetUInt64 { .. }
        | Call::SetClock { .. }
        | Call::EnterEventMode
        | Call::EnterStepMode
        | Call::SetBoolean { .. }
        | Call::SetString { .. }
        | Call::SetBinary { .. }
        | Call::SetInputDerivatives { .. }
        | Call::DoStep { .. }
        | Call::Terminate
        | Call::SaveState
        | Call::RestoreState => {}
    }
}

/// Reads the results written by [`encode_results`] into `call`'s outputs (exactly as many
/// values as asked for).
pub(super) fn decode_results(call: &mut Call<'_>, d: &mut Dec<'_>) -> DecResult<()> {
    match call {
        Call::GetFloat64 { out, .. } => d.f64s_into(out),
        Call::GetInt64 { out, .. } => d.i64s_into(out),
        Call::GetUInt64 { out, .. } => d.u64s_into(out),
        Call::GetBoolean { out, .. } | Call::GetClock { out, .. } => d.bools_into(out),
        Call::GetString { out, .. } => {
            **out = d.strs()?;
            Ok(())
        }
        Call::GetBinary { out, .. } => {
            if d.count(4)? != out.len() {
                return Err(format!("{} Binary values asked for, another count answered", out.len()));
            }
            d.blobs_into(out)
        }
        Call::GetBooleanStatus { out, .. } => {
            **out = d.u8()? != 0;
            Ok(())
        }
        Call::GetRealStatus { out, .. } => {
            **out = d.f64()?;
            Ok(())
        }
        Call::UpdateDiscreteStates { out } => {
            let mut flags = [false; 5];
            d.bools_into(&mut flags)?;
            let next = d.f64()?;
            let [need_update, terminate, nominals_changed, values_changed, defined] = flags;
            **out = DiscreteStates {
                need_update,
                terminate,
                nominals_changed,
                values_changed,
                next_event_time: defined.then_some(next),
            };
            Ok(())
        }
        Call::Setup { .. }
        | Call::EnterInitialization
        | Call::ExitInitialization
        | Call::SetFloat64 { .. }
        | Call::SetInt64 { .. }
        | Call::SetUInt64 { .. }
        | Call::SetClock { .. }
        | Call::EnterEventMode
        | Call::EnterStepMode
        | Call::SetBoolean { .. }
        | Call::SetString { .. }
        | Call::SetBinary { .. }
        | Call::SetInputDerivatives { .. }
        | Call::DoStep { .. }
        | Call::Terminate
        | Call::SaveState
        | Call::RestoreState => Ok(()),
    }
}

/// Getters whose requests are learned and prefetched after a step.
pub(super) fn prefetchable(op: Op) -> bool {
    matches!(op, Op::GetFloat64 | Op::GetInt64 | Op::GetUInt64 | Op::GetBoolean)
}
