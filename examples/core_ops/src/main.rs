//! Ordinary Rust on the device: traits with default methods and operator overloading,
//! generics and const generics, `i128`/`u128` arithmetic (division included), recursion, slice
//! patterns with a rest, array `==`, `swap`, `reverse`, `mem::swap`/`replace`/`take`,
//! `Result::unwrap`, `Option` combinators, checked/saturating/wrapping arithmetic, and unions
//! (`MaybeUninit` and a user union).
//!
//! Each thread runs [`core_op`] on its own values and window of the input; the host runs the
//! same function to check every result exactly.

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

use core::mem::MaybeUninit;
use core::ops::{Add, AddAssign, Index, Mul, Neg, Sub};

/// The number of elements in each thread's window.
pub const WINDOW: usize = 8;

/// The number of operations [`core_op`] knows.
pub const OPS: u32 = 17;

/// A 2-D vector with its arithmetic as operators.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct V2 {
    pub x: f64,
    pub y: f64,
}

impl Add for V2 {
    type Output = V2;
    fn add(self, o: V2) -> V2 {
        V2 {
            x: self.x + o.x,
            y: self.y + o.y,
        }
    }
}

impl Sub for V2 {
    type Output = V2;
    fn sub(self, o: V2) -> V2 {
        V2 {
            x: self.x - o.x,
            y: self.y - o.y,
        }
    }
}

impl Mul<f64> for V2 {
    type Output = V2;
    fn mul(self, k: f64) -> V2 {
        V2 {
            x: self.x * k,
            y: self.y * k,
        }
    }
}

impl Neg for V2 {
    type Output = V2;
    fn neg(self) -> V2 {
        V2 {
            x: -self.x,
            y: -self.y,
        }
    }
}

impl AddAssign for V2 {
    fn add_assign(&mut self, o: V2) {
        self.x += o.x;
        self.y += o.y;
    }
}

impl Index<usize> for V2 {
    type Output = f64;
    fn index(&self, i: usize) -> &f64 {
        if i == 0 { &self.x } else { &self.y }
    }
}

/// Shapes: one required method, two with default bodies.
pub trait Shape {
    fn area(&self) -> f64;
    fn scaled_area(&self, k: f64) -> f64 {
        self.area() * k * k
    }
    fn name_code(&self) -> u64 {
        0
    }
}

pub struct Circle(pub f64);
pub struct Rect(pub V2);

impl Shape for Circle {
    fn area(&self) -> f64 {
        3.0 * self.0 * self.0
    }
}

impl Shape for Rect {
    fn area(&self) -> f64 {
        (self.0.x * self.0.y).abs()
    }
    fn name_code(&self) -> u64 {
        7
    }
}

/// Generic over any shape (static dispatch).
pub fn describe<S: Shape>(s: &S, k: f64) -> u64 {
    s.scaled_area(k).to_bits() ^ s.name_code()
}

/// A small matrix with const generic dimensions.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Matrix<const R: usize, const C: usize>(pub [[i64; C]; R]);

impl<const R: usize, const K: usize> Matrix<R, K> {
    pub fn mul<const C: usize>(&self, other: &Matrix<K, C>) -> Matrix<R, C> {
        let mut out = [[0i64; C]; R];
        for (r, row) in out.iter_mut().enumerate() {
            for (c, cell) in row.iter_mut().enumerate() {
                for k in 0..K {
                    *cell = cell.wrapping_add(self.0[r][k].wrapping_mul(other.0[k][c]));
                }
            }
        }
        Matrix(out)
    }

    pub fn trace_like(&self) -> i64 {
        (0..R.min(K))
            .map(|i| self.0[i][i])
            .fold(0, i64::wrapping_add)
    }
}

/// Dot product of two arrays of any length.
pub fn dot<const N: usize>(a: [i64; N], b: [i64; N]) -> i64 {
    a.iter()
        .zip(b)
        .fold(0i64, |s, (x, y)| s.wrapping_add(x.wrapping_mul(y)))
}

/// Greatest common divisor, recursively.
pub fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Sum of a slice through a slice pattern with a rest, recursively.
pub fn sum_rec(s: &[i64]) -> i64 {
    match s {
        [] => 0,
        [x, rest @ ..] => x.wrapping_add(sum_rec(rest)),
    }
}

/// Ends and middle of a slice through patterns.
pub fn ends(s: &[i64]) -> i64 {
    match s {
        [] => -1,
        [only] => *only,
        [first, middle @ .., last] => first ^ last ^ middle.len() as i64,
    }
}

/// A user union of an integer and a float.
#[derive(Clone, Copy)]
pub union Bits {
    pub int: u64,
    pub float: f64,
}

