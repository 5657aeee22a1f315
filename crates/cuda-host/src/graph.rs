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

use std::marker::PhantomData;
use std::mem::size_of;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{self, CUdeviceptr};
use cudarc::driver::{
    CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, HostSlice, PinnedHostSlice,
    ValidAsZeroBits, result,
};

use crate::error::{DriverFailure, Error, is_fault};
use crate::inflight;
use crate::module::{classify, fault};
use crate::param::ByValue;
use crate::views::{DeviceSliceArg, DeviceSliceMutArg};

/// Failures of recording, updating and replaying graphs.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// Capture was asked of the legacy default stream, which the driver cannot capture.
    #[error(
        "the default stream cannot be captured into a CUDA graph: capture on a stream made \
         with `ctx.new_stream()`"
    )]
    DefaultStream,

    /// A driver call of the capture failed, or the capture was invalidated.
    #[error("recording a CUDA graph failed during {during}: {source}\nhint: {hint}", hint = capture_hint(source))]
    Capture {
        /// What was being recorded or done.
        during: String,
        /// The driver's error.
        #[source]
        source: DriverFailure,
    },

    /// The closure queued no launch and no copy.
    #[error(
        "the graph's recording queued no work: launch kernels on `capture.stream()`, or copy \
         with the `Capture`'s methods, inside the closure"
    )]
    Empty,

    /// Recorded work touches memory that the graph's state does not hold.
    #[error(
        "{op} in the graph {access} {bytes} bytes of {space} memory at {start:#x}, which no \
         buffer of the graph's state holds{mutably}: {hint}",
        access = if *writes { "writes" } else { "reads" },
        space = if *host { "pinned host" } else { "device" },
        mutably = if *writes { " mutably" } else { "" },
    )]
    NotInState {
        /// The launch or copy: "kernel `name`", "a device-to-device copy", ...
        op: String,
        /// Whether it writes the memory.
        writes: bool,
        /// Whether the memory is pinned host memory (else device memory).
        host: bool,
        /// The first address.
        start: u64,
        /// The size in bytes.
        bytes: u64,
        /// What to do about it.
        hint: &'static str,
    },

    /// A recorded copy between buffers of different lengths.
    #[error(
        "{op} in a graph copies {src} elements into {dst}: give both sides the same length \
         (a view of the longer one: `buffer.slice(..n)`)"
    )]
    CopyLengths {
        /// Which copy.
        op: &'static str,
        /// Elements of the source.
        src: usize,
        /// Elements of the destination.
        dst: usize,
    },
}

fn capture_hint(source: &DriverFailure) -> &'static str {
    use sys::CUresult::*;
    match source.0 {
        CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
        | CUDA_ERROR_STREAM_CAPTURE_ISOLATION
        | CUDA_ERROR_STREAM_CAPTURE_UNJOINED
        | CUDA_ERROR_CAPTURED_EVENT => {
            "inside a capture, queue work only through the generated launchers and the \
             `Capture`'s copy methods on `capture.stream()`: cudarc's own copies wait on events \
             recorded outside the capture, which the driver forbids"
        }
        CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED | CUDA_ERROR_STREAM_CAPTURE_IMPLICIT => {
            "a call inside the capture is not allowed while a stream is being captured \
             (synchronising, querying, allocating with cuMemAlloc, or using the legacy default \
             stream): do it before or after capturing"
        }
        CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD => {
            "end the capture on the thread that began it: record the whole sequence inside \
             the closure"
        }
        _ => "see the driver's message above",
    }
}

/// One range of memory that recorded work touches, or that a graph's state holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Access {
    start: u64,
    bytes: u64,
    /// Pinned host memory (a copy's host side), else device memory.
    host: bool,
    /// Written (for a state's buffer: held mutably, so writes are allowed).
    writes: bool,
}

impl Access {
    pub(crate) fn device(ptr: CUdeviceptr, bytes: usize, writes: bool) -> Self {
        Access {
            start: ptr,
            bytes: bytes as u64,
            host: false,
            writes,
        }
    }

    fn host(ptr: *const u8, bytes: usize, writes: bool) -> Self {
        Access {
            start: ptr as u64,
            bytes: bytes as u64,
            host: true,
            writes,
        }
    }

