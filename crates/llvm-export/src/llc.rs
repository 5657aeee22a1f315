//! Compiling LLVM IR to PTX: `opt`, the check-hoisting passes between two `opt` runs
//! ([crate::loop_versioning], [crate::check_merging]), then `llc`, with the tools that
//! `ptx_tools` finds.

use std::{
    fs,
    path::{Path, PathBuf},
};

use ptx_tools::{LlvmTools, PtxError, TempDir, find_llvm_tools, run};

/// Options of [`compile_to_ptx`].
#[derive(Clone, Debug)]
pub struct PtxOptions {
    /// Optimisation level (0 to 3) for `opt` and `llc`.
    pub opt_level: u8,
    /// Run `opt -O<level>` before `llc` when `opt` was found.
    pub run_opt: bool,
    /// The tools to use; found with [`find_llvm_tools`] when `None`.
    pub tools: Option<LlvmTools>,
    /// Rust sysroot to search for `llvm-tools` (the caller's, e.g. from inside rustc).
    pub sysroot: Option<PathBuf>,
    /// The PTX ISA version to emit, times ten (`80` for 8.0), when the module needs a newer
    /// one than `llc` emits for the target by default; `None` keeps `llc`'s default.
    pub ptx_isa: Option<u32>,
    /// Hoist checks between two `opt` runs: version loops whose bounds checks a test before
    /// the loop can prove ([crate::loop_versioning]) and merge runs of checks
    /// ([crate::check_merging]).
    pub check_hoisting: bool,
}

impl Default for PtxOptions {
    fn default() -> Self {
        PtxOptions {
            opt_level: 3,
            run_opt: true,
            tools: None,
            sysroot: None,
            ptx_isa: None,
            check_hoisting: true,
        }
    }
}

/// What `opt` is told besides `-O<level> -mcpu=sm_XX` (the module's triple names the NVPTX
/// target):
///
/// - `-two-entry-phi-node-folding-threshold=8`: LLVM folds a two-sided `if` into `select`s only
///   when each side is at most 4 cheap instructions (a threshold tuned for CPUs, where a
///   predicted branch is almost free). On a GPU a branch that threads of a warp take
///   differently runs both sides one after the other, so speculating a few more instructions
///   is the better trade, as NVIDIA's compiler does: with 8, the Collatz step
///   `if n % 2 == 0 { n / 2 } else { 3 * n + 1 }` becomes a `selp` and the benchmark 15%
///   faster (docs/bench.md).
/// - `-unroll-runtime-epilog=false`: a loop unrolled by a factor its trip count need not be a
///   multiple of runs the leftover iterations before the unrolled loop instead of after it (the
///   iterations keep their order). The unrolled loop then counts down to zero, and no 64-bit
///   remainder count or offset stays live across it: ptxas keeps more of its loads in flight
///   (`iter_chain`, a zipped dot product per thread: 0.976 → 0.981 of CUDA C++ on the H100).
pub const OPT_NVPTX_TUNING: &[&str] = &[
    "-two-entry-phi-node-folding-threshold=8",
    "-unroll-runtime-epilog=false",
];

/// Compile the textual LLVM IR `ll_text` to PTX for `target` (`"sm_90"`): `opt -O3` when
/// available, then `llc -O3 -march=nvptx64 -mcpu=<target>` (with 128-bit float conversions
/// expanded). Returns the PTX text. A module with libdevice linked in (it calls
/// `__nvvm_reflect`) gets libdevice's IEEE settings ([ptx_tools::libdevice::REFLECT_FLAGS]).
pub fn compile_to_ptx(
    ll_text: &str,
    target: &str,
    options: &PtxOptions,
) -> Result<String, PtxError> {
    let valid_target = target
        .strip_prefix("sm_")
        .is_some_and(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()));
    if !valid_target {
        return Err(PtxError::InvalidTarget(target.to_string()));
    }
    let tools = match &options.tools {
        Some(tools) => tools.clone(),
        None => find_llvm_tools(options.sysroot.as_deref())?,
    };
    let level = format!("-O{}", options.opt_level.min(3));
    let cpu = format!("-mcpu={target}");
    let reflect: &[&str] = if ll_text.contains("@__nvvm_reflect(") {
        ptx_tools::libdevice::REFLECT_FLAGS
    } else {
        &[]
    };

    let dir = TempDir::new()?;
    let input = dir.file("module.ll", ll_text)?;
    let mut llc_input = input.clone();
    if options.run_opt
        && let Some(opt) = &tools.opt
    {
        let optimised = dir.path.join("module.opt.ll");
        let mut args: Vec<&std::ffi::OsStr> = vec![level.as_ref(), cpu.as_ref()];
        args.extend(OPT_NVPTX_TUNING.iter().map(std::ffi::OsStr::new));
        args.extend(reflect.iter().map(std::ffi::OsStr::new));
        let run_opt = |from: &Path, to: &Path| {
            let mut args = args.clone();
            args.extend([
                "-S".as_ref(),
                from.as_os_str(),
                "-o".as_ref(),
                to.as_os_str(),
            ]);
            run(opt, &args)
        };
        run_opt(&input, &optimised)?;
        llc_input = optimised;
        if options.check_hoisting && options.opt_level > 0 {
            let text = read(&llc_input)?;
            let (versioned, loops) = crate::loop_versioning::version_checked_loops(&text);
            let (versioned, merged) = crate::check_merging::merge_check_runs(&versioned);
            if loops + merged > 0 {
                let versioned_path = dir.file("module.versioned.ll", &versioned)?;
                let again = dir.path.join("module.opt2.ll");
                run_opt(&versioned_path, &again)?;
                llc_input = again;
            }
        }
    }
    let ptx = dir.path.join("module.ptx");
    let mut args: Vec<&std::ffi::OsStr> = vec![
        level.as_ref(),
        "-march=nvptx64".as_ref(),
        // Conversions between floats and integers wider than 64 bits (`i128 as f64`) have no
        // NVPTX instruction: this makes llc expand them into integer code.
        "-expand-fp-convert-bits=64".as_ref(),
        cpu.as_ref(),
    ];
    args.extend(reflect.iter().map(std::ffi::OsStr::new));
    let ptx_feature = options
        .ptx_isa
        .map(|version| format!("-mattr=+ptx{version}"));
    if let Some(feature) = &ptx_feature {
        args.push(feature.as_ref());
    }
    args.extend([llc_input.as_os_str(), "-o".as_ref(), ptx.as_os_str()]);
    run(&tools.llc, &args)?;
    read(&ptx)
}

fn read(path: &Path) -> Result<String, PtxError> {
    fs::read_to_string(path).map_err(|source| PtxError::Io {
        context: format!("reading {}", path.display()),
        source,
    })
}
