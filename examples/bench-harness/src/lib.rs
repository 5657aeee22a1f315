//! The harness of cuda-oxide's benchmark suite (`examples/bench`).
//!
//! Each benchmark is one kernel written twice: in Rust, compiled by cuda-oxide into the
//! benchmark binary, and in CUDA C++ (`examples/bench/cuda/<name>.cu`), compiled on the GPU
//! machine at run time by NVRTC, once with NVRTC's defaults (like `nvcc -O3 -arch=sm_XX`, which
//! contracts `a * b + c` into fmas) and once with `--fmad=false` (like Rust). All three run in
//! one process on the same inputs; their results are cross-checked (and against the CPU where
//! that is cheap), then timed with CUDA events: warm-up, rounds interleaving the contenders,
//! the median. [`driver::main`] prints one table and writes it as JSON and CSV.

pub mod compare;
pub mod cuda;
pub mod driver;
pub mod report;

pub use compare::{
    Ctx, Failure, Options, Outcome, Spec, Tolerance, Value, Work, count, grid_1d, ptr, u32_arg,
};
pub use cuda::{Arg, Contender, CudaFn};
pub use example_support::Rng;

/// What runs one benchmark, given the harness; `M` is the module of Rust kernels.
pub type RunFn<M> = fn(&mut Ctx<'_, M>) -> Result<Outcome, Failure>;

/// One benchmark of the suite.
pub struct Bench<M> {
    /// Its name: also its cargo feature, its `.cu` file's stem and both kernels' name.
    pub name: &'static str,
    /// What it computes.
    pub about: &'static str,
    /// What cuda-oxide must support to compile its Rust kernel (empty: nothing new).
    pub needs: &'static str,
    /// What its Rust kernel says that a first spelling would not, for speed
    /// (`#[block_dims]`); empty for a kernel written as a user writes it first. The report
    /// gives the geometric means with and without such rows.
    pub hint: &'static str,
    /// The CUDA C++ counterpart's source.
    pub cuda_source: &'static str,
    /// The benchmark, when its Rust kernel is in this build (its feature is on).
    pub run: Option<RunFn<M>>,
}
