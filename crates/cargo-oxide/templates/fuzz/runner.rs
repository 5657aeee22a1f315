//! The host side of a batch of generated programs, written by `cargo oxide fuzz`.
//!
//! `cpu FILE`: runs every program of this batch on the CPU, on every thread's input, and writes
//! the results to FILE (one record per program: seed, whether it ran, its outputs); a program
//! that panics is reported as `cpu-panic SEED: MESSAGE` (a defect of the generator).
//!
//! `gpu FILE.expect...`: for each file, loads the PTX beside it (`FILE.ptx`, or the image
//! named by `FUZZ_IMAGE_SUFFIX`, e.g. `.O0.cubin`), runs every program's kernel and compares
//! its outputs with the recorded CPU outputs bit for bit. Prints one line per failing program
//! and `failing batch: FILE` after each batch with a failure; last, `N ok, M mismatch, F fault`
//! and the failing seeds. Any batch's binary can run
//! every batch's files: the kernels are found by name (`k_<seed>`).
//!
//! On the CPU device (`CUDA_OXIDE_DEVICE=cpu`, `cargo oxide fuzz --cpu`) `gpu FILE.expect`
//! runs this binary's own kernels, compiled for the CPU, instead of the PTX beside the file:
//! the file must be this batch's.

use std::error::Error;
use std::ffi::CStr;
use std::process::ExitCode;

use cuda_host::{CudaContext, KernelArgs, LaunchConfig, PtxModule};
use oxide_fuzz::{THREADS, input};

/// A program of the batch: its seed and its function.
pub type Program = (u64, fn(u64) -> u64);

/// Loads the module embedded in this binary (the batch's `kernels::load_untyped`).
pub type LoadOwn = fn(&CudaContext) -> Result<PtxModule, cuda_host::Error>;

