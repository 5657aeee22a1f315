//! Host-side helpers shared by the examples: deterministic pseudo-random inputs, comparison
//! against a CPU computation, and one clear exit path when no GPU is available.

use std::fmt::Debug;
use std::process::ExitCode;

use cuda_host::{CudaContext, CudaStream, Error, LaunchConfig};

/// A small xorshift64* generator: reproducible inputs without a dependency.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed` (any value; 0 is remapped).
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A uniform `f32` in `[lo, hi)`.
    pub fn f32_in(&mut self, lo: f32, hi: f32) -> f32 {
        let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        lo + (hi - lo) * unit
    }

    /// A uniform `f64` in `[lo, hi)`.
    pub fn f64_in(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }

    /// `n` values from `gen`.
    pub fn vec<T>(&mut self, n: usize, mut generate: impl FnMut(&mut Self) -> T) -> Vec<T> {
        (0..n).map(|_| generate(self)).collect()
    }
}

/// The device and stream an example runs on.
pub struct Gpu {
    /// The CUDA context of device 0.
    pub ctx: CudaContext,
    /// Its default stream.
    pub stream: std::sync::Arc<CudaStream>,
}

/// Opens device 0, or explains why there is none: the PTX was still produced, and where it is.
pub fn gpu(example: &str) -> Result<Gpu, ExitCode> {
    match CudaContext::new(0) {
        Ok(ctx) => {
            let stream = ctx.default_stream();
            Ok(Gpu { ctx, stream })
        }
        Err(error) => {
            let ptx = std::env::current_exe()
                .ok()
                .map(|exe| exe.with_file_name(format!("{example}.ptx")))
                .filter(|path| path.is_file());
            eprintln!("{example}: no GPU to run on: {error}");
            match ptx {
                Some(path) => eprintln!(
                    "{example}: the kernels were compiled; their PTX is {}",
                    path.display()
                ),
                None => eprintln!("{example}: the kernels' PTX is embedded in this binary"),
            }
            Err(ExitCode::from(2))
        }
    }
}

/// An example's `main`: opens the GPU (or explains why there is none), runs `body`, reports a
/// host-side error, and turns the result of its checks into the verdict and exit code.
pub fn run_example(
    example: &str,
    body: impl FnOnce(&Gpu) -> Result<bool, Box<dyn std::error::Error>>,
) -> ExitCode {
    let gpu = match gpu(example) {
        Ok(gpu) => gpu,
        Err(code) => return code,
    };
    match body(&gpu) {
        Ok(all_ok) => verdict(example, all_ok),
        Err(error) => {
            eprintln!("{example}: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Compares `got` with `expected` element by element (exactly, or within `tolerance` for
/// floats through [`Close`]), prints one verdict line and returns whether they match.
pub fn check<T: Close + Debug>(what: &str, got: &[T], expected: &[T]) -> bool {
    if got.len() != expected.len() {
        println!(
            "FAIL {what}: {} results, expected {}",
            got.len(),
            expected.len()
        );
        return false;
    }
    let mismatches: Vec<usize> = (0..got.len())
        .filter(|&i| !got[i].close_to(&expected[i]))
        .collect();
    match mismatches.first() {
        None => {
            println!("ok   {what} ({} values)", got.len());
            true
        }
        Some(&i) => {
            println!(
                "FAIL {what}: {} of {} values differ; first at [{i}]: got {:?}, expected {:?}",
                mismatches.len(),
                got.len(),
                got[i],
                expected[i]
            );
            false
        }
    }
}

/// The example's exit code: success only when every check passed.
pub fn verdict(example: &str, all_ok: bool) -> ExitCode {
    if all_ok {
        println!("{example}: PASS");
        ExitCode::SUCCESS
    } else {
        println!("{example}: FAIL");
        ExitCode::FAILURE
    }
}

/// Equality for results: exact for integers, within a relative tolerance for floats (the GPU
/// may fuse a multiply and an add where the CPU rounds twice).
pub trait Close {
    /// Whether `self` is acceptably close to `expected`.
    fn close_to(&self, expected: &Self) -> bool;
}

macro_rules! exact {
    ($($t:ty),*) => {$(
        impl Close for $t {
            fn close_to(&self, expected: &Self) -> bool { self == expected }
        }
    )*};
}
exact!(u8, u16, u32, u64, i8, i16, i32, i64, bool, usize, isize);

impl Close for f32 {
    fn close_to(&self, expected: &Self) -> bool {
        (self.is_nan() && expected.is_nan())
            || self == expected
            || (self - expected).abs() <= 1e-5 * expected.abs().max(1.0)
    }
}

impl Close for f64 {
    fn close_to(&self, expected: &Self) -> bool {
        (self.is_nan() && expected.is_nan())
            || self == expected
            || (self - expected).abs() <= 1e-12 * expected.abs().max(1.0)
    }
}

/// A one-dimensional launch of at least `n` threads in blocks of `threads_per_block`, for
/// kernels whose register use leaves no room for blocks of 1,024 threads (the launcher refuses
/// those with an error saying so).
pub fn blocks_of(threads_per_block: u32, n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n as u32).div_ceil(threads_per_block), 1, 1),
        block_dim: (threads_per_block, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Runs this program again with `args` (a case that may break its CUDA context), prints what
/// it printed, and says whether it succeeded (its standard error goes into a `FAIL` line for
/// `name` when it did not).
pub fn case_in_own_process(args: &[&str], name: &str) -> std::io::Result<bool> {
    let output = std::env::current_exe()
        .and_then(|exe| std::process::Command::new(exe).args(args).output())?;
    print!("{}", String::from_utf8_lossy(&output.stdout));
    if !output.status.success() {
        println!("FAIL {name}: {}", String::from_utf8_lossy(&output.stderr));
    }
    Ok(output.status.success())
}

/// The verdict, printed as `ok` or `FAIL`, on a case run in a process of its own because it
/// may stop its kernel at a failed check (the CUDA context is unusable afterwards).
/// `outcome` is `Ok(None)` when the case ran as it should, `Ok(Some(why))` when it did not
/// (a case meant to stop: it ran to its end), and an error is right when it is the check's
/// panic with a message `expected` accepts, in a build with panic messages (the dev profile),
/// or a fault of the kernel in a release build.
pub fn stop_verdict(
    name: &str,
    outcome: Result<Option<String>, Error>,
    expected: impl Fn(&str) -> bool,
) -> ExitCode {
    let ok = match outcome {
        Ok(None) => true,
        Ok(Some(why)) => {
            println!("FAIL {name}: {why}");
            false
        }
        Err(Error::KernelPanic { panic, .. }) if cfg!(debug_assertions) => {
            let ok = expected(&panic.message);
            println!(
                "{} {name}: {} at {}:{}",
                if ok { "ok  " } else { "FAIL" },
                panic.message,
                panic.file,
                panic.line
            );
            ok
        }
        Err(Error::KernelFault { kernel, .. }) if !cfg!(debug_assertions) => {
            println!("ok   {name}: `{kernel}` stopped with a fault (release: no panic messages)");
            true
        }
        Err(error) => {
            println!("FAIL {name}: {error}");
            false
        }
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
