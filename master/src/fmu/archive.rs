//! The FMU archive: a zip file extracted into a private temporary folder, removed on drop.
//!
//! Extraction refuses everything that could write outside that folder or exhaust the disk:
//! entries whose names are absolute, contain `..`, backslashes or drive prefixes; symbolic links
//! and other special files; more than [`MAX_ENTRIES`] entries; more than
//! [`MAX_UNCOMPRESSED_BYTES`] bytes once decompressed (counted while writing, the sizes in the
//! headers are not trusted).

use crate::error::{MasterError, Result};
use crate::host::Host;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Most bytes an FMU may hold once decompressed (1 GiB).
pub const MAX_UNCOMPRESSED_BYTES: u64 = 1 << 30;
/// Most entries (files and folders) an FMU may hold.
pub const MAX_ENTRIES: usize = 10_000;
/// Largest `modelDescription.xml` cosim reads (256 MiB), the one limit of `cosim info`, `cosim
/// run` and `cosim run --isolate` ([`Archive::read_model_description`], [`Archive::extract`],
/// [`Archive::model_description`]).
pub const MAX_DESCRIPTION_BYTES: u64 = 256 << 20;

/// The error for a `modelDescription.xml` of `size` bytes (at least) above [`MAX_DESCRIPTION_BYTES`].
fn description_too_large(path: &Path, size: u64) -> MasterError {
    fmu_error(
        path,
        format!(
            "modelDescription.xml is {size} bytes, more than cosim's limit of {MAX_DESCRIPTION_BYTES} bytes ({} MiB) \
             for a model description",
            MAX_DESCRIPTION_BYTES >> 20
        ),
    )
}

/// Unix file-type bits of the mode stored in zip entries (`S_IFMT` and friends).
const S_IFMT: u32 = 0o170_000;
const S_IFREG: u32 = 0o100_000;
const S_IFDIR: u32 = 0o040_000;
const S_IFLNK: u32 = 0o120_000;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// An extracted FMU. The folder and everything in it is removed when this is dropped.
#[derive(Debug)]
pub struct Archive {
    source: PathBuf,
    dir: PathBuf,
    /// Whether the folder is this archive's to remove (not when it was extracted by another
    /// process: [`Archive::extracted_by_master`]).
    owned: bool,
    /// Told of the folder while it exists.
    host: Host,
}

impl Drop for Archive {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        // Nothing useful can be done if removal fails (e.g. someone else removed it).
        let _ = std::fs::remove_dir_all(&self.dir);
        self.host.untrack_dir(&self.dir);
    }
}

/// What [`Archive::read_model_description`] returns without extracting the archive.
#[derive(Debug, Clone)]
pub struct Listing {
    /// The text of `modelDescription.xml`.
    pub model_description: String,
    /// Every entry name of the archive, in archive order.
    pub entries: Vec<String>,
}

impl Archive {
    /// Extracts the `.fmu` at `path` with the default limits ([`MAX_UNCOMPRESSED_BYTES`],
    /// [`MAX_ENTRIES`]).
    pub fn extract(path: &Path) -> Result<Self> {
        Self::extract_in(path, &Host::default())
    }

    /// [`Archive::extract`], the folder registered with `host`'s cleanup while it exists.
    pub fn extract_in(path: &Path, host: &Host) -> Result<Self> {
        let (archive, names) = Self::unpack(path, MAX_UNCOMPRESSED_BYTES, MAX_ENTRIES, host)?;
        if !archive.dir.join("modelDescription.xml").is_file() {
            return Err(fmu_error(path, missing_description_message(names.iter().map(String::as_str))));
        }
        Ok(archive)
    }

    /// Extracts the `.fmu` at `path`, refusing archives with more than `max_entries` entries or
    /// more than `max_bytes` bytes once decompressed (the bytes actually written are counted).
    pub fn extract_with_limits(path: &Path, max_bytes: u64, max_entries: usize) -> Result<Self> {
        let (archive, names) = Self::unpack(path, max_bytes, max_entries, &Host::default())?;
        if !archive.dir.join("modelDescription.xml").is_file() {
            return Err(fmu_error(path, missing_description_message(names.iter().map(String::as_str))));
        }
        Ok(archive)
    }

