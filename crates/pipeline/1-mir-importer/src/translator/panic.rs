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
//!   (`panic_bounds_check(index, len)`, `panic_const_add_overflow()`, ...): a block per
//!   check, or, in a function with hundreds of checks, one per panic function, taking the
//!   call's arguments as block arguments.
//! - The panic functions get the location of the user's code through `#[track_caller]`
//!   ([super::caller_location]), so `unwrap()`, `expect()`, indexing and slicing report the
//!   user's line.
//!
//! All of this only with panic messages on (`CUDA_OXIDE_PANIC_MESSAGES`); without, a block
//! that can only panic is one `trap`. The first point also needs check messages, which a build
//! without debug assertions leaves off unless the variable asks for them: its failed checks
//! branch to the function's one bare trap, while its explicit panics keep their messages.

use dialect_mir::ops::UnreachableOp;
use pliron::basic_block::BasicBlock;
use pliron::context::Ptr;
use pliron::irbuild::inserter::IRInserter;
use pliron::r#type::{TypeHandle, Typed};
use pliron::value::Value;
use rustc_middle::ty;
use rustc_public::mir::{AssertMessage, Operand};
use rustc_public::rustc_internal::{internal, stable};

use super::body::FnTranslator;
use super::error::{TResult, unsupported};
use super::panic_policy::assert_panic_function;

impl FnTranslator<'_> {
    /// The failure edge of an `Assert` that fails with `msg`: the block it branches to and the
    /// values it passes. In a function with few checks, a block of its own per check computes
    /// the panic function's operands (and the location) and calls it; LLVM lays such blocks
    /// out of line best. In one with more than
    /// [super::panic_policy::SHARED_FAILURE_BLOCKS_ABOVE], the operands are computed at the
    /// check and passed to one block per panic function, shared by every check that calls it:
    /// a generated function with thousands of checks then has a few failure blocks, not
    /// thousands of loop exits (LLVM's loop passes, LCSSA first, slow down with the number of
    /// exits of each loop).
    pub(crate) fn assert_failure(
        &mut self,
        msg: &AssertMessage,
    ) -> TResult<(Ptr<BasicBlock>, Vec<Value>)> {
        if self.shared_failure_blocks.is_none() {
            let block = self.new_block("panic");
            self.emit_in(block, |fx| {
                let (name, values) = fx.assert_failure_call(msg)?;
                fx.emit_panic_call(&name, values)
            })?;
            return Ok((block, vec![]));
        }
        let (name, values) = self.assert_failure_call(msg)?;
        let types: Vec<TypeHandle> = values.iter().map(|v| v.get_type(self.ctx)).collect();
        let key = (name, types);
        if let Some(&block) = self
            .shared_failure_blocks
            .as_ref()
            .and_then(|b| b.get(&key))
        {
            return Ok((block, values));
        }
        let block = self.new_block("panic");
        let arguments = key
            .1
            .iter()
            .map(|&ty| {
                let index = BasicBlock::push_argument(block, self.ctx, ty);
                block.deref(self.ctx).get_argument(index)
            })
            .collect();
        self.emit_in(block, |fx| fx.emit_panic_call(&key.0, arguments))?;
        if let Some(blocks) = &mut self.shared_failure_blocks {
            blocks.insert(key, block);
        }
        Ok((block, values))
    }

    /// Runs `emit` with new ops going to the end of `block`, then back where they went.
    fn emit_in(
        &mut self,
        block: Ptr<BasicBlock>,
        emit: impl FnOnce(&mut Self) -> TResult<()>,
    ) -> TResult<()> {
        let saved = std::mem::replace(&mut self.inserter, IRInserter::new_at_block_end(block));
        let result = emit(self);
        self.inserter = saved;
        result
    }

    /// A call of the panic function `name` with `values`, which does not return.
    fn emit_panic_call(&mut self, name: &str, values: Vec<Value>) -> TResult<()> {
        self.emit_call(name, values, None)?;
        self.emit(UnreachableOp::new);
        Ok(())
    }

    /// The panic function for `msg` and its arguments, computed at the check.
    fn assert_failure_call(&mut self, msg: &AssertMessage) -> TResult<(String, Vec<Value>)> {
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
        if super::track_caller::requires_caller_location(&callee) {
            values.push(self.caller_location()?);
        }
        Ok((crate::naming::export_name(&callee, false), values))
    }
}
