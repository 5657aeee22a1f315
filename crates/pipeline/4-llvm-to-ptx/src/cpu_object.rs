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
    let args: [&OsStr; 6] = [
        level.as_ref(),
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
