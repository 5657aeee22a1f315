//! Structs (by value, with Rust's reordered layout), tuples, enums with payloads, `Option` and
//! `Result` (`match`, `if let`, `unwrap_or`, `?`), references and raw pointers to locals, and
//! helpers from another crate (`#[device]` and generic).

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use device_lib::{Weighted, axpy, larger};
use example_support::{Gpu, Rng, check, run_example};

/// Kernel parameters passed by value. `repr(Rust)`: rustc orders the fields as it likes, and
/// host and device agree because both use rustc's layout.
#[derive(Copy, Clone, Debug)]
pub struct Params {
    pub flag: u8,
    pub scale: f32,
    pub offset: u16,
    pub bias: f64,
}

/// A shape with a payload per variant.
#[derive(Copy, Clone, Debug)]
pub enum Shape {
    Circle { r: f32 },
    Rect { w: f32, h: f32 },
    Tri(f32, f32),
    Empty,
}

#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Failure {
    Negative,
    TooLarge(u32),
}

/// A tuple back from a helper.
pub fn min_max(a: f32, b: f32) -> (f32, f32) {
    if a < b { (a, b) } else { (b, a) }
}

/// A struct back from a helper.
pub fn weighted(weight: u8, x: f32, y: f32) -> Weighted {
    Weighted { weight, x, y }
}

pub fn make_shape(tag: u32, a: f32, b: f32) -> Shape {
    match tag % 4 {
        0 => Shape::Circle { r: a },
        1 => Shape::Rect { w: a, h: b },
        2 => Shape::Tri(a, b),
        _ => Shape::Empty,
    }
}

pub fn area(shape: Shape) -> f32 {
    match shape {
        Shape::Circle { r } => 3.0 * r * r,
        Shape::Rect { w, h } => w * h,
        Shape::Tri(b, h) => 0.5 * b * h,
        Shape::Empty => 0.0,
    }
}

pub fn validate(x: f32) -> Result<u32, Failure> {
    if x < 0.0 {
        return Err(Failure::Negative);
    }
    let v = x as u32;
    if v > 50 {
        Err(Failure::TooLarge(v))
    } else {
        Ok(v)
    }
}

/// Uses `?` on a `Result`.
pub fn validated_sum(a: f32, b: f32) -> Result<u32, Failure> {
    let x = validate(a)?;
    let y = validate(b)?;
    Ok(x + y)
}

pub fn first_negative(values: &[f32; 4]) -> Option<usize> {
    for (i, v) in values.iter().enumerate() {
        if *v < 0.0 {
            return Some(i);
        }
    }
    None
}

fn bump(counter: &mut u32, by: u32) {
    *counter += by;
}

/// Operation `op` on the inputs and the by-value parameters.
pub fn compute(op: u32, p: Params, a: f32, b: f32, tag: u32) -> f32 {
    match op {
        0 => {
            let (lo, hi) = min_max(a, b);
            hi - lo * p.scale + p.offset as f32 + p.flag as f32 + p.bias as f32
        }
        1 => area(make_shape(tag, a, b)),
        2 => match validated_sum(a, b) {
            Ok(v) => v as f32,
            Err(Failure::Negative) => -1.0,
            Err(Failure::TooLarge(v)) => 1000.0 + v as f32,
        },
        3 => {
            let values = [a, b, a - b, b - a];
            if let Some(i) = first_negative(&values) {
                i as f32
            } else {
                -5.0
            }
        }
        4 => {
            let w = weighted((tag % 7) as u8, a, b);
            w.weighted_norm2()
        }
        5 => axpy(p.scale, a, b) + larger(a, b) + larger(tag, 3) as f32,
        6 => {
            let mut counter = tag % 10;
            bump(&mut counter, 5);
            let raw = &mut counter as *mut u32;
            // SAFETY: `raw` points to a live local of this function.
            unsafe {
                *raw *= 2;
            }
            let r = &counter;
            *r as f32 + validate(a).map(|v| v as f32).unwrap_or(0.5)
        }
        _ => {
            let maybe = if tag % 2 == 0 { Some(a) } else { None };
            maybe.unwrap_or(b) + maybe.map_or(0.0, |v| v * 2.0)
        }
    }
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    use super::Params;

    #[kernel]
    pub fn compute(
        op: u32,
        params: Params,
        a: &[f32],
        b: &[f32],
        tags: &[u32],
        mut out: DisjointSlice<f32>,
    ) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            let k = i.get();
            *slot = super::compute(op, params, a[k], b[k], tags[k]);
        }
    }

    /// Scales a `&mut [f32]` in place: each thread touches only its own element.
    #[kernel]
    pub fn scale_in_place(data: &mut [f32], factor: f32) {
        let i = thread::index_1d().get();
        if i < data.len() {
            data[i] = data[i] * factor + 1.0;
        }
    }
}

fn main() -> ExitCode {
    run_example("structs_enums", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    const N: usize = 1 << 20;
    let mut rng = Rng::new(3);
    let a: Vec<f32> = rng.vec(N, |r| r.f32_in(-20.0, 80.0));
    let b: Vec<f32> = rng.vec(N, |r| r.f32_in(-20.0, 80.0));
    let tags: Vec<u32> = rng.vec(N, |r| r.next_u64() as u32);
    let params = Params {
        flag: 3,
        scale: 1.5,
        offset: 700,
        bias: -0.25,
    };
    let module = kernels::load(&gpu.ctx)?;
    let a_dev = gpu.stream.clone_htod(&a)?;
    let b_dev = gpu.stream.clone_htod(&b)?;
    let tags_dev = gpu.stream.clone_htod(&tags)?;
    let mut out = gpu.stream.alloc_zeros::<f32>(N)?;
    let mut ok = true;
    for op in 0..8 {
        module.compute(
            &gpu.stream,
            LaunchConfig::for_num_elems(N as u32),
            op,
            params,
            &a_dev,
            &b_dev,
            &tags_dev,
            &mut out,
        )?;
        let got = gpu.stream.clone_dtoh(&out)?;
        let expected: Vec<f32> = (0..N)
            .map(|i| compute(op, params, a[i], b[i], tags[i]))
            .collect();
        ok &= check(&format!("compute op {op}"), &got, &expected);
    }

    let mut data = gpu.stream.clone_htod(&a)?;
    module.scale_in_place(
        &gpu.stream,
        LaunchConfig::for_num_elems(N as u32),
        &mut data,
        0.5,
    )?;
    let expected: Vec<f32> = a.iter().map(|x| x * 0.5 + 1.0).collect();
    ok &= check(
        "scale &mut [f32] in place",
        &gpu.stream.clone_dtoh(&data)?,
        &expected,
    );
    Ok(ok)
}
