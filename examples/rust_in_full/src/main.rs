//! Rust in full on the device, each construct checked against the CPU on random inputs:
//! the `algebraic_*` float methods (within the error bound of the reorderings they allow),
//! warp operations over a member mask (the even and the odd lanes as two groups on two
//! branches), `Location::caller()` and `#[track_caller]` (the same locations as the host
//! sees), GPU intrinsics called through function pointers, trait upcasting and unsizing through
//! structs (`NonNull<[T; N]>`, a user's pointer type), and the device heap (`Vec`, `Box`,
//! `Box<dyn Trait>`; an allocation that cannot succeed stops the kernel with an error), and
//! `f16` arithmetic (bit for bit: every operation is correctly rounded on both sides), and
//! 128-bit atomics (sm_90: a compare-exchange loop and a swap on `u128`s).

#![feature(float_algebraic, coerce_unsized, unsize, f16)]

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, blocks_of, check, run_example};

/// Threads in all (a multiple of the warp).
const N: usize = 1 << 15;
/// Terms of each thread's algebraic sum.
const TERMS: usize = 8;

/// One term of the algebraic sum: `(x - 1.5) / (x % 7 + 9)`.
pub fn term(x: f64) -> f64 {
    x.algebraic_sub(1.5)
        .algebraic_div(x.algebraic_rem(7.0).algebraic_add(9.0))
}

/// What one lane of a group of `mask` computes from the values `v` of its warp (the CPU model
/// of `kernels::group`).
fn group_model(mask: u32, v: &[u32; 32], lane: usize) -> u32 {
    let members = (0..32).filter(|&l| mask >> l & 1 == 1);
    let from = v[lane ^ 2];
    let f = f64::from(v[(lane + 2) % 32]) * 0.5;
    let ballot = members
        .clone()
        .filter(|&l| v[l] & 1 == 1)
        .fold(0u32, |b, l| b | 1 << l);
    let all = members.clone().all(|l| v[l] > 3);
    let any = members.clone().any(|l| v[l] == 7);
    let same = members
        .clone()
        .filter(|&l| v[l] % 4 == v[lane] % 4)
        .fold(0u32, |b, l| b | 1 << l);
    let sum = members.clone().fold(0u32, |s, l| s.wrapping_add(v[l]));
    let max = members.clone().map(|l| v[l] % 1000).max().unwrap_or(0);
    from ^ (f * 4.0) as u32
        ^ ballot.rotate_left(3)
        ^ (all as u32) << 1
        ^ (any as u32) << 2
        ^ same.rotate_left(7)
        ^ sum
        ^ max << 5
}

/// The line of the call of this function (`#[track_caller]` through two levels).
#[track_caller]
#[inline(never)]
pub fn caller_line() -> u32 {
    caller_location().line()
}

/// The location of the call of [`caller_line`]'s caller.
#[track_caller]
#[inline(never)]
pub fn caller_location() -> &'static core::panic::Location<'static> {
    core::panic::Location::caller()
}

/// Where things are, as numbers: a `Location::caller()` of this function's own line, its
/// column, its file name (length and byte sum), and two `#[track_caller]` calls.
#[inline(never)]
pub fn locations() -> [u32; 6] {
    let here = core::panic::Location::caller();
    let first = caller_line();
    let second = caller_location();
    [
        here.line(),
        here.column(),
        here.file().len() as u32,
        here.file().bytes().map(u32::from).sum(),
        first,
        second.line() << 16 | second.column(),
    ]
}

/// Something with a name.
pub trait Named {
    fn id(&self) -> u32;
}

/// Something with a size.
pub trait Scaled {
    fn scale(&self) -> u32;
}

/// A shape: both of the above, and an area.
pub trait Shape: Named + Scaled {
    fn area(&self) -> u32;
}

pub struct Square(pub u32);
pub struct Rect(pub u32, pub u32);

