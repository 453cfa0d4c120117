//! Pointing file descriptor 2 elsewhere and back (`cosim tune` sends the FMUs' messages to a
//! log while its progress bar keeps the terminal).

use anyhow::Result;

/// Points file descriptor 2 at `path` (created/truncated); returns the original stderr.
pub fn redirect_stderr(path: &std::path::Path) -> Result<std::fs::File> {
    let log = std::fs::File::create(path)?;
    Ok(cosim_os::fd::redirect_stderr(&log)?)
}

/// Puts the original stderr back on file descriptor 2.
pub fn restore_stderr(saved: std::fs::File) {
    let _ = cosim_os::fd::restore_stderr(&saved);
}
