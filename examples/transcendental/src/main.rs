//! Every float method of `std` that needs a math library (`sin`, `exp`, `powf`, `gamma`, ...),
//! and `%`, in `f32` and `f64`, computed by the same Rust function on the GPU and on the host,
//! on pseudo-random inputs over each function's sensible domain plus edge values (zeros of
//! both signs, infinities, NaN, the largest and smallest normal values, subnormals, huge and
//! tiny values). Each function's largest error is printed, in ulps, and checked against its
//! stated bound:
//!
//! - [`Bound::Correct`] (the `f32` transcendentals): distance from the exact value, taken as
//!   the host's `f64` result for the same input, in ulps of the exact value. The bound is
//!   CUDA's documented maximum error of the libdevice function (measured from the correctly
//!   rounded result), plus the half ulp between that and the exact value;
//! - [`Bound::Host`] (the `f64` transcendentals, and `f32`/`f64` methods that `std` computes
//!   with a formula around one): distance from the host's result of the same type, in steps
//!   between representable values. For a libdevice function the bound is CUDA's documented
//!   error plus glibc's documented error of the host's function;
//! - [`Bound::Exact`] (`%`, `rem_euclid`, `powi`'s repeated squaring, `sqrt`, ...): bit for bit
//!   the host's result of the same type.
//!
//! NaN matches any NaN and nothing else; a zero must have the sign of the expected zero. The
//! sign of `ln_gamma` is compared exactly with the host's.
//!
//! Each line ends with a digest of the device's result bits (every NaN counted as one value),
//! so that two devices' outputs can be compared bit for bit. `h200_digests.txt` holds an
//! H200's: the CPU device (`CUDA_OXIDE_DEVICE=cpu`, docs/cpu.md) must match every one of them
//! (it reproduces libdevice and the GPU's special function unit bit for bit), and a GPU run
//! says whether it matches them (another GPU's special function unit may round differently).
//! After a change to the inputs or the functions, record the digests again from an H200 run.

#![feature(float_gamma, float_erf)]
#![allow(deprecated)] // `abs_sub` is a method too.

use std::process::ExitCode;

use cuda_host::{CudaSlice, LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, run_example};

/// How the device's results of one function in one type are judged (see the module docs).
#[derive(Clone, Copy, Debug)]
enum Bound {
    /// Bit for bit the host's result of the same type.
    Exact,
    /// At most this many steps between representable values from the host's result of the
    /// same type.
    Host(u32),
    /// At most this many `f32` ulps from the exact value (the host's `f64` result).
    Correct(f64),
}

/// One way of drawing an input.
#[derive(Clone, Copy, Debug)]
enum Sample {
    /// Uniform in `[lo, hi)`.
    Range(f64, f64),
    /// Any finite value, every exponent equally likely (random bits).
    Wide,
    /// A positive [`Sample::Wide`].
    WidePositive,
    /// An integer uniform in `[lo, hi]`.
    Int(i32, i32),
}

use Sample::{Int, Range, Wide, WidePositive};

/// A function under test: its operation number (as `op_f32`/`op_f64` know it), name, bounds,
/// and where `x` and `y` come from (each input from one of the samples, at random).
struct Function {
    op: u32,
    name: &'static str,
    f32_bound: Bound,
    f64_bound: Bound,
    x: &'static [Sample],
    y: &'static [Sample],
}

impl Function {
    /// Whether it has a second operand (`y` other than [NONE]). Compared by value: whether
    /// two uses of a `const` share an address is up to the compiler, and differed between
    /// builds.
    fn takes_y(&self) -> bool {
        !matches!(self.y, [Range(low, high)] if *low == 0.0 && *high == 0.0)
    }
}