impl Named for Square {
    fn id(&self) -> u32 {
        1
    }
}
impl Scaled for Square {
    fn scale(&self) -> u32 {
        self.0.wrapping_mul(3)
    }
}
impl Shape for Square {
    fn area(&self) -> u32 {
        self.0.wrapping_mul(self.0)
    }
}
impl Named for Rect {
    fn id(&self) -> u32 {
        2
    }
}
impl Scaled for Rect {
    fn scale(&self) -> u32 {
        self.0 ^ self.1
    }
}
impl Shape for Rect {
    fn area(&self) -> u32 {
        self.0.wrapping_mul(self.1)
    }
}

/// A user's pointer type that unsizes like a reference (`CoerceUnsized`).
pub struct Handle<T: ?Sized> {
    pub tag: u32,
    pub ptr: *const T,
}

impl<T: ?Sized + core::marker::Unsize<U>, U: ?Sized> core::ops::CoerceUnsized<Handle<U>>
    for Handle<T>
{
}

/// Reads `shape` through its supertraits (trait upcasting).
#[inline(never)]
fn through_supertraits(shape: &dyn Shape) -> u32 {
    let named: &dyn Named = shape;
    let scaled: &dyn Scaled = shape;
    shape.area() ^ named.id() << 28 ^ scaled.scale().rotate_left(7)
}

/// Trait upcasting and unsizing through structs, on the values `a` and `b`.
#[inline(never)]
pub fn upcasts(a: u32, b: u32) -> u32 {
    let square = Square(a);
    let rect = Rect(a, b);
    let shape: &dyn Shape = if b % 2 == 0 { &square } else { &rect };
    let array = [a, b, a ^ b, 5, 6];
    let slice: core::ptr::NonNull<[u32]> = core::ptr::NonNull::from(&array);
    // SAFETY: `slice` points to `array`, alive here.
    let sum = unsafe { slice.as_ref() }
        .iter()
        .fold(0u32, |s, &v| s.wrapping_add(v));
    let handle: Handle<dyn Shape> = Handle {
        tag: b,
        ptr: &rect as *const Rect,
    };
    // SAFETY: `handle.ptr` points to `rect`, alive here.
    let via_handle = unsafe { through_supertraits(&*handle.ptr) } ^ handle.tag;
    through_supertraits(shape) ^ sum.rotate_left(3) ^ slice.len() as u32 ^ via_handle << 1
}

/// Heap work on `a` and `b`: a `Vec` grown element by element (reallocations), one made
/// zeroed, one collected, `Box`es and a `Vec<Box<dyn Shape>>`, all freed at the end.
#[inline(never)]
pub fn heap_work(a: u32, b: u32) -> u32 {
    let n = (a % 40) as usize;
    let mut v: Vec<u32> = Vec::new();
    for k in 0..n as u32 {
        v.push(b.wrapping_mul(k) ^ a);
    }
    v.sort_unstable();
    v.retain(|x| x % 3 != 0);
    let zeroed = vec![0u64; n + 1];
    let squares: Vec<u64> = (0..n as u64).map(|k| k * k).collect();
    let boxed = Box::new([a, b, a ^ b]);
    let shapes: Vec<Box<dyn Shape>> = (0..n as u32 % 7)
        .map(|k| -> Box<dyn Shape> {
            if k % 2 == 0 {
                Box::new(Square(a.wrapping_add(k)))
            } else {
                Box::new(Rect(b, k))
            }
        })
        .collect();
    let areas = shapes.iter().fold(0u32, |s, shape| {
        s.wrapping_add(through_supertraits(shape.as_ref()))
    });
    v.iter().fold(0u32, |s, &x| s.rotate_left(5) ^ x)
        ^ zeroed.len() as u32
        ^ squares.iter().sum::<u64>() as u32
        ^ boxed.iter().fold(0u32, |s, &x| s.wrapping_add(x))
        ^ areas.rotate_left(11)
        ^ v.capacity().min(1) as u32
}

