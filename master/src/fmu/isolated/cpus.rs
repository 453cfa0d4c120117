//! Which CPU each worker process runs on. When a system has exactly as many isolated instances
//! as the master may use CPUs, worker `i` is pinned to the `i`-th of those CPUs; otherwise no
//! worker is pinned. With one worker per CPU the master shares a CPU with a worker while it
//! sends and collects a step's requests, and the scheduler sometimes puts both workers of a
//! two-CPU machine on one CPU for a while, where they step one after the other instead of at
//! the same time (issue 35, bench-heavy-pair on 2 vCPUs, overlapped vs one after the other:
//! 1.43/1.46/1.76× unpinned, 1.75/1.65/1.76× pinned, alternated). With fewer workers than CPUs
//! the scheduler has room to place them, and with more a fixed placement could not balance
//! them; several cosim processes that each pin as many workers as CPUs still put one worker of
//! each process on every CPU. The CPUs are those of the master's own affinity mask (`taskset`
//! is honoured). Pinning is best effort: a refused `sched_setaffinity` leaves the worker where
//! the scheduler puts it.

/// The CPUs this process may run on (its affinity mask), in increasing order; empty when the
/// mask cannot be read.
fn allowed() -> Vec<usize> {
    cosim_os::cpu::allowed()
}

/// The CPU of each of `workers` worker processes (see the module documentation).
pub fn placement(workers: usize) -> Vec<Option<usize>> {
    place(workers, &allowed())
}

fn place(workers: usize, allowed: &[usize]) -> Vec<Option<usize>> {
    if workers >= 2 && workers == allowed.len() {
        allowed.iter().map(|&c| Some(c)).collect()
    } else {
        vec![None; workers]
    }
}

/// Pins the calling process to `cpu` (in a forked child before `exec`: only the system call,
/// which is async-signal-safe). Errors are ignored (best effort).
pub fn pin_self(cpu: usize) {
    cosim_os::cpu::pin_self(cpu);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_are_pinned_only_when_they_match_the_cpus() {
        assert_eq!(place(2, &[0, 1]), vec![Some(0), Some(1)]);
        assert_eq!(place(2, &[2, 5]), vec![Some(2), Some(5)]);
        assert_eq!(place(1, &[0]), vec![None]);
        assert_eq!(place(2, &[0, 1, 2, 3]), vec![None, None]);
        assert_eq!(place(3, &[0, 1]), vec![None, None, None]);
        assert_eq!(place(2, &[]), vec![None, None]);
    }

    #[test]
    fn the_mask_of_this_process_is_read() {
        let cpus = allowed();
        assert!(!cpus.is_empty());
        // The standard library reads the same mask (and lowers it by a cgroup quota, if any).
        assert!(cpus.len() >= std::thread::available_parallelism().map_or(1, |n| n.get()));
        assert!(cpus.windows(2).all(|w| w[0] < w[1]));
    }
}
