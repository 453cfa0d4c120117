//! The `cosim` command line's own parts (the library, `master`, never uses them).

pub mod run;
pub mod serve;
pub mod settings_flags;
pub mod stderr;
pub mod tune;