    /// Extracts another zip package (an SSP) with the default limits and the same refusals;
    /// `required` must be a file at its top level (e.g. `SystemStructure.ssd`).
    pub fn extract_package(path: &Path, required: &str, host: &Host) -> Result<Self> {
        let (archive, names) = Self::unpack(path, MAX_UNCOMPRESSED_BYTES, MAX_ENTRIES, host)?;
        if !archive.dir.join(required).is_file() {
            return Err(fmu_error(
                path,
                format!("no {required} at the top level of the archive ({} entries)", names.len()),
            ));
        }
        Ok(archive)
    }

    /// The extraction itself; returns the entry names too.
    fn unpack(path: &Path, max_bytes: u64, max_entries: usize, host: &Host) -> Result<(Self, Vec<String>)> {
        let mut zip = open_zip(path)?;
        if zip.len() > max_entries {
            return Err(fmu_error(
                path,
                format!(
                    "the archive has {} entries, more than the limit of {max_entries} (refused as a possible zip bomb)",
                    zip.len()
                ),
            ));
        }
        let dir = create_private_dir(path)?;
        // Removed by the host's cleanup too if the process ends abnormally (`cosim`: its guard).
        host.track_dir(&dir);
        let archive = Self { source: path.to_path_buf(), dir, owned: true, host: host.clone() };
        // From here on, returning an error drops `archive`, which removes the folder.
        let mut written: u64 = 0;
        let mut buf = vec![0u8; 64 * 1024];
        for i in 0..zip.len() {
            let name = zip.name_for_index(i).unwrap_or("").to_owned();
            let mut entry = zip
                .by_index(i)
                .map_err(|e| fmu_error(path, format!("entry \"{}\" cannot be read: {e}", escape(&name))))?;
            let kind = entry_kind(entry.unix_mode(), entry.is_dir());
            let relative = check_entry(path, &name, &kind)?;
            let is_description = relative == Path::new("modelDescription.xml");
            if is_description && entry.size() > MAX_DESCRIPTION_BYTES {
                return Err(description_too_large(path, entry.size()));
            }
            let mut entry_written: u64 = 0;
            let target = archive.dir.join(&relative);
            match kind {
                EntryKind::Dir => {
                    std::fs::create_dir_all(&target).map_err(|e| entry_io(path, &name, &e))?;
                }
                EntryKind::Symlink | EntryKind::Special(_) => {}
                EntryKind::File => {
                    if let Some(parent) = target.parent() {
                        std::fs::create_dir_all(parent).map_err(|e| entry_io(path, &name, &e))?;
                    }
                    // create_new: never follows or overwrites anything already there (duplicate
                    // entries are refused rather than silently replaced).
                    let mut out =
                        std::fs::OpenOptions::new().write(true).create_new(true).open(&target).map_err(|e| {
                            if e.kind() == std::io::ErrorKind::AlreadyExists {
                                fmu_error(path, format!("entry \"{}\" refused: duplicate entry name", escape(&name)))
                            } else {
                                entry_io(path, &name, &e)
                            }
                        })?;
                    loop {
                        let n = entry.read(&mut buf).map_err(|e| {
                            fmu_error(path, format!("entry \"{}\" cannot be decompressed: {e}", escape(&name)))
                        })?;
                        if n == 0 {
                            break;
                        }
                        written = written.saturating_add(n as u64);
                        entry_written = entry_written.saturating_add(n as u64);
                        if is_description && entry_written > MAX_DESCRIPTION_BYTES {
                            return Err(description_too_large(path, entry_written));
                        }
                        if written > max_bytes {
                            return Err(fmu_error(
                                path,
                                format!(
                                    "entry \"{}\": the archive decompresses to more than the limit of {max_bytes} bytes \
                                     (refused as a possible zip bomb)",
                                    escape(&name)
                                ),
                            ));
                        }
                        out.write_all(buf.get(..n).unwrap_or_default()).map_err(|e| entry_io(path, &name, &e))?;
                    }
                }
            }
        }
        let names = zip.file_names().map(str::to_owned).collect();
        Ok((archive, names))
    }

