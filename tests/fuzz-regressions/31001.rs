//! Issue 31 (Rustlantis seeds 1 and 17 at `--device-debug full` stopped with
//! `CUDA_ERROR_MISALIGNED_ADDRESS`), reduced by hand: a `transmute` whose target needs more
//! alignment than its source (`[u8; 16]` and `[u32; 4]` to `u128`, `[u16; 4]` to `u64`, a
//! tuple of `u32`s to `f64`s) went through a stack slot of the source's type and loaded the
//! target from it with the target's alignment. Optimised code raised the slot's alignment;
//! unoptimised PTX loaded 16 bytes from an address aligned to 1 and faulted.
#![allow(warnings)]

use crate::fz;

#[inline(never)]
fn bytes_to_u128(x: u64) -> u128 {
    let mut bytes = [0u8; 16];
    let mut i = 0;
    while i < 16 {
        bytes[i] = (x >> (i % 8 * 8)) as u8 ^ i as u8;
        i += 1;
    }
    unsafe { core::mem::transmute::<[u8; 16], u128>(bytes) }
}

#[inline(never)]
fn words_to_u128(x: u64) -> u128 {
    let words = [x as u32, (x >> 32) as u32, !(x as u32), 7];
    unsafe { core::mem::transmute::<[u32; 4], u128>(words) }
}

#[inline(never)]
fn halves_to_u64(x: u64) -> u64 {
    let halves = [x as u16, (x >> 16) as u16, (x >> 32) as u16, 0xbeef];
    unsafe { core::mem::transmute::<[u16; 4], u64>(halves) }
}

#[inline(never)]
fn pair_to_f64s(x: u64) -> [f64; 2] {
    let pair = (x as u32, (x >> 32) as u32, 0x3ff0_0000u32, x as u32 | 1);
    unsafe { core::mem::transmute::<(u32, u32, u32, u32), [f64; 2]>(pair) }
}

pub fn run(x: u64) -> u64 {
    let a = bytes_to_u128(x);
    let b = words_to_u128(x);
    let c = halves_to_u64(x);
    let [d, e] = pair_to_f64s(x);
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    h = fz::fold(h, a);
    h = fz::fold(h, b);
    h = fz::fold(h, c);
    h = fz::fold(h, d);
    h = fz::fold(h, e);
    h
}
