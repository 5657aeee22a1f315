//! Asynchronous barriers in shared memory (`mbarrier`, sm_90): the completion mechanism of
//! the tensor memory accelerator ([crate::tma]) and of producer/consumer pipelines.
//!
//! A barrier counts *arrivals* (and, optionally, *transaction bytes* that asynchronous copies
//! deliver) in *phases*: a phase completes when the expected number of threads have arrived
//! and every expected byte has landed; the barrier then starts the next phase. Threads wait for
//! a phase by its *parity* (0, 1, 0, 1, ...).
//!
//! The typed API makes the common mistakes hard:
//! - storage ([Barrier]) and use ([BarrierHandle]) are different types, and the only way to a
//!   handle is [Barrier::init], which initialises the barrier and synchronises the block, so
//!   no thread can wait on an uninitialised barrier;
//! - each handle tracks the parity of the phase its thread waits for next: [BarrierHandle::wait]
//!   waits for that phase and moves on to the next, so a thread cannot wait on the wrong one
//!   (a thread that leaves out a phase says so with [BarrierHandle::skip_phase]).
//!
//! ```ignore
//! static mut BAR: SharedArray<Barrier, 1> = SharedArray::UNINIT;
//! // Every thread of the block: thread 0 initialises, then the block synchronises.
//! let mut bar = unsafe { Barrier::init((&raw mut BAR).cast(), thread::blockDim_x()) };
//! let _ = bar.arrive();
//! bar.wait();          // phase 0 complete: every thread arrived
//! ```
//!
//! The `raw` functions are the instructions themselves, on generic addresses.

use crate::intrinsic::{stubs, unsafe_stubs};

/// The instructions, on the generic (`u64`) address of an 8-byte aligned shared-memory word.
pub mod raw {
    use super::*;

    unsafe_stubs! { "mbarrier::raw";
        /// Initialises the barrier at `addr` for `count` arrivals per phase, in phase 0
        /// (`mbarrier.init.b64`; sm_80). Intrinsic.
        ///
        /// # Safety
        /// `addr` is the generic address of 8 bytes of shared memory, aligned to 8, that no
        /// other thread uses as a barrier meanwhile.
        pub unsafe fn init(addr: u64, count: u32);
        /// Invalidates the barrier at `addr` (`mbarrier.inval.b64`; sm_80). Intrinsic.
        ///
        /// # Safety
        /// `addr` is an initialised barrier that no thread uses any more.
        pub unsafe fn inval(addr: u64);
        /// Arrives at the barrier at `addr`; returns the state of the phase arrived at
        /// (`mbarrier.arrive.b64`, release at CTA scope; sm_80). Intrinsic.
        ///
        /// # Safety
        /// `addr` is an initialised barrier.
        pub unsafe fn arrive(addr: u64) -> u64;
        /// Arrives at the barrier of block `rank` of the cluster that sits where `addr` (a
        /// barrier of this block) sits in this block (`mapa.shared::cluster` +
        /// `mbarrier.arrive.shared::cluster.b64`, release at CTA scope; sm_90). It orders
        /// what the barrier's waiters need ordered when what they wait for is this thread's
        /// shared-memory reads (a pipeline stage released to a TMA producer); data written
        /// for the other block needs a cluster fence ([crate::cluster::fence]) first.
        /// Intrinsic.
        ///
        /// # Safety
        /// The barrier is initialised in block `rank` (a cluster barrier after the
        /// initialisation orders that), and that block has not exited.
        pub unsafe fn arrive_cluster(addr: u64, rank: u32);
        /// Expects `tx_bytes` more bytes in the current phase, then arrives
        /// (`mbarrier.arrive.expect_tx.b64`; sm_90). Intrinsic.
        ///
        /// # Safety
        /// `addr` is an initialised barrier.
        pub unsafe fn arrive_expect_tx(addr: u64, tx_bytes: u32) -> u64;
        /// Expects `tx_bytes` more bytes in the current phase, without arriving
        /// (`mbarrier.expect_tx.relaxed.cta.b64`; sm_90). Intrinsic.
        ///
        /// # Safety
        /// `addr` is an initialised barrier.
        pub unsafe fn expect_tx(addr: u64, tx_bytes: u32);
        /// Whether the phase of parity `parity` has completed, waiting a while (a time the
        /// hardware chooses) for it (`mbarrier.try_wait.parity.b64`, acquire at CTA scope;
        /// sm_90). Intrinsic.
        ///
        /// # Safety
        /// `addr` is an initialised barrier.
        pub unsafe fn try_wait_parity(addr: u64, parity: u32) -> bool;
        /// Whether the phase of parity `parity` has completed, without waiting
        /// (`mbarrier.test_wait.parity.b64`; sm_80). Intrinsic.
        ///
        /// # Safety
        /// `addr` is an initialised barrier.
        pub unsafe fn test_wait_parity(addr: u64, parity: u32) -> bool;
    }

    stubs! { "mbarrier::raw";
        /// Makes this thread's barrier initialisations visible to the other threads of the
        /// cluster and to the asynchronous proxy (`fence.mbarrier_init.release.cluster`;
        /// sm_90). Intrinsic.
        pub fn fence_init();
    }
}

/// The storage of one asynchronous barrier: 8 bytes of shared memory. Declare barriers as
/// `static mut BARS: SharedArray<Barrier, N> = SharedArray::UNINIT;` and use them through the
/// [BarrierHandle] that [Barrier::init] returns.
#[repr(C, align(8))]
pub struct Barrier {
    _word: u64,
}