pub fn main(programs: &[Program], load_own: LoadOwn) -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let result = match (args.get(1).map(String::as_str), args.get(2)) {
        (Some("cpu"), Some(file)) => cpu(programs, file),
        (Some("gpu"), Some(_)) => gpu(&args[2..], load_own),
        _ => {
            eprintln!("usage: {} cpu FILE | gpu FILE.expect...", args[0]);
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn cpu(programs: &[Program], file: &str) -> Result<ExitCode, Box<dyn Error>> {
    std::panic::set_hook(Box::new(|_| {}));
    let mut out = Vec::new();
    out.extend((programs.len() as u32).to_le_bytes());
    for &(seed, run) in programs {
        let outputs = std::panic::catch_unwind(|| {
            (0..THREADS)
                .map(|i| run(input(seed, i)))
                .collect::<Vec<u64>>()
        });
        out.extend(seed.to_le_bytes());
        match outputs {
            Ok(values) => {
                out.push(1);
                for v in values {
                    out.extend(v.to_le_bytes());
                }
            }
            Err(payload) => {
                out.push(0);
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                println!("cpu-panic {seed}: {message}");
            }
        }
    }
    std::fs::write(file, out)?;
    Ok(ExitCode::SUCCESS)
}

/// The records of an expect file: seed, and the outputs when the program ran on the CPU.
fn records(bytes: &[u8]) -> Result<Vec<(u64, Option<Vec<u64>>)>, Box<dyn Error>> {
    let word = |at: usize| -> Result<u64, Box<dyn Error>> {
        let b = bytes.get(at..at + 8).ok_or("expect file cut short")?;
        Ok(u64::from_le_bytes(b.try_into()?))
    };
    let count = u32::from_le_bytes(bytes.get(..4).ok_or("empty expect file")?.try_into()?);
    let mut at = 4;
    let mut all = Vec::new();
    for _ in 0..count {
        let seed = word(at)?;
        let ran = *bytes.get(at + 8).ok_or("expect file cut short")?;
        at += 9;
        if ran == 1 {
            let values = (0..THREADS)
                .map(|i| word(at + 8 * i))
                .collect::<Result<Vec<u64>, _>>()?;
            at += 8 * THREADS;
            all.push((seed, Some(values)));
        } else {
            all.push((seed, None));
        }
    }
    Ok(all)
}

fn gpu(files: &[String], load_own: LoadOwn) -> Result<ExitCode, Box<dyn Error>> {
    let suffix = std::env::var("FUZZ_IMAGE_SUFFIX").unwrap_or_else(|_| ".ptx".to_owned());
    let ctx = CudaContext::new(0)?;
    let stream = ctx.default_stream();
    let (mut ok, mut mismatch, mut fault) = (0usize, 0usize, 0usize);
    let mut failing = Vec::new();
    for file in files {
        let failing_before = failing.len();
        let recs = records(&std::fs::read(file)?)?;
        let on_cpu = cuda_host::cpu_device_requested();
        let image_path = if on_cpu {
            "this binary's CPU image".to_owned()
        } else {
            format!("{}{suffix}", file.trim_end_matches(".expect"))
        };
        let loaded = if on_cpu {
            load_own(&ctx)
        } else {
            let mut image = std::fs::read(&image_path)?;
            image.push(0);
            // A PTX text ends at its NUL; a cubin is an ELF image that the driver reads from
            // the same pointer (it holds NULs, so only its first bytes make up the `CStr`).
            let text = CStr::from_bytes_until_nul(&image)?;
            PtxModule::load(&ctx, "fuzz", text)
        };
        let module = match loaded {
            Ok(module) => module,
            Err(e) => {
                println!("LOAD-ERROR {image_path}: {e}");
                let n = recs.iter().filter(|(_, v)| v.is_some()).count();
                fault += n;
                failing.extend(recs.iter().filter(|(_, v)| v.is_some()).map(|(s, _)| *s));
                continue;
            }
        };
        for (seed, expected) in recs {
            let Some(expected) = expected else { continue };
            let name: &'static str = Box::leak(format!("k_{seed}").into_boxed_str());
            let outcome = (|| -> Result<Vec<u64>, Box<dyn Error>> {
                let kernel = module.kernel(name)?;
                let inputs: Vec<u64> = (0..THREADS).map(|i| input(seed, i)).collect();
                let d_in = stream.clone_htod(&inputs)?;
                let mut d_out = stream.alloc_zeros::<u64>(THREADS)?;
                {
                    let mut args = KernelArgs::new(&stream);
                    args.slice::<u64, _>(&d_in);
                    args.slice_mut::<u64, _>(&mut d_out);
                    let cfg = LaunchConfig {
                        grid_dim: ((THREADS / 64) as u32, 1, 1),
                        block_dim: (64, 1, 1),
                        shared_mem_bytes: 0,
                    };
                    // SAFETY: every generated kernel is `k_<seed>(input: &[u64], out:
                    // DisjointSlice<u64>)`, which these arguments match.
                    unsafe { kernel.launch(&stream, cfg, args) }?;
                }
                Ok(stream.clone_dtoh(&d_out)?)
            })();
            match outcome {
                Ok(got) if got == expected => ok += 1,
                Ok(got) => {
                    mismatch += 1;
                    failing.push(seed);
                    let diffs: Vec<usize> = (0..THREADS).filter(|&i| got[i] != expected[i]).collect();
                    let i = diffs[0];
                    println!(
                        "MISMATCH seed {seed}: {} of {THREADS} threads differ; thread {i}: input {:#018x}, {} {:#018x}, cpu {:#018x}",
                        diffs.len(),
                        input(seed, i),
                        if on_cpu { "cpu-device" } else { "gpu" },
                        got[i],
                        expected[i]
                    );
                }
                Err(e) => {
                    fault += 1;
                    failing.push(seed);
                    println!("FAULT seed {seed}: {e}");
                }
            }
        }
        if failing.len() > failing_before {
            println!("failing batch: {file}");
        }
    }
    println!("{ok} ok, {mismatch} mismatch, {fault} fault");
    let seeds: Vec<String> = failing.iter().map(u64::to_string).collect();
    println!("failing seeds: [{}]", seeds.join(", "));
    Ok(if mismatch + fault == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
