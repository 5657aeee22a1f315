//! CUDA events: points in a stream's work, for ordering other streams after them, for the host
//! to wait on, and for timing on the GPU's clock.
//!
//! ```ignore
//! let copied = Event::new(&ctx)?;
//! stream_a.memcpy_htod(&input, &mut x)?;
//! copied.record(&stream_a)?;
//! copied.wait_in(&stream_b)?;   // stream_b's later work starts once the copy is done
//! module.process(&stream_b, cfg, &x, &mut y)?;
//! ```

use std::sync::Mutex;

use cudarc::driver::{CudaEvent, CudaStream, DriverError, sys};

use crate::driver::CudaContext;
use crate::error::Error;
use crate::failure::{DriverFailure, is_fault};
use crate::fault::fault;
use crate::graph::error::GraphError;
use crate::graph::recording::recording_on;
use crate::inflight::{self, Point};

/// A point in a stream's work (cudarc's `CudaEvent`), with what cuda-host knows about the
/// kernels queued before it, so that waiting on it can attribute a fault.
#[derive(Debug)]
pub struct Event {
    event: CudaEvent,
    /// Where it was last recorded.
    recorded: Mutex<Option<Point>>,
}

impl Event {
    /// An event for ordering and waiting (no timestamps, which makes it cheaper).
    pub fn new(ctx: &CudaContext) -> Result<Self, Error> {
        Self::with_flags(ctx, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
    }

    /// An event that also records a timestamp, for [`Event::elapsed_ms`].
    pub fn timing(ctx: &CudaContext) -> Result<Self, Error> {
        Self::with_flags(ctx, sys::CUevent_flags::CU_EVENT_DEFAULT)
    }

    fn with_flags(ctx: &CudaContext, flags: sys::CUevent_flags) -> Result<Self, Error> {
        let event = ctx
            .new_event(Some(flags))
            .map_err(|e| driver(e, "cuEventCreate"))?;
        Ok(Event {
            event,
            recorded: Mutex::new(None),
        })
    }

    /// Marks the current end of `stream`'s queued work. Returns at once.
    pub fn record(&self, stream: &CudaStream) -> Result<(), Error> {
        if recording_on(stream).is_some() {
            return Err(GraphError::Capture {
                during: "recording an event".into(),
                source: DriverFailure(sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED),
            }
            .into());
        }
        let point = inflight::point(stream);
        self.event.record(stream).map_err(|e| {
            if e.0 == sys::CUresult::CUDA_ERROR_INVALID_CONTEXT {
                Error::Driver {
                    call: "cuEventRecord (the event and the stream belong to different contexts)",
                    source: e.into(),
                }
            } else {
                driver(e, "cuEventRecord")
            }
        })?;
        *self.point() = Some(point);
        Ok(())
    }

    /// Makes `stream` wait for this event: work queued on `stream` afterwards starts once the
    /// work recorded before the event has finished. The host does not wait. An event never
    /// recorded is no wait at all.
    pub fn wait_in(&self, stream: &CudaStream) -> Result<(), Error> {
        stream
            .wait(&self.event)
            .map_err(|e| driver(e, "cuStreamWaitEvent"))
    }

    /// Blocks the host until the work recorded before this event has finished. A kernel of it
    /// that faulted is reported as [`Error::KernelFault`].
    pub fn synchronize(&self) -> Result<(), Error> {
        self.event
            .synchronize()
            .map_err(|e| driver(e, "cuEventSynchronize"))?;
        self.reached();
        Ok(())
    }

    /// Whether the work recorded before this event has finished, without waiting.
    pub fn is_complete(&self) -> Result<bool, Error> {
        let complete = self
            .event
            .try_is_complete()
            .map_err(|e| driver(e, "cuEventQuery"))?;
        if complete {
            self.reached();
        }
        Ok(complete)
    }

    /// Milliseconds on the GPU's clock from this event to `end` (both made with
    /// [`Event::timing`] and recorded); waits for both.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32, Error> {
        let elapsed = self.event.elapsed_ms(&end.event).map_err(|e| {
            if e.0 == sys::CUresult::CUDA_ERROR_INVALID_HANDLE {
                Error::Driver {
                    call: "cuEventElapsedTime (time with events made by `Event::timing`, both \
                           recorded)",
                    source: e.into(),
                }
            } else {
                driver(e, "cuEventElapsedTime")
            }
        })?;
        self.reached();
        end.reached();
        Ok(elapsed)
    }

    /// cudarc's event.
    pub fn cudarc(&self) -> &CudaEvent {
        &self.event
    }

    fn point(&self) -> std::sync::MutexGuard<'_, Option<Point>> {
        self.recorded
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The recorded work finished without a fault.
    fn reached(&self) {
        if let Some(point) = *self.point() {
            inflight::finished(point);
        }
    }
}

/// A driver error of an event call: a fault when it is one.
fn driver(error: DriverError, call: &'static str) -> Error {
    let source = DriverFailure::from(error);
    if is_fault(&source) {
        fault(source, None)
    } else {
        Error::Driver { call, source }
    }
}
