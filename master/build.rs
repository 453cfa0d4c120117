//! Compiles `csrc/logger.c`, the variadic `fmi2CallbackLogger` shim (see `src/fmu/ffi.rs`).

fn main() {
    println!("cargo:rerun-if-changed=csrc/logger.c");
    cc::Build::new().file("csrc/logger.c").warnings(true).extra_warnings(true).compile("cosim_logger");
}
