use bench_harness::{
    Arg, Ctx, Failure, Outcome, Spec, Tolerance, Work, count, grid_1d, ptr, u32_arg,
};

use crate::kernels::ours;

/// The same loop as the kernels.
fn steps(mut n: u64) -> u32 {
    let mut count = 0;
    while n != 1 {
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        count += 1;
    }
    count
}

pub fn run(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    let n = h.size(1 << 22, 1 << 16);
    let first = 1_000_001u64;
    let expected = (0..n as u64).map(|i| steps(first + i)).collect();
    let cfg = grid_1d(n, 256)?;
    let len = u32_arg(n)?;
    let spec = Spec {
        size: format!("{} u64 starts", count(n)),
        // Compute-bound: no throughput figure says more than the time.
        work: Work::default(),
        out_len: n,
        reference: Some((expected, Tolerance::Exact)),
        vs_cuda: Tolerance::Exact,
        vs_cuda_nofma: Tolerance::Exact,
    };
    let (ours, stream) = (h.ours, h.stream);
    h.compare(
        spec,
        |out| ours.collatz(stream, cfg, first, out),
        // SAFETY: collatz.cu takes (unsigned long long, unsigned int*, unsigned int) with n
        // outputs.
        |f, out| unsafe { f.launch(stream, cfg, &[Arg::U64(first), ptr(stream, out), len]) },
    )
}
