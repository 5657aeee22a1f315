//! Capturing a graph: the stream capture the recording closure runs in, the registry that
//! tells launches which streams are being captured, and the [`Recording`] of each launch and
//! copy with the memory it touches (for the check that the graph's state holds it).

use std::mem::size_of;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::{self, CUdeviceptr};
use cudarc::driver::{CudaStream, DeviceRepr, HostSlice, PinnedHostSlice, ValidAsZeroBits, result};

use crate::error::Error;
use crate::failure::{DriverFailure, is_fault};
use crate::fault::{classify, fault};
use crate::graph::error::GraphError;
use crate::views::{DeviceSliceArg, DeviceSliceMutArg};

/// One range of memory that recorded work touches, or that a graph's state holds.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Access {
    pub(super) start: u64,
    pub(super) bytes: u64,
    /// Pinned host memory (a copy's host side), else device memory.
    pub(super) host: bool,
    /// Written (for a state's buffer: held mutably, so writes are allowed).
    pub(super) writes: bool,
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

    pub(super) fn host(ptr: *const u8, bytes: usize, writes: bool) -> Self {
        Access {
            start: ptr as u64,
            bytes: bytes as u64,
            host: true,
            writes,
        }
    }

    /// Whether `self` (recorded work) lies inside `held` (a buffer of the state).
    pub(super) fn within(&self, held: &Access) -> bool {
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
pub(super) enum OpKind {
    /// A launch of the named kernel.
    Kernel(&'static str),
    /// A copy or memset, described for messages ("a host-to-device copy").
    Copy(&'static str),
}

/// One launch or copy of a recording, and the memory it touches.
#[derive(Clone, Debug)]
pub(super) struct Op {
    pub(super) kind: OpKind,
    pub(super) accesses: Vec<Access>,
}

impl Op {
    pub(super) fn kernel(&self) -> Option<&'static str> {
        match self.kind {
            OpKind::Kernel(name) => Some(name),
            OpKind::Copy(_) => None,
        }
    }

    pub(super) fn describe(&self) -> String {
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

/// Streams being captured by a [`Graph`](super::Graph), so that launches on them locate buffers outside the
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
/// of [`Graph::capture`](super::Graph::capture).
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
    /// write it between replays through [`Graph::state_mut`](super::Graph::state_mut) or
    /// [`Graph::buffers_mut`](super::Graph::buffers_mut).
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
    /// it through [`Graph::state`](super::Graph::state), which waits for the replays queued so far.
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

/// Runs `record` in a capture of `stream`, with buffers located on `side`: the graph the
/// driver made, and the launches and copies noted. Any failure ends the capture and destroys
/// what it made.
pub(super) fn record_on(
    stream: &CudaStream,
    side: &Arc<CudaStream>,
    record: impl FnOnce(&Capture<'_>) -> Result<(), Error>,
) -> Result<(sys::CUgraph, Vec<Op>), Error> {
    let recording = Arc::new(Recording {
        side: Arc::clone(side),
        ops: Mutex::new(Vec::new()),
    });
    let session = CaptureSession::begin(stream, Arc::clone(&recording))?;
    let capture = Capture {
        stream,
        recording: &recording,
    };
    let recorded = record(&capture);
    let graph = session.end();
    let ops = std::mem::take(
        &mut *recording
            .ops
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()),
    );
    match (recorded, graph) {
        (Ok(()), Ok(graph)) => Ok((graph, ops)),
        (Ok(()), Err(error)) => Err(error),
        (Err(error), graph) => {
            if let Ok(graph) = graph {
                // SAFETY: the graph was just made and is not used.
                unsafe { destroy_graph(graph) };
            }
            Err(error)
        }
    }
}

/// # Safety
/// `graph` must be a graph made by the driver and not used afterwards.
pub(super) unsafe fn destroy_graph(graph: sys::CUgraph) {
    if !graph.is_null() {
        // SAFETY: guaranteed by the caller. Nothing is left to do if destroying fails.
        let _ = unsafe { result::graph::destroy(graph) };
    }
}
