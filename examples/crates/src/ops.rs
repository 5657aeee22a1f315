//! The functions the kernels run and the CPU checks them against: each calls one of the four
//! crates. They are plain Rust, shared by host and device code.

use glam::{Affine3A, Mat4, Quat, Vec3, Vec3A, Vec4};
use num_complex::{Complex32, Complex64};
use rand_core::{RngCore, SeedableRng};

/// The `libm` functions of `f64` checked, by operation number.
pub const LIBM_F64_OPS: u32 = 40;
/// The `libm` functions of `f32` checked.
pub const LIBM_F32_OPS: u32 = 28;

/// `f64` function `op` of `libm` on `x` and `y`.
pub fn libm_f64(op: u32, x: f64, y: f64) -> f64 {
    match op {
        0 => libm::sqrt(x.abs()),
        1 => libm::fma(x, y, 0.25),
        2 => libm::sin(x),
        3 => libm::cos(x),
        4 => libm::tan(x),
        5 => libm::asin(y / 10.0),
        6 => libm::acos(y / 10.0),
        7 => libm::atan(x),
        8 => libm::atan2(x, y),
        9 => libm::exp(y),
        10 => libm::exp2(y),
        11 => libm::exp10(y / 4.0),
        12 => libm::expm1(y / 8.0),
        13 => libm::log(x.abs()),
        14 => libm::log2(x.abs()),
        15 => libm::log10(x.abs()),
        16 => libm::log1p(x.abs()),
        17 => libm::pow(x.abs(), y),
        18 => libm::cbrt(x),
        19 => libm::hypot(x, y),
        20 => libm::sinh(y),
        21 => libm::cosh(y),
        22 => libm::tanh(y),
        23 => libm::asinh(x),
        24 => libm::acosh(x.abs() + 1.0),
        25 => libm::atanh(y / 10.5),
        26 => libm::erf(y / 3.0),
        27 => libm::erfc(y / 3.0),
        28 => libm::tgamma(y),
        29 => {
            let (value, sign) = libm::lgamma_r(y);
            value * f64::from(sign)
        }
        30 => libm::floor(x) + libm::ceil(y),
        31 => libm::round(x) - libm::trunc(y) + libm::rint(x * 0.5),
        32 => libm::fmod(x, y),
        33 => libm::remainder(x, y),
        34 => libm::fmin(x, y) - libm::fmax(x, y) + libm::fdim(x, y),
        35 => libm::copysign(x, y) + libm::fabs(y),
        36 => {
            let (mantissa, exponent) = libm::frexp(x);
            libm::ldexp(mantissa, exponent + 3)
        }
        37 => {
            let (s, c) = libm::sincos(x);
            s * c
        }
        38 => libm::j0(x) + libm::y1(x.abs() + 0.5),
        _ => {
            let (fraction, whole) = libm::modf(x);
            fraction + libm::scalbn(whole, 2)
        }
    }
}

/// `f32` function `op` of `libm` on `x` and `y`.
pub fn libm_f32(op: u32, x: f32, y: f32) -> f32 {
    match op {
        0 => libm::sqrtf(x.abs()),
        1 => libm::fmaf(x, y, 0.25),
        2 => libm::sinf(x),
        3 => libm::cosf(x),
        4 => libm::tanf(x),
        5 => libm::asinf(y / 10.0),
        6 => libm::acosf(y / 10.0),
        7 => libm::atanf(x),
        8 => libm::atan2f(x, y),
        9 => libm::expf(y),
        10 => libm::exp2f(y),
        11 => libm::expm1f(y / 8.0),
        12 => libm::logf(x.abs()),
        13 => libm::log2f(x.abs()),
        14 => libm::log10f(x.abs()),
        15 => libm::log1pf(x.abs()),
        16 => libm::powf(x.abs(), y),
        17 => libm::cbrtf(x),
        18 => libm::hypotf(x, y),
        19 => libm::sinhf(y),
        20 => libm::coshf(y),
        21 => libm::tanhf(y),
        22 => libm::asinhf(x) + libm::acoshf(x.abs() + 1.0),
        23 => libm::erff(y / 3.0) + libm::erfcf(x / 3.0),
        24 => libm::tgammaf(y),
        25 => libm::floorf(x) + libm::ceilf(y) + libm::roundf(x * 0.5),
        26 => libm::fmodf(x, y) + libm::remainderf(x, y),
        _ => {
            let (s, c) = libm::sincosf(x);
            s * c
        }
    }
}

