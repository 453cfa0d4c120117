//! Instances out of process (`cosim run --isolate`): [`IsolatedInstance`] implements [`FmuInstance`](crate::fmu::FmuInstance) by
//! forwarding every call to a worker process (`cosim worker -- FMU INSTANCE`, see [`serve`]) that
//! loads the FMU and owns the one instance. A vendor FMU that crashes (abort, segfault, stack
//! overflow…) then kills its worker, not the master: the call in flight fails with
//! [`MasterError::Worker`](crate::MasterError::Worker) naming the instance, the function, the time and how the process died,
//! and the run stops with everything up to that point on disk.
//!
//! # Protocol
//! The worker reports once over its stdout pipe (the handshake, a frame `[u32 length][body]`,
//! little-endian as everything here; `frame.rs`): `0` when the FMU is loaded and instantiated, or
//! `2, message` when it cannot be (the master reads the model description from the extraction
//! it shares with the worker). Every call after that goes through shared memory ([`shm`](crate::fmu::shm)): the
//! master writes a *batch* and the worker answers it once. A batch is the setters made since the
//! last round trip (`fmi2Set*` return no values, so they wait for the next call) followed by
//! the call that needs an answer, each as `[u32 length][request]`.
//!
//! *Getters after a step are prefetched*: the master remembers the getters it made after the
//! last `fmi2DoStep` (before any other call) and sends them with the next `fmi2DoStep`, after a
//! zero length that marks them as speculative. When the step succeeded the worker executes
//! them on the instance as it is after the step and appends each one's response
//! (`[u32 length][response]`, stopping at a failing one). A getter that then asks exactly the
//! same (op, value references, count) before any other call takes its values from there; any
//! other call drops what is left. Getters have no effect on the instance, so results are the
//! same bit for bit; a communication step costs one round trip per instance (inputs,
//! `fmi2DoStep` and outputs) once the pattern is known.
//!
//! - request: a [`Call`](crate::fmu::Call): its op code (`u8`, [`Op`](crate::fmu::Op)'s discriminant) then its arguments
//!   (`request.rs`). A getter sends its value references and the number of values it
//!   wants.
//! - response: `u32 index` of the request it answers (the last, or the first that failed: the
//!   ones after it are not executed), then `0` and the results of a getter
//!   (`request.rs`), or `1, time: f64, status, last_log` for an [`MasterError::Call`](crate::MasterError::Call), or
//!   `2, message` for any other error. An error of a deferred setter is reported by the call
//!   that sent it, naming the setter.
//!
//! Every [`Call`](crate::fmu::Call) goes to the worker, `SaveState`/`RestoreState` included: the worker's
//! instance keeps the saved `fmi2FMUstate` (iterative coupling works isolated).
//!
//! Scalars are `u8`/`u32`/`i32`/`f64`; a slice is `u32 count` then the elements (booleans as
//! `u8`); a string is `u32 length` then UTF-8 bytes. Closing the channel ([`shm::Channel::close`](crate::fmu::shm::Channel::close))
//! ends the worker (it frees the instance and exits 0). The worker points its descriptors 0 and
//! 1 at `/dev/null` and stderr before loading the FMU, so nothing the FMU prints can corrupt
//! the handshake.
//!
//! # Processes and files
//! The master extracts each FMU once ([`Archive`](crate::fmu::Archive), shared by the workers of all its instances
//! through `cosim worker --extracted DIR`) and removes the folder after the last of them ended:
//! a worker that dies leaves no files. Each worker runs in its own process group, so the
//! terminal's Ctrl-C (sent to the foreground group) and `timeout`'s signal reach only the master,
//! which decides: it stops at the next communication point, and kills a worker whose call does
//! not return within [`WORKER_GRACE`] (the run's status is then `interrupted`). Waiting for an
//! answer watches the worker process every 100 ms: a worker that died is reported (with the call
//! it died in, which it records in the shared header before each call) and its process group
//! killed; one that does not answer within its timeout ([`DEFAULT_WORKER_TIMEOUT`],
//! `[simulation] worker_timeout`) is killed and reported as hung.
//!
//! # Files
//! One job each: `codec.rs` (the byte codec), `request.rs` (a [`Call`](crate::fmu::Call) on the wire),
//! `frame.rs` (framing), `command.rs` (how a worker is started), `client.rs` (the master side,
//! [`IsolatedInstance`]), `worker.rs` (the worker side, [`serve`]), `tests.rs`.

mod client;
mod codec;
mod command;
mod cpus;
mod frame;
mod request;
#[cfg(test)]
mod tests;
mod worker;

pub(crate) use client::describe_exit;
pub use client::IsolatedInstance;
pub use command::{parse_model_exchange, worker_command, worker_exe, WorkerCommand};
pub use cpus::placement as worker_cpus;
pub(crate) use worker::die_with_the_master;
pub use worker::{serve, serve_args};

use std::time::Duration;

/// How long a worker's call may go on after SIGINT/SIGTERM before the master kills the worker
/// (shorter than `cosim`'s signal guard's grace, so the run ends in order).
pub const WORKER_GRACE: Duration = Duration::from_millis(500);

/// How long a worker may take to answer one call before the master kills it as hung (default
/// of `[simulation] worker_timeout`).
pub const DEFAULT_WORKER_TIMEOUT: Duration = Duration::from_secs(60);

/// Environment variable naming the executable that serves `worker` (default: the running
/// executable, which is right for `cosim`; a program embedding the master library sets it to
/// the `cosim` binary).
pub const WORKER_EXE_ENV: &str = "COSIM_WORKER_EXE";
