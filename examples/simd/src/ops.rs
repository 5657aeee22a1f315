//! The SIMD functions the kernels run and the CPU checks them against: `core::simd` (portable
//! SIMD) and `core::arch::x86_64`'s SSE/SSE2 intrinsics, which device code compiled from the
//! host's MIR reaches when a crate takes its x86-64 path. Both run lane by lane on the GPU with
//! the CPU's exact semantics, so results are compared bit for bit.

use core::arch::x86_64::*;
use core::simd::prelude::*;

/// The portable `f32` operations checked.
pub const PORTABLE_F32_OPS: u32 = 7;
/// The portable `i32` operations checked.
pub const PORTABLE_I32_OPS: u32 = 8;
/// The SSE/SSE2 operations checked.
pub const SSE_OPS: u32 = 7;

/// Portable `f32x8` operation `op`.
pub fn portable_f32(op: u32, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
    let (a, b) = (f32x8::from_array(a), f32x8::from_array(b));
    let r = match op {
        0 => a + b * f32x8::splat(2.0) - a / b,
        1 => a.simd_min(b) + a.simd_max(b) * f32x8::splat(0.5) - a.abs(),
        2 => {
            let less = a.simd_lt(b);
            let picked = less.select(a, b);
            picked + f32x8::splat(less.to_bitmask() as f32)
        }
        3 => {
            let (lo, hi) = a.interleave(b);
            lo.rotate_elements_left::<3>() - hi.reverse()
                + simd_swizzle!(a, b, [0, 9, 2, 11, 4, 13, 6, 15])
        }
        4 => {
            let ints: i32x8 = (a * f32x8::splat(1000.0)).cast();
            ints.cast::<f32>() + a.copysign(b) - a.signum()
        }
        5 => f32x8::from_array([
            a.reduce_sum(),
            a.reduce_product(),
            a.reduce_max(),
            b.reduce_min(),
            a.simd_clamp(f32x8::splat(-1.0), f32x8::splat(1.0))
                .reduce_sum(),
            f32::from_bits(a.to_bits().reduce_xor()),
            a.is_sign_negative().to_bitmask() as f32,
            a.simd_ne(b).any() as u32 as f32,
        ]),
        _ => {
            let bits = a.to_bits() ^ u32x8::splat(0x8000_0000);
            f32x8::from_bits(bits) + a.recip() - a * b
        }
    };
    r.to_array()
}

/// Portable `i32x8` operation `op`; `table` is read by index (gather, partial loads).
pub fn portable_i32(op: u32, a: [i32; 8], b: [i32; 8], table: &[i32]) -> [i32; 8] {
    let (a, b) = (i32x8::from_array(a), i32x8::from_array(b));
    let r = match op {
        0 => a * b + (a << (b & i32x8::splat(31))) - (a >> i32x8::splat(3)),
        1 => a.saturating_add(b) - a.saturating_sub(b) + a.abs() + a.simd_max(b) - a.simd_min(b),
        2 => {
            let u = a.cast::<u32>();
            (u.leading_zeros() + u.trailing_zeros() + u.count_ones()).cast::<i32>()
                ^ a.reverse_bits()
                ^ a.swap_bytes()
        }
        3 => {
            let idx = (a.cast::<u32>() % u32x8::splat(40)).cast::<usize>();
            i32x8::gather_or_default(table, idx)
        }
        4 => {
            let len = (a[0].unsigned_abs() % 9) as usize;
            let loaded = i32x8::load_or(&table[..len], b);
            let mut out = [7i32; 8];
            loaded.store_select(&mut out, a.simd_gt(b));
            i32x8::from_array(out) + loaded
        }
        5 => i32x8::from_array([
            a.reduce_sum(),
            a.reduce_product(),
            a.reduce_max(),
            a.reduce_min(),
            a.reduce_and(),
            a.reduce_or(),
            a.reduce_xor(),
            a.simd_gt(b).all() as i32
                + 2 * a.simd_eq(b).any() as i32
                + 4 * a.simd_le(b).to_bitmask() as i32,
        ]),
        6 => {
            let bytes = u8x8::from_array(a.to_array().map(|x| x as u8));
            let more = u8x8::from_array(b.to_array().map(|x| x as u8));
            let sum = bytes.saturating_add(more).cast::<i32>();
            let narrow = a.cast::<i8>().cast::<i16>().cast::<i32>();
            sum + narrow - a.cast::<u16>().cast::<i32>()
        }
        _ => {
            let m = mask32x8::from_bitmask(a[0] as u64);
            m.select(a, b) + m.to_simd()
        }
    };
    r.to_array()
}

