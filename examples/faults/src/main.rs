//! A panic in device code traps the kernel, and the host gets an error naming the kernel: here
//! an index past the end of a slice, in some threads only. Passes when the launch reports that
//! panic, with its message (and not a result, a hang or a host panic; in a release build,
//! without panic messages, the fault). `examples/panics` checks every kind of panic in detail.
//!
//! When several kernels are in flight (here on two streams), the driver cannot say which one
//! faulted: the error lists every kernel that had not been seen to finish. A fault leaves the
//! process's context unusable, so that case runs in a second process (this program again).

use std::process::{Command, ExitCode};

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

    /// Fills `out` with `value`: never faults.
    #[kernel]
    pub fn fill(value: u32, mut out: DisjointSlice<u32>) {
        if let Some(slot) = out.get_mut(thread::index_1d()) {
            *slot = value;
        }
    }
}

/// The argument that makes this program run the several-kernels case.
const SEVERAL_IN_FLIGHT: &str = "--several-in-flight";

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some(SEVERAL_IN_FLIGHT) {
        return several_in_flight();
    }
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
        // One kernel in flight: it is named as the one.
        Err(error)
            if matches!(&error, Error::KernelPanic { kernel: "shifted_copy", in_flight, panic, .. }
                if in_flight.is_empty()
                    && panic.message.starts_with("index out of bounds: the len is 4096 but the index is ")) =>
        {
            println!("ok   out-of-bounds read reported: {error}");
            true
        }
        // A release build has no panic messages (docs/panics.md): the panic is a bare trap.
        Err(error)
            if !cfg!(debug_assertions)
                && matches!(&error, Error::KernelFault { kernel: "shifted_copy", in_flight, .. }
                    if in_flight.is_empty()) =>
        {
            println!("ok   out-of-bounds read reported (release: no message): {error}");
            true
        }
        Err(other) => {
            println!("FAIL expected a panic of `shifted_copy` (index out of bounds), got: {other}");
            false
        }
        Ok(()) => {
            println!("FAIL the out-of-bounds launch reported success");
            false
        }
    };
    let ok = ok & run_several_in_flight();
    verdict("faults", ok)
}

/// Runs [`several_in_flight`] in a new process (this context is unusable after the fault),
/// and passes on its verdict line.
fn run_several_in_flight() -> bool {
    let child =
        std::env::current_exe().and_then(|exe| Command::new(exe).arg(SEVERAL_IN_FLIGHT).output());
    match child {
        Ok(output) => {
            print!("{}", String::from_utf8_lossy(&output.stdout));
            eprint!("{}", String::from_utf8_lossy(&output.stderr));
            output.status.success()
        }
        Err(error) => {
            println!("FAIL could not start the second process: {error}");
            false
        }
    }
}

/// A kernel that runs fine on one stream and one that faults on another, both in flight: the
/// error names neither as certain, and lists both.
fn several_in_flight() -> ExitCode {
    let gpu = match gpu("faults") {
        Ok(gpu) => gpu,
        Err(code) => return code,
    };
    let outcome = (|| -> Result<(), Error> {
        const N: usize = 4096;
        let module = kernels::load(&gpu.ctx)?;
        let other = gpu.ctx.new_stream()?;
        let input = gpu.stream.clone_htod(&vec![7u32; N])?;
        let mut out = gpu.stream.alloc_zeros::<u32>(N)?;
        let mut filled = other.alloc_zeros::<u32>(N)?;
        synchronize(&gpu.stream)?;
        synchronize(&other)?;
        let cfg = LaunchConfig::for_num_elems(N as u32);
        module.fill(&other, cfg, 5, &mut filled)?;
        module.shifted_copy(&gpu.stream, cfg, &input, 8, &mut out)?;
        synchronize(&gpu.stream)
    })();
    let ok = match outcome {
        Err(error)
            if matches!(&error, Error::KernelPanic { in_flight, .. }
                if in_flight.contains(&"fill") && in_flight.contains(&"shifted_copy")) =>
        {
            println!("ok   with two kernels in flight, the panic lists both: {error}");
            true
        }
        Err(error)
            if !cfg!(debug_assertions)
                && matches!(&error, Error::KernelFault { in_flight, .. }
                    if in_flight.contains(&"fill") && in_flight.contains(&"shifted_copy")) =>
        {
            println!("ok   with two kernels in flight, the fault lists both (release): {error}");
            true
        }
        Err(other) => {
            println!("FAIL expected a panic listing `fill` and `shifted_copy`, got: {other}");
            false
        }
        Ok(()) => {
            println!("FAIL the out-of-bounds launch reported success");
            false
        }
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
