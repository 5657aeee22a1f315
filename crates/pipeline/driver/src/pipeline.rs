//! [`run_pipeline`]: every stage of [`Stage::ALL`], in order, on the collected functions.

use pliron::context::{Context, Ptr};
use pliron::op::Op;
use pliron::operation::Operation;
use pliron::printable::Printable;

use dialect_mir::passes::{mem2reg, verify};
use llvm_export::DeviceDebug;
use llvm_to_ptx::{LlvmCodegen, PtxOptions};
use mir_importer::{CollectedFunction, ImportOptions};

use crate::config::{CpuTarget, PipelineConfig};
use crate::error::PipelineError;
use crate::output::{
    CpuObject, Cubin, PipelineOutput, build_cubin, dump, write_older_ptx, write_ptx,
};
use crate::stage::{Stage, Timings};

/// Runs every stage on `functions` and returns the PTX module (and its cubin when asked for).
pub fn run_pipeline(
    functions: &[CollectedFunction],
    config: &PipelineConfig,
) -> Result<PipelineOutput, PipelineError> {
    let mut targets = parse_targets(&config.target)?;
    // Translated once, then compiled for each architecture. For a list the user gave, the
    // oldest's checks are the strictest: an intrinsic newer than any architecture of the list
    // is refused, naming it. A default list is translated for its newest, and the
    // architectures the kernels need more than are left out afterwards.
    let target = if config.default_targets {
        targets[targets.len() - 1]
    } else {
        targets[0]
    };
    let mut timings = Timings::default();
    let mut ctx = Context::new();
    dialect_mir::register(&mut ctx);
    dialect_nvvm::register(&mut ctx);

    let import_options = import_options(config, target);
    let mut rustc_mir = config.show_rustc_mir.then(String::new);
    let imported = timings.time(Stage::Translate, || {
        mir_importer::import_module(&mut ctx, functions, &import_options, rustc_mir.as_mut())
    });
    // Written either way: the MIR up to a failing function helps to see why it failed.
    dump(
        config,
        config.show_rustc_mir,
        "rustc.mir",
        rustc_mir.as_deref().unwrap_or(""),
    )?;
    let module = imported?;
    let root = module.get_operation();
    dump(config, config.dump_mir, "mir", &print_op(&ctx, root))?;

    timings.time(Stage::Verify, || {
        verify::verify_all(&ctx, root)
            .map_err(|failure| PipelineError::Verification(failure.message))
    })?;

    timings.time(Stage::Mem2Reg, || {
        mem2reg::mem2reg(&mut ctx, root)
            .map_err(|e| PipelineError::Mem2Reg(e.disp(&ctx).to_string()))
    })?;
    dump(
        config,
        config.dump_mir,
        "mem2reg.mir",
        &print_op(&ctx, root),
    )?;

    // Ask `llc` for a newer PTX ISA than the target's oldest only when an intrinsic or a
    // 128-bit atomic needs it (known in dialect-mir, gone once lowered).
    let atomics_128 =
        uses_128_bit_atomics(&ctx, root).then_some(dialect_mir::ops::PTX_ISA_OF_128_BIT_ATOMICS);
    let required_isa = dialect_nvvm::required_ptx_isa(&ctx, root).max(atomics_128);
    let mut left_out = Vec::new();
    if config.default_targets {
        targets.retain(|&arch| match unsupported_on(&ctx, root, arch) {
            Some(why) => {
                left_out.push((arch.to_string(), why));
                false
            }
            None => true,
        });
        if targets.is_empty() {
            let why = left_out.pop().map(|(_, why)| why).unwrap_or_default();
            return Err(PipelineError::NoDefaultTarget(why));
        }
    }

    timings.time(Stage::Lower, || {
        mir_lower::lower_mir_to_llvm(&mut ctx, module)
            .map_err(|e| PipelineError::Lowering(e.to_string()))?;
        verify::verify_all(&ctx, root).map_err(|failure| {
            PipelineError::Lowering(format!(
                "internal error: the lowered module does not verify: {}",
                failure.message
            ))
        })
    })?;

    let export_options = llvm_export::ExportOptions {
        debug: config.device_debug,
        comp_dir: config
            .comp_dir
            .clone()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default(),
        ..Default::default()
    };
    let ll = timings.time(Stage::Export, || {
        llvm_export::export_module_with(&ctx, module, &export_options)
            .map_err(|e| PipelineError::Export(e.to_string()))
    })?;
    dump(config, config.dump_llvm, "ll", &ll)?;

    let ll = if llvm_to_ptx::needs_libdevice(&ll) {
        let linked = timings.time(Stage::LinkLibdevice, || {
            gpu_toolchain::find_libdevice()
                .and_then(|libdevice| {
                    llvm_to_ptx::link_libdevice(&ll, &libdevice, None, config.sysroot.as_deref())
                })
                .map_err(PipelineError::Libdevice)
        })?;
        dump(config, config.dump_llvm, "linked.ll", &linked)?;
        linked
    } else {
        ll
    };

    // Each architecture's PTX and cubin, oldest first; the newest's PTX is the module's.
    let mut images = Vec::with_capacity(targets.len());
    for (index, &arch) in targets.iter().enumerate() {
        let ptx_isa = required_isa.filter(|&required| required > arch.min_ptx_isa());
        let ptx = ll_to_ptx(&ll, &arch.to_string(), config, ptx_isa, &mut timings)?;
        let ptx = ptx_passes(ptx, config, &mut timings);
        let newest = index + 1 == targets.len();
        let ptx_path = if newest {
            write_ptx(config, &ptx)?
        } else {
            write_older_ptx(config, arch, &ptx)?
        };
        let cubin = if config.cubin {
            timings.time(Stage::Ptxas, || {
                build_cubin(&ptx, &arch.to_string(), ptx_path.as_deref())
            })
        } else {
            Cubin::NotAsked
        };
        images.push((arch, ptx, ptx_path, cubin));
    }
    let cubin = cubin_of_every_architecture(&images);
    let (_, ptx, ptx_path, _) = images.pop().expect("at least one architecture");

    let cpu_object = match &config.cpu {
        Some(cpu) => timings.time(Stage::CpuFlavour, || {
            match cpu_flavour(functions, config, target, cpu) {
                Ok(object) => CpuObject::Built(object),
                Err(e) => CpuObject::Failed(e.to_string()),
            }
        }),
        None => CpuObject::NotAsked,
    };

    Ok(PipelineOutput {
        ptx,
        ptx_path,
        cubin,
        left_out,
        cpu_object,
        timings,
    })
}

