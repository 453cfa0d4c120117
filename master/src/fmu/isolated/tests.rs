#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
use super::codec::*;
use super::frame::*;
use super::request::*;
use super::worker::*;
use super::*;
use crate::error::{MasterError, Result};
use crate::fmu::{Call, DiscreteStates, FmuInstance, Op};
use std::process::ExitStatus;

#[test]
fn values_round_trip_through_the_encoding() {
    let mut buf = Vec::new();
    Enc(&mut buf)
        .u8(7)
        .u32s(&[1, 2, 3])
        .f64s(&[1.5, f64::NAN, -0.0])
        .i32(-4)
        .bools(&[true, false])
        .strs(&["a", "ß", ""]);
    let mut d = Dec(&buf);
    assert_eq!(d.u8(), Ok(7));
    let (mut v, mut f, mut b) = (Vec::new(), Vec::new(), Vec::new());
    d.u32s(&mut v).unwrap();
    d.f64s(&mut f).unwrap();
    assert_eq!(v, [1, 2, 3]);
    assert_eq!(f[0], 1.5);
    assert!(f[1].is_nan() && f[2].is_sign_negative());
    assert_eq!(d.i32(), Ok(-4));
    d.bools(&mut b).unwrap();
    assert_eq!(b, [true, false]);
    assert_eq!(d.strs().unwrap(), ["a", "ß", ""]);
    assert!(d.u8().is_err(), "nothing left");
}

/// A worker-side instance that answers getters with values derived from the references and
/// remembers every call it executed (as `Debug` text).
#[derive(Default)]
struct Echo {
    seen: Vec<String>,
    saved: bool,
}

impl FmuInstance for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn execute(&mut self, call: Call<'_>) -> Result<()> {
        self.seen.push(format!("{call:?}"));
        match call {
            Call::GetFloat64 { vr, out } => out.iter_mut().zip(vr).for_each(|(o, v)| *o = f64::from(*v) * 0.5),
            Call::GetInt64 { vr, out } => out.iter_mut().zip(vr).for_each(|(o, v)| *o = -i64::from(*v) * 5_000_000_000),
            Call::GetUInt64 { vr, out } => out.iter_mut().zip(vr).for_each(|(o, v)| *o = (1 << 63) + u64::from(*v)),
            Call::GetClock { vr, out } => out.iter_mut().zip(vr).for_each(|(o, v)| *o = v % 2 == 0),
            Call::GetBoolean { vr, out } => out.iter_mut().zip(vr).for_each(|(o, v)| *o = v % 2 == 1),
            Call::GetString { vr, out } => *out = vr.iter().map(|v| format!("s{v}")).collect(),
            // Binary: `v` bytes of value `v` (reference 0: empty).
            Call::GetBinary { vr, out } => out.iter_mut().zip(vr).for_each(|(o, v)| *o = vec![*v as u8; *v as usize]),
            Call::SaveState => self.saved = true,
            Call::GetBooleanStatus { kind, out } => *out = kind == 3,
            Call::GetRealStatus { kind, out } => *out = f64::from(kind) + 0.25,
            Call::UpdateDiscreteStates { out } => {
                *out = DiscreteStates {
                    need_update: true,
                    terminate: false,
                    nominals_changed: true,
                    values_changed: false,
                    next_event_time: Some(0.375),
                }
            }
            Call::RestoreState if !self.saved => {
                return Err(MasterError::Call {
                    instance: "echo".into(),
                    function: "fmi2SetFMUstate",
                    time: 1.5,
                    status: "fmi2Error".into(),
                    last_log: "no state".into(),
                })
            }
            _ => {}
        }
        Ok(())
    }
    fn can_interpolate_inputs(&self) -> bool {
        false
    }
}

/// `call` as the client sends it, decoded and executed by the worker on `instance`, the response
/// decoded back into `call`: the path of every isolated call without the pipes.
fn over_the_wire(instance: &mut Echo, mut call: Call<'_>) -> std::result::Result<(), String> {
    let (mut req, mut resp, mut b) = (Vec::new(), Vec::new(), Buffers::default());
    encode_request(&call, &mut Enc(&mut req));
    let sent = format!("{call:?}");
    execute(instance, &req, &mut b, &mut resp)?;
    assert_eq!(instance.seen.last().unwrap(), &sent, "the worker executes the call sent");
    let mut d = Dec(&resp);
    match d.u8()? {
        TAG_OK => {
            decode_results(&mut call, &mut d)?;
            assert!(d.0.is_empty(), "response fully read");
            Ok(())
        }
        TAG_CALL_ERROR => Err(format!("call error at t = {}: {}: {}", d.f64()?, d.str()?, d.str()?)),
        t => Err(format!("tag {t}")),
    }
}