    /// Whether `self` (recorded work) lies inside `held` (a buffer of the state).
    fn within(&self, held: &Access) -> bool {
        self.host == held.host
            && (held.writes || !self.writes)
            && self.start >= held.start
            && self
                .start
                .checked_add(self.bytes)
                .is_some_and(|end| end <= held.start.saturating_add(held.bytes))
    }
}

/// What one operation of a recording is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum OpKind {
    /// A launch of the named kernel.
    Kernel(&'static str),
    /// A copy or memset, described for messages ("a host-to-device copy").
    Copy(&'static str),
}

/// One launch or copy of a recording, and the memory it touches.
#[derive(Clone, Debug)]
struct Op {
    kind: OpKind,
    accesses: Vec<Access>,
}

impl Op {
    fn kernel(&self) -> Option<&'static str> {
        match self.kind {
            OpKind::Kernel(name) => Some(name),
            OpKind::Copy(_) => None,
        }
    }

    fn describe(&self) -> String {
        match self.kind {
            OpKind::Kernel(name) => format!("kernel `{name}`"),
            OpKind::Copy(what) => what.to_owned(),
        }
    }
}

/// What a capture in progress has recorded, shared with the launches queued into it.
pub(crate) struct Recording {
    /// A stream that is not being captured, on which buffers are located (cudarc's event
    /// tracking waits and records there, outside the capture).
    side: Arc<CudaStream>,
    ops: Mutex<Vec<Op>>,
}

impl Recording {
    pub(crate) fn side_stream(&self) -> &CudaStream {
        &self.side
    }

    fn push(&self, op: Op) {
        self.ops
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(op);
    }

    /// Notes a kernel launch recorded into the graph.
    pub(crate) fn kernel(&self, name: &'static str, accesses: Vec<Access>) {
        self.push(Op {
            kind: OpKind::Kernel(name),
            accesses,
        });
    }
}

/// Streams being captured by a [`Graph`], so that launches on them locate buffers outside the
/// capture. Checked on every launch only while a capture is active.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
type Registry = Vec<((usize, usize), Arc<Recording>)>;
static RECORDINGS: Mutex<Registry> = Mutex::new(Vec::new());

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    RECORDINGS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn stream_key(stream: &CudaStream) -> (usize, usize) {
    (
        stream.context().cu_ctx() as usize,
        stream.cu_stream() as usize,
    )
}

/// The graph recording `stream`'s work, if one is.
pub(crate) fn recording_on(stream: &CudaStream) -> Option<Arc<Recording>> {
    if ACTIVE.load(Ordering::Acquire) == 0 {
        return None;
    }
    let key = stream_key(stream);
    registry()
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, recording)| Arc::clone(recording))
}

/// A launch that the driver refused while its stream was being captured.
pub(crate) fn capture_failure(kernel: &'static str, source: DriverFailure) -> Error {
    Error::Graph(GraphError::Capture {
        during: format!("the launch of kernel `{kernel}`"),
        source,
    })
}

/// A capture in progress on a stream: ends it (and forgets the stream) when dropped, also when
/// the recording closure fails or panics.
struct CaptureSession<'s> {
    stream: &'s CudaStream,
    key: (usize, usize),
    ended: bool,
}