/// Generator `op` seeded from `seed`: four outputs (`u32` outputs widened).
pub fn random_draws(op: u32, seed: u64) -> [u64; 4] {
    use rand_xoshiro::{
        SplitMix64, Xoroshiro128Plus, Xoshiro128PlusPlus, Xoshiro256PlusPlus, Xoshiro256StarStar,
    };
    fn four(mut next: impl FnMut() -> u64) -> [u64; 4] {
        [next(), next(), next(), next()]
    }
    match op {
        0 => {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            four(|| rng.next_u64())
        }
        1 => {
            let mut bytes = [0u8; 32];
            bytes[..8].copy_from_slice(&seed.to_le_bytes());
            bytes[24..].copy_from_slice(&(!seed).to_le_bytes());
            let mut rng = Xoshiro256StarStar::from_seed(bytes);
            rng.jump();
            four(|| rng.next_u64())
        }
        2 => {
            let mut rng = Xoshiro128PlusPlus::seed_from_u64(seed);
            rng.long_jump();
            four(|| u64::from(rng.next_u32()))
        }
        3 => {
            let mut rng = SplitMix64::seed_from_u64(seed);
            four(|| rng.next_u64())
        }
        4 => {
            let mut rng = Xoroshiro128Plus::seed_from_u64(seed);
            let mut bytes = [0u8; 32];
            rng.fill_bytes(&mut bytes[..29]);
            let word = |i: usize| u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().unwrap());
            [word(0), word(1), word(2), word(3)]
        }
        _ => {
            // A uniform float in [0, 1) from the top 53 bits, as `rand` builds one.
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            four(|| ((rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)).to_bits())
        }
    }
}

/// The `glam` operations checked.
pub const GLAM_OPS: u32 = 10;
/// Inputs per `glam` operation.
pub const GLAM_IN: usize = 12;
/// Outputs per `glam` operation.
pub const GLAM_OUT: usize = 16;

