//! Calls of `cuda_device` intrinsic stubs: each becomes the `nvvm.intrinsic` of its
//! declaration, after checking that the build's target has it.
//!
//! In a kernel with `#[block_dims(x, y, z)]`, every launch has blocks of exactly that shape
//! (PTX `.reqntid`, which the driver enforces, and the launcher checks first), so the kernel's
//! own reads of `blockDim` are the constants and its reads of `threadIdx` are bounded by them.
//! LLVM bounds a thread index only by the product `x·y·z` of `.reqntid`, so the bound of each
//! side is stated here, as `min(index, side - 1)`: the same value under the launch contract, one
//! instruction, and a range LLVM uses to prove tile indexing in bounds.

use dialect_mir::ops::{ConstantOp, LtOp, SelectOp};
use dialect_nvvm::{Intrinsic, IntrinsicOp};
use pliron::builtin::types::{IntegerType, Signedness};
use pliron::r#type::Typed;
use pliron::value::Value;
use rustc_public::mir::Operand;

use super::body::FnTranslator;
use super::error::{TResult, TranslationError, unsupported};

impl FnTranslator<'_> {
    /// A `cuda_device` intrinsic as its `nvvm.intrinsic` op.
    pub(crate) fn translate_gpu_intrinsic(
        &mut self,
        intrinsic: &'static Intrinsic,
        args: &[Operand],
    ) -> TResult<Option<Value>> {
        self.target
            .check(intrinsic)
            .map_err(|err| TranslationError::unsupported(err.to_string()))?;
        let values = self.argument_values(args)?;
        let matches = values.len() == intrinsic.operands.len()
            && values
                .iter()
                .zip(intrinsic.operands)
                .all(|(value, scalar)| scalar.is_type_of(self.ctx, value.get_type(self.ctx)));
        if !matches {
            let declared: Vec<&str> = intrinsic.operands.iter().map(|s| s.rust_name()).collect();
            unsupported!(
                "a call of `{}` whose arguments do not match its declaration `({})` (the stub \
                 and `dialect_nvvm::table` disagree)",
                intrinsic.rust_path,
                declared.join(", ")
            )
        }
        let shape_read = self.block_dims.and_then(|dims| {
            block_shape_read(intrinsic.name).map(|(read, side)| (read, dims[side]))
        });
        if let Some((ShapeRead::BlockSize, side)) = shape_read {
            return Ok(Some(self.u32_constant(side)));
        }
        let op = self.emit(|ctx| IntrinsicOp::new(ctx, intrinsic, values));
        let value = op.result(self.ctx);
        match (shape_read, value) {
            (Some((ShapeRead::ThreadIndex, side)), Some(index)) => {
                let last = self.u32_constant(side - 1);
                let inside = self
                    .emit(|ctx| LtOp::new(ctx, index, last))
                    .result(self.ctx);
                let bounded = self
                    .emit(|ctx| SelectOp::new(ctx, inside, index, last))
                    .result(self.ctx);
                Ok(Some(bounded))
            }
            _ => Ok(value),
        }
    }

    fn u32_constant(&mut self, value: u32) -> Value {
        let u32_ty = IntegerType::get(self.ctx, 32, Signedness::Unsigned);
        self.emit(|ctx| ConstantOp::new_int(ctx, u32_ty, u128::from(value)))
            .result(self.ctx)
    }
}

/// A read of the block's shape.
#[derive(Copy, Clone)]
enum ShapeRead {
    /// `%tid.x/y/z`: below the side.
    ThreadIndex,
    /// `%ntid.x/y/z`: the side.
    BlockSize,
}

/// What intrinsic `name` reads of the block's shape, and along which side (0 to 2).
fn block_shape_read(name: &str) -> Option<(ShapeRead, usize)> {
    let (read, axis) = if let Some(axis) = name.strip_prefix("read_ptx_sreg_tid_") {
        (ShapeRead::ThreadIndex, axis)
    } else {
        (
            ShapeRead::BlockSize,
            name.strip_prefix("read_ptx_sreg_ntid_")?,
        )
    };
    let side = ["x", "y", "z"].iter().position(|a| *a == axis)?;
    Some((read, side))
}
