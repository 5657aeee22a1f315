//! Warpgroup matrix multiplies (`cuda_device::wgmma`, sm_90a: build with `--arch sm_90a`):
//! one warpgroup computes `D = A · Bᵀ` (f32 accumulators) for single tiles of every input type:
//! 64 × 64 with K = 64 for bf16 and f16, 64 × N with K = 32 for tf32 and K = 128 for fp8
//! (e4m3, e5m2 and both mixes; N = 64, 128, 256): one 128-byte row of K per operand row, four
//! `mma_async` K steps of 32 bytes. And a 64 × 128 bf16 tile over a K loop of runtime length
//! (the accumulators stay in registers across the loop). `A` (M × K) and `B` (N × K) are
//! row-major, so both are K-major; TMA loads them into 128-byte swizzled shared memory, which
//! the matrix descriptors describe.
//!
//! Checks: bf16/f16 inputs are multiples of 1/4 in [-2, 2], so every product and sum is exact
//! in f32 and the results must equal the CPU's exactly. tf32 inputs are full f32 values in
//! [-1, 1]: the CPU computes the product in f64 twice, with the inputs' low 13 mantissa bits
//! dropped (truncation) and rounded to nearest, and says which the GPU matches (within
//! 2⁻¹⁸ · Σ|a·b|, far below the 2⁻¹¹ a differently rounded input moves a product). fp8 inputs
//! are encoded here (round to nearest even, saturating) and decoded for the CPU's f64
//! product; the tensor core's fp8 sums are not exact f32 sums, so the check allows
//! 2⁻⁹ · Σ|a·b| and prints the worst error seen.

use std::process::ExitCode;

use cuda_host::tma::{self, Swizzle};
use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

/// Rows of a tile (one warpgroup's `M`).
pub const M: usize = 64;
/// K of one TMA box: 64 bf16 = one 128-byte swizzled row.
pub const KB: usize = 64;
/// Columns of the loop kernel's tile.
pub const N_LOOP: usize = 128;
/// Bytes of K in one swizzled row, the K of one TMA box: 64 bf16, 32 tf32, 128 fp8.
pub const ROW_BYTES: usize = 128;
/// The widest single tile's N (its `B` box has this many rows).
pub const N_MAX: usize = 256;

#[cuda_module]
mod kernels {
    use cuda_device::mbarrier::Barrier;
    use cuda_device::shared::shared_address;
    use cuda_device::tma::{self, TensorMap};
    use cuda_device::wgmma::{self, Fragment, Input, Swizzle};
    use cuda_device::{SharedArray, kernel, sync, thread};

    use super::{KB, M, N_LOOP, N_MAX, ROW_BYTES};

    /// The descriptor of K step `kk` (32 bytes: 16 bf16/f16, 8 tf32 or 32 fp8 elements) of a
    /// K-major tile of 128-byte swizzled rows at shared address `base`: 8-row groups 1024
    /// bytes apart.
    fn k_step(base: u32, kk: u32) -> u64 {
        wgmma::descriptor(base + kk * 32, 16, 1024, Swizzle::B128)
    }

    /// `d` (64 × N, row-major, N = `F::N`) = `A[0..64, 0..K] · B[0..N, 0..K]ᵀ` where a row
    /// of K elements is 128 bytes (K = 64 bf16/f16, 32 tf32, 128 fp8), for one block of 128
    /// threads: four `mma_async` steps of 32 bytes of K each.
    fn single_tile<F: Fragment>(a: &TensorMap, b: &TensorMap, d: &mut [f32], input: Input) {
        static mut BAR: SharedArray<Barrier, 1> = SharedArray::UNINIT;
        static mut SA: SharedArray<u8, { M * ROW_BYTES }, 1024> = SharedArray::UNINIT;
        static mut SB: SharedArray<u8, { N_MAX * ROW_BYTES }, 1024> = SharedArray::UNINIT;
        let n = F::N;
        let t = thread::threadIdx_x() as usize;
        let sa: *mut u8 = (&raw mut SA).cast();
        let sb: *mut u8 = (&raw mut SB).cast();
        // SAFETY: shared memory used by nothing else; every thread calls `init`.
        let mut bar = unsafe { Barrier::init((&raw mut BAR).cast(), 1) };
        if t == 0 {
            let _ = bar.arrive_expect_tx(((M + n) * ROW_BYTES) as u32);
            // SAFETY: the tiles hold the boxes (`n` ≤ N_MAX rows), aligned to 1024 bytes for
            // the swizzle.
            unsafe {
                tma::load_2d(a, sa, 0, 0, &bar);
                tma::load_2d(b, sb, 0, 0, &bar);
            }
        }
        bar.wait();
        let (a0, b0) = (shared_address(sa), shared_address(sb));
        let mut acc = F::zeroed();
        wgmma::fence();
        for kk in 0..(ROW_BYTES / 32) as u32 {
            // SAFETY: the whole warpgroup runs this; the tiles were loaded (barrier phase
            // complete); `acc` is read only after the wait below.
            acc = unsafe { wgmma::mma_async(acc, k_step(a0, kk), k_step(b0, kk), input, kk > 0) };
        }
        wgmma::commit_group();
        wgmma::wait_group::<0>();
        acc.for_each(|i, value| {
            let (row, col) = wgmma::fragment_position(t, i);
            d[row * n + col] = value;
        });
    }

