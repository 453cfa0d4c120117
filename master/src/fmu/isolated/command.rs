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
