//! Every operating-system call of the co-simulation master (`master`) and its command line
//! (`cosim`), in one place, over maintained crates: [`rustix`] for the system calls (futex,
//! memory files and mappings, descriptors, affinity, `prctl`, `poll`, `flock`, `kill`, clocks),
//! [`signal_hook`] for the stop signals and the signals' names and numbers, and [`libc`] for what
//! those two do not wrap (`getrusage`, `sched_setscheduler`, `alarm`, `atexit`, `_exit`, and the
//! crash handlers, which must run inside the signal). No system-call number, structure layout or
//! signal number is written by hand here or anywhere else in the workspace.
//!
//! The targets are Linux (the futex, memory file and `prctl` calls) and other Unix systems for
//! the rest, as before.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Signals: numbers and names, the stop and crash handlers, and leaving the process.
pub mod signal {
    use std::io;

    pub use signal_hook::consts::signal::{SIGABRT, SIGBUS, SIGFPE, SIGHUP, SIGILL, SIGINT, SIGKILL, SIGSEGV, SIGTERM};

    /// The signals that ask a command to stop: SIGINT (Ctrl-C), SIGTERM, and SIGHUP (the
    /// terminal or SSH session closed), handled alike.
    pub const STOPS: [i32; 3] = [SIGINT, SIGTERM, SIGHUP];

    /// The signals of a crash: SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV.
    pub const CRASHES: [i32; 5] = [SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV];

