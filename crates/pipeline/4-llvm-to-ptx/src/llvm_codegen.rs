//! LLVM IR text to PTX with LLVM's own tools: `opt` optimises the module, `llc` writes the
//! PTX. The two are separate calls so that a pipeline can run passes of its own between them
//! (the device pipeline hoists checks out of loops between two `opt` runs).

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use gpu_toolchain::{LlvmTools, TempDir, ToolError, find_llvm_tools, run};

/// Options of [`LlvmCodegen`].
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
}

impl Default for PtxOptions {
    fn default() -> Self {
        PtxOptions {
            opt_level: 3,
            run_opt: true,
            tools: None,
            sysroot: None,
            ptx_isa: None,
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

/// `opt` and `llc` set up for one module and one GPU architecture.
#[derive(Debug)]
pub struct LlvmCodegen {
    tools: LlvmTools,
    target: String,
    options: PtxOptions,
    /// libdevice's IEEE settings ([crate::libdevice::REFLECT_FLAGS]) when the module was
    /// linked with it (it calls `__nvvm_reflect`), for both tools.
    reflect: &'static [&'static str],
}

impl LlvmCodegen {
    /// Checks `target` (`"sm_90"`), finds the tools unless `options` gives them, and decides
    /// from the module's text whether libdevice's settings apply.
    pub fn new(ll_text: &str, target: &str, options: &PtxOptions) -> Result<Self, ToolError> {
        let valid_target = target
            .strip_prefix("sm_")
            .is_some_and(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()));
        if !valid_target {
            return Err(ToolError::InvalidTarget(target.to_string()));
        }
        let tools = match &options.tools {
            Some(tools) => tools.clone(),
            None => find_llvm_tools(options.sysroot.as_deref())?,
        };
        let reflect: &[&str] = if ll_text.contains("@__nvvm_reflect(") {
            crate::libdevice::REFLECT_FLAGS
        } else {
            &[]
        };
        Ok(LlvmCodegen {
            tools,
            target: target.to_string(),
            options: options.clone(),
            reflect,
        })
    }

    /// Whether [`LlvmCodegen::opt`] optimises (an `opt` was found and is asked for).
    pub fn optimises(&self) -> bool {
        self.options.run_opt && self.tools.opt.is_some()
    }

    /// `opt -O<level> -mcpu=<target>` with [`OPT_NVPTX_TUNING`]; the module unchanged when
    /// [`LlvmCodegen::optimises`] is false.
    pub fn opt(&self, ll_text: &str) -> Result<String, ToolError> {
        let Some(opt) = self.tools.opt.as_ref().filter(|_| self.options.run_opt) else {
            return Ok(ll_text.to_string());
        };
        let level = self.level();
        let cpu = self.cpu();
        let dir = TempDir::new()?;
        let input = dir.file("module.ll", ll_text)?;
        let output = dir.path.join("module.opt.ll");
        let mut args: Vec<&OsStr> = vec![level.as_ref(), cpu.as_ref()];
        args.extend(OPT_NVPTX_TUNING.iter().map(OsStr::new));
        args.extend(self.reflect.iter().map(OsStr::new));
        args.extend([
            "-S".as_ref(),
            input.as_os_str(),
            "-o".as_ref(),
            output.as_os_str(),
        ]);
        run(opt, &args)?;
        read(&output)
    }

    /// `llc -O<level> -march=nvptx64 -mcpu=<target>` (with 128-bit float conversions
    /// expanded, and the PTX ISA asked for): the PTX text.
    pub fn llc(&self, ll_text: &str) -> Result<String, ToolError> {
        let level = self.level();
        let cpu = self.cpu();
        let dir = TempDir::new()?;
        let input = dir.file("module.ll", ll_text)?;
        let ptx = dir.path.join("module.ptx");
        let mut args: Vec<&OsStr> = vec![
            level.as_ref(),
            "-march=nvptx64".as_ref(),
            // Conversions between floats and integers wider than 64 bits (`i128 as f64`) have
            // no NVPTX instruction: this makes llc expand them into integer code.
            "-expand-fp-convert-bits=64".as_ref(),
            cpu.as_ref(),
        ];
        args.extend(self.reflect.iter().map(OsStr::new));
        let ptx_feature = self
            .options
            .ptx_isa
            .map(|version| format!("-mattr=+ptx{version}"));
        if let Some(feature) = &ptx_feature {
            args.push(feature.as_ref());
        }
        args.extend([input.as_os_str(), "-o".as_ref(), ptx.as_os_str()]);
        run(&self.tools.llc, &args)?;
        read(&ptx)
    }

    fn level(&self) -> String {
        format!("-O{}", self.options.opt_level.min(3))
    }

    fn cpu(&self) -> String {
        format!("-mcpu={}", self.target)
    }
}

/// `opt` then `llc`: LLVM IR text to PTX for `target` (`"sm_90"`), with no pass in between.
pub fn compile_to_ptx(
    ll_text: &str,
    target: &str,
    options: &PtxOptions,
) -> Result<String, ToolError> {
    let codegen = LlvmCodegen::new(ll_text, target, options)?;
    codegen.llc(&codegen.opt(ll_text)?)
}

fn read(path: &Path) -> Result<String, ToolError> {
    fs::read_to_string(path).map_err(|source| ToolError::Io {
        context: format!("reading {}", path.display()),
        source,
    })
}
