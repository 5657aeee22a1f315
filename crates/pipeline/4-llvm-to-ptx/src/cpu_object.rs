//! The CPU flavour's `.ll` to a host object file: libdevice linked in when the math calls it
//! (with its NVVM intrinsics defined for the host, [crate::nvvm_on_cpu]), then `opt` and
//! `llc` for the host triple (position independent, as the host program is linked).

use std::ffi::OsStr;
use std::fs;
use std::path::Path;

use gpu_toolchain::{LlvmTools, TempDir, ToolError, find_libdevice, find_llvm_tools, run};

use crate::libdevice::{link_libdevice, llvm_link, needs_libdevice};
use crate::nvvm_on_cpu::{NvvmOnCpuError, host_calls, host_definitions};

/// Why the CPU object could not be built.
#[derive(Debug, thiserror::Error)]
pub enum CpuObjectError {
    /// An LLVM tool, or finding one (or libdevice), failed.
    #[error(transparent)]
    Tool(#[from] ToolError),
    /// libdevice needs an NVVM intrinsic the CPU device does not model.
    #[error(transparent)]
    Nvvm(#[from] NvvmOnCpuError),
}

/// The object of `ll_text`, whose own `target triple` and `datalayout` name the host:
/// libdevice linked in if the module calls it (`__CUDA_ARCH` answered as `cuda_arch`, e.g.
/// `900`), every definition but `table_symbol` made internal, `opt -O<opt_level>`, then `llc
/// -filetype=obj -relocation-model=pic`.
pub fn compile_cpu_object(
    ll_text: &str,
    opt_level: u32,
    sysroot: Option<&Path>,
    cuda_arch: u32,
    table_symbol: &str,
) -> Result<Vec<u8>, CpuObjectError> {
    let tools = find_llvm_tools(sysroot)?;
    let module = if needs_libdevice(ll_text) {
        let linked = link_libdevice(ll_text, &find_libdevice()?, Some(&tools), sysroot)?;
        let renamed = host_calls(&linked)?;
        let definitions = host_definitions(&renamed, cuda_arch)?;
        link_definitions(&tools, &renamed, &definitions)?
    } else {
        ll_text.to_owned()
    };
    Ok(compile(&tools, &module, opt_level, table_symbol)?)
}

/// `module` with the functions of `definitions` linked in and made internal.
fn link_definitions(
    tools: &LlvmTools,
    module: &str,
    definitions: &str,
) -> Result<String, ToolError> {
    let dir = TempDir::new()?;
    let module = dir.file("module.ll", module)?;
    let definitions = dir.file("nvvm.ll", definitions)?;
    llvm_link(
        tools,
        &dir,
        &[
            module.as_os_str(),
            "--internalize".as_ref(),
            definitions.as_os_str(),
        ],
    )
}

/// `opt` (which first makes every definition but `exposed` internal) and `llc` of `ll_text`
/// to an object's bytes.
fn compile(
    tools: &LlvmTools,
    ll_text: &str,
    opt_level: u32,
    exposed: &str,
) -> Result<Vec<u8>, ToolError> {
    let level = format!("-O{}", opt_level.min(3));
    let passes = format!("-passes=internalize,default<O{}>", opt_level.min(3));
    let dir = TempDir::new()?;
    // A file rather than `-internalize-public-api-list`, which splits at commas: the table's
    // name is a sentence for the linker to show (`reserved_oxide_symbols`).
    let keep_file = dir.file("exposed.txt", &format!("{exposed}\n"))?;
    let keep = format!("-internalize-public-api-file={}", keep_file.display());
    let input = dir.file("cpu.ll", ll_text)?;
    let optimised = dir.path.join("cpu.opt.ll");
    let llc_input = match &tools.opt {
        Some(opt) => {
            run(
                opt,
                &[
                    passes.as_ref(),
                    keep.as_ref(),
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