    /// The signal's name (`"SIGABRT"`), if it has one.
    pub fn name(signal: i32) -> Option<&'static str> {
        signal_hook::low_level::signal_name(signal)
    }

    /// Calls `handler` with the signal's number on those of the [`STOPS`] signals whose
    /// disposition is the default (`SIG_DFL`), for the whole process; returns them. A stop signal
    /// the process was started with ignored stays ignored, as POSIX asks of a program and as
    /// shells, `make` and daemons do: `nohup cosim run …` (SIGHUP ignored) runs on when the
    /// terminal or SSH session closes, and so does a background job of a non-interactive shell
    /// (`cosim run … &` in a script: SIGINT ignored) on Ctrl-C. Call it once, before other code
    /// changes the dispositions. `handler` runs inside the signal handler: it must be
    /// async-signal-safe (atomic stores).
    pub fn on_stop(handler: fn(i32)) -> io::Result<Vec<i32>> {
        let mut handled = Vec::with_capacity(STOPS.len());
        for s in STOPS {
            if !is_default(s)? {
                continue;
            }
            // SAFETY: the caller's handler is async-signal-safe (see above) and a plain function,
            // valid for the whole process.
            unsafe { signal_hook::low_level::register(s, move || handler(s)) }?;
            handled.push(s);
        }
        Ok(handled)
    }

    /// Whether `signal`'s disposition is the default action (`SIG_DFL`): not ignored and no
    /// handler installed. Read with `sigaction` without changing it.
    pub fn is_default(signal: i32) -> io::Result<bool> {
        // SAFETY: a zeroed `sigaction` is a valid value of the plain C structure, which
        // `sigaction` only writes (no new action is given).
        let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a null new action only reads the current one into `current`.
        if unsafe { libc::sigaction(signal, std::ptr::null(), &mut current) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(current.sa_sigaction == libc::SIG_DFL)
    }

    /// Sets `signal` to its default action (`SIG_DFL`). Async-signal-safe (one system call): also
    /// for `Command::pre_exec`, where it sets what the started program inherits.
    pub fn set_default(signal: i32) -> io::Result<()> {
        set_disposition(signal, libc::SIG_DFL)
    }

    /// Ignores `signal` (`SIG_IGN`). Async-signal-safe (one system call): also for
    /// `Command::pre_exec`, where it sets what the started program inherits (an ignored signal
    /// stays ignored across `exec`, a handled one is reset to the default).
    pub fn ignore(signal: i32) -> io::Result<()> {
        set_disposition(signal, libc::SIG_IGN)
    }

    fn set_disposition(signal: i32, disposition: libc::sighandler_t) -> io::Result<()> {
        // SAFETY: SIG_DFL or SIG_IGN, no handler code; a zeroed `sigaction` is a valid value of
        // the plain C structure (empty mask, no flags).
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = disposition;
        // SAFETY: as above; the previous action is not wanted (null).
        if unsafe { libc::sigaction(signal, &action, std::ptr::null_mut()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Ignores SIGXFSZ: a write beyond the file size limit (`ulimit -f`) then fails with EFBIG,
    /// an error the writer reports (and recovers from), instead of killing the process.
    pub fn ignore_file_size_limit_signal() {
        let _ = ignore(libc::SIGXFSZ);
    }

    /// Installs `handler` for the [`CRASHES`] signals. It runs in the crashed thread, inside
    /// the signal; it should end with [`die_of`].
    pub fn on_crash(handler: extern "C" fn(i32)) {
        for s in CRASHES {
            // SAFETY: `signal` with a handler that stays valid for the whole process; the
            // handler's own contract is its caller's.
            unsafe { libc::signal(s, handler as libc::sighandler_t) };
        }
    }

    /// Restores the default action of `signal` and raises it: the process dies of it (from a
    /// crash handler: as it would have without the handler). Async-signal-safe.
    pub fn die_of(signal: i32) {
        let _ = signal_hook::low_level::emulate_default_handler(signal);
    }

    /// SIGALRM in `seconds` (0: cancels a pending alarm). Async-signal-safe.
    pub fn alarm(seconds: u32) {
        // SAFETY: alarm(2) has no memory arguments.
        unsafe { libc::alarm(seconds) };
    }

    /// Calls `f` when the process exits through `exit()` (also an FMU's `exit()`).
    pub fn at_exit(f: extern "C" fn()) -> io::Result<()> {
        // SAFETY: the function stays valid for the whole process.
        if unsafe { libc::atexit(f) } != 0 {
            return Err(io::Error::other("atexit refused the handler"));
        }
        Ok(())
    }

    /// Ends the process at once with `code`, without the `atexit` handlers (`_exit`).
    pub fn exit_now(code: i32) -> ! {
        // SAFETY: _exit(2) ends the process; nothing runs after it.
        unsafe { libc::_exit(code) }
    }
}

/// Processes: killing a worker's process group, a worker dying with its master.
pub mod process {
    use rustix::process::{Pid, Signal};
    use std::io;

    /// Kills the process group `pgid` (a worker and whatever it forked) with SIGKILL.
    pub fn kill_group(pgid: u32) {
        if let Some(pid) = i32::try_from(pgid).ok().and_then(Pid::from_raw) {
            let _ = rustix::process::kill_process_group(pid, Signal::KILL);
        }
    }

    /// Makes this process a subreaper (`PR_SET_CHILD_SUBREAPER`): a descendant whose parent
    /// dies (a daemon an FMU forked and `setsid()`ed) becomes our child instead of init's, so
    /// [`kill_adopted`] can end it.
    pub fn become_subreaper() -> io::Result<()> {
        Ok(rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?)
    }

    /// The children of this process (from `/proc/*/stat`), but `keep`.
    fn children(keep: &[u32]) -> Vec<u32> {
        let me = rustix::process::getpid().as_raw_nonzero().get();
        let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| !keep.contains(pid))
            .filter(|pid| {
                // pid (comm) state ppid …: comm may hold spaces and parentheses, so after the last ')'.
                std::fs::read_to_string(format!("/proc/{pid}/stat")).ok().is_some_and(|s| {
                    s.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<i32>().ok())
                        == Some(me)
                })
            })
            .collect()
    }

    /// Kills (SIGKILL) and reaps every child of this process but `keep`, again and again as
    /// their own children are adopted (see [`become_subreaper`]), until none is left or
    /// `limit` has passed. Returns how many were killed.
    pub fn kill_adopted(keep: &[u32], limit: std::time::Duration) -> usize {
        use rustix::process::{waitpid, WaitOptions};
        let t0 = std::time::Instant::now();
        let mut killed = 0;
        loop {
            let kids = children(keep);
            if kids.is_empty() || t0.elapsed() > limit {
                return killed;
            }
            for k in &kids {
                if let Some(pid) = i32::try_from(*k).ok().and_then(Pid::from_raw) {
                    // Its process group too: a session leader's group holds what it forked.
                    let _ = rustix::process::kill_process_group(pid, Signal::KILL);
                    let _ = rustix::process::kill_process(pid, Signal::KILL);
                    killed += 1;
                }
            }
            for k in &kids {
                if let Some(pid) = i32::try_from(*k).ok().and_then(Pid::from_raw) {
                    while t0.elapsed() <= limit {
                        match waitpid(Some(pid), WaitOptions::NOHANG) {
                            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(1)),
                            _ => break,
                        }
                    }
                }
            }
        }
    }

    /// This process gets SIGKILL when its parent (the thread that started it) dies
    /// (`PR_SET_PDEATHSIG`).
    pub fn die_with_parent() -> io::Result<()> {
        Ok(rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?)
    }

    /// The parent died: this process was handed to init (or a subreaper at pid 1).
    pub fn orphaned() -> bool {
        std::os::unix::process::parent_id() == 1
    }
}

