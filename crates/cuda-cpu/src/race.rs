//! The race detector (docs/cpu.md, "The race detector"): kernels built with `CUDA_OXIDE_RACE=1`
//! tell the runtime of every plain load and store (`race_load`/`race_store`: address, size,
//! source position), every atomic access (`race_atomic`) and the source position of every call
//! of a runtime function (`race_at`). Each aligned 8-byte granule of memory has a shadow: its
//! last plain write and the last two plain reads since, each with the bytes it touched, and
//! the bytes ever written. Two accesses of one launch conflict when they touch a byte in
//! common, come from different threads, at least one writes, and nothing orders them:
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
//! An access older than what the shadow keeps is forgotten: a race may go unreported, but
//! none is invented. Launches run on one worker, blocks in order and threads in order, so a run
//! is deterministic; each distinct report (its kind and source positions) is printed once per
//! launch, to standard error, and a launch with reports ends with their count.

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::ffi::{CStr, c_char};

use crate::launch::{self, ThreadState};

/// A plain access, as the shadow keeps it (compact: the shadow of a large buffer holds
/// millions of them). Counts of barriers and warp operations are kept modulo 2^16.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Access {
    /// The source position, as an index into [SITES].
    site: u32,
    /// The block's linear index in the grid and the thread's in the block.
    block: u32,
    thread: u16,
    barriers: u16,
    warp_syncs: u16,
    /// The thread's own component of its mbarrier clock ([Clocks]) at the access.
    epoch: u16,
}

impl Access {
    fn of(state: &ThreadState, site: usize) -> Access {
        let [bx, by, _] = state.nctaid;
        let [x, y, z] = state.ctaid;
        let thread = state.linear_tid() as usize;
        Access {
            site: site_index(site),
            block: x + bx * (y + by * z),
            thread: thread as u16,
            barriers: state.barriers_passed.get() as u16,
            warp_syncs: state.warp_syncs.get() as u16,
            epoch: CLOCKS.with(|c| c.borrow().epoch(thread)) as u16,
        }
    }

    /// Whether `self` and `other` (a later access) may happen in either order.
    fn unordered(&self, other: &Access) -> bool {
        if self.block != other.block {
            return true;
        }
        if self.thread == other.thread {
            return false;
        }
        let same_warp = self.thread / 32 == other.thread / 32;
        self.barriers == other.barriers && !(same_warp && self.warp_syncs != other.warp_syncs)
    }

    /// Whether `other` is the same thread between the same barriers, warp operations and
    /// mbarrier arrivals.
    fn same_moment(&self, other: &Access) -> bool {
        (
            self.block,
            self.thread,
            self.barriers,
            self.warp_syncs,
            self.epoch,
        ) == (
            other.block,
            other.thread,
            other.barriers,
            other.warp_syncs,
            other.epoch,
        )
    }

    /// `block (x, y, z) thread (x, y, z)` of a launch of `grid` blocks of `block` threads.
    fn who(&self, grid: [u32; 3], block: [u32; 3]) -> String {
        let split = |index: u32, dims: [u32; 3]| {
            [
                index % dims[0],
                index / dims[0] % dims[1],
                index / (dims[0] * dims[1]),
            ]
        };
        format!(
            "block {:?} thread {:?}",
            split(self.block, grid),
            split(u32::from(self.thread), block)
        )
    }
}

/// An access and the bytes of its granule it touched (none: an empty record).
#[derive(Clone, Copy, Debug, Default)]
struct Touch {
    access: Access,
    mask: u8,
}

/// The shadow of an aligned 8-byte granule: its two latest plain writes and two latest plain
/// reads (one thread's accesses at one source position between the same barriers merge), each
/// with the bytes it touched and still holds, and the bytes ever written
/// (plainly or atomically). Older accesses are forgotten, so a race may go unreported, never
/// invented.
#[derive(Default)]
struct Granule {
    writes: [Touch; 2],
    reads: [Touch; 2],
    written: u8,
}