/// `glam` operation `op` on twelve inputs; sixteen outputs (unused ones 0).
pub fn glam_op(op: u32, v: &[f32]) -> [f32; GLAM_OUT] {
    let mut out = [0.0f32; GLAM_OUT];
    let a4 = Vec4::new(v[0], v[1], v[2], v[3]);
    let b4 = Vec4::new(v[4], v[5], v[6], v[7]);
    let a3 = Vec3A::new(v[0], v[1], v[2]);
    let b3 = Vec3A::new(v[4], v[5], v[6]);
    let axis = Vec3::new(v[8], v[9], v[10]).normalize_or_zero();
    let angle = v[11];
    let put = |out: &mut [f32; GLAM_OUT], at: usize, values: &[f32]| {
        out[at..at + values.len()].copy_from_slice(values);
    };
    match op {
        0 => {
            put(&mut out, 0, &(a4 + b4 * 2.0 - a4 / b4).to_array());
            put(&mut out, 4, &[a4.dot(b4), a4.length(), b4.length_recip()]);
            put(&mut out, 8, &a4.normalize_or_zero().to_array());
            put(&mut out, 12, &a4.lerp(b4, 0.25).to_array());
        }
        1 => {
            put(&mut out, 0, &a4.min(b4).to_array());
            put(&mut out, 4, &a4.max(b4).to_array());
            put(&mut out, 8, &a4.abs().to_array());
            put(
                &mut out,
                12,
                &a4.clamp(Vec4::splat(-1.5), Vec4::splat(2.5)).to_array(),
            );
        }
        2 => {
            put(&mut out, 0, &a4.floor().to_array());
            put(&mut out, 4, &(a4 * 3.3).round().to_array());
            put(&mut out, 8, &b4.ceil().to_array());
            put(&mut out, 12, &(a4 * 1.7).fract_gl().to_array());
        }
        3 => {
            put(&mut out, 0, &a3.cross(b3).to_array());
            put(&mut out, 3, &a3.reflect(b3.normalize_or_zero()).to_array());
            put(&mut out, 6, &a3.project_onto(b3).to_array());
            put(&mut out, 9, &[a3.angle_between(b3), a3.distance(b3)]);
            let mask = a3.cmplt(b3);
            out[11] = mask.bitmask() as f32;
            put(&mut out, 12, &Vec3A::select(mask, a3, b3).to_array());
            out[15] = a3.max_element() - b3.min_element();
        }
        4 => {
            let q = Quat::from_axis_angle(axis, angle);
            put(&mut out, 0, &q.to_array());
            put(&mut out, 4, &q.mul_vec3a(a3).to_array());
            put(&mut out, 7, &q.inverse().to_array());
            put(&mut out, 11, &[q.length(), q.angle_between(Quat::IDENTITY)]);
            let (axis_out, angle_out) = q.to_axis_angle();
            put(&mut out, 13, &[axis_out.x, axis_out.y, angle_out]);
        }
        5 => {
            let p = Quat::from_axis_angle(axis, angle);
            let q = Quat::from_rotation_y(v[3]) * Quat::from_rotation_x(v[7]);
            put(&mut out, 0, &p.slerp(q, 0.3).to_array());
            put(&mut out, 4, &(p * q).to_array());
            put(&mut out, 8, &p.lerp(q, 0.7).to_array());
            let (x, y, z) = q.to_euler(glam::EulerRot::YXZ);
            put(&mut out, 12, &[x, y, z, p.dot(q)]);
        }
        6 => {
            let m = Mat4::from_scale_rotation_translation(
                Vec3::new(v[4].abs() + 0.5, v[5].abs() + 0.5, v[6].abs() + 0.5),
                Quat::from_axis_angle(axis, angle),
                Vec3::new(v[0], v[1], v[2]),
            );
            put(&mut out, 0, &m.inverse().to_cols_array());
        }
        7 => {
            let m = Mat4::from_cols_array(&[
                v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[3],
                v[7], v[11], 1.0,
            ]);
            let n = Mat4::from_axis_angle(axis, angle);
            put(&mut out, 0, &(m * n).to_cols_array()[..12]);
            put(&mut out, 12, &[m.determinant()]);
            put(&mut out, 13, &m.transform_point3a(b3).to_array());
        }
        8 => {
            let m = Mat4::perspective_rh(1.0, 1.5, 0.1, 100.0)
                * Mat4::look_at_rh(Vec3::from(a3), Vec3::from(b3), Vec3::Y);
            put(&mut out, 0, &m.to_cols_array());
        }
        _ => {
            let t = Affine3A::from_scale_rotation_translation(
                Vec3::splat(v[5].abs() + 0.25),
                Quat::from_axis_angle(axis, angle),
                Vec3::from(b3),
            );
            put(&mut out, 0, &t.transform_point3a(a3).to_array());
            put(&mut out, 3, &t.inverse().transform_vector3a(a3).to_array());
            put(&mut out, 6, &a4.powf(0.75).to_array());
            put(&mut out, 10, &(b4 * 0.25).exp().to_array());
            put(&mut out, 14, &[a3.length(), a3.normalize_or_zero().z]);
        }
    }
    out
}

/// `num-complex` operation `op` on `a` and `b` (`Complex64`); the real and imaginary parts.
pub fn complex64_op(op: u32, a: Complex64, b: Complex64) -> [f64; 2] {
    let z = match op {
        0 => a * b + a / b - b.inv(),
        1 => a.exp(),
        2 => a.ln(),
        3 => a.sqrt(),
        4 => a.powc(b * 0.25),
        5 => a.sin() + b.cos(),
        6 => a.tanh() - b.atan(),
        7 => a.asinh() + b.acos(),
        8 => Complex64::from_polar(a.norm(), b.arg()) + a.powf(1.5),
        _ => a.cbrt() + b.log(3.0) + a.powi(5),
    };
    [z.re, z.im]
}

/// `num-complex` operation `op` on `a` and `b` (`Complex32`).
pub fn complex32_op(op: u32, a: Complex32, b: Complex32) -> [f32; 2] {
    let z = match op {
        0 => a * b + a / b - b.inv(),
        1 => a.exp() + b.ln(),
        2 => a.sqrt() * b.sin(),
        3 => a.powc(b * 0.25),
        _ => Complex32::from_polar(a.norm(), b.arg()) + a.tan(),
    };
    [z.re, z.im]
}

/// The `num-complex` operations checked, `Complex64` and `Complex32`.
pub const COMPLEX64_OPS: u32 = 10;
/// The `Complex32` operations checked.
pub const COMPLEX32_OPS: u32 = 5;
