//! The stages from collected functions to PTX, each with its own error.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use pliron::builtin::op_interfaces::SingleBlockRegionInterface;
use pliron::builtin::ops::ModuleOp;
use pliron::context::Context;
use pliron::identifier::Identifier;
use pliron::op::Op;
use pliron::printable::Printable;
use rustc_public::mir::mono::Instance;

use crate::translator;
use crate::translator::body::FunctionContext;
use crate::translator::{GlobalRegistry, TranslationError, TypeTranslator};

/// A device function found by the codegen backend's collector.
#[derive(Clone, Debug)]
pub struct CollectedFunction {
    /// The monomorphised function.
    pub instance: Instance,
    /// Whether it is a GPU entry point (a `#[kernel]`).
    pub is_kernel: bool,
    /// Its symbol, as [`crate::naming::export_name`] gives it.
    pub export_name: String,
    /// Whether it exists only for the CPU (a foreign function, or one that needs CPU features
    /// beyond the host target's): its body is a trap, and a foreign one is not emitted at all
    /// (calls to it trap where they are).
    pub host_only: bool,
}

/// What the pipeline needs to know besides the functions.
#[derive(Clone, Debug, Default)]
pub struct PipelineConfig {
    /// The crate being compiled (names the output files).
    pub crate_name: String,
    /// The GPU architecture, `sm_XX`.
    pub target: String,
    /// Where the `.ptx` goes (next to the host artifacts, named like them).
    pub ptx_path: Option<PathBuf>,
    /// A second directory that receives a copy of the `.ptx` (`CUDA_OXIDE_PTX_DIR`).
    pub ptx_dir: Option<PathBuf>,
    /// Write the dialect-mir text of each stage (`CUDA_OXIDE_DUMP_MIR`).
    pub dump_mir: bool,
    /// Write the `.ll` text (`CUDA_OXIDE_DUMP_LLVM`).
    pub dump_llvm: bool,
    /// Write rustc's own MIR of each function (`CUDA_OXIDE_SHOW_RUSTC_MIR`).
    pub show_rustc_mir: bool,
    /// The Rust sysroot, where the toolchain's `llc` lives.
    pub sysroot: Option<PathBuf>,
    /// Whether the crate is compiled with overflow checks (what `cfg!(overflow_checks)` means
    /// inside `core` code the kernels call).
    pub overflow_checks: bool,
    /// The source information the PTX carries (`CUDA_OXIDE_DEVICE_DEBUG`): Rust lines by
    /// default; `Full` also turns optimisation off.
    pub device_debug: llvm_export::DeviceDebug,
    /// The compiler's working directory, which the relative source paths of spans are
    /// relative to (the debug metadata's compilation directory).
    pub comp_dir: Option<PathBuf>,
    /// Contract float multiplications and additions into fused multiply-adds in every
    /// function (`CUDA_OXIDE_FMAD`, `cargo oxide build --fmad`); without it only kernels marked
    /// `#[kernel(fmad)]` are.
    pub fmad: bool,
    /// Also assemble the PTX into a cubin for `target` with `ptxas` (when one is found), so
    /// that the host needs no JIT compilation at load on a GPU of that architecture.
    pub cubin: bool,
    /// Compile panic paths so that a panic records its message, location and thread for the
    /// host (`CUDA_OXIDE_PANIC_MESSAGES`; on by default in builds with debug assertions).
    /// Without it, a panic is a bare trap and its message is never built.
    pub panic_messages: bool,
    /// Whether a failed check (bounds, overflow, division) records its message too; without,
    /// it is a bare trap (the release default: explicit panics keep their message and
    /// location, checks cost nothing on the hot path).
    pub check_messages: bool,
    /// Whether device code formats for real (it builds a `core::fmt::Formatter`): formatting
    /// methods are then compiled functions, whose descriptors a panic message finds in a table,
    /// rather than descriptors ([translator::fmt_descriptor]).
    pub device_formats: bool,
    /// Make a failed check that guards a global load or store fault at that access instead of
    /// branching to a trap ([ptx_tools::faulting_checks]; `CUDA_OXIDE_FAULTING_CHECKS`, on by
    /// default). Only bare traps are concerned: with panic messages it changes nothing.
    pub faulting_checks: bool,
    /// Hoist checks between two `opt` runs: loops whose bounds checks a test before the loop
    /// can prove get a check-free copy ([llvm_export::loop_versioning]), runs of checks branch
    /// once ([llvm_export::check_merging]) (`CUDA_OXIDE_CHECK_HOISTING`, on by default).
    pub check_hoisting: bool,
}

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

