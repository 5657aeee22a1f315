//! Running a grid on the CPU: blocks spread over worker threads (one block at a time per
//! worker, so a block's `thread_local` shared memory is its own), the threads of a block as
//! fibers ([corosensei]) that run until they finish or stop at a barrier or a warp operation;
//! when the lanes of a warp operation have all arrived they go on ([crate::warp]), and when
//! every thread still running waits at the barrier, all go on. Threads that wait for each
//! other in a way that cannot end (some at the barrier, others at a warp operation whose lanes
//! never all arrive) stop the launch with a message naming the block.

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use crate::image::{Entry, RaceImage, RegistersFn};
use crate::race;
use crate::warp::{self, WarpOp};

/// Why a fiber gave the CPU back before finishing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// At `bar.sync` (`syncthreads` and its counting forms).
    Barrier,
    /// At a warp-synchronous operation ([ThreadState::warp_op] says which).
    Warp,
    /// The thread trapped: the grid stops.
    Trap,
    /// The thread polls for something the others do (an mbarrier phase): they run first.
    Poll,
}

/// What a thread of a running block knows about itself; the runtime's functions read it
/// through [current].
pub(crate) struct ThreadState {
    pub(crate) tid: [u32; 3],
    pub(crate) ctaid: [u32; 3],
    pub(crate) ntid: [u32; 3],
    pub(crate) nctaid: [u32; 3],
    /// The fiber's yielder, set when the fiber first runs.
    yielder: Cell<*const Yielder<(), Stop>>,
    /// The predicate this thread brought to the barrier it waits at.
    pub(crate) barrier_vote: Cell<bool>,
    /// What the barrier answered: the number of threads that voted true.
    pub(crate) barrier_count: Cell<u32>,
    /// The warp operation this thread waits at.
    pub(crate) warp_op: Cell<Option<WarpOp>>,
    /// Its result.
    pub(crate) warp_result: Cell<u64>,
    /// The race detector's view: the source position of the last runtime call, the barriers
    /// and warp operations the thread has passed, and its stack (`[low, high)`).
    pub(crate) site: Cell<usize>,
    pub(crate) barriers_passed: Cell<u32>,
    pub(crate) warp_syncs: Cell<u32>,
    pub(crate) stack: Cell<(usize, usize)>,
}

impl ThreadState {
    /// `threadIdx` as one number, x fastest.
    pub(crate) fn linear_tid(&self) -> u32 {
        self.tid[0] + self.ntid[0] * (self.tid[1] + self.ntid[1] * self.tid[2])
    }

    /// The lanes the thread's warp has (the last warp of a block may be partial).
    pub(crate) fn warp_lanes(&self) -> u32 {
        let size = self.ntid[0] * self.ntid[1] * self.ntid[2];
        let first = self.linear_tid() / 32 * 32;
        match size - first {
            n if n >= 32 => u32::MAX,
            n => (1u32 << n) - 1,
        }
    }
}

thread_local! {
    static CURRENT: Cell<*const ThreadState> = const { Cell::new(std::ptr::null()) };
    /// The name of the kernel whose block this worker runs (its text lives as long as the
    /// launch).
    static KERNEL: Cell<(*const u8, usize)> = const { Cell::new((std::ptr::null(), 0)) };
}

/// The name of the kernel whose thread runs on this OS thread, for messages.
pub(crate) fn kernel_name() -> Option<String> {
    let (ptr, len) = KERNEL.with(Cell::get);
    if ptr.is_null() || current().is_none() {
        return None;
    }
    // SAFETY: set by [run_block] to the launch's kernel name, alive while its threads run.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    Some(String::from_utf8_lossy(bytes).into_owned())
}

/// The thread running on this OS thread, or `None` outside a kernel.
pub(crate) fn current() -> Option<&'static ThreadState> {
    let state = CURRENT.with(Cell::get);
    // SAFETY: set by the scheduler to a state that outlives the fiber's run.
    unsafe { state.as_ref() }
}

