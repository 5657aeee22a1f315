//! Turning a driver error into an [`Error`]: a fault is attributed to the kernels that may
//! have caused it (those in flight, or the one whose panic the device recorded), anything else
//! is a plain driver error. Every module that calls the driver reports through these.

use cudarc::driver::DriverError;

use crate::error::Error;
use crate::failure::{DriverFailure, is_fault};
use crate::inflight;

/// A fault seen on context `ctx` (on any when `None`), attributed to the kernels that may have
/// caused it: those launched through cuda-host that no successful synchronisation covered.
pub(crate) fn fault(source: DriverFailure, ctx: Option<usize>) -> Error {
    let (mut suspects, overflowed) = inflight::suspects(ctx);
    let kernel = suspects
        .last()
        .copied()
        .unwrap_or("(none launched through cuda-host)");
    if suspects.len() == 1 && !overflowed {
        suspects.clear();
    }
    if let Some(panic) = crate::panic::recorded(ctx) {
        return Error::KernelPanic {
            kernel,
            in_flight: suspects,
            panic: Box::new(panic),
            source,
        };
    }
    Error::KernelFault {
        kernel,
        in_flight: suspects,
        source,
    }
}

/// A driver error seen during `call`: a fault when it is one, a plain driver error otherwise.
pub(crate) fn classify(error: DriverError, call: &'static str) -> Error {
    let source = DriverFailure::from(error);
    if is_fault(&source) {
        fault(source, None)
    } else {
        Error::Driver { call, source }
    }
}

/// Lets `?` turn cudarc's errors (from copies, allocations, synchronisation) into [`Error`]s,
/// with faults attributed to the last launched kernel.
impl From<DriverError> for Error {
    fn from(source: DriverError) -> Self {
        classify(source, "a cudarc driver call")
    }
}

#[cfg(test)]
mod tests {
    use cudarc::driver::sys;

    use super::*;

    #[test]
    fn faults_name_the_kernel_in_flight_or_list_them() {
        let _serial = inflight::tests::SERIAL
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        inflight::tests::reset();
        let error = Error::from(DriverError(sys::CUresult::CUDA_ERROR_LAUNCH_FAILED));
        assert!(
            matches!(&error, Error::KernelFault { kernel: "(none launched through cuda-host)", in_flight, .. } if in_flight.is_empty()),
            "{error:?}"
        );
        let other = Error::from(DriverError(sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY));
        assert!(matches!(other, Error::Driver { .. }), "{other:?}");

        inflight::tests::noted(1, 10, &["first"]);
        let error = fault(
            DriverFailure(sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS),
            Some(1),
        );
        assert!(
            matches!(&error, Error::KernelFault { kernel: "first", in_flight, .. } if in_flight.is_empty()),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .starts_with("kernel `first` faulted on the GPU")
        );

        inflight::tests::noted(1, 20, &["second"]);
        let error = fault(
            DriverFailure(sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS),
            Some(1),
        );
        assert!(
            matches!(&error, Error::KernelFault { kernel: "second", in_flight, .. } if *in_flight == ["first", "second"]),
            "{error:?}"
        );
        let text = error.to_string();
        assert!(
            text.starts_with(
                "a kernel launched through cuda-host and not yet seen to finish (`first`, \
                 `second`; `second` was launched last) faulted on the GPU"
            ),
            "{text}"
        );
        assert!(text.contains("CUDA_LAUNCH_BLOCKING=1"), "{text}");
        // Another context's kernels are not suspects.
        let error = fault(
            DriverFailure(sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS),
            Some(2),
        );
        assert!(matches!(
            error,
            Error::KernelFault {
                kernel: "(none launched through cuda-host)",
                ..
            }
        ));
        inflight::tests::reset();
    }
}