/// A mixing function for the 128-bit results: both halves matter.
pub fn fold128(v: u128) -> u64 {
    (v as u64) ^ ((v >> 64) as u64).rotate_left(17)
}

/// Operation `op` on the thread's values `a`, `b`, `f` and window `w`.
pub fn core_op(op: u32, a: i64, b: i64, f: f64, w: &[i64]) -> u64 {
    match op {
        // Operator overloading and a default trait method.
        0 => {
            let p = V2 {
                x: f,
                y: a as f64 * 0.25,
            };
            let q = V2 {
                x: b as f64 * 0.5,
                y: -f,
            };
            let mut r = (p + q) * 0.5 - -q;
            r += p;
            describe(&Rect(r), 2.0) ^ describe(&Circle(r[0]), 0.5).rotate_left(1)
        }
        // Const generics.
        1 => {
            let m = Matrix([[a % 100, b % 100, 3], [w[0] % 50, w[1] % 50, w[2] % 50]]);
            let n = Matrix([[1, 2], [a % 7, b % 7], [w[3] % 9, w[4] % 9]]);
            let p = m.mul(&n);
            let d = dot([a, b, w[5]], [w[6], w[7], 3]);
            (p.trace_like() ^ d) as u64
        }
        // i128 / u128 arithmetic, division and remainder included.
        2 => {
            let x = (a >> 20) as i128 * 1_000_000_007 * (b >> 20) as i128 + w[0] as i128;
            let magnitude =
                ((b >> 1).unsigned_abs() as i128 | 1) * ((w[1] as i128).rem_euclid(1_000_003) + 7);
            let y = if w[2] < 0 { -magnitude } else { magnitude };
            let q = x / y;
            let r = x % y;
            fold128((q.wrapping_mul(y) + r - x) as u128 ^ q as u128 ^ (r as u128) << 64)
        }
        3 => {
            let x = (a as u64 as u128) << 64 | b as u64 as u128;
            let y = (w[0] as u64 as u128) << 32 | (w[1] as u64 as u128 | 1);
            // `carrying_mul` is `core`'s fallback body of the `carrying_mul_add` intrinsic.
            let (lo, hi) = (a as u64).carrying_mul(b as u64, w[2] as u64);
            let (lo128, hi128) = x.carrying_mul(y, 7);
            fold128(x / y)
                ^ fold128(x % y).rotate_left(3)
                ^ fold128(x.wrapping_mul(y) >> 3)
                ^ lo.rotate_left(11)
                ^ hi.rotate_left(23)
                ^ fold128(lo128 ^ hi128.rotate_left(64))
        }
        // 128-bit conversions to and from floats.
        4 => {
            let x = a as i128 * b as i128;
            let as_float = x as f64;
            let back = (f * 1e20) as i128;
            let ux = (a as u128).wrapping_mul(b as u128);
            let ufloat = ux as f32;
            as_float.to_bits()
                ^ fold128(back as u128)
                ^ (ufloat.to_bits() as u64) << 7
                ^ fold128((f * 3e30) as u128)
        }
        // Recursion.
        5 => {
            gcd(
                a.unsigned_abs() % 1_000_000 + 1,
                b.unsigned_abs() % 1_000_000 + 1,
            ) ^ (sum_rec(w) as u64)
        }
        // Slice patterns with a rest, on slices and arrays.
        6 => {
            let arr = [w[0], w[1], w[2], w[3], w[4]];
            let [first, mid @ .., last] = arr;
            let [_, _, tail @ ..] = arr;
            let from_slice = ends(&w[..(a.unsigned_abs() as usize % (w.len() + 1))]);
            (first ^ last ^ mid[1] ^ tail.len() as i64 ^ from_slice) as u64
        }
        // Array equality, swap and reverse.
        7 => {
            let mut x = [w[0] % 4, w[1] % 4, w[2] % 4, w[3] % 4];
            let y = [w[4] % 4, w[5] % 4, w[6] % 4, w[7] % 4];
            let equal_before = (x == y) as u64;
            x.swap(0, 3);
            x.reverse();
            let mut z = x;
            z[1..].reverse();
            let halves: [u8; 2] = [(a % 3) as u8, (b % 3) as u8];
            // Not a constant: a constant array here would be a promoted `&[u8; 2]`.
            let ones = [1, halves[0] / 3 + 1];
            // Byte slices compare through `compare_bytes` (memcmp), equality included.
            let bytes_a = (w[0] as u64 & 0x0101_0101_0101_0101).to_le_bytes();
            let bytes_b = (w[1] as u64 & 0x0101_0101_0101_0101).to_le_bytes();
            let cut = (a.unsigned_abs() % 9) as usize;
            let byte_order = bytes_a[..cut].cmp(&bytes_b[..cut]) as i8 as u64 & 3;
            let byte_eq = (bytes_a[cut / 2..] == bytes_b[cut / 2..]) as u64;
            equal_before
                | byte_order << 7
                | byte_eq << 9
                | ((x == y) as u64) << 1
                | ((halves == ones) as u64) << 2
                | (z[0] as u64 & 3) << 3
                | (x[3] as u64 & 3) << 5
        }
        // mem::swap, replace and take.
        8 => {
            let mut p = a;
            let mut q = b;
            core::mem::swap(&mut p, &mut q);
            let old = core::mem::replace(&mut p, w[0]);
            let mut o = Some(w[1]);
            let taken = core::mem::take(&mut o);
            let mut v = V2 { x: f, y: 1.0 };
            let was = core::mem::take(&mut v);
            (p ^ q.rotate_left(3) ^ old.rotate_left(7)) as u64
                ^ taken.map_or(0, |t| t as u64)
                ^ o.is_none() as u64
                ^ was.x.to_bits()
                ^ v.y.to_bits()
        }
        // Result::unwrap on the success path, and `?`.
        9 => {
            let parse = |v: i64| -> Result<u32, i8> {
                if v >= 0 {
                    Ok(v as u32 % 1000)
                } else {
                    Err((v % 100) as i8)
                }
            };
            let both =
                |x: i64, y: i64| -> Result<u64, i8> { Ok(parse(x)? as u64 * parse(y)? as u64) };
            let ok = parse(a.abs()).unwrap() as u64;
            let combined = both(a, b).unwrap_or_else(|e| e as u64);
            ok ^ combined << 10 ^ parse(b).map_or(5, |v| v as u64) << 30
        }
        // Option combinators.
        10 => {
            let o = (a % 3 != 0).then_some(a);
            let r = o
                .map(|v| v.wrapping_mul(3))
                .filter(|v| v % 2 == 0)
                .and_then(|v| v.checked_add(b))
                .or(Some(w[0]))
                .xor(None)
                .zip(Some(w[1]))
                .map(|(x, y)| x ^ y)
                .unwrap_or_default();
            let s = w
                .iter()
                .map(|&v| (v % 5 != 0).then(|| v % 5))
                .flatten()
                .sum::<i64>();
            (r ^ s) as u64 ^ o.is_some_and(|v| v > 0) as u64
        }
        // Checked, saturating and wrapping arithmetic.
        11 => {
            let c = a.checked_mul(b).map_or(1, |v| v as u64)
                ^ (a as i32).checked_add(b as i32).map_or(2, |v| v as u64)
                ^ (a as u8).checked_sub(b as u8).map_or(3, u64::from);
            let s = (a as i16).saturating_mul(b as i16) as u64
                ^ (a as u32).saturating_sub(b as u32) as u64
                ^ (a as i8).saturating_add(b as i8) as u64;
            let wr = (a as i32).wrapping_mul(b as i32) as u64
                ^ (a as u16).wrapping_sub(b as u16) as u64
                ^ a.wrapping_neg() as u64
                ^ (a as i8).wrapping_abs() as u64;
            c ^ s.rotate_left(13) ^ wr.rotate_left(29)
        }
        // Unions: a user union and MaybeUninit.
        12 => {
            let u = Bits { float: f };
            let int = unsafe { u.int };
            let mut m = MaybeUninit::<[i64; 3]>::uninit();
            m.write([a, b, w[0]]);
            let arr = unsafe { m.assume_init() };
            let mut slots: [MaybeUninit<u32>; 4] = [MaybeUninit::uninit(); 4];
            for (k, slot) in slots.iter_mut().enumerate() {
                slot.write(w[k] as u32);
            }
            let summed: u64 = slots
                .iter()
                .map(|s| unsafe { s.assume_init() } as u64)
                .sum();
            int ^ (arr[0] ^ arr[1] ^ arr[2]) as u64 ^ summed
        }
        // Integer methods at every width: bit counts, byte swaps, rotations, signum, Ordering.
        13 => {
            let c8 =
                (a as i8).count_ones() + (a as u8).leading_zeros() + (a as i8).trailing_zeros();
            let c16 = (a as u16).swap_bytes() as u32 ^ (b as i16).reverse_bits() as u32;
            let c128 = (a as u128).wrapping_mul(0x1_0000_0001).leading_zeros()
                + (b as i128).trailing_zeros()
                + (a as u128 ^ (b as u128) << 70).count_ones();
            let rot = (a as u128).rotate_left(b as u32 % 128);
            let ord = a.cmp(&b) as i8 as u64 & 3 | ((a as i32).signum() as u64 & 3) << 2;
            (c8 as u64) | (c16 as u64) << 8 | (c128 as u64) << 24 | ord << 40 ^ fold128(rot)
        }
        // Struct ordering, clamping and the Ord methods.
        14 => {
            let p = (a % 10, b % 10);
            let q = (b % 10, w[0] % 10);
            let ordered = match p.cmp(&q) {
                core::cmp::Ordering::Less => 1u64,
                core::cmp::Ordering::Equal => 2,
                core::cmp::Ordering::Greater => 3,
            };
            ordered
                | (a.clamp(-100, 100) as u64 & 0xff) << 2
                | (p.max(q).0 as u64 & 0xf) << 10
                | (f.clamp(-1.0, 1.0).to_bits() & 0xffff) << 14
        }
        // Memory: long repeat expressions, rotations, overlapping copies, fills, niches.
        16 => {
            let mut big = [a as u32; 100];
            big[(b.unsigned_abs() % 100) as usize] = 7;
            big.rotate_left((w[0].unsigned_abs() % 100) as usize);
            let mut bytes = [0u8; 300];
            bytes[(a.unsigned_abs() % 300) as usize] = 1;
            let mut small = [w[0], w[1], w[2], w[3], w[4]];
            unsafe {
                core::ptr::copy(small.as_ptr(), small.as_mut_ptr().add(1), 3);
                core::ptr::write_bytes(small.as_mut_ptr().add(4), 0xab, 1);
            }
            let flag: bool = unsafe { core::mem::transmute((a & 1) as u8) };
            let niche = core::num::NonZeroU32::new(b as u32).map_or(0, |n| n.get());
            let nested: Option<Option<bool>> = match a % 3 {
                0 => None,
                1 => Some(None),
                _ => Some(Some(flag)),
            };
            big.iter().map(|&v| v as u64).sum::<u64>()
                ^ (bytes.iter().position(|&v| v == 1).unwrap_or(999) as u64) << 32
                ^ (bytes.contains(&((b & 1) as u8)) as u64) << 45
                ^ small.iter().fold(0u64, |h, &v| h.rotate_left(9) ^ v as u64)
                ^ (flag as u64) << 50
                ^ (niche as u64) << 20
                ^ (nested.map_or(5, |o| o.map_or(6, |f| f as u64))) << 60
        }
        // Division and remainder of signed integers at every width, Euclid's included.
        _ => {
            let d = b | 1;
            let r8 = (a as i8).wrapping_div((d as i8) | 1) as u64 & 0xff;
            let r32 = (a as i32).wrapping_rem_euclid(d as i32 | 1) as u64 & 0xffff_ffff;
            let r64 = a.wrapping_div_euclid(d) as u64;
            r8 ^ r32 << 8 ^ r64.rotate_left(40)
        }
    }
}