impl Barrier {
    /// Initialises the barrier at `slot` for `arrivals` arrivals per phase, and returns this
    /// thread's handle to it, waiting for phase 0.
    ///
    /// Every thread of the block must call it together (it ends with `syncthreads`): thread
    /// (0, 0, 0) initialises the barrier and fences the initialisation (for the other threads,
    /// the asynchronous proxy and the cluster), then the block synchronises, so every thread
    /// that gets a handle sees an initialised barrier. Needs sm_90.
    ///
    /// # Safety
    /// `slot` points to a [Barrier] in shared memory (an element of a `SharedArray<Barrier,
    /// N>`) that is not in use as a barrier.
    #[inline]
    pub unsafe fn init(slot: *mut Barrier, arrivals: u32) -> BarrierHandle {
        let addr = slot as u64;
        let first = crate::thread::threadIdx_x() == 0
            && crate::thread::threadIdx_y() == 0
            && crate::thread::threadIdx_z() == 0;
        if first {
            // SAFETY: the caller gives shared memory that is not in use as a barrier.
            unsafe { raw::init(addr, arrivals) };
            raw::fence_init();
        }
        crate::sync::syncthreads();
        BarrierHandle { addr, parity: 0 }
    }
}

/// What [BarrierHandle::arrive] returns: the state of the phase arrived at.
#[must_use = "an arrival token says which phase the arrival counted in"]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrivalToken(pub u64);

/// One thread's handle to an initialised barrier: its address, and the parity of the phase
/// this thread waits for next. Obtained from [Barrier::init] only; not `Clone`, since two
/// handles of one thread would disagree about the phase.
pub struct BarrierHandle {
    addr: u64,
    parity: u32,
}

impl BarrierHandle {
    /// The generic address of the barrier (for the `raw` functions and inline PTX).
    #[inline]
    pub fn address(&self) -> u64 {
        self.addr
    }

    /// The parity (0 or 1) of the phase this thread waits for next.
    #[inline]
    pub fn parity(&self) -> u32 {
        self.parity
    }

    /// Arrives at the barrier (release: this thread's earlier writes are visible to the threads
    /// that see the phase complete).
    #[inline]
    pub fn arrive(&self) -> ArrivalToken {
        // SAFETY: a handle exists only for an initialised barrier.
        ArrivalToken(unsafe { raw::arrive(self.addr) })
    }

    /// Tells the barrier to expect `tx_bytes` more bytes in the current phase (from
    /// asynchronous copies that complete on it), then arrives.
    #[inline]
    pub fn arrive_expect_tx(&self, tx_bytes: u32) -> ArrivalToken {
        // SAFETY: a handle exists only for an initialised barrier.
        ArrivalToken(unsafe { raw::arrive_expect_tx(self.addr, tx_bytes) })
    }

    /// Tells the barrier to expect `tx_bytes` more bytes in the current phase, without
    /// arriving.
    #[inline]
    pub fn expect_tx(&self, tx_bytes: u32) {
        // SAFETY: a handle exists only for an initialised barrier.
        unsafe { raw::expect_tx(self.addr, tx_bytes) }
    }

    /// Whether the phase this thread waits for has completed (waiting a short while for it),
    /// without moving on to the next phase.
    #[inline]
    pub fn try_wait(&self) -> bool {
        // SAFETY: a handle exists only for an initialised barrier.
        unsafe { raw::try_wait_parity(self.addr, self.parity) }
    }

    /// Whether the phase this thread waits for has completed, without waiting.
    #[inline]
    pub fn test_wait(&self) -> bool {
        // SAFETY: a handle exists only for an initialised barrier.
        unsafe { raw::test_wait_parity(self.addr, self.parity) }
    }

    /// Waits until the phase this thread waits for has completed (acquire: the writes released
    /// by the arrivals, and the bytes of the copies it expected, are then visible), then moves
    /// this handle on to the next phase.
    #[inline]
    pub fn wait(&mut self) {
        while !self.try_wait() {}
        self.parity ^= 1;
    }

    /// Arrives, then waits for the phase to complete ([arrive](Self::arrive), then
    /// [wait](Self::wait)).
    #[inline]
    pub fn arrive_and_wait(&mut self) {
        let _ = self.arrive();
        self.wait();
    }

    /// Moves this handle on to the next phase without waiting: for a thread that does not wait
    /// for every phase (a producer that only arrives), to keep its parity right.
    #[inline]
    pub fn skip_phase(&mut self) {
        self.parity ^= 1;
    }

    /// Makes this handle's next [wait](Self::wait) pass at once: it then waits for the phase
    /// before the current one, which the hardware counts as complete. For the "slot is free"
    /// barriers of a pipeline, whose slots start out free: the producer's first wait on each
    /// must not block, its second waits for the consumers' first release.
    #[inline]
    pub fn start_released(mut self) -> Self {
        self.parity ^= 1;
        self
    }

    /// Invalidates the barrier, so that its shared memory can hold something else.
    ///
    /// # Safety
    /// No thread uses the barrier any more (call it from one thread, after a block barrier).
    #[inline]
    pub unsafe fn invalidate(self) {
        // SAFETY: the caller guarantees that the barrier is no longer in use.
        unsafe { raw::inval(self.addr) }
    }
}
