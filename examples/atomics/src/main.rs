//! Atomics, checked against the CPU's sequential results: histograms with `DeviceAtomicU32`
//! and `core::sync::atomic::AtomicU32` bins; every read-modify-write at 32 and 64 bits (signed
//! and unsigned, device and system scope) on one contended location; float `fetch_add` and
//! `fetch_sub`; a compare-exchange loop computing a float maximum; block counters with
//! `BlockAtomicU32::from_ptr`, published to the last block through an acquire-release ticket;
//! and `AtomicBool`, `AtomicI64`, `AtomicUsize`, `fetch_update` and fences of `core`. Last, a
//! `Release` load (which `core` refuses with a panic) must trap the kernel.

use std::process::ExitCode;

use cuda_host::{Error, LaunchConfig, cuda_module, synchronize};
use example_support::{Gpu, Rng, check, run_example};

/// Threads per block.
const BLOCK: usize = 256;
/// Threads in all.
const N: usize = BLOCK * 256;
/// How many read-modify-writes the `rmw_*` kernels know.
const RMW_OPS: u32 = 8;

#[cuda_module]
mod kernels {
    use core::sync::atomic::{
        AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicUsize, Ordering, compiler_fence, fence,
    };

    use cuda_device::atomic::{
        AtomicInteger, AtomicOrdering, BlockAtomicU32, DeviceAtomicF32, DeviceAtomicF64,
        DeviceAtomicI32, DeviceAtomicI64, DeviceAtomicU32, DeviceAtomicU64, ScopedAtomic,
        SystemAtomicU32,
    };
    use cuda_device::{DisjointSlice, kernel, sync, thread};

    /// Counts `x` into 256 bins.
    #[kernel]
    pub fn histogram(x: &[u32], bins: &[DeviceAtomicU32]) {
        let i = thread::index_1d().get();
        if i < x.len() {
            bins[(x[i] % 256) as usize].fetch_add(1, AtomicOrdering::Relaxed);
        }
    }

