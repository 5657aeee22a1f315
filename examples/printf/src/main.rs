//! `gpu_printf!` from a kernel: 64 threads each print one line; the lines are checked against
//! what the host expects.
//!
//! The device's printf output goes to the process's standard output when the host next
//! synchronises, so the program runs the kernel in a child process of itself and reads the
//! child's output: every expected line must be there, exactly once.

use std::process::{Command, ExitCode};

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, run_example};

/// Set in the child process that launches the kernel.
const CHILD: &str = "CUDA_OXIDE_PRINTF_CHILD";

/// Threads per block and blocks.
const BLOCK: u32 = 32;
const BLOCKS: u32 = 2;

#[cuda_module]
mod kernels {
    use cuda_device::{gpu_printf, kernel, thread};

    #[kernel]
    pub fn print_lines(x: &[f32], scale: u64) {
        let i = thread::index_1d().get();
        let block = thread::blockIdx_x();
        let value = x[i];
        let negative = -(i as i32);
        gpu_printf!(
            "thread {:>3} block {block} x = {:.3} hex {:#06x} neg {} big {} even {} {}\n",
            i,
            value,
            i * 255,
            negative,
            scale * i as u64,
            i % 2 == 0,
            "end"
        );
    }
}

/// The line thread `i` prints, as the C conversions the macro chose print it.
fn expected_line(i: usize, x: f32, scale: u64) -> String {
    format!(
        "thread {i:>3} block {} x = {x:.3} hex {:#06x} neg {} big {} even {} end",
        i / BLOCK as usize,
        i * 255,
        -(i as i32),
        scale * i as u64,
        i % 2 == 0
    )
}

fn inputs() -> Vec<f32> {
    // Quarters print exactly with three decimals in C and in Rust.
    (0..(BLOCK * BLOCKS) as usize)
        .map(|i| i as f32 * 0.25 - 4.0)
        .collect()
}

const SCALE: u64 = 1 << 40;

fn main() -> ExitCode {
    if std::env::var_os(CHILD).is_some() {
        return run_example("printf (child)", launch);
    }
    run_example("printf", check_child)
}

/// In the child: launch, then synchronise, which prints the lines.
fn launch(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let x = gpu.stream.clone_htod(&inputs())?;
    let cfg = LaunchConfig {
        grid_dim: (BLOCKS, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    module.print_lines(&gpu.stream, cfg, &x, SCALE)?;
    cuda_host::synchronize(&gpu.stream)?;
    Ok(true)
}

/// In the parent: run the child and compare its output with the expected lines.
fn check_child(_gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let output = Command::new(std::env::current_exe()?)
        .env(CHILD, "1")
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        println!(
            "FAIL the child process failed ({}):\n{stdout}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        return Ok(false);
    }
    let printed: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("thread "))
        .collect();
    let x = inputs();
    let mut ok = true;
    let mut missing = 0;
    for (i, &value) in x.iter().enumerate() {
        let line = expected_line(i, value, SCALE);
        let count = printed.iter().filter(|p| **p == line).count();
        if count != 1 {
            if missing == 0 {
                println!("FAIL line printed {count} times: {line}");
            }
            missing += 1;
            ok = false;
        }
    }
    if printed.len() != x.len() {
        println!("FAIL {} lines printed, expected {}", printed.len(), x.len());
        ok = false;
    }
    if ok {
        println!("ok   gpu_printf: {} lines as expected", x.len());
    } else {
        println!("FAIL gpu_printf: {missing} expected lines missing; the child printed:\n{stdout}");
    }
    Ok(ok)
}
