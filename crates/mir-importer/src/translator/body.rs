//! A function: signature, slots for locals, blocks, and the walk over them.

use std::collections::HashMap;

use dialect_mir::ops::{AllocaOp, FieldAddrOp, FuncOp, GotoOp, StoreOp};
use pliron::basic_block::BasicBlock;
use pliron::builtin::op_interfaces::OneRegionInterface;
use pliron::builtin::types::FunctionType;
use pliron::context::{Context, Ptr};
use pliron::identifier::Identifier;
use pliron::irbuild::inserter::{IRInserter, Inserter};
use pliron::irbuild::listener::DummyListener;
use pliron::op::Op;
use pliron::operation::Operation;
use pliron::r#type::TypeHandle;
use pliron::value::Value;
use rustc_public::mir::{Body, Local};
use rustc_public::ty::{Span, Ty};

use super::error::{TResult, TranslationError};
use super::global::GlobalRegistry;
use super::types::{TypeTranslator, is_zero_sized};
use crate::CollectedFunction;

/// What the translation of one function needs from the rest of the pipeline.
pub struct FunctionContext<'a> {
    /// The module's type cache.
    pub types: &'a mut TypeTranslator,
    /// The module's globals.
    pub globals: &'a mut GlobalRegistry,
    /// Whether rustc was asked for overflow checks (`cfg!(overflow_checks)` in `core`).
    pub overflow_checks: bool,
    /// The GPU architecture: intrinsics it does not have are refused.
    pub target: dialect_nvvm::Target,
}

/// The state of translating one MIR body.
pub struct FnTranslator<'a> {
    pub(crate) ctx: &'a mut Context,
    pub(crate) types: &'a mut TypeTranslator,
    pub(crate) globals: &'a mut GlobalRegistry,
    pub(crate) body: &'a Body,
    pub(crate) overflow_checks: bool,
    pub(crate) target: dialect_nvvm::Target,
    /// The slot of each local, `None` for zero-sized locals.
    pub(crate) slots: Vec<Option<Value>>,
    /// The locals that no translated block mentions (those of unreachable blocks): they get
    /// no slot, and their types are never translated.
    pub(crate) unused: Vec<bool>,
    /// The pliron block of each reachable MIR block.
    pub(crate) blocks: Vec<Option<Ptr<BasicBlock>>>,
    /// The function being translated.
    pub(crate) instance: rustc_public::mir::mono::Instance,
    /// The MIR block being translated.
    pub(crate) current_block: usize,
    /// The hidden `&'static Location` argument of a `#[track_caller]` function.
    pub(crate) caller_location: Option<Value>,
    /// Where new ops go.
    pub(crate) inserter: IRInserter<DummyListener>,
    func: FuncOp,
    /// The span of the statement or terminator being translated.
    current_span: Option<Span>,
    /// The span each op was translated from, to point an internal error at the user's code.
    op_spans: HashMap<Ptr<Operation>, Span>,
}

impl FnTranslator<'_> {
    /// The `mir.func` being built.
    pub(crate) fn current_function(&self) -> FuncOp {
        self.func
    }
}

