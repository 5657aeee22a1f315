use bench_harness::{Ctx, Failure, Outcome, Spec, Tolerance, Work, ptr, u32_arg};
use cuda_host::{CudaSlice, CudaStream, LaunchConfig};

use crate::kernels::ours;

/// `sgemm_naive`: Rust's semantics, each product rounded, then each sum.
#[cfg(feature = "sgemm_naive")]
pub fn run(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    run_variant(h, false, |o, s, cfg, a, b, c, m, n, k| {
        o.sgemm_naive(s, cfg, a, b, c, m, n, k)
    })
}

/// `sgemm_naive_fmad`: the same kernel with `#[kernel(fmad)]`.
#[cfg(feature = "sgemm_naive_fmad")]
pub fn run_fmad(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    run_variant(h, true, |o, s, cfg, a, b, c, m, n, k| {
        o.sgemm_naive_fmad(s, cfg, a, b, c, m, n, k)
    })
}

/// Launches one of the two Rust kernels: (module, stream, config, a, b, c, m, n, k), as
/// `sgemm`'s variants do.
type Launch = fn(
    &ours::Module,
    &CudaStream,
    LaunchConfig,
    &CudaSlice<f32>,
    &CudaSlice<f32>,
    &mut CudaSlice<f32>,
    u32,
    u32,
    u32,
) -> Result<(), cuda_host::Error>;

/// `c = a × b` for `a` of `m × k` and `b` of `k × n`, one thread per element of `c` in
/// 16 × 16 blocks. The sizes are not multiples of the block, nor equal.
fn run_variant(
    h: &mut Ctx<'_, ours::Module>,
    fmad: bool,
    launch: Launch,
) -> Result<Outcome, Failure> {
    let (m, n, k) = (h.size(1000, 200), h.size(1100, 220), h.size(1024, 256));
    let a = h.rng.vec(m * k, |r| r.f32_in(-1.0, 1.0));
    let b = h.rng.vec(k * n, |r| r.f32_in(-1.0, 1.0));
    let expected: Vec<f32> = (0..m * n)
        .map(|e| {
            let (row, col) = (e / n, e % n);
            (0..k).fold(0.0f32, |sum, i| {
                let (x, y) = (a[row * k + i], b[i * n + col]);
                if fmad { x.mul_add(y, sum) } else { sum + x * y }
            })
        })
        .collect();
    let (a_d, b_d) = (h.upload(&a)?, h.upload(&b)?);
    let cfg = LaunchConfig {
        grid_dim: (n.div_ceil(16) as u32, m.div_ceil(16) as u32, 1),
        block_dim: (16, 16, 1),
        shared_mem_bytes: 0,
    };
    let (pa, pb) = (h.ptr(&a_d), h.ptr(&b_d));
    let (ma, na, ka) = (u32_arg(m)?, u32_arg(n)?, u32_arg(k)?);
    let close = Tolerance::Close {
        rel: 1e-4,
        abs: 1e-4,
    };
    let spec = Spec {
        size: format!("{m}x{k}x{n}"),
        work: Work::bytes_flops(4 * (m * k + k * n + m * n), 2 * m * n * k),
        out_len: m * n,
        reference: Some((expected, Tolerance::Exact)),
        vs_cuda: if fmad { Tolerance::Exact } else { close },
        vs_cuda_nofma: if fmad { close } else { Tolerance::Exact },
    };
    let (ours, s) = (h.ours, h.stream);
    let (m32, n32, k32) = (m as u32, n as u32, k as u32);
    h.compare(
        spec,
        |c| launch(ours, s, cfg, &a_d, &b_d, c, m32, n32, k32),
        // SAFETY: sgemm_naive.cu takes (const float* a, const float* b, float* c, unsigned m,
        // unsigned n, unsigned k) with m x k, k x n and m x n elements.
        |f, c| unsafe { f.launch(s, cfg, &[pa, pb, ptr(s, c), ma, na, ka]) },
    )
}
