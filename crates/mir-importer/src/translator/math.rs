//! Float and integer math intrinsics of `core` (`sqrtf32`, `fmaf64`, `ctpop`, saturating
//! arithmetic, ...) as `mir.math` operations.

use dialect_mir::ops::*;
use pliron::r#type::Typed;
use pliron::value::Value;
use rustc_public::mir::Place;

use super::body::FnTranslator;
use super::core_intrinsic::is_signed;
use super::error::{TResult, unsupported};

impl FnTranslator<'_> {
    /// A `mir.math` operation. The bit-counting intrinsics return `u32` whatever their operand
    /// type, so their result is converted to the destination's type.
    pub(crate) fn math(
        &mut self,
        function: MathFn,
        name: &str,
        values: Vec<Value>,
        destination: &Place,
    ) -> TResult<Value> {
        let Some(&first) = values.first() else {
            unsupported!("the intrinsic `{name}` without arguments")
        };
        let operand_ty = first.get_type(self.ctx);
        let function = match function {
            MathFn::SaddSat | MathFn::UaddSat => {
                if is_signed(self.ctx, operand_ty) {
                    MathFn::SaddSat
                } else {
                    MathFn::UaddSat
                }
            }
            MathFn::SsubSat | MathFn::UsubSat => {
                if is_signed(self.ctx, operand_ty) {
                    MathFn::SsubSat
                } else {
                    MathFn::UsubSat
                }
            }
            other => other,
        };
        let result = self
            .emit(|ctx| MathOp::new(ctx, function, values))
            .result(self.ctx);
        let to = self.place_type(destination)?;
        let to_mir = self.types.translate(self.ctx, to)?;
        if to_mir == operand_ty {
            Ok(result)
        } else {
            Ok(self
                .emit(|ctx| IntCastOp::new(ctx, result, to_mir))
                .result(self.ctx))
        }
    }
}

/// The `mir.math` function of a `core` intrinsic (saturating ones are refined by signedness).
pub(crate) fn math_function(intrinsic: &str) -> Option<MathFn> {
    let base = intrinsic
        .strip_suffix("f32")
        .or_else(|| intrinsic.strip_suffix("f64"))
        .unwrap_or(intrinsic)
        .trim_end_matches('_');
    Some(match base {
        "sqrt" => MathFn::Sqrt,
        "fabs" => MathFn::Fabs,
        "floor" => MathFn::Floor,
        "ceil" => MathFn::Ceil,
        "trunc" => MathFn::Trunc,
        "round" => MathFn::Round,
        "round_ties_even" | "rint" => MathFn::Rint,
        "fma" => MathFn::Fma,
        "minnum" | "minimum_number_nsz" => MathFn::Minnum,
        "maxnum" | "maximum_number_nsz" => MathFn::Maxnum,
        "copysign" => MathFn::Copysign,
        "ctpop" => MathFn::Ctpop,
        "ctlz" | "ctlz_nonzero" => MathFn::Ctlz,
        "cttz" | "cttz_nonzero" => MathFn::Cttz,
        "bswap" => MathFn::Bswap,
        "bitreverse" => MathFn::Bitreverse,
        "saturating_add" => MathFn::SaddSat,
        "saturating_sub" => MathFn::SsubSat,
        _ => return None,
    })
}
