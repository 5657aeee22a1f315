//! A function: signature, slots for locals, blocks, and the walk over them.

use std::collections::HashMap;

use dialect_mir::ops::{
    AllocaOp, FieldAddrOp, FuncOp, GlobalAddrOp, GotoOp, MakeSliceOp, StoreOp, TrapOp,
    UnreachableOp,
};
use dialect_mir::types::{PtrType, SliceType};
use pliron::basic_block::BasicBlock;
use pliron::builtin::op_interfaces::OneRegionInterface;
use pliron::builtin::types::{FunctionType, IntegerType, Signedness};
use pliron::combine::stream::position::SourcePosition;
use pliron::context::{Context, Ptr};
use pliron::identifier::Identifier;
use pliron::irbuild::inserter::{IRInserter, Inserter};
use pliron::irbuild::listener::DummyListener;
use pliron::location::{Location, Source};
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
    /// Whether ops carry the source location they come from (for the PTX's line info).
    pub locations: bool,
    /// Whether named variables keep their slots and are described for the debugger (the
    /// full debug tier).
    pub variables: bool,
    /// Contract float multiplications and additions into fused multiply-adds in every
    /// function (the build-wide opt-in; a kernel can also ask with `#[kernel(fmad)]`).
    pub fmad: bool,
    /// Whether panics record their message, location and thread for the host
    /// (`CUDA_OXIDE_PANIC_MESSAGES`); without, a panic is a bare trap.
    pub panic_messages: bool,
    /// Whether a failed check (bounds, overflow, division) records its message too; without,
    /// it branches to a bare trap, which later passes may hoist or make fault (release builds).
    pub check_messages: bool,
}

/// A panic function's name and argument types: what a shared failure block is found by.
pub(crate) type FailureKey = (String, Vec<TypeHandle>);

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
    /// The locals that no translated block mentions (those of unreachable blocks, and without
    /// panic messages those only used on a panic path, such as the `&dyn Debug` of
    /// `Result::unwrap`'s failure): they get no slot, and their types are never translated.
    pub(crate) unused: Vec<bool>,
    /// The pliron block of each reachable MIR block.
    pub(crate) blocks: Vec<Option<Ptr<BasicBlock>>>,
    /// The blocks that only lead to a panic, each translated as one trap (when panic messages
    /// are off).
    panic_bound: Vec<bool>,
    /// The block failed assertions branch to when panic messages are off.
    trap_block: Option<Ptr<BasicBlock>>,
    /// In a function whose failed checks share their failure blocks
    /// ([super::panic_policy::shares_failure_blocks]), the block of each panic function (by name
    /// and argument types); `None` in others.
    pub(crate) shared_failure_blocks: Option<HashMap<FailureKey, Ptr<BasicBlock>>>,
    /// How many blocks the function has (counted as they are made, not by walking the list:
    /// `new_block` numbers its labels with it).
    block_count: usize,
    /// Whether panics record their message for the host (`CUDA_OXIDE_PANIC_MESSAGES`).
    pub(crate) panic_messages: bool,
    /// Whether a failed `Assert` (a check) records its message; else it traps.
    pub(crate) check_messages: bool,
    /// Where new ops go.
    pub(crate) inserter: IRInserter<DummyListener>,
    func: FuncOp,
    /// The span of the statement or terminator being translated.
    current_span: Option<Span>,
    /// The span each op was translated from, to point an internal error at the user's code.
    op_spans: HashMap<Ptr<Operation>, Span>,
    /// The source location of each span seen, which every op translated from it carries (for
    /// the debug metadata that puts Rust lines into the PTX); `None` when ops carry none.
    locations: Option<HashMap<Span, Location>>,
    /// The function being translated.
    pub(crate) instance: rustc_public::mir::mono::Instance,
    /// The index of the MIR block being translated.
    pub(crate) current_block: Option<usize>,
    /// The hidden `&Location` parameter of a `#[track_caller]` function.
    pub(crate) caller_location_param: Option<Value>,
    /// The kernel's `#[block_dims]`: its thread-index reads are bounded by it, its block-size
    /// reads are constants (see `gpu_intrinsic`).
    pub(crate) block_dims: Option<[u32; 3]>,
    /// Whether named variables are described for the debugger.
    variables: bool,
}