/// A memory file shared between processes: created, sized, mapped, and handed to a child.
pub mod shm {
    use super::*;

    /// An anonymous memory file of `len` bytes, close-on-exec.
    pub fn create(name: &str, len: u64) -> io::Result<OwnedFd> {
        let fd = rustix::fs::memfd_create(name, rustix::fs::MemfdFlags::CLOEXEC)?;
        rustix::fs::ftruncate(&fd, len)?;
        Ok(fd)
    }

    /// A shared read-write mapping of the first `len` bytes of `fd`.
    pub fn map(fd: impl AsFd, len: usize) -> io::Result<*mut u8> {
        use rustix::mm::{MapFlags, ProtFlags};
        // SAFETY: a new mapping chosen by the kernel (no address given); it aliases no memory of
        // this process until the caller uses it.
        let p = unsafe {
            rustix::mm::mmap(std::ptr::null_mut(), len, ProtFlags::READ | ProtFlags::WRITE, MapFlags::SHARED, fd, 0)
        }?;
        Ok(p.cast())
    }

    /// Unmaps a mapping of [`map`].
    ///
    /// # Safety
    /// `base` and `len` are a mapping of [`map`], unmapped once, and nothing uses it afterwards.
    pub unsafe fn unmap(base: *mut u8, len: usize) {
        // SAFETY: the caller's contract.
        let _ = unsafe { rustix::mm::munmap(base.cast(), len) };
    }

    /// For `Command::pre_exec` in a forked child: clears close-on-exec on `fd`, so that the
    /// program it executes inherits it. Async-signal-safe (one system call).
    pub fn inherit_in_child(fd: RawFd) -> io::Result<()> {
        // SAFETY: `fd` is open in the child's descriptor table for the duration of the call.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        Ok(rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty())?)
    }

    /// A duplicate of `fd` (a second owner of the same open file).
    pub fn dup(fd: impl AsFd) -> io::Result<OwnedFd> {
        Ok(rustix::io::dup(fd)?)
    }
}

/// Futex waits and wakes on a word of memory shared between processes (not process-private).
pub mod futex {
    use super::*;
    use rustix::thread::futex::{self, Flags};

