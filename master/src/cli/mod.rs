//! The `cosim` command line's own parts (the library, `master`, never uses them).

pub mod serve;
pub mod settings_flags;