/// Declares the operations once: `op_f32` and `op_f64` (the Rust the GPU and the host both
/// run) and the [`Function`] table.
macro_rules! functions {
    ($($op:literal $name:literal |$x:ident, $y:ident| $body:expr,
        f32: $b32:expr, f64: $b64:expr, x: $xs:expr, y: $ys:expr;)*) => {
        /// Operation `op` of the table on `x` (and `y`), in `f32`.
        pub fn op_f32(op: u32, x: f32, y: f32) -> f32 {
            match op {
                $($op => {
                    let ($x, $y) = (x, y);
                    $body
                })*
                _ => f32::NAN,
            }
        }

        /// Operation `op` of the table on `x` (and `y`), in `f64`.
        pub fn op_f64(op: u32, x: f64, y: f64) -> f64 {
            match op {
                $($op => {
                    let ($x, $y) = (x, y);
                    $body
                })*
                _ => f64::NAN,
            }
        }

        const FUNCTIONS: &[Function] = &[$(Function {
            op: $op,
            name: $name,
            f32_bound: $b32,
            f64_bound: $b64,
            x: $xs,
            y: $ys,
        }),*];
    };
}

const ANY: &[Sample] = &[Wide];
const NONE: &[Sample] = &[Range(0.0, 0.0)];
const TRIG: &[Sample] = &[Range(-10.0, 10.0), Range(-1e5, 1e5), Wide];
const SMALL_OR_ANY: &[Sample] = &[Range(-10.0, 10.0), Wide];
const POSITIVE: &[Sample] = &[Range(0.0, 10.0), WidePositive];

