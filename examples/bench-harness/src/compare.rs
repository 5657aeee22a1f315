//! Running a benchmark's contenders: each once into a fresh output, cross-checked, then timed
//! with CUDA events (warm-up, rounds interleaving the contenders, medians).

use std::fmt::Debug;
use std::sync::Arc;

use cuda_host::cudarc::driver::{DevicePtr, ValidAsZeroBits};
use cuda_host::timing::{EventTimer, median};
use cuda_host::{CudaSlice, CudaStream, DeviceRepr, LaunchConfig, synchronize};
use example_support::Rng;

use crate::cuda::{Arg, Contender, CudaFn};

/// What a benchmark can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// A CUDA call or a kernel failed.
    #[error(transparent)]
    Cuda(#[from] cuda_host::Error),
    /// The benchmark cannot run as set up (a size that does not fit, ...).
    #[error("{0}")]
    Setup(String),
}

impl Failure {
    /// Whether the CUDA context is unusable afterwards (a kernel faulted): the suite stops.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            Failure::Cuda(
                cuda_host::Error::KernelFault { .. } | cuda_host::Error::KernelPanic { .. }
            )
        )
    }
}

/// How the suite runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Timed rounds per contender (the median is reported).
    pub rounds: u32,
    /// Untimed launches per contender before the rounds.
    pub warmup: u32,
    /// Sizes divided by 16 and fewer rounds: a quick smoke run.
    pub quick: bool,
    /// Shortest time a round should take; launches are repeated within a round to reach it.
    pub round_ms: f64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            rounds: 21,
            warmup: 3,
            quick: false,
            round_ms: 2.0,
        }
    }
}

/// How two results must agree.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Tolerance {
    /// Bit-identical (for floats: the same bits, so `-0.0` differs from `0.0`).
    Exact,
    /// `|got - expected| <= abs + rel * |expected|`.
    Close {
        /// Relative part.
        rel: f64,
        /// Absolute part (for results near zero).
        abs: f64,
    },
}

impl std::fmt::Display for Tolerance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tolerance::Exact => f.write_str("bit-exact"),
            Tolerance::Close { rel, abs } => write!(f, "within {abs:e} + {rel:e}·|x|"),
        }
    }
}

/// An element type of a benchmark's output.
pub trait Value: DeviceRepr + ValidAsZeroBits + Copy + Debug + Unpin + 'static {
    /// Whether `self` agrees with `expected` under `tolerance`.
    fn agrees(&self, expected: &Self, tolerance: Tolerance) -> bool;
}

impl Value for f32 {
    fn agrees(&self, expected: &Self, tolerance: Tolerance) -> bool {
        if self.to_bits() == expected.to_bits() {
            return true;
        }
        if self.is_nan() || expected.is_nan() {
            return self.is_nan() && expected.is_nan() && tolerance != Tolerance::Exact;
        }
        match tolerance {
            Tolerance::Exact => false,
            Tolerance::Close { rel, abs } => {
                let (got, want) = (f64::from(*self), f64::from(*expected));
                self == expected || (got - want).abs() <= abs + rel * want.abs()
            }
        }
    }
}

impl Value for u32 {
    fn agrees(&self, expected: &Self, _: Tolerance) -> bool {
        self == expected
    }
}

/// The work one launch does, for throughput columns.
#[derive(Copy, Clone, Debug, Default)]
pub struct Work {
    /// Bytes read and written in device memory (at least once each).
    pub bytes: f64,
    /// Floating-point operations.
    pub flops: f64,
}

impl Work {
    /// Memory traffic only.
    pub fn bytes(bytes: usize) -> Self {
        Work {
            bytes: bytes as f64,
            flops: 0.0,
        }
    }

    /// Memory traffic and arithmetic.
    pub fn bytes_flops(bytes: usize, flops: usize) -> Self {
        Work {
            bytes: bytes as f64,
            flops: flops as f64,
        }
    }
}

/// What a benchmark checks its outputs against.
pub struct Spec<T> {
    /// The problem size, for the report (`2^25 f32`, `1024³`).
    pub size: String,
    /// The work of one launch.
    pub work: Work,
    /// Elements of the output buffer.
    pub out_len: usize,
    /// The CPU's result and how ours must agree with it; `None` where the CPU would take too
    /// long (the CUDA C++ result is then the reference).
    pub reference: Option<(Vec<T>, Tolerance)>,
    /// How ours must agree with CUDA C++ as NVRTC compiles it by default (contracting
    /// `a * b + c` into an fma).
    pub vs_cuda: Tolerance,
    /// How ours must agree with CUDA C++ built with `--fmad=false`.
    pub vs_cuda_nofma: Tolerance,
}

