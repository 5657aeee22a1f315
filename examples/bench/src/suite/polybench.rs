//! PolyBench/GPU: the host side of each benchmark (inputs, the launches of every step, the
//! checks). A benchmark of several steps launches them in order in one timed run; buffers a
//! step writes that are not the output (`tmp` in 2mm, the centred data in covariance) are
//! separate for each contender, so that each contender's checked run starts from the same
//! state. Outputs of several arrays (bicg's `s` and `q`) are one buffer, the arrays one after
//! the other.
//!
//! Every output is checked bit for bit against CUDA C++ built with `--fmad=false` (the same
//! operations in the same order), and within a tolerance against the default build's fmas. The
//! sizes make a CPU reference too slow; the CUDA C++ builds are the reference.

use bench_harness::{Arg, Contender, Ctx, CudaFn, Failure, Outcome, Spec, Tolerance, Work, ptr};
use cuda_host::cudarc::driver::DevicePtr;
use cuda_host::{CudaSlice, CudaStream, LaunchConfig};

use crate::kernels::ours;
use crate::kernels::polybench::*;

type H<'a, 'b> = &'a mut Ctx<'b, ours::Module>;

/// A 2-D launch over `cols × rows` in PolyBench/GPU's 32 × 8 blocks (x along the columns).
fn grid_2d(cols: usize, rows: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (cols.div_ceil(32) as u32, rows.div_ceil(8) as u32, 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    }
}