/// `f16` arithmetic, comparisons and conversions on `x` and `y`, as bits.
#[inline(never)]
pub fn half_work(x: f32, y: f32) -> u64 {
    let (a, b) = (x as f16, y as f16);
    let r = (a + b) * a - b / (a + 1.5);
    let m = a.abs().max(b).min(a.copysign(b)) + (a % b);
    let flags = (a < b) as u64 | ((a == -b) as u64) << 1 | ((r >= m) as u64) << 2;
    u64::from(r.to_bits())
        | u64::from(m.to_bits()) << 16
        | ((a as i32 as u64) & 0xfff) << 32
        | u64::from((r as f64).to_bits() as u8) << 44
        | flags << 52
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread, warp};

    /// `super::locations()` on the GPU, in every thread.
    #[kernel]
    pub fn locations(mut out: DisjointSlice<[u32; 6]>) {
        if let Some(slot) = out.get_mut(thread::index_1d()) {
            *slot = super::locations();
        }
    }

    /// `super::upcasts` of each pair of values.
    #[kernel]
    pub fn upcasts(a: &[u32], b: &[u32], mut out: DisjointSlice<u32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::upcasts(a[i.get()], b[i.get()]);
        }
    }

    /// `super::heap_work` of each pair of values, on the device heap.
    #[kernel]
    pub fn heap(a: &[u32], b: &[u32], mut out: DisjointSlice<u32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::heap_work(a[i.get()], b[i.get()]);
        }
    }

    /// An allocation the device heap cannot serve: `handle_alloc_error` stops the kernel.
    #[kernel]
    pub fn heap_exhausted(bytes: u64, mut out: DisjointSlice<u32>) {
        let mut v: Vec<u8> = Vec::with_capacity(bytes as usize);
        v.push(bytes as u8);
        if let Some(slot) = out.get_mut(thread::index_1d()) {
            *slot = v.capacity() as u32 ^ u32::from(v[0]);
        }
    }

    /// `super::half_work` of each pair of values.
    #[kernel]
    pub fn halves(x: &[f32], y: &[f32], mut out: DisjointSlice<u64>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::half_work(x[i.get()], y[i.get()]);
        }
    }

    /// 128-bit atomics: every thread adds `x << 64 | 1` to the `u128` in `wide[0..2]` with a
    /// compare-exchange loop, and swaps its own value into the `u128` in `wide[2..4]`,
    /// writing the value it replaced.
    #[kernel]
    pub fn wide_atomics(wide: &mut [u64], x: &[u64], mut replaced: DisjointSlice<u64>) {
        use cuda_device::atomic::AtomicOrdering::{AcqRel, Acquire, Relaxed};
        use cuda_device::atomic::DeviceAtomicU128;
        let i = thread::index_1d();
        let base = wide.as_mut_ptr().cast::<u128>();
        // SAFETY: the buffer holds two `u128`s, 16-aligned (device allocations are 256-aligned),
        // accessed only atomically while the kernel runs.
        let (sum, last) = unsafe {
            (
                DeviceAtomicU128::from_ptr(base),
                DeviceAtomicU128::from_ptr(base.add(1)),
            )
        };
        let add = u128::from(x[i.get()]) << 64 | 1;
        let mut current = sum.load(Relaxed);
        while let Err(seen) =
            sum.compare_exchange(current, current.wrapping_add(add), AcqRel, Acquire)
        {
            current = seen;
        }
        let previous = last.swap(u128::from(x[i.get()]) << 64 | i.get() as u128, Relaxed);
        if let Some(slot) = replaced.get_mut(i) {
            *slot = (previous >> 64) as u64 ^ previous as u64;
        }
    }

    /// A special register read through a table of function pointers, and a warp vote passed
    /// as a `fn(bool) -> bool`.
    #[kernel]
    pub fn intrinsic_pointers(which: u32, values: &[u32], mut out: DisjointSlice<u32>) {
        let registers: [fn() -> u32; 3] = [warp::lane_id, thread::threadIdx_x, thread::blockIdx_x];
        let vote: fn(bool) -> bool = if which == 0 { warp::all } else { warp::any };
        let i = thread::index_1d();
        let r = registers[i.get() % 3]();
        let v = vote(values[i.get()] > 2);
        if let Some(slot) = out.get_mut(i) {
            *slot = r << 1 | v as u32;
        }
    }

    /// `a * b + c` with the algebraic methods (LLVM may fuse it), and a sum of
    /// [`super::TERMS`] terms that LLVM may reassociate.
    #[kernel]
    pub fn algebraic(
        a: &[f32],
        b: &[f32],
        c: &[f32],
        x: &[f64],
        mut fused: DisjointSlice<f32>,
        mut sums: DisjointSlice<f64>,
    ) {
        let i = thread::index_1d();
        let n = i.get();
        if let Some(slot) = fused.get_mut(i) {
            *slot = a[n].algebraic_mul(b[n]).algebraic_add(c[n]);
        }
        if let Some(slot) = sums.get_mut(i) {
            let mut s = 0.0f64;
            for k in 0..super::TERMS {
                s = s.algebraic_add(super::term(x[n * super::TERMS + k]));
            }
            *slot = s;
        }
    }

    /// The warp operations of one group of lanes, `mask` (see `super::group_model`).
    #[inline(never)]
    fn group(mask: u32, v: u32) -> u32 {
        let lane = warp::lane_id();
        let from = warp::shuffle_xor_sync(mask, v, 2);
        let f = warp::shuffle_sync(mask, f64::from(v) * 0.5, (lane + 2) % 32);
        let ballot = warp::ballot_sync(mask, v & 1 == 1);
        let all = warp::all_sync(mask, v > 3);
        let any = warp::any_sync(mask, v == 7);
        let same = warp::match_any_sync(mask, v % 4);
        let sum = warp::reduce_add_sync(mask, v);
        let max = warp::reduce_max_sync(mask, v % 1000);
        warp::sync_mask(mask);
        from ^ (f * 4.0) as u32
            ^ ballot.rotate_left(3)
            ^ (all as u32) << 1
            ^ (any as u32) << 2
            ^ same.rotate_left(7)
            ^ sum
            ^ max << 5
    }

    /// The even lanes and the odd lanes of each warp, on two branches, each a group of its own.
    #[kernel]
    pub fn masked_warp(values: &[u32], mut out: DisjointSlice<u32>) {
        let i = thread::index_1d();
        let v = values[i.get()];
        let r = if warp::lane_id() % 2 == 0 {
            group(0x5555_5555, v)
        } else {
            group(0xaaaa_aaaa, v)
        };
        if let Some(slot) = out.get_mut(i) {
            *slot = r;
        }
    }
}