    /// [single_tile] on bf16 inputs, N = 64.
    #[kernel]
    pub fn tile_bf16(a: &TensorMap, b: &TensorMap, d: &mut [f32]) {
        single_tile::<[f32; 32]>(a, b, d, Input::Bf16);
    }

    /// [single_tile] on f16 inputs, N = 64.
    #[kernel]
    pub fn tile_f16(a: &TensorMap, b: &TensorMap, d: &mut [f32]) {
        single_tile::<[f32; 32]>(a, b, d, Input::F16);
    }

    /// [single_tile] on tf32 inputs, N = 64.
    #[kernel]
    pub fn tile_tf32_n64(a: &TensorMap, b: &TensorMap, d: &mut [f32]) {
        single_tile::<[f32; 32]>(a, b, d, Input::Tf32);
    }

    /// [single_tile] on tf32 inputs, N = 256.
    #[kernel]
    pub fn tile_tf32_n256(a: &TensorMap, b: &TensorMap, d: &mut [f32]) {
        single_tile::<[f32; 128]>(a, b, d, Input::Tf32);
    }

    /// [single_tile] on e4m3 inputs, N = 64.
    #[kernel]
    pub fn tile_e4m3_n64(a: &TensorMap, b: &TensorMap, d: &mut [f32]) {
        single_tile::<[f32; 32]>(a, b, d, Input::E4m3);
    }

    /// [single_tile] on e4m3 inputs, N = 128.
    #[kernel]
    pub fn tile_e4m3_n128(a: &TensorMap, b: &TensorMap, d: &mut [f32]) {
        single_tile::<[f32; 64]>(a, b, d, Input::E4m3);
    }

    /// [single_tile] on e5m2 inputs, N = 256.
    #[kernel]
    pub fn tile_e5m2_n256(a: &TensorMap, b: &TensorMap, d: &mut [f32]) {
        single_tile::<[f32; 128]>(a, b, d, Input::E5m2);
    }

    /// [single_tile] on e4m3 `A` and e5m2 `B`, N = 128.
    #[kernel]
    pub fn tile_e4m3_e5m2_n128(a: &TensorMap, b: &TensorMap, d: &mut [f32]) {
        single_tile::<[f32; 64]>(a, b, d, Input::E4m3E5m2);
    }

    /// [single_tile] on e5m2 `A` and e4m3 `B`, N = 64.
    #[kernel]
    pub fn tile_e5m2_e4m3_n64(a: &TensorMap, b: &TensorMap, d: &mut [f32]) {
        single_tile::<[f32; 32]>(a, b, d, Input::E5m2E4m3);
    }

