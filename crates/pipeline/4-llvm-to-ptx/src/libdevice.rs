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
//! Where libdevice is found: `gpu_toolchain::find_libdevice`.

use std::{ffi::OsStr, fs, path::Path};

use gpu_toolchain::{LlvmTools, TempDir, ToolError, find_libdevice, find_llvm_tools, run};

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

/// Links `libdevice` into `ll_text` with `llvm-link` (the one beside the `llc` of `tools`, or
/// of the toolchain in `sysroot` when `tools` is `None`): only the functions the module needs,
/// made internal. Returns the linked module as text.
pub fn link_libdevice(
    ll_text: &str,
    libdevice: &Path,
    tools: Option<&LlvmTools>,
    sysroot: Option<&Path>,
) -> Result<String, ToolError> {
    let tools = match tools {
        Some(tools) => tools.clone(),
        None => find_llvm_tools(sysroot)?,
    };
    let dir = TempDir::new()?;
    let input = dir.file("module.ll", ll_text)?;
    // Flags apply from the second input on: the module keeps everything, libdevice gives
    // what the module needs, internalised (its triple and data layout differ, which is only
    // worth a warning).
    llvm_link(
        &tools,
        &dir,
        &[
            "--only-needed".as_ref(),
            "--internalize".as_ref(),
            input.as_os_str(),
            libdevice.as_os_str(),
        ],
    )
}

/// `llvm-link --suppress-warnings -S <args>` (the one beside the `llc` of `tools`), writing
/// into `dir`: the linked module's text.
pub(crate) fn llvm_link(
    tools: &LlvmTools,
    dir: &TempDir,
    args: &[&OsStr],
) -> Result<String, ToolError> {
    let llvm_link = tools
        .llvm_link
        .as_ref()
        .ok_or_else(|| ToolError::NoLlvmLink {
            llc: tools.llc.clone(),
        })?;
    let linked = dir.path.join("linked.ll");
    let mut all: Vec<&OsStr> = vec!["--suppress-warnings".as_ref(), "-S".as_ref()];
    all.extend(args);
    all.extend(["-o".as_ref(), linked.as_os_str()]);
    run(llvm_link, &all)?;
    fs::read_to_string(&linked).map_err(|source| ToolError::Io {
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
) -> Result<String, ToolError> {
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
}
