//! The stages from collected functions to PTX, each with its own error.

use std::path::PathBuf;
use std::time::Duration;

use rustc_public::mir::mono::Instance;

/// A device function found by the codegen backend's collector.
#[derive(Clone, Debug)]
pub struct CollectedFunction {
    /// The monomorphised function.
    pub instance: Instance,
    /// Whether it is a GPU entry point (a `#[kernel]`).
    pub is_kernel: bool,
    /// Its symbol, as [`crate::naming::export_name`] gives it.
    pub export_name: String,
}

/// What the pipeline needs to know besides the functions.
#[derive(Clone, Debug, Default)]
pub struct PipelineConfig {
    /// The crate being compiled (names the output files).
    pub crate_name: String,
    /// The GPU architecture, `sm_XX`.
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
}

/// What a successful run produced.
#[derive(Clone, Debug)]
pub struct PipelineOutput {
    /// The PTX text.
    pub ptx: String,
    /// Where it was written.
    pub ptx_path: Option<PathBuf>,
    /// How long each stage took, in order.
    pub timings: Vec<(&'static str, Duration)>,
}

/// Why the pipeline stopped.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The translation stage does not exist yet.
    #[error(
        "cuda-oxide cannot compile device code yet: translating MIR to dialect-mir is not \
         implemented ({count} device function(s) collected, starting with `{first}`)"
    )]
    TranslationNotImplemented {
        /// How many functions were collected.
        count: usize,
        /// The export name of the first one.
        first: String,
    },
}

/// Runs every stage on `functions` and returns the PTX module.
pub fn run_pipeline(
    functions: &[CollectedFunction],
    _config: &PipelineConfig,
) -> Result<PipelineOutput, PipelineError> {
    Err(PipelineError::TranslationNotImplemented {
        count: functions.len(),
        first: functions
            .first()
            .map(|f| f.export_name.clone())
            .unwrap_or_default(),
    })
}