    /// `d` (64 × 128) = `A[0..64, 0..K] · B[0..128, 0..K]ᵀ` with `K = 64 · k_tiles`: per K
    /// tile, a TMA load of both boxes, four `mma_async` steps of 16 into the same
    /// accumulators, and a block barrier before the next load overwrites the tiles.
    #[kernel]
    pub fn k_loop_bf16(a: &TensorMap, b: &TensorMap, d: &mut [f32], k_tiles: u32) {
        static mut BAR: SharedArray<Barrier, 1> = SharedArray::UNINIT;
        static mut SA: SharedArray<u16, { M * KB }, 1024> = SharedArray::UNINIT;
        static mut SB: SharedArray<u16, { N_LOOP * KB }, 1024> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let sa: *mut u16 = (&raw mut SA).cast();
        let sb: *mut u16 = (&raw mut SB).cast();
        // SAFETY: as above.
        let mut bar = unsafe { Barrier::init((&raw mut BAR).cast(), 1) };
        let (a0, b0) = (shared_address(sa), shared_address(sb));
        let mut acc = <[f32; 64]>::zeroed();
        for kt in 0..k_tiles {
            if t == 0 {
                let _ = bar.arrive_expect_tx(((M + N_LOOP) * KB * 2) as u32);
                let k = (kt as usize * KB) as i32;
                // SAFETY: the tiles are free (block barrier at the end of the last step).
                unsafe {
                    tma::load_2d(a, sa, k, 0, &bar);
                    tma::load_2d(b, sb, k, 0, &bar);
                }
            }
            bar.wait();
            wgmma::fence();
            for kk in 0..(KB / 16) as u32 {
                // SAFETY: as above.
                acc = unsafe {
                    wgmma::mma_async(
                        acc,
                        k_step(a0, kk),
                        k_step(b0, kk),
                        Input::Bf16,
                        kt > 0 || kk > 0,
                    )
                };
            }
            wgmma::commit_group();
            wgmma::wait_group::<0>();
            sync::syncthreads();
        }
        acc.for_each(|i, value| {
            let (row, col) = wgmma::fragment_position(t, i);
            d[row * N_LOOP + col] = value;
        });
    }
}

fn main() -> ExitCode {
    run_example("wgmma_tile", run)
}

/// The bf16 bits of `v` (exact for the inputs used here).
fn bf16_bits(v: f32) -> u16 {
    (v.to_bits() >> 16) as u16
}

/// The f16 bits of `v`, a normal number or zero with at most 11 significant bits.
fn f16_bits(v: f32) -> u16 {
    if v == 0.0 {
        return 0;
    }
    let bits = v.to_bits();
    let sign = ((bits >> 31) as u16) << 15;
    let exp = ((bits >> 23) & 0xff) as i32 - 127 + 15;
    let mantissa = ((bits >> 13) & 0x3ff) as u16;
    sign | ((exp as u16) << 10) | mantissa
}

/// An fp8 format of `wgmma` (the OCP FP8 formats, as `__nv_fp8_e4m3` / `__nv_fp8_e5m2`).
#[derive(Clone, Copy, Debug)]
enum Fp8 {
    /// 4 exponent bits (bias 7), 3 mantissa bits; no infinities, `S.1111.111` is NaN.
    E4m3,
    /// 5 exponent bits (bias 15), 2 mantissa bits; infinities and NaNs as in IEEE 754.
    E5m2,
}

impl Fp8 {
    fn name(self) -> &'static str {
        match self {
            Fp8::E4m3 => "e4m3",
            Fp8::E5m2 => "e5m2",
        }
    }

    /// The value of `code`.
    fn decode(self, code: u8) -> f64 {
        let (exponent_bits, mantissa_bits, bias) = match self {
            Fp8::E4m3 => (4, 3, 7),
            Fp8::E5m2 => (5, 2, 15),
        };
        let sign = if code & 0x80 != 0 { -1.0 } else { 1.0 };
        let e = i32::from((code & 0x7f) >> mantissa_bits);
        let m = i32::from(code & ((1 << mantissa_bits) - 1));
        let e_max = (1 << exponent_bits) - 1;
        match self {
            Fp8::E4m3 if e == e_max && m == (1 << mantissa_bits) - 1 => return f64::NAN,
            Fp8::E5m2 if e == e_max && m == 0 => return sign * f64::INFINITY,
            Fp8::E5m2 if e == e_max => return f64::NAN,
            _ => {}
        }
        let scale = f64::from(1 << mantissa_bits);
        let magnitude = if e == 0 {
            f64::from(m) / scale * 2f64.powi(1 - bias)
        } else {
            (1.0 + f64::from(m) / scale) * 2f64.powi(e - bias)
        };
        sign * magnitude
    }

    /// The code of the finite value nearest to `v`, ties to the even code, values beyond the
    /// largest finite one saturating to it (CUDA's `__NV_SATFINITE` conversion).
    fn encode(self, v: f32) -> u8 {
        let sign = if v.is_sign_negative() { 0x80 } else { 0 };
        let magnitude = f64::from(v.abs());
        let mut best = (0u8, f64::INFINITY);
        for code in 0..0x80u8 {
            let value = self.decode(code);
            if !value.is_finite() {
                continue;
            }
            let error = (value - magnitude).abs();
            // Codes grow with their values: on a tie, keep the even one.
            if error < best.1 || (error == best.1 && code % 2 == 0) {
                best = (code, error);
            }
        }
        sign | best.0
    }
}

