//! Statements: assignments, discriminant writes and `copy_nonoverlapping`; the rest has no
//! runtime effect on the GPU.

use dialect_mir::ops::SetDiscriminantOp;
use rustc_public::mir::{NonDivergingIntrinsic, Statement, StatementKind};
use rustc_public_bridge::IndexedVal;

use super::body::FnTranslator;
use super::error::{TResult, unsupported};

impl FnTranslator<'_> {
    pub(crate) fn translate_statement(&mut self, statement: &Statement) -> TResult<()> {
        match &statement.kind {
            StatementKind::Assign(place, rvalue) => self.translate_assign(place, rvalue),
            StatementKind::SetDiscriminant {
                place,
                variant_index,
            } => {
                let place = self.translate_place(place)?;
                if let Some(ptr) = place.thin()? {
                    self.emit(|ctx| {
                        SetDiscriminantOp::new(ctx, ptr, variant_index.to_index() as u32)
                    });
                }
                Ok(())
            }
            StatementKind::Intrinsic(NonDivergingIntrinsic::Assume(_)) => Ok(()),
            StatementKind::Intrinsic(NonDivergingIntrinsic::CopyNonOverlapping(copy)) => {
                let src = self.translate_operand(&copy.src)?;
                let dst = self.translate_operand(&copy.dst)?;
                let count = self.translate_operand(&copy.count)?;
                match (dst, src, count) {
                    (Some(dst), Some(src), Some(count)) => {
                        self.copy(dst, src, count, false, false);
                        Ok(())
                    }
                    _ => unsupported!("`copy_nonoverlapping` with a zero-sized operand"),
                }
            }
            StatementKind::FakeRead(..)
            | StatementKind::StorageLive(_)
            | StatementKind::StorageDead(_)
            | StatementKind::PlaceMention(_)
            | StatementKind::AscribeUserType { .. }
            | StatementKind::Coverage(_)
            | StatementKind::ConstEvalCounter
            | StatementKind::Nop => Ok(()),
        }
    }
}
