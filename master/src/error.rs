//! The master's error type: every variant names what the user needs to act on.

use std::path::PathBuf;

/// The longest error message shown in full (64 KiB): a longer one (a start list of a million
/// values quoted back, 7.9 MB) keeps its first 48 KiB and last 8 KiB ([`bounded`]).
pub const MESSAGE_LIMIT: usize = 64 << 10;

/// `text` cut in the middle to about [`MESSAGE_LIMIT`] bytes, saying how much was cut.
pub fn bounded(text: String) -> String {
    if text.len() <= MESSAGE_LIMIT {
        return text;
    }
    let mut head = 48 << 10;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - (8 << 10);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!("{} … [{} bytes cut] … {}", &text[..head], tail - head, &text[tail..])
}

/// Errors of the master library.
#[derive(Debug, thiserror::Error)]
pub enum MasterError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The FMU archive or its content is unusable (not a zip, no modelDescription.xml, unsafe
    /// entries, wrong FMI version, no Co-Simulation, missing binary or symbol, …).
    #[error("{path}: {message}")]
    Fmu {
        /// The .fmu file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The system description is invalid.
    #[error("{path}: {key}: {message}")]
    System {
        /// The system file.
        path: PathBuf,
        /// The TOML key (e.g. `connections[2].to`).
        key: String,
        /// What is wrong, with the bad value.
        message: String,
    },
    /// An FMU call failed during the run.
    #[error("{instance}: {function} at t = {time} returned {status}{}", if last_log.is_empty() { String::new() } else { format!(": {last_log}") })]
    Call {
        /// Instance name.
        instance: String,
        /// The fmi2 function.
        function: &'static str,
        /// Simulation time.
        time: f64,
        /// `fmi2Discard`, `fmi2Error`, `fmi2Fatal`, or an unknown status code.
        status: String,
        /// The FMU's last log message.
        last_log: String,
    },
    /// The worker process of an isolated instance (`--isolate`) died or broke the protocol.
    #[error("{instance}: {function} at t = {time}: {message}")]
    Worker {
        /// Instance name.
        instance: String,
        /// The fmi2 function being called.
        function: &'static str,
        /// Simulation time.
        time: f64,
        /// What happened, e.g. `worker process died (signal 6, SIGABRT)`.
        message: String,
    },
    /// A non-finite value appeared.
    #[error("{instance}.{variable} = {value} at t = {time}")]
    NotFinite {
        /// Instance name.
        instance: String,
        /// Variable name.
        variable: String,
        /// The value.
        value: f64,
        /// Simulation time.
        time: f64,
    },
    /// A worker thread stepping an instance failed to start or stopped.
    #[error("{instance}: worker thread at t = {time}: {message}")]
    Thread {
        /// Instance name (all instances when the threads could not start).
        instance: String,
        /// Simulation time.
        time: f64,
        /// What happened.
        message: String,
    },
    /// The run was interrupted (SIGINT/SIGTERM, or the flag given to
    /// [`crate::Execution::interrupt_on`]).
    #[error("interrupted at t = {time}")]
    Interrupted {
        /// Simulation time reached.
        time: f64,
    },
    /// A step was asked of an execution that already stopped.
    #[error("the execution stopped earlier: {message}")]
    Stopped {
        /// Why it stopped.
        message: String,
    },
    /// An instance ended the simulation (FMI 2.0: `fmi2DoStep` returned `fmi2Discard` and
    /// `fmi2GetBooleanStatus(fmi2Terminated)` is true) at its `fmi2LastSuccessfulTime`. Not a
    /// failure: [`crate::Execution`] ends the run there with status `terminated`
    /// ([`crate::observer::Status::Terminated`]) and this text as the summary's message.
    #[error("terminated by {instance} at t = {time}")]
    Terminated {
        /// Instance name.
        instance: String,
        /// Its `fmi2LastSuccessfulTime` (s).
        time: f64,
    },
    /// The input is of a kind this build cannot read (e.g. an SSP).
    #[error("{path}: {message}")]
    Unsupported {
        /// The input file.
        path: PathBuf,
        /// What is not supported.
        message: String,
    },
    /// Isolated instances cannot be started (no worker executable known).
    #[error("isolate: {message}")]
    Isolation {
        /// What is missing.
        message: String,
    },
    /// A bond's cumulative residual energy Σ|δE| passed `max_residual_energy`: a bound on how
    /// much energy the coupling has created so far, not by itself a sign of divergence.
    #[error("residual energy bound exceeded at t = {time}: {message}")]
    ResidualEnergyBound {
        /// Simulation time.
        time: f64,
        /// The bond, its Σ|δE| and the bound.
        message: String,
    },
    /// A paced run fell further behind than its lateness limit, or a live client reset it
    /// ([`crate::realtime`]).
    #[error("{message}")]
    RealTime {
        /// What happened (lateness, limit, overruns; or the reset).
        message: String,
    },
    /// The run was stopped because it diverged.
    #[error("diverged at t = {time}: {message}")]
    Diverged {
        /// Simulation time.
        time: f64,
        /// What diverged (instance, bond).
        message: String,
    },
}

impl MasterError {
    /// Whether this is an FMU call that returned `fmi2Discard` (in process or from a worker
    /// process: the status text starts with the status name).
    pub fn is_discard(&self) -> bool {
        matches!(self, Self::Call { status, .. } if status.starts_with("fmi2Discard") || status.starts_with("fmi3Discard"))
    }
}

/// Result alias.
pub type Result<T, E = MasterError> = std::result::Result<T, E>;

#[cfg(test)]
mod bounded_tests {
    #[test]
    fn huge_messages_are_cut_in_the_middle() {
        assert_eq!(super::bounded("short".into()), "short");
        let long = format!("start{}end", "é".repeat(4_000_000));
        let b = super::bounded(long);
        assert!(b.len() < super::MESSAGE_LIMIT + 100 && b.starts_with("start") && b.ends_with("end"), "{}", b.len());
        assert!(b.contains(" bytes cut] "));
    }
}
