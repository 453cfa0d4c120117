//! FMUs loaded once per Python process: `cosim.simulate`, `cosim.Execution` and the runs of
//! `cosim.sweep` in each worker process take a loaded FMU (extracted, library opened) from here
//! instead of extracting and opening it again. Keyed by content (size and hash of the file's
//! bytes): the same FMU at another path (a copy, an SSP's extraction) is found, a file rewritten
//! in place is loaded anew. A file is read and hashed once while its size, modification and
//! change times and inode stay the same (hashing a 400 kB FMU on every run cost ≈ 0.2 ms).
//! Each run still instantiates its own instance and frees it at its end; only the library stays
//! loaded.
//!
//! An FMU with global state (C statics shared by its instances) would carry that state from one
//! run to the next; our FMUs have none. `COSIM_FMU_CACHE=0` in the environment turns the cache
//! off (every run loads its FMUs afresh, as `cosim run` does). Isolated runs (`isolate = True`)
//! never load the library in the Python process and are left alone.

use master::fmu::{Fmu, FmuCache};
use master::system::{Overrides, SystemBuilder};
use std::hash::Hasher;
use std::sync::{Arc, Mutex};

struct Entry {
    /// (file size, hash of its bytes).
    key: (u64, u64),
    /// The process that loaded it (a forked sweep worker inherits the parent's entries, whose
    /// extraction folders it must not remove).
    pid: u32,
    fmu: Arc<Fmu>,
}

static CACHE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// What a file looked like when it was hashed: any write to it or replacement of it changes one
/// of these.
#[derive(PartialEq)]
struct Stamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    inode: (u64, u64, i64, i64),
}

impl Stamp {
    fn of(m: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Self {
            len: m.len(),
            modified: m.modified().ok(),
            #[cfg(unix)]
            inode: (m.dev(), m.ino(), m.ctime(), m.ctime_nsec()),
        }
    }
}

/// A file hashed: its path, its stamp then and its content key.
struct Hashed {
    path: std::path::PathBuf,
    stamp: Stamp,
    key: (u64, u64),
}

/// Every file hashed so far.
static HASHED: Mutex<Vec<Hashed>> = Mutex::new(Vec::new());

/// The content key of the file at `path`: remembered while its stamp is unchanged, else read
/// and hashed (None if it cannot be read).
fn content_key(path: &std::path::Path) -> Option<(u64, u64)> {
    let stamp = Stamp::of(&std::fs::metadata(path).ok()?);
    let mut hashed = HASHED.lock().ok()?;
    if let Some(h) = hashed.iter().find(|h| h.path == path && h.stamp == stamp) {
        return Some(h.key);
    }
    let key = key(&std::fs::read(path).ok()?);
    hashed.retain(|h| h.path != path);
    hashed.push(Hashed { path: path.to_path_buf(), stamp, key });
    Some(key)
}

/// Whether the cache is on (`COSIM_FMU_CACHE` is not `0`).
pub fn enabled() -> bool {
    std::env::var_os("COSIM_FMU_CACHE").is_none_or(|v| v != "0")
}

fn key(bytes: &[u8]) -> (u64, u64) {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(bytes);
    (bytes.len() as u64, h.finish())
}

/// Puts the process's loaded FMUs of `builder`'s instances into `fmus` (loading and keeping
/// those not loaded yet). An FMU that cannot be read or loaded is left to `fmus`, which reports
/// the error as without the cache.
pub fn prepare(builder: &SystemBuilder, over: &Overrides, fmus: &mut FmuCache) {
    if !enabled() || builder.isolated(over) {
        return;
    }
    for (_, path) in builder.fmus() {
        if fmus.get(&path).is_some() {
            continue;
        }
        let Some(k) = content_key(&path) else { continue };
        let Ok(mut cache) = CACHE.lock() else { return };
        let fmu = match cache.iter().find(|e| e.key == k) {
            Some(e) => Arc::clone(&e.fmu),
            None => {
                let Ok(f) = Fmu::load_in(&path, &crate::host()) else { continue };
                cache.push(Entry { key: k, pid: std::process::id(), fmu: Arc::clone(&f) });
                f
            }
        };
        fmus.insert(&path, fmu);
    }
}

/// Loaded FMUs in the cache.
pub fn len() -> usize {
    CACHE.lock().map_or(0, |c| c.len())
}

/// Empties the cache: this process's FMUs are unloaded (their extraction folders removed) once no
/// run uses them; those inherited from a parent process are forgotten, not unloaded.
pub fn clear() {
    if let Ok(mut h) = HASHED.lock() {
        h.clear();
    }
    let entries = CACHE.lock().map(|mut c| std::mem::take(&mut *c)).unwrap_or_default();
    let me = std::process::id();
    for e in entries {
        if e.pid == me {
            drop(e.fmu);
        } else {
            std::mem::forget(e.fmu);
        }
    }
}
