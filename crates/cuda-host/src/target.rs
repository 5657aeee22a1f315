//! Where a launch goes: onto its stream, or into the CUDA graph being recorded on that stream.
//! The launcher `#[cuda_module]` generates chooses once per launch, and packing the arguments
//! and queuing the kernel both follow that choice, so neither asks the graph registry again.

use std::mem::size_of;
use std::sync::Arc;

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaStream, SyncOnDrop};

use crate::error::Error;
use crate::failure::DriverFailure;
use crate::graph::error::GraphError;
use crate::graph::recording::{Access, Recording, recording_on};
use crate::inflight;
use crate::views::{DeviceSliceArg, DeviceSliceMutArg, Located};

/// The target of one launch: its stream, or the graph recording that stream's work. Opaque:
/// made by [`LaunchTarget::of`], and used by the launch it is given to.
pub struct LaunchTarget<'s>(Target<'s>);

enum Target<'s> {
    /// The kernel runs on the stream: buffers are located there, with cudarc's ordering
    /// guards, and the launch counts as in flight.
    Stream(&'s CudaStream),
    /// The stream is being captured: buffers are located on the graph's side stream (a stream
    /// being captured must not wait on cudarc's events), and their ranges noted for the
    /// graph's check that its state holds them.
    Recording {
        recording: Arc<Recording>,
        accesses: Vec<Access>,
    },
    /// Unit tests have no GPU to make a stream on: they pack scalars and values, and launch
    /// nothing.
    #[cfg(test)]
    Nowhere,
}

/// A buffer as a launch passes it: where it lies, how many elements, and the guard that
/// records its use on the stream after the launch (none while recording).
pub(crate) struct Placed<'s> {
    pub ptr: CUdeviceptr,
    pub len: usize,
    pub guard: Option<SyncOnDrop<'s>>,
}

impl<'s> LaunchTarget<'s> {
    /// The target of a launch on `stream`: the graph recording it, if one is, else the stream.
    pub fn of(stream: &'s CudaStream) -> Self {
        LaunchTarget(match recording_on(stream) {
            Some(recording) => Target::Recording {
                recording,
                accesses: Vec::new(),
            },
            None => Target::Stream(stream),
        })
    }

    #[cfg(test)]
    pub(crate) fn nowhere() -> Self {
        LaunchTarget(Target::Nowhere)
    }

    /// Locates a buffer the kernel reads.
    pub(crate) fn read<T, B: DeviceSliceArg<T>>(&mut self, buffer: &'s B) -> Placed<'s> {
        match &mut self.0 {
            Target::Stream(stream) => placed(buffer.locate_read(stream)),
            Target::Recording {
                recording,
                accesses,
            } => noted::<T>(buffer.locate_read(recording.side_stream()), false, accesses),
            #[cfg(test)]
            Target::Nowhere => unreachable!("unit tests pass no device buffers"),
        }
    }

    /// Locates a buffer the kernel writes.
    pub(crate) fn write<T, B: DeviceSliceMutArg<T>>(&mut self, buffer: &'s mut B) -> Placed<'s> {
        match &mut self.0 {
            Target::Stream(stream) => placed(buffer.locate_write(stream)),
            Target::Recording {
                recording,
                accesses,
            } => noted::<T>(buffer.locate_write(recording.side_stream()), true, accesses),
            #[cfg(test)]
            Target::Nowhere => unreachable!("unit tests pass no device buffers"),
        }
    }

    /// The error for a launch of `kernel` that the driver refused (not for a fault, which is
    /// the context's, whatever the target).
    pub(crate) fn refused(&self, kernel: &'static str, source: DriverFailure) -> Error {
        match &self.0 {
            Target::Recording { .. } => Error::Graph(GraphError::Capture {
                during: format!("the launch of kernel `{kernel}`"),
                source,
            }),
            _ => Error::Launch { kernel, source },
        }
    }

    /// Notes a launch of `kernel` that the driver queued on `stream`: into the graph's
    /// recording (a graph notes its kernels as in flight when it is launched, not recorded),
    /// or as in flight on the stream, unless launches block.
    pub(crate) fn queued(&mut self, stream: &CudaStream, kernel: &'static str) {
        match &mut self.0 {
            Target::Recording {
                recording,
                accesses,
            } => recording.kernel(kernel, std::mem::take(accesses)),
            _ if inflight::launches_block() => {}
            _ => inflight::launched(stream, &[kernel]),
        }
    }
}

fn placed(at: Located<'_>) -> Placed<'_> {
    Placed {
        ptr: at.ptr,
        len: at.len,
        guard: Some(at.guard),
    }
}

/// A buffer located on a graph's side stream, its range noted in `accesses`. Its guard records
/// the use on the side stream now: the replays are ordered by the graph's state, not by this
/// launch.
fn noted<'s, T>(at: Located<'_>, writes: bool, accesses: &mut Vec<Access>) -> Placed<'s> {
    accesses.push(Access::device(at.ptr, at.len * size_of::<T>(), writes));
    Placed {
        ptr: at.ptr,
        len: at.len,
        guard: None,
    }
}