    /// [`histogram`] with `core`'s atomics.
    #[kernel]
    pub fn histogram_core(x: &[u32], bins: &[AtomicU32]) {
        let i = thread::index_1d().get();
        if i < x.len() {
            bins[(x[i] % 256) as usize].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Read-modify-write `op` of `value` on `cell`, each with another ordering; returns the
    /// previous value.
    fn apply<T: AtomicInteger, const S: u8>(cell: &ScopedAtomic<T, S>, op: u32, value: T) -> T {
        use AtomicOrdering::*;
        match op {
            0 => cell.fetch_add(value, Relaxed),
            1 => cell.fetch_sub(value, AcqRel),
            2 => cell.fetch_and(value, Release),
            3 => cell.fetch_or(value, Acquire),
            4 => cell.fetch_xor(value, SeqCst),
            5 => cell.fetch_min(value, Relaxed),
            6 => cell.fetch_max(value, SeqCst),
            _ => cell.swap(value, AcqRel),
        }
    }

    /// Every thread applies `op` with its value to `cell[0]`, and keeps the previous value.
    #[kernel]
    pub fn rmw_u32(op: u32, values: &[u32], cell: &[SystemAtomicU32], mut old: DisjointSlice<u32>) {
        let i = thread::index_1d();
        if let Some(slot) = old.get_mut(i) {
            *slot = apply(&cell[0], op, values[i.get()]);
        }
    }

    /// [`rmw_u32`] on `i32`, device scope.
    #[kernel]
    pub fn rmw_i32(op: u32, values: &[i32], cell: &[DeviceAtomicI32], mut old: DisjointSlice<i32>) {
        let i = thread::index_1d();
        if let Some(slot) = old.get_mut(i) {
            *slot = apply(&cell[0], op, values[i.get()]);
        }
    }

    /// [`rmw_u32`] on `u64`, device scope.
    #[kernel]
    pub fn rmw_u64(op: u32, values: &[u64], cell: &[DeviceAtomicU64], mut old: DisjointSlice<u64>) {
        let i = thread::index_1d();
        if let Some(slot) = old.get_mut(i) {
            *slot = apply(&cell[0], op, values[i.get()]);
        }
    }

    /// [`rmw_u32`] on `i64`, device scope.
    #[kernel]
    pub fn rmw_i64(op: u32, values: &[i64], cell: &[DeviceAtomicI64], mut old: DisjointSlice<i64>) {
        let i = thread::index_1d();
        if let Some(slot) = old.get_mut(i) {
            *slot = apply(&cell[0], op, values[i.get()]);
        }
    }

    /// Adds every `a` to `sum_a[0]` and subtracts every `b` from `sum_b[0]`.
    #[kernel]
    pub fn float_sums(a: &[f32], sum_a: &[DeviceAtomicF32], b: &[f64], sum_b: &[DeviceAtomicF64]) {
        let i = thread::index_1d().get();
        if i < a.len() {
            sum_a[0].fetch_add(a[i], AtomicOrdering::Relaxed);
            sum_b[0].fetch_sub(b[i], AtomicOrdering::AcqRel);
        }
    }

    /// The largest `x`, through a compare-exchange loop (there is no float `atom.max`).
    #[kernel]
    pub fn float_max(x: &[f32], max: &[DeviceAtomicF32]) {
        let i = thread::index_1d().get();
        if i >= x.len() {
            return;
        }
        let mine = x[i];
        let mut current = max[0].load(AtomicOrdering::Relaxed);
        while mine > current {
            match max[0].compare_exchange(
                current,
                mine,
                AtomicOrdering::Relaxed,
                AtomicOrdering::Relaxed,
            ) {
                Ok(_) => break,
                Err(seen) => current = seen,
            }
        }
    }

    /// Each block sums its values into `partials[block]` with a block-scope atomic viewed
    /// through `from_ptr`; thread 0 then takes a ticket, and the block with the last ticket
    /// adds up every partial (visible to it through the ticket's release and acquire).
    #[kernel]
    pub fn block_sums(
        x: &[u32],
        partials: &[DeviceAtomicU32],
        tickets: &[DeviceAtomicU32],
        total: &[DeviceAtomicU32],
    ) {
        let block = thread::blockIdx_x() as usize;
        let i = thread::index_1d().get();
        // SAFETY: only this block's threads touch `partials[block]`, and only atomically.
        let counter = unsafe { BlockAtomicU32::from_ptr(partials[block].as_ptr()) };
        if i < x.len() {
            counter.fetch_add(x[i], AtomicOrdering::Relaxed);
        }
        sync::syncthreads();
        if thread::threadIdx_x() == 0 {
            let ticket = tickets[0].fetch_add(1, AtomicOrdering::AcqRel);
            if ticket == thread::gridDim_x() - 1 {
                let mut sum = 0u32;
                for partial in partials {
                    sum = sum.wrapping_add(partial.load(AtomicOrdering::Relaxed));
                }
                total[0].store(sum, AtomicOrdering::Release);
            }
        }
    }

    /// `core::sync::atomic` on other types: `i64` max and min, `bool` or and swap, a `usize`
    /// count, a capped count through `fetch_update`, and fences.
    #[kernel]
    pub fn core_mix(
        x: &[u32],
        extremes: &[AtomicI64],
        flags: &[AtomicBool],
        count: &[AtomicUsize],
        capped: &[AtomicU32],
        mut swapped: DisjointSlice<u32>,
    ) {
        let i = thread::index_1d();
        let Some(slot) = swapped.get_mut(i) else {
            return;
        };
        let v = x[i.get()];
        let signed = i64::from(v) - (1 << 31);
        extremes[0].fetch_max(signed, Ordering::SeqCst);
        extremes[1].fetch_min(signed, Ordering::Relaxed);
        flags[0].fetch_or(v % 1000 == 7, Ordering::AcqRel);
        flags[1].fetch_and(v % 2 == 0, Ordering::Release);
        *slot = flags[2].swap(true, Ordering::AcqRel) as u32;
        compiler_fence(Ordering::SeqCst);
        count[0].fetch_add(1, Ordering::Relaxed);
        fence(Ordering::Release);
        let _ = capped[0].fetch_update(Ordering::Relaxed, Ordering::Relaxed, |c| {
            (c < 1000).then_some(c + 1)
        });
    }

    /// Every thread offers the address of its `x` to a null pointer in `slot[0]` (an
    /// `AtomicPtr` over the `u64`); the one whose compare-exchange wins says so in `won`, and
    /// every thread reads the value behind the pointer that stayed (its own compare-exchange
    /// either stored it or saw it).
    #[kernel]
    pub fn first_pointer(
        x: &[u32],
        slot: &[DeviceAtomicU64],
        mut won: DisjointSlice<u32>,
        mut seen: DisjointSlice<u32>,
    ) {
        let i = thread::index_1d();
        let (Some(won), Some(seen)) = (won.get_mut(i), seen.get_mut(i)) else {
            return;
        };
        // SAFETY: `slot[0]` is an aligned 8-byte cell that only atomics touch.
        let cell = unsafe { AtomicPtr::<u32>::from_ptr(slot[0].as_ptr().cast()) };
        let mine = &x[i.get()] as *const u32 as *mut u32;
        let result = cell.compare_exchange(
            core::ptr::null_mut(),
            mine,
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        *won = result.is_ok() as u32;
        // Every thread's compare-exchange saw the winner's pointer or stored it.
        // SAFETY: the pointer is one of the `x` elements, which live for the launch.
        *seen = unsafe { *cell.load(Ordering::Acquire) };
    }

    /// Loads `cell[0]` with ordering number `order` (0 `Relaxed`, 1 `Acquire`, 2 `Release`):
    /// a `Release` load panics, so the kernel traps.
    #[kernel]
    pub fn load_with(order: u32, cell: &[DeviceAtomicU32], mut out: DisjointSlice<u32>) {
        let ordering = match order {
            0 => AtomicOrdering::Relaxed,
            1 => AtomicOrdering::Acquire,
            _ => AtomicOrdering::Release,
        };
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = cell[0].load(ordering);
        }
    }
}

fn main() -> ExitCode {
    run_example("atomics", run)
}

fn launch_config() -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((N / BLOCK) as u32, 1, 1),
        block_dim: (BLOCK as u32, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The value a read-modify-write `op` of each of `values`, applied in any order, leaves in a
/// cell that held `init` (for exchanges: the initial value, the result being checked apart).
trait Integer: Copy + Ord + std::fmt::Debug + example_support::Close {
    fn fold(op: u32, init: Self, values: &[Self]) -> Self;
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl Integer for $t {
            fn fold(op: u32, init: Self, values: &[Self]) -> Self {
                values.iter().fold(init, |acc, &v| match op {
                    0 => acc.wrapping_add(v),
                    1 => acc.wrapping_sub(v),
                    2 => acc & v,
                    3 => acc | v,
                    4 => acc ^ v,
                    5 => acc.min(v),
                    6 => acc.max(v),
                    _ => acc,
                })
            }
        }
    )*};
}
integer!(u32, i32, u64, i64);

const OP_NAMES: [&str; RMW_OPS as usize] = [
    "fetch_add",
    "fetch_sub",
    "fetch_and",
    "fetch_or",
    "fetch_xor",
    "fetch_min",
    "fetch_max",
    "swap",
];

/// Checks the cell's final value, and what the threads got back: for `swap`, the previous
/// values and the final one are the initial value and all the values, in some order; for
/// `fetch_add`, each previous value is the initial one plus the values of the threads before
/// in the order the GPU chose, so sorted they are the running sums of the sorted values when
/// all values are equal (this run uses ones).
fn check_rmw<T: Integer>(
    ty: &str,
    op: u32,
    init: T,
    values: &[T],
    final_value: T,
    old: &[T],
) -> bool {
    let what = format!("{} {ty}", OP_NAMES[op as usize]);
    if op == RMW_OPS - 1 {
        let mut got: Vec<T> = old.iter().copied().chain([final_value]).collect();
        let mut expected: Vec<T> = values.iter().copied().chain([init]).collect();
        got.sort();
        expected.sort();
        return check(
            &format!("{what}: previous values and final value"),
            &got,
            &expected,
        );
    }
    let mut ok = check(
        &format!("{what}: final value"),
        &[final_value],
        &[T::fold(op, init, values)],
    );
    if op == 0 && values.iter().all(|&v| v == values[0]) {
        let mut got = old.to_vec();
        got.sort();
        let mut expected: Vec<T> = values
            .iter()
            .scan(init, |sum, &v| {
                let before = *sum;
                *sum = T::fold(0, before, &[v]);
                Some(before)
            })
            .collect();
        expected.sort();
        ok &= check(&format!("{what}: tickets"), &got, &expected);
    }
    ok
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let mut rng = Rng::new(2024);
    let cfg = launch_config();
    let mut ok = true;

    // Histograms.
    let x: Vec<u32> = rng.vec(N, |r| (r.next_u64() % 100_000) as u32);
    let x_dev = stream.clone_htod(&x)?;
    let mut expected_bins = vec![0u32; 256];
    for v in &x {
        expected_bins[(v % 256) as usize] += 1;
    }
    let mut bins = stream.alloc_zeros::<u32>(256)?;
    module.histogram(stream, cfg, &x_dev, &mut bins)?;
    ok &= check(
        "histogram (DeviceAtomicU32)",
        &stream.clone_dtoh(&bins)?,
        &expected_bins,
    );
    let mut bins = stream.alloc_zeros::<u32>(256)?;
    module.histogram_core(stream, cfg, &x_dev, &mut bins)?;
    ok &= check(
        "histogram (core AtomicU32)",
        &stream.clone_dtoh(&bins)?,
        &expected_bins,
    );

    // Every read-modify-write on one contended cell, at 32 and 64 bits.
    macro_rules! rmw_case {
        ($kernel:ident, $t:ty, $ty:literal, $init:expr, $gen:expr) => {
            for op in 0..RMW_OPS {
                let values: Vec<$t> = if op == 0 {
                    vec![1 as $t; N]
                } else {
                    rng.vec(N, $gen)
                };
                let init: $t = $init;
                let values_dev = stream.clone_htod(&values)?;
                let mut cell = stream.clone_htod(&[init])?;
                let mut old = stream.alloc_zeros::<$t>(N)?;
                module.$kernel(stream, cfg, op, &values_dev, &mut cell, &mut old)?;
                let final_value = stream.clone_dtoh(&cell)?[0];
                ok &= check_rmw(
                    $ty,
                    op,
                    init,
                    &values,
                    final_value,
                    &stream.clone_dtoh(&old)?,
                );
            }
        };
    }
    rmw_case!(rmw_u32, u32, "u32 (system)", 0x8000_0000, |r| r.next_u64()
        as u32
        | (r.next_u64() as u32 & 0x0f0f_0f0f));
    rmw_case!(rmw_i32, i32, "i32", -5, |r| r.next_u64() as i32);
    rmw_case!(rmw_u64, u64, "u64", 1 << 40, |r| r.next_u64());
    rmw_case!(rmw_i64, i64, "i64", -(1 << 50), |r| r.next_u64() as i64);

    // Float sums of small integers: exact in any order.
    let a: Vec<f32> = rng.vec(N, |r| (r.next_u64() % 16) as f32);
    let b: Vec<f64> = rng.vec(N, |r| (r.next_u64() % 1000) as f64 - 500.0);
    let (a_dev, b_dev) = (stream.clone_htod(&a)?, stream.clone_htod(&b)?);
    let mut sum_a = stream.clone_htod(&[0.5f32])?;
    let mut sum_b = stream.clone_htod(&[0.25f64])?;
    module.float_sums(stream, cfg, &a_dev, &mut sum_a, &b_dev, &mut sum_b)?;
    ok &= check(
        "f32 fetch_add",
        &stream.clone_dtoh(&sum_a)?,
        &[0.5 + a.iter().sum::<f32>()],
    );
    ok &= check(
        "f64 fetch_sub",
        &stream.clone_dtoh(&sum_b)?,
        &[0.25 - b.iter().sum::<f64>()],
    );

    // A float maximum by compare-exchange.
    let f: Vec<f32> = rng.vec(N, |r| r.f32_in(-1.0e6, 1.0e6));
    let f_dev = stream.clone_htod(&f)?;
    let mut max = stream.clone_htod(&[f32::MIN])?;
    module.float_max(stream, cfg, &f_dev, &mut max)?;
    let expected_max = f.iter().copied().fold(f32::MIN, f32::max);
    ok &= check(
        "f32 maximum by compare_exchange",
        &stream.clone_dtoh(&max)?,
        &[expected_max],
    );

    // Block counters and the last-block total.
    let mut partials = stream.alloc_zeros::<u32>(N / BLOCK)?;
    let mut tickets = stream.alloc_zeros::<u32>(1)?;
    let mut total = stream.alloc_zeros::<u32>(1)?;
    module.block_sums(stream, cfg, &x_dev, &mut partials, &mut tickets, &mut total)?;
    let block_sums: Vec<u32> = x
        .chunks(BLOCK)
        .map(|c| c.iter().fold(0u32, |a, v| a.wrapping_add(*v)))
        .collect();
    let grand = block_sums.iter().fold(0u32, |a, v| a.wrapping_add(*v));
    ok &= check(
        "block counters (BlockAtomicU32::from_ptr)",
        &stream.clone_dtoh(&partials)?,
        &block_sums,
    );
    ok &= check(
        "tickets",
        &stream.clone_dtoh(&tickets)?,
        &[(N / BLOCK) as u32],
    );
    ok &= check("last block's total", &stream.clone_dtoh(&total)?, &[grand]);

    // `core` atomics of other types.
    let mut extremes = stream.clone_htod(&[i64::MIN, i64::MAX])?;
    let mut flags = stream.clone_htod(&[false, true, false])?;
    let mut count = stream.alloc_zeros::<usize>(1)?;
    let mut capped = stream.alloc_zeros::<u32>(1)?;
    let mut swapped = stream.alloc_zeros::<u32>(N)?;
    module.core_mix(
        stream,
        cfg,
        &x_dev,
        &mut extremes,
        &mut flags,
        &mut count,
        &mut capped,
        &mut swapped,
    )?;
    let signed: Vec<i64> = x.iter().map(|&v| i64::from(v) - (1 << 31)).collect();
    ok &= check(
        "AtomicI64 fetch_max, fetch_min",
        &stream.clone_dtoh(&extremes)?,
        &[*signed.iter().max().unwrap(), *signed.iter().min().unwrap()],
    );
    let any_seven = x.iter().any(|v| v % 1000 == 7);
    let all_even = x.iter().all(|v| v % 2 == 0);
    ok &= check(
        "AtomicBool fetch_or, fetch_and, swap",
        &stream.clone_dtoh(&flags)?,
        &[any_seven, all_even, true],
    );
    let first_swaps = stream
        .clone_dtoh(&swapped)?
        .iter()
        .filter(|&&s| s == 0)
        .count();
    ok &= check(
        "AtomicBool swap: one thread saw false",
        &[first_swaps],
        &[1],
    );
    ok &= check("AtomicUsize fetch_add", &stream.clone_dtoh(&count)?, &[N]);
    ok &= check(
        "AtomicU32 fetch_update",
        &stream.clone_dtoh(&capped)?,
        &[1000u32],
    );

    // Pointer atomics: one winner, whose value everyone reads back.
    let mut slot = stream.alloc_zeros::<u64>(1)?;
    let mut won = stream.alloc_zeros::<u32>(N)?;
    let mut seen = stream.alloc_zeros::<u32>(N)?;
    module.first_pointer(stream, cfg, &x_dev, &mut slot, &mut won, &mut seen)?;
    let won = stream.clone_dtoh(&won)?;
    let winners: Vec<usize> = (0..N).filter(|&i| won[i] == 1).collect();
    ok &= check(
        "AtomicPtr compare_exchange: winners",
        &[winners.len()],
        &[1],
    );
    if let [winner] = winners[..] {
        ok &= check(
            "AtomicPtr load: the winner's value",
            &stream.clone_dtoh(&seen)?,
            &vec![x[winner]; N],
        );
    }

    // An ordering a load cannot have: the kernel panics (the context is unusable afterwards,
    // so this comes last).
    let mut cell = stream.clone_htod(&[42u32])?;
    let mut out = stream.alloc_zeros::<u32>(32)?;
    let one_warp = LaunchConfig::for_num_elems(32);
    module.load_with(stream, one_warp, 1, &mut cell, &mut out)?;
    ok &= check("Acquire load", &stream.clone_dtoh(&out)?, &[42u32; 32]);
    let outcome = module
        .load_with(stream, one_warp, 2, &mut cell, &mut out)
        .and_then(|()| synchronize(stream));
    ok &= match outcome {
        Err(
            ref error @ Error::KernelPanic {
                kernel: "load_with",
                ref panic,
                ..
            },
        ) if panic.message == "there is no such thing as a release load" => {
            println!("ok   Release load panicked: {error}");
            true
        }
        // A release build has no panic messages (docs/panics.md): the panic is a bare trap.
        Err(
            ref error @ Error::KernelFault {
                kernel: "load_with",
                ..
            },
        ) if !cfg!(debug_assertions) => {
            println!("ok   Release load trapped (release: no message): {error}");
            true
        }
        Err(other) => {
            println!("FAIL expected a panic of `load_with` (a release load), got: {other}");
            false
        }
        Ok(()) => {
            println!("FAIL a Release load ran to completion");
            false
        }
    };
    Ok(ok)
}
