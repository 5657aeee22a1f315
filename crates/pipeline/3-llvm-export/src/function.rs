//! Function definitions and declarations: signature line, pre-naming, blocks, phis and
//! trampolines. The text of individual ops is in [`crate::ops`].

use pliron::{
    basic_block::BasicBlock,
    builtin::op_interfaces::SymbolOpInterface,
    common_traits::Named,
    context::{Context, Ptr},
    linked_list::ContainsLinkedList,
    op::Op,
    operation::Operation,
    r#type::{TypeHandle, Typed},
    value::Value,
};
use pliron_llvm::{op_interfaces::IsDeclaration, ops::FuncOp, types::FuncType};

use nvptx_attrs::is_kernel;

use crate::{
    attrs::{attrs_text, linkage_text},
    const_expr::inline_constant,
    cpu_image::CpuKernel,
    debug_info::{location_name, source_pos},
    error::ExportError,
    module_state::ModuleState,
    naming::{LocalNames, global_ref},
    phi::CfgPlan,
    types::{func_parts, is_void},
};

/// Writes one function; holds its names and CFG plan while its ops are written.
pub(crate) struct FunctionWriter<'a> {
    pub(crate) ctx: &'a Context,
    pub(crate) state: &'a mut ModuleState,
    pub(crate) names: LocalNames,
    pub(crate) cfg: CfgPlan,
    pub(crate) out: String,
    /// The function's `DISubprogram`, when debug metadata is written.
    pub(crate) scope: Option<crate::debug_info::Scope>,
    /// The ` !dbg !N` suffix of the instructions of the op being written.
    pub(crate) dbg: String,
    /// The LLVM name of the function being written.
    pub(crate) name: String,
}

/// The LLVM text of `func`: a `define` with body, or a `declare`.
pub(crate) fn write_function(
    ctx: &Context,
    state: &mut ModuleState,
    func: &FuncOp,
) -> Result<String, ExportError> {
    let symbol = String::from(func.get_symbol_name(ctx));
    let llvm_name = state
        .symbols
        .get(&symbol)
        .map(|s| s.llvm_name.clone())
        .unwrap_or(symbol);
    let mut writer = FunctionWriter {
        ctx,
        state,
        names: LocalNames::default(),
        cfg: CfgPlan::default(),
        out: String::new(),
        scope: None,
        dbg: String::new(),
        name: llvm_name.clone(),
    };
    writer
        .function(func, &llvm_name)
        .map_err(|e| e.in_function(&llvm_name))?;
    Ok(writer.out)
}