/// Gives the CPU back to the block's scheduler with `why`; returns when it resumes the fiber.
pub(crate) fn stop(why: Stop) {
    let Some(state) = current() else {
        return;
    };
    let yielder = state.yielder.get();
    // SAFETY: the yielder of the running fiber, alive while it runs.
    unsafe { (*yielder).suspend(why) };
}

/// A launch.
pub(crate) struct Grid<'k> {
    pub(crate) entry: Entry,
    pub(crate) params: *const *const c_void,
    pub(crate) grid: [u32; 3],
    pub(crate) block: [u32; 3],
    /// A fiber per thread (the kernel may make threads wait for each other); otherwise one
    /// fiber runs the block's threads one after another.
    pub(crate) thread_fibers: bool,
    /// Set when the kernel was built for the race detector: the launch is watched.
    pub(crate) race: Option<RaceImage>,
    /// Where its code reads the special registers of the thread running.
    pub(crate) registers: RegistersFn,
    /// The kernel's name, for messages.
    pub(crate) name: &'k str,
}

// SAFETY: the parameters are read (never written) by every thread of the launch, which the
// caller keeps alive until `run` returns.
unsafe impl Sync for Grid<'_> {}

/// How a launch ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    Completed,
    /// A thread trapped (a panic, a failed check, an operation the CPU device lacks).
    Trapped,
}

/// Bytes of stack each thread of a block gets (`CUDA_OXIDE_CPU_STACK` overrides).
fn stack_bytes() -> usize {
    std::env::var("CUDA_OXIDE_CPU_STACK")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(256 * 1024)
}

/// Fiber stacks left by earlier launches: a launch's workers are new threads, and mapping a
/// block's stacks anew for every launch costs more than a small kernel's work.
static STACK_POOL: Mutex<Vec<DefaultStack>> = Mutex::new(Vec::new());

/// At most this many stacks are kept between launches (a block's worth for 4 workers).
const POOLED_STACKS: usize = 4 * 1024;

/// The stacks a worker starts with: a block's worth from the pool, if it has them.
fn take_stacks() -> Vec<DefaultStack> {
    let mut pool = STACK_POOL.lock().unwrap_or_else(|e| e.into_inner());
    let keep = pool.len().saturating_sub(1024);
    pool.split_off(keep)
}

/// Returns a worker's stacks to the pool, up to its limit.
fn give_back_stacks(mut stacks: Vec<DefaultStack>) {
    let mut pool = STACK_POOL.lock().unwrap_or_else(|e| e.into_inner());
    let room = POOLED_STACKS.saturating_sub(pool.len());
    stacks.truncate(room);
    pool.extend(stacks);
}

/// Runs every block of `grid`.
pub(crate) fn run(grid: &Grid) -> Outcome {
    let [gx, gy, gz] = grid.grid.map(u64::from);
    let blocks = gx * gy * gz;
    // A watched launch runs its blocks in order on one worker: its reports are reproducible.
    let workers = if grid.race.is_some() {
        1
    } else {
        std::thread::available_parallelism()
            .map(|n| n.get() as u64)
            .unwrap_or(1)
            .min(blocks)
            .max(1)
    };
    let next = AtomicU64::new(0);
    let trapped = AtomicBool::new(false);
    let failure: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let mut stacks = take_stacks();
                if grid.race.is_some() {
                    race::start_launch();
                }
                loop {
                    if trapped.load(Ordering::Relaxed) {
                        break;
                    }
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= blocks {
                        break;
                    }
                    let ctaid = [
                        (index % gx) as u32,
                        (index / gx % gy) as u32,
                        (index / (gx * gy)) as u32,
                    ];
                    match run_block(grid, ctaid, &mut stacks) {
                        Ok(Outcome::Completed) => {}
                        Ok(Outcome::Trapped) => trapped.store(true, Ordering::Relaxed),
                        Err(why) => {
                            *failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                            trapped.store(true, Ordering::Relaxed);
                        }
                    }
                }
                give_back_stacks(stacks);
                if grid.race.is_some() {
                    race::end_launch(grid.name);
                }
            });
        }
    });
    if let Some(why) = failure.into_inner().unwrap_or_else(|e| e.into_inner()) {
        eprintln!("cuda-oxide CPU device: {why}");
    }
    if trapped.load(Ordering::Relaxed) {
        Outcome::Trapped
    } else {
        Outcome::Completed
    }
}