/// The device function a host-only function's body calls with its message: a panic that
/// records it for the host (the collector collects it beside each host-only function).
pub const HOST_ONLY_PANIC: &str = "cuda_device::shims::panicking::panic_nounwind";

impl FnTranslator<'_> {
    /// The body of a function that exists only for the host: a panic saying so.
    fn host_only_panic(&mut self, name: &str) -> Result<(), TranslationError> {
        let message = format!(
            "device code called `{name}`, which exists only for the host (a function that needs \
             CPU features beyond the x86-64 baseline, `std`, or `thread_local!`); the build \
             warned of it"
        );
        let len = message.len() as u128;
        let global = self.globals.bytes(self.ctx, message.into_bytes(), 1);
        let byte_ty = IntegerType::get(self.ctx, 8, Signedness::Unsigned);
        let byte_ptr = PtrType::get_generic(self.ctx, byte_ty.into()).into();
        let data = self
            .emit(|ctx| GlobalAddrOp::new(ctx, global, byte_ptr))
            .result(self.ctx);
        let len = self.usize_constant(len);
        let str_ty = SliceType::get(self.ctx, byte_ty.into()).into();
        let text = self
            .emit(|ctx| MakeSliceOp::new(ctx, data, len, str_ty))
            .result(self.ctx);
        let callee = crate::naming::path_symbol(HOST_ONLY_PANIC).expect("a plain path");
        self.emit_call(&callee, vec![text], None)?;
        self.emit(UnreachableOp::new);
        Ok(())
    }

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
        locations,
        variables,
        fmad,
        panic_messages,
        check_messages,
    } = fcx;
    let name = Identifier::try_from(function.export_name.as_str()).map_err(|_| {
        TranslationError::unsupported(format!(
            "the symbol name `{}` (not a valid identifier)",
            function.export_name
        ))
    })?;

    let arg_locals: Vec<Local> = (1..=body.arg_locals().len()).collect();
    let mut param_types = Vec::new();
    let mut grid_constants = 0u64;
    let mut param_access = Vec::new();
    for param in parameters(body, &arg_locals)? {
        if let Some(ty) = non_zst_type(ctx, types, param.ty)? {
            if function.is_kernel && is_grid_constant(param.ty) {
                refuse_interior_mutable_grid_constant(param.ty)
                    .map_err(|e| e.at(body.locals()[param.local].span))?;
                if param_types.len() >= 64 {
                    return Err(TranslationError::unsupported(
                        "a `&T` kernel parameter after the 64th parameter".to_string(),
                    ));
                }
                grid_constants |= 1 << param_types.len();
            }
            param_types.push(ty);
            param_access.push(super::param_access::param_access(param.ty));
        }
    }
    let tracks_caller = super::track_caller::requires_caller_location(&function.instance);
    if tracks_caller {
        let location = super::track_caller::caller_location_ty();
        param_types.push(types.translate(ctx, location)?);
    }
    let result_types: Vec<TypeHandle> = non_zst_type(ctx, types, body.ret_local().ty)?
        .into_iter()
        .collect();
    let fn_ty = FunctionType::get(ctx, param_types, result_types);
    let func = FuncOp::new(ctx, name, fn_ty);
    func.set_kernel(ctx, function.is_kernel);
    if panic_messages
        && !function.is_kernel
        && super::panic_policy::is_recorder_inline_never(&function.instance)
    {
        func.set_noinline(ctx);
    }
    func.set_grid_constants(ctx, grid_constants);
    if function.is_kernel {
        func.set_param_access(ctx, &param_access);
    }
    if fmad || (function.is_kernel && super::launch_bounds::asks_for_fmad(body)) {
        func.set_fmad(ctx, true);
    }
    if function.is_kernel
        && let Some(bounds) = super::launch_bounds::declared(body)?
    {
        func.set_launch_bounds(ctx, bounds);
    }
    if function.is_kernel
        && let Some(cluster) = super::launch_bounds::declared_cluster(body)?
    {
        if target.sm < 90 {
            return Err(TranslationError::unsupported(format!(
                "`#[cluster_dims]`: thread-block clusters need sm_90 or newer, but this build \
                 targets {target}; build for sm_90 or newer (`--arch sm_90`)"
            )));
        }
        func.set_cluster_dims(ctx, cluster);
    }
    let block_dims = if function.is_kernel {
        super::launch_bounds::declared_block(body)?
    } else {
        None
    };
    if let Some(block) = block_dims {
        func.set_block_dims(ctx, block);
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
        panic_bound: vec![],
        trap_block: None,
        shared_failure_blocks: super::panic_policy::shares_failure_blocks(body).then(HashMap::new),
        block_count: 1,
        panic_messages,
        check_messages: panic_messages && check_messages,
        inserter: IRInserter::new_at_block_end(entry),
        func,
        current_span: None,
        op_spans: HashMap::new(),
        locations: locations.then(HashMap::new),
        instance: function.instance,
        current_block: None,
        caller_location_param: None,
        block_dims: block_dims.map(|block| block.dims),
        variables,
    };
    let body_loc = fx.location(body.span);
    if !body_loc.is_unknown() {
        let name = reserved_oxide_symbols::strip_all_reserved(&function.instance.name());
        func.get_operation()
            .deref_mut(fx.ctx)
            .set_loc(Location::Named {
                name,
                child_loc: Box::new(body_loc),
            });
    }
    // Without panic messages, a block that can only panic becomes a bare trap (and its
    // message is never built); with them, it is compiled and its panic records the message.
    fx.panic_bound = if panic_messages {
        vec![false; body.blocks.len()]
    } else {
        fx.panic_bound_blocks()
    };
    if function.host_only {
        // Only the host may run it (see `CollectedFunction::host_only`): with panic messages,
        // a panic that names it (the collector collected the panic function), else a trap.
        if panic_messages {
            let name = reserved_oxide_symbols::strip_all_reserved(&function.instance.name());
            fx.host_only_panic(&name)?;
        } else {
            fx.emit(TrapOp::new);
        }
        return Ok(func);
    }
    fx.create_blocks();
    fx.unused = fx.unused_locals(arg_locals.len());
    // The entry block (slots, parameters) is at the function's own line.
    fx.current_span = Some(body.span);
    fx.emit_slots(&arg_locals, entry)?;
    if tracks_caller {
        let last = entry.deref(fx.ctx).get_num_arguments() - 1;
        fx.caller_location_param = Some(entry.deref(fx.ctx).get_argument(last));
    }
    let first = fx.block(0)?;
    fx.emit(|ctx| GotoOp::new(ctx, first));

    for (index, block) in body.blocks.iter().enumerate() {
        let Some(target) = fx.blocks[index] else {
            continue;
        };
        fx.inserter = IRInserter::new_at_block_end(target);
        fx.current_block = Some(index);
        if fx.panic_bound[index] {
            fx.emit(TrapOp::new);
            continue;
        }
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
    /// With `variables`, a slot that holds a named Rust variable is marked for the debugger
    /// and gets the location of the variable's declaration.
    fn emit_slots(&mut self, arg_locals: &[Local], entry: Ptr<BasicBlock>) -> TResult<()> {
        let body = self.body;
        let described = if self.variables {
            super::var_debug_info::described_locals(body)
        } else {
            HashMap::new()
        };
        for (local, decl) in body.locals().iter().enumerate() {
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
                Some(ty) => {
                    let alloca = self.emit(|ctx| AllocaOp::new(ctx, ty));
                    if let Some((variable, info)) = described.get(&local) {
                        alloca.set_debug_variable(self.ctx, variable.encode());
                        let loc = self.location(info.source_info.span);
                        if !loc.is_unknown() {
                            alloca.get_operation().deref_mut(self.ctx).set_loc(loc);
                        }
                    }
                    Some(alloca.result(self.ctx))
                }
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
            if self.blocks[index].is_some() && !self.panic_bound[index] {
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
            let block = self.append_block(label);
            self.blocks[index] = Some(block);
            if self.panic_bound[index] {
                continue;
            }
            let kind = &self.body.blocks[index].terminator.kind;
            match self.decided_switch(kind) {
                Some(target) => stack.push(target),
                None => stack.extend(normal_successors(kind)),
            }
        }
    }

    /// The blocks from which every path ends in a panic (a diverging call into `core`). Such a
    /// block becomes a single `mir.trap`: the panic would abort the kernel anyway, and what
    /// precedes it there is only the panic's message being built (string constants,
    /// formatting) which device code does not need. The collector skips the same blocks.
    fn panic_bound_blocks(&self) -> Vec<bool> {
        use rustc_public::CrateDef;
        use rustc_public::mir::TerminatorKind;
        let blocks = &self.body.blocks;
        let mut bound = vec![false; blocks.len()];
        loop {
            let mut changed = false;
            for (index, block) in blocks.iter().enumerate() {
                if bound[index] {
                    continue;
                }
                let kind = &block.terminator.kind;
                let panics = match kind {
                    TerminatorKind::Call {
                        func, target: None, ..
                    } => self
                        .operand_ty(func)
                        .ok()
                        .and_then(|ty| ty.kind().fn_def().map(|(def, _)| def.krate().name))
                        .is_some_and(|krate| krate == "core" || krate == "alloc"),
                    _ => {
                        let successors = match self.decided_switch(kind) {
                            Some(target) => vec![target],
                            None => normal_successors(kind),
                        };
                        !successors.is_empty() && successors.iter().all(|&s| bound[s])
                    }
                };
                if panics {
                    bound[index] = true;
                    changed = true;
                }
            }
            if !changed {
                return bound;
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
        let label =
            Identifier::try_from(format!("{label}{}", self.block_count)).expect("a valid label");
        self.append_block(label)
    }

    /// A new block without arguments labelled `label`, at the end of the function.
    fn append_block(&mut self, label: Identifier) -> Ptr<BasicBlock> {
        let block = BasicBlock::new(self.ctx, Some(label), vec![]);
        block.insert_at_back(self.func.get_region(self.ctx), self.ctx);
        self.block_count += 1;
        block
    }

    /// A block that traps the kernel: where failed assertions and panics go.
    pub(crate) fn trap_block(&mut self) -> Ptr<BasicBlock> {
        if let Some(block) = self.trap_block {
            return block;
        }
        let block = self.append_block(Identifier::try_from("panic").expect("a valid label"));
        let trap = TrapOp::new(self.ctx);
        trap.get_operation().insert_at_back(block, self.ctx);
        // Every failed check of the function branches here: it is at the function's line.
        let loc = self.location(self.body.span);
        if !loc.is_unknown() {
            trap.get_operation().deref_mut(self.ctx).set_loc(loc);
        }
        self.trap_block = Some(block);
        block
    }

    /// Builds an op with `build` and appends it at the insertion point.
    pub(crate) fn emit<T: Op>(&mut self, build: impl FnOnce(&mut Context) -> T) -> T {
        let op = build(self.ctx);
        self.inserter_append_operation(op.get_operation());
        op
    }

    /// Appends an already built operation at the insertion point; it gets the location of
    /// the statement or terminator being translated.
    pub(crate) fn inserter_append_operation(&mut self, op: Ptr<Operation>) {
        self.inserter.append_operation(self.ctx, op);
        if let Some(span) = self.current_span {
            self.op_spans.insert(op, span);
            let loc = self.location(span);
            if !loc.is_unknown() {
                op.deref_mut(self.ctx).set_loc(loc);
            }
        }
    }

    /// The source location where `span` starts: the file as rustc names it (relative to the
    /// compiler's working directory for the crates of the workspace), line and column;
    /// unknown when ops carry no locations.
    fn location(&mut self, span: Span) -> Location {
        let Some(locations) = &self.locations else {
            return Location::Unknown;
        };
        if let Some(loc) = locations.get(&span) {
            return loc.clone();
        }
        let lines = span.get_lines();
        let loc = match (
            i32::try_from(lines.start_line),
            i32::try_from(lines.start_col),
        ) {
            (Ok(line), Ok(column)) if line > 0 => Location::SrcPos {
                src: Source::new_from_file(self.ctx, span.get_filename()),
                pos: SourcePosition { line, column },
            },
            _ => Location::Unknown,
        };
        if let Some(locations) = &mut self.locations {
            locations.insert(span, loc.clone());
        }
        loc
    }

    /// Verifies every op of the translated function (in time linear in its size, see
    /// `dialect_mir::passes::verify`). The translator means to produce only valid dialect-mir, so a failure
    /// is a bug: it is reported as an internal error at the user's code that produced the op,
    /// rather than later, for the whole module, by the verifier of the pipeline.
    fn verify_ops(&self) -> TResult<()> {
        dialect_mir::passes::verify::verify_nested(self.ctx, self.func.get_operation()).map_err(
            |failure| {
                let bug = TranslationError::internal(format!(
                    "the dialect-mir translated from this code does not verify: {}",
                    failure.message
                ));
                match self.op_spans.get(&failure.op) {
                    Some(span) => bug.at(*span),
                    None => bug,
                }
            },
        )
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

/// Whether a kernel parameter of type `ty` is a grid constant: a shared reference to a sized
/// value (`&T`, not `&[T]`, `&str` or `&dyn Trait`), whose value the host passes and whose
/// address is that of the kernel's parameter (see `kernel_abi::ParamKind::GridConstant`).
fn is_grid_constant(ty: Ty) -> bool {
    use rustc_public::mir::Mutability;
    use rustc_public::ty::{RigidTy, TyKind};
    let TyKind::RigidTy(RigidTy::Ref(_, pointee, Mutability::Not)) = ty.kind() else {
        return false;
    };
    !matches!(
        pointee.kind(),
        TyKind::RigidTy(RigidTy::Slice(_) | RigidTy::Str | RigidTy::Dynamic(..))
    )
}

/// A `&T` kernel parameter is a read-only copy of the host's value in the kernel's parameter
/// space, so a `T` written through a shared reference (an atomic, a `Cell`) cannot be one: the
/// writes would go to a constant bank (LLVM's NVPTX backend crashes on it). Such data lives in
/// device memory and reaches the kernel as a slice.
fn refuse_interior_mutable_grid_constant(ty: Ty) -> TResult<()> {
    use rustc_public::ty::{RigidTy, TyKind};
    let TyKind::RigidTy(RigidTy::Ref(_, pointee, _)) = ty.kind() else {
        return Ok(());
    };
    if super::param_access::is_freeze(pointee) {
        return Ok(());
    }
    Err(TranslationError::unsupported(format!(
        "the kernel parameter type `&{pointee}`: a `&T` kernel parameter is a read-only copy of \
         the host's value in the kernel's parameter space (a grid constant), and `{pointee}` is \
         written through shared references (interior mutability); pass a buffer in device \
         memory as `&[{pointee}]` instead"
    )))
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
        TyKind::RigidTy(RigidTy::Adt(def, _)) => super::types::is_shared_array(def),
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
