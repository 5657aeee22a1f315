//! A panic in device code traps the kernel, and the host gets an error naming the kernel: here
//! an index past the end of a slice, in some threads only. Passes when the launch reports that
//! fault (and not a result, a hang or a host panic).

use std::process::ExitCode;

use cuda_host::{Error, LaunchConfig, cuda_module, synchronize};
use example_support::{gpu, verdict};

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    /// Reads `input[i + shift]`: out of bounds for the last `shift` threads.
    #[kernel]
    pub fn shifted_copy(input: &[u32], shift: usize, mut out: DisjointSlice<u32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = input[i.get() + shift];
        }
    }
}

fn main() -> ExitCode {
    let gpu = match gpu("faults") {
        Ok(gpu) => gpu,
        Err(code) => return code,
    };
    let outcome = (|| -> Result<(), Error> {
        const N: usize = 4096;
        let module = kernels::load(&gpu.ctx)?;
        let input = gpu.stream.clone_htod(&vec![7u32; N])?;
        let mut out = gpu.stream.alloc_zeros::<u32>(N)?;
        // In bounds: must succeed.
        module.shifted_copy(
            &gpu.stream,
            LaunchConfig::for_num_elems((N - 8) as u32),
            &input,
            8,
            &mut out,
        )?;
        synchronize(&gpu.stream)?;
        println!("ok   in-bounds launch ran");
        // Out of bounds for the last 8 threads: must trap.
        module.shifted_copy(
            &gpu.stream,
            LaunchConfig::for_num_elems(N as u32),
            &input,
            8,
            &mut out,
        )?;
        synchronize(&gpu.stream)
    })();
    let ok = match outcome {
        Err(
            error @ Error::KernelFault {
                kernel: "shifted_copy",
                ..
            },
        ) => {
            println!("ok   out-of-bounds read reported: {error}");
            true
        }
        Err(other) => {
            println!("FAIL expected a fault of `shifted_copy`, got: {other}");
            false
        }
        Ok(()) => {
            println!("FAIL the out-of-bounds launch reported success");
            false
        }
    };
    verdict("faults", ok)
}