impl<'s> CaptureSession<'s> {
    fn begin(stream: &'s CudaStream, recording: Arc<Recording>) -> Result<Self, Error> {
        stream
            .context()
            .bind_to_thread()
            .map_err(|e| classify(e, "binding the context to this thread"))?;
        let key = stream_key(stream);
        {
            let mut registry = registry();
            registry.push((key, recording));
            ACTIVE.fetch_add(1, Ordering::AcqRel);
        }
        let mut session = CaptureSession {
            stream,
            key,
            ended: true,
        };
        // SAFETY: the stream is valid for as long as `stream` is borrowed. Thread-local mode:
        // this thread may not make calls that could synchronise with the capture, other
        // threads are not affected.
        unsafe {
            result::stream::begin_capture(
                stream.cu_stream(),
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        }
        .map_err(|e| capture_error("cuStreamBeginCapture", e))?;
        session.ended = false;
        Ok(session)
    }

    /// Ends the capture; the graph it recorded, if the driver made one.
    fn end(mut self) -> Result<sys::CUgraph, Error> {
        self.ended = true;
        // SAFETY: this stream's capture was begun by `begin`, on this thread.
        unsafe { result::stream::end_capture(self.stream.cu_stream()) }
            .map_err(|e| capture_error("cuStreamEndCapture", e))
    }
}

impl Drop for CaptureSession<'_> {
    fn drop(&mut self) {
        if !self.ended {
            // SAFETY: as in `end`; the graph of an abandoned capture is not wanted.
            if let Ok(graph) = unsafe { result::stream::end_capture(self.stream.cu_stream()) }
                && !graph.is_null()
            {
                // SAFETY: the graph was just returned by the driver and is used nowhere else.
                let _ = unsafe { result::graph::destroy(graph) };
            }
        }
        let mut registry = registry();
        if let Some(index) = registry.iter().position(|(k, _)| *k == self.key) {
            registry.swap_remove(index);
            ACTIVE.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

fn capture_error(call: &'static str, error: cudarc::driver::DriverError) -> Error {
    let source = DriverFailure::from(error);
    if is_fault(&source) {
        fault(source, None)
    } else {
        Error::Graph(GraphError::Capture {
            during: format!("`{call}`"),
            source,
        })
    }
}

/// The stream being captured, and the copies a recording may queue on it. Given to the closure
/// of [`Graph::capture`].
pub struct Capture<'c> {
    stream: &'c CudaStream,
    recording: &'c Recording,
}

impl Capture<'_> {
    /// The stream being captured: pass it to the generated launchers.
    pub fn stream(&self) -> &CudaStream {
        self.stream
    }

    fn record_copy(&self, what: &'static str, accesses: Vec<Access>) {
        self.recording.push(Op {
            kind: OpKind::Copy(what),
            accesses,
        });
    }

    fn copy_result(
        &self,
        what: &'static str,
        result: Result<(), cudarc::driver::DriverError>,
    ) -> Result<(), Error> {
        result.map_err(|e| {
            Error::Graph(GraphError::Capture {
                during: format!("recording {what}"),
                source: e.into(),
            })
        })
    }

    /// Records a copy from one device buffer (or view) into another of the same length.
    pub fn copy<T>(
        &self,
        src: &impl DeviceSliceArg<T>,
        dst: &mut impl DeviceSliceMutArg<T>,
    ) -> Result<(), Error> {
        const WHAT: &str = "a device-to-device copy";
        lengths_match(WHAT, src.elements(), dst.elements())?;
        let side = self.recording.side_stream();
        let from = src.locate_read(side);
        let to = dst.locate_write(side);
        let bytes = from.len * size_of::<T>();
        self.record_copy(
            WHAT,
            vec![
                Access::device(from.ptr, bytes, false),
                Access::device(to.ptr, bytes, true),
            ],
        );
        // SAFETY: both ranges are `bytes` long, inside live buffers; the stream is valid.
        let copied =
            unsafe { result::memcpy_dtod_async(to.ptr, from.ptr, bytes, self.stream.cu_stream()) };
        self.copy_result(WHAT, copied)
    }

    /// Records a copy from pinned host memory into a device buffer of the same length: every
    /// replay copies what the host memory holds then. Keep the pinned buffer in the state;
    /// write it between replays through [`Graph::state_mut`] or [`Graph::buffers_mut`].
    pub fn copy_from_host<T: DeviceRepr>(
        &self,
        src: &PinnedHostSlice<T>,
        dst: &mut impl DeviceSliceMutArg<T>,
    ) -> Result<(), Error> {
        const WHAT: &str = "a host-to-device copy";
        lengths_match(WHAT, HostSlice::len(src), dst.elements())?;
        let side = self.recording.side_stream();
        // SAFETY: the slice is used with the capture, whose replays the graph orders after
        // host accesses to the pinned buffer (it is part of the state).
        let (host, _done) = unsafe { src.stream_synced_slice(side) };
        let to = dst.locate_write(side);
        let bytes = std::mem::size_of_val(host);
        self.record_copy(
            WHAT,
            vec![
                Access::host(host.as_ptr().cast(), bytes, false),
                Access::device(to.ptr, bytes, true),
            ],
        );
        // SAFETY: `host` and the destination are `bytes` long; the stream is valid.
        let copied = unsafe { result::memcpy_htod_async(to.ptr, host, self.stream.cu_stream()) };
        self.copy_result(WHAT, copied)
    }

    /// Records a copy from a device buffer into pinned host memory of the same length: read
    /// it through [`Graph::state`], which waits for the replays queued so far.
    pub fn copy_to_host<T: DeviceRepr>(
        &self,
        src: &impl DeviceSliceArg<T>,
        dst: &mut PinnedHostSlice<T>,
    ) -> Result<(), Error> {
        const WHAT: &str = "a device-to-host copy";
        lengths_match(WHAT, src.elements(), HostSlice::len(dst))?;
        let side = self.recording.side_stream();
        let from = src.locate_read(side);
        // SAFETY: as in `copy_from_host`.
        let (host, _done) = unsafe { dst.stream_synced_mut_slice(side) };
        let bytes = std::mem::size_of_val(host);
        self.record_copy(
            WHAT,
            vec![
                Access::device(from.ptr, bytes, false),
                Access::host(host.as_ptr().cast(), bytes, true),
            ],
        );
        // SAFETY: as above.
        let copied = unsafe { result::memcpy_dtoh_async(host, from.ptr, self.stream.cu_stream()) };
        self.copy_result(WHAT, copied)
    }

    /// Records setting every byte of a device buffer (or view) to zero.
    pub fn zero<T: ValidAsZeroBits>(
        &self,
        dst: &mut impl DeviceSliceMutArg<T>,
    ) -> Result<(), Error> {
        const WHAT: &str = "a memset to zero";
        let to = dst.locate_write(self.recording.side_stream());
        let bytes = to.len * size_of::<T>();
        self.record_copy(WHAT, vec![Access::device(to.ptr, bytes, true)]);
        // SAFETY: the range is inside a live buffer; the stream is valid.
        let set = unsafe { result::memset_d8_async(to.ptr, 0, bytes, self.stream.cu_stream()) };
        self.copy_result(WHAT, set)
    }
}

fn lengths_match(op: &'static str, src: usize, dst: usize) -> Result<(), Error> {
    if src == dst {
        Ok(())
    } else {
        Err(Error::Graph(GraphError::CopyLengths { op, src, dst }))
    }
}

/// What a graph owns: every device buffer and pinned host buffer that its recorded work uses.
///
/// Implemented for `CudaSlice<T>`, `PinnedHostSlice<T>`, `&CudaSlice<T>` (read-only),
/// `&mut CudaSlice<T>`, tuples, arrays, `Vec`, `Option` and `Box` of states, scalars and
/// [`ByValue`]. For a struct of your own, show the visitor each field that holds buffers:
///
/// ```ignore
/// impl GraphState for Pipeline {
///     fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
///         self.input.visit(visitor);
///         self.output.visit(visitor);
///     }
/// }
/// ```
///
/// A parameter struct that holds no buffers goes in the state as [`ByValue`]`(params)`.
///
/// Leaving a buffer out is safe: the graph then refuses work that touches it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be part of a graph's state",
    label = "not a `GraphState`",
    note = "a graph's state is made of buffers (`CudaSlice`, `PinnedHostSlice`), scalars, and \
            tuples, arrays and `Vec`s of them; put a parameter struct in as \
            `ByValue(params)`, or implement `GraphState` for it"
)]
pub trait GraphState {
    /// Shows `visitor` every buffer this value holds.
    fn visit(&mut self, visitor: &mut StateVisitor<'_>);
}

/// Collects the memory a graph's state holds, and orders each buffer's uses around a replay
/// (cudarc's event tracking, on the replay's stream).
pub struct StateVisitor<'v> {
    stream: &'v CudaStream,
    held: Vec<Access>,
}

