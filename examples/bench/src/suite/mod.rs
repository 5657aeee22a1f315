//! The benchmarks, each the host side of one kernel: inputs, launches, checks.

use bench_harness::{Bench, RunFn};

use crate::kernels::ours;

type Run = RunFn<ours::Module>;

/// One entry of the suite: its module (compiled with its feature), its name (the feature, the
/// `.cu` file and both kernels), what it computes, and what cuda-oxide must support for it.
macro_rules! bench {
    ($module:ident, $name:literal, $about:literal, $needs:literal) => {
        bench!($module::run, $name, $about, $needs)
    };
    ($module:ident :: $run:ident, $name:literal, $about:literal, $needs:literal) => {{
        #[cfg(feature = $name)]
        let run: Option<Run> = Some($module::$run);
        #[cfg(not(feature = $name))]
        let run: Option<Run> = None;
        Bench {
            name: $name,
            about: $about,
            needs: $needs,
            cuda_source: include_str!(concat!("../../cuda/", $name, ".cu")),
            hint: hint_of($name),
            run,
        }
    }};
}

#[cfg(feature = "collatz")]
mod collatz;
#[cfg(feature = "histogram")]
mod histogram;
#[cfg(feature = "iter_chain")]
mod iter_chain;
#[cfg(feature = "polybench-any")]
mod polybench;
#[cfg(feature = "reduce")]
mod reduce;
#[cfg(feature = "rowsum")]
mod rowsum;
#[cfg(any(feature = "saxpy", feature = "saxpy_fmad", feature = "saxpy_generic"))]
mod saxpy;
#[cfg(feature = "scan")]
mod scan;
#[cfg(any(feature = "sgemm", feature = "sgemm_fmad"))]
mod sgemm;
#[cfg(any(feature = "sgemm_naive", feature = "sgemm_naive_fmad"))]
mod sgemm_naive;
#[cfg(feature = "softmax")]
mod softmax;
#[cfg(feature = "stencil")]
mod stencil;
#[cfg(feature = "transpose")]
mod transpose;
#[cfg(feature = "vecadd")]
mod vecadd;

/// The benchmarks whose Rust kernel carries a hint a first spelling would not: the block
/// size declared with `#[block_dims]` (which bounds the thread indices and removes the tile
/// checks). The report gives its geometric means with and without these rows.
const HINTED: &[(&str, &str)] = &[
    ("reduce", "#[block_dims]"),
    ("histogram", "#[block_dims]"),
    ("scan", "#[block_dims]"),
    ("transpose", "#[block_dims]"),
    ("softmax", "#[block_dims]"),
    ("sgemm", "#[block_dims]"),
    ("sgemm_fmad", "#[block_dims]"),
    ("stencil", "#[block_dims]"),
];

fn hint_of(name: &str) -> &'static str {
    HINTED
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("", |(_, hint)| hint)
}

/// Every benchmark, in the order of the table.
pub fn all() -> Vec<Bench<ours::Module>> {
    vec![
        bench!(vecadd, "vecadd", "c = a + b, f32", ""),
        bench!(
            saxpy,
            "saxpy",
            "out = alpha * x + y, f32 (fma only in CUDA C++)",
            ""
        ),
        bench!(
            saxpy::run_fmad,
            "saxpy_fmad",
            "saxpy with #[kernel(fmad)]: one fma, as nvcc's default",
            "#[kernel(fmad)]"
        ),
        bench!(
            saxpy::run_generic,
            "saxpy_generic",
            "saxpy as a generic kernel, axpy::<f32> (a C++ template)",
            ""
        ),
        bench!(
            rowsum,
            "rowsum",
            "a loop per thread summing one matrix row",
            ""
        ),
        bench!(collatz, "collatz", "Collatz steps, u64 integer loop", ""),
        bench!(
            iter_chain,
            "iter_chain",
            "zip/map/filter/sum over a row per thread",
            "core's intrinsic ptr_offset_from_unsigned (slice iterators)"
        ),
        bench!(
            reduce,
            "reduce",
            "block sums: shared-memory tree, warp shuffles",
            "shared memory"
        ),
        bench!(
            histogram,
            "histogram",
            "256 bins: shared block bins, global atomics",
            "shared memory, atomics"
        ),
        bench!(
            scan,
            "scan",
            "inclusive prefix sum per 1024-thread block",
            "shared memory"
        ),
        bench!(
            transpose,
            "transpose",
            "32x33 shared tiles, 2-D launch",
            "shared memory"
        ),
        bench!(
            softmax,
            "softmax",
            "row softmax, a block per row",
            "shared memory, libdevice expf"
        ),
        bench!(
            sgemm,
            "sgemm",
            "16x16 shared tiles, one output per thread",
            "shared memory"
        ),
        bench!(
            sgemm::run_fmad,
            "sgemm_fmad",
            "sgemm with #[kernel(fmad)]: fma steps, as nvcc's default",
            "shared memory, #[kernel(fmad)]"
        ),
        bench!(
            stencil,
            "stencil",
            "7-point 1-D stencil with a shared halo",
            "shared memory"
        ),
        bench!(
            sgemm_naive,
            "sgemm_naive",
            "naive SGEMM as a user writes it first: a checked inner product per thread",
            ""
        ),
        bench!(
            sgemm_naive::run_fmad,
            "sgemm_naive_fmad",
            "sgemm_naive with #[kernel(fmad)]",
            "#[kernel(fmad)]"
        ),
        bench!(polybench::gemm, "pb_gemm", "PolyBench gemm, 512^3", ""),
        bench!(
            polybench::mm2,
            "pb_2mm",
            "PolyBench 2mm, two 2048^3 products",
            ""
        ),
        bench!(
            polybench::mm3,
            "pb_3mm",
            "PolyBench 3mm, three 512^3 products",
            ""
        ),
        bench!(polybench::atax, "pb_atax", "PolyBench atax, 4096^2", ""),
        bench!(polybench::bicg, "pb_bicg", "PolyBench bicg, 4096^2", ""),
        bench!(polybench::mvt, "pb_mvt", "PolyBench mvt, 4096^2", ""),
        bench!(
            polybench::gesummv,
            "pb_gesummv",
            "PolyBench gesummv, 4096^2",
            ""
        ),
        bench!(polybench::syrk, "pb_syrk", "PolyBench syrk, 1024^3", ""),
        bench!(polybench::syr2k, "pb_syr2k", "PolyBench syr2k, 2048^3", ""),
        bench!(
            polybench::conv2d,
            "pb_conv2d",
            "PolyBench 2-D convolution, 4096^2",
            ""
        ),
        bench!(
            polybench::conv3d,
            "pb_conv3d",
            "PolyBench 3-D convolution, 256^3",
            ""
        ),
        bench!(
            polybench::covariance,
            "pb_covariance",
            "PolyBench covariance, 2048^2",
            ""
        ),
        bench!(
            polybench::correlation,
            "pb_correlation",
            "PolyBench correlation, 2048^2",
            "f32::sqrt"
        ),
        bench!(
            polybench::fdtd2d,
            "pb_fdtd2d",
            "PolyBench fdtd-2d, 2048^2, 500 steps",
            ""
        ),
        bench!(
            polybench::gramschmidt,
            "pb_gramschmidt",
            "PolyBench gramschmidt, 512^2 (its standard 2048 takes seconds a run)",
            "f32::sqrt"
        ),
    ]
}
