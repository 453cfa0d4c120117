//! The worker side: the process that loads the FMU, owns the one instance and serves the
//! master's batches ([`serve`]).

use super::codec::{Dec, DecResult, Enc, TAG_CALL_ERROR, TAG_OK, TAG_OTHER_ERROR};
use super::frame::{framed, write_frame};
use super::request::{decode_request, encode_results, prefetchable, Buffers};
use crate::error::MasterError;
use crate::fmu::{ffi, shm, Fmu, FmuInstance, Op};
use crate::host::{FmuLog, Host, LogLevel};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `worker --extracted DIR --shm-fd N --fmu-log LEVEL [--model-exchange SPEC] -- FMU NAME` (what
/// [`super::IsolatedInstance::spawn_shared`] passes) for a front end without `cosim`'s command
/// line: parses and [`serve`]s, the FMU's messages of LEVEL handed to `log` (made from the level).
pub fn serve_args(args: &[String], log: impl FnOnce(LogLevel) -> Option<Arc<dyn FmuLog>>) -> std::io::Result<()> {
    let bad = |m: &str| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("worker arguments: {m}"));
    let mut it = args.iter().map(String::as_str).skip_while(|a| *a != "worker").skip(1);
    let (mut extracted, mut fd, mut level) = (None, None, LogLevel::default());
    let mut me = (None, None);
    loop {
        match it.next() {
            Some("--model-exchange") => {
                me = it.next().and_then(super::command::parse_model_exchange).ok_or_else(|| bad("a bad SPEC"))?;
            }
            Some("--fmu-log") => {
                level = it.next().and_then(LogLevel::parse).ok_or_else(|| bad("no or an unknown LEVEL"))?;
            }
            Some("--extracted") => extracted = Some(PathBuf::from(it.next().ok_or_else(|| bad("no DIR"))?)),
            Some("--shm-fd") => fd = Some(it.next().and_then(|n| n.parse().ok()).ok_or_else(|| bad("no FD"))?),
            Some("--") => break,
            other => return Err(bad(&format!("unexpected {other:?}"))),
        }
    }
    let fmu = PathBuf::from(it.next().ok_or_else(|| bad("no FMU"))?);
    let name = it.next().ok_or_else(|| bad("no instance name"))?;
    let fd = fd.ok_or_else(|| bad("no --shm-fd"))?;
    serve(&fmu, extracted.as_deref(), name, fd, log(level), me)
}

/// The worker gets SIGKILL when the master dies, however it dies (`PR_SET_PDEATHSIG`): a worker
/// blocked in an FMU call would otherwise outlive a master ended by SIGKILL. (Linux ties this to
/// the master's thread that started the worker: a program that starts isolated instances on a
/// thread that ends before the run does loses its workers with that thread.)
pub(crate) fn die_with_the_master() {
    let _ = cosim_os::process::die_with_parent();
    // The master died before the prctl: nobody is left to serve.
    if cosim_os::process::orphaned() {
        std::process::exit(1);
    }
}

/// Encodes an instance error as a response (after the response's first `start` bytes).
pub(super) fn encode_error(out: &mut Vec<u8>, start: usize, e: &MasterError) {
    out.truncate(start);
    match e {
        MasterError::Call { time, status, last_log, .. } => {
            Enc(out).u8(TAG_CALL_ERROR).f64(*time).str(status).str(last_log);
        }
        other => {
            Enc(out).u8(TAG_OTHER_ERROR).str(&other.to_string());
        }
    }
}

/// Executes one request on `instance` (the worker's in-process instance); its response is appended
/// to `out`. `Ok(false)` when the call failed (the response is the error); `Err` is a protocol
/// error.
pub(super) fn execute(
    instance: &mut dyn FmuInstance,
    req: &[u8],
    b: &mut Buffers,
    out: &mut Vec<u8>,
) -> DecResult<bool> {
    let start = out.len();
    out.push(TAG_OK);
    let result = decode_request(req, b, |mut call| {
        let r = instance.execute(call.reborrow());
        if r.is_ok() {
            encode_results(&call, &mut Enc(out));
        }
        r
    })?;
    match result {
        Ok(()) => Ok(true),
        Err(e) => {
            encode_error(out, start, &e);
            Ok(false)
        }
    }
}

