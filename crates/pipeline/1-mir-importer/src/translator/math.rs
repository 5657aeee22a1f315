//! Rust's math as `mir.math` operations: `core`'s math intrinsics (`sqrtf32`, `sinf64`,
//! `powif32`, `ctpop`, saturating arithmetic, ...) and the C math functions that `std` and
//! `core` bind (`std::sys::cmath::tanf`, `core::num::imp::libm::cbrt`, ...), which device code
//! reaches through `f32::tan`, `f64::cbrt` and the like. Those C functions have no MIR: a call
//! to one is recognised by its path and becomes the `mir.math` function it computes.

use dialect_mir::ops::*;
use pliron::builtin::types::{IntegerType, Signedness};
use pliron::r#type::Typed;
use pliron::value::Value;
use rustc_public::mir::{Operand, Place};

use super::arith::is_signed;
use super::body::FnTranslator;
use super::error::{TResult, unsupported};

/// A C math function in its two widths: the `f64` name, the `f32` name, and what it computes.
pub type CMathFunction = (&'static str, &'static str, MathFn);

/// The C math functions that `std` (module `std::sys::cmath`) and `core` (module
/// `core::num::imp::libm`) declare for `f32`/`f64` methods, by module. The `lgamma_r` pair also
/// writes the sign of `gamma(x)` through its second argument.
pub const C_MATH_FUNCTIONS: &[(&str, &[CMathFunction])] = &[
    (
        "std::sys::cmath",
        &[
            ("acos", "acosf", MathFn::Acos),
            ("acosh", "acoshf", MathFn::Acosh),
            ("asin", "asinf", MathFn::Asin),
            ("asinh", "asinhf", MathFn::Asinh),
            ("atan", "atanf", MathFn::Atan),
            ("atan2", "atan2f", MathFn::Atan2),
            ("cosh", "coshf", MathFn::Cosh),
            ("erf", "erff", MathFn::Erf),
            ("erfc", "erfcf", MathFn::Erfc),
            ("expm1", "expm1f", MathFn::Expm1),
            ("hypot", "hypotf", MathFn::Hypot),
            ("lgamma_r", "lgammaf_r", MathFn::Lgamma),
            ("log1p", "log1pf", MathFn::Log1p),
            ("sinh", "sinhf", MathFn::Sinh),
            ("tan", "tanf", MathFn::Tan),
            ("tanh", "tanhf", MathFn::Tanh),
            ("tgamma", "tgammaf", MathFn::Tgamma),
        ],
    ),
    (
        "core::num::imp::libm",
        &[
            ("cbrt", "cbrtf", MathFn::Cbrt),
            ("fdim", "fdimf", MathFn::Fdim),
        ],
    ),
];

/// The function computed by the C math function at `path` (`std::sys::cmath::tanf`), if it
/// is one of [C_MATH_FUNCTIONS].
pub fn c_math_function(path: &str) -> Option<MathFn> {
    let (module, name) = path.rsplit_once("::")?;
    C_MATH_FUNCTIONS
        .iter()
        .filter(|(m, _)| *m == module)
        .flat_map(|(_, functions)| functions.iter())
        .find(|(f64_name, f32_name, _)| name == *f64_name || name == *f32_name)
        .map(|&(_, _, function)| function)
}

