//! `mir.math`: the pure math and bit-manipulation intrinsics of `core` (`f32::sqrt`,
//! `u32::count_ones`, `i64::saturating_add`, ...) as one op whose [MathFn] attribute names
//! the function. Every operand and the result share one type `T`: a float for the float
//! functions, a signed or unsigned integer for the integer ones (counts such as `ctpop` are
//! returned as `T`; the translator casts them to Rust's `u32`).

use pliron::{
    builtin::op_interfaces::OneResultInterface,
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

/// The function computed by a `mir.math` op. Each is the LLVM intrinsic of the same name
/// (`sadd_sat` is `llvm.sadd.sat`).
///
/// Printed as its lower-case name (`sqrt`, `sadd_sat`).
#[pliron_attr(name = "mir.math_fn", verifier = "succ")]
#[derive(PartialEq, Eq, Clone, Copy, Debug, Hash)]
pub enum MathFn {
    /// Square root (float).
    Sqrt,
    /// Absolute value (float).
    Fabs,
    /// Round down (float).
    Floor,
    /// Round up (float).
    Ceil,
    /// Round toward zero (float).
    Trunc,
    /// Round to nearest, ties away from zero (float, Rust's `round`).
    Round,
    /// Round to nearest, ties to even (float, Rust's `round_ties_even`).
    Rint,
    /// Fused multiply-add `a * b + c` (float).
    Fma,
    /// Minimum ignoring NaN (float, Rust's `min`).
    Minnum,
    /// Maximum ignoring NaN (float, Rust's `max`).
    Maxnum,
    /// Magnitude of the first operand with the sign of the second (float).
    Copysign,
    /// Number of one bits (integer).
    Ctpop,
    /// Number of leading zero bits, the width for zero (integer).
    Ctlz,
    /// Number of trailing zero bits, the width for zero (integer).
    Cttz,
    /// Byte order reversed (integer).
    Bswap,
    /// Bit order reversed (integer).
    Bitreverse,
    /// Signed saturating addition (integer).
    SaddSat,
    /// Unsigned saturating addition (integer).
    UaddSat,
    /// Signed saturating subtraction (integer).
    SsubSat,
    /// Unsigned saturating subtraction (integer).
    UsubSat,
    /// Funnel shift left: the high half of `a:b << (c mod width)` (integer, `rotate_left`
    /// with `a == b`).
    Fshl,
    /// Funnel shift right: the low half of `a:b >> (c mod width)` (integer).
    Fshr,
    /// Signed minimum (integer).
    Smin,
    /// Signed maximum (integer).
    Smax,
    /// Unsigned minimum (integer).
    Umin,
    /// Unsigned maximum (integer).
    Umax,
    /// Absolute value, wrapping for the minimum (integer).
    Abs,
}

impl MathFn {
    /// Every function, in declaration order.
    pub const ALL: [MathFn; 27] = [
        MathFn::Sqrt,
        MathFn::Fabs,
        MathFn::Floor,
        MathFn::Ceil,
        MathFn::Trunc,
        MathFn::Round,
        MathFn::Rint,
        MathFn::Fma,
        MathFn::Minnum,
        MathFn::Maxnum,
        MathFn::Copysign,
        MathFn::Ctpop,
        MathFn::Ctlz,
        MathFn::Cttz,
        MathFn::Bswap,
        MathFn::Bitreverse,
        MathFn::SaddSat,
        MathFn::UaddSat,
        MathFn::SsubSat,
        MathFn::UsubSat,
        MathFn::Fshl,
        MathFn::Fshr,
        MathFn::Smin,
        MathFn::Smax,
        MathFn::Umin,
        MathFn::Umax,
        MathFn::Abs,
    ];

    /// The lower-case name, as printed.
    pub fn name(self) -> &'static str {
        match self {
            MathFn::Sqrt => "sqrt",
            MathFn::Fabs => "fabs",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Trunc => "trunc",
            MathFn::Round => "round",
            MathFn::Rint => "rint",
            MathFn::Fma => "fma",
            MathFn::Minnum => "minnum",
            MathFn::Maxnum => "maxnum",
            MathFn::Copysign => "copysign",
            MathFn::Ctpop => "ctpop",
            MathFn::Ctlz => "ctlz",
            MathFn::Cttz => "cttz",
            MathFn::Bswap => "bswap",
            MathFn::Bitreverse => "bitreverse",
            MathFn::SaddSat => "sadd_sat",
            MathFn::UaddSat => "uadd_sat",
            MathFn::SsubSat => "ssub_sat",
            MathFn::UsubSat => "usub_sat",
            MathFn::Fshl => "fshl",
            MathFn::Fshr => "fshr",
            MathFn::Smin => "smin",
            MathFn::Smax => "smax",
            MathFn::Umin => "umin",
            MathFn::Umax => "umax",
            MathFn::Abs => "abs",
        }
    }

    /// The function named `name`.
    pub fn from_name(name: &str) -> Option<MathFn> {
        MathFn::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The number of operands.
    pub fn arity(self) -> usize {
        match self {
            MathFn::Fma | MathFn::Fshl | MathFn::Fshr => 3,
            MathFn::Minnum
            | MathFn::Maxnum
            | MathFn::Copysign
            | MathFn::SaddSat
            | MathFn::UaddSat
            | MathFn::SsubSat
            | MathFn::UsubSat
            | MathFn::Smin
            | MathFn::Smax
            | MathFn::Umin
            | MathFn::Umax => 2,
            _ => 1,
        }
    }

    /// Whether the operands are floats (else signed or unsigned integers).
    pub fn is_float(self) -> bool {
        matches!(
            self,
            MathFn::Sqrt
                | MathFn::Fabs
                | MathFn::Floor
                | MathFn::Ceil
                | MathFn::Trunc
                | MathFn::Round
                | MathFn::Rint
                | MathFn::Fma
                | MathFn::Minnum
                | MathFn::Maxnum
                | MathFn::Copysign
        )
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

/// A pure math or bit-manipulation function of one to three operands of one type `T`.
///
/// Printed as `r = mir.math <fn>(operands) : T`.
///
/// | operand / result | type |
/// |---------|------|
/// | operands (1 to 3, by [MathFn::arity]) | `T`: a float, or a signed/unsigned integer |
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
            expect_type_eq(
                self,
                ctx,
                &format!("operand {idx}"),
                ty,
                opd_ty(self, ctx, idx),
            )?;
        }
        expect_type_eq(self, ctx, "result", ty, res_ty(self, ctx, 0))
    }
}

no_side_effects!(MathOp);
