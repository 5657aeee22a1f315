//! Panics: the failure edge of `Assert` terminators, and `#[track_caller]` locations.
//!
//! A panic in device code runs like on the CPU up to `core`'s panic entry points, which
//! device versions replace (`cuda_device::shims::panicking`, listed in [crate::shims]): they
//! hand the message and its location to `cuda_device::panic::record`, which writes them
//! for the host and traps. So the translator compiles panic paths like any other code (in
//! blocks that only a failure reaches, which LLVM places out of line); it adds two things:
//!
//! - An `Assert` terminator (bounds, overflow and division checks) branches, when it fails, to
//!   a block that calls the panic function rustc's own backends call for its message
//!   (`panic_bounds_check(index, len)`, `panic_const_add_overflow()`, ...).
//! - `#[track_caller]`, as rustc's backends implement it: such a function takes one more
//!   argument, the `&'static Location` of its call; a call to it passes either the caller's
//!   own location argument (when the caller is `#[track_caller]` too) or a constant
//!   `Location` of the call's span, resolved through inlined scopes as rustc does
//!   (`Body::caller_location_span`). `core::intrinsics::caller_location` returns the same
//!   value. So `unwrap()`, `expect()`, indexing and slicing report the user's line.

use dialect_mir::ops::{GlobalAddrOp, UnreachableOp};
use pliron::basic_block::BasicBlock;
use pliron::context::Ptr;
use pliron::irbuild::inserter::IRInserter;
use pliron::value::Value;
use rustc_middle::ty;
use rustc_public::mir::mono::Instance;
use rustc_public::mir::{AssertMessage, Operand};
use rustc_public::rustc_internal::{internal, stable};

use super::body::FnTranslator;
use super::error::{TResult, unsupported};
use super::global::Target;

/// The panic function an `Assert` that fails with `msg` calls, as rustc's backends choose it.
pub fn assert_panic_function<O>(
    msg: &rustc_middle::mir::AssertKind<O>,
) -> rustc_hir::lang_items::LangItem {
    use rustc_hir::lang_items::LangItem;
    use rustc_middle::mir::AssertKind;
    match msg {
        AssertKind::BoundsCheck { .. } => LangItem::PanicBoundsCheck,
        AssertKind::MisalignedPointerDereference { .. } => {
            LangItem::PanicMisalignedPointerDereference
        }
        other => other.panic_function(),
    }
}

/// Whether `instance` takes the hidden `&'static Location` argument of `#[track_caller]`.
pub(crate) fn requires_caller_location(instance: &Instance) -> bool {
    ty::tls::with(|tcx| internal(tcx, *instance).def.requires_caller_location(tcx))
}

/// Whether `instance`'s function is `#[inline(never)]` (as the panic recorder is).
pub(crate) fn is_inline_never(instance: &Instance) -> bool {
    ty::tls::with(|tcx| {
        let internal = internal(tcx, *instance);
        let ty::InstanceKind::Item(def_id) = internal.def else {
            return false;
        };
        matches!(
            tcx.codegen_fn_attrs(def_id).inline,
            rustc_hir::attrs::InlineAttr::Never
        )
    })
}

/// The type of that argument: `&'static core::panic::Location<'static>`.
pub(crate) fn caller_location_ty() -> rustc_public::ty::Ty {
    ty::tls::with(|tcx| stable(tcx.caller_location_ty()))
}

impl FnTranslator<'_> {
    /// The `&'static Location` that a `#[track_caller]` callee of the current terminator gets
    /// (and that `caller_location` returns there).
    pub(crate) fn caller_location_here(&mut self) -> TResult<Value> {
        let own = self.caller_location;
        let block = self.current_block;
        let instance = self.instance;
        let found = ty::tls::with(|tcx| {
            let internal_instance = internal(tcx, instance);
            let body = tcx.instance_mir(internal_instance.def);
            let block = rustc_middle::mir::BasicBlock::from_usize(block);
            let terminator = body.basic_blocks[block].terminator();
            let mut source_info = terminator.source_info;
            // A call's location is the span of the call itself (`unwrap()` of
            // `x.iter().position(f).unwrap()`), as rustc's backends take it.
            if let rustc_middle::mir::TerminatorKind::Call { fn_span, .. } = &terminator.kind {
                source_info.span = *fn_span;
            }
            body.caller_location_span(source_info, own.map(Ok), tcx, Err)
        });
        match found {
            Ok(value) => Ok(value),
            Err(span) => self.location_constant(span),
        }
    }

    /// The address of a constant `Location` of `span`, as rustc lays it out.
    fn location_constant(&mut self, span: rustc_span::Span) -> TResult<Value> {
        let alloc = ty::tls::with(|tcx| match tcx.span_as_caller_location(span) {
            rustc_middle::mir::ConstValue::Scalar(rustc_middle::mir::interpret::Scalar::Ptr(
                ptr,
                _,
            )) => Some(stable(ptr.provenance.alloc_id())),
            _ => None,
        });
        let Some(alloc) = alloc else {
            unsupported!("a caller location that rustc does not give as a pointer")
        };
        let Target::Global(name) = self.globals.target(self.ctx, alloc)? else {
            unsupported!("a caller location that is a function")
        };
        let ty = self.types.translate(self.ctx, caller_location_ty())?;
        Ok(self
            .emit(|ctx| GlobalAddrOp::new(ctx, name, ty))
            .result(self.ctx))
    }

    /// The block an `Assert` that fails with `msg` branches to: a call of the panic function
    /// for `msg`, with its operands and the location.
    pub(crate) fn assert_failure_block(&mut self, msg: &AssertMessage) -> TResult<Ptr<BasicBlock>> {
        let block = self.new_block("panic");
        let saved = std::mem::replace(&mut self.inserter, IRInserter::new_at_block_end(block));
        let result = self.emit_assert_failure(msg);
        self.inserter = saved;
        result.map(|()| block)
    }

    fn emit_assert_failure(&mut self, msg: &AssertMessage) -> TResult<()> {
        let operands: Vec<&Operand> = match msg {
            AssertMessage::BoundsCheck { len, index } => vec![index, len],
            AssertMessage::MisalignedPointerDereference { required, found } => {
                vec![required, found]
            }
            AssertMessage::InvalidEnumConstruction(source) => vec![source],
            _ => vec![],
        };
        let block = self.current_block;
        let instance = self.instance;
        let callee = ty::tls::with(|tcx| {
            let body = tcx.instance_mir(internal(tcx, instance).def);
            let block = rustc_middle::mir::BasicBlock::from_usize(block);
            let terminator = body.basic_blocks[block].terminator();
            let rustc_middle::mir::TerminatorKind::Assert { msg, .. } = &terminator.kind else {
                return None;
            };
            let def_id =
                tcx.require_lang_item(assert_panic_function(msg), terminator.source_info.span);
            Some(stable(ty::Instance::mono(tcx, def_id)))
        });
        let Some(callee) = callee else {
            unsupported!("an assertion whose MIR rustc does not give")
        };
        let mut values = Vec::with_capacity(operands.len() + 1);
        for operand in operands {
            if let Some(value) = self.translate_operand(operand)? {
                values.push(value);
            }
        }
        if requires_caller_location(&callee) {
            values.push(self.caller_location_here()?);
        }
        let name = crate::naming::export_name(&callee, false);
        self.emit_call(&name, values, None)?;
        self.emit(UnreachableOp::new);
        Ok(())
    }
}