// Bounds: CUDA's documented maximum errors (CUDA C++ Programming Guide, "Mathematical
// Functions") for f32 (+ 0.5, see `Bound::Correct`), and CUDA's plus glibc's (its
// `libm-test-ulps` for x86_64) for f64.
functions! {
    0 "sin" |x, _y| x.sin(), f32: Bound::Correct(2.5), f64: Bound::Host(2 + 1), x: TRIG, y: NONE;
    1 "cos" |x, _y| x.cos(), f32: Bound::Correct(2.5), f64: Bound::Host(2 + 1), x: TRIG, y: NONE;
    2 "tan" |x, _y| x.tan(), f32: Bound::Correct(4.5), f64: Bound::Host(2 + 1), x: TRIG, y: NONE;
    3 "sin_cos.0" |x, _y| x.sin_cos().0,
        f32: Bound::Correct(2.5), f64: Bound::Host(2 + 1), x: TRIG, y: NONE;
    4 "sin_cos.1" |x, _y| x.sin_cos().1,
        f32: Bound::Correct(2.5), f64: Bound::Host(2 + 1), x: TRIG, y: NONE;
    5 "asin" |x, _y| x.asin(),
        f32: Bound::Correct(2.5), f64: Bound::Host(2 + 1), x: &[Range(-1.0, 1.0), Range(-1.1, 1.1)], y: NONE;
    6 "acos" |x, _y| x.acos(),
        f32: Bound::Correct(2.5), f64: Bound::Host(2 + 1), x: &[Range(-1.0, 1.0), Range(-1.1, 1.1)], y: NONE;
    7 "atan" |x, _y| x.atan(),
        f32: Bound::Correct(2.5), f64: Bound::Host(2 + 1), x: SMALL_OR_ANY, y: NONE;
    8 "atan2" |x, y| x.atan2(y),
        f32: Bound::Correct(3.5), f64: Bound::Host(2 + 1), x: SMALL_OR_ANY, y: SMALL_OR_ANY;
    9 "sinh" |x, _y| x.sinh(),
        f32: Bound::Correct(3.5), f64: Bound::Host(2 + 2), x: &[Range(-10.0, 10.0), Range(-720.0, 720.0)], y: NONE;
    10 "cosh" |x, _y| x.cosh(),
        f32: Bound::Correct(2.5), f64: Bound::Host(1 + 2), x: &[Range(-10.0, 10.0), Range(-720.0, 720.0)], y: NONE;
    11 "tanh" |x, _y| x.tanh(),
        f32: Bound::Correct(2.5), f64: Bound::Host(1 + 2), x: SMALL_OR_ANY, y: NONE;
    12 "asinh" |x, _y| x.asinh(),
        f32: Bound::Correct(3.5), f64: Bound::Host(3 + 2), x: SMALL_OR_ANY, y: NONE;
    13 "acosh" |x, _y| x.acosh(),
        f32: Bound::Correct(4.5), f64: Bound::Host(3 + 2), x: &[Range(1.0, 10.0), WidePositive], y: NONE;
    // `std` computes `atanh` as `0.5 * ln_1p(2x / (1 - x))`: both sides round the argument
    // alike, then their `log1p`s differ by at most libdevice's error plus glibc's.
    14 "atanh" |x, _y| x.atanh(),
        f32: Bound::Host(1 + 2), f64: Bound::Host(1 + 1), x: &[Range(-1.0, 1.0)], y: NONE;
    15 "exp" |x, _y| x.exp(),
        f32: Bound::Correct(2.5), f64: Bound::Host(1 + 1), x: &[Range(-10.0, 10.0), Range(-750.0, 750.0)], y: NONE;
    16 "exp2" |x, _y| x.exp2(),
        f32: Bound::Correct(2.5), f64: Bound::Host(1 + 1), x: &[Range(-10.0, 10.0), Range(-1100.0, 1100.0)], y: NONE;
    17 "exp_m1" |x, _y| x.exp_m1(),
        f32: Bound::Correct(1.5), f64: Bound::Host(1 + 1),
        x: &[Range(-1e-3, 1e-3), Range(-10.0, 10.0), Range(-750.0, 750.0)], y: NONE;
    18 "ln" |x, _y| x.ln(), f32: Bound::Correct(1.5), f64: Bound::Host(1 + 1), x: POSITIVE, y: NONE;
    // `ln(x) / ln(base)`: each logarithm within libdevice's error plus the host's, then a
    // division that rounds.
    19 "log" |x, y| x.log(y),
        f32: Bound::Host(5), f64: Bound::Host(5), x: POSITIVE, y: &[Range(0.1, 10.0), WidePositive];
    20 "log2" |x, _y| x.log2(), f32: Bound::Correct(1.5), f64: Bound::Host(1 + 2), x: POSITIVE, y: NONE;
    21 "log10" |x, _y| x.log10(), f32: Bound::Correct(2.5), f64: Bound::Host(1 + 2), x: POSITIVE, y: NONE;
    22 "ln_1p" |x, _y| x.ln_1p(),
        f32: Bound::Correct(1.5), f64: Bound::Host(1 + 1),
        x: &[Range(-1.0, 1.0), Range(-1e-3, 1e-3), WidePositive], y: NONE;
    23 "powf" |x, y| x.powf(y),
        f32: Bound::Correct(4.5), f64: Bound::Host(2 + 1),
        x: &[Range(0.0, 10.0), WidePositive, Range(-10.0, 0.0)], y: &[Range(-30.0, 30.0), Int(-20, 20)];
    24 "powi" |x, y| x.powi(y as i32),
        f32: Bound::Exact, f64: Bound::Exact, x: &[Range(-3.0, 3.0), Wide], y: &[Int(-40, 40), Int(-2000, 2000)];
    25 "sqrt" |x, _y| x.sqrt(), f32: Bound::Exact, f64: Bound::Exact, x: &[WidePositive, Wide], y: NONE;
    26 "cbrt" |x, _y| x.cbrt(), f32: Bound::Correct(1.5), f64: Bound::Host(1 + 4), x: ANY, y: NONE;
    27 "hypot" |x, y| x.hypot(y),
        f32: Bound::Correct(3.5), f64: Bound::Host(2 + 1), x: SMALL_OR_ANY, y: SMALL_OR_ANY;
    28 "gamma" |x, _y| x.gamma(),
        f32: Bound::Correct(5.5), f64: Bound::Host(10 + 9),
        x: &[Range(0.0, 5.0), Range(-30.0, 40.0), Range(-180.0, 180.0)], y: NONE;
    // Outside (-10.001, -2.264) for f32 and (-23.0001, -2.2637) for f64, where CUDA documents
    // no ulp bound.
    29 "ln_gamma" |x, _y| x.ln_gamma().0,
        f32: Bound::Correct(6.5), f64: Bound::Host(4 + 4),
        x: &[Range(0.0, 10.0), Range(0.0, 1e4), Range(-2.2, 0.0), Range(-1e3, -23.01)], y: NONE;
    30 "erf" |x, _y| x.erf(), f32: Bound::Correct(2.5), f64: Bound::Host(2 + 1), x: &[Range(-5.0, 5.0), Wide], y: NONE;
    31 "erfc" |x, _y| x.erfc(),
        f32: Bound::Correct(4.5), f64: Bound::Host(5 + 5), x: &[Range(-5.0, 9.0), Range(-2.0, 2.0)], y: NONE;
    32 "%" |x, y| x % y,
        f32: Bound::Exact, f64: Bound::Exact, x: &[Wide, Range(-100.0, 100.0)], y: &[Wide, Range(-10.0, 10.0)];
    33 "rem_euclid" |x, y| x.rem_euclid(y),
        f32: Bound::Exact, f64: Bound::Exact, x: &[Wide, Range(-100.0, 100.0)], y: &[Wide, Range(-10.0, 10.0)];
    34 "div_euclid" |x, y| x.div_euclid(y),
        f32: Bound::Exact, f64: Bound::Exact, x: &[Wide, Range(-100.0, 100.0)], y: &[Wide, Range(-10.0, 10.0)];
    35 "abs_sub" |x, y| x.abs_sub(y), f32: Bound::Exact, f64: Bound::Exact, x: SMALL_OR_ANY, y: SMALL_OR_ANY;
    36 "mul_add" |x, y| x.mul_add(y, 0.5), f32: Bound::Exact, f64: Bound::Exact, x: SMALL_OR_ANY, y: SMALL_OR_ANY;
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    #[kernel]
    pub fn apply_f32(op: u32, x: &[f32], y: &[f32], mut out: DisjointSlice<f32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::op_f32(op, x[i.get()], y[i.get()]);
        }
    }

    #[kernel]
    pub fn apply_f64(op: u32, x: &[f64], y: &[f64], mut out: DisjointSlice<f64>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::op_f64(op, x[i.get()], y[i.get()]);
        }
    }

    #[kernel]
    pub fn gamma_sign_f32(x: &[f32], mut out: DisjointSlice<i32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = x[i.get()].ln_gamma().1;
        }
    }

    #[kernel]
    pub fn gamma_sign_f64(x: &[f64], mut out: DisjointSlice<i32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = x[i.get()].ln_gamma().1;
        }
    }
}