type Fiber = Coroutine<(), Stop, (), DefaultStack>;

/// Where a thread of a running block is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    Running,
    Barrier,
    Warp,
    Done,
}

/// Completes the warp operations whose lanes have all arrived; whether any did.
fn release_warps(states: &[ThreadState], waits: &mut [Wait]) -> bool {
    let mut released = false;
    for warp_start in (0..states.len()).step_by(32) {
        let warp_end = (warp_start + 32).min(states.len());
        let lanes = warp_start..warp_end;
        let arrived: Vec<(u32, WarpOp)> = lanes
            .clone()
            .filter(|&t| waits[t] == Wait::Warp)
            .filter_map(|t| {
                states[t]
                    .warp_op
                    .get()
                    .map(|op| ((t - warp_start) as u32, op))
            })
            .collect();
        let mut kinds: Vec<(warp::WarpKind, u32)> = Vec::new();
        for (_, op) in &arrived {
            if !kinds.contains(&(op.kind, op.mask)) {
                kinds.push((op.kind, op.mask));
            }
        }
        for (kind, mask) in kinds {
            let group: Vec<(u32, WarpOp)> = arrived
                .iter()
                .copied()
                .filter(|(_, op)| op.mask == mask && op.kind == kind)
                .collect();
            // Every lane of the mask still running has arrived; `activemask` completes with
            // whoever waits at it (no lane of the warp runs when this is called).
            let complete = kind == warp::WarpKind::Active
                || lanes.clone().all(|t| {
                    let lane = (t - warp_start) as u32;
                    mask & (1 << lane) == 0
                        || waits[t] == Wait::Done
                        || group.iter().any(|(l, _)| *l == lane)
                });
            if !complete {
                continue;
            }
            if race::watching() && kind != warp::WarpKind::Active {
                let exited: Vec<u32> = lanes
                    .clone()
                    .filter(|&t| waits[t] == Wait::Done)
                    .map(|t| (t - warp_start) as u32)
                    .filter(|lane| mask & (1 << lane) != 0)
                    .collect();
                if let Some(&(lane, _)) = group.first()
                    && !exited.is_empty()
                {
                    let state = &states[warp_start + lane as usize];
                    let site = state.site.get();
                    race::report(
                        "warp-mask",
                        site,
                        site,
                        format!(
                            "warp operation at {} in block {:?}: its mask {mask:#010x} names \
                             lane(s) {exited:?} of warp {}, which exited without reaching it",
                            race::site_text(site),
                            state.ctaid,
                            warp_start / 32
                        ),
                    );
                }
            }
            for (lane, result) in warp::results(&group) {
                let t = warp_start + lane as usize;
                states[t].warp_result.set(result);
                states[t].warp_op.set(None);
                states[t].warp_syncs.set(states[t].warp_syncs.get() + 1);
                waits[t] = Wait::Running;
            }
            released = true;
        }
    }
    released
}

/// For the race detector, as a barrier opens: every thread of the block should wait at it,
/// at the same `syncthreads`.
fn check_barrier(states: &[ThreadState], waits: &[Wait]) {
    let waiting: Vec<&ThreadState> = states
        .iter()
        .zip(waits)
        .filter(|(_, w)| **w == Wait::Barrier)
        .map(|(s, _)| s)
        .collect();
    let Some(first) = waiting.first() else {
        return;
    };
    let exited: Vec<[u32; 3]> = states
        .iter()
        .zip(waits)
        .filter(|(_, w)| **w == Wait::Done)
        .map(|(s, _)| s.tid)
        .collect();
    let site = first.site.get();
    if !exited.is_empty() {
        let shown: Vec<String> = exited.iter().take(4).map(|t| format!("{t:?}")).collect();
        race::report(
            "barrier-exited",
            site,
            site,
            format!(
                "`syncthreads` at {} in block {:?} opened without {} of the block's {} threads, \
                 which exited without reaching it (threads {}{})",
                race::site_text(site),
                first.ctaid,
                exited.len(),
                states.len(),
                shown.join(", "),
                if exited.len() > 4 { ", ..." } else { "" }
            ),
        );
    }
    if let Some(other) = waiting.iter().find(|s| s.site.get() != site) {
        race::report(
            "barrier-diverged",
            site,
            other.site.get(),
            format!(
                "threads of block {:?} wait at different `syncthreads`: thread {:?} at {}, \
                 thread {:?} at {}",
                first.ctaid,
                first.tid,
                race::site_text(site),
                other.tid,
                race::site_text(other.site.get())
            ),
        );
    }
}

