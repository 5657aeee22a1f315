//! The whole-module lowering: `mir.global`s become `llvm.global`s, `mir.func`s become
//! `llvm.func`s (kernels with their entry ABI and prologue), then the [MirToLlvm] dialect
//! conversion rewrites every op and block argument inside them.

use std::collections::{HashMap, HashSet};

use dialect_mir::ops::{
    CallIndirectOp, CallOp, CopyNonOverlappingOp, CopyOp, FuncOp, VolatileLoadOp,
};
use pliron::{
    basic_block::BasicBlock,
    builtin::{
        op_interfaces::{
            CallOpInterface, OneRegionInterface, SingleBlockRegionInterface, SymbolOpInterface,
        },
        ops::ModuleOp,
        type_interfaces::FunctionTypeInterface,
        types::FunctionType,
    },
    context::{Context, Ptr},
    irbuild::dialect_conversion::apply_dialect_conversion,
    linked_list::ContainsLinkedList,
    location::Location,
    op::Op,
    operation::Operation,
    printable::Printable,
    region::Region,
    r#type::{TypeHandle, Typed},
};
use pliron_llvm::{
    attributes::LinkageAttr,
    ops::{FuncOp as LlvmFuncOp, GlobalOp as LlvmGlobalOp},
};

use crate::{
    abi::{build_prologue, entry_param_attrs},
    convert::{MirToLlvm, enclosing_function},
    error::{LoweringError, OpError},
    flavour::Flavour,
    globals::lower_globals,
    types::{function_type, value_type},
};

/// Lower `module`, a `builtin.module` of `mir.func`s holding `mir` and `nvvm` ops, to the LLVM
/// dialect in place, ready for `llvm_export::export_module`. The result is not verified here:
/// the pipeline verifies every stage's output once, in time linear in its size.
///
/// Expects verified input on which `pliron::opts::mem2reg` has run (slots that stay in memory
/// are lowered as `alloca`s, which is correct but leaves more for `opt`). Kernels (`mir.func`s
/// with the `kernel` marker) get the entry ABI of [crate::abi] and are marked `ptx_kernel`;
/// other functions get `internal` linkage, declarations stay external. Callees that are not in
/// the module are declared from the type of their calls, and the libdevice functions that math
/// ops call (`__nv_sinf`, ...) from their operands.
pub fn lower_mir_to_llvm(ctx: &mut Context, module: ModuleOp) -> Result<(), LoweringError> {
    lower_mir_to_llvm_for(ctx, module, Flavour::Gpu)
}

/// [lower_mir_to_llvm] for the machine `flavour` names.
pub fn lower_mir_to_llvm_for(
    ctx: &mut Context,
    module: ModuleOp,
    flavour: Flavour,
) -> Result<(), LoweringError> {
    dialect_mir::register(ctx);
    dialect_nvvm::register(ctx);
    let global_spaces = lower_globals(ctx, module)?;
    let funcs = module_functions(ctx, module)?;
    for &func in &funcs {
        check_block_arguments(ctx, func)?;
    }
    declare_missing_callees(ctx, module, &funcs)?;
    crate::convert::math::declare_libdevice_functions(ctx, module, &funcs)?;
    let volatile_readers = volatile_readers(ctx, &funcs);
    for func in funcs {
        let reads_volatile = volatile_readers.contains(&func.get_symbol_name(ctx).to_string());
        replace_function(ctx, func, reads_volatile)?;
    }
    let mut conversion = MirToLlvm {
        global_spaces,
        flavour,
    };
    apply_dialect_conversion(ctx, &mut conversion, module.get_operation()).map_err(
        |err| match err.err.downcast_ref::<LoweringError>() {
            Some(lowering) => lowering.clone(),
            None => LoweringError::Conversion(err.disp(ctx).to_string()),
        },
    )?;
    check_fully_converted(ctx, module)
}

/// The `mir.func`s of `module`, which must hold nothing else but (lowered) globals.
fn module_functions(ctx: &Context, module: ModuleOp) -> Result<Vec<FuncOp>, LoweringError> {
    module
        .get_body(ctx, 0)
        .deref(ctx)
        .iter(ctx)
        .filter(|&op| Operation::get_op::<LlvmGlobalOp>(op, ctx).is_none())
        .map(|op| {
            Operation::get_op::<FuncOp>(op, ctx).ok_or_else(|| {
                LoweringError::UnexpectedModuleItem {
                    op: Operation::get_opid(op, ctx).to_string(),
                }
            })
        })
        .collect()
}

