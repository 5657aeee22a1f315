//! Calls of `cuda_device` intrinsic stubs: each becomes its `dialect-nvvm` operation.

use pliron::context::Ptr;
use pliron::operation::Operation;
use pliron::value::Value;
use rustc_public::mir::Operand;

use super::body::FnTranslator;
use super::error::{TResult, unsupported};
use crate::intrinsics::Intrinsic;

impl FnTranslator<'_> {
    /// A `cuda_device` intrinsic as its `dialect-nvvm` operation.
    pub(crate) fn translate_gpu_intrinsic(
        &mut self,
        intrinsic: Intrinsic,
        args: &[Operand],
    ) -> TResult<Option<Value>> {
        let op: Ptr<Operation> = match intrinsic {
            Intrinsic::SpecialRegister(register, axis) => {
                dialect_nvvm::new_sreg_read(self.ctx, register, axis)
            }
            Intrinsic::LaneId => {
                pliron::op::Op::get_operation(&dialect_nvvm::ReadPtxSregLaneIdOp::new(self.ctx))
            }
            Intrinsic::Barrier => {
                pliron::op::Op::get_operation(&dialect_nvvm::Barrier0Op::new(self.ctx))
            }
            Intrinsic::Shuffle(mode) => {
                let values = self.argument_values(args)?;
                let [value, lane] = values[..] else {
                    unsupported!("a warp shuffle with {} arguments", values.len())
                };
                dialect_nvvm::new_shuffle(self.ctx, mode, value, lane)
            }
        };
        self.inserter_append_operation(op);
        let op = op.deref(self.ctx);
        Ok((op.get_num_results() > 0).then(|| op.get_result(0)))
    }
}
