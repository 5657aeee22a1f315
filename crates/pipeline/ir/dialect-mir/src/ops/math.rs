//! `mir.math`: the pure math and bit-manipulation functions of Rust (`f32::sqrt`, `f64::sin`,
//! `u32::count_ones`, `i64::saturating_add`, `%` on floats, ...) as one op whose [MathFn]
//! attribute names the function. Every operand and the result share one type `T` (a float for
//! the float functions, a signed or unsigned integer for the integer ones; counts such as
//! `ctpop` are returned as `T`, and the translator casts them to Rust's `u32`), except the
//! exponent of `powi`, an `i32`.

use pliron::{
    builtin::{
        op_interfaces::OneResultInterface,
        types::{IntegerType, Signedness},
    },
    combine::{Parser, many1, parser::char::alpha_num, satisfy},
    common_traits::Verify,
    context::Context,
    derive::{pliron_attr, pliron_op},
    impl_printable_for_display, input_error,
    op::Op,
    operation::Operation,
    parsable::{IntoParseResult, Parsable, ParseResult, StateStream, StreamLocation},
    result::Result,
    r#type::Typed,
    value::Value,
};
use thiserror::Error;

use super::{expect_type, expect_type_eq, invalid, no_side_effects, opd_ty, res, res_ty};
use crate::types::{is_float, is_rust_int};

