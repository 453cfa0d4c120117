//! Output files written safely: created afresh (a symbolic link replaced, never followed) or
//! replaced whole through a temporary file; I/O errors naming the file.

use crate::error::MasterError;
use std::fs::File;
use std::io::Write;
use std::path::Path;

pub(super) fn io(path: &Path) -> impl Fn(std::io::Error) -> MasterError + '_ {
    move |source| MasterError::Io { path: path.to_path_buf(), source }
}

/// [`io`] for a failed write of rows: a full disk (or the file size limit, `ulimit -f`) is
/// named as such, with what the file holds now ([`cut_partial_line`]).
pub(super) fn written(path: &Path) -> impl Fn(std::io::Error) -> MasterError + '_ {
    move |source| {
        let why = match source.kind() {
            std::io::ErrorKind::StorageFull => "disk full",
            std::io::ErrorKind::FileTooLarge => "file too large for the file size limit (ulimit -f)",
            _ => return MasterError::Io { path: path.to_path_buf(), source },
        };
        let text = format!("{why} ({source}): the file ends with its last complete row");
        MasterError::Io { path: path.to_path_buf(), source: std::io::Error::new(source.kind(), text) }
    }
}

/// After a failed write: drops what `out` still buffers (it would be written on drop) and cuts
/// the file back to the end of its last complete line, so that no row ends mid-number (a
/// partly written `-65.984831859` is still a number). Best effort: the error that led here is
/// what the caller reports.
pub(super) fn cut_partial_line(out: std::io::BufWriter<File>) {
    use std::os::unix::fs::FileExt;
    let (file, _) = out.into_parts();
    let Ok(len) = file.metadata().map(|m| m.len()) else { return };
    let mut buf = vec![0u8; 1 << 16];
    let mut end = len;
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let n = (end - start) as usize;
        if file.read_exact_at(&mut buf[..n], start).is_err() {
            return;
        }
        if let Some(i) = buf[..n].iter().rposition(|b| *b == b'\n') {
            let keep = start + i as u64 + 1;
            if keep < len {
                let _ = file.set_len(keep);
            }
            return;
        }
        end = start;
    }
    let _ = file.set_len(0);
}

/// Creates `path` afresh: a symbolic link placed there is replaced by the file, never followed
/// (a link from out/results.csv to ~/.bashrc must not overwrite ~/.bashrc).
pub(super) fn create_replacing(path: &Path) -> std::io::Result<File> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        std::fs::remove_file(path)?;
    }
    // Readable too: after a failed write the file is cut back to its last line (cut_partial_line).
    std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(path)
}

/// Writes `bytes` to a new file next to `path` and renames it to `path`: a symbolic link at
/// `path` is replaced, not followed, and a reader never sees half a file. When the temporary
/// file cannot be written (a full disk has no block for a new file), it is removed and an
/// existing regular file at `path` is overwritten in place instead (its blocks exist): the
/// content is final, though a reader at that moment could see it half written.
pub(super) fn write_replacing(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    let _ = std::fs::remove_file(&tmp);
    let written = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.flush()
    });
    match written {
        Ok(()) => std::fs::rename(&tmp, path),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            if !std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file()) {
                return Err(e);
            }
            let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
            f.write_all(bytes)?;
            f.set_len(bytes.len() as u64)?;
            f.flush()
        }
    }
}