/// Translates `function` into a `mir.func` appended to `module_block`.
pub fn translate_function(
    ctx: &mut Context,
    module_block: Ptr<BasicBlock>,
    function: &CollectedFunction,
    body: &Body,
    fcx: FunctionContext<'_>,
) -> Result<FuncOp, TranslationError> {
    let FunctionContext {
        types,
        globals,
        overflow_checks,
        target,
    } = fcx;
    let name = Identifier::try_from(function.export_name.as_str()).map_err(|_| {
        TranslationError::unsupported(format!(
            "the symbol name `{}` (not a valid identifier)",
            function.export_name
        ))
    })?;

    let arg_locals: Vec<Local> = (1..=body.arg_locals().len()).collect();
    let mut param_types = Vec::new();
    for param in parameters(body, &arg_locals)? {
        if let Some(ty) = non_zst_type(ctx, types, param.ty)? {
            param_types.push(ty);
        }
    }
    // `#[track_caller]`: the location of the call, last (see `translator::panic`).
    let visible_params = param_types.len();
    let tracks_caller = super::panic::requires_caller_location(&function.instance);
    if tracks_caller {
        let ty = types.translate(ctx, super::panic::caller_location_ty())?;
        param_types.push(ty);
    }
    let result_types: Vec<TypeHandle> = non_zst_type(ctx, types, body.ret_local().ty)?
        .into_iter()
        .collect();
    let fn_ty = FunctionType::get(ctx, param_types, result_types);
    let func = FuncOp::new(ctx, name, fn_ty);
    func.set_kernel(ctx, function.is_kernel);
    if !function.is_kernel && super::panic::is_inline_never(&function.instance) {
        func.set_noinline(ctx);
    }
    if function.is_kernel
        && let Some(bounds) = super::launch_bounds::declared(body)?
    {
        func.set_launch_bounds(ctx, bounds);
    }
    func.get_operation().insert_at_back(module_block, ctx);
    let entry = func
        .entry_block(ctx)
        .expect("a new function has an entry block");

    let mut fx = FnTranslator {
        ctx,
        types,
        globals,
        body,
        overflow_checks,
        target,
        slots: vec![],
        unused: vec![],
        blocks: vec![None; body.blocks.len()],
        instance: function.instance,
        current_block: 0,
        caller_location: None,
        inserter: IRInserter::new_at_block_end(entry),
        func,
        current_span: None,
        op_spans: HashMap::new(),
    };
    if tracks_caller {
        fx.caller_location = Some(entry.deref(fx.ctx).get_argument(visible_params));
    }
    fx.create_blocks();
    fx.unused = fx.unused_locals(arg_locals.len());
    fx.emit_slots(&arg_locals, entry)?;
    let first = fx.block(0)?;
    fx.emit(|ctx| GotoOp::new(ctx, first));

    for (index, block) in body.blocks.iter().enumerate() {
        let Some(target) = fx.blocks[index] else {
            continue;
        };
        fx.inserter = IRInserter::new_at_block_end(target);
        fx.current_block = index;
        for statement in &block.statements {
            fx.current_span = Some(statement.span);
            fx.translate_statement(statement)
                .map_err(|e| e.at(statement.span))?;
        }
        fx.current_span = Some(block.terminator.span);
        fx.translate_terminator(&block.terminator)
            .map_err(|e| e.at(block.terminator.span))?;
    }
    fx.verify_ops()?;
    Ok(func)
}

/// The dialect-mir type of `ty`, or `None` when it is zero-sized.
pub(crate) fn non_zst_type(
    ctx: &mut Context,
    types: &mut TypeTranslator,
    ty: Ty,
) -> TResult<Option<TypeHandle>> {
    if is_zero_sized(ty)? {
        Ok(None)
    } else {
        types.translate(ctx, ty).map(Some)
    }
}

