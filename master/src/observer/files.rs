//! Output files written safely: created afresh (a symbolic link replaced, never followed) or
//! replaced whole through a temporary file; I/O errors naming the file.

use crate::error::MasterError;
use std::fs::File;
use std::io::Write;
use std::path::Path;

pub(super) fn io(path: &Path) -> impl Fn(std::io::Error) -> MasterError + '_ {
    move |source| MasterError::Io { path: path.to_path_buf(), source }
}

/// Creates `path` afresh: a symbolic link placed there is replaced by the file, never followed
/// (a link from out/results.csv to ~/.bashrc must not overwrite ~/.bashrc).
pub(super) fn create_replacing(path: &Path) -> std::io::Result<File> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        std::fs::remove_file(path)?;
    }
    File::create(path)
}

/// Writes `bytes` to a new file next to `path` and renames it to `path`: a symbolic link at
/// `path` is replaced, not followed, and a reader never sees half a file.
pub(super) fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
    f.write_all(bytes)?;
    drop(f);
    std::fs::rename(&tmp, path)
}
