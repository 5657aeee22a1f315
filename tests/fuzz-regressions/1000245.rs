//! Seed 245 reduced by hand (`cargo oxide fuzz show 245`): the `let` the output hash points at
//! (`v7`, which the GPU folded as `0x8000` instead of the sign-extended `-32768`). At the input
//! `0x8000_0000_0000_0000`, `v1 as i16` is `i16::MIN` and `0.abs_diff(i16::MIN) as i16` is
//! `i16::MIN` again; LLVM makes it `abs.s16`, then the value is widened with `cvt.s64.s16`.
//! The H100 run (driver 580, its JIT at -O3, and ptxas -O3 there) got the zero-extended value;
//! the same PTX through `ptxas -O0` was right.
#![allow(warnings)]

use crate::fz;

pub fn run(x: u64) -> u64 {
    let v1: i64 = x.rotate_left(16) as i64;
    let v7: i16 = 0i16.to_be().abs_diff(v1 as i16) as i16;
    let w: i16 = (v1 as i16).wrapping_abs();
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    h = fz::fold(h, v1);
    h = fz::fold(h, v7);
    h = fz::fold(h, w);
    h
}