/// One comparison of ours with another result.
#[derive(Clone, Debug)]
pub struct CheckResult {
    /// What ours was compared with.
    pub against: String,
    /// The tolerance applied.
    pub tolerance: String,
    /// Whether every element agreed.
    pub passed: bool,
    /// How many elements disagreed, and the first of them.
    pub detail: String,
}

/// One benchmark's measurements.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The problem size.
    pub size: String,
    /// The work of one launch.
    pub work: Work,
    /// Median milliseconds per launch of each contender that ran.
    pub times: Vec<(Contender, f64)>,
    /// Launches per timed round.
    pub reps: u32,
    /// The cross-checks.
    pub checks: Vec<CheckResult>,
}

impl Outcome {
    /// The median time of `contender`, if it ran.
    pub fn ms(&self, contender: Contender) -> Option<f64> {
        self.times
            .iter()
            .find(|(c, _)| *c == contender)
            .map(|&(_, ms)| ms)
    }

    /// Whether every cross-check passed.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }
}

/// What a benchmark's `run` gets: the GPU, both compilers' kernels, inputs, and the harness.
/// `M` is the benchmark crate's module of Rust kernels (what `#[cuda_module]` generates).
pub struct Ctx<'a, M> {
    /// The stream everything runs on.
    pub stream: &'a Arc<CudaStream>,
    /// Our kernels.
    pub ours: &'a M,
    /// The CUDA C++ kernel: the default build, then the `--fmad=false` one (either may be
    /// missing when NVRTC is not available or the source did not compile).
    pub cuda: Vec<CudaFn>,
    /// Seeded random inputs.
    pub rng: Rng,
    pub(crate) options: &'a Options,
    pub(crate) timer: &'a EventTimer,
}

impl<M> Ctx<'_, M> {
    /// `full`, or a sixteenth of it (at least `min`) in a quick run.
    pub fn size(&self, full: usize, min: usize) -> usize {
        if self.options.quick {
            (full / 16).max(min)
        } else {
            full
        }
    }

    /// Copies `host` to a new device buffer.
    pub fn upload<T: DeviceRepr + Unpin>(&self, host: &[T]) -> Result<CudaSlice<T>, Failure> {
        Ok(self
            .stream
            .clone_htod(host)
            .map_err(cuda_host::Error::from)?)
    }

    /// A buffer as a CUDA C++ pointer argument.
    pub fn ptr<T>(&self, buffer: &CudaSlice<T>) -> Arg {
        ptr(self.stream, buffer)
    }

    /// Runs ours and each CUDA C++ build once into fresh zeroed outputs, cross-checks them
    /// as `spec` says, then times them (warm-up, then rounds interleaving the contenders, the
    /// median of each).
    ///
    /// `ours` and `cuda` launch their kernel writing into the output buffer they are given.
    pub fn compare<T: Value>(
        &mut self,
        spec: Spec<T>,
        mut ours: impl FnMut(&mut CudaSlice<T>) -> Result<(), cuda_host::Error>,
        mut cuda: impl FnMut(&CudaFn, &mut CudaSlice<T>) -> Result<(), cuda_host::Error>,
    ) -> Result<Outcome, Failure> {
        let stream = self.stream;
        let zeros = || -> Result<CudaSlice<T>, Failure> {
            Ok(stream
                .alloc_zeros::<T>(spec.out_len)
                .map_err(cuda_host::Error::from)?)
        };
        let download = |buffer: &CudaSlice<T>| -> Result<Vec<T>, Failure> {
            synchronize(stream)?;
            Ok(stream.clone_dtoh(buffer).map_err(cuda_host::Error::from)?)
        };

        let mut out_ours = zeros()?;
        ours(&mut out_ours)?;
        let got = download(&out_ours)?;
        let mut checks = Vec::new();
        if let Some((expected, tolerance)) = &spec.reference {
            checks.push(check("the CPU", &got, expected, *tolerance));
        }
        let mut cuda_outs = Vec::new();
        for f in &self.cuda {
            let mut out = zeros()?;
            cuda(f, &mut out)?;
            let theirs = download(&out)?;
            let tolerance = match f.contender {
                Contender::CudaNoFma => spec.vs_cuda_nofma,
                _ => spec.vs_cuda,
            };
            checks.push(check(f.contender.label(), &got, &theirs, tolerance));
            cuda_outs.push(out);
        }

        for _ in 0..self.options.warmup {
            ours(&mut out_ours)?;
            for (f, out) in self.cuda.iter().zip(&mut cuda_outs) {
                cuda(f, out)?;
            }
        }
        let once = self.timer.time(stream, 1, || ours(&mut out_ours))?;
        let reps = (self.options.round_ms / once.max(1e-4))
            .ceil()
            .clamp(1.0, 1000.0) as u32;
        let mut samples = vec![Vec::new(); 1 + self.cuda.len()];
        for _ in 0..self.options.rounds.max(1) {
            samples[0].push(self.timer.time(stream, reps, || ours(&mut out_ours))?);
            for (k, (f, out)) in self.cuda.iter().zip(&mut cuda_outs).enumerate() {
                samples[k + 1].push(self.timer.time(stream, reps, || cuda(f, out))?);
            }
        }
        let contenders =
            std::iter::once(Contender::Ours).chain(self.cuda.iter().map(|f| f.contender));
        let times = contenders
            .zip(&samples)
            .filter_map(|(c, s)| median(s).map(|ms| (c, ms)))
            .collect();
        Ok(Outcome {
            size: spec.size,
            work: spec.work,
            times,
            reps,
            checks,
        })
    }
}

