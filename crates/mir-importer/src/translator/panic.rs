//! Panics with messages: the failure edge of `Assert` terminators.
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
//! - The panic functions get the location of the user's code through `#[track_caller]`
//!   ([super::caller_location]), so `unwrap()`, `expect()`, indexing and slicing report the
//!   user's line.
//!
//! All of this only with panic messages on (`CUDA_OXIDE_PANIC_MESSAGES`, on by default in
//! builds with debug assertions); without, a block that can only panic is one `trap`.

use dialect_mir::ops::UnreachableOp;
use pliron::basic_block::BasicBlock;
use pliron::context::Ptr;
use pliron::irbuild::inserter::IRInserter;
use rustc_middle::ty;
use rustc_public::mir::mono::Instance;
use rustc_public::mir::{AssertMessage, Operand};
use rustc_public::rustc_internal::{internal, stable};

use super::body::FnTranslator;
use super::error::{TResult, unsupported};

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

/// Whether `instance` is one of the panic recorder's `#[inline(never)]` functions
/// (`cuda_device::panic`), which stay out of line (LLVM `noinline`, PTX `.noinline`) so that
/// the recorder is one copy per module, outside every kernel's body. Other functions'
/// `#[inline(never)]` is left to LLVM, as it always was (the `#[kernel(fmad)]` marker must
/// still disappear).
pub(crate) fn is_recorder_inline_never(instance: &Instance) -> bool {
    if !crate::naming::canonical_path(instance).contains("cuda_device::panic::") {
        return false;
    }
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

impl FnTranslator<'_> {
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
        let Some(block) = self.current_block else {
            unsupported!("an assertion outside a block")
        };
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
        if super::caller_location::requires_caller_location(&callee) {
            values.push(self.caller_location()?);
        }
        let name = crate::naming::export_name(&callee, false);
        self.emit_call(&name, values, None)?;
        self.emit(UnreachableOp::new);
        Ok(())
    }
}