impl StateVisitor<'_> {
    /// A device buffer the graph may read and write.
    pub fn device<T>(&mut self, buffer: &mut CudaSlice<T>) {
        let bytes = buffer.num_bytes();
        let (ptr, _recorded) = buffer.device_ptr_mut(self.stream);
        self.held.push(Access::device(ptr, bytes, true));
    }

    /// A device buffer the graph may only read.
    pub fn device_read_only<T>(&mut self, buffer: &CudaSlice<T>) {
        let bytes = buffer.num_bytes();
        let (ptr, _recorded) = buffer.device_ptr(self.stream);
        self.held.push(Access::device(ptr, bytes, false));
    }

    /// Pinned host memory that recorded copies read or write.
    pub fn host<T>(&mut self, buffer: &mut PinnedHostSlice<T>) {
        // SAFETY: only the address is kept; the guard records the replay's use of the buffer
        // on the replay's stream, which host accesses through cudarc then wait for.
        let (host, _recorded) = unsafe { buffer.stream_synced_mut_slice(self.stream) };
        let bytes = std::mem::size_of_val(host);
        self.held
            .push(Access::host(host.as_ptr().cast(), bytes, true));
    }
}

impl<T> GraphState for CudaSlice<T> {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        visitor.device(self);
    }
}

impl<T> GraphState for &mut CudaSlice<T> {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        visitor.device(self);
    }
}