/// What the checks need of `f32` and `f64`.
trait Float: Copy + std::fmt::Debug + std::fmt::LowerExp {
    const NAME: &'static str;
    /// The edge values every function is also run on.
    fn edges() -> Vec<Self>;
    fn from_f64(value: f64) -> Self;
    fn to_f64(self) -> f64;
    /// A finite value from random bits.
    fn random_finite(rng: &mut Rng) -> Self;
    fn is_nan(self) -> bool;
    /// The position of `self` among the representable values: consecutive values differ by
    /// one, `-0` is one below `+0`, infinities one beyond the largest finite values.
    fn position(self) -> i64;
    fn bits_eq(self, other: Self) -> bool;
    /// The bits, every NaN the same value.
    fn digest_bits(self) -> u64;
    /// `op` of the table, on the host.
    fn op(op: u32, x: Self, y: Self) -> Self;
}

macro_rules! float_impl {
    ($t:ident, $bits:ty, $op:ident, $huge:expr, $tiny:expr) => {
        impl Float for $t {
            const NAME: &'static str = stringify!($t);

            fn edges() -> Vec<$t> {
                let finite = [
                    0.0,
                    1.0,
                    0.5,
                    2.0,
                    3.0,
                    1.5,
                    $t::MAX,
                    $t::MIN_POSITIVE,
                    $t::MIN_POSITIVE / 4.0,
                    $huge,
                    $tiny,
                ];
                let mut all: Vec<$t> = finite.iter().flat_map(|&v| [v, -v]).collect();
                all.extend([$t::INFINITY, $t::NEG_INFINITY, $t::NAN]);
                all
            }

            fn from_f64(value: f64) -> $t {
                value as $t
            }

            fn to_f64(self) -> f64 {
                self as f64
            }

            fn random_finite(rng: &mut Rng) -> $t {
                loop {
                    let value = $t::from_bits(rng.next_u64() as $bits);
                    if value.is_finite() {
                        return value;
                    }
                }
            }

            fn is_nan(self) -> bool {
                $t::is_nan(self)
            }

            fn position(self) -> i64 {
                let magnitude = (self.to_bits() & !(1 << (<$bits>::BITS - 1))) as i64;
                if self.is_sign_negative() {
                    -magnitude - 1
                } else {
                    magnitude
                }
            }

            fn bits_eq(self, other: $t) -> bool {
                self.to_bits() == other.to_bits()
            }

            fn digest_bits(self) -> u64 {
                if self.is_nan() {
                    u64::MAX
                } else {
                    self.to_bits() as u64
                }
            }

            fn op(op: u32, x: $t, y: $t) -> $t {
                $op(op, x, y)
            }
        }
    };
}

