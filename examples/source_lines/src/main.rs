//! Rust source lines in NVIDIA's tools. The PTX carries `.file`/`.loc` for the Rust source by
//! default (like nvcc's `-lineinfo`), so compute-sanitizer, cuda-gdb and Nsight Compute name
//! the Rust `file:line` of a kernel's instructions (see docs/debugging.md).
//!
//! Without arguments: runs a correct kernel and checks its results against the CPU; then, when
//! `compute-sanitizer` is on `PATH`, runs this program again under it with `--oob` and checks
//! that its report of the out-of-bounds write names this file and the line of the write.
//!
//! `--oob`: launches the kernel with a `count` larger than its output, so that the last threads
//! write past the end through a raw pointer (no bounds check traps first). Without a sanitizer
//! the stray writes usually go unnoticed; `compute-sanitizer --tool memcheck ./source_lines
//! --oob` reports each one with the kernel, the thread and the Rust line (`at scale+0x1d0 in
//! main.rs:30`: it names the file without its folders).

use std::process::{Command, ExitCode};

use cuda_host::{LaunchConfig, cuda_module, synchronize};
use example_support::{Gpu, Rng, check, run_example};

#[cuda_module]
mod kernels {
    use cuda_device::{kernel, thread};

    /// `out[i] = x[i] * factor` for `i < count`, stored through a raw pointer: `count` is
    /// trusted, so a `count` past `out.len()` writes out of bounds.
    #[kernel]
    pub fn scale(x: &[f32], factor: f32, out: &mut [f32], count: usize) {
        let i = thread::index_1d().get();
        if i < count {
            let value = if i < x.len() { x[i] * factor } else { 0.0 };
            unsafe { *out.as_mut_ptr().add(i) = value }; // <- the store
        }
    }
}

/// The line of the store in [kernels::scale], found in this file when it is compiled.
const STORE_LINE: usize = line_of(include_str!("main.rs"), concat!("// <- ", "the store"));
const _: () = assert!(STORE_LINE != 0, "the store's marker is missing");

/// The 1-based number of the first line of `source` that contains `needle` (0 if none).
const fn line_of(source: &str, needle: &str) -> usize {
    let (source, needle) = (source.as_bytes(), needle.as_bytes());
    let mut line = 1;
    let mut at = 0;
    while at + needle.len() <= source.len() {
        let mut k = 0;
        while k < needle.len() && source[at + k] == needle[k] {
            k += 1;
        }
        if k == needle.len() {
            return line;
        }
        if source[at] == b'\n' {
            line += 1;
        }
        at += 1;
    }
    0
}

/// The argument that makes this program launch the faulty kernel.
const OOB: &str = "--oob";
/// The elements of the buffers.
const N: usize = 1 << 16;
/// How far past the end the faulty launch writes.
const PAST_END: usize = 256;

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some(OOB) {
        return out_of_bounds();
    }
    run_example("source_lines", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let mut rng = Rng::new(13);
    let x = rng.vec(N, |r| r.f32_in(-10.0, 10.0));
    let factor = 2.5f32;
    let module = kernels::load(&gpu.ctx)?;
    let x_dev = gpu.stream.clone_htod(&x)?;
    let mut out_dev = gpu.stream.alloc_zeros::<f32>(N)?;
    module.scale(
        &gpu.stream,
        LaunchConfig::for_num_elems(N as u32),
        &x_dev,
        factor,
        &mut out_dev,
        N,
    )?;
    let out = gpu.stream.clone_dtoh(&out_dev)?;
    let expected: Vec<f32> = x.iter().map(|v| v * factor).collect();
    let mut ok = check("out = x * factor", &out, &expected);
    ok &= sanitizer_names_the_line();
    Ok(ok)
}

/// Launches [kernels::scale] with `count` past the end of `out`.
fn out_of_bounds() -> ExitCode {
    let expected = format!("source_lines/src/main.rs:{}", STORE_LINE);
    println!("the faulty store is at {expected}");
    run_example("source_lines --oob", |gpu| {
        let module = kernels::load(&gpu.ctx)?;
        let x_dev = gpu.stream.clone_htod(&vec![1.0f32; N])?;
        let mut out_dev = gpu.stream.alloc_zeros::<f32>(N)?;
        module.scale(
            &gpu.stream,
            LaunchConfig::for_num_elems((N + PAST_END) as u32),
            &x_dev,
            1.0,
            &mut out_dev,
            N + PAST_END,
        )?;
        match synchronize(&gpu.stream) {
            Ok(()) => println!("the launch reported no error (the writes went unnoticed)"),
            Err(error) => println!("the launch failed: {error}"),
        }
        Ok(true)
    })
}

/// Runs this program with `--oob` under `compute-sanitizer --tool memcheck` (when it is on
/// `PATH`) and checks that the report names the Rust file and the line of the faulty store.
fn sanitizer_names_the_line() -> bool {
    let expected = format!("source_lines/src/main.rs:{}", STORE_LINE);
    if cuda_host::cpu_device_requested() {
        println!("skip compute-sanitizer checks GPU code; the CPU device runs the kernels here");
        return true;
    }
    let Ok(program) = std::env::current_exe() else {
        println!("FAIL the path of this program is unknown");
        return false;
    };
    let output = Command::new("compute-sanitizer")
        .args(["--tool", "memcheck", "--print-limit", "4"])
        .arg(&program)
        .arg(OOB)
        .output();
    let output = match output {
        Ok(output) => output,
        Err(error) => {
            println!("skip compute-sanitizer not run ({error}); the line check needs it");
            return true;
        }
    };
    let report = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    // The sanitizer's own lines start with `=========`; it names the file without its folders
    // (`at scale+0x1d0 in main.rs:30`), or with them.
    let sanitizer = |line: &&str| line.starts_with("=========");
    let write = report
        .lines()
        .filter(sanitizer)
        .find(|l| l.contains("Invalid __global__ write"));
    let short = format!(" main.rs:{STORE_LINE}");
    let long = format!("/{expected}");
    let at = report.lines().filter(sanitizer).find(|l| {
        let l = l.trim_end();
        l.contains(" at scale") && (l.ends_with(&short) || l.ends_with(&long))
    });
    match (write, at) {
        (Some(write), Some(at)) => {
            println!("ok   compute-sanitizer names the store's line ({expected}):");
            println!("       {}", write.trim());
            println!("       {}", at.trim());
            true
        }
        _ => {
            println!("FAIL compute-sanitizer's report does not name {expected}:");
            for line in report.lines().take(30) {
                println!("       {line}");
            }
            false
        }
    }
}
