use bench_harness::{Ctx, Failure, Outcome, Spec, Tolerance, Work, ptr, u32_arg};
use cuda_host::LaunchConfig;

use crate::kernels::ours;

pub fn run(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    let width = h.size(8192, 512);
    let height = h.size(4096, 256);
    let input = h.rng.vec(width * height, |r| r.f32_in(-1.0, 1.0));
    let mut expected = vec![0.0f32; width * height];
    for y in 0..height {
        for x in 0..width {
            expected[x * height + y] = input[y * width + x];
        }
    }
    let input_d = h.upload(&input)?;
    let cfg = LaunchConfig {
        grid_dim: (width.div_ceil(32) as u32, height.div_ceil(32) as u32, 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    };
    let (in_arg, w_arg, h_arg) = (h.ptr(&input_d), u32_arg(width)?, u32_arg(height)?);
    let spec = Spec {
        size: format!("{width} x {height} f32"),
        work: Work::bytes(8 * width * height),
        out_len: width * height,
        reference: Some((expected, Tolerance::Exact)),
        vs_cuda: Tolerance::Exact,
        vs_cuda_nofma: Tolerance::Exact,
    };
    let (ours, stream) = (h.ours, h.stream);
    h.compare(
        spec,
        |out| ours.transpose(stream, cfg, &input_d, width as u32, height as u32, out),
        // SAFETY: transpose.cu takes (const float*, unsigned int width, unsigned int height,
        // float*) with width x height elements each.
        |f, out| unsafe { f.launch(stream, cfg, &[in_arg, w_arg, h_arg, ptr(stream, out)]) },
    )
}
