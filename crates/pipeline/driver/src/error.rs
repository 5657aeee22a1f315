//! Why the pipeline stopped, by stage.

use std::path::PathBuf;

/// Why the pipeline stopped, by stage; each names the function or construct concerned.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// A collected function could not be translated (no MIR, or a construct the translator
    /// does not support).
    #[error(transparent)]
    Import(#[from] mir_importer::ImportError),
    /// The translated dialect-mir does not verify (a bug in the translator).
    #[error("internal error: the dialect-mir of the device code does not verify: {0}")]
    Verification(String),
    /// mem2reg failed (a bug).
    #[error("internal error: mem2reg failed on the device code: {0}")]
    Mem2Reg(String),
    /// Lowering to the LLVM dialect failed.
    #[error("lowering the device code to LLVM failed: {0}")]
    Lowering(String),
    /// Writing textual LLVM IR failed.
    #[error("exporting the device code as LLVM IR failed: {0}")]
    Export(String),
    /// The module calls libdevice, which could not be found or linked.
    #[error("{0}")]
    Libdevice(#[source] gpu_toolchain::ToolError),

    /// The GPU architecture is not `sm_XX`.
    #[error("`{0}` is not a GPU architecture: expected `sm_` and a number, such as `sm_90`")]
    Target(String),
    /// No architecture of the default list runs the kernels (`cargo oxide build --release`
    /// without `--arch`).
    #[error(
        "no architecture of the release default list runs these kernels: {0}; choose them with \
         `--arch` (e.g. `--arch sm_90a`)"
    )]
    NoDefaultTarget(String),
    /// `llc` (or `opt`) failed or was not found.
    #[error("generating PTX failed: {0}")]
    PtxGeneration(String),
    /// `opt` or `llc` failed on the CPU device's flavour.
    #[error("compiling the CPU device's flavour failed: {0}")]
    CpuFlavour(String),
    /// Writing an output or dump file failed.
    #[error("could not write `{}`: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl PipelineError {
    /// When the kernels need libdevice and none was found: the pip requirement that installs it.
    pub fn missing_libdevice(&self) -> Option<&'static str> {
        match self {
            PipelineError::Libdevice(gpu_toolchain::ToolError::LibdeviceNotFound {
                pip_requirement,
                ..
            }) => Some(pip_requirement),
            _ => None,
        }
    }
}
