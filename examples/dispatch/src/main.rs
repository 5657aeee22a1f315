//! Indirect calls: `dyn Trait` (trait objects in an array and behind `&`, a trait with default
//! methods, a zero-sized implementor, `size_of_val` through the vtable, a `static` table of
//! trait objects), a table of `fn(f32) -> f32` with a closure coerced to `fn`, and
//! `&dyn Fn(u32) -> u32` / `&mut dyn FnMut` passed to helpers.

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

pub trait Shape {
    fn area(&self) -> f32;
    fn perimeter(&self) -> f32;
    /// A default method calling the others through the vtable.
    fn score(&self) -> f32 {
        self.area() * 2.0 + self.perimeter()
    }
    fn sides(&self) -> u32 {
        0
    }
}

pub struct Circle {
    pub r: f32,
}

pub struct Rect {
    pub w: f32,
    pub h: f32,
    pub tag: u8,
}

pub struct Square(pub f32);

/// Zero-sized: its trait object's data pointer points at nothing.
pub struct Dot;

impl Shape for Circle {
    fn area(&self) -> f32 {
        3.0 * self.r * self.r
    }
    fn perimeter(&self) -> f32 {
        6.0 * self.r
    }
}

impl Shape for Rect {
    fn area(&self) -> f32 {
        self.w * self.h
    }
    fn perimeter(&self) -> f32 {
        2.0 * (self.w + self.h) + self.tag as f32
    }
    fn sides(&self) -> u32 {
        4
    }
}

impl Shape for Square {
    fn area(&self) -> f32 {
        self.0 * self.0
    }
    fn perimeter(&self) -> f32 {
        4.0 * self.0
    }
    fn score(&self) -> f32 {
        -self.area()
    }
    fn sides(&self) -> u32 {
        4
    }
}

impl Shape for Dot {
    fn area(&self) -> f32 {
        0.0
    }
    fn perimeter(&self) -> f32 {
        1.0
    }
}

/// Trait objects in a `static`: vtables referenced from device memory.
pub static UNIT_SHAPES: [&(dyn Shape + Sync); 3] = [&Circle { r: 1.0 }, &Square(2.0), &Dot];

/// A shape picked at run time, used through `&dyn Shape`.
pub fn shape_value(kind: u32, a: f32, b: f32) -> f32 {
    let circle = Circle { r: a };
    let rect = Rect { w: a, h: b, tag: 3 };
    let square = Square(b);
    let dot = Dot;
    let shapes: [&dyn Shape; 4] = [&circle, &rect, &square, &dot];
    let shape = shapes[(kind % 4) as usize];
    let unit = UNIT_SHAPES[(kind / 4 % 3) as usize];
    shape.score()
        + shape.sides() as f32
        + core::mem::size_of_val(shape) as f32 * 100.0
        + core::mem::align_of_val(shape) as f32 * 1000.0
        + unit.score()
}

fn double(x: f32) -> f32 {
    x * 2.0
}

fn negate(x: f32) -> f32 {
    -x
}

fn square(x: f32) -> f32 {
    x * x
}

/// A table of function pointers, one of them a closure coerced to `fn`.
pub const OPS: [fn(f32) -> f32; 4] = [double, negate, square, |x| x + 0.5];

/// `OPS[k](x)`, then a function pointer chosen at run time.
pub fn apply_op(k: u32, x: f32) -> f32 {
    let first = OPS[(k % 4) as usize](x);
    let then: fn(f32) -> f32 = if k % 3 == 0 { square } else { |v| v - 1.0 };
    then(first)
}

fn apply_twice(f: &dyn Fn(u32) -> u32, x: u32) -> u32 {
    f(f(x))
}

fn accumulate(f: &mut dyn FnMut(u32), n: u32) {
    for i in 0..n {
        f(i);
    }
}

/// Closures behind `&dyn Fn` and `&mut dyn FnMut`.
pub fn closures(k: u32, x: u32) -> u32 {
    let offset = k.wrapping_mul(3);
    let add = move |v: u32| v.wrapping_add(offset);
    let mul = |v: u32| v.wrapping_mul(3);
    let f: &dyn Fn(u32) -> u32 = if k % 2 == 0 { &add } else { &mul };
    let mut total = 0u32;
    accumulate(&mut |i| total = total.wrapping_add(i ^ x), k % 8);
    apply_twice(f, x)
        .wrapping_add(apply_twice(&|v| v ^ k, x))
        .wrapping_add(total)
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    #[kernel]
    pub fn shapes(kind: &[u32], a: &[f32], b: &[f32], mut out: DisjointSlice<f32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            let j = i.get();
            *slot = super::shape_value(kind[j], a[j], b[j]);
        }
    }

    #[kernel]
    pub fn fn_table(k: &[u32], x: &[f32], mut out: DisjointSlice<f32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::apply_op(k[i.get()], x[i.get()]);
        }
    }

    #[kernel]
    pub fn closures(k: &[u32], x: &[u32], mut out: DisjointSlice<u32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::closures(k[i.get()], x[i.get()]);
        }
    }
}

fn main() -> ExitCode {
    run_example("dispatch", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    const N: usize = 1 << 16;
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(11);
    let cfg = LaunchConfig::for_num_elems(N as u32);
    let mut ok = true;

    let k: Vec<u32> = rng.vec(N, |r| r.next_u64() as u32);
    let a: Vec<f32> = rng.vec(N, |r| r.f32_in(-10.0, 10.0));
    let b: Vec<f32> = rng.vec(N, |r| r.f32_in(-10.0, 10.0));
    let (k_dev, a_dev, b_dev) = (
        gpu.stream.clone_htod(&k)?,
        gpu.stream.clone_htod(&a)?,
        gpu.stream.clone_htod(&b)?,
    );
    let mut out = gpu.stream.alloc_zeros::<f32>(N)?;
    module.shapes(&gpu.stream, cfg, &k_dev, &a_dev, &b_dev, &mut out)?;
    let expected: Vec<f32> = (0..N).map(|i| shape_value(k[i], a[i], b[i])).collect();
    ok &= check("dyn Shape", &gpu.stream.clone_dtoh(&out)?, &expected);

    module.fn_table(&gpu.stream, cfg, &k_dev, &a_dev, &mut out)?;
    let expected: Vec<f32> = (0..N).map(|i| apply_op(k[i], a[i])).collect();
    ok &= check("fn pointer table", &gpu.stream.clone_dtoh(&out)?, &expected);

    let x: Vec<u32> = rng.vec(N, |r| r.next_u64() as u32);
    let x_dev = gpu.stream.clone_htod(&x)?;
    let mut out = gpu.stream.alloc_zeros::<u32>(N)?;
    module.closures(&gpu.stream, cfg, &k_dev, &x_dev, &mut out)?;
    let expected: Vec<u32> = (0..N).map(|i| closures(k[i], x[i])).collect();
    ok &= check("dyn Fn closures", &gpu.stream.clone_dtoh(&out)?, &expected);
    Ok(ok)
}
