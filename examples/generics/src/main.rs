//! Generic kernels and closures: one kernel for every element type, const-generic tile sizes,
//! a kernel generic over a user trait, `map`/`zip_with` taking closures, and a generic
//! reduction taking a closure. Every kernel is launched with at least two instantiations, and
//! each instantiation is its own PTX entry, checked against the CPU on random inputs.

use std::ops::{Add, Mul};
use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use device_lib::{Largest, Monoid, WrappingSum};
use example_support::{Close, Gpu, Rng, check, run_example};

/// A shape measured from its one parameter: the trait a kernel is generic over, with an
/// associated type and an associated constant.
pub trait Shape {
    /// What one shape is described by.
    type Params: Copy;
    /// How many sides it has.
    const SIDES: u32;
    /// Its area.
    fn area(params: Self::Params) -> f32;
}

/// A square of side `s`.
pub struct Square;

impl Shape for Square {
    type Params = f32;
    const SIDES: u32 = 4;
    fn area(side: f32) -> f32 {
        side * side
    }
}

/// A triangle of base `b` and height `h`.
pub struct Triangle;

impl Shape for Triangle {
    type Params = [f32; 2];
    const SIDES: u32 = 3;
    fn area([base, height]: [f32; 2]) -> f32 {
        0.5 * base * height
    }
}

/// A small struct a closure captures.
#[derive(Copy, Clone, Debug)]
pub struct Affine {
    pub scale: f32,
    pub offset: f32,
}

#[cuda_module]
mod kernels {
    use core::ops::{Add, Mul};

    use cuda_device::{DisjointSlice, kernel, launch_bounds, thread};

    use super::Shape;

    /// `y[i] = a * x[i] + y[i]` for any element type with `*` and `+`.
    #[kernel]
    pub fn axpy<T: Copy + Mul<Output = T> + Add<Output = T>>(
        a: T,
        x: &[T],
        mut y: DisjointSlice<T>,
    ) {
        let i = thread::index_1d();
        if let Some(y) = y.get_mut(i) {
            *y = a * x[i.get()] + *y;
        }
    }

    /// `sums[t]` = the sum of the `N` elements of tile `t`.
    #[kernel]
    pub fn tile_sums<const N: usize>(x: &[f32], mut sums: DisjointSlice<f32>) {
        let t = thread::index_1d();
        if let Some(sum) = sums.get_mut(t) {
            let tile = &x[t.get() * N..(t.get() + 1) * N];
            let mut total = 0.0;
            for v in tile {
                total += *v;
            }
            *sum = total;
        }
    }

    /// The area of each shape, and its number of sides.
    #[kernel]
    pub fn measure<S: Shape>(
        params: &[S::Params],
        mut areas: DisjointSlice<f32>,
        mut sides: DisjointSlice<u32>,
    ) {
        let i = thread::index_1d();
        if let Some(area) = areas.get_mut(i) {
            *area = S::area(params[i.get()]);
        }
        if let Some(s) = sides.get_mut(i) {
            *s = S::SIDES;
        }
    }

    /// `y[i] = f(x[i])`.
    #[kernel]
    pub fn map<F: Fn(f32) -> f32 + Copy>(x: &[f32], mut y: DisjointSlice<f32>, f: F) {
        let i = thread::index_1d();
        if let Some(y) = y.get_mut(i) {
            *y = f(x[i.get()]);
        }
    }

    /// `out[i] = f(a[i], b[i])`, for any element types.
    #[kernel]
    pub fn zip_with<A: Copy, B: Copy, C: Copy, F: Fn(A, B) -> C + Copy>(
        a: &[A],
        b: &[B],
        mut out: DisjointSlice<C>,
        f: F,
    ) {
        let i = thread::index_1d();
        if let Some(out) = out.get_mut(i) {
            *out = f(a[i.get()], b[i.get()]);
        }
    }