    /// Reads `modelDescription.xml` and the entry names without extracting anything (for
    /// `cosim info`). Refuses the same archives [`Archive::extract`] refuses for their entry
    /// count; the description itself may be at most [`MAX_DESCRIPTION_BYTES`] long.
    pub fn read_model_description(path: &Path) -> Result<Listing> {
        let mut zip = open_zip(path)?;
        if zip.len() > MAX_ENTRIES {
            return Err(fmu_error(
                path,
                format!("the archive has {} entries, more than the limit of {MAX_ENTRIES}", zip.len()),
            ));
        }
        let entries: Vec<String> = zip.file_names().map(str::to_owned).collect();
        let Some(index) = zip.index_for_name("modelDescription.xml") else {
            return Err(fmu_error(path, missing_description_message(entries.iter().map(String::as_str))));
        };
        let entry = zip
            .by_index(index)
            .map_err(|e| fmu_error(path, format!("entry \"modelDescription.xml\" cannot be read: {e}")))?;
        if entry.size() > MAX_DESCRIPTION_BYTES {
            return Err(description_too_large(path, entry.size()));
        }
        let mut bytes = Vec::new();
        entry
            .take(MAX_DESCRIPTION_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| fmu_error(path, format!("entry \"modelDescription.xml\" cannot be decompressed: {e}")))?;
        if bytes.len() as u64 > MAX_DESCRIPTION_BYTES {
            return Err(description_too_large(path, bytes.len() as u64));
        }
        let model_description = description_text(path, bytes)?;
        Ok(Listing { model_description, entries })
    }

    /// The `.fmu` at `path` as already extracted into `dir` by the master (`cosim run
    /// --isolate`: one extraction shared by the worker processes of every instance of the FMU).
    /// The folder is the master's: it is not removed when this is dropped, so a worker that dies
    /// leaves nothing behind. `dir` must hold `modelDescription.xml`.
    pub fn extracted_by_master(path: &Path, dir: &Path) -> Result<Self> {
        let archive = Self { source: path.to_path_buf(), dir: dir.to_path_buf(), owned: false, host: Host::default() };
        if !dir.join("modelDescription.xml").is_file() {
            return Err(fmu_error(path, format!("{}: no extracted modelDescription.xml", dir.display())));
        }
        Ok(archive)
    }

    /// Whether `cosim run` could load the FMU, without extracting or loading anything: every
    /// entry passes the checks of [`Archive::extract`] (names, symbolic links, special files,
    /// the entry count), and the entry `so` is an x86-64 ELF shared library exporting every
    /// required FMI 2.0 function. `Err` says why not.
    pub fn check_runnable(path: &Path, so: &str) -> std::result::Result<(), String> {
        Self::check_runnable_as(path, so, false)
    }

    /// [`Archive::check_runnable`] of the Model Exchange binary (`model_exchange`: its common
    /// and Model Exchange functions checked, not the Co-Simulation ones).
    pub fn check_runnable_as(path: &Path, so: &str, model_exchange: bool) -> std::result::Result<(), String> {
        let message = |e: MasterError| match e {
            MasterError::Fmu { message, .. } => message,
            e => e.to_string(),
        };
        let mut zip = open_zip(path).map_err(message)?;
        if zip.len() > MAX_ENTRIES {
            return Err(format!("the archive has {} entries, more than the limit of {MAX_ENTRIES}", zip.len()));
        }
        let mut so_index = None;
        for i in 0..zip.len() {
            let entry = zip.by_index_raw(i).map_err(|e| format!("entry {i} cannot be read: {e}"))?;
            let name = entry.name().to_owned();
            check_entry(path, &name, &entry_kind(entry.unix_mode(), entry.is_dir())).map_err(message)?;
            if name == so {
                so_index = Some(i);
            }
        }
        let index = so_index.ok_or_else(|| format!("{so} is missing"))?;
        let mut bytes = Vec::new();
        zip.by_index(index)
            .map_err(|e| format!("{so} cannot be read: {e}"))?
            .take(MAX_UNCOMPRESSED_BYTES)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{so} cannot be decompressed: {e}"))?;
        super::elf::check_fmi_library_as(&bytes, so.starts_with("binaries/x86_64-linux/"), model_exchange)
            .map_err(|why| format!("{so} {why}"))
    }

