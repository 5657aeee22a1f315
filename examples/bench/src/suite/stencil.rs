use bench_harness::{Ctx, Failure, Outcome, Spec, Tolerance, Work, count, grid_1d, ptr, u32_arg};

use crate::kernels::ours;

pub fn run(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    let n = h.size(1 << 25, 1 << 16);
    let x = h.rng.vec(n, |r| r.f32_in(-1.0, 1.0));
    let w = [0.05f32, -0.1, 0.25, 0.6, 0.25, -0.1, 0.05];
    let expected = (0..n)
        .map(|i| {
            (0..7).fold(0.0f32, |acc, k| {
                let at = (i + k).checked_sub(3).filter(|&j| j < n);
                acc + w[k] * at.map_or(0.0, |j| x[j])
            })
        })
        .collect();
    let (x_d, w_d) = (h.upload(&x)?, h.upload(&w)?);
    // The kernels stage blocks of exactly 256 inputs.
    let cfg = grid_1d(n, 256)?;
    let (x_arg, w_arg, n_arg) = (h.ptr(&x_d), h.ptr(&w_d), u32_arg(n)?);
    let spec = Spec {
        size: format!("{} f32", count(n)),
        work: Work::bytes_flops(8 * n, 14 * n),
        out_len: n,
        reference: Some((expected, Tolerance::Exact)),
        vs_cuda: Tolerance::Close {
            rel: 1e-5,
            abs: 1e-6,
        },
        vs_cuda_nofma: Tolerance::Exact,
    };
    let (ours, stream) = (h.ours, h.stream);
    h.compare(
        spec,
        |out| ours.stencil(stream, cfg, &x_d, &w_d, out),
        // SAFETY: stencil.cu takes (const float* x, const float* w, unsigned int n, float*)
        // with n inputs, 7 weights and n outputs.
        |f, out| unsafe { f.launch(stream, cfg, &[x_arg, w_arg, n_arg, ptr(stream, out)]) },
    )
}
