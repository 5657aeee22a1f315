//! A cuda-oxide program: `saxpy` below runs on the GPU, and `main` checks its results against
//! the same computation on the CPU. Build and run it with `cargo oxide run`.

use std::process::ExitCode;

use cuda_host::{CudaContext, LaunchConfig, cuda_module};

/// The GPU code: `#[cuda_module]` gives the host `kernels::load` and one launcher per kernel.
#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    /// `out[i] = a * x[i] + y[i]`, one GPU thread per element.
    #[kernel]
    pub fn saxpy(a: f32, x: &[f32], y: &[f32], mut out: DisjointSlice<f32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = a * x[i.get()] + y[i.get()];
        }
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(0) => {
            println!("ok: the GPU's saxpy matches the CPU's on every element");
            ExitCode::SUCCESS
        }
        Ok(wrong) => {
            eprintln!("FAIL: {wrong} element(s) differ from the CPU's");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the kernel on 1M elements; returns how many results differ from the CPU's.
fn run() -> Result<usize, Box<dyn std::error::Error>> {
    const N: usize = 1 << 20;
    let a = 2.5f32;
    let x: Vec<f32> = (0..N).map(|i| i as f32 * 0.25).collect();
    let y: Vec<f32> = (0..N).map(|i| (N - i) as f32 / 3.0).collect();

    let ctx = CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx)?;
    let x_gpu = stream.clone_htod(&x)?;
    let y_gpu = stream.clone_htod(&y)?;
    let mut out_gpu = stream.alloc_zeros::<f32>(N)?;
    let config = LaunchConfig::for_num_elems(N as u32);
    module.saxpy(&stream, config, a, &x_gpu, &y_gpu, &mut out_gpu)?;
    let out = stream.clone_dtoh(&out_gpu)?;

    // The GPU rounds `a * x` and then `+ y`, as Rust does on the CPU (no fused multiply-add
    // unless the code asks for `mul_add`), so the results agree bit for bit.
    let wrong = (0..N)
        .filter(|&i| out[i].to_bits() != (a * x[i] + y[i]).to_bits())
        .count();
    Ok(wrong)
}
