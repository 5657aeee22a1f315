//! The classic: `c[i] = a[i] + b[i]` over 16 million floats, checked against the CPU.

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    #[kernel]
    pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
        let idx = thread::index_1d();
        if let Some(c_elem) = c.get_mut(idx) {
            *c_elem = a[idx.get()] + b[idx.get()];
        }
    }
}

fn main() -> ExitCode {
    run_example("vecadd", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    const N: usize = 1 << 24;
    let mut rng = Rng::new(1);
    let a = rng.vec(N, |r| r.f32_in(-100.0, 100.0));
    let b = rng.vec(N, |r| r.f32_in(-100.0, 100.0));

    let module = kernels::load(&gpu.ctx)?;
    let a_dev = gpu.stream.clone_htod(&a)?;
    let b_dev = gpu.stream.clone_htod(&b)?;
    let mut c_dev = gpu.stream.alloc_zeros::<f32>(N)?;
    module.vecadd(
        &gpu.stream,
        LaunchConfig::for_num_elems(N as u32),
        &a_dev,
        &b_dev,
        &mut c_dev,
    )?;
    let c = gpu.stream.clone_dtoh(&c_dev)?;

    let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    Ok(check("c = a + b", &c, &expected))
}
