//! The `cosim` command line over the co-simulation library [`master`]: what belongs to a
//! process and a terminal rather than to a library.
//!
//! - [`cli`]: the commands, one file each (`cosim run`, `serve`, `tune`, `check`, `bench`,
//!   `export-ssp`, `info`, `plot`, and the internal `worker` and `check-worker`);
//! - [`guard`]: the process-wide signal guard (SIGINT/SIGTERM, crashes, an FMU's `exit()`), the
//!   [`master::host::Host`] that `cosim` hands the library;
//! - [`run`]: `cosim run`'s input detection, output folder (locked) and files;
//! - [`progress`]: the progress bar; [`plot`]: `cosim plot` and the reports' figures;
//! - [`precision`] and [`bench`]: `cosim bench --precision` and `cosim bench`.
//!
//! Cargo keeps the direction: this crate depends on `master`, never the reverse, and the Python
//! extension depends on `master` alone. Its OS calls go through `cosim-os`.
#![warn(missing_docs)]

pub mod bench;
pub mod cli;
pub mod guard;
pub mod plot;
pub mod precision;
pub mod progress;
pub mod run;
