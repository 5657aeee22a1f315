use bench_harness::{Ctx, Failure, Outcome, Spec, Tolerance, Work, ptr, u32_arg};
use cuda_host::{CudaSlice, CudaStream, LaunchConfig};

use crate::kernels::ours;

/// `sgemm`: Rust's semantics, each product rounded, then each sum.
#[cfg(feature = "sgemm")]
pub fn run(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    run_variant(h, false, |o, s, cfg, a, b, n, c| {
        o.sgemm(s, cfg, a, b, n, c)
    })
}

/// `sgemm_fmad`: the same kernel with `#[kernel(fmad)]`: `acc += a * b` is one `fma`, as with
/// nvcc's default.
#[cfg(feature = "sgemm_fmad")]
pub fn run_fmad(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    run_variant(h, true, |o, s, cfg, a, b, n, c| {
        o.sgemm_fmad(s, cfg, a, b, n, c)
    })
}

/// Launches one of the two Rust kernels: (module, stream, config, a, b, n, c).
type Launch = fn(
    &ours::Module,
    &CudaStream,
    LaunchConfig,
    &CudaSlice<f32>,
    &CudaSlice<f32>,
    u32,
    &mut CudaSlice<f32>,
) -> Result<(), cuda_host::Error>;

fn run_variant(
    h: &mut Ctx<'_, ours::Module>,
    fmad: bool,
    launch: Launch,
) -> Result<Outcome, Failure> {
    let n = h.size(1024, 256);
    let a = h.rng.vec(n * n, |r| r.f32_in(-1.0, 1.0));
    let b = h.rng.vec(n * n, |r| r.f32_in(-1.0, 1.0));
    // Each c[i][j] sums a[i][k] * b[k][j] for k in order, product then sum, as the kernel's
    // tiles do: the result is exactly ours. With fmad, each step is one `mul_add`.
    let mut expected = vec![0.0f32; n * n];
    for i in 0..n {
        let c_row = &mut expected[i * n..(i + 1) * n];
        for k in 0..n {
            let a_ik = a[i * n + k];
            for (c, b_kj) in c_row.iter_mut().zip(&b[k * n..(k + 1) * n]) {
                *c = if fmad {
                    a_ik.mul_add(*b_kj, *c)
                } else {
                    *c + a_ik * b_kj
                };
            }
        }
    }
    let (a_d, b_d) = (h.upload(&a)?, h.upload(&b)?);
    let tiles = n.div_ceil(16) as u32;
    let cfg = LaunchConfig {
        grid_dim: (tiles, tiles, 1),
        block_dim: (16, 16, 1),
        shared_mem_bytes: 0,
    };
    let (a_arg, b_arg, n_arg) = (h.ptr(&a_d), h.ptr(&b_d), u32_arg(n)?);
    let spec = Spec {
        size: format!("{n}^3"),
        work: Work::bytes_flops(12 * n * n, 2 * n * n * n),
        out_len: n * n,
        reference: Some((expected, Tolerance::Exact)),
        // fmas round each step once instead of twice.
        vs_cuda: if fmad {
            Tolerance::Exact
        } else {
            Tolerance::Close {
                rel: 1e-4,
                abs: 1e-4,
            }
        },
        vs_cuda_nofma: if fmad {
            Tolerance::Close {
                rel: 1e-4,
                abs: 1e-4,
            }
        } else {
            Tolerance::Exact
        },
    };
    let (ours, stream) = (h.ours, h.stream);
    h.compare(
        spec,
        |c| launch(ours, stream, cfg, &a_d, &b_d, n as u32, c),
        // SAFETY: sgemm.cu takes (const float* a, const float* b, unsigned int n, float* c)
        // with n x n elements each.
        |f, c| unsafe { f.launch(stream, cfg, &[a_arg, b_arg, n_arg, ptr(stream, c)]) },
    )
}
