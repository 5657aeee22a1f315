//! The versions the driver and a PTX module state: the CUDA version a driver supports, and a
//! module's PTX ISA. Plain values, so that errors and the compatibility tables can both name
//! them.

/// A CUDA version as the driver reports it (`12080` is 12.8).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CudaVersion(pub i32);

impl std::fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.0 / 1000, (self.0 % 1000) / 10)
    }
}

/// A PTX ISA version (`.version 8.7`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PtxIsa {
    pub major: u32,
    pub minor: u32,
}

impl std::fmt::Display for PtxIsa {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_like_cuda_releases() {
        assert_eq!(CudaVersion(12080).to_string(), "12.8");
        assert_eq!(CudaVersion(13000).to_string(), "13.0");
    }
}
