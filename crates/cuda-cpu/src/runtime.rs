//! What the kernels' CPU flavour calls through its slots: one function per row of the GPU
//! intrinsic table the CPU device implements (named after the row), the trap, and the
//! functions device code declares (`vprintf`, `malloc`, `free`).

use std::ffi::c_void;

use crate::launch::{self, Stop, current};
use crate::mbarrier;
use crate::race;
use crate::warp::{WarpKind as W, WarpOp};

/// Every lane of the warp.
const FULL: u32 = u32::MAX;

/// The address of the runtime function that fills the slot `name`, if there is one.
pub(crate) fn function(name: &str) -> Option<usize> {
    named(name.strip_prefix("__oxide_cpu_").unwrap_or(name))
}

/// Declares each runtime function once, with the name of its slot.
macro_rules! runtime_functions {
    ($( $name:ident ( $($arg:ident : $ty:ty),* ) $(-> $ret:ty)? $body:block )*) => {
        $(
            extern "C" fn $name($($arg: $ty),*) $(-> $ret)? $body
        )*
        /// The runtime function named `name` (without the runtime prefix).
        fn named(name: &str) -> Option<usize> {
            match name {
                $( stringify!($name) => Some($name as *const () as usize), )*
                _ => None,
            }
        }
    };
}

/// A component of a special register of the running thread (0 outside a kernel).
fn register(read: impl Fn(&launch::ThreadState) -> u32) -> u32 {
    current().map_or(0, read)
}

