//! The CUDA C++ side: each benchmark's `.cu` compiled by NVRTC at run time (loaded like the
//! driver, so the suite needs no nvcc), once with NVRTC's defaults and once with
//! `--fmad=false`, and loaded through the same driver path as our PTX.

use std::time::Instant;

use cuda_host::nvrtc::{CompiledPtx, Nvrtc, NvrtcError};
use cuda_host::{CudaContext, CudaStream, Kernel, KernelArgs, LaunchConfig, PtxModule};

/// Which compiler built a kernel.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Contender {
    /// cuda-oxide, from the Rust kernel.
    Ours,
    /// NVRTC with its defaults, as `nvcc -O3 -arch=sm_XX` (`--fmad=true`).
    Cuda,
    /// NVRTC with `--fmad=false`: no contraction of `a * b + c` into an fma, like Rust.
    CudaNoFma,
}

impl Contender {
    /// The name used in reports.
    pub fn label(self) -> &'static str {
        match self {
            Contender::Ours => "cuda-oxide",
            Contender::Cuda => "CUDA C++",
            Contender::CudaNoFma => "CUDA C++ --fmad=false",
        }
    }

    /// The name used in machine-readable output.
    pub fn key(self) -> &'static str {
        match self {
            Contender::Ours => "ours",
            Contender::Cuda => "cuda",
            Contender::CudaNoFma => "cuda_nofma",
        }
    }
}

/// A CUDA C++ kernel of the suite, compiled by NVRTC and loaded, with the other kernels its
/// `.cu` file defines (a benchmark of several steps launches each by name).
#[derive(Clone, Debug)]
pub struct CudaFn {
    /// The kernel in its module.
    pub kernel: Kernel,
    /// Which build it is ([`Contender::Cuda`] or [`Contender::CudaNoFma`]).
    pub contender: Contender,
    /// Every kernel of the module, by name.
    pub kernels: Vec<(&'static str, Kernel)>,
}

/// One argument of a CUDA C++ kernel, as its C signature takes it.
#[derive(Copy, Clone, Debug)]
pub enum Arg {
    /// A device pointer (`float*`, `const unsigned int*`, ...).
    Ptr(u64),
    /// `unsigned int`.
    U32(u32),
    /// `unsigned long long`.
    U64(u64),
    /// `float`.
    F32(f32),
}

impl CudaFn {
    /// Launches the kernel with `args` on `stream`.
    ///
    /// # Safety
    /// `args` must match the kernel's C signature in its `.cu` file, in order and in type, and
    /// every pointer must point to device memory large enough for what the kernel accesses.
    pub unsafe fn launch(
        &self,
        stream: &CudaStream,
        cfg: LaunchConfig,
        args: &[Arg],
    ) -> Result<(), cuda_host::Error> {
        let mut packed = KernelArgs::new(stream);
        for arg in args {
            match *arg {
                Arg::Ptr(p) | Arg::U64(p) => packed.arg(p),
                Arg::U32(v) => packed.arg(v),
                Arg::F32(v) => packed.arg(v),
            };
        }
        // SAFETY: the caller vouches for the arguments.
        unsafe { self.kernel.launch(stream, cfg, packed) }
    }

    /// Launches the module's kernel `name` (see [`CudaFn::launch`]).
    ///
    /// # Safety
    /// As for [`CudaFn::launch`], with `name`'s signature.
    pub unsafe fn launch_named(
        &self,
        name: &'static str,
        stream: &CudaStream,
        cfg: LaunchConfig,
        args: &[Arg],
    ) -> Result<(), cuda_host::Error> {
        let Some((_, kernel)) = self.kernels.iter().find(|(n, _)| *n == name) else {
            return Err(cuda_host::Error::MissingKernel {
                crate_name: "the CUDA C++ benchmark",
                kernel: name,
            });
        };
        let mut packed = KernelArgs::new(stream);
        for arg in args {
            match *arg {
                Arg::Ptr(p) | Arg::U64(p) => packed.arg(p),
                Arg::U32(v) => packed.arg(v),
                Arg::F32(v) => packed.arg(v),
            };
        }
        // SAFETY: the caller vouches for the arguments.
        unsafe { kernel.launch(stream, cfg, packed) }
    }
}

/// NVRTC and the architecture to compile for.
#[derive(Debug)]
pub struct CudaCompiler {
    nvrtc: Nvrtc,
    /// `compute_XX`: PTX for the device's architecture, JIT-compiled by the driver when
    /// loaded, exactly like ours.
    arch: String,
}

impl CudaCompiler {
    /// Loads NVRTC for `arch` (`compute_90`).
    pub fn new(arch: String) -> Result<Self, NvrtcError> {
        Ok(CudaCompiler {
            nvrtc: Nvrtc::load()?,
            arch,
        })
    }

    /// NVRTC's version and where it was loaded from, for the report.
    pub fn describe(&self) -> String {
        let (major, minor) = self.nvrtc.version();
        format!("NVRTC {major}.{minor} ({})", self.nvrtc.library())
    }