    /// The host told of the folder (the workers of isolated instances take it from here).
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// The `.fmu` file this was extracted from.
    pub fn source(&self) -> &Path {
        &self.source
    }

    /// The private folder the archive was extracted into.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The extracted `resources/` folder (it may not exist when the FMU has none).
    pub fn resources_dir(&self) -> PathBuf {
        self.dir.join("resources")
    }

    /// `fmuResourceLocation`: the `file://` URI of [`Archive::resources_dir`], with a trailing
    /// slash and every byte outside the URI's unreserved set percent-encoded.
    pub fn resources_uri(&self) -> String {
        let mut uri = file_uri(&self.resources_dir());
        uri.push('/');
        uri
    }

    /// The text of the extracted `modelDescription.xml`.
    pub fn model_description(&self) -> Result<String> {
        let p = self.dir.join("modelDescription.xml");
        let size = std::fs::metadata(&p).map_or(0, |m| m.len());
        if size > MAX_DESCRIPTION_BYTES {
            return Err(description_too_large(&self.source, size));
        }
        let bytes = std::fs::read(&p).map_err(|e| fmu_error(&self.source, format!("modelDescription.xml: {e}")))?;
        description_text(&self.source, bytes)
    }

    /// Paths of the files under `binaries/`, relative to the archive root (e.g.
    /// `binaries/win64/m.dll`), sorted; for messages about a missing binary.
    pub fn binaries(&self) -> Vec<String> {
        let mut out = Vec::new();
        list_files(&self.dir, &self.dir.join("binaries"), 0, &mut out);
        out.sort();
        out
    }
}

/// `file://` URI of an absolute path (RFC 8089), percent-encoding every byte except
/// `A-Z a-z 0-9 - . _ ~ /`.
pub fn file_uri(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut uri = String::from("file://");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            uri.push(char::from(b));
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri
}

/// Refuses anything but a regular file (after symbolic links) before it is opened: opening a
/// FIFO blocks until a writer comes, `/dev/zero` never ends.
pub(crate) fn regular_file(path: &Path, what: &str) -> Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let ty =
        std::fs::metadata(path).map_err(|source| MasterError::Io { path: path.to_path_buf(), source })?.file_type();
    let kind = if ty.is_file() {
        return Ok(());
    } else if ty.is_dir() {
        "a folder"
    } else if ty.is_fifo() {
        "a FIFO (named pipe)"
    } else if ty.is_char_device() {
        "a character device"
    } else if ty.is_block_device() {
        "a block device"
    } else if ty.is_socket() {
        "a socket"
    } else {
        "a special file"
    };
    Err(fmu_error(path, format!("not a regular file but {kind}: {what}")))
}

fn open_zip(path: &Path) -> Result<zip::ZipArchive<File>> {
    regular_file(path, "an FMU is a zip file")?;
    let file = File::open(path).map_err(|source| MasterError::Io { path: path.to_path_buf(), source })?;
    zip::ZipArchive::new(file).map_err(|e| fmu_error(path, format!("not a zip archive (an FMU is a zip file): {e}")))
}