impl FnTranslator<'_> {
    /// A call of the C math function `function` (see [C_MATH_FUNCTIONS]) named `name`.
    pub(crate) fn translate_c_math(
        &mut self,
        function: MathFn,
        name: &str,
        args: &[Operand],
        destination: &Place,
        target: Option<usize>,
    ) -> TResult<()> {
        let mut values = self.argument_values(args)?;
        if function == MathFn::Lgamma {
            // `lgamma_r(x, &mut sign)`: the sign of gamma(x) goes through the pointer.
            let [x, sign_ptr] = values[..] else {
                unsupported!("`{name}` with {} arguments", values.len())
            };
            values = vec![x];
            let sign = self
                .emit(|ctx| MathOp::new(ctx, MathFn::GammaSign, values.clone()))
                .result(self.ctx);
            let i32_ty = IntegerType::get(self.ctx, 32, Signedness::Signed);
            let sign = self
                .emit(|ctx| FloatToIntOp::new(ctx, sign, i32_ty.into()))
                .result(self.ctx);
            self.emit(|ctx| StoreOp::new(ctx, sign, sign_ptr));
        }
        if values.len() != function.arity() {
            unsupported!("`{name}` with {} arguments", values.len())
        }
        let result = self.math(function, name, values, destination)?;
        self.store_result(destination, Some(result))?;
        self.continue_to(target)
    }

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
/// Float intrinsics are named for their type (`sinf32`, `round_ties_even_f64`, `sinf16`: the
/// lowering computes an `f16` libdevice function in `f32`); the `f128` ones are not matched
/// (the device has no `f128` arithmetic).
pub(crate) fn math_function(intrinsic: &str) -> Option<MathFn> {
    let base = intrinsic
        .strip_suffix("f32")
        .or_else(|| intrinsic.strip_suffix("f64"))
        .or_else(|| intrinsic.strip_suffix("f16"))
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
        // `fmuladd` may fuse or not; fusing always keeps it deterministic.
        "fma" | "fmuladd" => MathFn::Fma,
        "minnum" | "minimum_number_nsz" => MathFn::Minnum,
        "maxnum" | "maximum_number_nsz" => MathFn::Maxnum,
        "minimum" => MathFn::Minimum,
        "maximum" => MathFn::Maximum,
        "copysign" => MathFn::Copysign,
        "powi" => MathFn::Powi,
        "pow" => MathFn::Pow,
        "exp" => MathFn::Exp,
        "exp2" => MathFn::Exp2,
        "log" => MathFn::Log,
        "log2" => MathFn::Log2,
        "log10" => MathFn::Log10,
        "sin" => MathFn::Sin,
        "cos" => MathFn::Cos,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_math_functions_are_found_by_exact_path() {
        assert_eq!(c_math_function("std::sys::cmath::tanf"), Some(MathFn::Tan));
        assert_eq!(c_math_function("std::sys::cmath::tan"), Some(MathFn::Tan));
        assert_eq!(c_math_function("std::sys::cmath::erff"), Some(MathFn::Erf));
        assert_eq!(
            c_math_function("std::sys::cmath::lgammaf_r"),
            Some(MathFn::Lgamma)
        );
        assert_eq!(
            c_math_function("core::num::imp::libm::cbrtf"),
            Some(MathFn::Cbrt)
        );
        assert_eq!(c_math_function("std::sys::cmath::tanf128"), None);
        assert_eq!(c_math_function("app::cmath::tanf"), None);
        assert_eq!(c_math_function("core::num::imp::libm::tanf"), None);
        assert_eq!(c_math_function("tanf"), None);
    }

    #[test]
    fn every_c_math_function_is_a_float_function_named_as_in_c() {
        for (_, functions) in C_MATH_FUNCTIONS {
            for &(f64_name, f32_name, function) in functions.iter() {
                assert!(function.is_float(), "{f64_name}");
                let suffixed = match f64_name.strip_suffix("_r") {
                    Some(stem) => format!("{stem}f_r"),
                    None => format!("{f64_name}f"),
                };
                assert_eq!(f32_name, suffixed);
            }
        }
    }

    #[test]
    fn float_intrinsics_of_every_width_map_alike() {
        for (name, function) in [
            ("sin", MathFn::Sin),
            ("pow", MathFn::Pow),
            ("powi", MathFn::Powi),
            ("log10", MathFn::Log10),
            ("fmuladd", MathFn::Fma),
            ("minimum", MathFn::Minimum),
        ] {
            assert_eq!(math_function(&format!("{name}f32")), Some(function));
            assert_eq!(math_function(&format!("{name}f64")), Some(function));
        }
        assert_eq!(math_function("round_ties_even_f32"), Some(MathFn::Rint));
        assert_eq!(
            math_function("minimum_number_nsz_f64"),
            Some(MathFn::Minnum)
        );
        // `f16` maps alike (computed in `f32` where libdevice is needed); `f128` has nothing.
        assert_eq!(math_function("sinf16"), Some(MathFn::Sin));
        assert_eq!(math_function("sinf128"), None);
    }
}