/// The functions that may perform a volatile read, themselves or through their callees (a call
/// through a function pointer may reach any function).
///
/// LLVM's NVPTX backend turns every load through a `noalias readonly` kernel parameter into
/// `ld.global.nc`, volatile ones included, and a non-coherent load may be served from a cache
/// and merged with others: a volatile read through a `&[T]` parameter would no longer be one.
/// A kernel that may read volatile memory therefore keeps `readonly` but not `noalias` on its
/// `&[T]` parameters ([entry_param_attrs]), whose loads stay coherent.
fn volatile_readers(ctx: &Context, funcs: &[FuncOp]) -> HashSet<String> {
    let mut callers: HashMap<String, Vec<String>> = HashMap::new();
    let mut readers: Vec<String> = Vec::new();
    let mut indirect_callers = Vec::new();
    for func in funcs {
        let name = func.get_symbol_name(ctx).to_string();
        let mut reads = false;
        for op in ops_in(ctx, func.get_region(ctx)) {
            if let Some(call) = Operation::get_op::<CallOp>(op, ctx) {
                callers
                    .entry(call.callee_name(ctx).to_string())
                    .or_default()
                    .push(name.clone());
            } else if Operation::get_op::<CallIndirectOp>(op, ctx).is_some() {
                indirect_callers.push(name.clone());
            } else if Operation::get_op::<VolatileLoadOp>(op, ctx).is_some()
                || Operation::get_op::<CopyOp>(op, ctx).is_some_and(|c| c.is_volatile(ctx))
                || Operation::get_op::<CopyNonOverlappingOp>(op, ctx)
                    .is_some_and(|c| c.is_volatile(ctx))
            {
                reads = true;
            }
        }
        if reads {
            readers.push(name);
        }
    }
    if !readers.is_empty() {
        readers.extend(indirect_callers);
    }
    let mut found = HashSet::new();
    while let Some(name) = readers.pop() {
        if found.insert(name.clone())
            && let Some(list) = callers.get(&name)
        {
            readers.extend(list.iter().cloned());
        }
    }
    found
}

/// Every op directly in the blocks of `region`.
fn ops_in(ctx: &Context, region: Ptr<Region>) -> Vec<Ptr<Operation>> {
    region
        .deref(ctx)
        .iter(ctx)
        .flat_map(|block| block.deref(ctx).iter(ctx).collect::<Vec<_>>())
        .collect()
}

/// Fail unless every block argument of `func` has a type with an LLVM equivalent.
fn check_block_arguments(ctx: &Context, func: FuncOp) -> Result<(), LoweringError> {
    let blocks: Vec<Ptr<BasicBlock>> = func.get_region(ctx).deref(ctx).iter(ctx).collect();
    for block in blocks {
        let types: Vec<TypeHandle> = block
            .deref(ctx)
            .arguments()
            .map(|arg| arg.get_type(ctx))
            .collect();
        for ty in types {
            value_type(ctx, ty).map_err(|source| LoweringError::BlockArgument {
                function: func.get_symbol_name(ctx).to_string(),
                ty: ty.disp(ctx).to_string(),
                source,
            })?;
        }
    }
    Ok(())
}

/// Declare (as external `llvm.func`s) the callees that the module does not define, and refuse
/// calls of kernels, whose entry ABI differs from a device function's.
fn declare_missing_callees(
    ctx: &mut Context,
    module: ModuleOp,
    funcs: &[FuncOp],
) -> Result<(), LoweringError> {
    let defined: HashMap<String, bool> = funcs
        .iter()
        .map(|func| (func.get_symbol_name(ctx).to_string(), func.is_kernel(ctx)))
        .collect();
    let mut declared = HashSet::new();
    for func in funcs {
        for op in ops_in(ctx, func.get_region(ctx)) {
            let Some(call) = Operation::get_op::<CallOp>(op, ctx) else {
                continue;
            };
            let callee = call.callee_name(ctx);
            let fail = |ctx: &Context, source| LoweringError::Op {
                function: func.get_symbol_name(ctx).to_string(),
                op: op.deref(ctx).disp(ctx).to_string(),
                source,
            };
            match defined.get(&callee.to_string()) {
                Some(true) => {
                    return Err(fail(
                        ctx,
                        OpError::Unsupported(format!("calling kernel `{callee}` from device code")),
                    ));
                }
                Some(false) => continue,
                None if !declared.insert(callee.clone()) => continue,
                None => {}
            }
            let callee_ty = call.callee_type(ctx);
            let signature = callee_ty
                .deref(ctx)
                .downcast_ref::<FunctionType>()
                .map(|func_ty| (func_ty.arg_types(), func_ty.res_types()));
            let Some((args, results)) = signature else {
                return Err(fail(
                    ctx,
                    OpError::Malformed("the callee type is not a function type".into()),
                ));
            };
            let llvm_ty = function_type(ctx, &args, &results).map_err(|err| fail(ctx, err))?;
            let decl = LlvmFuncOp::new(ctx, callee, llvm_ty);
            module.append_operation(ctx, decl.get_operation(), 0);
        }
    }
    Ok(())
}