    /// Sleeps while `word` holds `expected`, until a [`wake`], a signal or `timeout`; returns at
    /// once if it holds another value.
    pub fn wait(word: &AtomicU32, expected: u32, timeout: Duration) {
        let ts = rustix::time::Timespec {
            tv_sec: i64::try_from(timeout.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        // Woken, timed out, interrupted or the value changed: the caller checks the word again.
        let _ = futex::wait(word, Flags::empty(), expected, Some(&ts));
    }

    /// Wakes every sleeper on `word`.
    pub fn wake(word: &AtomicU32) {
        let _ = futex::wake(word, Flags::empty(), i32::MAX as u32);
    }
}

/// Which CPUs the process runs on.
pub mod cpu {
    /// The CPUs this process may run on (its affinity mask), in increasing order; empty when the
    /// mask cannot be read.
    pub fn allowed() -> Vec<usize> {
        match rustix::thread::sched_getaffinity(None) {
            Ok(set) => (0..rustix::thread::CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Pins the calling process to `cpu` (in a forked child before `exec`: only the system
    /// call, which is async-signal-safe). Errors are ignored (best effort).
    pub fn pin_self(cpu: usize) {
        if cpu < rustix::thread::CpuSet::MAX_CPU {
            let mut set = rustix::thread::CpuSet::new();
            set.set(cpu);
            let _ = rustix::thread::sched_setaffinity(None, &set);
        }
    }
}

/// The calling thread: clocks, counters, timer slack, priority.
pub mod thread {
    use super::*;

    /// CLOCK_MONOTONIC in ns.
    pub fn monotonic_ns() -> u64 {
        let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        (ts.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(ts.tv_nsec as u64)
    }

    /// The calling thread's resource usage (`getrusage(RUSAGE_THREAD)`, Linux).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub struct Usage {
        /// Minor page faults.
        pub minflt: u64,
        /// Major page faults.
        pub majflt: u64,
        /// Voluntary context switches.
        pub nvcsw: u64,
        /// Involuntary context switches.
        pub nivcsw: u64,
    }

    /// The calling thread's [`Usage`]; `None` where the OS does not give it.
    pub fn usage() -> Option<Usage> {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: an all-zero rusage is valid; getrusage fills it (libc's layout).
            let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: a valid pointer to a rusage that outlives the call.
            if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } == 0 {
                return Some(Usage {
                    minflt: ru.ru_minflt as u64,
                    majflt: ru.ru_majflt as u64,
                    nvcsw: ru.ru_nvcsw as u64,
                    nivcsw: ru.ru_nivcsw as u64,
                });
            }
        }
        None
    }

    /// Timer slack of the calling thread to 1 ns (Linux; elsewhere nothing).
    pub fn min_timer_slack() -> io::Result<()> {
        #[cfg(target_os = "linux")]
        rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1))?;
        Ok(())
    }

    /// The calling thread's timer slack (ns; Linux).
    pub fn timer_slack() -> io::Result<u64> {
        Ok(rustix::thread::current_timer_slack()?)
    }

    /// Locks the process's memory, current and future (`mlockall`).
    pub fn lock_memory() -> io::Result<()> {
        use rustix::mm::MlockAllFlags;
        Ok(rustix::mm::mlockall(MlockAllFlags::CURRENT | MlockAllFlags::FUTURE)?)
    }

    /// Runs the calling thread under `SCHED_FIFO` at `priority`.
    pub fn fifo_priority(priority: i32) -> io::Result<()> {
        let param = libc::sched_param { sched_priority: priority };
        // SAFETY: `param` outlives the call; it changes no memory of ours.
        if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// File descriptors: the standard ones pointed elsewhere, polling, locking.
pub mod fd {
    use super::*;
    use std::fs::File;

    /// Points descriptor 2 at `to`; returns the original stderr.
    pub fn redirect_stderr(to: &File) -> io::Result<File> {
        let saved = rustix::io::dup(rustix::stdio::stderr())?;
        rustix::stdio::dup2_stderr(to)?;
        Ok(File::from(saved))
    }

    /// Puts `saved` (from [`redirect_stderr`]) back on descriptor 2.
    pub fn restore_stderr(saved: &File) -> io::Result<()> {
        Ok(rustix::stdio::dup2_stderr(saved)?)
    }

    /// Takes the pipes on stdin and stdout for a protocol and points descriptor 0 at
    /// `/dev/null` and 1 at stderr, so that whatever else the process reads from stdin or prints
    /// to stdout (an FMU's `printf`) cannot corrupt the protocol. Returns (stdin's, stdout's).
    pub fn take_stdio_for_protocol() -> io::Result<(File, File)> {
        let input = std::io::stdin().as_fd().try_clone_to_owned()?;
        let output = std::io::stdout().as_fd().try_clone_to_owned()?;
        let null = File::open("/dev/null")?;
        rustix::stdio::dup2_stdin(&null)?;
        rustix::stdio::dup2_stdout(rustix::stdio::stderr())?;
        Ok((File::from(input), File::from(output)))
    }

    /// Waits up to `timeout` for `fd` to be readable (or closed, or in error): `Ok(true)` then,
    /// `Ok(false)` on the timeout or a signal.
    pub fn wait_readable(fd: impl AsFd, timeout: Duration) -> io::Result<bool> {
        use rustix::event::{PollFd, PollFlags};
        let mut fds = [PollFd::from_borrowed_fd(fd.as_fd(), PollFlags::IN)];
        let ts = rustix::time::Timespec {
            tv_sec: i64::try_from(timeout.as_secs()).unwrap_or(i64::MAX),
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        match rustix::event::poll(&mut fds, Some(&ts)) {
            Ok(n) => Ok(n > 0),
            Err(rustix::io::Errno::INTR) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Takes an exclusive `flock` on `file` without waiting: `Ok(false)` when another holds it.
    pub fn try_lock_exclusive(file: &File) -> io::Result<bool> {
        match rustix::fs::flock(file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => Ok(true),
            Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn signals_have_their_names() {
        assert_eq!(signal::name(signal::SIGABRT), Some("SIGABRT"));
        assert_eq!(signal::name(signal::SIGINT), Some("SIGINT"));
        assert_eq!(signal::name(signal::SIGKILL), Some("SIGKILL"));
        assert_eq!(signal::name(1000), None);
    }

    #[test]
    fn a_disposition_is_read_without_changing_it() {
        let s = libc::SIGUSR2;
        assert!(signal::is_default(s).unwrap());
        signal::ignore(s).unwrap();
        assert!(!signal::is_default(s).unwrap());
        assert!(!signal::is_default(s).unwrap(), "still ignored after being read");
        signal::set_default(s).unwrap();
        assert!(signal::is_default(s).unwrap());
        assert!(signal::is_default(-1).is_err());
    }

    static STOPPED_BY: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

    /// The child of [`an_inherited_ignored_stop_signal_stays_ignored`] (a no-op in a normal test
    /// run): installs the stop handlers, prints which, raises SIGHUP and SIGTERM and prints which
    /// reached the handler.
    #[test]
    fn on_stop_child() {
        if std::env::var_os("COSIM_OS_ON_STOP_CHILD").is_none() {
            return;
        }
        let handled = signal::on_stop(|s| STOPPED_BY.store(s, Ordering::SeqCst)).unwrap();
        println!("handled {handled:?}");
        for s in [signal::SIGHUP, signal::SIGTERM] {
            STOPPED_BY.store(0, Ordering::SeqCst);
            rustix::process::kill_process(
                rustix::process::getpid(),
                rustix::process::Signal::from_named_raw(s).unwrap(),
            )
            .unwrap();
            std::thread::sleep(Duration::from_millis(50));
            println!("{s}: {}", STOPPED_BY.load(Ordering::SeqCst));
        }
    }

    #[test]
    fn an_inherited_ignored_stop_signal_stays_ignored() {
        // `nohup cosim run …`: SIGHUP is ignored from the start; the stop handlers leave it so.
        use std::os::unix::process::CommandExt;
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child.args(["--exact", "tests::on_stop_child", "--nocapture", "--test-threads", "1"]);
        child.env("COSIM_OS_ON_STOP_CHILD", "1");
        // SAFETY: sigaction only (async-signal-safe) in the forked child.
        unsafe {
            child.pre_exec(|| {
                for s in signal::STOPS {
                    signal::set_default(s)?;
                }
                signal::ignore(signal::SIGHUP)
            })
        };
        let out = child.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{:?} {text} {}", out.status, String::from_utf8_lossy(&out.stderr));
        let (hup, term) = (signal::SIGHUP, signal::SIGTERM);
        assert!(text.contains(&format!("handled [{}, {term}]\n", signal::SIGINT)), "{text}");
        assert!(text.contains(&format!("{hup}: 0\n")), "SIGHUP stays ignored: {text}");
        assert!(text.contains(&format!("{term}: {term}\n")), "SIGTERM reaches the handler: {text}");
    }

    #[test]
    fn two_mappings_of_a_memory_file_share_its_bytes() {
        let fd = shm::create("cosim-os-test", 4096).unwrap();
        let a = shm::map(&fd, 4096).unwrap();
        let b = shm::map(shm::dup(&fd).unwrap(), 4096).unwrap();
        // SAFETY: both mappings are 4096 bytes long, unmapped once below.
        unsafe {
            a.add(100).write(42);
            assert_eq!(b.add(100).read(), 42);
            shm::unmap(a, 4096);
            shm::unmap(b, 4096);
        }
    }

    #[test]
    fn a_futex_wait_ends_on_a_wake_and_on_its_timeout() {
        let word = std::sync::Arc::new(AtomicU32::new(0));
        let t = std::time::Instant::now();
        futex::wait(&word, 0, Duration::from_millis(20));
        assert!(t.elapsed() >= Duration::from_millis(15), "{:?}: timed out", t.elapsed());
        // A different value: returns at once.
        let t = std::time::Instant::now();
        futex::wait(&word, 1, Duration::from_secs(10));
        assert!(t.elapsed() < Duration::from_secs(5));
        let w = std::sync::Arc::clone(&word);
        let waker = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            w.store(1, Ordering::SeqCst);
            futex::wake(&w);
        });
        let t = std::time::Instant::now();
        while word.load(Ordering::SeqCst) == 0 {
            futex::wait(&word, 0, Duration::from_secs(10));
        }
        assert!(t.elapsed() < Duration::from_secs(5), "woken, not timed out");
        waker.join().unwrap();
    }

    #[test]
    fn the_affinity_mask_is_read() {
        let cpus = cpu::allowed();
        assert!(cpus.len() >= std::thread::available_parallelism().map_or(1, |n| n.get()));
        assert!(cpus.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn thread_counters_and_timer_slack() {
        let a = thread::usage();
        std::thread::sleep(Duration::from_millis(2));
        let b = thread::usage();
        if cfg!(target_os = "linux") {
            let (a, b) = (a.unwrap(), b.unwrap());
            assert!(b.nvcsw > a.nvcsw, "{a:?} → {b:?}: the sleep is a voluntary switch");
            thread::min_timer_slack().unwrap();
            assert_eq!(thread::timer_slack().unwrap(), 1);
        }
        let t0 = thread::monotonic_ns();
        std::thread::sleep(Duration::from_millis(2));
        assert!(thread::monotonic_ns() >= t0 + 2_000_000);
    }

    #[test]
    fn a_lock_is_refused_while_another_descriptor_holds_it() {
        let dir = std::env::temp_dir().join(format!("cosim-os-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("l");
        let a = std::fs::File::create(&path).unwrap();
        let b = std::fs::File::open(&path).unwrap();
        assert!(fd::try_lock_exclusive(&a).unwrap());
        assert!(!fd::try_lock_exclusive(&b).unwrap());
        drop(a);
        assert!(fd::try_lock_exclusive(&b).unwrap());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn poll_sees_a_readable_socket() {
        use std::io::Write;
        let (r, mut w) = std::os::unix::net::UnixStream::pair().unwrap();
        assert!(!fd::wait_readable(&r, Duration::from_millis(10)).unwrap());
        w.write_all(b"x").unwrap();
        assert!(fd::wait_readable(&r, Duration::from_millis(10)).unwrap());
    }
}
