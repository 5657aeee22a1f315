//! Assembling PTX with `ptxas` (found by `gpu_toolchain::find_ptxas`): to check it, or to make
//! the cubin the host loads without JIT compilation.

use std::{
    fs,
    path::{Path, PathBuf},
};

use gpu_toolchain::{TempDir, ToolError, run};

/// Assembles `ptx` for `target` (`sm_90`) with `ptxas`; a rejection is a
/// [`ToolError::ToolFailed`] carrying ptxas's diagnostics.
pub fn assemble_with_ptxas(ptxas: &Path, ptx: &str, target: &str) -> Result<(), ToolError> {
    run_ptxas(ptxas, ptx, &[format!("-arch={target}")]).map(drop)
}

/// Runs `ptxas` with `options` on `ptx` (written to a temporary folder); the folder and the
/// path of the cubin in it.
fn run_ptxas(ptxas: &Path, ptx: &str, options: &[String]) -> Result<(TempDir, PathBuf), ToolError> {
    let dir = TempDir::new()?;
    let input = dir.file("module.ptx", ptx)?;
    let cubin = dir.path.join("module.cubin");
    let mut args: Vec<&std::ffi::OsStr> = options.iter().map(std::ffi::OsStr::new).collect();
    args.extend([input.as_os_str(), "-o".as_ref(), cubin.as_os_str()]);
    run(ptxas, &args)?;
    Ok((dir, cubin))
}

/// Whether `ptx` was generated with full debug information (`.target sm_XX, debug`): ptxas
/// must then compile it with `-g` (it refuses `-g` with optimisation: "Optimized debugging not
/// supported").
pub fn is_debug_ptx(ptx: &str) -> bool {
    ptx.lines()
        .map(str::trim)
        .find(|l| l.starts_with(".target"))
        .is_some_and(|l| l.split(',').skip(1).any(|part| part.trim() == "debug"))
}

/// Assembles `ptx` for `target` (`sm_90`) with `ptxas` and returns the cubin (an ELF image the
/// driver loads without compiling anything), or ptxas's diagnostics as a
/// [`ToolError::ToolFailed`]. PTX with full debug information ([is_debug_ptx]) is assembled
/// with `-g` (unoptimised, with its DWARF), other PTX with `-O3`.
pub fn assemble_cubin(ptxas: &Path, ptx: &str, target: &str) -> Result<Vec<u8>, ToolError> {
    let (_dir, cubin) = run_ptxas(ptxas, ptx, &ptxas_options(ptx, target))?;
    fs::read(&cubin).map_err(|source| ToolError::Io {
        context: format!("reading {}", cubin.display()),
        source,
    })
}

/// The options [assemble_cubin] gives ptxas for `ptx` (before the input and `-o`): the
/// architecture, and `-g` for PTX with full debug information, `-O3` otherwise.
pub fn ptxas_options(ptx: &str, target: &str) -> Vec<String> {
    vec![
        format!("-arch={target}"),
        if is_debug_ptx(ptx) { "-g" } else { "-O3" }.to_owned(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_ptx_is_recognised_by_its_target() {
        assert!(is_debug_ptx(".version 7.8\n.target sm_90, debug\n"));
        assert!(!is_debug_ptx(".version 7.8\n.target sm_90\n// debug\n"));
        assert!(!is_debug_ptx(".target sm_90a\n.section .debug_loc {}\n"));
    }
}
