//! What a campaign was running when the process died of a fatal signal.
//!
//! The engines run in the campaign's own process, so a fault in compiled code (a JIT bug
//! reaching memory it must not) kills the campaign before any reproducer is written, and its
//! `--jsonl` file ends at some earlier case. Each worker therefore records the case it is
//! running in a slot ([`running`]), and [`install`] sets a handler for `SIGSEGV`, `SIGBUS`,
//! `SIGILL` and `SIGFPE` that writes the cases in flight, with the command that runs one of
//! them alone, to standard error, then lets the signal take its default action (the process
//! still dies of it: a crash is a failure). The handler only reads atomics, formats digits on
//! its stack and calls `write(2)`, all async-signal-safe.
//!
//! A campaign whose environment sets `LANEJIT_FUZZ_TEST_CRASH=<case>` raises `SIGSEGV` when it
//! starts that case: the test hook that checks the report (`tests/it/fuzz_smoke.rs`).

use std::sync::atomic::{AtomicU64, Ordering};

/// Slots of cases in flight: `case + 1`, 0 for none. A worker takes the slot of its rayon
/// index modulo the count (more workers than slots share slots, and a report may then miss a
/// case).
const SLOTS: usize = 64;

static IN_FLIGHT: [AtomicU64; SLOTS] = [const { AtomicU64::new(0) }; SLOTS];
static SEED: AtomicU64 = AtomicU64::new(0);
static CASES: AtomicU64 = AtomicU64::new(0);

/// The case a worker runs, recorded until the guard drops.
pub struct Running(usize);

impl Drop for Running {
    fn drop(&mut self) {
        IN_FLIGHT[self.0].store(0, Ordering::Relaxed);
    }
}

/// Record that the calling worker runs case `i` (and raise the test hook's signal when asked).
pub fn running(i: u64) -> Running {
    let slot = rayon::current_thread_index().unwrap_or(0) % SLOTS;
    IN_FLIGHT[slot].store(i + 1, Ordering::Relaxed);
    #[cfg(unix)]
    if test_crash() == Some(i) {
        // SAFETY: raising a signal is always sound. The first runs the handler (which resets
        // the action to the default, as the re-executed instruction of a real fault would
        // find it), the second the default action, which ends the process.
        unsafe {
            libc::raise(libc::SIGSEGV);
            libc::raise(libc::SIGSEGV);
        }
    }
    Running(slot)
}

/// The test hook's case (`LANEJIT_FUZZ_TEST_CRASH`), read once.
#[cfg(unix)]
fn test_crash() -> Option<u64> {
    static AT: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *AT.get_or_init(|| {
        std::env::var("LANEJIT_FUZZ_TEST_CRASH")
            .ok()
            .and_then(|v| v.parse().ok())
    })
}

/// Report the cases in flight of campaign `seed` (of `cases` cases) if the process dies of a
/// fatal signal. Once per process; a second call only updates the campaign. (Unix only:
/// elsewhere a crash reports nothing.)
pub fn install(seed: u64, cases: u64) {
    SEED.store(seed, Ordering::Relaxed);
    CASES.store(cases, Ordering::Relaxed);
    #[cfg(unix)]
    static ONCE: std::sync::Once = std::sync::Once::new();
    #[cfg(unix)]
    ONCE.call_once(|| {
        for sig in [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE] {
            // SAFETY: a zeroed `sigaction` is a valid value to fill in; the handler is an
            // `extern "C" fn(c_int)` that only does async-signal-safe work; SA_RESETHAND
            // restores the default action before it runs (so the re-executed fault, or a
            // fault inside it, ends the process), and SA_ONSTACK runs it on the alternate
            // stack Rust's runtime sets up for its threads, so a stack overflow reaches it too.
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_fatal as extern "C" fn(libc::c_int) as usize;
                sa.sa_flags = libc::SA_RESETHAND | libc::SA_ONSTACK;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
    });
}

/// The handler: one line per case in flight, then back to the fault (now with its default
/// action).
#[cfg(unix)]
extern "C" fn on_fatal(sig: libc::c_int) {
    let seed = SEED.load(Ordering::Relaxed);
    let cases = CASES.load(Ordering::Relaxed);
    let mut any = false;
    for slot in &IN_FLIGHT {
        let v = slot.load(Ordering::Relaxed);
        if v == 0 {
            continue;
        }
        any = true;
        let i = v - 1;
        let mut line = Line::new();
        line.push(b"lanejit fuzz: fatal signal ");
        line.num(sig as u64);
        line.push(b" while running case ");
        line.num(i);
        line.push(b" of seed ");
        line.num(seed);
        line.push(b"; alone: lanejit fuzz --seed ");
        line.num(seed);
        line.push(b" --cases ");
        line.num(cases.max(i + 1));
        line.push(b" --shard ");
        line.num(i);
        line.push(b"/");
        line.num(cases.max(i + 1));
        line.push(b"\n");
        line.write();
    }
    if !any {
        let mut line = Line::new();
        line.push(b"lanejit fuzz: fatal signal ");
        line.num(sig as u64);
        line.push(b" outside the cases\n");
        line.write();
    }
}

/// A line built on the stack (no allocation in a signal handler).
struct Line {
    buf: [u8; 256],
    len: usize,
}

impl Line {
    fn new() -> Self {
        Line {
            buf: [0; 256],
            len: 0,
        }
    }

    fn push(&mut self, s: &[u8]) {
        for &b in s {
            if self.len < self.buf.len() {
                self.buf[self.len] = b;
                self.len += 1;
            }
        }
    }

    fn num(&mut self, mut n: u64) {
        let mut digits = [0u8; 20];
        let mut k = digits.len();
        loop {
            k -= 1;
            digits[k] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let d = digits;
        self.push(&d[k..]);
    }

    #[cfg(unix)]
    fn write(&self) {
        // SAFETY: `buf[..len]` is initialised memory of this stack frame; write(2) is
        // async-signal-safe, and a short or failed write only loses part of the report.
        unsafe {
            libc::write(2, self.buf.as_ptr().cast(), self.len);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_line_formats_numbers_and_stops_at_its_end() {
        let mut l = super::Line::new();
        l.push(b"case ");
        l.num(0);
        l.push(b" ");
        l.num(u64::MAX);
        assert_eq!(&l.buf[..l.len], b"case 0 18446744073709551615");
        for _ in 0..100 {
            l.push(b"xxxx");
        }
        assert_eq!(l.len, 256);
    }
}