/// What the importer is told, from the build's configuration.
fn import_options(config: &PipelineConfig, target: dialect_nvvm::Target) -> ImportOptions {
    ImportOptions {
        crate_name: config.crate_name.clone(),
        target,
        overflow_checks: config.overflow_checks,
        locations: config.device_debug.enabled(),
        variables: config.device_debug == DeviceDebug::Full,
        fmad: config.fmad,
        panic_messages: config.panic_messages,
        check_messages: config.check_messages,
        device_formats: config.device_formats,
    }
}

/// The CPU device's flavour of `functions`: translated and lowered again in a context of its
/// own, exported for the host with its image table, compiled to an object.
fn cpu_flavour(
    functions: &[CollectedFunction],
    config: &PipelineConfig,
    target: dialect_nvvm::Target,
    cpu: &CpuTarget,
) -> Result<Vec<u8>, PipelineError> {
    let mut ctx = Context::new();
    dialect_mir::register(&mut ctx);
    dialect_nvvm::register(&mut ctx);
    let module =
        mir_importer::import_module(&mut ctx, functions, &import_options(config, target), None)?;
    let root = module.get_operation();
    verify::verify_all(&ctx, root)
        .map_err(|failure| PipelineError::Verification(failure.message))?;
    mem2reg::mem2reg(&mut ctx, root)
        .map_err(|e| PipelineError::Mem2Reg(e.disp(&ctx).to_string()))?;
    mir_lower::lower_mir_to_llvm_for(&mut ctx, module, mir_lower::Flavour::Cpu)
        .map_err(|e| PipelineError::Lowering(e.to_string()))?;
    let export_options = llvm_export::ExportOptions {
        target_triple: cpu.triple.clone(),
        data_layout: cpu.data_layout.clone(),
        debug: DeviceDebug::None,
        comp_dir: Default::default(),
        cpu: Some(llvm_export::CpuImage {
            table_symbol: cpu.table_symbol.clone(),
            race: cpu.race,
        }),
    };
    let ll = llvm_export::export_module_with(&ctx, module, &export_options)
        .map_err(|e| PipelineError::Export(e.to_string()))?;
    dump(config, config.dump_llvm, "cpu.ll", &ll)?;
    let opt_level = if config.device_debug == DeviceDebug::Full {
        0
    } else {
        3
    };
    // libdevice's `__CUDA_ARCH` is the compute capability times 100 (`900` for sm_90).
    llvm_to_ptx::compile_cpu_object(
        &ll,
        opt_level,
        config.sysroot.as_deref(),
        target.sm * 10,
        &cpu.table_symbol,
    )
    .map_err(|e| PipelineError::CpuFlavour(e.to_string()))
}