/// `v` as the tensor core reads a tf32 if it drops the low 13 mantissa bits.
fn tf32_truncated(v: f32) -> f64 {
    f64::from(f32::from_bits(v.to_bits() & !0x1fff))
}

/// `v` rounded to the nearest tf32 (10 mantissa bits), ties to even.
fn tf32_nearest(v: f32) -> f64 {
    let bits = v.to_bits();
    let lsb = (bits >> 13) & 1;
    f64::from(f32::from_bits((bits + 0xfff + lsb) & !0x1fff))
}

/// `D = A · Bᵀ` in f64 (`A` is `m × k`, `B` is `n × k`, already as the tensor core reads
/// them), and `Σ|a·b|` of each entry (the scale of its rounding errors).
fn matmul_nt_f64(a: &[f64], b: &[f64], m: usize, n: usize, k: usize) -> (Vec<f64>, Vec<f64>) {
    let mut d = vec![0.0; m * n];
    let mut scale = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            for x in 0..k {
                let p = a[i * k + x] * b[j * k + x];
                d[i * n + j] += p;
                scale[i * n + j] += p.abs();
            }
        }
    }
    (d, scale)
}

/// How far `got` is from `exact` where each entry may be off by `rel · scale`: the number of
/// entries outside and the worst error as a multiple of the allowed one.
fn compare(got: &[f32], exact: &[f64], scale: &[f64], rel: f64) -> (usize, f64) {
    let mut outside = 0;
    let mut worst = 0.0f64;
    for ((&g, &e), &s) in got.iter().zip(exact).zip(scale) {
        let ratio = (f64::from(g) - e).abs() / (rel * s + 1e-30);
        if ratio.is_nan() || ratio > 1.0 {
            outside += 1;
        }
        worst = worst.max(if ratio.is_nan() { f64::INFINITY } else { ratio });
    }
    (outside, worst)
}

/// One verdict line for a tolerance check.
fn verdict_line(what: &str, values: usize, (outside, worst): (usize, f64), rule: &str) -> bool {
    if outside == 0 {
        println!("ok   {what} ({values} values; worst error {worst:.3} of {rule})");
    } else {
        println!("FAIL {what}: {outside} of {values} values beyond {rule} (worst {worst:.3}x)");
    }
    outside == 0
}

