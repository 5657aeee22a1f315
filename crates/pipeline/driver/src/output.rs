//! What the pipeline leaves behind: the PTX file (and its copy), the stages' text dumps, the
//! cubin `ptxas` makes, and the output handed back to the codegen backend.

use std::path::{Path, PathBuf};

use crate::config::PipelineConfig;
use crate::error::PipelineError;
use crate::stage::Timings;

/// The cubin of a run ([PipelineConfig::cubin]): the image, or why there is none.
#[derive(Clone, Debug)]
pub enum Cubin {
    /// `ptxas` assembled the PTX.
    Built(Vec<u8>),
    /// Not asked for.
    NotAsked,
    /// No `ptxas` was found, or it failed: the reason, for a warning (the PTX still works,
    /// compiled by the driver at load).
    Unavailable(String),
}

/// The CPU device's flavour of a run ([PipelineConfig::cpu]): the object, or why there is none.
#[derive(Clone, Debug)]
pub enum CpuObject {
    /// The host object file with the kernels and their image table.
    Built(Vec<u8>),
    /// Not asked for.
    NotAsked,
    /// The flavour could not be compiled: why, for a warning (the GPU's code is unaffected;
    /// the CPU device then refuses to load the module, saying so).
    Failed(String),
}

/// What a successful run produced.
#[derive(Clone, Debug)]
pub struct PipelineOutput {
    /// The PTX text.
    pub ptx: String,
    /// Where it was written.
    pub ptx_path: Option<PathBuf>,
    /// The PTX assembled for the target architecture; for several, a set of one cubin each
    /// (`reserved_oxide_symbols::cubin_set`).
    pub cubin: Cubin,
    /// The architectures of a default list ([PipelineConfig::default_targets]) left out, each
    /// with what in the kernels it lacks.
    pub left_out: Vec<(String, String)>,
    /// The CPU device's flavour.
    pub cpu_object: CpuObject,
    /// How long each stage that ran took, in order.
    pub timings: Timings,
}

/// Assembles `ptx` for `target` with the `ptxas` [gpu_toolchain::find_ptxas] finds. A crash of
/// ptxas (death by a signal, which says nothing about the PTX) is retried once; what fails
/// for good is reported with the command that reproduces it on the PTX at `ptx_path`.
pub(crate) fn build_cubin(ptx: &str, target: &str, ptx_path: Option<&Path>) -> Cubin {
    let Some(ptxas) = gpu_toolchain::find_ptxas() else {
        return Cubin::Unavailable(
            "no `ptxas` found ($PTXAS, PATH, /usr/local/cuda/bin, or PyPI's nvidia-cuda-nvcc: \
             `pip install nvidia-cuda-nvcc`)"
                .into(),
        );
    };
    let mut result = ptx_tools::assemble_cubin(&ptxas, ptx, target);
    if matches!(result, Err(gpu_toolchain::ToolError::ToolCrashed { .. })) {
        result = ptx_tools::assemble_cubin(&ptxas, ptx, target);
    }
    let error = match result {
        Ok(image) => return Cubin::Built(image),
        Err(error) => error,
    };
    let what = match &error {
        gpu_toolchain::ToolError::ToolCrashed { status, stderr, .. } => {
            let stderr = stderr.trim();
            format!(
                "{} crashed twice ({status}){}{stderr}",
                ptxas.display(),
                if stderr.is_empty() { "" } else { ":\n" }
            )
        }
        _ => error.to_string(),
    };
    let reproduce = match ptx_path {
        Some(path) => format!(
            "; to reproduce: {} {} {} -o module.cubin",
            ptxas.display(),
            ptx_tools::ptxas_options(ptx, target).join(" "),
            path.display()
        ),
        None => String::new(),
    };
    Cubin::Unavailable(format!("{what}{reproduce}"))
}

/// Writes the PTX next to the host artifacts, and a copy into `CUDA_OXIDE_PTX_DIR`.
pub(crate) fn write_ptx(
    config: &PipelineConfig,
    ptx: &str,
) -> Result<Option<PathBuf>, PipelineError> {
    let write = |path: PathBuf| {
        std::fs::write(&path, ptx)
            .map(|()| path.clone())
            .map_err(|source| PipelineError::Io { path, source })
    };
    if let Some(dir) = &config.ptx_dir {
        std::fs::create_dir_all(dir).map_err(|source| PipelineError::Io {
            path: dir.clone(),
            source,
        })?;
        write(dir.join(format!("{}.ptx", config.crate_name)))?;
    }
    config.ptx_path.clone().map(write).transpose()
}

/// Writes the PTX of an architecture older than the newest of a build for several next to the
/// module's PTX, as `<stem>.<arch>.ptx` (the cubin set holds its cubin; the tests assemble it).
pub(crate) fn write_older_ptx(
    config: &PipelineConfig,
    arch: dialect_nvvm::Target,
    ptx: &str,
) -> Result<Option<PathBuf>, PipelineError> {
    let Some(ptx_path) = &config.ptx_path else {
        return Ok(None);
    };
    let path = ptx_path.with_extension(format!("{arch}.ptx"));
    std::fs::write(&path, ptx).map_err(|source| PipelineError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(Some(path))
}

/// Writes a stage's text next to the PTX, as `<stem>.<extension>`, when `enabled`.
pub(crate) fn dump(
    config: &PipelineConfig,
    enabled: bool,
    extension: &str,
    text: &str,
) -> Result<(), PipelineError> {
    if !enabled {
        return Ok(());
    }
    let Some(ptx_path) = &config.ptx_path else {
        return Ok(());
    };
    let path = ptx_path.with_extension(extension);
    std::fs::write(&path, text).map_err(|source| PipelineError::Io { path, source })
}
