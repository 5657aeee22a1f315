use bench_harness::{
    Arg, Ctx, Failure, Outcome, Spec, Tolerance, Work, count, grid_1d, ptr, u32_arg,
};

use cuda_host::{CudaSlice, CudaStream, LaunchConfig};

use crate::kernels::ours;

/// `saxpy`: Rust's semantics, the product rounded, then the sum.
#[cfg(feature = "saxpy")]
pub fn run(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    run_variant(h, false, |o, s, cfg, a, x, y, out| {
        o.saxpy(s, cfg, a, x, y, out)
    })
}

/// `saxpy_fmad`: the same kernel with `#[kernel(fmad)]`, one `fma` like nvcc's default.
#[cfg(feature = "saxpy_fmad")]
pub fn run_fmad(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    run_variant(h, true, |o, s, cfg, a, x, y, out| {
        o.saxpy_fmad(s, cfg, a, x, y, out)
    })
}

/// `saxpy_generic`: the generic kernel `axpy::<f32>`, the same code as `saxpy`.
#[cfg(feature = "saxpy_generic")]
pub fn run_generic(h: &mut Ctx<'_, ours::Module>) -> Result<Outcome, Failure> {
    run_variant(h, false, |o, s, cfg, a, x, y, out| {
        o.axpy::<f32>(s, cfg, a, x, y, out)
    })
}

/// Launches one of the Rust kernels: (module, stream, config, alpha, x, y, out).
type Launch = fn(
    &ours::Module,
    &CudaStream,
    LaunchConfig,
    f32,
    &CudaSlice<f32>,
    &CudaSlice<f32>,
    &mut CudaSlice<f32>,
) -> Result<(), cuda_host::Error>;

fn run_variant(
    h: &mut Ctx<'_, ours::Module>,
    fmad: bool,
    launch: Launch,
) -> Result<Outcome, Failure> {
    let n = h.size(1 << 25, 1 << 16);
    let alpha = 1.7f32;
    let x = h.rng.vec(n, |r| r.f32_in(-10.0, 10.0));
    let y = h.rng.vec(n, |r| r.f32_in(-10.0, 10.0));
    // Rust rounds the product, then the sum: exactly what the CPU does. With fmad the kernel
    // rounds once, as `mul_add` does on the CPU.
    let expected = x
        .iter()
        .zip(&y)
        .map(|(x, y)| {
            if fmad {
                alpha.mul_add(*x, *y)
            } else {
                alpha * x + y
            }
        })
        .collect();
    let (x_d, y_d) = (h.upload(&x)?, h.upload(&y)?);
    let cfg = grid_1d(n, 256)?;
    let args = [h.ptr(&x_d), h.ptr(&y_d)];
    let len = u32_arg(n)?;
    let spec = Spec {
        size: format!("{} f32", count(n)),
        work: Work::bytes_flops(12 * n, 2 * n),
        out_len: n,
        reference: Some((expected, Tolerance::Exact)),
        // The fma rounds once: the separately rounded result differs by at most an ulp of the
        // product.
        vs_cuda: if fmad {
            Tolerance::Exact
        } else {
            Tolerance::Close {
                rel: 1e-6,
                abs: 1e-5,
            }
        },
        vs_cuda_nofma: if fmad {
            Tolerance::Close {
                rel: 1e-6,
                abs: 1e-5,
            }
        } else {
            Tolerance::Exact
        },
    };
    let (ours, stream) = (h.ours, h.stream);
    h.compare(
        spec,
        |out| launch(ours, stream, cfg, alpha, &x_d, &y_d, out),
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