impl Granule {
    /// Records `touch` in `slots`: merged into the record of the same access (thread, moment
    /// and source position), else in place of one it covers, else as the latest.
    fn record(slots: &mut [Touch; 2], touch: Touch) {
        if let Some(same) = slots
            .iter_mut()
            .find(|slot| slot.mask != 0 && slot.access == touch.access)
        {
            same.mask |= touch.mask;
            return;
        }
        // A record whose bytes this access of the same thread at the same moment covers says
        // nothing more: it makes room first.
        let covered = slots.iter().position(|slot| {
            slot.mask == 0
                || (slot.access.same_moment(&touch.access) && slot.mask & !touch.mask == 0)
        });
        match covered {
            Some(index) => slots[index] = touch,
            None => {
                slots[1] = slots[0];
                slots[0] = touch;
            }
        }
    }
}

/// The order asynchronous barriers (`mbarrier`) give the threads of the block running: a
/// vector clock per thread that took part in one (a thread's own component counts its
/// arrivals, from 1), and per barrier the join of the clocks of its current phase's arrivals
/// and of its last completed phase's. A thread that sees a phase complete joins that phase's
/// clock, so an access of thread `t` at epoch `e` happens before what a thread whose clock has
/// `e` or more for `t` does next. Syncthreads and warp operations keep their counters
/// ([Access::unordered]).
#[derive(Default)]
struct Clocks {
    /// Per linear thread index: its clock, once it arrived or waited at a barrier.
    threads: Vec<Option<Vec<u32>>>,
    /// Per barrier address: (this phase's arrivals, the last completed phase's).
    barriers: AddressMap<(Vec<u32>, Vec<u32>)>,
}

impl Clocks {
    /// The clock of `thread`, made on first use.
    fn clock(&mut self, thread: usize, threads: usize) -> &mut Vec<u32> {
        if self.threads.len() < threads {
            self.threads.resize(threads, None);
        }
        self.threads[thread].get_or_insert_with(|| {
            let mut clock = vec![0; threads];
            clock[thread] = 1;
            clock
        })
    }

    /// The own component of `thread`'s clock (1 before its first arrival).
    fn epoch(&self, thread: usize) -> u32 {
        match self.threads.get(thread) {
            Some(Some(clock)) => clock[thread],
            _ => 1,
        }
    }

    /// Whether the access `earlier` (of this block) happens before what `thread` does now.
    fn ordered(&self, earlier: &Access, thread: usize) -> bool {
        match self.threads.get(thread) {
            Some(Some(clock)) => clock
                .get(usize::from(earlier.thread))
                .is_some_and(|&seen| seen >= u32::from(earlier.epoch)),
            _ => false,
        }
    }
}

fn join(into: &mut Vec<u32>, from: &[u32]) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (a, b) in into.iter_mut().zip(from) {
        *a = (*a).max(*b);
    }
}

/// An arrival of the running thread at the barrier at `addr`, which completed its phase when
/// `completed`.
pub(crate) fn mbarrier_arrive(addr: u64, completed: bool) {
    let Some(state) = watched_thread() else {
        return;
    };
    let (thread, threads) = (state.linear_tid() as usize, block_threads(state));
    CLOCKS.with(|clocks| {
        let clocks = &mut *clocks.borrow_mut();
        let clock = clocks.clock(thread, threads).clone();
        let (arrived, last) = clocks.barriers.entry(addr as usize).or_default();
        join(arrived, &clock);
        if completed {
            *last = std::mem::take(arrived);
        }
        let own = &mut clocks.clock(thread, threads)[thread];
        *own = own.saturating_add(1).min(u32::from(u16::MAX));
    });
}

/// The running thread saw a phase of the barrier at `addr` complete.
pub(crate) fn mbarrier_waited(addr: u64) {
    let Some(state) = watched_thread() else {
        return;
    };
    let (thread, threads) = (state.linear_tid() as usize, block_threads(state));
    CLOCKS.with(|clocks| {
        let clocks = &mut *clocks.borrow_mut();
        let last = clocks
            .barriers
            .get(&(addr as usize))
            .map(|(_, last)| last.clone())
            .unwrap_or_default();
        join(clocks.clock(thread, threads), &last);
    });
}