float_impl!(f32, u32, op_f32, 1e30, 1e-30);
float_impl!(f64, u64, op_f64, 1e300, 1e-300);

/// `count` inputs drawn from `samples`, then the edge values.
fn inputs<T: Float>(rng: &mut Rng, samples: &[Sample], count: usize) -> Vec<T> {
    let mut values: Vec<T> = (0..count)
        .map(
            |_| match samples[(rng.next_u64() % samples.len() as u64) as usize] {
                Range(lo, hi) => T::from_f64(rng.f64_in(lo, hi)),
                Wide => T::random_finite(rng),
                WidePositive => T::from_f64(T::random_finite(rng).to_f64().abs()),
                Int(lo, hi) => {
                    let span = (i64::from(hi) - i64::from(lo) + 1) as u64;
                    T::from_f64((i64::from(lo) + (rng.next_u64() % span) as i64) as f64)
                }
            },
        )
        .collect();
    values.extend(T::edges());
    values
}

/// How far `got` is under `bound` from the host's result of the same type, `expected`, or
/// from the exact value, `exact`, in ulps (infinite where one is NaN and the other is not).
fn error<T: Float>(bound: Bound, got: T, expected: T, exact: f64) -> f64 {
    let reference_is_nan = match bound {
        Bound::Correct(_) => exact.is_nan(),
        Bound::Exact | Bound::Host(_) => expected.is_nan(),
    };
    if got.is_nan() || reference_is_nan {
        return if got.is_nan() && reference_is_nan {
            0.0
        } else {
            f64::INFINITY
        };
    }
    match bound {
        Bound::Exact => {
            if got.bits_eq(expected) {
                0.0
            } else {
                f64::INFINITY
            }
        }
        Bound::Host(_) => got.position().abs_diff(expected.position()) as f64,
        Bound::Correct(_) => f32_ulps(got.to_f64() as f32, exact),
    }
}

