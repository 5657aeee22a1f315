//! The kernels the GPU tests launch, and the embedding of their hand-written PTX under the
//! symbols the codegen backend would define for the test crate.

/// PTX written by hand for the kernels of [`kernels`], with kernel-abi's parameters.
pub const PTX: &str = include_str!("../ptx/handwritten.ptx");

/// `text` and a NUL, as the backend embeds it.
pub const fn nul_terminated<const N: usize>(text: &str) -> [u8; N] {
    let bytes = text.as_bytes();
    assert!(bytes.len() + 1 == N);
    let mut out = [0u8; N];
    let mut i = 0;
    while i < bytes.len() {
        out[i] = bytes[i];
        i += 1;
    }
    out
}

/// Defines the embedded-PTX symbols of the test crate (what the backend's object would).
macro_rules! embed_handwritten_ptx {
    ($data:literal, $len:literal, $cubin:literal, $cubin_len:literal, $cpu:literal) => {
        #[unsafe(export_name = $data)]
        static EMBEDDED_PTX: [u8; common::PTX.len() + 1] = common::nul_terminated(common::PTX);
        #[unsafe(export_name = $len)]
        static EMBEDDED_PTX_LEN: u64 = common::PTX.len() as u64;
        // No cubin: the hand-written PTX is what the driver loads.
        #[unsafe(export_name = $cubin)]
        static EMBEDDED_CUBIN: u8 = 0;
        #[unsafe(export_name = $cubin_len)]
        static EMBEDDED_CUBIN_LEN: u64 = 0;
        // No CPU flavour either: an image table of version 0 says so.
        #[unsafe(export_name = $cpu)]
        static EMBEDDED_CPU_IMAGE: u64 = 0;

        #[test]
        fn embedded_symbols_are_the_ones_load_refers_to() {
            let tag = reserved_oxide_symbols::crate_tag(env!("CARGO_CRATE_NAME"));
            assert_eq!($data, reserved_oxide_symbols::ptx_symbol(&tag));
            assert_eq!($len, reserved_oxide_symbols::ptx_len_symbol(&tag));
            assert_eq!($cubin, reserved_oxide_symbols::cubin_symbol(&tag));
            assert_eq!($cubin_len, reserved_oxide_symbols::cubin_len_symbol(&tag));
            assert_eq!($cpu, reserved_oxide_symbols::cpu_image_symbol(&tag));
            assert_eq!(EMBEDDED_PTX.len() as u64, EMBEDDED_PTX_LEN + 1);
        }
    };
}

#[cuda_host::cuda_module]
pub mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    /// Passed by value; `repr(C)` only because the PTX is written by hand.
    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub struct Affine {
        pub scale: f32,
        pub shift: f32,
    }

    #[kernel]
    pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        if let Some(c_elem) = c.get_mut(idx) {
            *c_elem = a[idx.get()] + b[idx.get()];
        }
    }

    #[kernel]
    pub fn affine(data: &mut [f32], p: Affine) {
        let i = thread::index_1d().get();
        if i < data.len() {
            data[i] = data[i] * p.scale + p.shift;
        }
    }

    #[kernel]
    pub fn fill(out: &mut [u32], value: u32) {
        let i = thread::index_1d().get();
        if i < out.len() {
            out[i] = value;
        }
    }

    #[kernel]
    pub fn checked(limit: u32, value: u32) {
        assert!(value < limit);
    }
}

/// A context on device 0, or `None` (with a note) on a machine without a driver or GPU.
pub fn gpu() -> Option<cuda_host::CudaContext> {
    match cuda_host::CudaContext::new(0) {
        Ok(ctx) => Some(ctx),
        Err(error @ (cuda_host::Error::NoDriver | cuda_host::Error::NoDevice { .. })) => {
            eprintln!("skipping the GPU part: {error}");
            None
        }
        Err(error) => panic!("unexpected error: {error}"),
    }
}