runtime_functions! {
    sfu(op: u32, a: u64, b: u64) -> u64 {
        match kernel_abi::SfuOp::from_code(op) {
            Some(op) => crate::sfu::evaluate(op, a, b),
            None => {
                eprintln!(
                    "cuda-oxide CPU device: the kernel asked for special function {op}, which this \
                     runtime does not know (the binary is newer than its cuda-oxide); the launch fails"
                );
                stop_thread();
                0
            }
        }
    }
    race_load(address: usize, size: u64, site: usize) {
        race::access(address, size as usize, site, race::AccessKind::Read)
    }
    race_store(address: usize, size: u64, site: usize) {
        race::access(address, size as usize, site, race::AccessKind::Write)
    }
    race_atomic(address: usize, size: u64) {
        race::access(address, size as usize, 0, race::AccessKind::Atomic)
    }
    race_at(site: usize) {
        if let Some(state) = current() {
            state.site.set(site);
        }
    }
    read_ptx_sreg_tid_x() -> u32 { register(|t| t.tid[0]) }
    read_ptx_sreg_tid_y() -> u32 { register(|t| t.tid[1]) }
    read_ptx_sreg_tid_z() -> u32 { register(|t| t.tid[2]) }
    read_ptx_sreg_ctaid_x() -> u32 { register(|t| t.ctaid[0]) }
    read_ptx_sreg_ctaid_y() -> u32 { register(|t| t.ctaid[1]) }
    read_ptx_sreg_ctaid_z() -> u32 { register(|t| t.ctaid[2]) }
    read_ptx_sreg_ntid_x() -> u32 { register(|t| t.ntid[0]) }
    read_ptx_sreg_ntid_y() -> u32 { register(|t| t.ntid[1]) }
    read_ptx_sreg_ntid_z() -> u32 { register(|t| t.ntid[2]) }
    read_ptx_sreg_nctaid_x() -> u32 { register(|t| t.nctaid[0]) }
    read_ptx_sreg_nctaid_y() -> u32 { register(|t| t.nctaid[1]) }
    read_ptx_sreg_nctaid_z() -> u32 { register(|t| t.nctaid[2]) }
    read_ptx_sreg_laneid() -> u32 { register(|t| t.linear_tid() % 32) }
    read_ptx_sreg_warpid() -> u32 { register(|t| t.linear_tid() / 32) }
    read_ptx_sreg_nwarpid() -> u32 { 64 }
    read_ptx_sreg_smid() -> u32 { 0 }
    read_ptx_sreg_nsmid() -> u32 { 1 }
    read_ptx_sreg_clock() -> u32 { nanoseconds() as u32 }
    read_ptx_sreg_clock64() -> u64 { nanoseconds() }
    read_ptx_sreg_globaltimer() -> u64 { nanoseconds() }
    nanosleep(_nanoseconds: u32) {}
    mbarrier_init(addr: u64, count: u32) { mbarrier::init(addr, count) }
    mbarrier_inval(_addr: u64) {}
    mbarrier_arrive(addr: u64) -> u64 { arrive(addr) }
    mbarrier_arrive_expect_tx(addr: u64, bytes: u32) -> u64 {
        mbarrier::expect_tx(addr, bytes);
        arrive(addr)
    }
    mbarrier_expect_tx(addr: u64, bytes: u32) { mbarrier::expect_tx(addr, bytes) }
    mbarrier_try_wait_parity(addr: u64, parity: u32) -> bool { wait_for_phase(addr, parity) }
    mbarrier_test_wait_parity(addr: u64, parity: u32) -> bool { wait_for_phase(addr, parity) }
    fence_mbarrier_init() {}
    barrier0() { barrier(false); }
    barrier0_popc(vote: i32) -> i32 { barrier(vote != 0) as i32 }
    barrier0_and(vote: i32) -> i32 { (barrier(vote != 0) == block_size()) as i32 }
    barrier0_or(vote: i32) -> i32 { (barrier(vote != 0) > 0) as i32 }
    trap() { stop_thread(); }
    read_ptx_sreg_lanemask_eq() -> u32 { 1 << lane() }
    read_ptx_sreg_lanemask_lt() -> u32 { (1u32 << lane()) - 1 }
    read_ptx_sreg_lanemask_le() -> u32 { u32::MAX >> (31 - lane()) }
    read_ptx_sreg_lanemask_gt() -> u32 { u32::MAX.checked_shl(lane() + 1).unwrap_or(0) }
    read_ptx_sreg_lanemask_ge() -> u32 { u32::MAX << lane() }
    activemask() -> u32 { warp_op(W::Active, FULL, 0, 0) as u32 }
    bar_warp_sync() { warp_op(W::Sync, FULL, 0, 0); }
    bar_warp_sync_mask(mask: u32) { warp_op(W::Sync, mask, 0, 0); }
    shfl_sync_idx_i32(v: u32, lane: u32) -> u32 { warp_op(W::ShuffleIdx, FULL, v.into(), lane) as u32 }
    shfl_sync_bfly_i32(v: u32, lane: u32) -> u32 { warp_op(W::ShuffleXor, FULL, v.into(), lane) as u32 }
    shfl_sync_down_i32(v: u32, lane: u32) -> u32 { warp_op(W::ShuffleDown, FULL, v.into(), lane) as u32 }
    shfl_sync_up_i32(v: u32, lane: u32) -> u32 { warp_op(W::ShuffleUp, FULL, v.into(), lane) as u32 }
    shfl_sync_idx_i32_mask(m: u32, v: u32, lane: u32) -> u32 { warp_op(W::ShuffleIdx, m, v.into(), lane) as u32 }
    shfl_sync_bfly_i32_mask(m: u32, v: u32, lane: u32) -> u32 { warp_op(W::ShuffleXor, m, v.into(), lane) as u32 }
    shfl_sync_down_i32_mask(m: u32, v: u32, lane: u32) -> u32 { warp_op(W::ShuffleDown, m, v.into(), lane) as u32 }
    shfl_sync_up_i32_mask(m: u32, v: u32, lane: u32) -> u32 { warp_op(W::ShuffleUp, m, v.into(), lane) as u32 }
    vote_all_sync(p: bool) -> bool { warp_op(W::All, FULL, p.into(), 0) != 0 }
    vote_any_sync(p: bool) -> bool { warp_op(W::Any, FULL, p.into(), 0) != 0 }
    vote_uni_sync(p: bool) -> bool { warp_op(W::Uni, FULL, p.into(), 0) != 0 }
    vote_ballot_sync(p: bool) -> u32 { warp_op(W::Ballot, FULL, p.into(), 0) as u32 }
    vote_all_sync_mask(m: u32, p: bool) -> bool { warp_op(W::All, m, p.into(), 0) != 0 }
    vote_any_sync_mask(m: u32, p: bool) -> bool { warp_op(W::Any, m, p.into(), 0) != 0 }
    vote_uni_sync_mask(m: u32, p: bool) -> bool { warp_op(W::Uni, m, p.into(), 0) != 0 }
    vote_ballot_sync_mask(m: u32, p: bool) -> u32 { warp_op(W::Ballot, m, p.into(), 0) as u32 }
    match_any_sync_i32(v: u32) -> u32 { warp_op(W::MatchAny, FULL, v.into(), 0) as u32 }
    match_any_sync_i64(v: u64) -> u32 { warp_op(W::MatchAny, FULL, v, 0) as u32 }
    match_all_sync_i32(v: u32) -> bool { warp_op(W::MatchAll, FULL, v.into(), 0) != 0 }
    match_all_sync_i64(v: u64) -> bool { warp_op(W::MatchAll, FULL, v, 0) != 0 }
    match_any_sync_i32_mask(m: u32, v: u32) -> u32 { warp_op(W::MatchAny, m, v.into(), 0) as u32 }
    match_any_sync_i64_mask(m: u32, v: u64) -> u32 { warp_op(W::MatchAny, m, v, 0) as u32 }
    match_all_sync_i32_mask(m: u32, v: u32) -> bool { warp_op(W::MatchAll, m, v.into(), 0) != 0 }
    match_all_sync_i64_mask(m: u32, v: u64) -> bool { warp_op(W::MatchAll, m, v, 0) != 0 }
    redux_sync_add(v: u32) -> u32 { warp_op(W::AddU32, FULL, v.into(), 0) as u32 }
    redux_sync_add_i32(v: u32) -> u32 { warp_op(W::AddU32, FULL, v.into(), 0) as u32 }
    redux_sync_umin(v: u32) -> u32 { warp_op(W::MinU32, FULL, v.into(), 0) as u32 }
    redux_sync_umax(v: u32) -> u32 { warp_op(W::MaxU32, FULL, v.into(), 0) as u32 }
    redux_sync_min(v: u32) -> u32 { warp_op(W::MinI32, FULL, v.into(), 0) as u32 }
    redux_sync_max(v: u32) -> u32 { warp_op(W::MaxI32, FULL, v.into(), 0) as u32 }
    redux_sync_and(v: u32) -> u32 { warp_op(W::And, FULL, v.into(), 0) as u32 }
    redux_sync_or(v: u32) -> u32 { warp_op(W::Or, FULL, v.into(), 0) as u32 }
    redux_sync_xor(v: u32) -> u32 { warp_op(W::Xor, FULL, v.into(), 0) as u32 }
    redux_sync_add_mask(m: u32, v: u32) -> u32 { warp_op(W::AddU32, m, v.into(), 0) as u32 }
    redux_sync_add_i32_mask(m: u32, v: u32) -> u32 { warp_op(W::AddU32, m, v.into(), 0) as u32 }
    redux_sync_umin_mask(m: u32, v: u32) -> u32 { warp_op(W::MinU32, m, v.into(), 0) as u32 }
    redux_sync_umax_mask(m: u32, v: u32) -> u32 { warp_op(W::MaxU32, m, v.into(), 0) as u32 }
    redux_sync_min_mask(m: u32, v: u32) -> u32 { warp_op(W::MinI32, m, v.into(), 0) as u32 }
    redux_sync_max_mask(m: u32, v: u32) -> u32 { warp_op(W::MaxI32, m, v.into(), 0) as u32 }
    redux_sync_and_mask(m: u32, v: u32) -> u32 { warp_op(W::And, m, v.into(), 0) as u32 }
    redux_sync_or_mask(m: u32, v: u32) -> u32 { warp_op(W::Or, m, v.into(), 0) as u32 }
    redux_sync_xor_mask(m: u32, v: u32) -> u32 { warp_op(W::Xor, m, v.into(), 0) as u32 }
    elect_sync() -> bool { warp_op(W::Elect, FULL, 0, 0) != 0 }
    elect_sync_mask(m: u32) -> bool { warp_op(W::Elect, m, 0, 0) != 0 }
    fence_sc_gpu() { std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst) }
    fence_sc_cta() { std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst) }
    fence_sc_sys() { std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst) }
    malloc(bytes: usize) -> *mut c_void { device_malloc(bytes) }
    // SAFETY: device code passes `gpu_printf!`'s format string and argument slots.
    vprintf(format: *const std::ffi::c_char, args: *const u64) -> i32 { unsafe { crate::printf::vprintf(format, args) } }
    free(ptr: *mut c_void) { device_free(ptr) }
}

