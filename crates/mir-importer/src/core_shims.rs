//! The functions of `core` that `core` ships without MIR and device code still reaches
//! (`<[u8]>::contains` calls `memchr_aligned`): each is replaced by a device version in
//! `cuda_device::core_shims`. The collector collects the device version in place of the
//! original, and [`crate::naming::export_name`] gives calls to the original its symbol.

/// `(path in core, path of the device version)`.
pub const SHIMS: &[(&str, &str)] = &[
    (
        "core::slice::memchr::memchr_aligned",
        "cuda_device::core_shims::memchr_aligned",
    ),
    (
        "core::slice::memchr::memrchr",
        "cuda_device::core_shims::memrchr",
    ),
];

/// The path of the device version of the `core` function at `path`, if it has one.
pub fn shim_for(path: &str) -> Option<&'static str> {
    SHIMS
        .iter()
        .find(|(original, _)| *original == path)
        .map(|&(_, shim)| shim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shims_replace_core_functions_by_cuda_device_ones() {
        for (original, shim) in SHIMS {
            assert!(original.starts_with("core::"), "{original}");
            assert!(shim.starts_with("cuda_device::core_shims::"), "{shim}");
            assert_eq!(shim_for(original), Some(*shim));
        }
        assert_eq!(shim_for("core::slice::memchr::memchr"), None);
    }
}