/// `D = A · Bᵀ` on the CPU (`A` is `m × k`, `B` is `n × k`).
fn matmul_nt(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> Vec<f32> {
    let mut d = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            d[i * n + j] = (0..k).map(|x| a[i * k + x] * b[j * k + x]).sum();
        }
    }
    d
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let mut rng = Rng::new(2023);
    let quarter = |r: &mut Rng| (r.next_u64() % 17) as f32 / 4.0 - 2.0;
    let mut ok = true;
    let one_block = |threads| LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    };

    // 64 × 64 × 64, bf16 and f16.
    let a: Vec<f32> = rng.vec(M * KB, quarter);
    let b: Vec<f32> = rng.vec(64 * KB, quarter);
    let expected = matmul_nt(&a, &b, M, 64, KB);
    let convert: [(&str, fn(f32) -> u16); 2] = [("bf16", bf16_bits), ("f16", f16_bits)];
    for (name, bits) in convert {
        let a_dev = stream.clone_htod(&a.iter().map(|&v| bits(v)).collect::<Vec<u16>>())?;
        let b_dev = stream.clone_htod(&b.iter().map(|&v| bits(v)).collect::<Vec<u16>>())?;
        let box_dims = [KB as u32, 64];
        let a_map = tma::tiled(
            stream,
            &a_dev,
            &[KB as u64, M as u64],
            &box_dims,
            Swizzle::B128,
        )?;
        let b_map = tma::tiled(stream, &b_dev, &[KB as u64, 64], &box_dims, Swizzle::B128)?;
        let mut d_dev = stream.alloc_zeros::<f32>(M * 64)?;
        if name == "bf16" {
            module.tile_bf16(stream, one_block(128), &a_map, &b_map, &mut d_dev)?;
        } else {
            module.tile_f16(stream, one_block(128), &a_map, &b_map, &mut d_dev)?;
        }
        ok &= check(
            &format!("wgmma m64n64k16 {name}: 64 x 64 x 64 tile"),
            &stream.clone_dtoh(&d_dev)?,
            &expected,
        );
    }

    // fp8 encoding: the codes with known values, and every finite code back to itself.
    let known = [
        (Fp8::E4m3, 0x38, 1.0),
        (Fp8::E4m3, 0x7e, 448.0),
        (Fp8::E4m3, 0x01, 2f64.powi(-9)),
        (Fp8::E4m3, 0xc4, -3.0),
        (Fp8::E5m2, 0x3c, 1.0),
        (Fp8::E5m2, 0x7b, 57344.0),
        (Fp8::E5m2, 0x01, 2f64.powi(-16)),
        (Fp8::E5m2, 0xc2, -3.0),
    ];
    let decoded: Vec<f64> = known.iter().map(|&(f, c, _)| f.decode(c)).collect();
    let values: Vec<f64> = known.iter().map(|&(_, _, v)| v).collect();
    ok &= check("fp8 decoding of known codes", &decoded, &values);
    for format in [Fp8::E4m3, Fp8::E5m2] {
        let finite: Vec<u8> = (0..=255u8)
            .filter(|&c| format.decode(c).is_finite())
            .collect();
        let back: Vec<u8> = finite
            .iter()
            .map(|&c| format.encode(format.decode(c) as f32))
            .collect();
        ok &= check(
            &format!(
                "fp8 {}: every finite code encodes back to itself",
                format.name()
            ),
            &back,
            &finite,
        );
    }
    let saturated = [Fp8::E4m3.encode(1000.0), Fp8::E5m2.encode(-1e6)];
    ok &= check("fp8 saturation", &saturated, &[0x7e, 0xfb]);

    // tf32: 64 × N × 32 from full f32 inputs; which rounding of the inputs does the GPU use?
    let kt = ROW_BYTES / 4;
    let tf32_input = |r: &mut Rng| loop {
        let v = r.f32_in(-1.0, 1.0);
        // No exact ties between two tf32 values, so that rounding to nearest has one answer.
        if v.to_bits() & 0x1fff != 0x1000 {
            break v;
        }
    };
    for n in [64usize, 256] {
        let a: Vec<f32> = rng.vec(M * kt, tf32_input);
        let b: Vec<f32> = rng.vec(n * kt, tf32_input);
        let a_dev = stream.clone_htod(&a)?;
        let b_dev = stream.clone_htod(&b)?;
        let a_map = tma::tiled(
            stream,
            &a_dev,
            &[kt as u64, M as u64],
            &[kt as u32, M as u32],
            Swizzle::B128,
        )?;
        let b_map = tma::tiled(
            stream,
            &b_dev,
            &[kt as u64, n as u64],
            &[kt as u32, n as u32],
            Swizzle::B128,
        )?;
        let mut d_dev = stream.alloc_zeros::<f32>(M * n)?;
        if n == 64 {
            module.tile_tf32_n64(stream, one_block(128), &a_map, &b_map, &mut d_dev)?;
        } else {
            module.tile_tf32_n256(stream, one_block(128), &a_map, &b_map, &mut d_dev)?;
        }
        let got = stream.clone_dtoh(&d_dev)?;
        let rel = 2f64.powi(-18);
        let models: [(&str, fn(f32) -> f64); 2] = [
            ("the low 13 mantissa bits truncated", tf32_truncated),
            ("rounded to the nearest tf32", tf32_nearest),
        ];
        let results: Vec<(usize, f64)> = models
            .iter()
            .map(|(_, model)| {
                let a: Vec<f64> = a.iter().map(|&v| model(v)).collect();
                let b: Vec<f64> = b.iter().map(|&v| model(v)).collect();
                let (exact, scale) = matmul_nt_f64(&a, &b, M, n, kt);
                compare(&got, &exact, &scale, rel)
            })
            .collect();
        let what = format!("wgmma m64n{n}k8 tf32: 64 x {n} x {kt} tile");
        let matched = results.iter().position(|&(outside, _)| outside == 0);
        let mut line = match matched {
            Some(i) => format!(
                "ok   {what} ({} values): the GPU read inputs with {}",
                M * n,
                models[i].0
            ),
            None => format!("FAIL {what}: matches neither input rounding"),
        };
        for ((name, _), (outside, worst)) in models.iter().zip(&results) {
            line += &format!("; {name}: {outside} outside 2^-18*sum|ab|, worst {worst:.3}x");
        }
        println!("{line}");
        ok &= matched.is_some();
    }

    // fp8: 64 × N × 128, each combination of formats, inputs over several binades.
    let kf = ROW_BYTES;
    let fp8_input = |r: &mut Rng| {
        let magnitude = r.f32_in(0.0, 2.0) * 2f32.powi(-((r.next_u64() % 10) as i32));
        if r.next_u64() & 1 == 1 {
            -magnitude
        } else {
            magnitude
        }
    };
    let fp8_tiles = [
        ("e4m3", Fp8::E4m3, Fp8::E4m3, 64usize),
        ("e4m3", Fp8::E4m3, Fp8::E4m3, 128),
        ("e5m2", Fp8::E5m2, Fp8::E5m2, 256),
        ("e4m3 x e5m2", Fp8::E4m3, Fp8::E5m2, 128),
        ("e5m2 x e4m3", Fp8::E5m2, Fp8::E4m3, 64),
    ];
    for (name, fa, fb, n) in fp8_tiles {
        let a: Vec<u8> = rng.vec(M * kf, |r| fa.encode(fp8_input(r)));
        let b: Vec<u8> = rng.vec(n * kf, |r| fb.encode(fp8_input(r)));
        let a_dev = stream.clone_htod(&a)?;
        let b_dev = stream.clone_htod(&b)?;
        let a_map = tma::tiled(
            stream,
            &a_dev,
            &[kf as u64, M as u64],
            &[kf as u32, M as u32],
            Swizzle::B128,
        )?;
        let b_map = tma::tiled(
            stream,
            &b_dev,
            &[kf as u64, n as u64],
            &[kf as u32, n as u32],
            Swizzle::B128,
        )?;
        let mut d_dev = stream.alloc_zeros::<f32>(M * n)?;
        let cfg = one_block(128);
        let (a_map, b_map, d) = (&a_map, &b_map, &mut d_dev);
        match (name, n) {
            ("e4m3", 64) => module.tile_e4m3_n64(stream, cfg, a_map, b_map, d)?,
            ("e4m3", _) => module.tile_e4m3_n128(stream, cfg, a_map, b_map, d)?,
            ("e5m2", _) => module.tile_e5m2_n256(stream, cfg, a_map, b_map, d)?,
            ("e4m3 x e5m2", _) => module.tile_e4m3_e5m2_n128(stream, cfg, a_map, b_map, d)?,
            _ => module.tile_e5m2_e4m3_n64(stream, cfg, a_map, b_map, d)?,
        }
        let a: Vec<f64> = a.iter().map(|&c| fa.decode(c)).collect();
        let b: Vec<f64> = b.iter().map(|&c| fb.decode(c)).collect();
        let (exact, scale) = matmul_nt_f64(&a, &b, M, n, kf);
        ok &= verdict_line(
            &format!("wgmma m64n{n}k32 {name}: 64 x {n} x {kf} tile"),
            M * n,
            compare(&stream.clone_dtoh(&d_dev)?, &exact, &scale, 2f64.powi(-9)),
            "2^-9*sum|ab|",
        );
    }

    // 64 × 128 × (64 · 5), bf16, K loop.
    let k_tiles = 5usize;
    let k = KB * k_tiles;
    let a: Vec<f32> = rng.vec(M * k, quarter);
    let b: Vec<f32> = rng.vec(N_LOOP * k, quarter);
    let a_dev = stream.clone_htod(&a.iter().map(|&v| bf16_bits(v)).collect::<Vec<u16>>())?;
    let b_dev = stream.clone_htod(&b.iter().map(|&v| bf16_bits(v)).collect::<Vec<u16>>())?;
    let a_map = tma::tiled(
        stream,
        &a_dev,
        &[k as u64, M as u64],
        &[KB as u32, M as u32],
        Swizzle::B128,
    )?;
    let b_map = tma::tiled(
        stream,
        &b_dev,
        &[k as u64, N_LOOP as u64],
        &[KB as u32, N_LOOP as u32],
        Swizzle::B128,
    )?;
    let mut d_dev = stream.alloc_zeros::<f32>(M * N_LOOP)?;
    module.k_loop_bf16(
        stream,
        one_block(128),
        &a_map,
        &b_map,
        &mut d_dev,
        k_tiles as u32,
    )?;
    ok &= check(
        "wgmma m64n128k16 bf16: 64 x 128 tile over a K loop of 320",
        &stream.clone_dtoh(&d_dev)?,
        &matmul_nt(&a, &b, M, N_LOOP, k),
    );
    Ok(ok)
}