/// The running thread's lane in its warp.
fn lane() -> u32 {
    register(|t| t.linear_tid() % 32)
}

/// Waits at warp operation `kind` over the lanes of `mask` with `value`; its result.
fn warp_op(kind: W, mask: u32, value: u64, lane: u32) -> u64 {
    let Some(state) = current() else { return value };
    let mask = mask & state.warp_lanes();
    state.warp_op.set(Some(WarpOp {
        kind,
        mask,
        value,
        lane,
    }));
    launch::stop(Stop::Warp);
    state.warp_result.get()
}

/// An arrival at the barrier at `addr` (the race detector learns the order it gives).
fn arrive(addr: u64) -> u64 {
    let (token, completed) = mbarrier::arrive(addr);
    race::mbarrier_arrive(addr, completed);
    token
}

/// Whether the phase of parity `parity` of the barrier at `addr` has completed; when it has
/// not, the block's other threads run first (a thread polls for a phase in a loop).
fn wait_for_phase(addr: u64, parity: u32) -> bool {
    let mut completed = mbarrier::phase_completed(addr, parity);
    if !completed {
        launch::stop(Stop::Poll);
        completed = mbarrier::phase_completed(addr, parity);
    }
    if completed {
        race::mbarrier_waited(addr);
    }
    completed
}