/// What a successful run produced.
#[derive(Clone, Debug)]
pub struct PipelineOutput {
    /// The PTX text.
    pub ptx: String,
    /// Where it was written.
    pub ptx_path: Option<PathBuf>,
    /// The PTX assembled for the target architecture.
    pub cubin: Cubin,
    /// How long each stage took, in order.
    pub timings: Vec<(&'static str, Duration)>,
}

/// Why the pipeline stopped, by stage; each names the function or construct concerned.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// rustc has no MIR for a collected function.
    #[error(
        "no MIR is available for `{function}`; it cannot be compiled for the GPU (is it an \
         `extern` function, or was its crate built without `-Zalways-encode-mir`?)"
    )]
    NoBody {
        /// The function.
        function: String,
    },
    /// A construct the translator does not support.
    #[error("cannot compile `{function}` for the GPU: {source}")]
    Translation {
        /// The function being translated.
        function: String,
        /// Its position in the functions given to [run_pipeline].
        index: usize,
        /// What went wrong, and where.
        #[source]
        source: TranslationError,
    },
    /// The translated dialect-mir does not verify (a bug in the translator).
    #[error("internal error: the dialect-mir of the device code does not verify: {0}")]
    Verification(String),
    /// mem2reg failed (a bug).
    #[error("internal error: mem2reg failed on the device code: {0}")]
    Mem2Reg(String),
    /// Lowering to the LLVM dialect failed.
    #[error("lowering the device code to LLVM failed: {0}")]
    Lowering(String),
    /// Writing textual LLVM IR failed.
    #[error("exporting the device code as LLVM IR failed: {0}")]
    Export(String),
    /// The module calls libdevice, which could not be found or linked.
    #[error("{0}")]
    Libdevice(#[source] ptx_tools::PtxError),

    /// The GPU architecture is not `sm_XX`.
    #[error("`{0}` is not a GPU architecture: expected `sm_` and a number, such as `sm_90`")]
    Target(String),
    /// `llc` (or `opt`) failed or was not found.
    #[error("generating PTX failed: {0}")]
    PtxGeneration(String),
    /// Writing an output or dump file failed.
    #[error("could not write `{}`: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

impl PipelineError {
    /// When the kernels need libdevice and none was found: the pip requirement that installs it.
    pub fn missing_libdevice(&self) -> Option<&'static str> {
        match self {
            PipelineError::Libdevice(ptx_tools::PtxError::LibdeviceNotFound {
                pip_requirement,
                ..
            }) => Some(pip_requirement),
            _ => None,
        }
    }
}

