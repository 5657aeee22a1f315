//! Integer arithmetic of every width from 8 to 64 bits, signed and unsigned: wrapping and
//! checked arithmetic, division, bit operations, shifts, rotations, comparisons, `abs`,
//! `min`/`max`/`clamp`. The same generic function runs on the CPU for the expected values.

use std::process::ExitCode;

use cuda_host::{CudaSlice, LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

/// What `mix` needs of an integer type.
pub trait Int: Copy + Ord + core::fmt::Debug {
    /// Width in bits.
    const BITS: u32;
    /// The truncation of `bits` to this type (`as`).
    fn from_bits(bits: u64) -> Self;
    fn wrapping_add(self, other: Self) -> Self;
    fn wrapping_sub(self, other: Self) -> Self;
    fn wrapping_mul(self, other: Self) -> Self;
    fn checked_add(self, other: Self) -> Option<Self>;
    fn checked_div(self, other: Self) -> Option<Self>;
    fn checked_rem(self, other: Self) -> Option<Self>;
    fn rotate_left(self, n: u32) -> Self;
    fn rotate_right(self, n: u32) -> Self;
    fn wrapping_shl(self, n: u32) -> Self;
    fn wrapping_shr(self, n: u32) -> Self;
    fn xor(self, other: Self) -> Self;
    fn or(self, other: Self) -> Self;
    fn and(self, other: Self) -> Self;
    fn not(self) -> Self;
    /// `abs` where it cannot overflow, the value itself otherwise (unsigned types: identity).
    fn abs_or_self(self) -> Self;
}

macro_rules! impl_int {
    ($($t:ty => |$x:ident| $abs:expr;)*) => {$(
        impl Int for $t {
            const BITS: u32 = <$t>::BITS;
            fn from_bits(bits: u64) -> Self { bits as $t }
            fn wrapping_add(self, o: Self) -> Self { <$t>::wrapping_add(self, o) }
            fn wrapping_sub(self, o: Self) -> Self { <$t>::wrapping_sub(self, o) }
            fn wrapping_mul(self, o: Self) -> Self { <$t>::wrapping_mul(self, o) }
            fn checked_add(self, o: Self) -> Option<Self> { <$t>::checked_add(self, o) }
            fn checked_div(self, o: Self) -> Option<Self> { <$t>::checked_div(self, o) }
            fn checked_rem(self, o: Self) -> Option<Self> { <$t>::checked_rem(self, o) }
            fn rotate_left(self, n: u32) -> Self { <$t>::rotate_left(self, n) }
            fn rotate_right(self, n: u32) -> Self { <$t>::rotate_right(self, n) }
            fn wrapping_shl(self, n: u32) -> Self { <$t>::wrapping_shl(self, n) }
            fn wrapping_shr(self, n: u32) -> Self { <$t>::wrapping_shr(self, n) }
            fn xor(self, o: Self) -> Self { self ^ o }
            fn or(self, o: Self) -> Self { self | o }
            fn and(self, o: Self) -> Self { self & o }
            fn not(self) -> Self { !self }
            fn abs_or_self(self) -> Self { let $x = self; $abs }
        }
    )*};
}

impl_int! {
    i8 => |x| if x == i8::MIN { x } else { x.abs() };
    i16 => |x| if x == i16::MIN { x } else { x.abs() };
    i32 => |x| if x == i32::MIN { x } else { x.abs() };
    i64 => |x| if x == i64::MIN { x } else { x.abs() };
    u8 => |x| x;
    u16 => |x| x;
    u32 => |x| x;
    u64 => |x| x;
}

/// How many operations `mix` knows.
pub const OPS: u32 = 12;

/// Operation `op` on `a`, `b`, `c` (and shift amount `s`).
pub fn mix<T: Int>(op: u32, a: T, b: T, c: T, s: u32) -> T {
    match op {
        0 => a.wrapping_add(b).xor(a.wrapping_mul(c)),
        1 => a.wrapping_sub(b).or(a.and(c)).not(),
        2 => a.checked_div(b).unwrap_or(T::from_bits(7)),
        3 => match a.checked_rem(b) {
            Some(r) => r,
            None => c,
        },
        4 => a.rotate_left(s).xor(b.rotate_right(s)),
        5 => a.wrapping_shl(s).or(b.wrapping_shr(s)),
        6 => {
            let (lo, hi) = if b < c { (b, c) } else { (c, b) };
            a.clamp(lo, hi)
        }
        7 => a.min(b).wrapping_add(a.max(c)),
        8 => {
            let bits = (a < b) as u64
                | ((a <= b) as u64) << 1
                | ((a > b) as u64) << 2
                | ((a >= b) as u64) << 3
                | ((a == b) as u64) << 4
                | ((a != c) as u64) << 5;
            T::from_bits(bits)
        }
        9 => a.abs_or_self(),
        10 => match a.checked_add(b) {
            Some(sum) => sum,
            None => T::from_bits(0x5a),
        },
        _ => {
            // Plain operators: overflow checks are on in debug builds, so stay in range.
            let small_a = a.and(T::from_bits(0x3f));
            let small_b = b.and(T::from_bits(0x1f));
            let mut acc = T::from_bits(0);
            let mut i = 0;
            while i < s % 5 {
                acc = acc.wrapping_add(small_a).xor(small_b);
                i += 1;
            }
            acc
        }
    }
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    use super::mix;

    macro_rules! body {
        ($op:expr, $a:expr, $b:expr, $c:expr, $s:expr, $out:expr) => {{
            let i = thread::index_1d();
            if let Some(slot) = $out.get_mut(i) {
                let k = i.get();
                *slot = mix($op, $a[k], $b[k], $c[k], $s[k]);
            }
        }};
    }

    #[kernel]
    pub fn mix_i8(op: u32, a: &[i8], b: &[i8], c: &[i8], s: &[u32], mut out: DisjointSlice<i8>) {
        body!(op, a, b, c, s, out)
    }
    #[kernel]
    pub fn mix_u8(op: u32, a: &[u8], b: &[u8], c: &[u8], s: &[u32], mut out: DisjointSlice<u8>) {
        body!(op, a, b, c, s, out)
    }
    #[kernel]
    pub fn mix_i16(
        op: u32,
        a: &[i16],
        b: &[i16],
        c: &[i16],
        s: &[u32],
        mut out: DisjointSlice<i16>,
    ) {
        body!(op, a, b, c, s, out)
    }
    #[kernel]
    pub fn mix_u16(
        op: u32,
        a: &[u16],
        b: &[u16],
        c: &[u16],
        s: &[u32],
        mut out: DisjointSlice<u16>,
    ) {
        body!(op, a, b, c, s, out)
    }
    #[kernel]
    pub fn mix_i32(
        op: u32,
        a: &[i32],
        b: &[i32],
        c: &[i32],
        s: &[u32],
        mut out: DisjointSlice<i32>,
    ) {
        body!(op, a, b, c, s, out)
    }
    #[kernel]
    pub fn mix_u32(
        op: u32,
        a: &[u32],
        b: &[u32],
        c: &[u32],
        s: &[u32],
        mut out: DisjointSlice<u32>,
    ) {
        body!(op, a, b, c, s, out)
    }
    #[kernel]
    pub fn mix_i64(
        op: u32,
        a: &[i64],
        b: &[i64],
        c: &[i64],
        s: &[u32],
        mut out: DisjointSlice<i64>,
    ) {
        body!(op, a, b, c, s, out)
    }
    #[kernel]
    pub fn mix_u64(
        op: u32,
        a: &[u64],
        b: &[u64],
        c: &[u64],
        s: &[u32],
        mut out: DisjointSlice<u64>,
    ) {
        body!(op, a, b, c, s, out)
    }
}

const N: usize = 1 << 20;

/// Inputs of one type: mostly random bits, with small values and zeros mixed in so that
/// division by zero and equal operands happen.
fn inputs<T: Int>(rng: &mut Rng) -> Vec<T> {
    rng.vec(N, |r| {
        let bits = r.next_u64();
        match bits % 8 {
            0 => T::from_bits(0),
            1 => T::from_bits(bits >> 60),
            _ => T::from_bits(bits >> 3),
        }
    })
}

macro_rules! run_type {
    ($t:ty, $launch:ident, $gpu:expr, $module:expr, $rng:expr, $s:expr, $s_dev:expr, $ok:expr) => {{
        let a: Vec<$t> = inputs($rng);
        let b: Vec<$t> = inputs($rng);
        let c: Vec<$t> = inputs($rng);
        let (a_dev, b_dev, c_dev) = (
            $gpu.stream.clone_htod(&a)?,
            $gpu.stream.clone_htod(&b)?,
            $gpu.stream.clone_htod(&c)?,
        );
        let mut out: CudaSlice<$t> = $gpu.stream.alloc_zeros(N)?;
        for op in 0..OPS {
            $module.$launch(
                &$gpu.stream,
                LaunchConfig::for_num_elems(N as u32),
                op,
                &a_dev,
                &b_dev,
                &c_dev,
                $s_dev,
                &mut out,
            )?;
            let got = $gpu.stream.clone_dtoh(&out)?;
            let expected: Vec<$t> = (0..N).map(|i| mix(op, a[i], b[i], c[i], $s[i])).collect();
            $ok &= check(&format!("{} op {op}", stringify!($t)), &got, &expected);
        }
    }};
}

fn main() -> ExitCode {
    run_example("integers", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(7);
    let s: Vec<u32> = rng.vec(N, |r| (r.next_u64() % 70) as u32);
    let s_dev = gpu.stream.clone_htod(&s)?;
    let mut ok = true;
    run_type!(i8, mix_i8, gpu, module, &mut rng, s, &s_dev, ok);
    run_type!(u8, mix_u8, gpu, module, &mut rng, s, &s_dev, ok);
    run_type!(i16, mix_i16, gpu, module, &mut rng, s, &s_dev, ok);
    run_type!(u16, mix_u16, gpu, module, &mut rng, s, &s_dev, ok);
    run_type!(i32, mix_i32, gpu, module, &mut rng, s, &s_dev, ok);
    run_type!(u32, mix_u32, gpu, module, &mut rng, s, &s_dev, ok);
    run_type!(i64, mix_i64, gpu, module, &mut rng, s, &s_dev, ok);
    run_type!(u64, mix_u64, gpu, module, &mut rng, s, &s_dev, ok);
    Ok(ok)
}
