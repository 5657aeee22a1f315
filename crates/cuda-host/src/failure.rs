//! A driver error code that prints without the driver, and which codes mean that a kernel
//! stopped abnormally: the two facts about driver errors that every other module needs.

use cudarc::driver::{DriverError, sys};

use crate::library::library_present;

/// A driver error code. Unlike cudarc's `DriverError`, formatting it never calls into the
/// driver when the driver library is missing (cudarc's would panic), so every error of this
/// crate can be printed anywhere.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct DriverFailure(pub sys::CUresult);

impl DriverFailure {
    /// The driver's own description (`cuGetErrorString`), when the driver is there.
    pub fn description(&self) -> Option<String> {
        if !library_present() {
            return None;
        }
        let error = DriverError(self.0);
        let text = error.error_string().ok()?;
        Some(text.to_string_lossy().into_owned())
    }
}

impl From<DriverError> for DriverFailure {
    fn from(error: DriverError) -> Self {
        DriverFailure(error.0)
    }
}

impl From<DriverFailure> for DriverError {
    fn from(failure: DriverFailure) -> Self {
        DriverError(failure.0)
    }
}

impl std::fmt::Display for DriverFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.description() {
            Some(text) => write!(f, "{:?} ({text})", self.0),
            None => write!(f, "{:?}", self.0),
        }
    }
}

impl std::error::Error for DriverFailure {}

/// Driver errors that mean a kernel stopped abnormally. They are sticky: every later call on
/// the context returns them too.
pub(crate) fn is_fault(error: &DriverFailure) -> bool {
    use sys::CUresult::*;
    matches!(
        error.0,
        CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_LAUNCH_TIMEOUT
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traps_and_bad_addresses_are_faults() {
        use sys::CUresult::*;
        for code in [
            CUDA_ERROR_LAUNCH_FAILED,
            CUDA_ERROR_ILLEGAL_INSTRUCTION,
            CUDA_ERROR_ILLEGAL_ADDRESS,
        ] {
            assert!(is_fault(&DriverFailure(code)), "{code:?}");
        }
        for code in [CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_OUT_OF_MEMORY] {
            assert!(!is_fault(&DriverFailure(code)), "{code:?}");
        }
    }
}