impl<T> GraphState for &CudaSlice<T> {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        visitor.device_read_only(self);
    }
}

impl<T> GraphState for PinnedHostSlice<T> {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        visitor.host(self);
    }
}

impl<S: GraphState> GraphState for Vec<S> {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        self.iter_mut().for_each(|s| s.visit(visitor));
    }
}

impl<S: GraphState, const N: usize> GraphState for [S; N] {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        self.iter_mut().for_each(|s| s.visit(visitor));
    }
}

impl<S: GraphState> GraphState for Option<S> {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        if let Some(s) = self {
            s.visit(visitor);
        }
    }
}

impl<S: GraphState + ?Sized> GraphState for Box<S> {
    fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
        (**self).visit(visitor);
    }
}

/// A parameter passed by value holds no buffers.
impl<T> GraphState for ByValue<T> {
    fn visit(&mut self, _: &mut StateVisitor<'_>) {}
}

macro_rules! no_buffers {
    ($($ty:ty),*) => {$(
        /// A scalar parameter holds no buffers.
        impl GraphState for $ty {
            fn visit(&mut self, _: &mut StateVisitor<'_>) {}
        }
    )*};
}

no_buffers!(
    (),
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64,
    bool,
    char
);

macro_rules! tuple_states {
    ($(($($name:ident),+)),*) => {$(
        impl<$($name: GraphState),+> GraphState for ($($name,)+) {
            #[allow(non_snake_case)]
            fn visit(&mut self, visitor: &mut StateVisitor<'_>) {
                let ($($name,)+) = self;
                $($name.visit(visitor);)+
            }
        }
    )*};
}

tuple_states!(
    (A),
    (A, B),
    (A, B, C),
    (A, B, C, D),
    (A, B, C, D, E),
    (A, B, C, D, E, F),
    (A, B, C, D, E, F, G),
    (A, B, C, D, E, F, G, H)
);

/// How [`Graph::update`] brought the instantiated graph up to date.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Update {
    /// The driver changed the parameters of the instantiated graph in place.
    InPlace,
    /// The driver could not (the reason is its own): the graph was instantiated again.
    Reinstantiated {
        /// Why the driver refused to update in place.
        reason: &'static str,
    },
}

/// `cuGraphExecUpdate_v2`'s result, read as plain integers (a newer driver may return a reason
/// that the bindings' enum does not name).
#[repr(C)]
struct UpdateResultInfo {
    result: u32,
    error_node: sys::CUgraphNode,
    error_from_node: sys::CUgraphNode,
}

fn update_refusal(code: u32) -> &'static str {
    match code {
        2 => "the sequence of launches and copies changed",
        3 => "a launch became a copy, or the reverse",
        4 => "a launch runs a different kernel",
        5 => "a copy or memset changed in a way an update cannot express",
        6 => "the graph holds work the driver cannot update",
        7 => "the kernel changed in a way an update cannot express",
        8 => "a launch's attributes changed",
        _ => "the driver gave no reason",
    }
}

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

