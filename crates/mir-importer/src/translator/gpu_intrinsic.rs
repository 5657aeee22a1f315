//! Calls of `cuda_device` intrinsic stubs: each becomes the `nvvm.intrinsic` of its
//! declaration, after checking that the build's target has it.

use dialect_nvvm::{Intrinsic, IntrinsicOp};
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
        let op = self.emit(|ctx| IntrinsicOp::new(ctx, intrinsic, values));
        Ok(op.result(self.ctx))
    }
}
