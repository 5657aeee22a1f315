use bench_harness::{Ctx, Failure, Outcome, Spec, Tolerance, Work, count, grid_1d, ptr, u32_arg};

use crate::kernels::ours;

pub fn run(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    let n = h.size(1 << 25, 1 << 16);
    let x = h.rng.vec(n, |r| (r.next_u64() % 1000) as u32);
    let expected = x
        .chunks(1024)
        .flat_map(|block| {
            block.iter().scan(0u32, |sum, v| {
                *sum = sum.wrapping_add(*v);
                Some(*sum)
            })
        })
        .collect();
    let x_d = h.upload(&x)?;
    let cfg = grid_1d(n, 1024)?;
    let (x_arg, n_arg) = (h.ptr(&x_d), u32_arg(n)?);
    let spec = Spec {
        size: format!("{} u32", count(n)),
        work: Work::bytes(8 * n),
        out_len: n,
        reference: Some((expected, Tolerance::Exact)),
        vs_cuda: Tolerance::Exact,
        vs_cuda_nofma: Tolerance::Exact,
    };
    let (ours, stream) = (h.ours, h.stream);
    h.compare(
        spec,
        |out| ours.scan(stream, cfg, &x_d, out),
        // SAFETY: scan.cu takes (const unsigned int*, unsigned int n, unsigned int*) with n
        // inputs and outputs.
        |f, out| unsafe { f.launch(stream, cfg, &[x_arg, n_arg, ptr(stream, out)]) },
    )
}
