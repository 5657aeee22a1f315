//! Issue 31, Rustlantis seed 232 at `--device-debug full`, reduced by hand: NVPTX's lowering
//! of a variable 128-bit shift computes the bits that cross between the 64-bit halves with a
//! shift by `64 - s`, out of range for `s = 0`, and LLVM folded it into a wrong value when it
//! knew enough about `s` (`C << s` with `s` 0 or 64 gave `hi | lo` in the high half). The
//! shifts below have amounts with known bits (masked, from shifted constants), unknown
//! amounts, signed and unsigned right shifts, and rotations (funnel shifts).
#![allow(warnings)]

use crate::fz;

#[inline(never)]
fn known_bits(x: u64) -> u128 {
    // The amount is `(C1 << a) & 127`, which is 0 or 64: LLVM knows its other bits are zero.
    let a = (!x as i64 as i128 as u128) & 127;
    let b = (122529673160133644947281209852034540480u128 << a) & 127;
    (-114813216542108897528063624208637480885i128 as u128) << b
}

#[inline(never)]
fn unknown(x: u64) -> (u128, u128, i128) {
    let v = (x as u128).wrapping_mul(3402823669209384634633746074317682114);
    let s = (x % 128) as u32;
    (v << s, v >> s, (v as i128) >> s)
}

#[inline(never)]
fn rotations(x: u64) -> (u128, u128, u128) {
    let v = (x as u128) << 64 | (!x as u128);
    let s = (x >> 3) as u32;
    (v.rotate_left(s), v.rotate_right(s), v.rotate_left(s & 64))
}

pub fn run(x: u64) -> u64 {
    let a = known_bits(x);
    let (b, c, d) = unknown(x);
    let (e, f, g) = rotations(x);
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for v in [a, b, c, d as u128, e, f, g] {
        h = fz::fold(h, v);
    }
    h
}