/// Replace the `mir.func` `func` by an `llvm.func` of the same name that takes over its body.
fn replace_function(
    ctx: &mut Context,
    func: FuncOp,
    reads_volatile: bool,
) -> Result<(), LoweringError> {
    let name = func.get_symbol_name(ctx);
    let signature_error = |source| LoweringError::Signature {
        function: name.to_string(),
        source,
    };
    let kernel = func.is_kernel(ctx);
    let declaration = func.is_declaration(ctx);
    let grid_constants = func.grid_constants(ctx);
    let mut grid_constant_params = vec![];
    let fmad = func.fmad(ctx);
    let param_attrs = if kernel {
        entry_param_attrs(
            ctx,
            &func.arg_types(ctx),
            &func.param_access(ctx),
            reads_volatile,
        )
        .map_err(signature_error)?
    } else {
        vec![]
    };
    let llvm_ty = if kernel {
        if !func.result_types(ctx).is_empty() {
            return Err(signature_error(OpError::Unsupported(
                "a kernel that returns a value".into(),
            )));
        }
        let entry = func.entry_block(ctx).ok_or_else(|| {
            signature_error(OpError::Unsupported("a kernel without a body".into()))
        })?;
        let (llvm_ty, params) =
            build_prologue(ctx, entry, grid_constants).map_err(signature_error)?;
        grid_constant_params = params;
        // The prologue is at the function's line, like the rest of the entry block.
        if let Location::Named { child_loc, .. } = func.get_operation().deref(ctx).loc().clone() {
            let ops: Vec<_> = entry.deref(ctx).iter(ctx).collect();
            for op in ops {
                if op.deref(ctx).loc().is_unknown() {
                    op.deref_mut(ctx).set_loc((*child_loc).clone());
                }
            }
        }
        llvm_ty
    } else {
        function_type(ctx, &func.arg_types(ctx), &func.result_types(ctx))
            .map_err(signature_error)?
    };

    let bounds = func.launch_bounds(ctx);
    let cluster = func.cluster_dims(ctx);
    let block = func.block_dims(ctx);
    let llvm_func = LlvmFuncOp::new(ctx, name.clone(), llvm_ty);
    let loc = func.get_operation().deref(ctx).loc().clone();
    llvm_func.get_operation().deref_mut(ctx).set_loc(loc);
    if kernel {
        nvptx_attrs::mark_kernel(ctx, &llvm_func);
        nvptx_attrs::set_param_attrs(ctx, &llvm_func, param_attrs);
        if let Some(bounds) = bounds {
            nvptx_attrs::set_launch_bounds(ctx, &llvm_func, bounds.max_threads, bounds.min_blocks);
        }
        if let Some(cluster) = cluster {
            nvptx_attrs::set_cluster_dims(ctx, &llvm_func, cluster.dims);
        }
        if let Some(block) = block {
            nvptx_attrs::set_block_dims(ctx, &llvm_func, block.dims);
        }
        for param in grid_constant_params {
            let pointee = value_type(ctx, param.pointee).map_err(signature_error)?;
            nvptx_attrs::set_grid_constant(ctx, &llvm_func, param.index, pointee, param.align);
        }
    } else if !declaration {
        llvm_func.set_attr_llvm_function_linkage(ctx, LinkageAttr::InternalLinkage);
    }
    if func.is_noinline(ctx) {
        // `#[inline(never)]`: LLVM keeps the call, and NVPTX writes `.noinline`, so that ptxas
        // does not inline it either (the panic recorder stays out of every kernel's body).
        let mut attrs = llvm_func
            .get_attr_llvm_func_attrs(ctx)
            .map(|a| a.clone())
            .unwrap_or_default();
        attrs.set("noinline", pliron_llvm::llvm_attrs::LlvmAttrValue::Unit);
        llvm_func.set_attr_llvm_func_attrs(ctx, attrs);
    }
    if fmad {
        // Read by the float arithmetic conversions ([crate::convert::contracts]).
        llvm_func.get_operation().deref_mut(ctx).attributes.set(
            dialect_mir::ops::ATTR_KEY_MIR_FUNC_FMAD.clone(),
            pliron::builtin::attributes::UnitAttr::new(),
        );
    }
    if !declaration {
        Region::move_to_op(func.get_region(ctx), llvm_func.get_operation(), ctx);
    }
    llvm_func
        .get_operation()
        .insert_before(ctx, func.get_operation());
    Operation::erase(func.get_operation(), ctx);
    Ok(())
}

/// Fail if an op other than an LLVM dialect op is left in a function.
fn check_fully_converted(ctx: &Context, module: ModuleOp) -> Result<(), LoweringError> {
    let items: Vec<_> = module.get_body(ctx, 0).deref(ctx).iter(ctx).collect();
    for item in items {
        for region in item.deref(ctx).regions().collect::<Vec<_>>() {
            for op in ops_in(ctx, region) {
                let opid = Operation::get_opid(op, ctx);
                if opid.dialect.to_string() != "llvm" {
                    return Err(LoweringError::Unconverted {
                        function: enclosing_function(ctx, op),
                        op: opid.to_string(),
                    });
                }
            }
        }
    }
    Ok(())
}
