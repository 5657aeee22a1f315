//! Whole-module export: header, named types, globals, functions and intrinsic declarations.

use std::path::PathBuf;

use pliron::{
    builtin::{
        op_interfaces::{SingleBlockRegionInterface, SymbolOpInterface},
        ops::ModuleOp,
    },
    context::{Context, Ptr},
    linked_list::ContainsLinkedList,
    op::Op,
    operation::Operation,
};
use pliron_llvm::{
    attributes::AlignmentAttr,
    op_interfaces::ATTR_KEY_LLVM_ALIGNMENT,
    ops::{FuncOp, GlobalOp},
};

use crate::{
    attrs::{linkage_text, type_of},
    constants::ConstWriter,
    cpu_image::{CPU_DYNAMIC_SHARED_BYTES, CpuGlue, CpuImage, ExposedGlobal},
    debug_info::{DebugInfo, DeviceDebug, source_pos},
    error::ExportError,
    function::write_function,
    module_state::ModuleState,
    naming::{escape, global_ref},
    types::func_signature,
};

/// The NVPTX target triple written by default.
pub const NVPTX_TRIPLE: &str = "nvptx64-nvidia-cuda";
/// The NVPTX data layout written by default.
pub const NVPTX_DATA_LAYOUT: &str = "e-p6:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64";

/// Module-level settings of the export.
///
/// A module's own `llvm_target_triple` / `llvm_data_layout` attributes (see
/// `pliron_llvm::attributes::set_target_triple`) take precedence over these.
#[derive(Clone, Debug)]
pub struct ExportOptions {
    /// `target triple = "..."`.
    pub target_triple: String,
    /// `target datalayout = "..."`.
    pub data_layout: String,
    /// The debug metadata to write (see [crate::debug_info]); none by default.
    pub debug: DeviceDebug,
    /// The directory that relative source paths in the ops' locations are relative to (the
    /// compiler's working directory).
    pub comp_dir: PathBuf,
    /// Write the CPU device's flavour ([crate::cpu_image]) instead of the GPU's; the triple
    /// and data layout are then the host's.
    pub cpu: Option<CpuImage>,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            target_triple: NVPTX_TRIPLE.into(),
            data_layout: NVPTX_DATA_LAYOUT.into(),
            debug: DeviceDebug::None,
            comp_dir: PathBuf::new(),
            cpu: None,
        }
    }
}

/// Export `module` as textual LLVM IR for the NVPTX target (see [`export_module_with`]).
pub fn export_module(ctx: &Context, module: ModuleOp) -> Result<String, ExportError> {
    export_module_with(ctx, module, &ExportOptions::default())
}

/// Export `module`, a `builtin.module` of `llvm.func` and `llvm.global` ops, as textual LLVM IR
/// (LLVM 21/22 syntax, opaque pointers).
///
/// Functions marked with `nvptx_attrs::mark_kernel` become `ptx_kernel` entry points; intrinsics
/// called through `llvm.call_intrinsic` are declared at the end of the module.
pub fn export_module_with(
    ctx: &Context,
    module: ModuleOp,
    options: &ExportOptions,
) -> Result<String, ExportError> {
    let items: Vec<Ptr<Operation>> = module.get_body(ctx, 0).deref(ctx).iter(ctx).collect();
    let mut state = ModuleState::default();
    state.cpu = options.cpu.as_ref().map(|image| CpuGlue::new(image.race));
    for &item in &items {
        if let Some(func) = Operation::get_op::<FuncOp>(item, ctx) {
            state.symbols.add_function(ctx, &func)?;
        } else if let Some(global) = Operation::get_op::<GlobalOp>(item, ctx) {
            state.symbols.add_global(ctx, &global)?;
        } else {
            return Err(ExportError::UnsupportedOp {
                op: Operation::get_opid(item, ctx).to_string(),
            });
        }
    }

    if options.debug.enabled() {
        // The compile unit's file: that of the first function with a known position.
        let main_file = items
            .iter()
            .find_map(|&item| source_pos(ctx, item.deref(ctx).loc()))
            .map(|pos| pos.file.to_string_lossy().into_owned())
            .unwrap_or_else(|| "<unknown>".into());
        state.debug = Some(DebugInfo::new(options.debug, &options.comp_dir, &main_file));
    }

    let mut globals = String::new();
    let mut functions = Vec::new();
    for &item in &items {
        if let Some(func) = Operation::get_op::<FuncOp>(item, ctx) {
            functions.push(write_function(ctx, &mut state, &func)?);
        } else if let Some(global) = Operation::get_op::<GlobalOp>(item, ctx) {
            globals.push_str(&write_global(ctx, &mut state, &global)?);
        }
    }

    let mut declarations = String::new();
    for (name, ty) in state.intrinsics.clone() {
        let (res, args, var_arg) = func_signature(ctx, ty, "llvm.call_intrinsic")?;
        let mut params = args
            .iter()
            .map(|a| state.types.write(ctx, *a))
            .collect::<Result<Vec<_>, _>>()?;
        if !name.starts_with("llvm.")
            && let Some(cpu) = &mut state.cpu
        {
            let result = state.types.write(ctx, res)?;
            cpu.thunk(&name, &result, &params);
            continue;
        }
        if var_arg {
            params.push("...".into());
        }
        declarations.push_str(&format!(
            "declare {} {}({})\n",
            state.types.write(ctx, res)?,
            global_ref(&name),
            params.join(", ")
        ));
    }
    let type_defs = state.types.definitions(ctx)?;

    let module_attr = |key: fn(&Context, ModuleOp) -> Option<String>| key(ctx, module);
    let triple = module_attr(pliron_llvm::attributes::get_target_triple)
        .unwrap_or_else(|| options.target_triple.clone());
    let layout = module_attr(pliron_llvm::attributes::get_data_layout)
        .unwrap_or_else(|| options.data_layout.clone());

    let mut out = format!(
        "; ModuleID = '{}'\ntarget datalayout = \"{}\"\ntarget triple = \"{}\"\n",
        module.get_symbol_name(ctx),
        escape(&layout),
        escape(&triple)
    );
    for section in [type_defs, globals] {
        if !section.is_empty() {
            out.push('\n');
            out.push_str(&section);
        }
    }
    for function in functions {
        out.push('\n');
        out.push_str(&function);
    }
    if !declarations.is_empty() {
        out.push('\n');
        out.push_str(&declarations);
    }
    if let (Some(cpu), Some(image)) = (&state.cpu, &options.cpu) {
        out.push_str(&cpu.write(image));
    }
    if let Some(debug) = &state.debug {
        out.push('\n');
        out.push_str(&debug.write());
    }
    Ok(out)
}