#[test]
fn every_call_round_trips_through_the_isolated_encoding() {
    let mut instance = Echo::default();
    let vr = [3, 1, 4];
    let (mut reals, mut ints, mut bools, mut strings) = ([0.0; 3], [0; 3], [false; 3], Vec::new());
    let (mut uints, mut ticks) = ([0u64; 3], [false; 3]);
    let calls = [
        Call::Setup { start: 0.25, stop: Some(2.0) },
        Call::Setup { start: -1.0, stop: None },
        Call::EnterInitialization,
        Call::ExitInitialization,
        Call::SetFloat64 { vr: &vr, values: &[1.5, f64::NAN, -0.0] },
        Call::SetInt64 { vr: &vr, values: &[7, -8, i64::MIN] },
        Call::SetUInt64 { vr: &vr, values: &[u64::MAX, 0, (1 << 63) + 1] },
        Call::SetClock { vr: &vr, values: &[true, false, true] },
        Call::EnterEventMode,
        Call::EnterStepMode,
        Call::SetBoolean { vr: &vr, values: &[true, false, true] },
        Call::SetString { vr: &vr, values: &["a", "ß", ""] },
        Call::SetBinary { vr: &vr, values: &[&[0, 255], &[], &[7; 300]] },
        Call::SetInputDerivatives { vr: &vr, order: 2, values: &[0.5, 1e300, -3.0] },
        Call::DoStep { t: 0.125, h: 1e-3 },
        Call::SaveState,
        Call::RestoreState,
        Call::Terminate,
    ];
    let mut ops: Vec<Op> = calls.iter().map(Call::op).collect();
    for call in calls {
        over_the_wire(&mut instance, call).unwrap();
    }
    // Getters: the worker's values arrive in the caller's slices.
    over_the_wire(&mut instance, Call::GetFloat64 { vr: &vr, out: &mut reals }).unwrap();
    over_the_wire(&mut instance, Call::GetInt64 { vr: &vr, out: &mut ints }).unwrap();
    over_the_wire(&mut instance, Call::GetUInt64 { vr: &vr, out: &mut uints }).unwrap();
    over_the_wire(&mut instance, Call::GetClock { vr: &vr, out: &mut ticks }).unwrap();
    assert_eq!(uints, [(1 << 63) + 3, (1 << 63) + 1, (1 << 63) + 4]);
    assert_eq!(ticks, [false, false, true]);
    over_the_wire(&mut instance, Call::GetBoolean { vr: &vr, out: &mut bools }).unwrap();
    over_the_wire(&mut instance, Call::GetString { vr: &vr, out: &mut strings }).unwrap();
    let mut blobs = vec![Vec::new(); 3];
    over_the_wire(&mut instance, Call::GetBinary { vr: &[3, 0, 4], out: &mut blobs }).unwrap();
    assert_eq!(blobs, [vec![3; 3], vec![], vec![4; 4]]);
    let (mut flag, mut real) = (false, 0.0);
    over_the_wire(&mut instance, Call::GetBooleanStatus { kind: 3, out: &mut flag }).unwrap();
    over_the_wire(&mut instance, Call::GetRealStatus { kind: 2, out: &mut real }).unwrap();
    assert!(flag);
    assert_eq!(real, 2.25);
    let mut discrete = DiscreteStates::default();
    over_the_wire(&mut instance, Call::UpdateDiscreteStates { out: &mut discrete }).unwrap();
    assert_eq!((discrete.need_update, discrete.nominals_changed, discrete.values_changed), (true, true, false));
    assert_eq!(discrete.next_event_time, Some(0.375));
    ops.extend([
        Op::UpdateDiscreteStates,
        Op::GetFloat64,
        Op::GetInt64,
        Op::GetUInt64,
        Op::GetClock,
        Op::GetBoolean,
        Op::GetString,
        Op::GetBinary,
        Op::GetBooleanStatus,
        Op::GetRealStatus,
    ]);
    assert_eq!(
        (reals, ints, bools),
        ([1.5, 0.5, 2.0], [-15_000_000_000, -5_000_000_000, -20_000_000_000], [true, true, false])
    );
    assert_eq!(strings, ["s3", "s1", "s4"]);
    for op in Op::ALL {
        assert!(ops.contains(op), "{op:?} is tested");
    }
    assert!(instance.seen[1].contains("stop: None") && instance.seen[0].contains("stop: Some(2.0)"));
    // An FMU error of a state call comes back as the same MasterError::Call fields.
    let mut fresh = Echo::default();
    let e = over_the_wire(&mut fresh, Call::RestoreState).unwrap_err();
    assert_eq!(e, "call error at t = 1.5: fmi2Error: no state");
    // A getter whose slice and references differ in length still reaches the instance (which
    // reports the mismatch); the client takes exactly as many values as it asked for.
    let mut two = [0.0; 2];
    over_the_wire(&mut instance, Call::GetFloat64 { vr: &vr, out: &mut two }).unwrap();
    assert_eq!(two, [1.5, 0.5]);
}

