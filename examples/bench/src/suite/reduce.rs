use bench_harness::{Ctx, Failure, Outcome, Spec, Tolerance, Work, count, grid_1d, ptr, u32_arg};

use crate::kernels::ours;

/// One block's sum in the kernels' order: a tree over 256 values down to 32, then the warp's
/// `shuffle_down` steps (a lane whose source is past the warp adds its own value).
fn block_sum(block: &[f32]) -> f32 {
    let mut tile = block.to_vec();
    let mut stride = 128;
    while stride >= 32 {
        for t in 0..stride {
            tile[t] += tile[t + stride];
        }
        stride /= 2;
    }
    let mut lanes = tile[..32].to_vec();
    let mut offset = 16;
    while offset > 0 {
        lanes = (0..32)
            .map(|t| {
                lanes[t]
                    + if t + offset < 32 {
                        lanes[t + offset]
                    } else {
                        lanes[t]
                    }
            })
            .collect();
        offset /= 2;
    }
    lanes[0]
}

pub fn run(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    let n = h.size(1 << 25, 1 << 16);
    let blocks = n / 256;
    let x = h.rng.vec(n, |r| r.f32_in(-1.0, 1.0));
    let expected = x.chunks(256).map(block_sum).collect();
    let x_d = h.upload(&x)?;
    let cfg = grid_1d(n, 256)?;
    let (x_arg, n_arg) = (h.ptr(&x_d), u32_arg(n)?);
    let spec = Spec {
        size: format!("{} f32", count(n)),
        work: Work::bytes_flops(4 * n + 4 * blocks, n),
        out_len: blocks,
        reference: Some((expected, Tolerance::Exact)),
        vs_cuda: Tolerance::Exact,
        vs_cuda_nofma: Tolerance::Exact,
    };
    let (ours, stream) = (h.ours, h.stream);
    h.compare(
        spec,
        |partial| ours.reduce(stream, cfg, &x_d, partial),
        // SAFETY: reduce.cu takes (const float*, unsigned int n, float* partial) with n
        // inputs and n / 256 outputs.
        |f, partial| unsafe { f.launch(stream, cfg, &[x_arg, n_arg, ptr(stream, partial)]) },
    )
}