/// How far the `f32` result `got` is from the exact value `exact`, in `f32` ulps of `exact`;
/// where `exact` is zero or rounds to an infinity, or `got` is infinite, in steps from the
/// correctly rounded result.
fn f32_ulps(got: f32, exact: f64) -> f64 {
    let rounded = exact as f32;
    if exact == 0.0 || rounded.is_infinite() || got.is_infinite() {
        return got.position().abs_diff(rounded.position()) as f64;
    }
    let exponent = (((exact.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(-126);
    let ulp = 2f64.powi(exponent - 23);
    (f64::from(got) - exact).abs() / ulp
}

/// What one function in one type came to.
struct Outcome {
    max_error: f64,
    failures: usize,
    worst: Option<String>,
}

/// Compares the device's results of `function` in type `T` with the host's; prints one line.
fn judge<T: Float>(function: &Function, x: &[T], y: &[T], got: &[T]) -> bool {
    let bound = if T::NAME == "f32" {
        function.f32_bound
    } else {
        function.f64_bound
    };
    let limit = match bound {
        Bound::Exact => 0.0,
        Bound::Host(steps) => f64::from(steps),
        // The host's f64 result is itself a few f64 ulps off: far below an f32 ulp.
        Bound::Correct(ulps) => ulps + 1e-6,
    };
    let mut outcome = Outcome {
        max_error: 0.0,
        failures: 0,
        worst: None,
    };
    for i in 0..got.len() {
        let expected = T::op(function.op, x[i], y[i]);
        let exact = op_f64(function.op, x[i].to_f64(), y[i].to_f64());
        let err = error(bound, got[i], expected, exact);
        if err > limit {
            outcome.failures += 1;
        }
        if err > outcome.max_error {
            outcome.max_error = err;
            outcome.worst = Some(format!(
                "x = {:e}, y = {:e}: got {:e}, host {:e}",
                x[i], y[i], got[i], expected
            ));
        }
    }
    let shown = match bound {
        Bound::Exact => "exact".to_owned(),
        Bound::Host(steps) => format!("bound {steps} ulp from the host's {}", T::NAME),
        Bound::Correct(ulps) => format!("bound {ulps} ulp from the exact value"),
    };
    if outcome.failures == 0 {
        let digest = digest(got);
        println!(
            "ok   {} {}: max {:.2} ulp ({shown}) over {} values, digest {digest:016x}",
            function.name,
            T::NAME,
            outcome.max_error,
            got.len(),
        );
        same_bits_as_the_h200(function.name, T::NAME, digest)
    } else {
        println!(
            "FAIL {} {}: {} of {} values beyond the bound ({shown}); worst {:.2} ulp at {}",
            function.name,
            T::NAME,
            outcome.failures,
            got.len(),
            outcome.max_error,
            outcome.worst.unwrap_or_default()
        );
        false
    }
}

/// The digests of an H200's results (`function type digest` per line).
const H200_DIGESTS: &str = include_str!("../h200_digests.txt");

/// Whether a digest agrees with the H200's; a difference fails the CPU device only.
fn same_bits_as_the_h200(name: &str, ty: &str, digest: u64) -> bool {
    let recorded = H200_DIGESTS.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next() == Some(name) && words.next() == Some(ty))
            .then(|| words.next().and_then(|d| u64::from_str_radix(d, 16).ok()))
            .flatten()
    });
    let cpu = cuda_host::cpu_device_requested();
    match recorded {
        Some(h200) if h200 == digest => true,
        Some(h200) => {
            println!(
                "{} {name} {ty}: the bits differ from the H200's (digest {h200:016x})",
                if cpu { "FAIL" } else { "note" }
            );
            !cpu
        }
        None => {
            println!("FAIL {name} {ty}: no H200 digest recorded in h200_digests.txt");
            false
        }
    }
}

/// FNV-1a over the results' [Float::digest_bits].
fn digest<T: Float>(values: &[T]) -> u64 {
    values.iter().fold(0xcbf2_9ce4_8422_2325, |hash, value| {
        value
            .digest_bits()
            .to_le_bytes()
            .iter()
            .fold(hash, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            })
    })
}

/// Inputs of `function` in type `T`: `count` random pairs, the edge values as `x` (with `y` =
/// 1.5) and, for functions of two arguments, every pair of edge values.
fn function_inputs<T: Float>(rng: &mut Rng, function: &Function, count: usize) -> (Vec<T>, Vec<T>) {
    let mut x: Vec<T> = inputs(rng, function.x, count);
    let mut y: Vec<T> = inputs(rng, function.y, count);
    let edges = T::edges();
    y.truncate(count);
    y.extend(edges.iter().map(|_| T::from_f64(1.5)));
    if function.takes_y() {
        for &a in &edges {
            for &b in &edges {
                x.push(a);
                y.push(b);
            }
        }
    }
    (x, y)
}