/// Runs every stage on `functions` and returns the PTX module: translation, verification,
/// mem2reg, lowering, export, linking libdevice when the math calls it, `opt` and `llc`.
pub fn run_pipeline(
    functions: &[CollectedFunction],
    config: &PipelineConfig,
) -> Result<PipelineOutput, PipelineError> {
    let target = dialect_nvvm::Target::parse(&config.target)
        .ok_or_else(|| PipelineError::Target(config.target.clone()))?;
    let mut timings = Vec::new();
    let mut ctx = Context::new();
    dialect_mir::register(&mut ctx);
    dialect_nvvm::register(&mut ctx);

    let started = Instant::now();
    let module = translate_module(&mut ctx, functions, config, target)?;
    timings.push(("translate", started.elapsed()));
    dump(
        config,
        config.dump_mir,
        "mir",
        &print_op(&ctx, module.get_operation()),
    )?;

    let started = Instant::now();
    crate::verify::verify_all(&ctx, module.get_operation())
        .map_err(|failure| PipelineError::Verification(failure.message))?;
    timings.push(("verify", started.elapsed()));

    let started = Instant::now();
    crate::mem2reg::mem2reg(&mut ctx, module.get_operation())
        .map_err(|e| PipelineError::Mem2Reg(e.disp(&ctx).to_string()))?;
    timings.push(("mem2reg", started.elapsed()));
    dump(
        config,
        config.dump_mir,
        "mem2reg.mir",
        &print_op(&ctx, module.get_operation()),
    )?;

    // Ask `llc` for a newer PTX ISA than the target's oldest only when an intrinsic or a
    // 128-bit atomic needs it.
    let atomics_128 = uses_128_bit_atomics(&ctx, module.get_operation())
        .then_some(dialect_mir::ops::PTX_ISA_OF_128_BIT_ATOMICS);
    let ptx_isa = dialect_nvvm::required_ptx_isa(&ctx, module.get_operation())
        .max(atomics_128)
        .filter(|&required| required > target.min_ptx_isa());

    let started = Instant::now();
    mir_lower::lower_mir_to_llvm(&mut ctx, module)
        .map_err(|e| PipelineError::Lowering(e.to_string()))?;
    crate::verify::verify_all(&ctx, module.get_operation()).map_err(|failure| {
        PipelineError::Lowering(format!(
            "internal error: the lowered module does not verify: {}",
            failure.message
        ))
    })?;
    timings.push(("lower", started.elapsed()));

    let started = Instant::now();
    let export_options = llvm_export::ExportOptions {
        debug: config.device_debug,
        comp_dir: config
            .comp_dir
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default(),
        ..Default::default()
    };
    let ll = llvm_export::export_module_with(&ctx, module, &export_options)
        .map_err(|e| PipelineError::Export(e.to_string()))?;
    timings.push(("export", started.elapsed()));
    dump(config, config.dump_llvm, "ll", &ll)?;

    let ll = if ptx_tools::needs_libdevice(&ll) {
        let started = Instant::now();
        let linked = ptx_tools::find_libdevice()
            .and_then(|libdevice| {
                ptx_tools::link_libdevice(&ll, &libdevice, None, config.sysroot.as_deref())
            })
            .map_err(PipelineError::Libdevice)?;
        timings.push(("link", started.elapsed()));
        dump(config, config.dump_llvm, "linked.ll", &linked)?;
        linked
    } else {
        ll
    };

    let started = Instant::now();
    let options = llvm_export::PtxOptions {
        sysroot: config.sysroot.clone(),
        ptx_isa,
        check_hoisting: config.check_hoisting,
        // The debug tier keeps every line and variable where the source has it.
        opt_level: if config.device_debug == llvm_export::DeviceDebug::Full {
            0
        } else {
            3
        },
        ..Default::default()
    };
    let ptx = llvm_export::compile_to_ptx(&ll, &config.target, &options)
        .map_err(|e| PipelineError::PtxGeneration(e.to_string()))?;
    timings.push(("llc", started.elapsed()));

    // The passes over `llc`'s text (`ptx_tools`), timed as one stage.
    let started = Instant::now();
    // Line info must not change the machine code: the labels `llc` adds for it would.
    let ptx = if config.device_debug == llvm_export::DeviceDebug::Lines {
        ptx_tools::remove_unreferenced_debug_labels(&ptx)
    } else {
        ptx
    };
    let ptx = if config.faulting_checks {
        ptx_tools::fault_at_guarded_accesses(&ptx).0
    } else {
        ptx
    };
    let ptx = ptx_tools::fold_declared_block_dims(&ptx).0;
    timings.push(("ptx-passes", started.elapsed()));

    let ptx_path = write_ptx(config, &ptx)?;
    let cubin = if config.cubin {
        let started = Instant::now();
        let cubin = build_cubin(&ptx, &config.target, ptx_path.as_deref());
        timings.push(("ptxas", started.elapsed()));
        cubin
    } else {
        Cubin::NotAsked
    };

    Ok(PipelineOutput {
        ptx,
        ptx_path,
        cubin,
        timings,
    })
}

