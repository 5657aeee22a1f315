//! The race detector (docs/cpu.md, "The race detector"): kernels built with `CUDA_OXIDE_RACE=1`
//! tell the runtime of every plain load and store (`race_load`/`race_store`: address, size,
//! source position), every atomic access (`race_atomic`) and the source position of every call
//! of a runtime function (`race_at`). Each byte of memory has a shadow: its last plain write
//! and the plain reads since. Two accesses of one launch conflict when they come from
//! different threads, at least one writes, and nothing orders them:
//!
//! - threads of different blocks are never ordered (global memory);
//! - threads of one block are ordered by a `syncthreads` between the accesses (each thread
//!   counts the barriers it passed: different counts, ordered);
//! - lanes of one warp also by a warp-synchronous operation between them (likewise counted).
//!
//! Atomic accesses race with nothing. Shared memory has a shadow per block (a new block
//! starts with none): a plain read of a shared byte no thread of the block wrote is reported
//! too. The thread's own stack is not watched.
//!
//! Launches run on one worker, blocks in order and threads in order, so a run is
//! deterministic; each distinct report (its kind and source positions) is printed once per
//! launch, to standard error, and a launch with reports ends with their count.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::ffi::{CStr, c_char};
use std::sync::Mutex;

use crate::launch::{self, ThreadState};

/// A plain access, as the shadow keeps it.
#[derive(Clone, Copy, Debug)]
struct Access {
    block: [u32; 3],
    thread: [u32; 3],
    /// The block's linear index and the thread's linear index in it, for comparing.
    block_index: u64,
    thread_index: u32,
    barriers: u32,
    warp_syncs: u32,
    site: usize,
}

impl Access {
    fn of(state: &ThreadState, site: usize) -> Access {
        let [bx, by, _] = state.nctaid.map(u64::from);
        let [x, y, z] = state.ctaid.map(u64::from);
        Access {
            block: state.ctaid,
            thread: state.tid,
            block_index: x + bx * (y + by * z),
            thread_index: state.linear_tid(),
            barriers: state.barriers_passed.get(),
            warp_syncs: state.warp_syncs.get(),
            site,
        }
    }

    /// Whether `self` and `other` (a later access) may happen in either order.
    fn unordered(&self, other: &Access) -> bool {
        if self.block_index != other.block_index {
            return true;
        }
        if self.thread_index == other.thread_index {
            return false;
        }
        let same_warp = self.thread_index / 32 == other.thread_index / 32;
        self.barriers == other.barriers && !(same_warp && self.warp_syncs != other.warp_syncs)
    }
}

/// The shadow of one byte.
#[derive(Default)]
struct Shadow {
    write: Option<Access>,
    /// Plain reads since the last write, one per thread (the latest), at most [MAX_READS].
    reads: Vec<Access>,
    /// Written by an atomic access (shared memory counts as initialised).
    atomic: bool,
}

const MAX_READS: usize = 8;

/// Global memory's shadow, for the launch running (cleared when one starts).
static GLOBAL: Mutex<Option<HashMap<usize, Shadow>>> = Mutex::new(None);

