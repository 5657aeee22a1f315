//! What the pipeline is told: the build's choices, from the codegen backend's environment.

use std::path::PathBuf;

/// The host the CPU device's flavour is compiled for (from rustc's target spec).
#[derive(Clone, Debug, Default)]
pub struct CpuTarget {
    /// The LLVM target triple (`x86_64-unknown-linux-gnu`).
    pub triple: String,
    /// The LLVM data layout of that target.
    pub data_layout: String,
    /// The image table's symbol, which the host code refers to (`reserved_oxide_symbols`).
    pub table_symbol: String,
    /// Instrument the memory accesses for the race detector (`llvm_export::CpuImage::race`).
    pub race: bool,
}

/// What the pipeline needs to know besides the functions.
#[derive(Clone, Debug, Default)]
pub struct PipelineConfig {
    /// The crate being compiled (names the output files).
    pub crate_name: String,
    /// The GPU architecture, `sm_XX`, or several, comma-separated (`sm_80,sm_86,sm_90`): one
    /// PTX and one cubin each; the newest's PTX is the module's.
    pub target: String,
    /// Where the `.ptx` goes (next to the host artifacts, named like them).
    pub ptx_path: Option<PathBuf>,
    /// A second directory that receives a copy of the `.ptx` (`CUDA_OXIDE_PTX_DIR`).
    pub ptx_dir: Option<PathBuf>,
    /// Write the dialect-mir text of each stage (`CUDA_OXIDE_DUMP_MIR`).
    pub dump_mir: bool,
    /// Write the `.ll` text (`CUDA_OXIDE_DUMP_LLVM`).
    pub dump_llvm: bool,
    /// Write rustc's own MIR of each function (`CUDA_OXIDE_SHOW_RUSTC_MIR`).
    pub show_rustc_mir: bool,
    /// The Rust sysroot, where the toolchain's `llc` lives.
    pub sysroot: Option<PathBuf>,
    /// Whether the crate is compiled with overflow checks (what `cfg!(overflow_checks)` means
    /// inside `core` code the kernels call).
    pub overflow_checks: bool,
    /// The source information the PTX carries (`CUDA_OXIDE_DEVICE_DEBUG`): Rust lines by
    /// default; `Full` also turns optimisation off.
    pub device_debug: llvm_export::DeviceDebug,
    /// The compiler's working directory, which the relative source paths of spans are
    /// relative to (the debug metadata's compilation directory).
    pub comp_dir: Option<PathBuf>,
    /// Contract float multiplications and additions into fused multiply-adds in every
    /// function (`CUDA_OXIDE_FMAD`, `cargo oxide build --fmad`); without it only kernels marked
    /// `#[kernel(fmad)]` are.
    pub fmad: bool,
    /// `target` is a default list, not the user's (`cargo oxide build --release` without
    /// `--arch`): architectures that the kernels need more than (an intrinsic, a 128-bit
    /// atomic, a cluster) are left out ([crate::PipelineOutput::left_out]) instead of refused.
    pub default_targets: bool,
    /// Also assemble the PTX into a cubin for `target` with `ptxas` (when one is found), so
    /// that the host needs no JIT compilation at load on a GPU of that architecture.
    pub cubin: bool,
    /// Compile panic paths so that a panic records its message, location and thread for the
    /// host (`CUDA_OXIDE_PANIC_MESSAGES`; on by default in builds with debug assertions).
    /// Without it, a panic is a bare trap and its message is never built.
    pub panic_messages: bool,
    /// Whether a failed check (bounds, overflow, division) records its message too; without,
    /// it is a bare trap (the release default: explicit panics keep their message and
    /// location, checks cost nothing on the hot path).
    pub check_messages: bool,
    /// Whether device code formats for real (it builds a `core::fmt::Formatter`): formatting
    /// methods are then compiled functions, whose descriptors a panic message finds in a table,
    /// rather than descriptors ([mir_importer::translator::fmt_descriptor]).
    pub device_formats: bool,
    /// Make a failed check that guards a global load or store fault at that access instead of
    /// branching to a trap ([ptx_tools::faulting_checks]; `CUDA_OXIDE_FAULTING_CHECKS`, on by
    /// default). Only bare traps are concerned: with panic messages it changes nothing.
    pub faulting_checks: bool,
    /// Hoist checks between two `opt` runs: loops whose bounds checks a test before the loop
    /// can prove get a check-free copy ([llvm_to_ptx::loop_versioning]), runs of checks branch
    /// once ([llvm_to_ptx::check_merging]) (`CUDA_OXIDE_CHECK_HOISTING`, on by default).
    pub check_hoisting: bool,
    /// Also compile the CPU device's flavour of the kernels for this host (`docs/cpu.md`).
    pub cpu: Option<CpuTarget>,
}