    /// A fold over a trait of another crate (`device_lib::Monoid`, its impls there too), at
    /// most 256 threads a block: `partials[t]` combines the elements `t, t + threads, ...`.
    #[kernel]
    #[launch_bounds(256)]
    pub fn fold<M: device_lib::Monoid>(x: &[M::Value], mut partials: DisjointSlice<M::Value>) {
        let t = thread::index_1d();
        let threads = partials.len();
        if let Some(partial) = partials.get_mut(t) {
            let mut acc = M::IDENTITY;
            for v in x.iter().skip(t.get()).step_by(threads) {
                acc = M::combine(acc, *v);
            }
            *partial = acc;
        }
    }

    /// Each thread folds the elements `t, t + threads, t + 2 threads, ...` with `op`, from
    /// `identity`, into `partials[t]`; the host folds the partials.
    #[kernel]
    pub fn reduce<T: Copy, F: Fn(T, T) -> T + Copy>(
        x: &[T],
        mut partials: DisjointSlice<T>,
        identity: T,
        op: F,
    ) {
        let t = thread::index_1d();
        let threads = partials.len();
        if let Some(partial) = partials.get_mut(t) {
            let mut acc = identity;
            let mut i = t.get();
            while i < x.len() {
                acc = op(acc, x[i]);
                i += threads;
            }
            *partial = acc;
        }
    }
}

/// A `fn` item, passed where a closure is expected.
fn halve(x: f32) -> f32 {
    x * 0.5
}

fn main() -> ExitCode {
    run_example("generics", run)
}

