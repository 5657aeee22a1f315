//! Block terminators. Unwind edges are dropped: on the GPU a panic traps the kernel, so
//! cleanup blocks are never reached.
//!
//! A worked example of the alloca form: MIR `bb0: { _1 = 42; goto -> bb1 } bb1: { _0 = _1;
//! return }` becomes
//!
//! ```text
//! ^entry: %s0 = mir.alloca; %s1 = mir.alloca; mir.goto ^bb0
//! ^bb0:   mir.store *%s1 = 42; mir.goto ^bb1
//! ^bb1:   %v = mir.load %s1; mir.store *%s0 = %v; %r = mir.load %s0; mir.return %r
//! ```
//!
//! and mem2reg turns it into `^bb1(%r)`-style SSA.

use dialect_mir::ops::{CondBrOp, GotoOp, NotOp, ReturnOp, SwitchIntOp, TrapOp, UnreachableOp};
use dialect_mir::types::is_bool;
use pliron::r#type::Typed;
use pliron::value::Value;
use rustc_public::mir::{Operand, Terminator, TerminatorKind};

use super::body::FnTranslator;
use super::error::{TResult, unsupported};

impl FnTranslator<'_> {
    pub(crate) fn translate_terminator(&mut self, terminator: &Terminator) -> TResult<()> {
        match &terminator.kind {
            TerminatorKind::Goto { target } => self.goto(*target),
            TerminatorKind::SwitchInt { .. } if self.decided_switch(&terminator.kind).is_some() => {
                let target = self
                    .decided_switch(&terminator.kind)
                    .expect("checked above");
                self.goto(target)
            }
            TerminatorKind::SwitchInt { discr, targets } => {
                let value = self.discriminant_value(discr)?;
                let otherwise = self.block(targets.otherwise())?;
                let ty = value.get_type(self.ctx);
                let branches: Vec<(u128, usize)> = targets.branches().collect();
                if is_bool(self.ctx, ty) && branches.len() == 1 && branches[0].0 == 0 {
                    // `if`: case 0 is the false edge.
                    let when_false = self.block(branches[0].1)?;
                    self.emit(|ctx| CondBrOp::new(ctx, value, otherwise, when_false));
                    return Ok(());
                }
                let cases = branches
                    .into_iter()
                    .map(|(case, target)| Ok((case, self.block(target)?)))
                    .collect::<TResult<Vec<_>>>()?;
                self.emit(|ctx| SwitchIntOp::new(ctx, value, cases, otherwise));
                Ok(())
            }
            TerminatorKind::Return => {
                let value = match self.slots[0] {
                    Some(_) => self.read_place(&rustc_public::mir::Place::from(0))?,
                    None => None,
                };
                self.emit(|ctx| ReturnOp::new(ctx, value));
                Ok(())
            }
            TerminatorKind::Unreachable => {
                self.emit(UnreachableOp::new);
                Ok(())
            }
            TerminatorKind::Resume | TerminatorKind::Abort => {
                self.emit(TrapOp::new);
                Ok(())
            }
            TerminatorKind::Assert {
                cond,
                expected,
                target,
                msg,
                ..
            } => {
                let mut holds = self.discriminant_value(cond)?;
                if !*expected {
                    holds = self.emit(|ctx| NotOp::new(ctx, holds)).result(self.ctx);
                }
                let target = self.block(*target)?;
                let (fail, values) = if self.check_messages {
                    self.assert_failure(msg)?
                } else {
                    (self.trap_block(), vec![])
                };
                self.emit(|ctx| CondBrOp::new_with_args(ctx, holds, target, vec![], fail, values));
                Ok(())
            }
            TerminatorKind::Drop { place, target, .. } => {
                self.translate_drop(place)?;
                self.goto(*target)
            }
            TerminatorKind::Call {
                func,
                args,
                destination,
                target,
                ..
            } => self.translate_call(func, args, destination, *target),
            TerminatorKind::InlineAsm {
                template,
                operands,
                options,
                destination,
                ..
            } => self.translate_inline_asm(template, operands, options, *destination),
        }
    }

    /// Branches to MIR block `target`.
    pub(crate) fn goto(&mut self, target: usize) -> TResult<()> {
        let block = self.block(target)?;
        self.emit(|ctx| GotoOp::new(ctx, block));
        Ok(())
    }

    fn discriminant_value(&mut self, operand: &Operand) -> TResult<Value> {
        match self.translate_operand(operand)? {
            Some(value) => Ok(value),
            None => unsupported!("branching on a zero-sized value"),
        }
    }
}
