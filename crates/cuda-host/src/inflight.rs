//! The kernels that may still be running: launches through cuda-host that no successful
//! synchronisation has covered yet.
//!
//! A fault is sticky: the driver reports it to whichever later call on the context comes first,
//! without saying which kernel faulted. When one kernel is in flight, that is the one; when
//! several are (on one stream or several), any of them may be, and the error lists them.

use std::sync::{Mutex, OnceLock};

use cudarc::driver::CudaStream;

/// Entries kept at most: one per distinct (context, stream, kernel), so only programs with many
/// streams and kernels that never synchronise through cuda-host reach it.
const CAPACITY: usize = 256;

/// The latest launch of `kernel` on `stream`, at position `seq` of this process's launches.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Entry {
    ctx: usize,
    stream: usize,
    kernel: &'static str,
    seq: u64,
}

struct Ledger {
    next: u64,
    entries: Vec<Entry>,
    /// Entries were dropped to stay within [`CAPACITY`].
    overflowed: bool,
}

static LEDGER: Mutex<Ledger> = Mutex::new(Ledger {
    next: 1,
    entries: Vec::new(),
    overflowed: false,
});

fn ledger() -> std::sync::MutexGuard<'static, Ledger> {
    LEDGER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A stream and the position of its latest launch: work queued there before this point.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Point {
    ctx: usize,
    stream: usize,
    seq: u64,
}

/// The driver handles that identify a stream (the null stream is per context).
fn key(stream: &CudaStream) -> (usize, usize) {
    (
        stream.context().cu_ctx() as usize,
        stream.cu_stream() as usize,
    )
}

/// The context handle of `stream`, as the ledger keys it.
pub(crate) fn context_of(stream: &CudaStream) -> usize {
    key(stream).0
}

/// Whether launches are synchronous (`CUDA_LAUNCH_BLOCKING=1`): then a launch returns once
/// its kernel has finished, and a fault is reported by its own launch.
pub(crate) fn launches_block() -> bool {
    static BLOCKING: OnceLock<bool> = OnceLock::new();
    *BLOCKING.get_or_init(|| std::env::var("CUDA_LAUNCH_BLOCKING").is_ok_and(|v| v == "1"))
}

/// Notes that `kernels` (one kernel, or those of a graph) were queued on `stream`.
pub(crate) fn launched(stream: &CudaStream, kernels: &[&'static str]) {
    let (ctx, stream) = key(stream);
    note(ctx, stream, kernels);
}

fn note(ctx: usize, stream: usize, kernels: &[&'static str]) {
    let mut ledger = ledger();
    let seq = ledger.next;
    ledger.next += 1;
    ledger
        .entries
        .retain(|e| !(e.ctx == ctx && e.stream == stream && kernels.contains(&e.kernel)));
    for &kernel in kernels {
        if !ledger
            .entries
            .iter()
            .any(|e| e.seq == seq && e.kernel == kernel)
        {
            ledger.entries.push(Entry {
                ctx,
                stream,
                kernel,
                seq,
            });
        }
    }
    if ledger.entries.len() > CAPACITY {
        let excess = ledger.entries.len() - CAPACITY;
        ledger.entries.drain(..excess);
        ledger.overflowed = true;
    }
}

/// The current point of `stream`: a later successful wait for everything queued there so far
/// passes it to [`finished`].
pub(crate) fn point(stream: &CudaStream) -> Point {
    let (ctx, stream) = key(stream);
    Point {
        ctx,
        stream,
        seq: ledger().next - 1,
    }
}

/// The work queued on the point's stream up to the point finished without a fault.
pub(crate) fn finished(point: Point) {
    ledger()
        .entries
        .retain(|e| !(e.ctx == point.ctx && e.stream == point.stream && e.seq <= point.seq));
}

/// The kernels that may have caused a fault seen now on context `ctx` (any context when
/// `None`): each once, oldest launch first. `true` with them when the ledger overflowed, so
/// that older launches may be missing.
pub(crate) fn suspects(ctx: Option<usize>) -> (Vec<&'static str>, bool) {
    let ledger = ledger();
    let mut names: Vec<&'static str> = Vec::new();
    for entry in ledger
        .entries
        .iter()
        .filter(|e| ctx.is_none_or(|c| c == e.ctx))
    {
        names.retain(|&n| n != entry.kernel);
        names.push(entry.kernel);
    }
    (names, ledger.overflowed)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The ledger is global; tests that use it take this lock so that they do not interleave.
    pub(crate) static SERIAL: Mutex<()> = Mutex::new(());

    pub(crate) fn reset() {
        let mut ledger = ledger();
        ledger.entries.clear();
        ledger.overflowed = false;
    }

    /// Notes a launch without a stream (there is no GPU to make one in unit tests).
    pub(crate) fn noted(ctx: usize, stream: usize, kernels: &[&'static str]) {
        note(ctx, stream, kernels);
    }

    /// A point without a stream.
    pub(crate) fn point_for_test(ctx: usize, stream: usize) -> Point {
        at(ctx, stream)
    }

    fn at(ctx: usize, stream: usize) -> Point {
        Point {
            ctx,
            stream,
            seq: ledger().next - 1,
        }
    }

    #[test]
    fn one_kernel_in_flight_is_the_culprit() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        reset();
        note(1, 10, &["a"]);
        assert_eq!(suspects(Some(1)), (vec!["a"], false));
        finished(at(1, 10));
        note(1, 10, &["b"]);
        assert_eq!(suspects(Some(1)).0, vec!["b"]);
    }

    #[test]
    fn kernels_on_several_streams_are_all_suspects_until_each_stream_finishes() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        reset();
        note(1, 10, &["a"]);
        let a_done = at(1, 10);
        note(1, 20, &["b"]);
        note(1, 10, &["c"]);
        note(2, 10, &["other_context"]);
        assert_eq!(suspects(Some(1)).0, vec!["a", "b", "c"]);
        assert_eq!(suspects(None).0, vec!["a", "b", "c", "other_context"]);
        // Stream 10 finished up to `a` only: `c` may still be running.
        finished(a_done);
        assert_eq!(suspects(Some(1)).0, vec!["b", "c"]);
        finished(at(1, 20));
        assert_eq!(suspects(Some(1)).0, vec!["c"]);
    }

    #[test]
    fn a_kernel_relaunched_stays_a_suspect_until_its_last_launch_finishes() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        reset();
        note(1, 10, &["step"]);
        let first = at(1, 10);
        note(1, 10, &["other"]);
        note(1, 10, &["step"]);
        assert_eq!(suspects(Some(1)).0, vec!["other", "step"]);
        finished(first);
        assert_eq!(suspects(Some(1)).0, vec!["other", "step"]);
    }

    #[test]
    fn a_graph_launch_notes_each_kernel_once() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        reset();
        note(1, 10, &["a", "b", "a"]);
        assert_eq!(suspects(Some(1)).0, vec!["a", "b"]);
        finished(at(1, 10));
        assert!(suspects(Some(1)).0.is_empty());
    }

    #[test]
    fn the_ledger_stays_bounded_and_says_so() {
        let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
        reset();
        let names: Vec<&'static str> = (0..CAPACITY + 5)
            .map(|i| &*Box::leak(format!("k{i}").into_boxed_str()))
            .collect();
        for (i, name) in names.iter().enumerate() {
            note(1, i, &[name]);
        }
        let (suspects, overflowed) = suspects(Some(1));
        assert_eq!(suspects.len(), CAPACITY);
        assert_eq!(suspects.first(), Some(&"k5"));
        assert!(overflowed);
        reset();
    }
}