/// SSE/SSE2 operation `op` on `a` and `b`; the result's bits.
pub fn sse(op: u32, a: [f32; 4], b: [f32; 4]) -> [u32; 4] {
    // SAFETY: SSE and SSE2 are part of x86-64 (and of the GPU versions of these intrinsics);
    // the pointers are to arrays of four `f32`.
    unsafe {
        let x = _mm_loadu_ps(a.as_ptr());
        let y = _mm_loadu_ps(b.as_ptr());
        let r: __m128 = match op {
            0 => _mm_add_ps(
                _mm_min_ps(x, y),
                _mm_mul_ps(_mm_max_ps(x, y), _mm_set1_ps(3.0)),
            ),
            1 => {
                let masks = [
                    _mm_movemask_ps(_mm_cmpeq_ps(x, y)),
                    _mm_movemask_ps(_mm_cmplt_ps(x, y)),
                    _mm_movemask_ps(_mm_cmple_ps(x, y)),
                    _mm_movemask_ps(_mm_cmpunord_ps(x, y)),
                    _mm_movemask_ps(_mm_cmpneq_ps(x, y)),
                    _mm_movemask_ps(_mm_cmpnlt_ps(x, y)),
                    _mm_movemask_ps(_mm_cmpnle_ps(x, y)),
                    _mm_movemask_ps(_mm_cmpord_ps(x, y)),
                ];
                let packed = masks.iter().fold(0i32, |acc, m| (acc << 4) | m);
                _mm_castsi128_ps(_mm_set1_epi32(packed))
            }
            2 => {
                let big = _mm_mul_ps(x, _mm_set1_ps(4.0e8));
                let rounded = _mm_cvtps_epi32(big);
                let truncated = _mm_cvttps_epi32(_mm_mul_ps(x, _mm_set1_ps(10.0)));
                _mm_castsi128_ps(_mm_xor_si128(rounded, _mm_slli_epi32::<3>(truncated)))
            }
            3 => _mm_add_ps(
                _mm_shuffle_ps::<0b01_10_11_00>(x, y),
                _mm_sub_ps(_mm_unpacklo_ps(x, y), _mm_movelh_ps(_mm_movehl_ps(x, y), x)),
            ),
            4 => {
                let i = _mm_castps_si128(x);
                let j = _mm_castps_si128(y);
                let sum = _mm_add_epi32(i, _mm_srli_epi32::<7>(j));
                let prod = _mm_mullo_epi16(i, j);
                _mm_castsi128_ps(_mm_xor_si128(
                    _mm_sub_epi8(sum, prod),
                    _mm_cmpgt_epi32(i, j),
                ))
            }
            5 => {
                let (xd, yd) = (_mm_cvtps_pd(x), _mm_cvtps_pd(y));
                let m = _mm_add_pd(_mm_min_pd(xd, yd), _mm_sqrt_pd(_mm_max_sd(xd, yd)));
                let lt = _mm_castpd_ps(_mm_cmplt_pd(xd, yd));
                _mm_xor_ps(_mm_castpd_ps(m), lt)
            }
            _ => _mm_add_ss(
                _mm_min_ss(x, y),
                _mm_div_ps(_mm_sqrt_ps(_mm_max_ss(x, y)), abs_plus_one(y)),
            ),
        };
        let mut out = [0u32; 4];
        _mm_storeu_ps(out.as_mut_ptr().cast(), r);
        out
    }
}

/// `|y| + 1` for each lane (a divisor that is never 0).
unsafe fn abs_plus_one(y: __m128) -> __m128 {
    // SAFETY: SSE is part of x86-64.
    unsafe { _mm_add_ps(_mm_andnot_ps(_mm_set1_ps(-0.0), y), _mm_set1_ps(1.0)) }
}
