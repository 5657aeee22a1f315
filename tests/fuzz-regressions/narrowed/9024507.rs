//! Seed 245 with only `v7` in the output hash (the rest of `run` is dead code): narrows the GPU mismatch to one `let`.
#![allow(warnings)]

use crate::fz;

#[derive(Clone, Copy, PartialEq)]
enum E1 {
    A(bool),
    B { x: u64, y: i16 },
    C,
    D(i64, bool),
}

#[derive(Clone, Copy, PartialEq)]
enum E4 {
    A(i128),
    B { x: u64, y: bool },
    C,
    D(i64, bool),
}

fn r5(a: u64, b: u64) -> Result<u64, u8> {
    let s = a.checked_add(b).ok_or(1u8)?;
    let t = s.checked_sub(a).ok_or(2u8)?;
    if t == 1u64 {
        return Err(3);
    }
    Ok(t)
}

#[derive(Clone, Copy)]
struct S6 {
    f0: bool,
    f4: isize,
    f3: u16,
    f2: u16,
    f1: u64,
}

fn r9(a: i8, b: i8) -> Result<i8, u8> {
    let s = a.checked_rem(b).ok_or(1u8)?;
    let t = s.checked_rem(a).ok_or(2u8)?;
    if t == 1i8 {
        return Err(3);
    }
    Ok(t)
}

pub fn run(x: u64) -> u64 {
    let v0: bool = (((x >> 16) & 1) == 1);
    let v1: i64 = ((x.rotate_left(16)) as i64);
    let v2: u8 = ((x.rotate_left(2)) as u8);
    let v3: u64 = ((x.rotate_left(50)) as u64);
    let v4: bool = (((({ let e1 = if true { E1::A(((v1 & 1i64) == 1i64)) } else if v0 { E1::B { x: x, y: (v0 as i16) } } else if false { E1::D(v1, v0) } else { E1::C }; match fz::id(e1) { _ if e1 == E1::C => (v1 as f32), E1::A(p1) if v0 => (x as f32), E1::B { x: q1, y: r1 } => f32::INFINITY, E1::D(u1, true) => (u1 as f32), _ => f32::NAN } }).floor()) / (({ let mut a2: [i32; 4] = [(v2 as i32), (-1481171950i32), (v1 as i32), (v3 as i32)]; a2.reverse(); a2.swap(0, 3); a2.sort_unstable(); (fz::pick(true, (fz::slice_fold(&a2[3..4], i32::MIN) as f32), 3.4028235e38f32)) }) * (3.4028235e38f32.powi(147120474i32 % 9i32)))) > ((v2 as f32) + ((if ((v3 & 1u64) == 1u64) { (v3 as f32) } else { ((v0 as u8) as f32) }).clamp((-85.125f32), (-49.25f32)))));
    let v5: f64 = (match ('b3: { if v4 { break 'b3 (v0 as i16); } 1i16 }).cmp(&((i16::MIN / 2i16) + (0i16 / 2i16))) { core::cmp::Ordering::Less => ({ let e4 = if v4 { E4::A((-77002113188304161496647618986690888880i128)) } else if v0 { E4::B { x: x, y: true } } else if v4 { E4::D(v1, ((v3 & 1u64) == 1u64)) } else { E4::C }; match fz::id(e4) { _ if e4 == E4::C => (v2 as f64), E4::A(p4) if v4 => 5e-324f64, E4::B { x: q4, y: r4 } => (v2 as f64), E4::D(u4, true) => (-3.75f64), _ => 0.0f64 } }), core::cmp::Ordering::Equal => (((v4 as u8) as f64).round()), core::cmp::Ordering::Greater => (match r5((v1 as u64), (v4 as u64)) { Ok(m5) => (v2 as f64), Err(e5) => ((v4 as u8) as f64) }) });
    let v6: i128 = (({ let mut s6 = fz::id(S6 { f1: ((x.rotate_right(262144u32)).checked_ilog10().unwrap_or(3) as u64), f2: (((0..5u32).map(|i7| (7isize / 77isize)).filter(|w7| ((v2 as u16) < 32768u16)).skip(2).take(1).zip((0..8u8).rev()).fold((-1isize), |acc7, (w7, z)| acc7.wrapping_sub(w7 ^ (z as isize)))) as u16), f3: ((((0..2u32).map(|i8| (v4 as usize)).filter(|w8| v0).skip(0).enumerate().fold(7usize, |acc8, (k, w8)| acc8 ^ w8.rotate_left(k as u32))) as i32) as u16), f0: ((match r9(1i8, (-1i8)) { Ok(m9) => 1isize, Err(e9) => 1isize }) > ((-1isize).checked_rem((x as isize)).unwrap_or((v5 as isize)))), f4: (13isize % 16isize), }); s6.f2 = (({ let mut a10: [usize; 5] = [(s6.f0 as usize), 18446744073709551615usize, (v5 as usize), (s6.f3 as usize), 10540400225931118169usize]; a10[(v3 as usize) % 5] = (x as usize); a10.reverse(); (((fz::slice_fold(&a10[1..2], 9223372036854775808usize) & 1usize) == 1usize) ^ v0) }) as u16); ((((0..8u32).map(|i11| i11).filter(|w11| v4).max().unwrap_or(1u32)) as i32).wrapping_shl(((s6.f4 as u32) & (v1 as u32)))) }) as i128);
    let v7: i16 = ((0i16.to_be()).abs_diff((v1 as i16)) as i16);
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    h = fz::fold(h, v7);
    h
}