/// Compares ours (`got`) with `expected` element by element.
pub fn check<T: Value>(
    against: &str,
    got: &[T],
    expected: &[T],
    tolerance: Tolerance,
) -> CheckResult {
    let result = |passed, detail| CheckResult {
        against: against.to_owned(),
        tolerance: tolerance.to_string(),
        passed,
        detail,
    };
    if got.len() != expected.len() {
        return result(
            false,
            format!("{} results, expected {}", got.len(), expected.len()),
        );
    }
    let mut bad = (0..got.len()).filter(|&i| !got[i].agrees(&expected[i], tolerance));
    match bad.next() {
        None => result(true, format!("{} values agree", got.len())),
        Some(first) => result(
            false,
            format!(
                "{} of {} values differ; first at [{first}]: ours {:?}, {against} {:?}",
                1 + bad.count(),
                got.len(),
                got[first],
                expected[first]
            ),
        ),
    }
}

/// A buffer as a CUDA C++ pointer argument (for a launch on `stream`).
pub fn ptr<T>(stream: &CudaStream, buffer: &CudaSlice<T>) -> Arg {
    // Everything runs on one stream, so the ordering guard has nothing to record.
    let (ptr, _guard) = buffer.device_ptr(stream);
    Arg::Ptr(ptr)
}

/// `n` for a size label: `2^25` for a power of two, else the number.
pub fn count(n: usize) -> String {
    if n.is_power_of_two() && n >= 1024 {
        format!("2^{}", n.ilog2())
    } else {
        n.to_string()
    }
}

/// A 1-D launch of `n` threads in blocks of `block`.
pub fn grid_1d(n: usize, block: u32) -> Result<LaunchConfig, Failure> {
    let blocks = u32::try_from(n.div_ceil(block as usize))
        .map_err(|_| Failure::Setup(format!("{n} threads need too many blocks")))?;
    Ok(LaunchConfig {
        grid_dim: (blocks.max(1), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// `n` as a CUDA C++ `unsigned int` argument.
pub fn u32_arg(n: usize) -> Result<Arg, Failure> {
    u32::try_from(n)
        .map(Arg::U32)
        .map_err(|_| Failure::Setup(format!("{n} does not fit the kernel's 32-bit size")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerances() {
        assert!(1.0f32.agrees(&1.0, Tolerance::Exact));
        assert!(!1.0f32.agrees(&1.000_001, Tolerance::Exact));
        assert!(f32::NAN.agrees(&f32::NAN, Tolerance::Exact));
        assert!(!f32::NAN.agrees(&1.0, Tolerance::Exact));
        assert!(!0.0f32.agrees(&-0.0, Tolerance::Exact));
        let close = Tolerance::Close {
            rel: 1e-5,
            abs: 1e-6,
        };
        assert!(100.0f32.agrees(&100.000_5, close));
        assert!(!100.0f32.agrees(&100.01, close));
        assert!(0.0f32.agrees(&5e-7, close));
        assert!(0.0f32.agrees(&-0.0, close));
        assert!((-f32::NAN).agrees(&f32::NAN, close));
        assert!(3u32.agrees(&3, close) && !3u32.agrees(&4, close));
    }

    #[test]
    fn checks_report_the_first_difference() {
        let ok = check("x", &[1.0f32, 2.0], &[1.0, 2.0], Tolerance::Exact);
        assert!(ok.passed, "{ok:?}");
        let bad = check("CUDA C++", &[1u32, 2, 3], &[1, 5, 4], Tolerance::Exact);
        assert!(!bad.passed);
        assert_eq!(
            bad.detail,
            "2 of 3 values differ; first at [1]: ours 2, CUDA C++ 5"
        );
        let short = check("x", &[1u32], &[1, 2], Tolerance::Exact);
        assert!(!short.passed && short.detail.contains("expected 2"));
    }

    #[test]
    fn launch_shapes() {
        let cfg = grid_1d(1000, 256).unwrap();
        assert_eq!(cfg.grid_dim, (4, 1, 1));
        assert_eq!(cfg.block_dim, (256, 1, 1));
        assert!(u32_arg(1 << 33).is_err());
        assert_eq!(count(1 << 25), "2^25");
        assert_eq!(count(1000), "1000");
    }
}
