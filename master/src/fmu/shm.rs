//! The shared-memory channel between the master and one isolated worker (`cosim run --isolate`,
//! see [`super::isolated`]): a `memfd` mapped by both processes, holding a request buffer, a
//! response buffer and a header of sequence numbers. The master writes a request and bumps
//! `request_seq`; the worker serves it, writes the response and sets `response_seq` to the
//! same number. Whoever waits polls for a while (the other side usually answers within
//! microseconds), yielding the processor after every short spin, then sleeps on a futex on the
//! sequence word; the other side wakes it only when it sleeps (its `*_sleeping` flag), so a
//! round trip between two busy processes costs no wake-up.
//!
//! Neither side trusts the other's bytes: lengths are checked against the capacity and every
//! message is copied out of the mapping before it is decoded. The worker's FMU can scribble
//! over the mapping; the master then reads a garbled message (a protocol error), never memory
//! outside it.

use std::cell::Cell;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Bytes of each of the two buffers (the mapping is sparse: only the pages a message touches
/// take memory). A call's request or response larger than this is refused with a message.
pub const CAPACITY: usize = 32 << 20;

/// Header, then the request buffer, then the response buffer.
const HEADER: usize = 64;
const SIZE: usize = HEADER + 2 * CAPACITY;

/// How long a waiter polls ([`SPINS`] spins, then a yield, again and again) before it sleeps on
/// the futex.
const POLL: Duration = Duration::from_micros(220);
/// Spins between two yields while polling (see [`wait_for`]).
const SPINS: u32 = 16;
/// A wait for a response that took at least this long is a long one (see [`Waits`]).
const LONG_WAIT: Duration = Duration::from_micros(50);
/// How long the master polls before it sleeps when [`Waits::sleep_early`] says so.
const SHORT_POLL: Duration = Duration::from_micros(5);

/// The master's waiting policy on one channel. A master that polls while as many workers as
/// CPUs are busy keeps a CPU a worker needs: with two workers stepping at once (overlapped
/// Jacobi) and the master polling on 2 CPUs, three always-runnable processes share two CPUs,
/// and when the scheduler keeps both workers on one CPU they step one after the other (issue
/// 35: 0.97× instead of ≈ 1.5×). So when that many workers are busy and this worker's last
/// answer took long, the master sleeps on the futex after [`SHORT_POLL`]; otherwise it polls as
/// before (a round trip of a few microseconds costs no wake-up, and with a CPU to spare the
/// poll takes nothing from a worker). Workers always poll: a worker that slept would leave its
/// CPU idle, and waking an idle virtual CPU costs tens of microseconds per step (measured: the
/// run got slower when the workers slept too).
#[derive(Debug, Default)]
struct Waits {
    /// The last wait for a response took at least [`LONG_WAIT`] (or ran out).
    long: Cell<bool>,
    /// A request of this channel is counted in `busy`.
    outstanding: Cell<bool>,
    /// Requests sent and not yet answered over all channels of one host (the master's
    /// [`crate::host::Host::busy_workers`]): the worker processes busy at this moment.
    busy: Arc<AtomicUsize>,
}

impl Waits {
    /// Whether to sleep after [`SHORT_POLL`] with `busy` workers busy on `cpus` CPUs.
    fn sleep_early(&self, busy: usize, cpus: usize) -> bool {
        self.long.get() && busy >= cpus
    }

    /// Records how long a wait took (`None`: it ran out).
    fn learn(&self, waited: Option<Duration>) {
        self.long.set(waited.is_none_or(|d| d >= LONG_WAIT));
    }

    fn sent(&self) {
        if !self.outstanding.replace(true) {
            self.busy.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn answered(&self) {
        if self.outstanding.replace(false) {
            self.busy.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// The CPUs this process may use (1 if unknown).
fn cpus() -> usize {
    static CPUS: OnceLock<usize> = OnceLock::new();
    *CPUS.get_or_init(|| std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get))
}

#[repr(C)]
struct Header {
    /// Bumped by the master when a request is ready.
    request_seq: AtomicU32,
    /// Set by the worker to the request's number when its response is ready.
    response_seq: AtomicU32,
    /// Bytes of the request / response.
    request_len: AtomicU32,
    response_len: AtomicU32,
    /// 1 while the worker / the master sleeps on the futex of `request_seq` / `response_seq`.
    worker_sleeping: AtomicU32,
    master_sleeping: AtomicU32,
    /// Set by the master: no more requests, the worker ends.
    closed: AtomicU32,
    /// Set by the worker before each call of a request: which one it is executing (the call a
    /// dead worker died in).
    progress: AtomicU32,
}

const _: () = assert!(std::mem::size_of::<Header>() <= HEADER);

/// One mapping of the channel (the master's or the worker's).
pub struct Channel {
    base: *mut u8,
    fd: OwnedFd,
    waits: Waits,
}

// SAFETY: the mapping is plain shared memory; access goes through atomics and copies.
unsafe impl Send for Channel {}

impl std::fmt::Debug for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Channel").field("fd", &self.fd.as_raw_fd()).finish_non_exhaustive()
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        self.waits.answered();
        // SAFETY: the mapping of `map`, unmapped once; nothing borrows it past `&self`.
        unsafe { cosim_os::shm::unmap(self.base, SIZE) };
    }
}

impl Channel {
    /// A new channel (the master's side): an anonymous memory file, close-on-exec (see
    /// [`Channel::inherit_in_child`]); `busy` counts the busy workers of its host
    /// ([`crate::host::Host::busy_workers`]).
    pub fn create(busy: &crate::host::BusyWorkers) -> io::Result<Self> {
        let mut channel = Self::map(cosim_os::shm::create("cosim-worker", SIZE as u64)?)?;
        channel.waits.busy = Arc::clone(&busy.0);
        Ok(channel)
    }

    /// The worker's side: maps the descriptor the master passed (`cosim worker --shm-fd N`).
    pub fn open(fd: RawFd) -> io::Result<Self> {
        // SAFETY: the descriptor was inherited for this purpose; from here on we own it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        Self::map(fd)
    }

    fn map(fd: OwnedFd) -> io::Result<Self> {
        let base = cosim_os::shm::map(&fd, SIZE)?;
        Ok(Self { base, fd, waits: Waits::default() })
    }

    /// The descriptor to name on the worker's command line.
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// For `Command::pre_exec` in the forked child: clears close-on-exec on descriptor `fd` so
    /// that the worker (only this one) inherits it. Async-signal-safe.
    pub fn inherit_in_child(fd: RawFd) -> io::Result<()> {
        cosim_os::shm::inherit_in_child(fd)
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping starts with a Header (atomics of zeroed memory are valid) and
        // lives as long as `self`.
        unsafe { &*self.base.cast::<Header>() }
    }

    fn buffer(&self, response: bool) -> *mut u8 {
        // SAFETY: both buffers lie inside the mapping.
        unsafe { self.base.add(HEADER + usize::from(response) * CAPACITY) }
    }

    fn put(&self, response: bool, body: &[u8]) -> io::Result<()> {
        if body.len() > CAPACITY {
            return Err(io::Error::other(format!(
                "a message of {} bytes, more than the isolated protocol's limit of {} MiB",
                body.len(),
                CAPACITY >> 20
            )));
        }
        // SAFETY: `body.len()` bytes fit in the buffer; the other side does not read it until
        // the sequence number is published (Release below).
        unsafe { std::ptr::copy_nonoverlapping(body.as_ptr(), self.buffer(response), body.len()) };
        Ok(())
    }

    fn take(&self, response: bool, len: u32, out: &mut Vec<u8>) -> io::Result<()> {
        let len = len as usize;
        if len > CAPACITY {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("message length {len} out of range")));
        }
        out.clear();
        out.reserve(len);
        // SAFETY: `len` bytes lie inside the buffer and `out` has room for them.
        unsafe {
            std::ptr::copy_nonoverlapping(self.buffer(response), out.as_mut_ptr(), len);
            out.set_len(len);
        }
        Ok(())
    }

    // -- master side ----------------------------------------------------------------------

    /// Publishes `body` as the next request and wakes the worker if it sleeps. Returns the
    /// request's number, which [`Channel::wait_response`] waits for.
    pub fn send_request(&self, body: &[u8]) -> io::Result<u32> {
        self.put(false, body)?;
        let h = self.header();
        h.request_len.store(body.len() as u32, Ordering::Relaxed);
        let seq = h.request_seq.load(Ordering::Relaxed).wrapping_add(1);
        h.request_seq.store(seq, Ordering::SeqCst);
        self.waits.sent();
        if h.worker_sleeping.load(Ordering::SeqCst) != 0 {
            futex_wake(&h.request_seq);
        }
        Ok(seq)
    }

    /// Waits up to `slice` (after a short spin) for the response to request `seq`; `Ok(true)`
    /// with the response in `out`, `Ok(false)` if it is not there yet.
    ///
    /// The response must be the one to `seq`: the header's number equal to it (not past it) and
    /// the number the worker wrote at the start of the response buffer too. The worker's FMU can
    /// write the header (issue 30 item 16: a forged `response_seq` made the master take the
    /// previous response as fresh, rows one step behind); then the buffer still holds the old
    /// response with the old number, and this is a protocol error instead.
    pub fn wait_response(&self, seq: u32, slice: Duration, out: &mut Vec<u8>) -> io::Result<bool> {
        let h = self.header();
        let busy = self.waits.busy.load(Ordering::Relaxed);
        let poll = if self.waits.sleep_early(busy, cpus()) { SHORT_POLL } else { POLL };
        let waited = wait_for(&h.response_seq, seq, &h.master_sleeping, poll, slice);
        self.waits.learn(waited);
        if waited.is_none() {
            return Ok(false);
        }
        self.waits.answered();
        let bad = |m: String| io::Error::new(io::ErrorKind::InvalidData, m);
        let published = h.response_seq.load(Ordering::SeqCst);
        if published != seq {
            return Err(bad(format!(
                "the worker published response number {published} while request {seq} was outstanding (its memory was overwritten)"
            )));
        }
        self.take(true, h.response_len.load(Ordering::Relaxed), out)?;
        let echoed = out.get(..4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        if echoed != Some(seq) {
            return Err(bad(format!(
                "the response to request {seq} carries number {} (a stale or forged response)",
                echoed.map_or_else(|| "none".to_owned(), |n| n.to_string())
            )));
        }
        out.drain(..4);
        Ok(true)
    }

    /// The index the worker stored last with [`Channel::set_progress`].
    pub fn progress(&self) -> u32 {
        self.header().progress.load(Ordering::SeqCst)
    }

    /// Tells the worker to end (it frees the instance and exits).
    pub fn close(&self) {
        let h = self.header();
        h.closed.store(1, Ordering::SeqCst);
        h.request_seq.fetch_add(1, Ordering::SeqCst);
        futex_wake(&h.request_seq);
    }

    // -- worker side ----------------------------------------------------------------------

    /// Waits for the request after `last` (its number and body in `out`); `Ok(None)` when the
    /// master closed the channel. `alive` is asked every second while nothing comes (`false`
    /// ends the wait as if closed).
    pub fn wait_request(&self, last: u32, out: &mut Vec<u8>, alive: impl Fn() -> bool) -> io::Result<Option<u32>> {
        let h = self.header();
        let seq = last.wrapping_add(1);
        while wait_for(&h.request_seq, seq, &h.worker_sleeping, POLL, Duration::from_secs(1)).is_none() {
            if !alive() {
                return Ok(None);
            }
        }
        if h.closed.load(Ordering::SeqCst) != 0 {
            return Ok(None);
        }
        self.take(false, h.request_len.load(Ordering::Relaxed), out)?;
        Ok(Some(seq))
    }

    /// Records that the worker starts the call `index` of the current request.
    pub fn set_progress(&self, index: u32) {
        self.header().progress.store(index, Ordering::Relaxed);
    }

    /// Publishes `body` as the response to request `seq` and wakes the master if it sleeps.
    pub fn send_response(&self, seq: u32, body: &[u8]) -> io::Result<()> {
        // The request's number first, then the body: the master checks both (see wait_response).
        if body.len() + 4 > CAPACITY {
            return Err(io::Error::other(format!(
                "a message of {} bytes, more than the isolated protocol's limit of {} MiB",
                body.len(),
                CAPACITY >> 20
            )));
        }
        // SAFETY: 4 + body.len() bytes fit in the response buffer (checked above); the master
        // does not read it until the sequence number is published below.
        unsafe {
            let at = self.buffer(true);
            std::ptr::copy_nonoverlapping(seq.to_le_bytes().as_ptr(), at, 4);
            std::ptr::copy_nonoverlapping(body.as_ptr(), at.add(4), body.len());
        }
        let h = self.header();
        h.response_len.store((body.len() + 4) as u32, Ordering::Relaxed);
        h.response_seq.store(seq, Ordering::SeqCst);
        if h.master_sleeping.load(Ordering::SeqCst) != 0 {
            futex_wake(&h.response_seq);
        }
        Ok(())
    }
}

/// Waits until `word` reaches `target` (it only ever moves forward), for at most `limit`
/// after polling: spins and yields for `poll`, then sleeps on the futex with `sleeping` set so
/// that the writer wakes it. How long it took when `word` reached `target`, `None` if it did
/// not.
fn wait_for(word: &AtomicU32, target: u32, sleeping: &AtomicU32, poll: Duration, limit: Duration) -> Option<Duration> {
    let reached = || word.load(Ordering::Acquire).wrapping_sub(target) as i32 >= 0;
    let start = Instant::now();
    loop {
        for _ in 0..SPINS {
            if reached() {
                return Some(start.elapsed());
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= poll {
            break;
        }
        // Yield after every short spin: master and workers are often more than the CPUs, and a
        // waiter that keeps its CPU delays the process it waits for (measured on 2 vCPUs with two
        // workers, `cosim bench` bench-trivial-pair --isolate: 29 µs per step yielding every 512
        // spins, 9.4–9.6 µs every 64, 7.2 µs every 16, 6.5–8.8 µs every 1–4; with one worker
        // (bench-trivial) 1.9 µs at 16 and 64, 2.5 µs at 1).
        std::thread::yield_now();
    }
    let deadline = start + poll + limit;
    loop {
        let now_value = word.load(Ordering::SeqCst);
        if now_value.wrapping_sub(target) as i32 >= 0 {
            return Some(start.elapsed());
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        sleeping.store(1, Ordering::SeqCst);
        // Re-check after announcing the sleep: a writer that stored before it saw the flag.
        if word.load(Ordering::SeqCst) == now_value {
            futex_wait(word, now_value, left);
        }
        sleeping.store(0, Ordering::SeqCst);
    }
}

fn futex_wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    cosim_os::futex::wait(word, expected, timeout);
}

fn futex_wake(word: &AtomicU32) {
    cosim_os::futex::wake(word);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    /// Two mappings of one memory file (as master and worker have) exchange requests and
    /// responses in order, across threads, including a wait that sleeps on the futex.
    #[test]
    fn requests_and_responses_cross_between_two_mappings() {
        let master = Channel::create(&crate::host::BusyWorkers::default()).unwrap();
        // SAFETY: dup of our own descriptor, owned by the second mapping.
        let dup = unsafe { libc_dup(master.fd()) };
        let worker = Channel::open(dup).unwrap();
        let server = std::thread::spawn(move || {
            let (mut last, mut buf) = (0, Vec::new());
            let mut served = 0;
            while let Some(seq) = worker.wait_request(last, &mut buf, || true).unwrap() {
                last = seq;
                if buf == b"sleep" {
                    std::thread::sleep(Duration::from_millis(50));
                }
                let mut reply = buf.clone();
                reply.reverse();
                worker.send_response(seq, &reply).unwrap();
                served += 1;
            }
            served
        });
        let mut out = Vec::new();
        for i in 0..1000u32 {
            let body = format!("request {i}");
            let seq = master.send_request(body.as_bytes()).unwrap();
            while !master.wait_response(seq, Duration::from_millis(100), &mut out).unwrap() {}
            assert_eq!(out, body.bytes().rev().collect::<Vec<u8>>());
        }
        let seq = master.send_request(b"sleep").unwrap();
        assert!(!master.wait_response(seq, Duration::from_millis(1), &mut out).unwrap(), "not answered yet");
        while !master.wait_response(seq, Duration::from_millis(100), &mut out).unwrap() {}
        assert_eq!(out, b"peels");
        // A message beyond the capacity is refused, not written past the buffer.
        let big = vec![0u8; CAPACITY + 1];
        assert!(master.send_request(&big).unwrap_err().to_string().contains("limit of 32 MiB"));
        master.close();
        assert_eq!(server.join().unwrap(), 1001);
    }

    #[test]
    fn a_forged_response_number_is_a_protocol_error() {
        // Issue 30 item 16: a worker (its FMU) that writes the response number itself made the
        // master take the previous response as the answer to the new request.
        let master = Channel::create(&crate::host::BusyWorkers::default()).unwrap();
        // SAFETY: a duplicate of the master's descriptor, owned by the second mapping.
        let worker = Channel::open(unsafe { libc_dup(master.fd()) }).unwrap();
        let mut out = Vec::new();
        let seq = master.send_request(b"first").unwrap();
        assert_eq!(worker.wait_request(0, &mut out, || true).unwrap(), Some(seq));
        worker.send_response(seq, b"answer 1").unwrap();
        assert!(master.wait_response(seq, Duration::from_millis(100), &mut out).unwrap());
        assert_eq!(out, b"answer 1");
        // The next request; the FMU bumps the number before any answer is written.
        let seq2 = master.send_request(b"second").unwrap();
        worker.header().response_seq.store(seq2, Ordering::SeqCst);
        let e = master.wait_response(seq2, Duration::from_millis(100), &mut out).unwrap_err();
        assert!(e.to_string().contains("carries number 1"), "{e}");
        // A number past the outstanding request is refused too.
        worker.header().response_seq.store(seq2 + 5, Ordering::SeqCst);
        let e = master.wait_response(seq2, Duration::from_millis(100), &mut out).unwrap_err();
        assert!(e.to_string().contains("published response number 7 while request 2"), "{e}");
    }

    /// Issue 35: the master sleeps early only after a long wait and while as many workers as
    /// CPUs are busy; a wait with a short poll sleeps on the futex and is woken by the answer,
    /// not by its time limit; sent and answered requests are counted once each.
    #[test]
    fn the_master_sleeps_early_only_after_a_long_wait_with_every_cpu_busy() {
        let waits = Waits::default();
        assert!(!waits.sleep_early(2, 2), "nothing learnt yet: poll");
        waits.learn(Some(Duration::from_micros(80)));
        assert!(waits.sleep_early(2, 2) && waits.sleep_early(3, 2));
        assert!(!waits.sleep_early(1, 2), "a CPU to spare: poll");
        waits.learn(Some(Duration::from_micros(3)));
        assert!(!waits.sleep_early(2, 2), "a quick answer: poll again");
        waits.learn(None);
        assert!(waits.sleep_early(2, 2), "ran out: long");
        // A short poll, then the futex: the writer's wake ends it 30 ms later, long before 10 s.
        let (word, sleeping) = (AtomicU32::new(0), AtomicU32::new(0));
        std::thread::scope(|s| {
            s.spawn(|| {
                std::thread::sleep(Duration::from_millis(30));
                word.store(1, Ordering::SeqCst);
                if sleeping.load(Ordering::SeqCst) != 0 {
                    futex_wake(&word);
                }
            });
            let waited = wait_for(&word, 1, &sleeping, SHORT_POLL, Duration::from_secs(10)).unwrap();
            assert!(waited >= Duration::from_millis(30) && waited < Duration::from_secs(5), "{waited:?}");
        });
        assert_eq!(sleeping.load(Ordering::SeqCst), 0, "no sleeper left announced");
        assert_eq!(wait_for(&word, 2, &sleeping, SHORT_POLL, Duration::from_millis(1)), None);
        // The busy count: a channel's request counts once until answered (or the channel goes).
        let master = Channel::create(&crate::host::BusyWorkers::default()).unwrap();
        // SAFETY: a duplicate of the master's descriptor, owned by the second mapping.
        let worker = Channel::open(unsafe { libc_dup(master.fd()) }).unwrap();
        assert!(!master.waits.outstanding.get());
        let seq = master.send_request(b"x").unwrap();
        assert!(master.waits.outstanding.get());
        let mut out = Vec::new();
        assert!(!master.wait_response(seq, Duration::from_millis(1), &mut out).unwrap());
        assert!(master.waits.outstanding.get() && master.waits.long.get(), "not answered: still busy");
        assert_eq!(worker.wait_request(0, &mut out, || true).unwrap(), Some(seq));
        worker.send_response(seq, b"y").unwrap();
        assert!(master.wait_response(seq, Duration::from_millis(100), &mut out).unwrap());
        assert!(!master.waits.outstanding.get());
    }

    unsafe fn libc_dup(fd: RawFd) -> RawFd {
        use std::os::fd::{BorrowedFd, IntoRawFd};
        // SAFETY: the caller's descriptor is open for the duration of the call.
        cosim_os::shm::dup(unsafe { BorrowedFd::borrow_raw(fd) }).unwrap().into_raw_fd()
    }
}