/// A batch runs in order until a call fails; the response names that call's index and the
/// calls after it are not executed.
#[test]
fn a_batch_stops_at_the_first_failing_call() {
    fn batch(calls: &[Call<'_>]) -> Vec<u8> {
        let mut out = Vec::new();
        for c in calls {
            let mut req = Vec::new();
            encode_request(c, &mut Enc(&mut req));
            Enc(&mut out).u32(req.len() as u32);
            out.extend_from_slice(&req);
        }
        out
    }
    let (mut b, mut out) = (Buffers::default(), Vec::new());
    let mut instance = Echo::default();
    let mut seen = Vec::new();
    let mut reals = [0.0; 2];
    let ok = batch(&[
        Call::SetFloat64 { vr: &[1], values: &[2.0] },
        Call::DoStep { t: 0.0, h: 0.1 },
        Call::GetFloat64 { vr: &[4, 6], out: &mut reals },
    ]);
    execute_batch(&mut instance, &ok, &mut b, &mut out, |i| seen.push(i)).unwrap();
    assert_eq!(seen, [0, 1, 2]);
    let mut d = Dec(&out);
    assert_eq!((d.u32(), d.u8()), (Ok(2), Ok(TAG_OK)));
    let mut got = Vec::new();
    d.f64s(&mut got).unwrap();
    assert_eq!(got, [2.0, 3.0], "the last call's results");
    // RestoreState fails on a fresh instance: index 1, the step after it never runs.
    let mut fresh = Echo::default();
    let failing =
        batch(&[Call::SetFloat64 { vr: &[1], values: &[2.0] }, Call::RestoreState, Call::DoStep { t: 0.0, h: 0.1 }]);
    execute_batch(&mut fresh, &failing, &mut b, &mut out, |_| {}).unwrap();
    let mut d = Dec(&out);
    assert_eq!((d.u32(), d.u8()), (Ok(1), Ok(TAG_CALL_ERROR)));
    assert_eq!(fresh.seen.len(), 2, "{:?}", fresh.seen);
    // A length beyond the batch is a protocol error.
    let mut cut = ok.clone();
    cut.truncate(ok.len() - 1);
    assert!(execute_batch(&mut Echo::default(), &cut, &mut b, &mut out, |_| {}).is_err());
}

/// Speculative getters after a zero length run only when the calls before them succeeded;
/// each one's response follows the last call's, length-prefixed.
#[test]
fn speculative_getters_follow_a_successful_batch() {
    fn request(c: &Call<'_>) -> Vec<u8> {
        let mut req = Vec::new();
        encode_request(c, &mut Enc(&mut req));
        req
    }
    let (mut reals, mut ints) = ([0.0; 2], [0; 1]);
    let spec = [
        request(&Call::GetFloat64 { vr: &[4, 6], out: &mut reals }),
        request(&Call::GetInt64 { vr: &[3], out: &mut ints }),
    ];
    let batch = |main: &[Call<'_>]| {
        let mut out = Vec::new();
        for c in main {
            push_entry(&mut out, &request(c));
        }
        out.extend_from_slice(&0u32.to_le_bytes());
        for r in &spec {
            push_entry(&mut out, r);
        }
        out
    };
    let (mut b, mut out, mut seen) = (Buffers::default(), Vec::new(), Vec::new());
    let mut instance = Echo::default();
    let ok = batch(&[Call::SetFloat64 { vr: &[1], values: &[2.0] }, Call::DoStep { t: 0.0, h: 0.1 }]);
    execute_batch(&mut instance, &ok, &mut b, &mut out, |i| seen.push(i)).unwrap();
    assert_eq!(seen, [0, 1, 2, 3], "the speculative getters are numbered after the calls");
    assert_eq!(&out[..5], &[1, 0, 0, 0, TAG_OK], "the step's response comes first");
    let mut at = 5;
    let first = next_entry(&out, &mut at).unwrap();
    let second = next_entry(&out, &mut at).unwrap();
    assert_eq!(at, out.len());
    let mut d = Dec(&out[first]);
    assert_eq!(d.u8(), Ok(TAG_OK));
    let mut got = Vec::new();
    d.f64s(&mut got).unwrap();
    assert_eq!(got, [2.0, 3.0]);
    let mut d = Dec(&out[second]);
    assert_eq!(d.u8(), Ok(TAG_OK));
    let mut got = Vec::new();
    d.i64s(&mut got).unwrap();
    assert_eq!(got, [-15_000_000_000]);
    // A failing call: no speculation.
    let mut fresh = Echo::default();
    let failing = batch(&[Call::RestoreState]);
    execute_batch(&mut fresh, &failing, &mut b, &mut out, |_| {}).unwrap();
    let mut d = Dec(&out);
    assert_eq!((d.u32(), d.u8()), (Ok(0), Ok(TAG_CALL_ERROR)));
    assert_eq!((d.f64(), d.str(), d.str()), (Ok(1.5), Ok("fmi2Error".into()), Ok("no state".into())));
    assert!(d.0.is_empty(), "nothing after the error");
    assert_eq!(fresh.seen.len(), 1);
    // Only getters may be speculative; a batch cannot start with the marker.
    let mut bad = ok.clone();
    push_entry(&mut bad, &request(&Call::Terminate));
    assert!(execute_batch(&mut Echo::default(), &bad, &mut b, &mut out, |_| {}).is_err());
    assert!(execute_batch(&mut Echo::default(), &0u32.to_le_bytes(), &mut b, &mut out, |_| {}).is_err());
}

#[test]
fn garbled_requests_are_protocol_errors() {
    let (mut b, mut out, mut instance) = (Buffers::default(), Vec::new(), Echo::default());
    assert!(execute(&mut instance, &[0], &mut b, &mut out).unwrap_err().contains("unknown request 0"));
    assert!(execute(&mut instance, &[Op::ALL.len() as u8 + 1], &mut b, &mut out).is_err());
    let mut req = Vec::new();
    encode_request(&Call::DoStep { t: 0.0, h: 1.0 }, &mut Enc(&mut req));
    req.push(0);
    assert!(execute(&mut instance, &req, &mut b, &mut out).unwrap_err().contains("1 bytes left after request DoStep"));
    req.truncate(req.len() - 2);
    assert!(execute(&mut instance, &req, &mut b, &mut out).unwrap_err().contains("truncated"));
    let mut req = Vec::new();
    Enc(&mut req).u8(Op::GetFloat64 as u8).u32s(&[1]).u32(u32::MAX);
    assert!(execute(&mut instance, &req, &mut b, &mut out).unwrap_err().contains("values requested"));
    assert!(instance.seen.is_empty(), "nothing garbled was executed");
}

#[test]
fn garbled_counts_and_frames_are_refused_without_allocating() {
    let mut buf = Vec::new();
    Enc(&mut buf).u32(u32::MAX);
    let mut v = Vec::new();
    assert!(Dec(&buf).f64s(&mut v).unwrap_err().contains("exceeds"));
    let mut out = [0.0; 2];
    let mut buf = Vec::new();
    Enc(&mut buf).f64s(&[1.0]);
    assert!(Dec(&buf).f64s_into(&mut out).unwrap_err().contains("1 values returned for 2"));
    let mut frame: &[u8] = &[0xff, 0xff, 0xff, 0x7f, 0];
    assert!(read_frame(&mut frame, &mut Vec::new()).is_err());
    let mut empty: &[u8] = &[];
    assert!(!read_frame(&mut empty, &mut Vec::new()).unwrap(), "clean end of stream");
    let mut cut: &[u8] = &[4, 0, 0, 0, 1];
    assert!(read_frame(&mut cut, &mut Vec::new()).is_err(), "truncated body");
}

#[test]
fn exit_statuses_are_described() {
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(describe_exit(ExitStatus::from_raw(6)), "worker process died (signal 6, SIGABRT)");
    assert_eq!(describe_exit(ExitStatus::from_raw(3 << 8)), "worker process died (exit code 3)");
    assert!(describe_exit(ExitStatus::from_raw(0)).contains("without answering"));
}