/// The window of thread `i`.
pub fn window(x: &[i64], i: usize) -> &[i64] {
    &x[i..i + WINDOW]
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    #[kernel]
    pub fn ops(op: u32, a: &[i64], b: &[i64], f: &[f64], w: &[i64], mut out: DisjointSlice<u64>) {
        let i = thread::index_1d();
        let n = i.get();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::core_op(op, a[n], b[n], f[n], super::window(w, n));
        }
    }
}

fn main() -> ExitCode {
    run_example("core_ops", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    const N: usize = 1 << 16;
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(77);
    let a: Vec<i64> = rng.vec(N, |r| r.next_u64() as i64 >> (r.next_u64() % 63));
    let b: Vec<i64> = rng.vec(N, |r| r.next_u64() as i64 >> (r.next_u64() % 63));
    let f: Vec<f64> = rng.vec(N, |r| r.f64_in(-1e6, 1e6));
    let w: Vec<i64> = rng.vec(N + WINDOW, |r| r.next_u64() as i64 >> (r.next_u64() % 63));
    let a_dev = gpu.stream.clone_htod(&a)?;
    let b_dev = gpu.stream.clone_htod(&b)?;
    let f_dev = gpu.stream.clone_htod(&f)?;
    let w_dev = gpu.stream.clone_htod(&w)?;
    let mut out = gpu.stream.alloc_zeros::<u64>(N)?;
    let cfg = LaunchConfig::for_num_elems(N as u32);
    let mut ok = true;
    for op in 0..OPS {
        module.ops(
            &gpu.stream,
            cfg,
            op,
            &a_dev,
            &b_dev,
            &f_dev,
            &w_dev,
            &mut out,
        )?;
        let expected: Vec<u64> = (0..N)
            .map(|i| core_op(op, a[i], b[i], f[i], window(&w, i)))
            .collect();
        ok &= check(
            &format!("core op {op}"),
            &gpu.stream.clone_dtoh(&out)?,
            &expected,
        );
    }
    Ok(ok)
}