/// Executes a batch (`[u32 length][request]`…) in order until a call fails; the response in
/// `out` is the index of the last request executed, then its response. `progress` is told the
/// index of each request before it runs.
pub(super) fn execute_batch(
    instance: &mut dyn FmuInstance,
    batch: &[u8],
    b: &mut Buffers,
    out: &mut Vec<u8>,
    mut progress: impl FnMut(u32),
) -> DecResult<()> {
    let mut d = Dec(batch);
    let mut index = 0u32;
    loop {
        let n = d.count(1)?;
        if n == 0 {
            if index == 0 {
                return Err("a batch without a call".into());
            }
            return speculate(instance, d, index, b, out, progress);
        }
        let req = d.take(n)?;
        progress(index);
        out.clear();
        out.extend_from_slice(&index.to_le_bytes());
        if !execute(instance, req, b, out)? || d.0.is_empty() {
            return Ok(());
        }
        index += 1;
    }
}

/// The speculative getters after a batch's calls all succeeded (module docs): each one's
/// response is appended to `out` as `[u32 length][response]`, until one fails.
pub(super) fn speculate(
    instance: &mut dyn FmuInstance,
    mut d: Dec<'_>,
    mut index: u32,
    b: &mut Buffers,
    out: &mut Vec<u8>,
    mut progress: impl FnMut(u32),
) -> DecResult<()> {
    while !d.0.is_empty() {
        let n = d.count(1)?;
        let req = d.take(n)?;
        if !req.first().and_then(|c| Op::from_code(*c)).is_some_and(prefetchable) {
            return Err("a speculative request that is not a getter".into());
        }
        progress(index);
        index += 1;
        if !framed(out, |out| execute(instance, req, b, out))? {
            break;
        }
    }
    Ok(())
}

/// The worker process (`cosim worker --shm-fd N -- FMU INSTANCE`): maps the master's shared
/// memory, loads the FMU, instantiates it, sends the handshake over stdout and serves batches
/// until the master closes the channel. The FMU's messages go to `log`. Returns when the master
/// is gone; `Err` only for I/O or protocol errors (the master reports those as the death of the
/// worker).
pub fn serve(
    fmu: &Path,
    extracted: Option<&Path>,
    name: &str,
    shm_fd: i32,
    log: Option<Arc<dyn FmuLog>>,
    (interface, solver): (Option<crate::host::Interface>, Option<crate::ode::Options>),
) -> std::io::Result<()> {
    die_with_the_master();
    let channel = shm::Channel::open(shm_fd)?;
    let (_stdin, responses) = ffi::take_stdio_for_protocol()?;
    let mut output: BufWriter<File> = BufWriter::with_capacity(256, responses);
    let mut out = Vec::with_capacity(256);
    let loaded = match extracted {
        Some(dir) => Fmu::load_extracted_as(fmu, dir, log, interface, solver),
        None => Fmu::load_in(fmu, &Host { log, interface, solver, ..Host::default() }),
    };
    // Boxed as the version's own instance: one dynamic dispatch per call, as in process.
    let loaded = loaded.and_then(|f| f.instantiate(name)).map(crate::fmu::Instance::boxed);
    let mut instance = match loaded {
        Ok(instance) => {
            Enc(&mut out).u8(TAG_OK);
            write_frame(&mut output, &out)?;
            instance
        }
        Err(e) => {
            let message = match e {
                MasterError::Fmu { message, .. } => message,
                other => other.to_string(),
            };
            Enc(&mut out).u8(TAG_OTHER_ERROR).str(&message);
            return write_frame(&mut output, &out);
        }
    };
    drop(output);
    let mut req = Vec::with_capacity(256);
    let mut buffers = Buffers::default();
    let mut last = 0;
    // The master's death also ends the worker through PR_SET_PDEATHSIG; this is the fallback.
    let master_alive = || !cosim_os::process::orphaned();
    while let Some(seq) = channel.wait_request(last, &mut req, master_alive)? {
        last = seq;
        execute_batch(instance.as_mut(), &req, &mut buffers, &mut out, |i| channel.set_progress(i))
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        channel.send_response(seq, &out)?;
    }
    Ok(())
}