/// Runs the threads of block `ctaid` to their end, or until one traps.
fn run_block(
    grid: &Grid,
    ctaid: [u32; 3],
    stacks: &mut Vec<DefaultStack>,
) -> Result<Outcome, String> {
    let [bx, by, bz] = grid.block;
    let count = (bx * by * bz) as usize;
    let states: Vec<ThreadState> = (0..count as u32)
        .map(|t| ThreadState {
            tid: [t % bx, t / bx % by, t / (bx * by)],
            ctaid,
            ntid: grid.block,
            nctaid: grid.grid,
            yielder: Cell::new(std::ptr::null()),
            barrier_vote: Cell::new(false),
            barrier_count: Cell::new(0),
            warp_op: Cell::new(None),
            warp_result: Cell::new(0),
            site: Cell::new(0),
            barriers_passed: Cell::new(0),
            warp_syncs: Cell::new(0),
            stack: Cell::new((0, 0)),
        })
        .collect();
    KERNEL.with(|k| k.set((grid.name.as_ptr(), grid.name.len())));
    if let Some(image) = &grid.race {
        race::start_block(image.shared_ranges());
    }
    // SAFETY: the image's function, called on the worker that runs the block: the address of
    // this OS thread's register array (12 `u32`s), which the block's threads read.
    let registers = unsafe { (grid.registers)() };
    for (i, value) in grid
        .block
        .iter()
        .chain(&ctaid)
        .chain(&grid.grid)
        .enumerate()
    {
        // SAFETY: as above; `ntid`, `ctaid`, `nctaid` follow `tid`.
        unsafe { registers.add(3 + i).write(*value) };
    }
    let set_tid = move |state: &ThreadState| {
        for (i, value) in state.tid.iter().enumerate() {
            // SAFETY: as above.
            unsafe { registers.add(i).write(*value) };
        }
    };
    let fiber_count = if grid.thread_fibers { count } else { 1 };
    let mut fibers: Vec<Option<Fiber>> = Vec::with_capacity(fiber_count);
    for first in states.iter().take(fiber_count) {
        let stack = match stacks.pop() {
            Some(stack) => stack,
            None => DefaultStack::new(stack_bytes())
                .map_err(|e| format!("no memory for a thread's stack: {e}"))?,
        };
        let threads = if grid.thread_fibers { 1 } else { count };
        {
            use corosensei::stack::Stack;
            let range = (stack.limit().get(), stack.base().get());
            let index = fibers.len();
            for state in &states[index..index + threads] {
                state.stack.set(range);
            }
        }
        let first: *const ThreadState = first;
        let entry = grid.entry;
        let params = grid.params as usize;
        fibers.push(Some(Coroutine::with_stack(stack, move |yielder, ()| {
            for t in 0..threads {
                // SAFETY: `states` outlives the fibers (they end or are reset before it
                // drops); a fiber that runs several threads runs them in order, each current
                // while it runs. The entry is a kernel's, with the launch's parameters.
                unsafe {
                    let state = first.add(t);
                    (*state).yielder.set(yielder);
                    CURRENT.with(|current| current.set(state));
                    set_tid(&*state);
                    entry(params as *const *const c_void);
                }
            }
        })));
    }
    let mut waits = vec![Wait::Running; fiber_count];
    let mut outcome = Outcome::Completed;
    'schedule: loop {
        let mut ran = false;
        // Whether every thread that ran only polled, and what the barriers were before.
        let mut only_polled = true;
        let barrier_changes = crate::mbarrier::changes();
        for (index, slot) in fibers.iter_mut().enumerate() {
            let Some(fiber) = slot else { continue };
            if waits[index] != Wait::Running {
                continue;
            }
            ran = true;
            CURRENT.with(|current| current.set(&states[index]));
            set_tid(&states[index]);
            let result = fiber.resume(());
            CURRENT.with(|current| current.set(std::ptr::null()));
            if !matches!(result, CoroutineResult::Yield(Stop::Poll)) {
                only_polled = false;
            }
            match result {
                CoroutineResult::Yield(Stop::Barrier | Stop::Warp | Stop::Poll)
                    if !grid.thread_fibers =>
                {
                    eprintln!(
                        "cuda-oxide CPU device: a kernel that the compiler found never waits \
                         reached a barrier or warp operation (a bug in cuda-oxide); the launch \
                         fails"
                    );
                    outcome = Outcome::Trapped;
                    break 'schedule;
                }
                CoroutineResult::Yield(Stop::Poll) => {}
                CoroutineResult::Yield(Stop::Barrier) => waits[index] = Wait::Barrier,
                CoroutineResult::Yield(Stop::Warp) => waits[index] = Wait::Warp,
                CoroutineResult::Yield(Stop::Trap) => {
                    outcome = Outcome::Trapped;
                    break 'schedule;
                }
                CoroutineResult::Return(()) => {
                    waits[index] = Wait::Done;
                    if let Some(fiber) = slot.take() {
                        stacks.push(fiber.into_stack());
                    }
                }
            }
        }
        if waits.iter().all(|w| *w == Wait::Done) {
            break;
        }
        // (Only threads with fibers of their own wait, so `waits` is per thread here.)
        let mut released = grid.thread_fibers && release_warps(&states, &mut waits);
        let all_at_barrier = waits
            .iter()
            .all(|w| matches!(w, Wait::Barrier | Wait::Done));
        if !released && all_at_barrier {
            // Every thread still running waits at the barrier: it opens.
            let votes = states
                .iter()
                .zip(&waits)
                .filter(|(state, wait)| **wait == Wait::Barrier && state.barrier_vote.get())
                .count() as u32;
            if grid.race.is_some() {
                check_barrier(&states, &waits);
            }
            for (state, wait) in states.iter().zip(waits.iter_mut()) {
                if *wait == Wait::Barrier {
                    state.barrier_count.set(votes);
                    state.barriers_passed.set(state.barriers_passed.get() + 1);
                    *wait = Wait::Running;
                }
            }
            released = true;
        }
        if ran && only_polled && !released && crate::mbarrier::changes() == barrier_changes {
            eprintln!(
                "cuda-oxide CPU device: block {ctaid:?} cannot go on: its running threads all \
                 wait for mbarrier phases that no thread completes (arrivals or expected bytes \
                 missing); the launch fails"
            );
            outcome = Outcome::Trapped;
            break;
        }
        if !ran && !released {
            let at_barrier = waits.iter().filter(|w| **w == Wait::Barrier).count();
            let at_warp = waits.iter().filter(|w| **w == Wait::Warp).count();
            eprintln!(
                "cuda-oxide CPU device: block {ctaid:?} cannot go on: {at_barrier} thread(s) wait at \
                 `syncthreads` and {at_warp} at a warp operation whose lanes do not all arrive \
                 (a barrier or warp operation that not every thread reaches); the launch fails"
            );
            outcome = Outcome::Trapped;
            break;
        }
    }
    if grid.race.is_some() {
        race::end_block();
    }
    for slot in fibers.iter_mut() {
        if let Some(mut fiber) = slot.take() {
            if !fiber.done() {
                // SAFETY: the fiber stopped in kernel code or the runtime's `stop`, which hold
                // nothing to drop; it is abandoned, not resumed.
                unsafe { fiber.force_reset() };
            }
            stacks.push(fiber.into_stack());
        }
    }
    Ok(outcome)
}