fn main() -> ExitCode {
    run_example("rust_in_full", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    // The device heap is fixed at the first launch that allocates: size it first.
    gpu.ctx.set_heap_size(256 << 20)?;
    let heap_ok = gpu.ctx.heap_size()? >= 256 << 20;
    println!(
        "{} device heap of {} MiB",
        if heap_ok { "ok  " } else { "FAIL" },
        gpu.ctx.heap_size()? >> 20
    );
    let module = kernels::load(&gpu.ctx)?;
    let cfg = LaunchConfig::for_num_elems(N as u32);
    let mut rng = Rng::new(2026);
    let mut ok = true;

    // Algebraic float methods: within the error bound of what they allow (a fused multiply-add,
    // a reassociated sum, a division through a reciprocal), not bit for bit.
    let a: Vec<f32> = rng.vec(N, |r| r.f32_in(-100.0, 100.0));
    let b: Vec<f32> = rng.vec(N, |r| r.f32_in(-100.0, 100.0));
    let c: Vec<f32> = rng.vec(N, |r| r.f32_in(-1e4, 1e4));
    let x: Vec<f64> = rng.vec(N * TERMS, |r| r.f64_in(-1e3, 1e3));
    let mut fused = gpu.stream.alloc_zeros::<f32>(N)?;
    let mut sums = gpu.stream.alloc_zeros::<f64>(N)?;
    module.algebraic(
        &gpu.stream,
        cfg,
        &gpu.stream.clone_htod(&a)?,
        &gpu.stream.clone_htod(&b)?,
        &gpu.stream.clone_htod(&c)?,
        &gpu.stream.clone_htod(&x)?,
        &mut fused,
        &mut sums,
    )?;
    let fused = gpu.stream.clone_dtoh(&fused)?;
    let sums = gpu.stream.clone_dtoh(&sums)?;
    let fused_ok = (0..N).all(|i| {
        let exact = f64::from(a[i]) * f64::from(b[i]) + f64::from(c[i]);
        let scale = (f64::from(a[i]) * f64::from(b[i])).abs() + f64::from(c[i]).abs();
        (f64::from(fused[i]) - exact).abs() <= 2.0 * f64::from(f32::EPSILON) * scale
    });
    let sums_ok = (0..N).all(|i| {
        let terms: Vec<f64> = (0..TERMS).map(|k| term(x[i * TERMS + k])).collect();
        let exact: f64 = terms.iter().sum();
        let scale: f64 = terms.iter().map(|t| t.abs()).sum();
        (sums[i] - exact).abs() <= 16.0 * f64::EPSILON * scale
    });
    println!(
        "{} algebraic_mul/add (a fused multiply-add allowed), {N} values",
        if fused_ok { "ok  " } else { "FAIL" }
    );
    println!(
        "{} algebraic sums of {TERMS} terms (reassociation allowed), {N} values",
        if sums_ok { "ok  " } else { "FAIL" }
    );
    ok &= fused_ok && sums_ok;

    // Warp operations over a member mask.
    let values: Vec<u32> = rng.vec(N, |r| (r.next_u64() % 20) as u32);
    let mut out = gpu.stream.alloc_zeros::<u32>(N)?;
    module.masked_warp(&gpu.stream, cfg, &gpu.stream.clone_htod(&values)?, &mut out)?;
    let expected: Vec<u32> = (0..N)
        .map(|i| {
            let warp: &[u32; 32] = values[i / 32 * 32..][..32].try_into().unwrap();
            let lane = i % 32;
            let mask = if lane % 2 == 0 {
                0x5555_5555
            } else {
                0xaaaa_aaaa
            };
            group_model(mask, warp, lane)
        })
        .collect();
    ok &= check(
        "warp operations over a member mask (even and odd lanes)",
        &gpu.stream.clone_dtoh(&out)?,
        &expected,
    );

    // Locations: the GPU sees the lines, columns and file names the host sees.
    let mut found = gpu.stream.alloc_zeros::<[u32; 6]>(64)?;
    module.locations(&gpu.stream, LaunchConfig::for_num_elems(64), &mut found)?;
    let found = gpu.stream.clone_dtoh(&found)?;
    let expected = locations();
    let locations_ok = found.iter().all(|f| *f == expected);
    println!(
        "{} Location::caller() and #[track_caller] (line {}, column {}, a file name of {} bytes): \
         got {:?}",
        if locations_ok { "ok  " } else { "FAIL" },
        expected[0],
        expected[1],
        expected[2],
        found[0]
    );
    ok &= locations_ok;

    // GPU intrinsics through function pointers.
    let blocks = blocks_of(256, N);
    let votes: Vec<u32> = rng.vec(N, |r| (r.next_u64() % 64) as u32);
    let votes_dev = gpu.stream.clone_htod(&votes)?;
    for which in 0..2u32 {
        let mut out = gpu.stream.alloc_zeros::<u32>(N)?;
        module.intrinsic_pointers(&gpu.stream, blocks, which, &votes_dev, &mut out)?;
        let expected: Vec<u32> = (0..N)
            .map(|i| {
                let r = [i % 32, i % 256, i / 256][i % 3] as u32;
                let warp = &votes[i / 32 * 32..][..32];
                let v = if which == 0 {
                    warp.iter().all(|&x| x > 2)
                } else {
                    warp.iter().any(|&x| x > 2)
                };
                r << 1 | v as u32
            })
            .collect();
        ok &= check(
            &format!(
                "GPU intrinsics through function pointers ({})",
                ["all", "any"][which as usize]
            ),
            &gpu.stream.clone_dtoh(&out)?,
            &expected,
        );
    }

    // Trait upcasting and unsizing through structs.
    let a: Vec<u32> = rng.vec(N, |r| r.next_u64() as u32);
    let b: Vec<u32> = rng.vec(N, |r| r.next_u64() as u32);
    let mut out = gpu.stream.alloc_zeros::<u32>(N)?;
    module.upcasts(
        &gpu.stream,
        cfg,
        &gpu.stream.clone_htod(&a)?,
        &gpu.stream.clone_htod(&b)?,
        &mut out,
    )?;
    let expected: Vec<u32> = (0..N).map(|i| upcasts(a[i], b[i])).collect();
    ok &= check(
        "trait upcasting, NonNull<[T; N]> and a user's pointer unsized",
        &gpu.stream.clone_dtoh(&out)?,
        &expected,
    );

    // f16 arithmetic, bit for bit.
    let hx: Vec<f32> = rng.vec(N, |r| r.f32_in(-300.0, 300.0));
    let hy: Vec<f32> = rng.vec(N, |r| r.f32_in(-300.0, 300.0));
    let mut out = gpu.stream.alloc_zeros::<u64>(N)?;
    module.halves(
        &gpu.stream,
        cfg,
        &gpu.stream.clone_htod(&hx)?,
        &gpu.stream.clone_htod(&hy)?,
        &mut out,
    )?;
    let expected: Vec<u64> = (0..N).map(|i| half_work(hx[i], hy[i])).collect();
    ok &= check(
        "f16 arithmetic, comparisons and conversions",
        &gpu.stream.clone_dtoh(&out)?,
        &expected,
    );

    // 128-bit atomics: a sum by compare-exchange, and a chain of swaps (each value replaced
    // exactly once, the last one left in memory).
    let wide_x: Vec<u64> = rng.vec(N, |r| r.next_u64());
    let mut wide = gpu.stream.clone_htod(&vec![0u64; 4])?;
    let mut replaced = gpu.stream.alloc_zeros::<u64>(N)?;
    module.wide_atomics(
        &gpu.stream,
        cfg,
        &mut wide,
        &gpu.stream.clone_htod(&wide_x)?,
        &mut replaced,
    )?;
    let wide = gpu.stream.clone_dtoh(&wide)?;
    let replaced = gpu.stream.clone_dtoh(&replaced)?;
    let sum = (0..N).fold(0u128, |s, i| {
        s.wrapping_add(u128::from(wide_x[i]) << 64 | 1)
    });
    let sum_ok = (u128::from(wide[1]) << 64 | u128::from(wide[0])) == sum;
    let folded = |i: usize| wide_x[i] ^ i as u64;
    let mut seen: Vec<u64> = replaced.clone();
    seen.push(wide[3] ^ wide[2]);
    seen.sort_unstable();
    let mut all: Vec<u64> = (0..N).map(folded).collect();
    all.push(0);
    all.sort_unstable();
    let swaps_ok = seen == all;
    println!(
        "{} 128-bit atomics: compare-exchange sum {}, swap chain {}",
        if sum_ok && swaps_ok { "ok  " } else { "FAIL" },
        if sum_ok { "exact" } else { "WRONG" },
        if swaps_ok { "complete" } else { "BROKEN" },
    );
    ok &= sum_ok && swaps_ok;

    // The device heap: Vec, Box, Box<dyn Trait> in every thread (in blocks of 256: the
    // kernel needs too many registers for blocks of 1,024 threads).
    let mut out = gpu.stream.alloc_zeros::<u32>(N)?;
    module.heap(
        &gpu.stream,
        blocks,
        &gpu.stream.clone_htod(&a)?,
        &gpu.stream.clone_htod(&b)?,
        &mut out,
    )?;
    let expected: Vec<u32> = (0..N).map(|i| heap_work(a[i], b[i])).collect();
    ok &= heap_ok
        & check(
            "Vec, Box and Box<dyn Trait> on the device heap",
            &gpu.stream.clone_dtoh(&out)?,
            &expected,
        );

    // Last (a trap leaves the context unusable): an allocation larger than the heap stops
    // the kernel, and the launch says so.
    let mut out = gpu.stream.alloc_zeros::<u32>(32)?;
    let launched = module.heap_exhausted(
        &gpu.stream,
        LaunchConfig::for_num_elems(32),
        1 << 40,
        &mut out,
    );
    let failed = match launched {
        Err(error) => Some(error.to_string()),
        Ok(()) => gpu.stream.synchronize().err().map(|e| e.to_string()),
    };
    println!(
        "{} an allocation beyond the device heap stops the kernel: {}",
        if failed.is_some() { "ok  " } else { "FAIL" },
        failed.as_deref().unwrap_or("the kernel ran on")
    );
    ok &= failed.is_some();
    Ok(ok)
}
