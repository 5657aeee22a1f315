//! Asynchronous barriers (`mbarrier`) on the CPU device. The barrier's 8 bytes of shared memory
//! hold its state in a layout of the CPU device's own (the GPU's is not documented): the
//! arrivals still missing in the current phase (bits 0-19), the arrivals each phase expects
//! (bits 20-39), the current phase's parity (bit 40) and the transaction bytes it still
//! expects (bits 41-63). A phase completes when its last arrival comes and no byte is
//! expected; the barrier then starts the next phase. No asynchronous copy delivers bytes on
//! the CPU device (TMA is not emulated), so a phase that expects bytes never completes.
//!
//! A thread waiting for a phase (`try_wait`, `test_wait` that fails) lets the block's other
//! threads run before it polls again; a block whose running threads all poll without any
//! barrier changing stops as deadlocked ([crate::launch]).

use std::cell::Cell;

const COUNT_BITS: u32 = 20;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
const PARITY: u64 = 1 << 40;
const TX_SHIFT: u32 = 41;

thread_local! {
    /// Changes of any barrier's state on this worker: the scheduler's evidence of progress.
    static CHANGES: Cell<u64> = const { Cell::new(0) };
}

/// How many barrier changes this worker has seen.
pub(crate) fn changes() -> u64 {
    CHANGES.with(Cell::get)
}

/// The state word of the barrier at `addr`.
///
/// # Safety
/// `addr` is the address of a barrier's 8 aligned bytes, which only the block's threads (one
/// running at a time, on this worker) touch.
unsafe fn word(addr: u64) -> *mut u64 {
    addr as usize as *mut u64
}

fn update(addr: u64, change: impl FnOnce(u64) -> u64) -> u64 {
    // SAFETY: as [word] requires: the kernel passes a barrier's address.
    let at = unsafe { word(addr) };
    // SAFETY: as above.
    let before = unsafe { at.read() };
    // SAFETY: as above.
    unsafe { at.write(change(before)) };
    CHANGES.with(|c| c.set(c.get() + 1));
    before
}

/// `mbarrier.init`: `count` arrivals per phase, phase 0.
pub(crate) fn init(addr: u64, count: u32) {
    let count = u64::from(count) & COUNT_MASK;
    update(addr, |_| count | (count << COUNT_BITS));
}

/// Adds `bytes` to the transaction bytes the current phase expects.
pub(crate) fn expect_tx(addr: u64, bytes: u32) {
    update(addr, |state| {
        let expected = (state >> TX_SHIFT) + u64::from(bytes);
        (state & ((1 << TX_SHIFT) - 1)) | (expected << TX_SHIFT)
    });
}

/// `mbarrier.arrive`: one arrival; the phase completes with the last. The token (the state
/// before the arrival), and whether the phase completed.
pub(crate) fn arrive(addr: u64) -> (u64, bool) {
    let before = update(addr, |state| {
        let missing = (state & COUNT_MASK).saturating_sub(1);
        let expected = (state >> COUNT_BITS) & COUNT_MASK;
        if missing == 0 && state >> TX_SHIFT == 0 {
            // The phase completes: the next one starts, expecting every arrival again.
            ((state & !COUNT_MASK) | expected) ^ PARITY
        } else {
            (state & !COUNT_MASK) | missing
        }
    });
    // SAFETY: as [word] requires.
    let after = unsafe { word(addr).read() };
    (before, (before ^ after) & PARITY != 0)
}

/// Whether the phase of parity `parity` has completed: the barrier is in a phase of the other
/// parity.
pub(crate) fn phase_completed(addr: u64, parity: u32) -> bool {
    // SAFETY: as [word] requires.
    let state = unsafe { word(addr).read() };
    (state & PARITY != 0) != (parity & 1 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_completes_with_its_last_arrival_and_the_next_starts() {
        let mut barrier = 0u64;
        let addr = &raw mut barrier as u64;
        init(addr, 3);
        assert!(!phase_completed(addr, 0));
        arrive(addr);
        arrive(addr);
        assert!(!phase_completed(addr, 0));
        arrive(addr);
        assert!(phase_completed(addr, 0));
        assert!(!phase_completed(addr, 1));
        for _ in 0..3 {
            arrive(addr);
        }
        assert!(phase_completed(addr, 1));
        assert!(
            !phase_completed(addr, 0),
            "phase 2 (parity 0) has not completed"
        );
    }

    #[test]
    fn expected_bytes_hold_the_phase() {
        let mut barrier = 0u64;
        let addr = &raw mut barrier as u64;
        init(addr, 1);
        expect_tx(addr, 128);
        arrive(addr);
        assert!(!phase_completed(addr, 0));
    }
}