/// Declares [MathFn] from one table: each function's variant, printed name, and operands.
macro_rules! math_functions {
    ($($(#[doc = $doc:literal])* $variant:ident = $name:literal, $kind:ident $(($n:literal))?;)*) => {
        /// The function computed by a `mir.math` op, named as in C's `libm` and LLVM
        /// (`sqrt`, `atan2`, `sadd_sat`). What the function *means* is fixed here, with Rust's
        /// semantics; how it is computed on the GPU (an LLVM intrinsic, a PTX instruction,
        /// NVIDIA's libdevice) is the lowering's choice.
        ///
        /// Printed as its lower-case name (`sqrt`, `sadd_sat`).
        #[pliron_attr(name = "mir.math_fn", verifier = "succ")]
        #[derive(PartialEq, Eq, Clone, Copy, Debug, Hash)]
        pub enum MathFn {
            $($(#[doc = $doc])* $variant,)*
        }

        impl MathFn {
            /// Every function, in declaration order.
            pub const ALL: [MathFn; [$($name),*].len()] = [$(MathFn::$variant),*];

            /// The lower-case name, as printed.
            pub fn name(self) -> &'static str {
                match self {
                    $(MathFn::$variant => $name,)*
                }
            }

            /// The operands the function takes.
            pub fn operands(self) -> Operands {
                match self {
                    $(MathFn::$variant => Operands::$kind $(($n))?,)*
                }
            }
        }
    };
}

/// The operands of a [MathFn]. The result always has the type of the first operand.
#[derive(PartialEq, Eq, Clone, Copy, Debug, Hash)]
pub enum Operands {
    /// This many operands of one float type.
    Float(usize),
    /// This many operands of one signed or unsigned integer type.
    Int(usize),
    /// A float and an `i32` exponent (`powi`).
    FloatAndI32,
}

math_functions! {
    /// Square root (float, correctly rounded).
    Sqrt = "sqrt", Float(1);
    /// Absolute value (float).
    Fabs = "fabs", Float(1);
    /// Round down (float).
    Floor = "floor", Float(1);
    /// Round up (float).
    Ceil = "ceil", Float(1);
    /// Round toward zero (float).
    Trunc = "trunc", Float(1);
    /// Round to nearest, ties away from zero (float, Rust's `round`).
    Round = "round", Float(1);
    /// Round to nearest, ties to even (float, Rust's `round_ties_even`).
    Rint = "rint", Float(1);
    /// Fused multiply-add `a * b + c`, rounded once (float).
    Fma = "fma", Float(3);
    /// Minimum ignoring NaN (float, Rust's `min`).
    Minnum = "minnum", Float(2);
    /// Maximum ignoring NaN (float, Rust's `max`).
    Maxnum = "maxnum", Float(2);
    /// Minimum propagating NaN, `-0 < +0` (float, IEEE 754-2019 `minimum`, Rust's `minimum`).
    Minimum = "minimum", Float(2);
    /// Maximum propagating NaN, `-0 < +0` (float, IEEE 754-2019 `maximum`, Rust's `maximum`).
    Maximum = "maximum", Float(2);
    /// Magnitude of the first operand with the sign of the second (float).
    Copysign = "copysign", Float(2);
    /// Remainder of `a / b` truncated toward zero, exact (float, Rust's `%`, C's `fmod`).
    Fmod = "fmod", Float(2);
    /// Positive difference: `a - b` if `a > b`, else `+0`; NaN if either is (float, C's `fdim`,
    /// Rust's deprecated `abs_sub`).
    Fdim = "fdim", Float(2);
    /// `a` to the integer power `n`, by repeated squaring as LLVM's `powi` (float, `i32`).
    Powi = "powi", FloatAndI32;
    /// `a` to the power `b` (float).
    Pow = "pow", Float(2);
    /// `e` to the power `a` (float).
    Exp = "exp", Float(1);
    /// 2 to the power `a` (float).
    Exp2 = "exp2", Float(1);
    /// `e^a - 1`, accurate near 0 (float, Rust's `exp_m1`).
    Expm1 = "expm1", Float(1);
    /// Natural logarithm (float, Rust's `ln`).
    Log = "log", Float(1);
    /// Base-2 logarithm (float).
    Log2 = "log2", Float(1);
    /// Base-10 logarithm (float).
    Log10 = "log10", Float(1);
    /// `ln(1 + a)`, accurate near 0 (float, Rust's `ln_1p`).
    Log1p = "log1p", Float(1);
    /// Cube root (float).
    Cbrt = "cbrt", Float(1);
    /// `sqrt(a^2 + b^2)` without undue overflow (float).
    Hypot = "hypot", Float(2);
    /// Sine (float, radians).
    Sin = "sin", Float(1);
    /// Cosine (float, radians).
    Cos = "cos", Float(1);
    /// Tangent (float, radians).
    Tan = "tan", Float(1);
    /// Arcsine (float).
    Asin = "asin", Float(1);
    /// Arccosine (float).
    Acos = "acos", Float(1);
    /// Arctangent (float).
    Atan = "atan", Float(1);
    /// Arctangent of `a / b` in the quadrant of the point `(b, a)` (float).
    Atan2 = "atan2", Float(2);
    /// Hyperbolic sine (float).
    Sinh = "sinh", Float(1);
    /// Hyperbolic cosine (float).
    Cosh = "cosh", Float(1);
    /// Hyperbolic tangent (float).
    Tanh = "tanh", Float(1);
    /// Inverse hyperbolic sine (float).
    Asinh = "asinh", Float(1);
    /// Inverse hyperbolic cosine (float).
    Acosh = "acosh", Float(1);
    /// The gamma function (float, Rust's `gamma`).
    Tgamma = "tgamma", Float(1);
    /// `ln |gamma(a)|` (float, the value of Rust's `ln_gamma`).
    Lgamma = "lgamma", Float(1);
    /// The sign of `gamma(a)` as `lgamma_r` reports it, `1.0` or `-1.0`: negative for `-0`
    /// and for negative non-integers whose floor is odd; positive otherwise, NaN and poles
    /// included (float, the sign of Rust's `ln_gamma`).
    GammaSign = "gamma_sign", Float(1);
    /// The error function (float).
    Erf = "erf", Float(1);
    /// The complementary error function `1 - erf(a)` (float).
    Erfc = "erfc", Float(1);
    /// Number of one bits (integer).
    Ctpop = "ctpop", Int(1);
    /// Number of leading zero bits, the width for zero (integer).
    Ctlz = "ctlz", Int(1);
    /// Number of trailing zero bits, the width for zero (integer).
    Cttz = "cttz", Int(1);
    /// Byte order reversed (integer).
    Bswap = "bswap", Int(1);
    /// Bit order reversed (integer).
    Bitreverse = "bitreverse", Int(1);
    /// Signed saturating addition (integer).
    SaddSat = "sadd_sat", Int(2);
    /// Unsigned saturating addition (integer).
    UaddSat = "uadd_sat", Int(2);
    /// Signed saturating subtraction (integer).
    SsubSat = "ssub_sat", Int(2);
    /// Unsigned saturating subtraction (integer).
    UsubSat = "usub_sat", Int(2);
    /// Funnel shift left: the high half of `a:b << (c mod width)` (integer, `rotate_left`
    /// with `a == b`).
    Fshl = "fshl", Int(3);
    /// Funnel shift right: the low half of `a:b >> (c mod width)` (integer).
    Fshr = "fshr", Int(3);
    /// Signed minimum (integer).
    Smin = "smin", Int(2);
    /// Signed maximum (integer).
    Smax = "smax", Int(2);
    /// Unsigned minimum (integer).
    Umin = "umin", Int(2);
    /// Unsigned maximum (integer).
    Umax = "umax", Int(2);
    /// Absolute value, wrapping for the minimum (integer).
    Abs = "abs", Int(1);
}

impl MathFn {
    /// The function named `name`.
    pub fn from_name(name: &str) -> Option<MathFn> {
        MathFn::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The number of operands.
    pub fn arity(self) -> usize {
        match self.operands() {
            Operands::Float(n) | Operands::Int(n) => n,
            Operands::FloatAndI32 => 2,
        }
    }

    /// Whether the first operand (and the result) is a float (else a signed or unsigned
    /// integer).
    pub fn is_float(self) -> bool {
        !matches!(self.operands(), Operands::Int(_))
    }
}

impl core::fmt::Display for MathFn {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}", self.name())
    }
}

impl_printable_for_display!(MathFn);

/// A `mir.math` function name that does not exist.
#[derive(Debug, Error)]
#[error("unknown mir.math function `{0}`")]
pub struct UnknownMathFn(pub String);

impl Parsable for MathFn {
    type Arg = ();
    type Parsed = Self;

    fn parse<'a>(
        state_stream: &mut StateStream<'a>,
        _arg: Self::Arg,
    ) -> ParseResult<'a, Self::Parsed> {
        let loc = state_stream.loc();
        let (name, _): (String, _) = many1(alpha_num().or(satisfy(|c| c == '_')))
            .parse_stream(state_stream)
            .into_result()?;
        MathFn::from_name(&name)
            .ok_or_else(|| input_error!(loc, UnknownMathFn(name)))
            .into_parse_result()
    }
}