    /// NVRTC's version as `major.minor`.
    pub fn version(&self) -> String {
        let (major, minor) = self.nvrtc.version();
        format!("{major}.{minor}")
    }

    /// The architecture compiled for.
    pub fn arch(&self) -> &str {
        &self.arch
    }

    /// The options of one build: what `nvcc -O3 -arch=sm_XX` does for device code (NVRTC
    /// optimises device code by default; `-O3` is a host-compiler flag), with contraction on
    /// (`fmad`, nvcc's default) or off.
    pub fn options(&self, fmad: bool) -> Vec<String> {
        vec![
            format!("--gpu-architecture={}", self.arch),
            "--std=c++17".to_owned(),
            format!("--fmad={fmad}"),
        ]
    }

    /// Compiles `source` (the file `name`) to PTX.
    pub fn compile(&self, name: &str, source: &str, fmad: bool) -> Result<CompiledPtx, NvrtcError> {
        self.nvrtc
            .compile_ptx(&format!("{name}.cu"), source, &self.options(fmad))
    }
}

/// The CUDA C++ builds of one benchmark.
#[derive(Debug, Default)]
pub struct CudaBuild {
    /// The loaded kernels: the default build, then the `--fmad=false` one.
    pub fns: Vec<CudaFn>,
    /// NVRTC time, both builds.
    pub compile_ms: f64,
    /// Driver time to load (JIT-compile) both modules.
    pub load_ms: f64,
    /// Each build's PTX, for inspection.
    pub ptx: Vec<(Contender, String)>,
    /// What went wrong, per build.
    pub errors: Vec<String>,
}

impl CudaBuild {
    /// Compiles and loads both builds of the kernel `name` from `source`. A build that fails
    /// is left out (and its error kept): the benchmark then runs without it.
    pub fn new(
        compiler: &CudaCompiler,
        ctx: &CudaContext,
        name: &'static str,
        source: &'static str,
    ) -> Self {
        let mut build = CudaBuild::default();
        for (contender, fmad) in [(Contender::Cuda, true), (Contender::CudaNoFma, false)] {
            let started = Instant::now();
            let compiled = compiler.compile(name, source, fmad);
            build.compile_ms += started.elapsed().as_secs_f64() * 1e3;
            let compiled = match compiled {
                Ok(compiled) => compiled,
                Err(error) => {
                    build.errors.push(format!("{}: {error}", contender.label()));
                    continue;
                }
            };
            build
                .ptx
                .push((contender, compiled.ptx.to_string_lossy().into_owned()));
            let started = Instant::now();
            let loaded = PtxModule::load(ctx, name, &compiled.ptx).and_then(|m| {
                let kernels = kernel_names(source)
                    .map(|n| m.kernel(n).map(|k| (n, k)))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok((m.kernel(name)?, kernels))
            });
            build.load_ms += started.elapsed().as_secs_f64() * 1e3;
            match loaded {
                Ok((kernel, kernels)) => build.fns.push(CudaFn {
                    kernel,
                    contender,
                    kernels,
                }),
                Err(error) => build.errors.push(format!("{}: {error}", contender.label())),
            }
        }
        build
    }
}

/// The `extern "C"` kernels `source` defines.
pub fn kernel_names(source: &str) -> impl Iterator<Item = &str> {
    const START: &str = "extern \"C\" __global__ void ";
    source.lines().filter_map(|line| {
        let rest = line.trim_start().strip_prefix(START)?.trim_start();
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))?;
        rest[end..]
            .trim_start()
            .starts_with('(')
            .then_some(&rest[..end])
    })
}

/// Whether `source` defines the `extern "C"` kernel `name` (what the suite launches).
pub fn defines_kernel(source: &str, name: &str) -> bool {
    source.lines().any(|line| {
        let line = line.trim_start();
        line.starts_with("extern \"C\" __global__ void ")
            && line["extern \"C\" __global__ void ".len()..]
                .trim_start()
                .strip_prefix(name)
                .is_some_and(|rest| rest.trim_start().starts_with('('))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_are_found_by_their_extern_c_definition() {
        let source = "// x\nextern \"C\" __global__ void vecadd(const float* a) {}\n";
        assert!(defines_kernel(source, "vecadd"));
        assert!(!defines_kernel(source, "vec"));
        assert!(!defines_kernel("__global__ void vecadd() {}", "vecadd"));
        let two = "extern \"C\" __global__ void step_1(float* a) {}\nextern \"C\" __global__ void step_2 (float* a) {}\n";
        assert_eq!(kernel_names(two).collect::<Vec<_>>(), ["step_1", "step_2"]);
    }

    #[test]
    fn labels_and_keys() {
        assert_eq!(Contender::CudaNoFma.key(), "cuda_nofma");
        assert_eq!(Contender::Cuda.label(), "CUDA C++");
    }
}