impl FnTranslator<'_> {
    /// One `mir.alloca` per non-zero-sized local, and the parameters stored into theirs.
    fn emit_slots(&mut self, arg_locals: &[Local], entry: Ptr<BasicBlock>) -> TResult<()> {
        for (local, decl) in self.body.locals().iter().enumerate() {
            if self.unused[local] {
                self.slots.push(None);
                continue;
            }
            if holds_shared_array(decl.ty) {
                return Err(TranslationError::unsupported(format!(
                    "a `SharedArray` in a local variable (type `{}`): shared memory is declared \
                     `static mut NAME: SharedArray<T, N> = SharedArray::UNINIT;`",
                    decl.ty
                ))
                .at(decl.span));
            }
            let ty = non_zst_type(self.ctx, self.types, decl.ty).map_err(|e| e.at(decl.span))?;
            let slot = match ty {
                Some(ty) => Some(self.emit(|ctx| AllocaOp::new(ctx, ty)).result(self.ctx)),
                None => None,
            };
            self.slots.push(slot);
        }
        let mut next_param = 0;
        for param in parameters(self.body, arg_locals)? {
            if is_zero_sized(param.ty)? {
                continue;
            }
            let value = entry.deref(self.ctx).get_argument(next_param);
            next_param += 1;
            let Some(slot) = self.slots[param.local] else {
                continue;
            };
            let target = match param.field {
                Some(field) => self
                    .emit(|ctx| FieldAddrOp::new(ctx, slot, field as u32))
                    .result(self.ctx),
                None => slot,
            };
            self.emit(|ctx| StoreOp::new(ctx, value, target));
        }
        Ok(())
    }

    /// The locals that no block to translate mentions (the return place and the arguments
    /// always count as used).
    fn unused_locals(&self, num_args: usize) -> Vec<bool> {
        use rustc_public::mir::visit::{Location, MirVisitor, PlaceContext};
        use rustc_public::mir::{Statement, StatementKind};
        struct Mentions(Vec<bool>);
        impl MirVisitor for Mentions {
            fn visit_local(&mut self, local: &Local, _: PlaceContext, _: Location) {
                self.0[*local] = true;
            }
            fn visit_statement(&mut self, statement: &Statement, location: Location) {
                // Storage markers translate to nothing: they do not need the local's slot.
                if !matches!(
                    statement.kind,
                    StatementKind::StorageLive(_) | StatementKind::StorageDead(_)
                ) {
                    self.super_statement(statement, location);
                }
            }
        }
        let mut mentions = Mentions(vec![false; self.body.locals().len()]);
        for local in 0..=num_args {
            mentions.0[local] = true;
        }
        for (index, block) in self.body.blocks.iter().enumerate() {
            if self.blocks[index].is_some() {
                mentions.visit_basic_block(block);
            }
        }
        mentions.0.into_iter().map(|used| !used).collect()
    }

    /// One pliron block per MIR block reachable from the start without unwind edges (cleanup
    /// blocks are never reached on the GPU, where a panic traps).
    fn create_blocks(&mut self) {
        let mut stack = vec![0];
        while let Some(index) = stack.pop() {
            if self.blocks[index].is_some() {
                continue;
            }
            let label = Identifier::try_from(format!("bb{index}")).expect("a valid label");
            let block = BasicBlock::new(self.ctx, Some(label), vec![]);
            block.insert_at_back(self.func.get_region(self.ctx), self.ctx);
            self.blocks[index] = Some(block);
            let kind = &self.body.blocks[index].terminator.kind;
            match self.decided_switch(kind) {
                Some(target) => stack.push(target),
                None => stack.extend(normal_successors(kind)),
            }
        }
    }

    /// The only target of a branch on a runtime-checks flag, whose value device code fixes:
    /// `ub_checks` and `contract_checks` are off (as in a release build of `core`; what they
    /// guard only panics), `overflow_checks` follows the session. The collector prunes the
    /// same way.
    pub(crate) fn decided_switch(&self, kind: &rustc_public::mir::TerminatorKind) -> Option<usize> {
        use rustc_public::mir::{Operand, RuntimeChecks, TerminatorKind};
        let TerminatorKind::SwitchInt {
            discr: Operand::RuntimeChecks(check),
            targets,
        } = kind
        else {
            return None;
        };
        let enabled = match check {
            RuntimeChecks::OverflowChecks => self.overflow_checks,
            RuntimeChecks::UbChecks | RuntimeChecks::ContractChecks => false,
        };
        Some(
            targets
                .branches()
                .find(|&(value, _)| value == u128::from(enabled))
                .map_or(targets.otherwise(), |(_, target)| target),
        )
    }

    /// The pliron block of MIR block `index`.
    pub(crate) fn block(&self, index: usize) -> TResult<Ptr<BasicBlock>> {
        self.blocks[index].ok_or_else(|| {
            TranslationError::unsupported(format!("a branch to unreachable block bb{index}"))
        })
    }

    /// A new block without arguments at the end of the function, for control flow that
    /// the translation itself introduces; its label is `label` and a number unique in the
    /// function.
    pub(crate) fn new_block(&mut self, label: &str) -> Ptr<BasicBlock> {
        let region = self.func.get_region(self.ctx);
        let number = region.iter(self.ctx).count();
        let label = Identifier::try_from(format!("{label}{number}")).expect("a valid label");
        let block = BasicBlock::new(self.ctx, Some(label), vec![]);
        block.insert_at_back(region, self.ctx);
        block
    }

    /// Builds an op with `build` and appends it at the insertion point.
    pub(crate) fn emit<T: Op>(&mut self, build: impl FnOnce(&mut Context) -> T) -> T {
        let op = build(self.ctx);
        self.inserter_append_operation(op.get_operation());
        op
    }

    /// Appends an already built operation at the insertion point.
    pub(crate) fn inserter_append_operation(&mut self, op: Ptr<Operation>) {
        self.inserter.append_operation(self.ctx, op);
        if let Some(span) = self.current_span {
            self.op_spans.insert(op, span);
        }
    }

    /// Verifies every op of the translated function. The translator means to produce only
    /// valid dialect-mir, so a failure is a bug: it is reported as an internal error at the
    /// user's code that produced the op, rather than later, for the whole module, by the
    /// verifier of the pipeline.
    fn verify_ops(&self) -> TResult<()> {
        let region = self.func.get_region(self.ctx);
        for block in region.iter(self.ctx) {
            for op in block.iter(self.ctx) {
                if let Err(error) = pliron::operation::verify_operation(op, self.ctx) {
                    let bug = TranslationError::internal(format!(
                        "the dialect-mir translated from this code does not verify: {}",
                        error.err
                    ));
                    return Err(match self.op_spans.get(&op) {
                        Some(span) => bug.at(*span),
                        None => bug,
                    });
                }
            }
        }
        Ok(())
    }

    /// The type of a local.
    pub(crate) fn local_ty(&self, local: Local) -> Ty {
        self.body.locals()[local].ty
    }
}

