use bench_harness::{Ctx, Failure, Outcome, Spec, Tolerance, Work, count, ptr, u32_arg};
use cuda_host::LaunchConfig;

use crate::kernels::ours;

pub fn run(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    let n = h.size(1 << 26, 1 << 16);
    let x = h.rng.vec(n, |r| r.next_u64() as u32);
    let mut expected = vec![0u32; 256];
    for v in &x {
        expected[(v % 256) as usize] += 1;
    }
    let x_d = h.upload(&x)?;
    // A fixed grid that walks the input with a grid-sized stride.
    let cfg = LaunchConfig {
        grid_dim: (1024, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let (x_arg, n_arg) = (h.ptr(&x_d), u32_arg(n)?);
    let spec = Spec {
        size: format!("{} u32", count(n)),
        work: Work::bytes(4 * n),
        out_len: 256,
        // Each contender's output starts at zero before the checked launch.
        reference: Some((expected, Tolerance::Exact)),
        vs_cuda: Tolerance::Exact,
        vs_cuda_nofma: Tolerance::Exact,
    };
    let (ours, stream) = (h.ours, h.stream);
    h.compare(
        spec,
        |bins| ours.histogram(stream, cfg, &x_d, bins),
        // SAFETY: histogram.cu takes (const unsigned int*, unsigned int n, unsigned int* bins)
        // with n inputs and 256 bins.
        |f, bins| unsafe { f.launch(stream, cfg, &[x_arg, n_arg, ptr(stream, bins)]) },
    )
}