/// A 1-D launch of `n` threads in PolyBench/GPU's blocks of 256.
fn grid_1d(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (n.div_ceil(256) as u32, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Element `offset` of `buffer` as a CUDA C++ pointer argument.
fn ptr_at(stream: &CudaStream, buffer: &CudaSlice<f32>, offset: usize) -> Arg {
    let (base, _guard) = buffer.device_ptr(stream);
    Arg::Ptr(base + 4 * offset as u64)
}

/// Zeroed buffers of `lens` elements for ours and for each CUDA C++ build.
struct Scratch {
    ours: Vec<CudaSlice<f32>>,
    cuda: Vec<(Contender, Vec<CudaSlice<f32>>)>,
}

impl Scratch {
    fn new(
        h: &Ctx<'_, ours::Module>,
        lens: &[usize],
        init: Option<&[f32]>,
    ) -> Result<Self, Failure> {
        let set = || -> Result<Vec<CudaSlice<f32>>, Failure> {
            lens.iter()
                .enumerate()
                .map(|(k, &n)| match (k, init) {
                    (0, Some(values)) => h.upload(values),
                    _ => Ok(h
                        .stream
                        .alloc_zeros::<f32>(n)
                        .map_err(cuda_host::Error::from)?),
                })
                .collect()
        };
        let ours = set()?;
        let cuda = h
            .cuda
            .iter()
            .map(|f| Ok((f.contender, set()?)))
            .collect::<Result<_, Failure>>()?;
        Ok(Scratch { ours, cuda })
    }

    fn of(cuda: &[(Contender, Vec<CudaSlice<f32>>)], f: &CudaFn) -> usize {
        cuda.iter()
            .position(|(c, _)| *c == f.contender)
            .unwrap_or(0)
    }
}

/// The tolerance against CUDA C++'s fmas: each product rounded once instead of twice.
const FMA: Tolerance = Tolerance::Close {
    rel: 1e-3,
    abs: 1e-3,
};

/// Whether this build's kernels contract `a * b + c` into fmas (`CUDA_OXIDE_FMAD=1` when it
/// was built, as `cargo oxide build --fmad` sets): they then agree with neither CUDA C++ build
/// bit for bit (LLVM and NVVM fuse different pairs), only within [FMA].
fn fmad_build() -> bool {
    matches!(
        option_env!("CUDA_OXIDE_FMAD"),
        Some("1" | "true" | "yes" | "on")
    )
}

fn spec(size: String, work: Work, out_len: usize, vs_cuda: Tolerance) -> Spec<f32> {
    Spec {
        size,
        work,
        out_len,
        reference: None,
        vs_cuda,
        vs_cuda_nofma: if fmad_build() { FMA } else { Tolerance::Exact },
    }
}

fn inputs(h: H, n: usize) -> Vec<f32> {
    h.rng.vec(n, |r| r.f32_in(0.0, 1.0))
}

#[cfg(feature = "pb_gemm")]
pub fn gemm(h: H) -> Result<Outcome, Failure> {
    let n = GEMM;
    let (a, b) = (inputs(h, n * n), inputs(h, n * n));
    let (a, b) = (h.upload(&a)?, h.upload(&b)?);
    let cfg = grid_2d(n, n);
    let (pa, pb, ours, s) = (h.ptr(&a), h.ptr(&b), h.ours, h.stream);
    h.compare(
        spec(
            format!("{n}^3"),
            Work::bytes_flops(12 * n * n, 3 * n * n * n),
            n * n,
            FMA,
        ),
        |c| ours.pb_gemm(s, cfg, &a, &b, c),
        // SAFETY: pb_gemm.cu takes (const float* a, const float* b, float* c), N x N each.
        |f, c| unsafe { f.launch(s, cfg, &[pa, pb, ptr(s, c)]) },
    )
}

#[cfg(feature = "pb_2mm")]
pub fn mm2(h: H) -> Result<Outcome, Failure> {
    let n = MM2;
    let (a, b, c) = (inputs(h, n * n), inputs(h, n * n), inputs(h, n * n));
    let (a, b, c) = (h.upload(&a)?, h.upload(&b)?, h.upload(&c)?);
    let Scratch { mut ours, cuda } = Scratch::new(h, &[n * n], None)?;
    let cfg = grid_2d(n, n);
    let (pa, pb, pc, m, s) = (h.ptr(&a), h.ptr(&b), h.ptr(&c), h.ours, h.stream);
    h.compare(
        spec(
            format!("{n}^3 x 2"),
            Work::bytes_flops(20 * n * n, 5 * n * n * n),
            n * n,
            FMA,
        ),
        |d| {
            m.pb_2mm(s, cfg, &a, &b, &mut ours[0])?;
            m.pb_2mm_2(s, cfg, &ours[0], &c, d)
        },
        // SAFETY: pb_2mm.cu's steps take (a, b, tmp) and (tmp, c, d), N x N each.
        |f, d| unsafe {
            let tmp = ptr(s, &cuda[Scratch::of(&cuda, f)].1[0]);
            f.launch_named("pb_2mm", s, cfg, &[pa, pb, tmp])?;
            f.launch_named("pb_2mm_2", s, cfg, &[tmp, pc, ptr(s, d)])
        },
    )
}

#[cfg(feature = "pb_3mm")]
pub fn mm3(h: H) -> Result<Outcome, Failure> {
    let n = MM3;
    let ins: Vec<Vec<f32>> = (0..4).map(|_| inputs(h, n * n)).collect();
    let ins = ins
        .iter()
        .map(|v| h.upload(v))
        .collect::<Result<Vec<_>, _>>()?;
    let Scratch { mut ours, cuda } = Scratch::new(h, &[n * n, n * n], None)?;
    let cfg = grid_2d(n, n);
    let p: Vec<Arg> = ins.iter().map(|b| h.ptr(b)).collect();
    let (m, s) = (h.ours, h.stream);
    h.compare(
        spec(
            format!("{n}^3 x 3"),
            Work::bytes_flops(28 * n * n, 6 * n * n * n),
            n * n,
            FMA,
        ),
        |g| {
            let [e, f] = &mut ours[..] else {
                unreachable!()
            };
            m.pb_3mm(s, cfg, &ins[0], &ins[1], e)?;
            m.pb_3mm(s, cfg, &ins[2], &ins[3], f)?;
            m.pb_3mm(s, cfg, e, f, g)
        },
        // SAFETY: pb_3mm.cu takes (a, b, e), N x N each.
        |f, g| unsafe {
            let set = &cuda[Scratch::of(&cuda, f)].1;
            let (e, ff) = (ptr(s, &set[0]), ptr(s, &set[1]));
            f.launch(s, cfg, &[p[0], p[1], e])?;
            f.launch(s, cfg, &[p[2], p[3], ff])?;
            f.launch(s, cfg, &[e, ff, ptr(s, g)])
        },
    )
}

#[cfg(feature = "pb_atax")]
pub fn atax(h: H) -> Result<Outcome, Failure> {
    let n = ATAX;
    let (a, x) = (inputs(h, n * n), inputs(h, n));
    let (a, x) = (h.upload(&a)?, h.upload(&x)?);
    let Scratch { mut ours, cuda } = Scratch::new(h, &[n], None)?;
    let cfg = grid_1d(n);
    let (pa, px, m, s) = (h.ptr(&a), h.ptr(&x), h.ours, h.stream);
    h.compare(
        spec(
            format!("{n}^2"),
            Work::bytes_flops(8 * n * n, 4 * n * n),
            n,
            FMA,
        ),
        |y| {
            m.pb_atax(s, cfg, &a, &x, &mut ours[0])?;
            m.pb_atax_2(s, cfg, &a, &ours[0], y)
        },
        // SAFETY: pb_atax.cu's steps take (a, x, tmp) and (a, tmp, y).
        |f, y| unsafe {
            let tmp = ptr(s, &cuda[Scratch::of(&cuda, f)].1[0]);
            f.launch_named("pb_atax", s, cfg, &[pa, px, tmp])?;
            f.launch_named("pb_atax_2", s, cfg, &[pa, tmp, ptr(s, y)])
        },
    )
}

#[cfg(feature = "pb_bicg")]
pub fn bicg(h: H) -> Result<Outcome, Failure> {
    let n = BICG;
    let (a, r, p) = (inputs(h, n * n), inputs(h, n), inputs(h, n));
    let (a, r, p) = (h.upload(&a)?, h.upload(&r)?, h.upload(&p)?);
    let cfg = grid_1d(n);
    let (pa, pr, pp, m, st) = (h.ptr(&a), h.ptr(&r), h.ptr(&p), h.ours, h.stream);
    h.compare(
        spec(
            format!("{n}^2, s and q"),
            Work::bytes_flops(8 * n * n, 4 * n * n),
            2 * n,
            FMA,
        ),
        |out| {
            let (mut s, mut q) = out.split_at_mut(n);
            m.pb_bicg(st, cfg, &a, &r, &mut s)?;
            m.pb_bicg_2(st, cfg, &a, &p, &mut q)
        },
        // SAFETY: pb_bicg.cu's steps take (a, r, s) and (a, p, q), s and q of N each.
        |f, out| unsafe {
            f.launch_named("pb_bicg", st, cfg, &[pa, pr, ptr_at(st, out, 0)])?;
            f.launch_named("pb_bicg_2", st, cfg, &[pa, pp, ptr_at(st, out, n)])
        },
    )
}

#[cfg(feature = "pb_mvt")]
pub fn mvt(h: H) -> Result<Outcome, Failure> {
    let n = MVT;
    let (a, y1, y2) = (inputs(h, n * n), inputs(h, n), inputs(h, n));
    let (a, y1, y2) = (h.upload(&a)?, h.upload(&y1)?, h.upload(&y2)?);
    let cfg = grid_1d(n);
    let (pa, p1, p2, m, s) = (h.ptr(&a), h.ptr(&y1), h.ptr(&y2), h.ours, h.stream);
    h.compare(
        spec(
            format!("{n}^2, x1 and x2"),
            Work::bytes_flops(8 * n * n, 4 * n * n),
            2 * n,
            FMA,
        ),
        |out| {
            let (mut x1, mut x2) = out.split_at_mut(n);
            m.pb_mvt(s, cfg, &a, &mut x1, &y1)?;
            m.pb_mvt_2(s, cfg, &a, &mut x2, &y2)
        },
        // SAFETY: pb_mvt.cu's steps take (a, x1, y1) and (a, x2, y2), vectors of N.
        |f, out| unsafe {
            f.launch_named("pb_mvt", s, cfg, &[pa, ptr_at(s, out, 0), p1])?;
            f.launch_named("pb_mvt_2", s, cfg, &[pa, ptr_at(s, out, n), p2])
        },
    )
}

#[cfg(feature = "pb_gesummv")]
pub fn gesummv(h: H) -> Result<Outcome, Failure> {
    let n = GESUMMV;
    let (a, b, x) = (inputs(h, n * n), inputs(h, n * n), inputs(h, n));
    let (a, b, x) = (h.upload(&a)?, h.upload(&b)?, h.upload(&x)?);
    let Scratch { mut ours, cuda } = Scratch::new(h, &[n], None)?;
    let cfg = grid_1d(n);
    let (pa, pb, px, m, s) = (h.ptr(&a), h.ptr(&b), h.ptr(&x), h.ours, h.stream);
    h.compare(
        spec(
            format!("{n}^2"),
            Work::bytes_flops(8 * n * n, 4 * n * n),
            n,
            FMA,
        ),
        |y| m.pb_gesummv(s, cfg, &a, &b, &x, y, &mut ours[0]),
        // SAFETY: pb_gesummv.cu takes (a, b, x, y, tmp).
        |f, y| unsafe {
            let tmp = ptr(s, &cuda[Scratch::of(&cuda, f)].1[0]);
            f.launch(s, cfg, &[pa, pb, px, ptr(s, y), tmp])
        },
    )
}

#[cfg(feature = "pb_syrk")]
pub fn syrk(h: H) -> Result<Outcome, Failure> {
    let n = SYRK;
    let a = inputs(h, n * n);
    let a = h.upload(&a)?;
    let cfg = grid_2d(n, n);
    let (pa, m, s) = (h.ptr(&a), h.ours, h.stream);
    h.compare(
        spec(
            format!("{n}^3"),
            Work::bytes_flops(12 * n * n, 3 * n * n * n),
            n * n,
            FMA,
        ),
        |c| m.pb_syrk(s, cfg, &a, c),
        // SAFETY: pb_syrk.cu takes (a, c), N x N each.
        |f, c| unsafe { f.launch(s, cfg, &[pa, ptr(s, c)]) },
    )
}

#[cfg(feature = "pb_syr2k")]
pub fn syr2k(h: H) -> Result<Outcome, Failure> {
    let n = SYR2K;
    let (a, b) = (inputs(h, n * n), inputs(h, n * n));
    let (a, b) = (h.upload(&a)?, h.upload(&b)?);
    let cfg = grid_2d(n, n);
    let (pa, pb, m, s) = (h.ptr(&a), h.ptr(&b), h.ours, h.stream);
    h.compare(
        spec(
            format!("{n}^3"),
            Work::bytes_flops(16 * n * n, 6 * n * n * n),
            n * n,
            FMA,
        ),
        |c| m.pb_syr2k(s, cfg, &a, &b, c),
        // SAFETY: pb_syr2k.cu takes (a, b, c), N x N each.
        |f, c| unsafe { f.launch(s, cfg, &[pa, pb, ptr(s, c)]) },
    )
}

#[cfg(feature = "pb_conv2d")]
pub fn conv2d(h: H) -> Result<Outcome, Failure> {
    let n = CONV2D;
    let a = inputs(h, n * n);
    let a = h.upload(&a)?;
    let cfg = grid_2d(n, n);
    let (pa, m, s) = (h.ptr(&a), h.ours, h.stream);
    h.compare(
        spec(
            format!("{n}^2"),
            Work::bytes_flops(8 * n * n, 17 * n * n),
            n * n,
            FMA,
        ),
        |b| m.pb_conv2d(s, cfg, &a, b),
        // SAFETY: pb_conv2d.cu takes (a, b), N x N each.
        |f, b| unsafe { f.launch(s, cfg, &[pa, ptr(s, b)]) },
    )
}

#[cfg(feature = "pb_conv3d")]
pub fn conv3d(h: H) -> Result<Outcome, Failure> {
    let n = CONV3D;
    let a = inputs(h, n * n * n);
    let a = h.upload(&a)?;
    let cfg = grid_2d(n, n);
    let (pa, m, s) = (h.ptr(&a), h.ours, h.stream);
    h.compare(
        spec(
            format!("{n}^3"),
            Work::bytes_flops(8 * n * n * n, 30 * n * n * n),
            n * n * n,
            FMA,
        ),
        |b| (1..n as u32 - 1).try_for_each(|i| m.pb_conv3d(s, cfg, &a, b, i)),
        // SAFETY: pb_conv3d.cu takes (a, b, unsigned int i), N^3 each.
        |f, b| {
            (1..n as u32 - 1)
                .try_for_each(|i| unsafe { f.launch(s, cfg, &[pa, ptr(s, b), Arg::U32(i)]) })
        },
    )
}

#[cfg(feature = "pb_covariance")]
pub fn covariance(h: H) -> Result<Outcome, Failure> {
    let n = COVAR;
    let data = inputs(h, n * n);
    let Scratch { mut ours, cuda } = Scratch::new(h, &[n * n, n], Some(&data))?;
    let (c1, c2) = (grid_1d(n), grid_2d(n, n));
    let (m, s) = (h.ours, h.stream);
    h.compare(
        spec(
            format!("{n}^3 / 2"),
            Work::bytes_flops(12 * n * n, n * n * n),
            n * n,
            FMA,
        ),
        |sym| {
            let [data, mean] = &mut ours[..] else {
                unreachable!()
            };
            m.pb_mean(s, c1, data, mean)?;
            m.pb_center(s, c2, mean, data)?;
            m.pb_covariance(s, c1, data, sym)
        },
        // SAFETY: pb_covariance.cu's steps take (data, mean), (mean, data), (data, symmat).
        |f, sym| unsafe {
            let set = &cuda[Scratch::of(&cuda, f)].1;
            let (data, mean) = (ptr(s, &set[0]), ptr(s, &set[1]));
            f.launch_named("pb_mean", s, c1, &[data, mean])?;
            f.launch_named("pb_center", s, c2, &[mean, data])?;
            f.launch_named("pb_covariance", s, c1, &[data, ptr(s, sym)])
        },
    )
}

#[cfg(feature = "pb_correlation")]
pub fn correlation(h: H) -> Result<Outcome, Failure> {
    let n = COVAR;
    let data = inputs(h, n * n);
    let Scratch { mut ours, cuda } = Scratch::new(h, &[n * n, n, n], Some(&data))?;
    let (c1, c2) = (grid_1d(n), grid_2d(n, n));
    let (m, s) = (h.ours, h.stream);
    h.compare(
        spec(
            format!("{n}^3 / 2"),
            Work::bytes_flops(12 * n * n, n * n * n),
            n * n,
            FMA,
        ),
        |sym| {
            let [data, mean, std] = &mut ours[..] else {
                unreachable!()
            };
            m.pb_mean(s, c1, data, mean)?;
            m.pb_std(s, c1, data, mean, std)?;
            m.pb_normalize(s, c2, mean, std, data)?;
            m.pb_correlation(s, c1, data, sym)
        },
        // SAFETY: pb_correlation.cu's steps take (data, mean), (data, mean, std),
        // (mean, std, data) and (data, symmat).
        |f, sym| unsafe {
            let set = &cuda[Scratch::of(&cuda, f)].1;
            let (data, mean, std) = (ptr(s, &set[0]), ptr(s, &set[1]), ptr(s, &set[2]));
            f.launch_named("pb_mean", s, c1, &[data, mean])?;
            f.launch_named("pb_std", s, c1, &[data, mean, std])?;
            f.launch_named("pb_normalize", s, c2, &[mean, std, data])?;
            f.launch_named("pb_correlation", s, c1, &[data, ptr(s, sym)])
        },
    )
}

#[cfg(feature = "pb_fdtd2d")]
pub fn fdtd2d(h: H) -> Result<Outcome, Failure> {
    let n = FDTD;
    let fict: Vec<f32> = (0..FDTD_STEPS).map(|t| t as f32).collect();
    let fict = h.upload(&fict)?;
    let cfg = grid_2d(n, n);
    let (pf, m, s) = (h.ptr(&fict), h.ours, h.stream);
    // The output holds ex (N x (N + 1)), ey ((N + 1) x N) and hz (N x N), from zero.
    let (ex_len, ey_len) = (n * (n + 1), (n + 1) * n);
    h.compare(
        spec(
            format!("{n}^2 x {FDTD_STEPS} steps"),
            Work::bytes_flops(FDTD_STEPS * 40 * n * n, FDTD_STEPS * 11 * n * n),
            ex_len + ey_len + n * n,
            FMA,
        ),
        |out| {
            let (mut ex, mut rest) = out.split_at_mut(ex_len);
            let (mut ey, mut hz) = rest.split_at_mut(ey_len);
            (0..FDTD_STEPS as u32).try_for_each(|t| {
                m.pb_fdtd2d(s, cfg, &fict, &mut ey, &hz, t)?;
                m.pb_fdtd2d_2(s, cfg, &mut ex, &hz)?;
                m.pb_fdtd2d_3(s, cfg, &ex, &ey, &mut hz)
            })
        },
        // SAFETY: pb_fdtd2d.cu's steps take (fict, ey, hz, unsigned int t), (ex, hz) and
        // (ex, ey, hz), sized as above.
        |f, out| {
            let (ex, ey, hz) = (
                ptr_at(s, out, 0),
                ptr_at(s, out, ex_len),
                ptr_at(s, out, ex_len + ey_len),
            );
            (0..FDTD_STEPS as u32).try_for_each(|t| unsafe {
                f.launch_named("pb_fdtd2d", s, cfg, &[pf, ey, hz, Arg::U32(t)])?;
                f.launch_named("pb_fdtd2d_2", s, cfg, &[ex, hz])?;
                f.launch_named("pb_fdtd2d_3", s, cfg, &[ex, ey, hz])
            })
        },
    )
}

#[cfg(feature = "pb_gramschmidt")]
pub fn gramschmidt(h: H) -> Result<Outcome, Failure> {
    let n = GRAMSCHMIDT;
    let a = h.rng.vec(n * n, |r| r.f32_in(0.5, 1.5));
    let Scratch { mut ours, cuda } = Scratch::new(h, &[n * n, n * n], Some(&a))?;
    let (one, c1) = (grid_1d(1), grid_1d(n));
    let (m, s) = (h.ours, h.stream);
    // The output is r; a (updated in place) and q are each contender's own.
    h.compare(
        spec(
            format!("{n}^3"),
            Work::bytes_flops(12 * n * n * n / 2, 2 * n * n * n),
            n * n,
            FMA,
        ),
        |r| {
            let [a, q] = &mut ours[..] else {
                unreachable!()
            };
            (0..n as u32).try_for_each(|k| {
                m.pb_gramschmidt(s, one, a, r, k)?;
                m.pb_gramschmidt_2(s, c1, a, r, q, k)?;
                m.pb_gramschmidt_3(s, c1, a, r, q, k)
            })
        },
        // SAFETY: pb_gramschmidt.cu's steps take (a, r, k), (a, r, q, k), (a, r, q, k).
        |f, r| {
            let set = &cuda[Scratch::of(&cuda, f)].1;
            let (a, q, r) = (ptr(s, &set[0]), ptr(s, &set[1]), ptr(s, r));
            (0..n as u32).try_for_each(|k| unsafe {
                f.launch_named("pb_gramschmidt", s, one, &[a, r, Arg::U32(k)])?;
                f.launch_named("pb_gramschmidt_2", s, c1, &[a, r, q, Arg::U32(k)])?;
                f.launch_named("pb_gramschmidt_3", s, c1, &[a, r, q, Arg::U32(k)])
            })
        },
    )
}