impl<'a, S: GraphState> Graph<'a, S> {
    /// Records the work `record` queues on [`Capture::stream`] (launches through the generated
    /// launchers, copies through the `Capture`) into a graph, and instantiates it for replays
    /// on `stream`. `state` holds every buffer the work uses; `record` gets it mutably, and is
    /// kept to record again after [`Graph::state_mut`].
    ///
    /// Nothing runs while recording: the first [`Graph::launch`] runs the work.
    pub fn capture<F>(stream: &Arc<CudaStream>, state: S, record: F) -> Result<Self, Error>
    where
        F: FnMut(&Capture<'_>, &mut S) -> Result<(), Error> + 'a,
    {
        if stream.cu_stream().is_null() {
            return Err(GraphError::DefaultStream.into());
        }
        let side = stream
            .context()
            .new_stream()
            .map_err(|e| classify(e, "creating the graph's bookkeeping stream"))?;
        let mut graph = Graph {
            stream: Arc::clone(stream),
            side,
            state,
            recorder: Box::new(record),
            exec: std::ptr::null_mut(),
            ops: Vec::new(),
            kernels: Vec::new(),
            stale: false,
            _not_sync: PhantomData,
        };
        let recorded = graph.record()?;
        // SAFETY: `recorded` is a graph the driver just made, used nowhere else.
        let exec =
            unsafe { result::graph::instantiate(recorded, sys::CUgraphInstantiate_flags(0)) };
        // SAFETY: an instantiated graph does not need its source graph.
        unsafe { destroy_graph(recorded) };
        graph.exec = exec.map_err(|e| classify(e, "cuGraphInstantiate"))?;
        // SAFETY: the exec was just instantiated on the stream's context.
        unsafe { result::graph::upload(graph.exec, graph.stream.cu_stream()) }
            .map_err(|e| classify(e, "cuGraphUpload"))?;
        Ok(graph)
    }

    /// Runs the recording closure in a capture; the recorded graph, checked against the state.
    fn record(&mut self) -> Result<sys::CUgraph, Error> {
        let recording = Arc::new(Recording {
            side: Arc::clone(&self.side),
            ops: Mutex::new(Vec::new()),
        });
        let session = CaptureSession::begin(&self.stream, Arc::clone(&recording))?;
        let capture = Capture {
            stream: &self.stream,
            recording: &recording,
        };
        let recorded = (self.recorder)(&capture, &mut self.state);
        let graph = session.end();
        let ops = std::mem::take(
            &mut *recording
                .ops
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner()),
        );
        let graph = match (recorded, graph) {
            (Ok(()), Ok(graph)) => graph,
            (Ok(()), Err(error)) => return Err(error),
            (Err(error), graph) => {
                if let Ok(graph) = graph {
                    // SAFETY: the graph was just made and is not used.
                    unsafe { destroy_graph(graph) };
                }
                return Err(error);
            }
        };
        let checked = if ops.is_empty() || graph.is_null() {
            Err(GraphError::Empty.into())
        } else {
            let side = Arc::clone(&self.side);
            let held = self.held(&side);
            check_ops(&ops, &held, "")
        };
        if let Err(error) = checked {
            // SAFETY: as above.
            unsafe { destroy_graph(graph) };
            return Err(error);
        }
        self.kernels = distinct_kernels(&ops);
        self.ops = ops;
        self.stale = false;
        Ok(graph)
    }

    /// The memory the state holds, located for `stream` (waiting there for earlier uses and
    /// recording a use of every buffer).
    fn held(&mut self, stream: &CudaStream) -> Vec<Access> {
        let mut visitor = StateVisitor {
            stream,
            held: Vec::new(),
        };
        self.state.visit(&mut visitor);
        visitor.held
    }

    /// Queues one replay of the graph on the stream it was captured on. Returns once it is
    /// queued; a fault of one of its kernels surfaces at the next synchronisation.
    pub fn launch(&mut self) -> Result<(), Error> {
        let stream = Arc::clone(&self.stream);
        self.launch_on(&stream)
    }

    /// Queues one replay on `stream` (any stream of the graph's context).
    pub fn launch_on(&mut self, stream: &CudaStream) -> Result<(), Error> {
        if stream.context().cu_ctx() != self.stream.context().cu_ctx() {
            return Err(Error::Driver {
                call: "cuGraphLaunch (the stream belongs to another context than the graph)",
                source: DriverFailure(sys::CUresult::CUDA_ERROR_INVALID_CONTEXT),
            });
        }
        if self.stale {
            self.update()?;
        }
        stream
            .context()
            .bind_to_thread()
            .map_err(|e| classify(e, "binding the context to this thread"))?;
        // Waits for earlier uses of the state's buffers, and checks that they still hold all
        // the memory the recording touches (interior mutability could have replaced one).
        let held = self.held(stream);
        check_ops(
            &self.ops,
            &held,
            " since the graph was recorded; after replacing a buffer of the state, record \
             again with `update()`",
        )?;
        // SAFETY: the exec belongs to the stream's context (checked above), which is bound.
        let launched = unsafe { result::graph::launch(self.exec, stream.cu_stream()) };
        // Records the replay's use of every buffer, after it.
        self.held(stream);
        match launched {
            Ok(()) => {
                inflight::launched(stream, &self.kernels);
                Ok(())
            }
            Err(e) => {
                let source = DriverFailure::from(e);
                Err(if is_fault(&source) {
                    fault(source, Some(inflight::context_of(stream)))
                } else {
                    Error::Driver {
                        call: "cuGraphLaunch",
                        source,
                    }
                })
            }
        }
    }