/// Threads in the running block.
fn block_size() -> u32 {
    register(|t| t.ntid[0] * t.ntid[1] * t.ntid[2])
}

/// Nanoseconds since the process's first clock read.
fn nanoseconds() -> u64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START
        .get_or_init(std::time::Instant::now)
        .elapsed()
        .as_nanos() as u64
}

/// Waits at the block's barrier with `vote`; the number of threads that voted true.
fn barrier(vote: bool) -> u32 {
    let Some(state) = current() else { return 0 };
    state.barrier_vote.set(vote);
    launch::stop(Stop::Barrier);
    state.barrier_count.get()
}

/// Stops the running thread for good: the launch fails, as a `trap` makes it on a GPU.
fn stop_thread() {
    launch::stop(Stop::Trap);
    // A thread stopped is never resumed; outside a kernel there is nothing to stop.
    std::process::abort();
}

/// Where a kernel calls a function the CPU device does not provide: says which, and traps.
pub(crate) extern "C" fn missing(name: *const u8, len: u64) {
    // SAFETY: the image passes the bytes of the slot's name.
    let name = unsafe { std::slice::from_raw_parts(name, len as usize) };
    let name = String::from_utf8_lossy(name);
    let name = name.strip_prefix("__oxide_cpu_").unwrap_or(&name);
    let what = if NOT_ON_THE_CPU.iter().any(|prefix| name.starts_with(prefix)) {
        "a GPU operation the CPU device does not emulate yet"
    } else {
        "a function the CPU device does not provide"
    };
    let kernel = launch::kernel_name().map_or("the kernel".to_owned(), |k| format!("kernel `{k}`"));
    eprintln!(
        "cuda-oxide CPU device: {kernel} called `{name}`, {what} (see docs/cpu.md); the launch \
         fails"
    );
    stop_thread();
}

/// The device heap, within the context's heap limit. Under the race detector the block's
/// new memory has no history: what earlier owners did with it was ordered before its reuse
/// by the allocator.
fn device_malloc(bytes: usize) -> *mut c_void {
    let memory = crate::memory::heap_allocate(bytes);
    if !memory.is_null() {
        race::allocated(memory as usize, bytes);
    }
    memory.cast()
}

fn device_free(ptr: *mut c_void) {
    crate::memory::heap_free(ptr.cast())
}

/// The rows of the GPU intrinsic table the CPU device does not run (yet): a kernel that
/// reaches one stops, naming it.
pub(crate) const NOT_ON_THE_CPU: &[&str] = &[
    "read_ptx_sreg_gridid",
    "cvta_to_shared_u32",
    "mbarrier_arrive_cluster",
    "fence_proxy_",
    "tma_",
    "bulk_",
    "prefetch_tensormap",
    "wgmma_",
    "read_ptx_sreg_cluster",
    "barrier_cluster_",
    "mapa_u64",
    "fence_acq_rel_cluster",
    "setmaxnreg_",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_intrinsic_runs_on_the_cpu_or_is_listed_as_not_running_there() {
        let mut unlisted = Vec::new();
        let mut listed_but_present = Vec::new();
        for intrinsic in dialect_nvvm::table::ALL {
            if matches!(intrinsic.lowering, dialect_nvvm::Lowering::Fence(_)) {
                continue;
            }
            let listed = NOT_ON_THE_CPU
                .iter()
                .any(|prefix| intrinsic.name.starts_with(prefix));
            match (function(intrinsic.name).is_some(), listed) {
                (false, false) => unlisted.push(intrinsic.name),
                (true, true) => listed_but_present.push(intrinsic.name),
                _ => {}
            }
        }
        assert!(unlisted.is_empty(), "no runtime function: {unlisted:?}");
        assert!(
            listed_but_present.is_empty(),
            "listed yet present: {listed_but_present:?}"
        );
    }
}
