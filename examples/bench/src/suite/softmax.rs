use bench_harness::{Ctx, Failure, Outcome, Spec, Tolerance, Work, ptr, u32_arg};
use cuda_host::LaunchConfig;

use crate::kernels::ours;

pub fn run(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    let cols = 1024;
    let rows = h.size(16384, 1024);
    let x = h.rng.vec(rows * cols, |r| r.f32_in(-8.0, 8.0));
    let expected = x
        .chunks(cols)
        .flat_map(|row| {
            let m = row.iter().fold(f32::NEG_INFINITY, |m, v| m.max(*v));
            let s: f64 = row.iter().map(|v| f64::from((v - m).exp())).sum();
            row.iter()
                .map(move |v| ((f64::from((v - m).exp())) / s) as f32)
        })
        .collect();
    let x_d = h.upload(&x)?;
    let cfg = LaunchConfig {
        grid_dim: (rows as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    let (x_arg, cols_arg) = (h.ptr(&x_d), u32_arg(cols)?);
    // The GPU sums in another order than the CPU, and its `expf` is not the CPU's: a few
    // ulps apart. Against CUDA C++ the code is the same but the math libraries may differ.
    let spec = Spec {
        size: format!("{rows} x {cols} f32"),
        work: Work::bytes(8 * rows * cols),
        out_len: rows * cols,
        reference: Some((
            expected,
            Tolerance::Close {
                rel: 1e-5,
                abs: 1e-12,
            },
        )),
        vs_cuda: Tolerance::Close {
            rel: 2e-6,
            abs: 1e-12,
        },
        vs_cuda_nofma: Tolerance::Close {
            rel: 2e-6,
            abs: 1e-12,
        },
    };
    let (ours, stream) = (h.ours, h.stream);
    h.compare(
        spec,
        |out| ours.softmax(stream, cfg, &x_d, cols as u32, out),
        // SAFETY: softmax.cu takes (const float*, unsigned int cols, float*) with rows x cols
        // elements each, one block per row.
        |f, out| unsafe { f.launch(stream, cfg, &[x_arg, cols_arg, ptr(stream, out)]) },
    )
}