/// `opt`, check hoisting (and `opt` again on what it changed), `llc`.
/// The architectures of `list` (`sm_90`, or `sm_80,sm_86,sm_90`), oldest first, each once.
fn parse_targets(list: &str) -> Result<Vec<dialect_nvvm::Target>, PipelineError> {
    let mut targets = list
        .split(',')
        .map(|name| {
            dialect_nvvm::Target::parse(name).ok_or_else(|| PipelineError::Target(name.into()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    targets.sort_by_key(|t| (t.sm, t.suffix));
    targets.dedup();
    Ok(targets)
}

/// Why the translated module cannot run on `arch`, if it cannot: an intrinsic newer than it,
/// a 128-bit atomic or a thread-block cluster before sm_90.
fn unsupported_on(
    ctx: &Context,
    module: Ptr<Operation>,
    arch: dialect_nvvm::Target,
) -> Option<String> {
    use pliron::graph::walkers::{IRNode, WalkConfig, uninterruptible::immutable::walk_op};
    // The walk takes a function, not a closure: the architecture travels in its state.
    let mut state: (dialect_nvvm::Target, Option<String>) = (arch, None);
    walk_op(
        ctx,
        &mut state,
        &WalkConfig::default(),
        module,
        |ctx, (arch, why): &mut (dialect_nvvm::Target, Option<String>), node| {
            let IRNode::Operation(op) = node else { return };
            if why.is_some() {
                return;
            }
            if let Some(intrinsic) = Operation::get_op::<dialect_nvvm::IntrinsicOp>(op, ctx)
                && let Err(too_old) = arch.check(intrinsic.intrinsic(ctx))
            {
                let newer = if too_old.arch_specific {
                    ""
                } else {
                    " or newer"
                };
                *why = Some(format!(
                    "`{}` needs {}{newer}",
                    too_old.stub, too_old.required
                ));
            } else if dialect_mir::ops::is_128_bit_atomic(ctx, op)
                && arch.sm < dialect_mir::ops::SM_OF_128_BIT_ATOMICS
            {
                *why = Some("a 128-bit atomic needs sm_90 or newer".into());
            } else if let Some(func) = Operation::get_op::<dialect_mir::ops::FuncOp>(op, ctx)
                && func.cluster_dims(ctx).is_some()
                && arch.sm < 90
            {
                *why = Some("`#[cluster_dims]` needs sm_90 or newer".into());
            }
        },
    );
    state.1
}

/// The cubin to embed: the one architecture's, or a set of every architecture's
/// (`reserved_oxide_symbols::cubin_set`); unavailable if any is.
fn cubin_of_every_architecture(
    images: &[(
        dialect_nvvm::Target,
        String,
        Option<std::path::PathBuf>,
        Cubin,
    )],
) -> Cubin {
    if let [(_, _, _, cubin)] = images {
        return cubin.clone();
    }
    let mut built = Vec::with_capacity(images.len());
    for (arch, _, _, cubin) in images {
        match cubin {
            Cubin::Built(image) => built.push((arch.to_string(), image.as_slice())),
            Cubin::NotAsked => return Cubin::NotAsked,
            Cubin::Unavailable(why) => return Cubin::Unavailable(format!("{arch}: {why}")),
        }
    }
    let entries: Vec<(&str, &[u8])> = built.iter().map(|(a, i)| (a.as_str(), *i)).collect();
    Cubin::Built(reserved_oxide_symbols::cubin_set::encode(&entries))
}

fn ll_to_ptx(
    ll: &str,
    arch: &str,
    config: &PipelineConfig,
    ptx_isa: Option<u32>,
    timings: &mut Timings,
) -> Result<String, PipelineError> {
    // The debug tier keeps every line and variable where the source has it.
    let opt_level = if config.device_debug == DeviceDebug::Full {
        0
    } else {
        3
    };
    let options = PtxOptions {
        sysroot: config.sysroot.clone(),
        ptx_isa,
        opt_level,
        ..Default::default()
    };
    let generation = |e: gpu_toolchain::ToolError| PipelineError::PtxGeneration(e.to_string());
    let codegen = LlvmCodegen::new(ll, arch, &options).map_err(generation)?;
    let optimised = timings
        .time(Stage::Opt, || codegen.opt(ll))
        .map_err(generation)?;
    let optimised = if config.check_hoisting && opt_level > 0 && codegen.optimises() {
        timings.time(Stage::CheckHoisting, || {
            match llvm_to_ptx::hoist_checks(&optimised) {
                (hoisted, true) => codegen.opt(&hoisted),
                (_, false) => Ok(optimised),
            }
        })
    } else {
        Ok(optimised)
    }
    .map_err(generation)?;
    timings
        .time(Stage::Llc, || codegen.llc(&optimised))
        .map_err(generation)
}

/// The passes over `llc`'s text, each its own stage.
fn ptx_passes(ptx: String, config: &PipelineConfig, timings: &mut Timings) -> String {
    // Line info must not change the machine code: the labels `llc` adds for it would.
    let ptx = if config.device_debug == DeviceDebug::Lines {
        timings.time(Stage::DebugLabels, || {
            ptx_tools::remove_unreferenced_debug_labels(&ptx)
        })
    } else {
        ptx
    };
    let ptx = if config.faulting_checks {
        timings.time(Stage::FaultingChecks, || {
            ptx_tools::fault_at_guarded_accesses(&ptx).0
        })
    } else {
        ptx
    };
    let ptx = timings.time(Stage::DeclaredBlockDims, || {
        ptx_tools::fold_declared_block_dims(&ptx).0
    });
    let ptx = timings.time(Stage::BackEdges, || ptx_tools::branch_on_back_edges(&ptx).0);
    timings.time(Stage::WideNegation, || {
        ptx_tools::widen_16_bit_negations(&ptx).0
    })
}

fn print_op(ctx: &Context, op: Ptr<Operation>) -> String {
    op.deref(ctx).disp(ctx).to_string()
}

/// Whether the module holds a 128-bit atomic (`atom.cas.b128`, PTX ISA 8.3).
fn uses_128_bit_atomics(ctx: &Context, module: Ptr<Operation>) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architecture_lists_are_sorted_oldest_first_without_repeats() {
        let names = |list: &str| -> Vec<String> {
            parse_targets(list)
                .unwrap()
                .iter()
                .map(|t| t.to_string())
                .collect()
        };
        assert_eq!(names("sm_90"), ["sm_90"]);
        assert_eq!(
            names("sm_90a,sm_80,sm_90,sm_86,sm_80"),
            ["sm_80", "sm_86", "sm_90", "sm_90a"]
        );
        assert!(
            matches!(parse_targets("sm_80,,sm_90"), Err(PipelineError::Target(t)) if t.is_empty())
        );
        assert!(
            matches!(parse_targets("sm_80,compute_90"), Err(PipelineError::Target(t)) if t == "compute_90")
        );
    }
}
