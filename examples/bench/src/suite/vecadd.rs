use bench_harness::{Ctx, Failure, Outcome, Spec, Tolerance, Work, count, grid_1d, ptr, u32_arg};

use crate::kernels::ours;

pub fn run(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    let n = h.size(1 << 25, 1 << 16);
    let a = h.rng.vec(n, |r| r.f32_in(-100.0, 100.0));
    let b = h.rng.vec(n, |r| r.f32_in(-100.0, 100.0));
    let expected = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let (a_d, b_d) = (h.upload(&a)?, h.upload(&b)?);
    let cfg = grid_1d(n, 256)?;
    let args = [h.ptr(&a_d), h.ptr(&b_d)];
    let len = u32_arg(n)?;
    let spec = Spec {
        size: format!("{} f32", count(n)),
        work: Work::bytes(12 * n),
        out_len: n,
        reference: Some((expected, Tolerance::Exact)),
        vs_cuda: Tolerance::Exact,
        vs_cuda_nofma: Tolerance::Exact,
    };
    let (ours, stream) = (h.ours, h.stream);
    h.compare(
        spec,
        |c| ours.vecadd(stream, cfg, &a_d, &b_d, c),
        // SAFETY: vecadd.cu takes (const float*, const float*, float*, unsigned int), each
        // buffer holding n floats.
        |f, c| unsafe { f.launch(stream, cfg, &[args[0], args[1], ptr(stream, c), len]) },
    )
}
