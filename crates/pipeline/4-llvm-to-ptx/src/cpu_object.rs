//! The CPU flavour's `.ll` to a host object file: `opt` and `llc` for the host triple
//! (position independent, as the host program is linked), no pass of ours between them.

use std::ffi::OsStr;
use std::fs;
use std::path::Path;

use gpu_toolchain::{TempDir, ToolError, find_llvm_tools, run};

/// `opt -O<level>` then `llc -filetype=obj -relocation-model=pic` on `ll_text`, whose own
/// `target triple` and `datalayout` name the host: the object's bytes.
pub fn compile_cpu_object(
    ll_text: &str,
    opt_level: u32,
    sysroot: Option<&Path>,
) -> Result<Vec<u8>, ToolError> {
    let tools = find_llvm_tools(sysroot)?;
    let level = format!("-O{}", opt_level.min(3));
    let dir = TempDir::new()?;
    let input = dir.file("cpu.ll", ll_text)?;
    let optimised = dir.path.join("cpu.opt.ll");
    let llc_input = match &tools.opt {
        Some(opt) => {
            run(
                opt,
                &[
                    level.as_ref(),
                    "-S".as_ref(),
                    input.as_os_str(),
                    "-o".as_ref(),
                    optimised.as_os_str(),
                ],
            )?;
            optimised
        }
        None => input,
    };
    let object = dir.path.join("cpu.o");
    // 128-bit atomics (`AtomicU128` in device code) as `cmpxchg16b`, which every x86-64 CPU
    // that runs CUDA's host code has, rather than calls into a libatomic the program lacks.
    let features = if ll_text.contains("target triple = \"x86_64") {
        "-mattr=+cx16"
    } else {
        "-mattr="
    };
    let args: [&OsStr; 7] = [
        level.as_ref(),
        features.as_ref(),
        "-filetype=obj".as_ref(),
        "-relocation-model=pic".as_ref(),
        llc_input.as_os_str(),
        "-o".as_ref(),
        object.as_os_str(),
    ];
    run(&tools.llc, &args)?;
    fs::read(&object).map_err(|source| ToolError::Io {
        context: format!("reading {}", object.display()),
        source,
    })
}