impl FunctionWriter<'_> {
    fn function(&mut self, func: &FuncOp, llvm_name: &str) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let func_ty: TypeHandle = func.get_type(ctx).into();
        let (res, args, var_arg) = {
            let t = func_ty.deref(ctx);
            let ft = t
                .downcast_ref::<FuncType>()
                .expect("llvm.func has an llvm.func type");
            func_parts(ft)
        };
        let kernel = is_kernel(ctx, func);
        if kernel && !is_void(ctx, res) {
            return Err(ExportError::KernelNotVoid);
        }
        let linkage = func
            .get_attr_llvm_function_linkage(ctx)
            .map(|l| linkage_text("llvm.func", &l))
            .transpose()?
            .unwrap_or_default();
        let attrs = func
            .get_attr_llvm_func_attrs(ctx)
            .map(|a| attrs_text(ctx, &mut self.state.types, &a))
            .transpose()?
            .unwrap_or_default();
        let cpu = self.state.cpu.is_some();
        let cc = if kernel && !cpu { "ptx_kernel " } else { "" };
        let res_text = self.ty(res)?;

        if func.is_declaration(ctx) {
            let mut params = args
                .iter()
                .map(|a| self.ty(*a))
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(cpu) = &mut self.state.cpu
                && llvm_name.starts_with(nvptx_attrs::LIBDEVICE_PREFIX)
            {
                cpu.sfu_slot();
            }
            if let Some(cpu) = &mut self.state.cpu
                && !var_arg
                && !llvm_name.starts_with(nvptx_attrs::LIBDEVICE_PREFIX)
            {
                // Called through a slot the CPU runtime fills (see [crate::cpu_image]).
                cpu.thunk(llvm_name, &res_text, &params);
                self.out = String::new();
                return Ok(());
            }
            if var_arg {
                params.push("...".into());
            }
            self.out = format!(
                "declare {linkage}{cc}{res_text} {}({}){attrs}\n",
                global_ref(llvm_name),
                params.join(", ")
            );
            return Ok(());
        }

        let region = func.get_operation().deref(ctx).get_region(0);
        let blocks: Vec<Ptr<BasicBlock>> = region.deref(ctx).iter(ctx).collect();
        let entry = *blocks
            .first()
            .ok_or_else(|| ExportError::malformed("llvm.func", "function body has no blocks"))?;
        let params: Vec<Value> = entry.deref(ctx).arguments().collect();
        if params.len() != args.len() {
            return Err(ExportError::malformed(
                "llvm.func",
                format!(
                    "entry block has {} arguments for {} parameters",
                    params.len(),
                    args.len()
                ),
            ));
        }

        let mut dbg = String::new();
        if let Some(debug) = &mut self.state.debug
            && let Some(pos) = source_pos(ctx, func.get_operation().deref(ctx).loc())
        {
            let loc = func.get_operation().deref(ctx).loc().clone();
            let name = location_name(&loc).unwrap_or(llvm_name);
            let scope = debug.subprogram(name, llvm_name, &pos);
            self.scope = Some(scope);
            dbg = format!(" !dbg !{}", scope.subprogram);
        }

        self.cfg = CfgPlan::build(ctx, region)?;
        self.name_everything(&blocks)?;
        self.cfg.name_trampolines(&mut self.names);

        let linkage = if cpu { "internal ".to_owned() } else { linkage };
        let mut header = vec![];
        let mut cpu_params = vec![];
        for (index, (ty, p)) in args.iter().zip(&params).enumerate() {
            // A grid constant's attributes (`byval`, `nvvm.grid_constant`) replace the
            // aliasing facts of the parameter attribute list.
            let attrs = nvptx_attrs::grid_constant_attrs(ctx, func, index)
                .or_else(|| nvptx_attrs::param_attrs(ctx, func, index));
            let attrs = match attrs {
                Some(attrs) => attrs_text(ctx, &mut self.state.types, &attrs)?,
                None => String::new(),
            };
            header.push(format!("{}{attrs} {}", self.ty(*ty)?, self.opd(*p)?));
            cpu_params.push((self.ty(*ty)?, attrs));
        }
        if kernel && let Some(cpu) = &mut self.state.cpu {
            cpu.kernels.push(CpuKernel {
                llvm_name: llvm_name.to_owned(),
                params: cpu_params,
                max_threads: nvptx_attrs::max_threads(ctx, func).unwrap_or(1024),
            });
        }
        if var_arg {
            header.push("...".into());
        }
        self.out = format!(
            "define {linkage}{cc}{res_text} {}({}){attrs}{dbg} {{\n",
            global_ref(llvm_name),
            header.join(", ")
        );
        for (i, &block) in blocks.iter().enumerate() {
            self.block(block, i == 0)?;
        }
        self.out.push_str("}\n");
        Ok(())
    }

    /// Name every block and value before writing anything, so forward references resolve.
    fn name_everything(&mut self, blocks: &[Ptr<BasicBlock>]) -> Result<(), ExportError> {
        let ctx = self.ctx;
        for (i, &block) in blocks.iter().enumerate() {
            let label = block.deref(ctx).given_name(ctx).map(String::from);
            self.names.name_block(block, label.as_deref());
            let unreachable = i != 0 && !self.cfg.has_predecessors(block);
            let args: Vec<Value> = block.deref(ctx).arguments().collect();
            for arg in args {
                if unreachable {
                    self.names.set_inline(arg, "poison".into());
                } else {
                    let given = arg.given_name(ctx).map(String::from);
                    self.names.name_value(arg, given.as_deref());
                }
            }
            let ops: Vec<Ptr<Operation>> = block.deref(ctx).iter(ctx).collect();
            for op in ops {
                if let Some(text) = self.inline_constant(op)? {
                    let result = op.deref(ctx).get_result(0);
                    self.names.set_inline(result, text);
                    continue;
                }
                let results: Vec<Value> = op.deref(ctx).results().collect();
                for result in results {
                    if is_void(ctx, result.get_type(ctx)) {
                        continue;
                    }
                    let given = result.given_name(ctx).map(String::from);
                    self.names.name_value(result, given.as_deref());
                }
            }
        }
        Ok(())
    }

    /// The constant text of `op`'s result if `op` is a constant-like op (written inline at
    /// its uses, as LLVM has no constant instructions).
    pub(crate) fn inline_constant(
        &mut self,
        op: Ptr<Operation>,
    ) -> Result<Option<String>, ExportError> {
        inline_constant(self.ctx, self.state, op)
    }

    fn block(&mut self, block: Ptr<BasicBlock>, is_entry: bool) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let label = self.label(block);
        if !is_entry {
            self.out.push('\n');
        }
        self.out.push_str(&format!("{label}:\n"));
        if !is_entry && self.cfg.has_predecessors(block) {
            self.phis(block)?;
        }
        let ops: Vec<Ptr<Operation>> = block.deref(ctx).iter(ctx).collect();
        if block.deref(ctx).get_terminator(ctx).is_none() {
            return Err(ExportError::MissingTerminator { block: label });
        }
        for op in ops {
            self.op(op)?;
        }
        let trampolines: Vec<(String, String)> = self
            .cfg
            .outgoing(block)
            .filter_map(|e| {
                e.trampoline.clone().map(|t| {
                    (
                        t,
                        self.names.block(e.target).unwrap_or_default().to_string(),
                    )
                })
            })
            .collect();
        for (trampoline, target) in trampolines {
            self.out
                .push_str(&format!("\n{trampoline}:\n  br label %{target}\n"));
        }
        Ok(())
    }

    /// One `phi` per block argument, one entry per incoming edge.
    fn phis(&mut self, block: Ptr<BasicBlock>) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let args: Vec<Value> = block.deref(ctx).arguments().collect();
        for (j, arg) in args.iter().enumerate() {
            let mut entries = Vec::new();
            for edge in self.cfg.incoming(block) {
                let value = self.names.value(&edge.operands[j]).ok_or_else(|| {
                    ExportError::malformed("llvm.br", "branch operand defined outside the function")
                })?;
                entries.push(format!("[ {value}, %{} ]", edge.phi_label(&self.names)));
            }
            let name = self.opd(*arg)?;
            let ty = self.ty(arg.get_type(ctx))?;
            self.out
                .push_str(&format!("  {name} = phi {ty} {}\n", entries.join(", ")));
        }
        Ok(())
    }

    /// The label of `block`.
    pub(crate) fn label(&self, block: Ptr<BasicBlock>) -> String {
        self.names.block(block).unwrap_or_default().to_string()
    }

    /// The LLVM spelling of `ty`.
    pub(crate) fn ty(&mut self, ty: TypeHandle) -> Result<String, ExportError> {
        self.state.types.write(self.ctx, ty)
    }

    /// The operand text of `value`: `%name` or an inline constant.
    pub(crate) fn opd(&self, value: Value) -> Result<String, ExportError> {
        self.names.value(&value).map(str::to_string).ok_or_else(|| {
            ExportError::malformed(
                "operand",
                "value is not defined in this function (or is a block argument of another)",
            )
        })
    }

    /// `T %name` for `value`; `void` values cannot be operands.
    pub(crate) fn typed_opd(&mut self, value: Value) -> Result<String, ExportError> {
        let ty = value.get_type(self.ctx);
        if is_void(self.ctx, ty) {
            return Err(ExportError::malformed("operand", "a void value is used"));
        }
        Ok(format!("{} {}", self.ty(ty)?, self.opd(value)?))
    }
}