/// Assembles `ptx` for `target` with the `ptxas` [ptx_tools::find_ptxas] finds. A crash of
/// ptxas (death by a signal, which says nothing about the PTX) is retried once; what fails
/// for good is reported with the command that reproduces it on the PTX at `ptx_path`.
fn build_cubin(ptx: &str, target: &str, ptx_path: Option<&std::path::Path>) -> Cubin {
    let Some(ptxas) = ptx_tools::find_ptxas() else {
        return Cubin::Unavailable(
            "no `ptxas` found ($PTXAS, PATH, /usr/local/cuda/bin, or PyPI's nvidia-cuda-nvcc: \
             `pip install nvidia-cuda-nvcc`)"
                .into(),
        );
    };
    let mut result = ptx_tools::assemble_cubin(&ptxas, ptx, target);
    if matches!(result, Err(ptx_tools::PtxError::ToolCrashed { .. })) {
        result = ptx_tools::assemble_cubin(&ptxas, ptx, target);
    }
    let error = match result {
        Ok(image) => return Cubin::Built(image),
        Err(error) => error,
    };
    let what = match &error {
        ptx_tools::PtxError::ToolCrashed { status, stderr, .. } => {
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
fn write_ptx(config: &PipelineConfig, ptx: &str) -> Result<Option<PathBuf>, PipelineError> {
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

/// Translates every function into one `builtin.module`.
fn translate_module(
    ctx: &mut Context,
    functions: &[CollectedFunction],
    config: &PipelineConfig,
    target: dialect_nvvm::Target,
) -> Result<ModuleOp, PipelineError> {
    let name = Identifier::try_from(sanitize(&config.crate_name))
        .unwrap_or_else(|_| Identifier::try_from("device_module").expect("a valid identifier"));
    let module = ModuleOp::new(ctx, name);
    let module_block = module.get_body(ctx, 0);
    let mut types = TypeTranslator::default();
    let mut globals = GlobalRegistry::new(module_block, target);
    globals.set_formatting(config.panic_messages, config.device_formats);
    let mut rustc_mir = String::new();
    for (index, function) in functions.iter().enumerate() {
        if function.host_only && function.instance.is_foreign_item() {
            continue;
        }
        let Some(body) = function.instance.body() else {
            return Err(PipelineError::NoBody {
                function: function.instance.name(),
            });
        };
        if config.show_rustc_mir {
            let mut text = Vec::new();
            let _ = function.instance.emit_mir(&mut text);
            rustc_mir.push_str(&String::from_utf8_lossy(&text));
            rustc_mir.push('\n');
        }
        let fcx = FunctionContext {
            types: &mut types,
            globals: &mut globals,
            overflow_checks: config.overflow_checks,
            target,
            locations: config.device_debug.enabled(),
            variables: config.device_debug == llvm_export::DeviceDebug::Full,
            fmad: config.fmad,
            panic_messages: config.panic_messages,
            check_messages: config.check_messages,
        };
        if let Err(source) = translator::translate_function(ctx, module_block, function, &body, fcx)
        {
            // The MIR up to the failing function helps to see why it failed.
            dump(config, config.show_rustc_mir, "rustc.mir", &rustc_mir)?;
            return Err(PipelineError::Translation {
                function: reserved_oxide_symbols::strip_all_reserved(&function.instance.name()),
                index,
                source,
            });
        }
    }
    dump(config, config.show_rustc_mir, "rustc.mir", &rustc_mir)?;
    globals.finish(ctx);
    Ok(module)
}

fn print_op(ctx: &Context, op: pliron::context::Ptr<pliron::operation::Operation>) -> String {
    op.deref(ctx).disp(ctx).to_string()
}

/// Writes a stage's text next to the PTX, as `<stem>.<extension>`, when `enabled`.
fn dump(
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

/// A module name from a crate name.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Whether the module holds a 128-bit atomic (`atom.cas.b128`, PTX ISA 8.3).
fn uses_128_bit_atomics(
    ctx: &Context,
    module: pliron::context::Ptr<pliron::operation::Operation>,
) -> bool {
    use pliron::graph::walkers::{IRNode, WalkConfig, uninterruptible::immutable::walk_op};
    let mut found = false;
    walk_op(
        ctx,
        &mut found,
        &WalkConfig::default(),
        module,
        |ctx, found: &mut bool, node| {
            if let IRNode::Operation(op) = node
                && dialect_mir::ops::is_128_bit_atomic(ctx, op)
            {
                *found = true;
            }
        },
    );
    found
}
