//! PTX that this GPU or its driver cannot take is refused with an error that names both sides:
//! PTX for a newer GPU architecture than the local one, and PTX of a newer PTX ISA than the
//! driver reads. Each module is a one-instruction kernel written here, so that only its header
//! differs from PTX the driver loads (which is loaded first, as the control).

use std::ffi::CString;
use std::process::ExitCode;

use cuda_host::{CudaVersion, Error, PtxIsa, PtxModule, driver_version};
use example_support::{Gpu, run_example};

fn main() -> ExitCode {
    run_example("load_errors", run)
}

/// A module with one empty kernel, under the given header.
fn module(version: &str, target: &str) -> CString {
    CString::new(format!(
        ".version {version}\n.target {target}\n.address_size 64\n\n\
         .visible .entry noop()\n{{\n\tret;\n}}\n"
    ))
    .expect("no NUL in the text")
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let local = gpu.ctx.target()?;
    let driver = driver_version()?;
    println!("GPU 0 is {local}; the driver supports CUDA {driver}");
    let local_number: u32 = local.trim_start_matches("sm_").parse()?;

    // The control: the same kernel for this GPU, in PTX ISA 8.7, which every driver cuda-host
    // runs on (CUDA 12.8 and newer) reads, and which knows the architectures up to sm_120.
    PtxModule::load(&gpu.ctx, "control", &module("8.7", &local))?.kernel("noop")?;
    println!("ok   the control module loads");
    let mut ok = true;

    // An architecture above this GPU's, among those PTX ISA 8.7 knows.
    let newer = [80, 86, 89, 90, 100, 120]
        .into_iter()
        .find(|&arch| arch > local_number);
    match newer {
        Some(arch) => {
            let target = format!("sm_{arch}");
            let outcome = PtxModule::load(&gpu.ctx, "newer_arch", &module("8.7", &target));
            ok &= match outcome {
                Err(error @ Error::PtxArchUnsupported { .. })
                    if error
                        .to_string()
                        .contains(&format!("compiled for {target}"))
                        && error.to_string().contains(&format!("{local})")) =>
                {
                    println!("ok   PTX for {target} is refused: {error}");
                    true
                }
                Err(other) => {
                    println!("FAIL PTX for {target}: expected an architecture error, got: {other}");
                    false
                }
                Ok(_) => {
                    println!("FAIL PTX for {target} loaded on a {local} GPU");
                    false
                }
            };
        }
        None => println!("ok   (no known architecture above {local} to try)"),
    }

    // A PTX ISA above what the driver reads: 9.9 needs CUDA 13.9.
    let isa = PtxIsa { major: 9, minor: 9 };
    if driver < CudaVersion(13090) {
        let outcome = PtxModule::load(&gpu.ctx, "newer_isa", &module(&isa.to_string(), &local));
        ok &= match outcome {
            Err(error @ Error::PtxIsaUnsupported { .. })
                if error
                    .to_string()
                    .contains("PTX ISA 9.9, which needs a driver for CUDA 13.9")
                    && error
                        .to_string()
                        .contains(&format!("supports CUDA {driver}")) =>
            {
                println!("ok   PTX ISA {isa} is refused: {error}");
                true
            }
            Err(other) => {
                println!("FAIL PTX ISA {isa}: expected a PTX ISA error, got: {other}");
                false
            }
            Ok(_) => {
                println!("FAIL PTX ISA {isa} loaded with a CUDA {driver} driver");
                false
            }
        };
    } else {
        println!("ok   (the driver reads PTX ISA {isa}: nothing newer to try)");
    }
    Ok(ok)
}