/// Decodes `modelDescription.xml` as UTF-8 (the encoding FMI 2.0 requires).
fn description_text(path: &Path, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        fmu_error(
            path,
            format!(
                "modelDescription.xml is not UTF-8 (byte {}): FMI 2.0 requires UTF-8",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

fn missing_description_message<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    let nested = names.iter().find(|n| n.ends_with("/modelDescription.xml"));
    match nested {
        Some(n) => format!(
            "no modelDescription.xml at the top level of the archive (found \"{}\": \
             was the FMU zipped together with its parent folder?)",
            escape(n)
        ),
        None if names.is_empty() => "no modelDescription.xml: the archive is empty".into(),
        None => format!(
            "no modelDescription.xml at the top level of the archive ({} entries, e.g. {})",
            names.len(),
            names.iter().take(5).map(|n| format!("\"{}\"", escape(n))).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn fmu_error(path: &Path, message: String) -> MasterError {
    MasterError::Fmu { path: path.to_path_buf(), message }
}

fn entry_io(path: &Path, name: &str, e: &std::io::Error) -> MasterError {
    fmu_error(path, format!("entry \"{}\" cannot be extracted: {e}", escape(name)))
}

/// Entry names in messages: control characters shown escaped, the rest as is.
fn escape(name: &str) -> String {
    name.chars().map(|c| if c.is_control() { c.escape_debug().to_string() } else { c.to_string() }).collect()
}

enum EntryKind {
    File,
    Dir,
    Symlink,
    Special(u32),
}

fn entry_kind(mode: Option<u32>, is_dir_name: bool) -> EntryKind {
    match mode.map(|m| m & S_IFMT) {
        Some(S_IFLNK) => EntryKind::Symlink,
        Some(S_IFDIR) => EntryKind::Dir,
        Some(S_IFREG) | Some(0) | None => {
            if is_dir_name {
                EntryKind::Dir
            } else {
                EntryKind::File
            }
        }
        Some(other) => EntryKind::Special(other),
    }
}

/// The relative path an entry is extracted to, or the error refusing it: names that would
/// leave the folder, symbolic links, special files.
fn check_entry(path: &Path, name: &str, kind: &EntryKind) -> Result<PathBuf> {
    let relative = safe_relative_path(name).map_err(|why| {
        fmu_error(
            path,
            format!("entry \"{}\" refused: {why} (it would be written outside the extraction folder)", escape(name)),
        )
    })?;
    match kind {
        EntryKind::Symlink => Err(fmu_error(
            path,
            format!("entry \"{}\" refused: symbolic links are not allowed in an FMU", escape(name)),
        )),
        EntryKind::Special(mode) => Err(fmu_error(
            path,
            format!("entry \"{}\" refused: not a regular file or folder (unix mode {mode:o})", escape(name)),
        )),
        EntryKind::File | EntryKind::Dir => Ok(relative),
    }
}

/// The entry name as a relative path of normal components, or why it is refused.
fn safe_relative_path(name: &str) -> std::result::Result<PathBuf, &'static str> {
    if name.is_empty() {
        return Err("empty name");
    }
    if name.contains('\0') {
        return Err("NUL character in the name");
    }
    if name.contains('\\') {
        return Err("backslash in the name (a Windows path)");
    }
    if name.starts_with('/') {
        return Err("absolute path");
    }
    let bytes = name.as_bytes();
    if bytes.len() >= 2 && bytes.first().is_some_and(u8::is_ascii_alphabetic) && bytes.get(1) == Some(&b':') {
        return Err("drive prefix (a Windows absolute path)");
    }
    let mut out = PathBuf::new();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("\"..\" component"),
            p => out.push(p),
        }
    }
    if out.as_os_str().is_empty() {
        return Err("name without a file or folder");
    }
    Ok(out)
}

/// Removes the extraction folders (`cosim-fmu-<pid>-…` in the temporary folder, owned by this
/// user) of processes that no longer exist: what a `cosim` ended by SIGKILL (or a power cut)
/// left behind. A folder whose process is alive, or whose pid cannot be read, is left alone.
/// Returns how many were removed.
pub fn remove_stale_extractions() -> usize {
    use std::os::unix::fs::MetadataExt;
    let base = std::env::temp_dir();
    let Ok(entries) = std::fs::read_dir(&base) else { return 0 };
    // The owner of /proc/self is this process's effective user.
    let me = std::fs::metadata("/proc/self").ok().map(|m| m.uid());
    let mut removed = 0;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("cosim-fmu-")).and_then(|r| r.split('-').next())
        else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else { continue };
        if !meta.is_dir() || Some(meta.uid()) != me || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        if std::fs::remove_dir_all(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// A new folder only this user can read, under the system temporary folder.
fn create_private_dir(source: &Path) -> Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let mut last_error = None;
    for _ in 0..100 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("cosim-fmu-{}-{n}-{nanos:x}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last_error = Some(e),
            Err(e) => {
                return Err(fmu_error(source, format!("cannot create a temporary folder in {}: {e}", base.display())))
            }
        }
    }
    Err(fmu_error(
        source,
        format!(
            "cannot create a temporary folder in {}: {}",
            base.display(),
            last_error.map_or_else(String::new, |e| e.to_string())
        ),
    ))
}

fn list_files(root: &Path, dir: &Path, depth: u32, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if depth < 4 {
                list_files(root, &p, depth + 1, out);
            }
        } else if let Ok(rel) = p.strip_prefix(root) {
            out.push(rel.to_string_lossy().into_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn entry_names() {
        assert!(safe_relative_path("binaries/linux64/m.so").is_ok());
        assert_eq!(safe_relative_path("./a//b/").unwrap(), PathBuf::from("a/b"));
        assert!(safe_relative_path("../evil").is_err());
        assert!(safe_relative_path("a/../../evil").is_err());
        assert!(safe_relative_path("a/..").is_err());
        assert!(safe_relative_path("/etc/passwd").is_err());
        assert!(safe_relative_path("C:/x").is_err());
        assert!(safe_relative_path("c:x").is_err());
        assert!(safe_relative_path("a\\..\\b").is_err());
        assert!(safe_relative_path("a\0b").is_err());
        assert!(safe_relative_path("").is_err());
        assert!(safe_relative_path("./").is_err());
    }

    #[test]
    fn file_uris() {
        assert_eq!(file_uri(Path::new("/tmp/a b/res%1/é")), "file:///tmp/a%20b/res%251/%C3%A9");
    }

    #[test]
    fn entry_kinds() {
        assert!(matches!(entry_kind(Some(0o120_777), false), EntryKind::Symlink));
        assert!(matches!(entry_kind(Some(0o100_644), false), EntryKind::File));
        assert!(matches!(entry_kind(Some(0o040_755), false), EntryKind::Dir));
        assert!(matches!(entry_kind(None, true), EntryKind::Dir));
        assert!(matches!(entry_kind(Some(0o644), false), EntryKind::File));
        // A socket (0o140000) shares bits with S_IFLNK: the mask must tell them apart.
        assert!(matches!(entry_kind(Some(0o140_644), false), EntryKind::Special(0o140_000)));
        assert!(matches!(entry_kind(Some(0o010_644), false), EntryKind::Special(0o010_000)));
    }

    #[test]
    fn the_folder_is_private_and_removed_on_drop() {
        use std::os::unix::fs::PermissionsExt;
        let zip_path = std::env::temp_dir().join(format!("cosim-archive-unit-{}.fmu", std::process::id()));
        {
            let mut w = zip::ZipWriter::new(File::create(&zip_path).unwrap());
            let o = zip::write::SimpleFileOptions::default();
            w.start_file("modelDescription.xml", o).unwrap();
            w.write_all(b"<x/>").unwrap();
            w.start_file("resources/data.txt", o).unwrap();
            w.write_all(b"hello").unwrap();
            w.finish().unwrap();
        }
        // The host handed in is told of the folder while it exists (the library keeps no list).
        #[derive(Default)]
        struct Seen(std::sync::Mutex<Vec<(bool, PathBuf)>>);
        impl crate::host::Cleanup for Seen {
            fn track_dir(&self, dir: &Path) {
                self.0.lock().unwrap().push((true, dir.to_path_buf()));
            }
            fn untrack_dir(&self, dir: &Path) {
                self.0.lock().unwrap().push((false, dir.to_path_buf()));
            }
            fn track_group(&self, _: u32) {}
            fn untrack_group(&self, _: u32) {}
        }
        let seen = std::sync::Arc::new(Seen::default());
        let host = Host { cleanup: Some(seen.clone()), ..Host::default() };
        let a = Archive::extract_in(&zip_path, &host).unwrap();
        let dir = a.dir().to_path_buf();
        assert_eq!(*seen.0.lock().unwrap(), [(true, dir.clone())]);
        assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(std::fs::read_to_string(a.resources_dir().join("data.txt")).unwrap(), "hello");
        assert_eq!(a.model_description().unwrap(), "<x/>");
        drop(a);
        assert!(!dir.exists());
        assert_eq!(*seen.0.lock().unwrap(), [(true, dir.clone()), (false, dir.clone())]);
        let listing = Archive::read_model_description(&zip_path).unwrap();
        assert_eq!(listing.entries, ["modelDescription.xml", "resources/data.txt"]);
        std::fs::remove_file(&zip_path).unwrap();
    }
}