const N: usize = 1 << 16;

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(25);
    let mut ok = true;

    ok &= axpy_case(gpu, &module, 2.5f32, &mut rng, |r| r.f32_in(-10.0, 10.0))?;
    ok &= axpy_case(gpu, &module, -0.75f64, &mut rng, |r| r.f64_in(-10.0, 10.0))?;
    ok &= axpy_case(gpu, &module, 3i32, &mut rng, |r| {
        (r.next_u64() % 2001) as i32 - 1000
    })?;
    ok &= axpy_case(gpu, &module, 7u64, &mut rng, |r| r.next_u64() >> 8)?;

    // Const generics: two tile sizes, two entries.
    let x = rng.vec(N, |r| r.f32_in(-1.0, 1.0));
    let x_dev = gpu.stream.clone_htod(&x)?;
    let mut sums4 = gpu.stream.alloc_zeros::<f32>(N / 4)?;
    let mut sums16 = gpu.stream.alloc_zeros::<f32>(N / 16)?;
    module.tile_sums::<4>(&gpu.stream, cfg(N / 4), &x_dev, &mut sums4)?;
    module.tile_sums::<16>(&gpu.stream, cfg(N / 16), &x_dev, &mut sums16)?;
    let tile_sums = |n: usize| -> Vec<f32> {
        x.chunks(n)
            .map(|tile| tile.iter().fold(0.0, |total, v| total + v))
            .collect()
    };
    ok &= check(
        "tile_sums::<4>",
        &gpu.stream.clone_dtoh(&sums4)?,
        &tile_sums(4),
    );
    ok &= check(
        "tile_sums::<16>",
        &gpu.stream.clone_dtoh(&sums16)?,
        &tile_sums(16),
    );

    // A user trait with an associated type and constant.
    let sides_of = rng.vec(N, |r| r.f32_in(0.0, 4.0));
    let triangles = rng.vec(N, |r| [r.f32_in(0.0, 4.0), r.f32_in(0.0, 4.0)]);
    ok &= measure_case::<Square>(gpu, &module, &sides_of)?;
    ok &= measure_case::<Triangle>(gpu, &module, &triangles)?;

    // Closures capturing a scalar and a small struct, and a `fn` item.
    let k = rng.f32_in(1.0, 2.0);
    let affine = Affine {
        scale: rng.f32_in(-2.0, 2.0),
        offset: rng.f32_in(-1.0, 1.0),
    };
    let mut y = gpu.stream.alloc_zeros::<f32>(N)?;
    module.map(&gpu.stream, cfg(N), &x_dev, &mut y, move |v| v * k + 1.0)?;
    let expected: Vec<f32> = x.iter().map(|v| v * k + 1.0).collect();
    ok &= check("map(|v| v * k + 1)", &gpu.stream.clone_dtoh(&y)?, &expected);
    module.map(&gpu.stream, cfg(N), &x_dev, &mut y, move |v| {
        v * affine.scale + affine.offset
    })?;
    let expected: Vec<f32> = x.iter().map(|v| v * affine.scale + affine.offset).collect();
    ok &= check("map(affine)", &gpu.stream.clone_dtoh(&y)?, &expected);
    module.map(&gpu.stream, cfg(N), &x_dev, &mut y, halve)?;
    let expected: Vec<f32> = x.iter().map(|&v| halve(v)).collect();
    ok &= check("map(halve)", &gpu.stream.clone_dtoh(&y)?, &expected);

    let b = rng.vec(N, |r| r.f32_in(-1.0, 1.0));
    let b_dev = gpu.stream.clone_htod(&b)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(N)?;
    module.zip_with(
        &gpu.stream,
        cfg(N),
        &x_dev,
        &b_dev,
        &mut out,
        move |p, q| p * affine.scale - q * k,
    )?;
    let expected: Vec<f32> = x
        .iter()
        .zip(&b)
        .map(|(p, q)| p * affine.scale - q * k)
        .collect();
    ok &= check(
        "zip_with(f32, f32)",
        &gpu.stream.clone_dtoh(&out)?,
        &expected,
    );
    let counts = rng.vec(N, |r| (r.next_u64() % 100) as u32);
    let counts_dev = gpu.stream.clone_htod(&counts)?;
    let mut weighted = gpu.stream.alloc_zeros::<f64>(N)?;
    module.zip_with(
        &gpu.stream,
        cfg(N),
        &x_dev,
        &counts_dev,
        &mut weighted,
        |p: f32, c: u32| f64::from(p) * f64::from(c),
    )?;
    let expected: Vec<f64> = x
        .iter()
        .zip(&counts)
        .map(|(&p, &c)| f64::from(p) * f64::from(c))
        .collect();
    ok &= check(
        "zip_with(f32, u32) -> f64",
        &gpu.stream.clone_dtoh(&weighted)?,
        &expected,
    );

    // A generic reduction taking a closure.
    ok &= reduce_case(
        gpu,
        &module,
        &counts,
        0u32,
        |a, b| a + b,
        "reduce::<u32>(+)",
    )?;
    ok &= reduce_case(gpu, &module, &counts, 0u32, u32::max, "reduce::<u32>(max)")?;
    let wide = rng.vec(N, |r| r.next_u64() as i64 >> 20);
    ok &= reduce_case(
        gpu,
        &module,
        &wide,
        i64::MAX,
        |a, b| a.min(b),
        "reduce::<i64>(min)",
    )?;

    // A trait of another crate; its launch bounds hold for every instantiation.
    let big = rng.vec(N, |r| r.next_u64());
    ok &= fold_case::<WrappingSum>(gpu, &module, &big)?;
    ok &= fold_case::<Largest>(gpu, &module, &x)?;
    let mut partials = gpu.stream.alloc_zeros::<u64>(1024)?;
    let big_dev = gpu.stream.clone_htod(&big)?;
    let refused = module.fold::<WrappingSum>(&gpu.stream, cfg(1024), &big_dev, &mut partials);
    let refused_ok = matches!(refused, Err(cuda_host::Error::BadLaunchConfig { .. }));
    println!(
        "{}   fold::<WrappingSum> in blocks of 1024 threads is refused (#[launch_bounds(256)]): {}",
        if refused_ok { "ok" } else { "FAIL" },
        refused
            .err()
            .map_or("launched".to_owned(), |e| e.to_string())
    );
    ok &= refused_ok;
    Ok(ok)
}

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig::for_num_elems(n as u32)
}

