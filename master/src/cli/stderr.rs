//! Pointing file descriptor 2 elsewhere and back (`cosim tune` sends the FMUs' messages to a
//! log while its progress bar keeps the terminal).

use anyhow::{bail, Result};

extern "C" {
    fn dup(fd: i32) -> i32;
    fn dup2(old: i32, new: i32) -> i32;
}

/// Points file descriptor 2 at `path` (created/truncated); returns the original stderr.
pub fn redirect_stderr(path: &std::path::Path) -> Result<std::fs::File> {
    use std::os::fd::{AsRawFd, FromRawFd};
    let log = std::fs::File::create(path)?;
    // SAFETY: dup and dup2 on descriptors this process owns; the duplicate of fd 2 is handed to a
    // File that owns it from here on.
    unsafe {
        let saved = dup(2);
        if saved < 0 || dup2(log.as_raw_fd(), 2) < 0 {
            bail!("dup/dup2 failed");
        }
        Ok(std::fs::File::from_raw_fd(saved))
    }
}

/// Puts the original stderr back on file descriptor 2.
pub fn restore_stderr(saved: std::fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: `saved` is an open descriptor owned by this process.
    unsafe {
        dup2(saved.as_raw_fd(), 2);
    }
}
