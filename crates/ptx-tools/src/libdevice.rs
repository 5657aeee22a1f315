//! NVIDIA's libdevice (`libdevice.10.bc`): the bitcode library behind CUDA C++'s math
//! functions (`sinf`, `pow`, ...), linked into modules whose math needs it.
//!
//! The lowering calls libdevice (`__nv_sinf`, `__nv_pow`, ...) for the math functions that no
//! PTX instruction computes exactly. [link_libdevice] links the library into such a module with
//! the toolchain's `llvm-link`, keeping only the functions called and making them internal, so
//! that `opt` inlines them and drops the rest. libdevice picks its flavour through
//! `__nvvm_reflect`: [REFLECT_FLAGS] choose the IEEE one (no flush of subnormals to zero,
//! correctly rounded square roots), what `nvcc` does without `--use_fast_math`.
//!
//! libdevice is looked for, in order, at:
//! 1. `$CUDA_OXIDE_LIBDEVICE` (the file, or a folder holding it; used as is, with no fallback);
//! 2. `nvidia/<package>/nvvm/libdevice/` in Python's site-packages: PyPI's `nvidia-cuda-nvcc`
//!    ([PIP_REQUIREMENT], the package that also provides `ptxas`) puts it there;
//! 3. `nvvm/libdevice/` of a CUDA installation: `$CUDA_HOME`, `$CUDA_PATH`, `/usr/local/cuda`.

use std::{
    env, fs,
    path::{Path, PathBuf},
};

use crate::{
    error::PtxError,
    tools::{LlvmTools, TempDir, find_llvm_tools, in_nvidia_wheels, run},
};

/// The library's file name.
pub const LIBDEVICE_FILE: &str = "libdevice.10.bc";

/// The pip requirement that installs libdevice (pinned, as for `ptxas` in `scripts/ptxas.sh`).
pub const PIP_REQUIREMENT: &str = "nvidia-cuda-nvcc==13.5.37";

/// `opt`/`llc` options that set libdevice's `__nvvm_reflect` queries to their IEEE answers:
/// `__CUDA_FTZ` = 0 (the module flag `nvvm-reflect-ftz` = 0: subnormals are kept) and
/// `__CUDA_PREC_SQRT` = 1 (`sqrt.rn`, not `sqrt.approx`, inside `hypot` and the like).
/// `__CUDA_ARCH` comes from `-mcpu`.
pub const REFLECT_FLAGS: &[&str] = &[
    "--nvvm-reflect-add=__CUDA_FTZ=0",
    "--nvvm-reflect-add=__CUDA_PREC_SQRT=1",
];

/// Whether the module text calls libdevice (declares one of its `__nv_` functions).
pub fn needs_libdevice(ll_text: &str) -> bool {
    ll_text
        .lines()
        .any(|line| line.starts_with("declare ") && line.contains(" @__nv_"))
}

/// Where libdevice is (see the module docs for the order).
pub fn find_libdevice() -> Result<PathBuf, PtxError> {
    if let Some(configured) = env::var_os("CUDA_OXIDE_LIBDEVICE").filter(|v| !v.is_empty()) {
        let configured = PathBuf::from(configured);
        let file = if configured.is_dir() {
            configured.join(LIBDEVICE_FILE)
        } else {
            configured
        };
        return if file.is_file() {
            Ok(file)
        } else {
            Err(PtxError::LibdeviceMissing(file))
        };
    }
    let candidates = candidates();
    candidates
        .iter()
        .find(|path| path.is_file())
        .cloned()
        .ok_or(PtxError::LibdeviceNotFound {
            searched: candidates,
            pip_requirement: PIP_REQUIREMENT,
        })
}

/// The places searched after `$CUDA_OXIDE_LIBDEVICE`, in order.
fn candidates() -> Vec<PathBuf> {
    let mut candidates = in_nvidia_wheels(&["nvvm", "libdevice", LIBDEVICE_FILE]);
    let cuda_roots = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(env::var_os)
        .map(PathBuf::from)
        .chain([PathBuf::from("/usr/local/cuda")]);
    for root in cuda_roots {
        candidates.push(root.join("nvvm").join("libdevice").join(LIBDEVICE_FILE));
    }
    candidates
}

/// Links `libdevice` into `ll_text` with `llvm-link` (the one beside the `llc` of `tools`, or
/// of the toolchain in `sysroot` when `tools` is `None`): only the functions the module needs,
/// made internal. Returns the linked module as text.
pub fn link_libdevice(
    ll_text: &str,
    libdevice: &Path,
    tools: Option<&LlvmTools>,
    sysroot: Option<&Path>,
) -> Result<String, PtxError> {
    let tools = match tools {
        Some(tools) => tools.clone(),
        None => find_llvm_tools(sysroot)?,
    };
    let llvm_link = tools
        .llvm_link
        .ok_or(PtxError::NoLlvmLink { llc: tools.llc })?;
    let dir = TempDir::new()?;
    let input = dir.file("module.ll", ll_text)?;
    let linked = dir.path.join("module.linked.ll");
    // Flags apply from the second input on: the module keeps everything, libdevice gives
    // what the module needs, internalised (its triple and data layout differ, which is only
    // worth a warning).
    run(
        &llvm_link,
        &[
            "--suppress-warnings".as_ref(),
            "--only-needed".as_ref(),
            "--internalize".as_ref(),
            "-S".as_ref(),
            input.as_os_str(),
            libdevice.as_os_str(),
            "-o".as_ref(),
            linked.as_os_str(),
        ],
    )?;
    fs::read_to_string(&linked).map_err(|source| PtxError::Io {
        context: format!("reading {}", linked.display()),
        source,
    })
}

/// The module with libdevice linked in if it needs it (found with [find_libdevice]), else as
/// it is.
pub fn link_libdevice_if_needed(
    ll_text: &str,
    tools: Option<&LlvmTools>,
    sysroot: Option<&Path>,
) -> Result<String, PtxError> {
    if !needs_libdevice(ll_text) {
        return Ok(ll_text.to_owned());
    }
    link_libdevice(ll_text, &find_libdevice()?, tools, sysroot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_declared_nv_functions_need_libdevice() {
        assert!(needs_libdevice(
            "define void @k() {\n  ret void\n}\n\ndeclare float @__nv_sinf(float)\n"
        ));
        assert!(!needs_libdevice(
            "define internal float @__nv_sinf(float %a) {\n  ret float %a\n}\n"
        ));
        assert!(!needs_libdevice("declare float @llvm.sqrt.f32(float)\n"));
    }

    #[test]
    fn the_pinned_wheel_is_the_one_the_test_script_installs() {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/ptxas.sh");
        let text = fs::read_to_string(&script).unwrap();
        assert!(
            text.contains(&format!("\"{PIP_REQUIREMENT}\"")),
            "{} pins another nvidia-cuda-nvcc than {PIP_REQUIREMENT}",
            script.display()
        );
    }

    #[test]
    fn every_candidate_is_a_libdevice_file() {
        for path in candidates() {
            assert!(path.ends_with(Path::new("nvvm/libdevice").join(LIBDEVICE_FILE)));
        }
    }
}