/// What one launch has reported.
#[derive(Default)]
struct Reports {
    seen: HashSet<(&'static str, usize, usize)>,
    count: usize,
}

static REPORTS: Mutex<Option<Reports>> = Mutex::new(None);

thread_local! {
    /// Shared memory's shadow for the block this worker runs.
    static SHARED: RefCell<HashMap<usize, Shadow>> = RefCell::new(HashMap::new());
    /// Where this worker's shared memory is: `(address, size)` per shared variable.
    static SHARED_RANGES: RefCell<Vec<(usize, usize)>> = const { RefCell::new(Vec::new()) };
    /// Whether the launch this worker runs is watched.
    static WATCHING: Cell<bool> = const { Cell::new(false) };
}

/// The text of a source position the image passed (`file:line:column`).
pub(crate) fn site_text(site: usize) -> String {
    if site == 0 {
        return "?".into();
    }
    // SAFETY: sites are NUL-terminated constants of the image, alive for good.
    unsafe { CStr::from_ptr(site as *const c_char) }
        .to_string_lossy()
        .into_owned()
}

/// Starts watching a launch (before its first block).
pub(crate) fn start_launch() {
    *GLOBAL.lock().unwrap_or_else(|e| e.into_inner()) = Some(HashMap::new());
    *REPORTS.lock().unwrap_or_else(|e| e.into_inner()) = Some(Reports::default());
}

/// Ends a launch: the number of distinct reports it made.
pub(crate) fn end_launch(kernel: &str) -> usize {
    *GLOBAL.lock().unwrap_or_else(|e| e.into_inner()) = None;
    let count = REPORTS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .map_or(0, |r| r.count);
    if count > 0 {
        eprintln!("cuda-oxide race detector: {count} report(s) in the launch of `{kernel}`");
    }
    count
}

/// Starts a block on this worker: a fresh shared-memory shadow; `shared` says where this
/// worker's shared memory is.
pub(crate) fn start_block(shared: Vec<(usize, usize)>) {
    WATCHING.with(|w| w.set(true));
    SHARED.with(|s| s.borrow_mut().clear());
    SHARED_RANGES.with(|r| *r.borrow_mut() = shared);
}

/// Ends a block on this worker.
pub(crate) fn end_block() {
    WATCHING.with(|w| w.set(false));
}

/// Prints a report unless one of the same kind at the same positions was printed in this
/// launch.
pub(crate) fn report(kind: &'static str, first: usize, second: usize, text: String) {
    let mut reports = REPORTS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(reports) = reports.as_mut() else {
        return;
    };
    let key = (kind, first.min(second), first.max(second));
    if reports.seen.insert(key) {
        reports.count += 1;
        eprintln!("cuda-oxide race detector: {text}");
    }
}

fn describe(access: &Access, what: &str) -> String {
    format!(
        "{what} by block {:?} thread {:?} at {}",
        access.block,
        access.thread,
        site_text(access.site)
    )
}

/// Where `address` is: shared memory of this worker, the thread's own stack, or global.
enum Space {
    Shared,
    Stack,
    Global,
}

fn space(state: &ThreadState, address: usize) -> Space {
    let (low, high) = state.stack.get();
    if (low..high).contains(&address) {
        return Space::Stack;
    }
    let shared = SHARED_RANGES.with(|ranges| {
        ranges
            .borrow()
            .iter()
            .any(|&(start, size)| (start..start + size).contains(&address))
    });
    if shared { Space::Shared } else { Space::Global }
}

/// A plain (`write` false: read) or atomic access of `size` bytes at `address`.
pub(crate) fn access(address: usize, size: usize, site: usize, kind: AccessKind) {
    if !WATCHING.with(Cell::get) {
        return;
    }
    let Some(state) = launch::current() else {
        return;
    };
    let now = Access::of(state, site);
    match space(state, address) {
        Space::Stack => {}
        Space::Shared => SHARED.with(|shadow| {
            let mut shadow = shadow.borrow_mut();
            check(&mut shadow, address, size, &now, kind, "shared");
        }),
        Space::Global => {
            let mut global = GLOBAL.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(shadow) = global.as_mut() {
                check(shadow, address, size, &now, kind, "global");
            }
        }
    }
}

/// What an access does.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum AccessKind {
    Read,
    Write,
    Atomic,
}

/// Checks `now` against the shadow of each byte it touches, reports the first conflict, and
/// records it.
fn check(
    shadow: &mut HashMap<usize, Shadow>,
    address: usize,
    size: usize,
    now: &Access,
    kind: AccessKind,
    memory: &str,
) {
    let mut reported = false;
    for byte in address..address + size.max(1) {
        let cell = shadow.entry(byte).or_default();
        match kind {
            AccessKind::Atomic => cell.atomic = true,
            AccessKind::Read => {
                if !reported {
                    if let Some(write) = cell.write.filter(|w| w.unordered(now)) {
                        report(
                            "race",
                            write.site,
                            now.site,
                            format!(
                                "data race on {memory} memory at {byte:#x}: {} and {}",
                                describe(&write, "a write"),
                                describe(now, "a read")
                            ),
                        );
                        reported = true;
                    } else if memory == "shared" && cell.write.is_none() && !cell.atomic {
                        report(
                            "uninitialised",
                            now.site,
                            now.site,
                            format!(
                                "read of shared memory at {byte:#x} that no thread of the \
                                 block wrote: {}",
                                describe(now, "a read")
                            ),
                        );
                        reported = true;
                    }
                }
                cell.reads.retain(|r| {
                    r.thread_index != now.thread_index || r.block_index != now.block_index
                });
                if cell.reads.len() == MAX_READS {
                    cell.reads.remove(0);
                }
                cell.reads.push(*now);
            }
            AccessKind::Write => {
                if !reported {
                    let earlier = cell
                        .write
                        .filter(|w| w.unordered(now))
                        .map(|w| (w, "a write"))
                        .or_else(|| {
                            cell.reads
                                .iter()
                                .find(|r| r.unordered(now))
                                .map(|r| (*r, "a read"))
                        });
                    if let Some((earlier, what)) = earlier {
                        report(
                            "race",
                            earlier.site,
                            now.site,
                            format!(
                                "data race on {memory} memory at {byte:#x}: {} and {}",
                                describe(&earlier, what),
                                describe(now, "a write")
                            ),
                        );
                        reported = true;
                    }
                }
                cell.write = Some(*now);
                cell.reads.clear();
            }
        }
    }
}

/// Whether the launch this worker runs is watched.
pub(crate) fn watching() -> bool {
    WATCHING.with(Cell::get)
}