/// The running thread of a watched launch.
fn watched_thread() -> Option<&'static ThreadState> {
    if !WATCHING.with(Cell::get) {
        return None;
    }
    launch::current()
}

fn block_threads(state: &ThreadState) -> usize {
    (state.ntid[0] * state.ntid[1] * state.ntid[2]) as usize
}

/// A hasher for addresses (the standard one is slow for millions of them).
#[derive(Default)]
struct AddressHasher(u64);

impl std::hash::Hasher for AddressHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn write_usize(&mut self, value: usize) {
        self.0 = (value as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A map keyed by addresses, with [AddressHasher].
type AddressMap<V> = HashMap<usize, V, std::hash::BuildHasherDefault<AddressHasher>>;

/// Bits of the address a page of the shadow covers (4 KiB: 512 granules).
const PAGE_BITS: u32 = 12;
const PAGE_GRANULES: usize = 1 << (PAGE_BITS - 3);

/// The shadow of a memory: a granule record for each aligned 8 bytes of every page touched,
/// the pages in a map by page number, and the page used last remembered (accesses are
/// mostly near the one before).
#[derive(Default)]
struct Shadow {
    pages: AddressMap<Box<[Granule]>>,
    /// The page number and the first granule of the page used last.
    last: Option<(usize, *mut Granule)>,
}

impl Shadow {
    /// The record of the granule at `address` (a multiple of 8).
    fn granule(&mut self, address: usize) -> &mut Granule {
        let page = address >> PAGE_BITS;
        let first = match self.last {
            Some((last, first)) if last == page => first,
            _ => {
                let granules = self.pages.entry(page).or_insert_with(|| {
                    std::iter::repeat_with(Granule::default)
                        .take(PAGE_GRANULES)
                        .collect()
                });
                let first = granules.as_mut_ptr();
                self.last = Some((page, first));
                first
            }
        };
        // SAFETY: `first` points at a page's granules, which stay where they are (a boxed
        // slice) until [Shadow::clear] drops them and forgets `last`; the index is in the page.
        unsafe { &mut *first.add((address >> 3) & (PAGE_GRANULES - 1)) }
    }

    fn clear(&mut self) {
        self.last = None;
        self.pages.clear();
    }

    /// Forgets every access to the `size` bytes at `address` (whole granules: allocations are
    /// aligned).
    fn forget(&mut self, address: usize, size: usize) {
        let mut granule = address & !7;
        while granule < address + size {
            let page = granule >> PAGE_BITS;
            let page_end = (page + 1) << PAGE_BITS;
            if let Some(granules) = self.pages.get_mut(&page) {
                let last = page_end.min(address + size + 7) & !7;
                let first = (granule >> 3) & (PAGE_GRANULES - 1);
                let count = (last - granule) >> 3;
                for cell in &mut granules[first..first + count] {
                    *cell = Granule::default();
                }
            }
            granule = page_end;
        }
    }
}

/// New memory of `size` bytes at `address` from the device heap: no access to it before the
/// allocation races with one after (the allocator orders a block's reuse after its free).
pub(crate) fn allocated(address: usize, size: usize) {
    if WATCHING.with(Cell::get) {
        GLOBAL.with(|global| global.borrow_mut().forget(address, size));
    }
}

/// What one launch has reported.
#[derive(Default)]
struct Reports {
    seen: HashSet<(&'static str, usize, usize)>,
    count: usize,
}

thread_local! {
    /// What the watched launch this worker runs has reported (a launch has one worker, so
    /// launches from several host threads at once keep theirs apart).
    static REPORTS: RefCell<Option<Reports>> = const { RefCell::new(None) };
    /// The source positions seen (their addresses), indexed by [Access::site].
    static SITES: RefCell<(Vec<usize>, AddressMap<u32>)> = RefCell::new((Vec::new(), AddressMap::default()));
    /// The cache of [site_index]: `(site, index)` by the site's address (`usize::MAX`: empty).
    static SITE_CACHE_SLOTS: [Cell<(usize, u32)>; SITE_CACHE] = const { [const { Cell::new((usize::MAX, 0)) }; SITE_CACHE] };
    /// Global memory's shadow for the launch running (a watched launch runs on one worker).
    static GLOBAL: RefCell<Shadow> = RefCell::new(Shadow::default());
    /// Shared memory's shadow for the block this worker runs.
    static SHARED: RefCell<Shadow> = RefCell::new(Shadow::default());
    /// Where this worker's shared memory is: `(address, size)` per shared variable.
    static SHARED_RANGES: RefCell<Vec<(usize, usize)>> = const { RefCell::new(Vec::new()) };
    /// Whether the launch this worker runs is watched.
    static WATCHING: Cell<bool> = const { Cell::new(false) };
    /// The mbarrier order of the block this worker runs.
    static CLOCKS: RefCell<Clocks> = RefCell::new(Clocks::default());
}

/// The index of source position `site` (its constant's address) in [SITES]; the last few
/// answers are remembered by address, since a loop's accesses repeat a handful of sites.
fn site_index(site: usize) -> u32 {
    let slot = (site >> 3) % SITE_CACHE;
    let (cached, index) = SITE_CACHE_SLOTS.with(|c| c[slot].get());
    if cached == site {
        return index;
    }
    let index = SITES.with(|sites| {
        let (list, index) = &mut *sites.borrow_mut();
        *index.entry(site).or_insert_with(|| {
            list.push(site);
            (list.len() - 1) as u32
        })
    });
    SITE_CACHE_SLOTS.with(|c| c[slot].set((site, index)));
    index
}

/// Slots of the cache of [site_index].
const SITE_CACHE: usize = 64;

/// The address of the source position of index `index`.
fn site_address(index: u32) -> usize {
    SITES.with(|sites| sites.borrow().0.get(index as usize).copied().unwrap_or(0))
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

/// Starts watching a launch on the worker that runs it (before its first block).
pub(crate) fn start_launch() {
    REPORTS.with(|r| *r.borrow_mut() = Some(Reports::default()));
}

/// Ends a launch on its worker: the number of distinct reports it made.
pub(crate) fn end_launch(kernel: &str) -> usize {
    GLOBAL.with(|g| g.borrow_mut().clear());
    let count = REPORTS
        .with(|r| r.borrow_mut().take())
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
    CLOCKS.with(|c| *c.borrow_mut() = Clocks::default());
    SHARED_RANGES.with(|r| *r.borrow_mut() = shared);
}

/// Ends a block on this worker.
pub(crate) fn end_block() {
    WATCHING.with(|w| w.set(false));
}

/// Prints a report unless one of the same kind at the same positions was printed in this
/// launch.
pub(crate) fn report(kind: &'static str, first: usize, second: usize, text: String) {
    REPORTS.with(|reports| {
        let mut reports = reports.borrow_mut();
        let Some(reports) = reports.as_mut() else {
            return;
        };
        let key = (kind, first.min(second), first.max(second));
        if reports.seen.insert(key) {
            reports.count += 1;
            eprintln!("cuda-oxide race detector: {text}");
        }
    });
}

fn describe(access: &Access, what: &str, state: &ThreadState) -> String {
    format!(
        "{what} by {} at {}",
        access.who(state.nctaid, state.ntid),
        site_text(site_address(access.site))
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

/// An access of `size` bytes at `address` by the running thread.
pub(crate) fn access(address: usize, size: usize, site: usize, kind: AccessKind) {
    if !WATCHING.with(Cell::get) {
        return;
    }
    let Some(state) = launch::current() else {
        return;
    };
    let now = Access::of(state, site);
    let (memory, shared) = match space(state, address) {
        Space::Stack => return,
        Space::Shared => (&SHARED, true),
        Space::Global => (&GLOBAL, false),
    };
    memory.with(|shadow| {
        let mut shadow = shadow.borrow_mut();
        let end = address + size.max(1);
        let mut granule = address & !7;
        let mut reported = false;
        while granule < end {
            let low = address.max(granule) - granule;
            let high = end.min(granule + 8) - granule;
            let mask = (((1u16 << high) - 1) & !((1u16 << low) - 1)) as u8;
            let cell = shadow.granule(granule);
            if let Some(text) = check(cell, granule, mask, &now, kind, shared, state)
                && !reported
            {
                reported = true;
                let (kind, first, second) = text.0;
                report(kind, first, second, text.1);
            }
            granule += 8;
        }
    });
}

/// What an access does.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum AccessKind {
    Read,
    Write,
    Atomic,
}

/// A report's key (kind, sites) and text.
type Finding = ((&'static str, usize, usize), String);

/// Checks `now`, touching `mask` of the granule at `granule`, against its shadow `cell`, and
/// records it; the first conflict found.
fn check(
    cell: &mut Granule,
    granule: usize,
    mask: u8,
    now: &Access,
    kind: AccessKind,
    shared: bool,
    state: &ThreadState,
) -> Option<Finding> {
    let memory = if shared { "shared" } else { "global" };
    let conflict = |earlier: &Touch| {
        earlier.mask & mask != 0
            && earlier.access.unordered(now)
            && !(earlier.access.block == now.block
                && CLOCKS.with(|c| c.borrow().ordered(&earlier.access, usize::from(now.thread))))
    };
    let byte = granule + mask.trailing_zeros() as usize;
    let race = |earlier: &Touch, what: &str, mine: &str| {
        (
            ("race", earlier.access.site as usize, now.site as usize),
            format!(
                "data race on {memory} memory at {byte:#x}: {} and {}",
                describe(&earlier.access, what, state),
                describe(now, mine, state)
            ),
        )
    };
    let touch = Touch { access: *now, mask };
    match kind {
        AccessKind::Atomic => {
            cell.written |= mask;
            None
        }
        AccessKind::Read => {
            let finding = if let Some(write) = cell.writes.iter().find(|w| conflict(w)) {
                Some(race(write, "a write", "a read"))
            } else if shared && cell.written & mask != mask {
                Some((
                    ("uninitialised", now.site as usize, now.site as usize),
                    format!(
                        "read of shared memory at {byte:#x} that no thread of the block wrote: {}",
                        describe(now, "a read", state)
                    ),
                ))
            } else {
                None
            };
            Granule::record(&mut cell.reads, touch);
            finding
        }
        AccessKind::Write => {
            let finding = if let Some(write) = cell.writes.iter().find(|w| conflict(w)) {
                Some(race(write, "a write", "a write"))
            } else {
                cell.reads
                    .iter()
                    .find(|r| conflict(r))
                    .map(|r| race(r, "a read", "a write"))
            };
            // What this write covers is its own now.
            for old in cell.writes.iter_mut().chain(cell.reads.iter_mut()) {
                if !old.access.same_moment(now) {
                    old.mask &= !mask;
                }
            }
            Granule::record(&mut cell.writes, touch);
            cell.written |= mask;
            finding
        }
    }
}

/// Whether the launch this worker runs is watched.
pub(crate) fn watching() -> bool {
    WATCHING.with(Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(shadow: &mut Shadow, address: usize) -> u8 {
        shadow.granule(address).written
    }

    #[test]
    fn forgetting_a_range_clears_its_granules_across_pages_and_no_others() {
        let mut shadow = Shadow::default();
        let page = 1 << PAGE_BITS;
        let base = 16 * page;
        for address in (base - 16..base + page + 16).step_by(8) {
            shadow.granule(address).written = 0xff;
        }
        // From 8 bytes before a page boundary to 8 bytes into the next page but one.
        shadow.forget(base - 8, page + 16);
        assert_eq!(written(&mut shadow, base - 16), 0xff);
        assert_eq!(written(&mut shadow, base - 8), 0);
        assert_eq!(written(&mut shadow, base + page / 2), 0);
        assert_eq!(written(&mut shadow, base + page), 0);
        assert_eq!(written(&mut shadow, base + page + 8), 0xff);
    }
}
