use bench_harness::{Ctx, Failure, Outcome, Spec, Tolerance, Work, count, grid_1d, ptr, u32_arg};

use crate::kernels::ours;

pub fn run(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    let k = 32;
    let n = h.size(1 << 21, 1 << 14);
    let x = h.rng.vec(n * k, |r| r.f32_in(-1.0, 1.0));
    let w = h.rng.vec(k, |r| r.f32_in(-1.0, 1.0));
    let expected = x
        .chunks(k)
        .map(|row| {
            row.iter()
                .zip(&w)
                .map(|(a, b)| a * b)
                .filter(|p| *p > 0.0)
                .sum()
        })
        .collect();
    let (x_d, w_d) = (h.upload(&x)?, h.upload(&w)?);
    let cfg = grid_1d(n, 256)?;
    let (x_arg, w_arg, k_arg, n_arg) = (h.ptr(&x_d), h.ptr(&w_d), u32_arg(k)?, u32_arg(n)?);
    let spec = Spec {
        size: format!("{} x {k} f32", count(n)),
        work: Work::bytes_flops(4 * n * k + 4 * n, 2 * n * k),
        out_len: n,
        reference: Some((expected, Tolerance::Exact)),
        vs_cuda: Tolerance::Close {
            rel: 1e-5,
            abs: 1e-5,
        },
        vs_cuda_nofma: Tolerance::Exact,
    };
    let (ours, stream) = (h.ours, h.stream);
    h.compare(
        spec,
        |out| ours.iter_chain(stream, cfg, &x_d, &w_d, out),
        // SAFETY: iter_chain.cu takes (const float* x, const float* w, unsigned int k, float*,
        // unsigned int n) with n x k inputs, k weights and n outputs.
        |f, out| unsafe { f.launch(stream, cfg, &[x_arg, w_arg, k_arg, ptr(stream, out), n_arg]) },
    )
}