/// `@name = [linkage] [addrspace(N)] global|constant T [init][, align A]`.
fn write_global(
    ctx: &Context,
    state: &mut ModuleState,
    global: &GlobalOp,
) -> Result<String, ExportError> {
    const OP: &str = "llvm.global";
    let symbol = String::from(global.get_symbol_name(ctx));
    let llvm_name = state
        .symbols
        .get(&symbol)
        .map(|s| s.llvm_name.clone())
        .unwrap_or(symbol);
    let Some(ty) = global.get_attr_llvm_global_type(ctx).map(|t| type_of(&t)) else {
        return Err(ExportError::malformed(
            OP,
            format!("`@{llvm_name}` has no type"),
        ));
    };
    let ty_text = state.types.write(ctx, ty)?;
    let mut linkage = global
        .get_attr_llvm_global_linkage(ctx)
        .map(|l| linkage_text(OP, &l))
        .transpose()?
        .unwrap_or_default();

    let init = if let Some(value) = global.get_initializer_value(ctx) {
        let mut writer = ConstWriter {
            ctx,
            types: &mut state.types,
            symbols: &state.symbols,
            op: OP,
        };
        Some(writer.value(&*value, ty)?)
    } else if global.get_initializer_region(ctx).is_some() {
        Some(crate::const_expr::region_initializer(ctx, state, global)?)
    } else {
        None
    };
    if init.is_none() {
        match linkage.as_str() {
            "" => linkage = "external ".into(),
            "extern_weak " => {}
            _ => {
                return Err(ExportError::malformed(
                    OP,
                    format!("`@{llvm_name}` has no initializer but {}linkage", linkage),
                ));
            }
        }
    }

    let address_space = global.address_space(ctx);
    if let Some(cpu) = &mut state.cpu {
        // Shared memory is the block's: one per OS thread running blocks; the dynamic one
        // (declared without a size) gets the most a block can have.
        if address_space == 3 {
            linkage = "internal thread_local ".into();
            cpu.shared.push((
                llvm_name.clone(),
                if init.is_none() {
                    format!("[{CPU_DYNAMIC_SHARED_BYTES} x i8]")
                } else {
                    ty_text.clone()
                },
            ));
            if init.is_none() {
                return Ok(format!(
                    "{} = internal thread_local addrspace(3) global [{CPU_DYNAMIC_SHARED_BYTES} x \
                     i8] undef, align 16\n",
                    global_ref(&llvm_name)
                ));
            }
        } else if init.is_some() && !matches!(linkage.as_str(), "internal " | "private ") {
            cpu.globals.push(ExposedGlobal {
                llvm_name: llvm_name.clone(),
                ty: ty_text.clone(),
                address_space,
            });
            linkage = "internal ".into();
        }
    }
    let addrspace = match address_space {
        0 => String::new(),
        n => format!("addrspace({n}) "),
    };
    let kind = if global.is_constant(ctx) {
        "constant"
    } else {
        "global"
    };
    let init = init.map(|i| format!(" {i}")).unwrap_or_default();
    let align = global
        .get_operation()
        .deref(ctx)
        .attributes
        .get::<AlignmentAttr>(&ATTR_KEY_LLVM_ALIGNMENT)
        .map(|a| format!(", align {}", a.0))
        .unwrap_or_default();
    Ok(format!(
        "{} = {linkage}{addrspace}{kind} {ty_text}{init}{align}\n",
        global_ref(&llvm_name)
    ))
}