/// One parameter of the translated function: an argument local, or one field of the argument
/// tuple that a `rust-call` body spreads (`spread_arg`), which callers pass field by field.
struct Parameter {
    local: Local,
    field: Option<usize>,
    ty: Ty,
}

fn parameters(body: &Body, arg_locals: &[Local]) -> TResult<Vec<Parameter>> {
    let mut params = Vec::new();
    for &local in arg_locals {
        let ty = body.locals()[local].ty;
        if body.spread_arg() == Some(local) {
            let rustc_public::ty::TyKind::RigidTy(rustc_public::ty::RigidTy::Tuple(fields)) =
                ty.kind()
            else {
                return Err(TranslationError::unsupported(format!(
                    "a `rust-call` body whose spread argument is not a tuple (`{ty}`)"
                )));
            };
            params.extend(fields.into_iter().enumerate().map(|(i, ty)| Parameter {
                local,
                field: Some(i),
                ty,
            }));
        } else {
            params.push(Parameter {
                local,
                field: None,
                ty,
            });
        }
    }
    Ok(params)
}

/// Whether a value of type `ty` holds a `cuda_device::shared::SharedArray` (directly or in an
/// array or tuple): shared memory exists only as `static mut` items, never in a local.
fn holds_shared_array(ty: Ty) -> bool {
    use rustc_public::ty::{RigidTy, TyKind};
    match ty.kind() {
        TyKind::RigidTy(RigidTy::Adt(def, _)) => super::global::is_shared_array(def),
        TyKind::RigidTy(RigidTy::Array(elem, _)) => holds_shared_array(elem),
        TyKind::RigidTy(RigidTy::Tuple(fields)) => fields.into_iter().any(holds_shared_array),
        _ => false,
    }
}

/// The successors of a terminator, without unwind edges.
fn normal_successors(kind: &rustc_public::mir::TerminatorKind) -> Vec<usize> {
    use rustc_public::mir::TerminatorKind::*;
    match kind {
        Goto { target } => vec![*target],
        SwitchInt { targets, .. } => targets.all_targets(),
        Drop { target, .. } | Assert { target, .. } => vec![*target],
        Call { target, .. } => target.iter().copied().collect(),
        InlineAsm { destination, .. } => destination.iter().copied().collect(),
        Return | Resume | Abort | Unreachable => vec![],
    }
}
