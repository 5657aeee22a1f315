use bench_harness::{
    Arg, Ctx, Failure, Outcome, Spec, Tolerance, Work, count, grid_1d, ptr, u32_arg,
};

use crate::kernels::ours;

pub fn run(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    let n = h.size(1 << 25, 1 << 16);
    let alpha = 1.7f32;
    let x = h.rng.vec(n, |r| r.f32_in(-10.0, 10.0));
    let y = h.rng.vec(n, |r| r.f32_in(-10.0, 10.0));
    // Rust rounds the product, then the sum: exactly what the CPU does.
    let expected = x.iter().zip(&y).map(|(x, y)| alpha * x + y).collect();
    let (x_d, y_d) = (h.upload(&x)?, h.upload(&y)?);
    let cfg = grid_1d(n, 256)?;
    let args = [h.ptr(&x_d), h.ptr(&y_d)];
    let len = u32_arg(n)?;
    let spec = Spec {
        size: format!("{} f32", count(n)),
        work: Work::bytes_flops(12 * n, 2 * n),
        out_len: n,
        reference: Some((expected, Tolerance::Exact)),
        // The fma rounds once: ours differs by at most an ulp of the product.
        vs_cuda: Tolerance::Close {
            rel: 1e-6,
            abs: 1e-5,
        },
        vs_cuda_nofma: Tolerance::Exact,
    };
    let (ours, stream) = (h.ours, h.stream);
    h.compare(
        spec,
        |out| ours.saxpy(stream, cfg, alpha, &x_d, &y_d, out),
        // SAFETY: saxpy.cu takes (float, const float*, const float*, float*, unsigned int),
        // each buffer holding n floats.
        |f, out| unsafe {
            f.launch(
                stream,
                cfg,
                &[Arg::F32(alpha), args[0], args[1], ptr(stream, out), len],
            )
        },
    )
}
