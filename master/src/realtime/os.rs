//! What a paced run asks of the OS for its stepping thread (Linux; elsewhere these do nothing):
//! timer slack of 1 ns (a sleep ends when asked, not up to 50 µs later), the stack pre-faulted
//! (no page fault when a deep call first touches it), and the thread's scheduler counters per
//! step for `timing.csv` (where the time of a late step went: page faults, context switches,
//! waiting for a CPU, or none of these: the VM was not running, see docs/performance.md).

/// Counters of the calling thread at one moment (cumulative since the thread started).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    /// CLOCK_MONOTONIC (ns): the time line other tools (a /proc/stat sampler) share.
    pub mono_ns: u64,
    /// CPU time of the thread (ns, /proc/thread-self/schedstat).
    pub cpu_ns: u64,
    /// Time the thread was runnable but waited for a CPU (ns, schedstat `run_delay`).
    pub wait_ns: u64,
    /// Minor page faults (getrusage, RUSAGE_THREAD).
    pub minflt: u64,
    /// Major page faults.
    pub majflt: u64,
    /// Voluntary context switches (sleeps, blocking).
    pub nvcsw: u64,
    /// Involuntary context switches (preempted).
    pub nivcsw: u64,
}

/// Reads [`Counters`] of the thread that opened it, without allocating.
#[derive(Debug)]
pub struct ThreadCounters {
    #[cfg(target_os = "linux")]
    schedstat: Option<std::fs::File>,
}

impl ThreadCounters {
    /// For the calling thread (the counters read later are this thread's).
    pub fn open() -> Self {
        #[cfg(target_os = "linux")]
        {
            Self { schedstat: std::fs::File::open("/proc/thread-self/schedstat").ok() }
        }
        #[cfg(not(target_os = "linux"))]
        {
            Self {}
        }
    }

    /// The counters now (fields the OS does not give stay 0).
    pub fn read(&self) -> Counters {
        let mut c = Counters::default();
        #[cfg(target_os = "linux")]
        {
            c.mono_ns = cosim_os::thread::monotonic_ns();
            if let Some(u) = cosim_os::thread::usage() {
                c.minflt = u.minflt;
                c.majflt = u.majflt;
                c.nvcsw = u.nvcsw;
                c.nivcsw = u.nivcsw;
            }
            if let Some(f) = &self.schedstat {
                use std::os::unix::fs::FileExt;
                let mut buf = [0u8; 96];
                if let Ok(n) = f.read_at(&mut buf, 0) {
                    let mut fields = buf[..n].split(|b| b.is_ascii_whitespace()).filter(|s| !s.is_empty());
                    let mut next = || fields.next().and_then(|s| std::str::from_utf8(s).ok()?.parse::<u64>().ok());
                    c.cpu_ns = next().unwrap_or(0);
                    c.wait_ns = next().unwrap_or(0);
                }
            }
        }
        c
    }
}

/// Timer slack of the calling thread to 1 ns: without it a normal thread's sleep ends up to
/// 50 µs (the default slack) after the time asked for (threads under SCHED_FIFO have none).
/// Returns a note when the OS refuses.
pub fn min_timer_slack() -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        if let Err(e) = cosim_os::thread::min_timer_slack() {
            return Some(format!("timer slack not lowered (prctl: {e})"));
        }
    }
    None
}

/// CPU time the hypervisor took from this machine's CPUs (all of them) since boot, from the
/// `steal` column of /proc/stat (ns; resolution 10 ms). `None` where there is no such counter.
pub fn steal_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    parse_steal(&text)
}

/// The `steal` field (the 8th number) of the `cpu ` line, in USER_HZ = 100 ticks a second.
fn parse_steal(stat: &str) -> Option<u64> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let ticks: u64 = line.split_whitespace().nth(8)?.parse().ok()?;
    Some(ticks * 10_000_000)
}

/// Touches `bytes` of the calling thread's stack below the caller's frame, so that the pages
/// exist (and, after `mlockall`, stay) before the first step needs them.
#[inline(never)]
pub fn prefault_stack(bytes: usize) {
    const CHUNK: usize = 16 * 1024;
    #[inline(never)]
    fn touch(left: usize) {
        let mut page = [0u8; CHUNK];
        // Write every 4 KiB page of this frame; black_box keeps the writes.
        for k in (0..CHUNK).step_by(4096) {
            page[k] = 1;
        }
        std::hint::black_box(&mut page);
        if left > CHUNK {
            touch(left - CHUNK);
        }
    }
    touch(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_follow_what_the_thread_does() {
        let tc = ThreadCounters::open();
        let a = tc.read();
        // Work (CPU time), a sleep (a voluntary switch) and 64 new pages (minor faults).
        let mut x = 0u64;
        for k in 0..2_000_000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(k);
        }
        std::hint::black_box(x);
        std::thread::sleep(std::time::Duration::from_millis(2));
        let v = vec![1u8; 64 * 4096 + 8 * 1024 * 1024];
        std::hint::black_box(&v);
        let b = tc.read();
        if cfg!(target_os = "linux") {
            assert!(b.mono_ns >= a.mono_ns + 2_000_000, "{a:?} → {b:?}: the 2 ms sleep");
            assert!(b.cpu_ns > a.cpu_ns, "{a:?} → {b:?}: CPU time");
            assert!(b.nvcsw > a.nvcsw, "{a:?} → {b:?}: the sleep is a voluntary switch");
            assert!(b.minflt >= a.minflt + 64, "{a:?} → {b:?}: touching 8 MiB faults pages in");
        }
    }

    #[test]
    fn timer_slack_can_be_lowered() {
        assert_eq!(min_timer_slack(), None);
        #[cfg(target_os = "linux")]
        assert_eq!(cosim_os::thread::timer_slack().ok(), Some(1));
    }

    #[test]
    fn steal_is_the_eighth_number_of_the_cpu_line() {
        // proc(5): user nice system idle iowait irq softirq steal guest guest_nice.
        let stat = "cpu  2604547 715 300365 935704 11650 0 2564 1707 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n";
        assert_eq!(parse_steal(stat), Some(17_070_000_000));
        assert_eq!(parse_steal("intr 1 2\n"), None);
        if cfg!(target_os = "linux") {
            assert!(steal_ns().is_some(), "/proc/stat has a steal column");
        }
    }
}