    /// The state. Copies of its buffers queued now (on any stream, through cudarc) see the
    /// results of the replays queued before; pinned host buffers are read through cudarc's
    /// `as_slice`, which waits for them.
    pub fn state(&self) -> &S {
        &self.state
    }

    /// The state, to change parameters or buffers: the next launch records the sequence
    /// again, and the driver updates the graph in place when it can.
    pub fn state_mut(&mut self) -> &mut S {
        self.stale = true;
        &mut self.state
    }

    /// The state, to write new contents into its buffers between replays, keeping the
    /// recording: the graph is not recorded again, so a changed parameter is not seen (use
    /// [`Graph::state_mut`] for that). Replacing a buffer the recording uses makes the next
    /// launch fail.
    pub fn buffers_mut(&mut self) -> &mut S {
        &mut self.state
    }

    /// Records the sequence again (with the state as it is now) and updates the instantiated
    /// graph: in place when the driver allows (only parameters changed), else by
    /// instantiating it anew.
    pub fn update(&mut self) -> Result<Update, Error> {
        let recorded = self.record()?;
        let mut info = UpdateResultInfo {
            result: 0,
            error_node: std::ptr::null_mut(),
            error_from_node: std::ptr::null_mut(),
        };
        // SAFETY: both handles are valid; `info` has the layout of
        // `CUgraphExecUpdateResultInfo` (a 32-bit result, then two node handles).
        let updated =
            unsafe { sys::cuGraphExecUpdate_v2(self.exec, recorded, (&raw mut info).cast()) }
                .result();
        let outcome = match updated {
            Ok(()) => Ok(Update::InPlace),
            Err(cudarc::driver::DriverError(
                sys::CUresult::CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
            )) => {
                // SAFETY: as in `capture`.
                let exec = unsafe {
                    result::graph::instantiate(recorded, sys::CUgraphInstantiate_flags(0))
                }
                .map_err(|e| classify(e, "cuGraphInstantiate"));
                exec.map(|exec| {
                    // SAFETY: the old exec is replaced; in-flight replays of it finish first.
                    let _ = unsafe { result::graph::exec_destroy(self.exec) };
                    self.exec = exec;
                    Update::Reinstantiated {
                        reason: update_refusal(info.result),
                    }
                })
            }
            Err(e) => Err(classify(e, "cuGraphExecUpdate")),
        };
        // SAFETY: the recorded graph is no longer needed.
        unsafe { destroy_graph(recorded) };
        outcome
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

    fn destroy_exec(&mut self) {
        if !self.exec.is_null() && self.stream.context().bind_to_thread().is_ok() {
            // SAFETY: the exec is owned by this graph; in-flight replays finish first.
            let _ = unsafe { result::graph::exec_destroy(self.exec) };
        }
        self.exec = std::ptr::null_mut();
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

/// # Safety
/// `graph` must be a graph made by the driver and not used afterwards.
unsafe fn destroy_graph(graph: sys::CUgraph) {
    if !graph.is_null() {
        // SAFETY: guaranteed by the caller. Nothing is left to do if destroying fails.
        let _ = unsafe { result::graph::destroy(graph) };
    }
}

fn distinct_kernels(ops: &[Op]) -> Vec<&'static str> {
    let mut kernels = Vec::new();
    for kernel in ops.iter().filter_map(Op::kernel) {
        if !kernels.contains(&kernel) {
            kernels.push(kernel);
        }
    }
    kernels
}

/// Checks that every access of `ops` lies inside memory `held` by the state.
fn check_ops(ops: &[Op], held: &[Access], since: &'static str) -> Result<(), Error> {
    for op in ops {
        for access in &op.accesses {
            if access.bytes == 0 || held.iter().any(|h| access.within(h)) {
                continue;
            }
            let hint = if !since.is_empty() {
                since
            } else if access.writes
                && held.iter().any(|h| {
                    Access {
                        writes: false,
                        ..*access
                    }
                    .within(h)
                })
            {
                "the state holds this buffer only for reading (`&CudaSlice`); hold it as \
                 `CudaSlice` or `&mut CudaSlice`"
            } else {
                "put every buffer the graph uses in its state (the value given to \
                 `Graph::capture`), and use it through the closure's second argument"
            };
            return Err(GraphError::NotInState {
                op: op.describe(),
                writes: access.writes,
                host: access.host,
                start: access.start,
                bytes: access.bytes,
                hint,
            }
            .into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(kernel: &'static str, accesses: Vec<Access>) -> Op {
        Op {
            kind: OpKind::Kernel(kernel),
            accesses,
        }
    }

    #[test]
    fn work_must_lie_inside_the_states_buffers() {
        let held = [
            Access::device(0x1000, 4096, true),
            Access::device(0x9000, 256, false),
            Access::host(0x7000 as *const u8, 64, true),
        ];
        let inside = op(
            "step",
            vec![
                Access::device(0x1000, 4096, true),
                Access::device(0x1100, 16, false),
                Access::device(0x9000, 256, false),
                Access::host(0x7010 as *const u8, 16, false),
                // An empty buffer touches nothing, wherever it points.
                Access::device(0, 0, true),
            ],
        );
        assert!(check_ops(&[inside], &held, "").is_ok());

        let past_the_end = op("step", vec![Access::device(0x1f00, 512, false)]);
        let error = check_ops(&[past_the_end], &held, "")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with(
                "kernel `step` in the graph reads 512 bytes of device memory at 0x1f00"
            ),
            "{error}"
        );
        assert!(
            error.contains("put every buffer the graph uses in its state"),
            "{error}"
        );

        let writes_read_only = op("step", vec![Access::device(0x9000, 4, true)]);
        let error = check_ops(&[writes_read_only], &held, "")
            .unwrap_err()
            .to_string();
        assert!(error.contains("writes 4 bytes"), "{error}");
        assert!(error.contains("only for reading"), "{error}");

        // Host and device addresses are different spaces.
        let host_as_device = op("step", vec![Access::device(0x7000, 8, false)]);
        assert!(check_ops(&[host_as_device], &held, "").is_err());

        let copy = Op {
            kind: OpKind::Copy("a host-to-device copy"),
            accesses: vec![Access::host(0x100 as *const u8, 8, false)],
        };
        let error = check_ops(&[copy], &held, " since").unwrap_err().to_string();
        assert!(
            error.starts_with(
                "a host-to-device copy in the graph reads 8 bytes of pinned host memory"
            ),
            "{error}"
        );
    }

    #[test]
    fn an_access_that_wraps_around_is_outside() {
        let held = [Access::device(0x1000, 4096, true)];
        let wraps = op("k", vec![Access::device(u64::MAX - 4, 16, false)]);
        assert!(check_ops(&[wraps], &held, "").is_err());
    }

    #[test]
    fn kernels_are_listed_once_for_fault_reports() {
        let ops = [
            op("a", vec![]),
            Op {
                kind: OpKind::Copy("a memset to zero"),
                accesses: vec![],
            },
            op("b", vec![]),
            op("a", vec![]),
        ];
        assert_eq!(distinct_kernels(&ops), vec!["a", "b"]);
    }

    #[test]
    fn refusals_of_an_update_are_explained() {
        assert_eq!(
            update_refusal(2),
            "the sequence of launches and copies changed"
        );
        assert_eq!(update_refusal(99), "the driver gave no reason");
        assert_eq!(
            size_of::<UpdateResultInfo>(),
            size_of::<sys::CUgraphExecUpdateResultInfo>()
        );
    }

    #[test]
    fn capture_errors_say_what_to_do() {
        let error = Error::Graph(GraphError::Capture {
            during: "`cuStreamEndCapture`".into(),
            source: DriverFailure(sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
        });
        let text = error.to_string();
        assert!(text.contains("cudarc's own copies"), "{text}");
        assert!(
            GraphError::DefaultStream
                .to_string()
                .contains("ctx.new_stream()")
        );
        let lengths = GraphError::CopyLengths {
            op: "a device-to-device copy",
            src: 10,
            dst: 8,
        };
        assert!(lengths.to_string().contains("copies 10 elements into 8"));
    }
}