fn main() -> ExitCode {
    run_example("transcendental", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    const COUNT: usize = 1 << 17;
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(7);
    let mut ok = true;
    let upload32 = |v: &[f32]| gpu.stream.clone_htod(v);
    let upload64 = |v: &[f64]| gpu.stream.clone_htod(v);

    for function in FUNCTIONS {
        let (x, y) = function_inputs::<f32>(&mut rng, function, COUNT);
        let cfg = LaunchConfig::for_num_elems(x.len() as u32);
        let (x_dev, y_dev) = (upload32(&x)?, upload32(&y)?);
        let mut out: CudaSlice<f32> = gpu.stream.alloc_zeros(x.len())?;
        module.apply_f32(&gpu.stream, cfg, function.op, &x_dev, &y_dev, &mut out)?;
        ok &= judge(function, &x, &y, &gpu.stream.clone_dtoh(&out)?);

        let (x, y) = function_inputs::<f64>(&mut rng, function, COUNT);
        let cfg = LaunchConfig::for_num_elems(x.len() as u32);
        let (x_dev, y_dev) = (upload64(&x)?, upload64(&y)?);
        let mut out: CudaSlice<f64> = gpu.stream.alloc_zeros(x.len())?;
        module.apply_f64(&gpu.stream, cfg, function.op, &x_dev, &y_dev, &mut out)?;
        ok &= judge(function, &x, &y, &gpu.stream.clone_dtoh(&out)?);
    }

    // The sign of gamma that `ln_gamma` returns.
    let samples = &[Range(-30.0, 30.0), Range(-1e3, 0.0), Wide];
    let x: Vec<f32> = inputs(&mut rng, samples, COUNT);
    let mut out: CudaSlice<i32> = gpu.stream.alloc_zeros(x.len())?;
    let cfg = LaunchConfig::for_num_elems(x.len() as u32);
    module.gamma_sign_f32(&gpu.stream, cfg, &upload32(&x)?, &mut out)?;
    let expected: Vec<i32> = x.iter().map(|v| v.ln_gamma().1).collect();
    ok &= example_support::check(
        "ln_gamma sign f32",
        &gpu.stream.clone_dtoh(&out)?,
        &expected,
    );
    let x: Vec<f64> = inputs(&mut rng, samples, COUNT);
    let mut out: CudaSlice<i32> = gpu.stream.alloc_zeros(x.len())?;
    let cfg = LaunchConfig::for_num_elems(x.len() as u32);
    module.gamma_sign_f64(&gpu.stream, cfg, &upload64(&x)?, &mut out)?;
    let expected: Vec<i32> = x.iter().map(|v| v.ln_gamma().1).collect();
    ok &= example_support::check(
        "ln_gamma sign f64",
        &gpu.stream.clone_dtoh(&out)?,
        &expected,
    );
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_representable_values() {
        assert_eq!(0.0f32.position() - (-0.0f32).position(), 1);
        assert_eq!(1.0f32.next_up().position() - 1.0f32.position(), 1);
        assert_eq!(f32::INFINITY.position() - f32::MAX.position(), 1);
        assert_eq!((-1.0f64).position() - (-1.0f64).next_up().position(), -1);
    }

    #[test]
    fn f32_ulps_of_the_exact_value() {
        assert_eq!(f32_ulps(1.0, 1.0), 0.0);
        let exact = 1.0 + f64::from(f32::EPSILON) / 4.0;
        assert!((f32_ulps(1.0, exact) - 0.25).abs() < 1e-9);
        assert_eq!(f32_ulps(f32::INFINITY, 1e39), 0.0);
        assert_eq!(f32_ulps(f32::MAX, 1e39), 1.0);
        assert_eq!(f32_ulps(-0.0, 0.0), 1.0);
    }
}
