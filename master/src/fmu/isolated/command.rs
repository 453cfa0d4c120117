//! How a worker process is started: the program serving `cosim worker` ([`WorkerCommand`]),
//! handed in by the front end ([`crate::host::Host::workers`]) or named by `$COSIM_WORKER_EXE`.

use super::WORKER_EXE_ENV;
use crate::error::{MasterError, Result};
use std::path::PathBuf;

pub use crate::host::WorkerCommand;

/// How workers are started: `$COSIM_WORKER_EXE` (an absolute path to a `cosim` binary), else
/// what the program handed in with `host` (`cosim` names itself, the Python package its
/// interpreter with the extension module), else an error saying so (the running executable is
/// not assumed to serve `worker`: an interpreter would run a script named `worker` from the
/// working directory).
pub fn worker_command(host: &crate::host::Host) -> Result<WorkerCommand> {
    let err = |message: String| MasterError::Isolation { message };
    if let Some(p) = std::env::var_os(WORKER_EXE_ENV) {
        let p = PathBuf::from(p);
        if !p.is_absolute() {
            return Err(err(format!(
                "${WORKER_EXE_ENV} = {:?} is not an absolute path; name the cosim binary by its absolute path",
                p.display().to_string()
            )));
        }
        return Ok(WorkerCommand::exe(&p));
    }
    if let Some(c) = &host.workers {
        return Ok(c.clone());
    }
    let exe = std::env::current_exe().map_or_else(|_| "this program".to_owned(), |p| p.display().to_string());
    Err(err(format!(
        "isolated instances run in `cosim worker` processes, and {exe} does not serve them; \
         set ${WORKER_EXE_ENV} to the absolute path of the cosim binary"
    )))
}

/// The executable that serves `worker` ([`worker_command`]'s program; its arguments ignored).
pub fn worker_exe(host: &crate::host::Host) -> Result<PathBuf> {
    worker_command(host).map(|c| c.program)
}

/// `--model-exchange SPEC` for a worker of `host` (none when it asks for nothing): SPEC is
/// `INTERFACE,METHOD,RTOL,ATOL,MAX_STEP,FIXED_STEP` (INTERFACE `me`, `cs` or `auto`), read back
/// by [`parse_model_exchange`].
pub(crate) fn model_exchange_args(host: &crate::host::Host) -> Vec<String> {
    use crate::host::Interface;
    if host.interface.is_none() && host.solver.is_none() {
        return Vec::new();
    }
    let interface = match host.interface {
        Some(Interface::ModelExchange) => "me",
        Some(Interface::CoSimulation) => "cs",
        None => "auto",
    };
    let o = host.solver.clone().unwrap_or_default();
    let method = match o.method {
        crate::ode::Method::Bdf => "bdf",
        crate::ode::Method::Euler => "euler",
        crate::ode::Method::Rk4 => "rk4",
    };
    // `{:?}` of an f64 reads back exactly.
    vec![
        "--model-exchange".into(),
        format!("{interface},{method},{:?},{:?},{:?},{:?}", o.rtol, o.atol, o.max_step, o.fixed_step),
    ]
}

/// The interface and integrator options of a worker's `--model-exchange SPEC` (what the master
/// passes: `INTERFACE,METHOD,RTOL,ATOL,MAX_STEP,FIXED_STEP`); `None` for a bad SPEC.
pub fn parse_model_exchange(spec: &str) -> Option<(Option<crate::host::Interface>, Option<crate::ode::Options>)> {
    use crate::host::Interface;
    let parts: Vec<&str> = spec.split(',').collect();
    let [interface, method, rtol, atol, max_step, fixed_step] = parts.as_slice() else { return None };
    let interface = match *interface {
        "auto" => None,
        other => Some(Interface::parse(other)?),
    };
    let method = match *method {
        "bdf" => crate::ode::Method::Bdf,
        "euler" => crate::ode::Method::Euler,
        "rk4" => crate::ode::Method::Rk4,
        _ => return None,
    };
    let options = crate::ode::Options {
        method,
        rtol: rtol.parse().ok()?,
        atol: atol.parse().ok()?,
        max_step: max_step.parse().ok()?,
        fixed_step: fixed_step.parse().ok()?,
    };
    Some((interface, Some(options)))
}
