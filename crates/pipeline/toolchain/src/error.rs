//! Typed errors of finding and running the tools ([`ToolError`]).

use std::path::PathBuf;

use thiserror::Error;

/// Why a tool could not be found or run, or refused its input.
#[derive(Debug, Error)]
pub enum ToolError {
    /// No `llc` of a usable version was found; `tried` lists every candidate and its fault.
    #[error(
        "no usable llc (LLVM 21 or newer with the NVPTX target) was found; set CUDA_OXIDE_LLC or \
         install the llvm-tools rustup component. Candidates:{}",
        format_tried(.tried)
    )]
    LlcNotFound { tried: Vec<String> },
    /// A tool too old for the IR this crate writes.
    #[error("{} is LLVM {version}; cuda-oxide needs LLVM 21 or newer", .path.display())]
    TooOld { path: PathBuf, version: String },
    /// A tool whose LLVM build lacks the NVPTX backend.
    #[error("{} (LLVM {version}) has no NVPTX target", .path.display())]
    NoNvptxTarget { path: PathBuf, version: String },
    /// `--version` output without a recognisable LLVM version.
    #[error("cannot read the LLVM version of {} from its --version output", .path.display())]
    UnknownVersion { path: PathBuf },
    /// A GPU target that is not of the form `sm_XX`.
    #[error("invalid GPU target `{0}`: expected `sm_<number>` such as `sm_90`")]
    InvalidTarget(String),
    /// A tool that could not be started.
    #[error("cannot run {}: {source}", .path.display())]
    Spawn {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A tool that ran and failed; `stderr` holds its diagnostics.
    #[error("{} failed ({status}):\n{stderr}", .tool.display())]
    ToolFailed {
        tool: PathBuf,
        status: String,
        stderr: String,
    },
    /// A tool that was killed by a signal (a crash, not a verdict on its input).
    #[error("{} crashed ({status}):\n{stderr}", .tool.display())]
    ToolCrashed {
        tool: PathBuf,
        status: String,
        stderr: String,
    },
    /// The module calls libdevice and none was found.
    #[error(
        "the kernels use math functions that come from NVIDIA's libdevice, and libdevice.10.bc \
         was not found. `cargo oxide` installs it with pip; otherwise run `python3 -m pip install \
         {pip_requirement}`, or set CUDA_OXIDE_LIBDEVICE to the path of libdevice.10.bc (CUDA \
         installs it in nvvm/libdevice/). Looked in:{}",
        format_paths(.searched)
    )]
    LibdeviceNotFound {
        searched: Vec<PathBuf>,
        pip_requirement: &'static str,
    },
    /// `CUDA_OXIDE_LIBDEVICE` names a file that does not exist.
    #[error("CUDA_OXIDE_LIBDEVICE is set, but `{}` is not a file", .0.display())]
    LibdeviceMissing(PathBuf),
    /// libdevice must be linked and there is no `llvm-link` beside `llc`.
    #[error(
        "linking libdevice needs `llvm-link` of the same LLVM version beside {}; install the \
         llvm-tools rustup component, or set CUDA_OXIDE_LLC to an llc that has one",
        .llc.display()
    )]
    NoLlvmLink { llc: PathBuf },
    /// Temporary-file trouble around the tool runs.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

fn format_paths(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return " nowhere (no Python site-packages, no CUDA installation)".to_string();
    }
    paths
        .iter()
        .map(|p| format!("\n  - {}", p.display()))
        .collect()
}

fn format_tried(tried: &[String]) -> String {
    if tried.is_empty() {
        return " none".to_string();
    }
    tried.iter().map(|t| format!("\n  - {t}")).collect()
}
