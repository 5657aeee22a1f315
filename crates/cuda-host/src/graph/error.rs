//! Why recording, updating or replaying a graph failed, with what to do about it. A leaf that
//! needs only the driver's error code, so that the crate's `Error` can wrap these.

use cudarc::driver::sys;

use crate::failure::DriverFailure;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_errors_say_what_to_do() {
        let error = GraphError::Capture {
            during: "`cuStreamEndCapture`".into(),
            source: DriverFailure(sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_INVALIDATED),
        };
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