/// A pure math or bit-manipulation function of one to three operands, by [MathFn::operands].
///
/// Printed as `r = mir.math <fn>(operands) : T`.
///
/// | operand / result | type |
/// |---------|------|
/// | operand 0 | `T`: a float, or a signed/unsigned integer |
/// | operands 1, 2 | `T`; for `powi`, `si32` |
/// | `res` | `T` |
#[pliron_op(
    name = "mir.math",
    format = "attr($mir_math_fn, $MathFn) `(` operands(CharSpace(`,`)) `) : ` type($0)",
    interfaces = [OneResultInterface],
    attributes = (mir_math_fn: MathFn)
)]
pub struct MathOp;

impl MathOp {
    /// `function(args)`; the result has the type of `args[0]`.
    ///
    /// Panics if `args` is empty.
    pub fn new(ctx: &mut Context, function: MathFn, args: Vec<Value>) -> Self {
        let ty = args
            .first()
            .expect("mir.math takes at least one operand")
            .get_type(ctx);
        let op = Operation::new(ctx, Self::get_concrete_op_info(), vec![ty], args, vec![], 0);
        let op = Self { op };
        op.set_attr_mir_math_fn(ctx, function);
        op
    }

    /// The function computed.
    pub fn function(&self, ctx: &Context) -> MathFn {
        *self
            .get_attr_mir_math_fn(ctx)
            .expect("mir.math has a function attribute")
    }

    /// The operands.
    pub fn args(&self, ctx: &Context) -> Vec<Value> {
        self.get_operation().deref(ctx).operands().collect()
    }

    /// The result.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for MathOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let Some(function) = self.get_attr_mir_math_fn(ctx).map(|f| *f) else {
            return invalid(self, ctx, "missing function attribute");
        };
        let num_operands = self.get_operation().deref(ctx).get_num_operands();
        if num_operands != function.arity() {
            return invalid(
                self,
                ctx,
                format!(
                    "{function} takes {} operand(s), found {num_operands}",
                    function.arity()
                ),
            );
        }
        let ty = opd_ty(self, ctx, 0);
        let (ok, expected) = if function.is_float() {
            (is_float(ctx, ty), "a float")
        } else {
            (is_rust_int(ctx, ty), "a signed/unsigned integer")
        };
        expect_type(self, ctx, ok, "operand 0", expected, ty)?;
        for idx in 1..num_operands {
            let found = opd_ty(self, ctx, idx);
            let what = format!("operand {idx}");
            if function.operands() == Operands::FloatAndI32 {
                let i32_ty = IntegerType::get(ctx, 32, Signedness::Signed);
                expect_type_eq(self, ctx, &what, i32_ty.into(), found)?;
            } else {
                expect_type_eq(self, ctx, &what, ty, found)?;
            }
        }
        expect_type_eq(self, ctx, "result", ty, res_ty(self, ctx, 0))
    }
}

no_side_effects!(MathOp);
