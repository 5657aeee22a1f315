//! CUDA graphs of typed launches: record a sequence of kernel launches and copies once, then
//! replay it with one driver call.
//!
//! ```ignore
//! let state = (stream.clone_htod(&input)?, stream.alloc_zeros::<f32>(n)?);
//! let mut graph = Graph::capture(&stream, state, |capture, (x, y)| {
//!     module.scale(capture.stream(), cfg, x, 2.0)?;
//!     module.add(capture.stream(), cfg, &*x, y)
//! })?;
//! for _ in 0..100 {
//!     graph.launch()?;
//! }
//! let y = stream.clone_dtoh(&graph.state().1)?;
//! ```
//!
//! # What keeps replays sound
//!
//! A graph holds device addresses, not borrows: replaying it after one of its buffers was freed
//! would make the GPU write into memory that may belong to something else. So a graph owns the
//! buffers it uses, as its *state* (a tuple of buffers and parameters, or any [`GraphState`]),
//! and checks, after recording and before every replay, that all the device and pinned host
//! memory its launches and copies touch lies inside buffers the state holds; anything else is
//! an [`Error`] that says which launch touched what. Buffers a kernel writes must be held
//! mutably (`CudaSlice`, not `&CudaSlice`).
//!
//! Each replay is ordered like a launch that writes every buffer of the state: it waits for
//! earlier work on them (on any stream, through cudarc's event tracking), and later copies and
//! frees of them wait for it. [`Graph::state`] therefore gives the results of the replays
//! queued so far to any stream's copies.
//!
//! # Updating parameters
//!
//! [`Graph::state_mut`] gives the state to change (a scalar parameter, new buffers); the next
//! launch records the sequence again and asks the driver to update the instantiated graph in
//! place (`cuGraphExecUpdate`), which it does when only parameters changed. When the shape of
//! the sequence changed it is instantiated anew. [`Graph::update`] does this at once and says
//! which happened.
//!
//! # Inside a capture
//!
//! The closure queues work on [`Capture::stream`] through the generated launchers and the
//! `Capture`'s own copy methods. cudarc's copy methods would make the stream wait on events
//! recorded outside the capture, which the driver forbids (the capture then fails with a
//! message saying so); synchronising a stream or an event is not allowed while capturing either.
//! Allocate buffers before capturing.

/// Why recording, updating or replaying failed: a leaf, so that the crate's `Error` can wrap it.
pub(crate) mod error;
/// `Graph::capture` and the replays: instantiation, and the check that the state covers the work.
mod instance;
/// The stream capture, and what it noted of each launch and copy.
pub(crate) mod recording;
/// What a graph owns: the `GraphState` trait and its visitor.
mod state;
/// `state_mut` and `update`: recording again and `cuGraphExecUpdate`.
mod update;

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaStream, sys};

use crate::error::Error;

pub use error::GraphError;
pub use recording::Capture;
pub use state::{GraphState, StateVisitor};
pub use update::Update;

use recording::Op;

type Record<'a, S> = Box<dyn FnMut(&Capture<'_>, &mut S) -> Result<(), Error> + 'a>;

/// An instantiated CUDA graph of typed launches and copies, owning the buffers it uses (its
/// state). See the [module documentation](self).
pub struct Graph<'a, S: GraphState> {
    stream: Arc<CudaStream>,
    side: Arc<CudaStream>,
    state: S,
    recorder: Record<'a, S>,
    exec: sys::CUgraphExec,
    ops: Vec<Op>,
    /// Each kernel of the recording once, for attributing a fault.
    kernels: Vec<&'static str>,
    /// The state changed since the recording: record again before the next launch.
    stale: bool,
    /// The driver's graph handles are not to be used from several threads at once.
    _not_sync: PhantomData<*mut ()>,
}

impl<S: GraphState> Graph<'_, S> {
    /// The state. Copies of its buffers queued now (on any stream, through cudarc) see the
    /// results of the replays queued before; pinned host buffers are read through cudarc's
    /// `as_slice`, which waits for them.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The kernels of the recording, in launch order (a kernel launched twice appears twice).
    pub fn kernels(&self) -> Vec<&'static str> {
        self.ops.iter().filter_map(Op::kernel).collect()
    }

    /// How many launches and copies the recording holds.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the recording holds no work (never true of a graph that was made).
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The stream the graph was captured on and [`Graph::launch`] replays it on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The state, once the graph is dropped (replays still running keep the memory alive:
    /// cudarc orders the buffers' later uses and frees after them).
    pub fn into_state(self) -> S {
        let mut this = std::mem::ManuallyDrop::new(self);
        this.destroy_exec();
        // SAFETY: `this` is never used or dropped again; each field is moved out or dropped
        // exactly once.
        unsafe {
            drop(std::ptr::read(&this.recorder));
            drop(std::ptr::read(&this.stream));
            drop(std::ptr::read(&this.side));
            drop(std::ptr::read(&this.ops));
            drop(std::ptr::read(&this.kernels));
            std::ptr::read(&this.state)
        }
    }
}

impl<S: GraphState> Drop for Graph<'_, S> {
    fn drop(&mut self) {
        self.destroy_exec();
    }
}

impl<S: GraphState> std::fmt::Debug for Graph<'_, S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("kernels", &self.kernels())
            .field("len", &self.len())
            .field("stale", &self.stale)
            .finish_non_exhaustive()
    }
}
