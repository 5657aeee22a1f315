//! Every `as` cast between the integer types, `bool`, `f32` and `f64`, on inputs that include
//! NaN, infinities, out-of-range and negative values (float-to-int casts saturate in Rust).
//! The same function computes the expected values on the CPU.

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

/// How many casts `cast` knows.
pub const OPS: u32 = 30;

/// Cast number `op` of `x` (a float) or `y` (an integer), as the bits of a `u64`.
pub fn cast(op: u32, x: f64, y: i64) -> u64 {
    let xf = x as f32;
    match op {
        0 => x as i8 as u8 as u64,
        1 => x as u8 as u64,
        2 => x as i16 as u16 as u64,
        3 => x as u16 as u64,
        4 => x as i32 as u32 as u64,
        5 => x as u32 as u64,
        6 => x as i64 as u64,
        7 => x as u64,
        8 => xf.to_bits() as u64,
        9 => xf as i8 as u8 as u64,
        10 => xf as u16 as u64,
        11 => xf as i32 as u32 as u64,
        12 => xf as u64,
        13 => (xf as f64).to_bits(),
        14 => (y as f64).to_bits(),
        15 => (y as f32).to_bits() as u64,
        16 => ((y as u64) as f64).to_bits(),
        17 => ((y as u32) as f32).to_bits() as u64,
        18 => ((y as i8) as f64).to_bits(),
        19 => y as i8 as u64,
        20 => y as u8 as u64,
        21 => y as i16 as u64,
        22 => y as u16 as u64,
        23 => y as i32 as u64,
        24 => y as u32 as u64,
        25 => (y as i8) as u64,
        26 => (y as u8) as i64 as u64,
        27 => (y < 0) as u64 + (y > 1000) as u8 as u64 * 2,
        28 => (y as u16 as i16) as i64 as u64,
        _ => char::from_u32((y as u32) & 0x7f).map_or(0, |c| c as u64),
    }
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    #[kernel]
    pub fn casts(op: u32, x: &[f64], y: &[i64], mut out: DisjointSlice<u64>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::cast(op, x[i.get()], y[i.get()]);
        }
    }
}

fn main() -> ExitCode {
    run_example("casts", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    const N: usize = 1 << 20;
    let mut rng = Rng::new(11);
    let specials = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        0.5,
        -0.5,
        255.5,
        256.0,
        -129.0,
        4e9,
        -4e9,
        1e19,
        2e19,
        -1e19,
        f64::MAX,
        f64::MIN_POSITIVE,
        3.4e38,
        3.5e38,
    ];
    let x: Vec<f64> = rng.vec(N, |r| match r.next_u64() % 4 {
        0 => specials[(r.next_u64() % specials.len() as u64) as usize],
        1 => r.f64_in(-300.0, 300.0),
        2 => r.f64_in(-1e20, 1e20),
        _ => r.f64_in(-70000.0, 70000.0),
    });
    let y: Vec<i64> = rng.vec(N, |r| match r.next_u64() % 3 {
        0 => (r.next_u64() % 2000) as i64 - 1000,
        _ => r.next_u64() as i64,
    });
    let module = kernels::load(&gpu.ctx)?;
    let x_dev = gpu.stream.clone_htod(&x)?;
    let y_dev = gpu.stream.clone_htod(&y)?;
    let mut out = gpu.stream.alloc_zeros::<u64>(N)?;
    let mut ok = true;
    for op in 0..OPS {
        module.casts(
            &gpu.stream,
            LaunchConfig::for_num_elems(N as u32),
            op,
            &x_dev,
            &y_dev,
            &mut out,
        )?;
        let got = gpu.stream.clone_dtoh(&out)?;
        let expected: Vec<u64> = (0..N).map(|i| cast(op, x[i], y[i])).collect();
        ok &= check(&format!("cast {op}"), &got, &expected);
    }
    Ok(ok)
}