fn axpy_case<T>(
    gpu: &Gpu,
    module: &kernels::Module,
    a: T,
    rng: &mut Rng,
    mut value: impl FnMut(&mut Rng) -> T,
) -> Result<bool, Box<dyn std::error::Error>>
where
    T: Copy + Mul<Output = T> + Add<Output = T> + Close + std::fmt::Debug + Send + 'static,
    T: cuda_host::cudarc::driver::DeviceRepr + cuda_host::cudarc::driver::ValidAsZeroBits,
{
    let x = rng.vec(N, &mut value);
    let y = rng.vec(N, &mut value);
    let x_dev = gpu.stream.clone_htod(&x)?;
    let mut y_dev = gpu.stream.clone_htod(&y)?;
    module.axpy(&gpu.stream, cfg(N), a, &x_dev, &mut y_dev)?;
    let expected: Vec<T> = x.iter().zip(&y).map(|(&x, &y)| a * x + y).collect();
    let what = format!("axpy::<{}>", std::any::type_name::<T>());
    Ok(check(&what, &gpu.stream.clone_dtoh(&y_dev)?, &expected))
}

fn measure_case<S: Shape + 'static>(
    gpu: &Gpu,
    module: &kernels::Module,
    params: &[S::Params],
) -> Result<bool, Box<dyn std::error::Error>>
where
    S::Params: cuda_host::cudarc::driver::DeviceRepr,
{
    let params_dev = gpu.stream.clone_htod(params)?;
    let mut areas = gpu.stream.alloc_zeros::<f32>(params.len())?;
    let mut sides = gpu.stream.alloc_zeros::<u32>(params.len())?;
    module.measure::<S>(
        &gpu.stream,
        cfg(params.len()),
        &params_dev,
        &mut areas,
        &mut sides,
    )?;
    let name = std::any::type_name::<S>();
    let expected: Vec<f32> = params.iter().map(|&p| S::area(p)).collect();
    let ok = check(
        &format!("measure::<{name}> areas"),
        &gpu.stream.clone_dtoh(&areas)?,
        &expected,
    );
    let expected = vec![S::SIDES; params.len()];
    Ok(ok
        & check(
            &format!("measure::<{name}> sides"),
            &gpu.stream.clone_dtoh(&sides)?,
            &expected,
        ))
}

fn fold_case<M: Monoid + 'static>(
    gpu: &Gpu,
    module: &kernels::Module,
    x: &[M::Value],
) -> Result<bool, Box<dyn std::error::Error>>
where
    M::Value: Close + std::fmt::Debug + Send + 'static,
    M::Value: cuda_host::cudarc::driver::DeviceRepr + cuda_host::cudarc::driver::ValidAsZeroBits,
{
    const THREADS: usize = 1024;
    let x_dev = gpu.stream.clone_htod(x)?;
    let mut partials = gpu.stream.alloc_zeros::<M::Value>(THREADS)?;
    let blocks = LaunchConfig {
        grid_dim: (THREADS as u32 / 256, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    };
    module.fold::<M>(&gpu.stream, blocks, &x_dev, &mut partials)?;
    let got = gpu
        .stream
        .clone_dtoh(&partials)?
        .into_iter()
        .fold(M::IDENTITY, M::combine);
    let expected = x.iter().copied().fold(M::IDENTITY, M::combine);
    let what = format!("fold::<{}>", std::any::type_name::<M>());
    Ok(check(&what, &[got], &[expected]))
}

fn reduce_case<T, F>(
    gpu: &Gpu,
    module: &kernels::Module,
    x: &[T],
    identity: T,
    op: F,
    what: &str,
) -> Result<bool, Box<dyn std::error::Error>>
where
    T: Copy + Close + std::fmt::Debug + Send + 'static,
    T: cuda_host::cudarc::driver::DeviceRepr + cuda_host::cudarc::driver::ValidAsZeroBits,
    F: Fn(T, T) -> T + Copy + Send + 'static,
{
    const THREADS: usize = 1024;
    let x_dev = gpu.stream.clone_htod(x)?;
    let mut partials = gpu.stream.alloc_zeros::<T>(THREADS)?;
    module.reduce(
        &gpu.stream,
        cfg(THREADS),
        &x_dev,
        &mut partials,
        identity,
        op,
    )?;
    let got = gpu
        .stream
        .clone_dtoh(&partials)?
        .into_iter()
        .fold(identity, op);
    let expected = x.iter().copied().fold(identity, op);
    Ok(check(what, &[got], &[expected]))
}
