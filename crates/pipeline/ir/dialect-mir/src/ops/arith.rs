//! Arithmetic, bitwise, checked and comparison operations.
//!
//! Integer operands are signed (`si*`) or unsigned (`ui*`) `builtin.integer`s: the signedness of
//! the operand type selects signed or unsigned division, remainder, right shift, overflow
//! detection and ordering. `bool` values (`i1`) are accepted by the bitwise ops and comparisons.

use pliron::{
    builtin::{
        op_interfaces::{NOpdsInterface, NResultsInterface, OneResultInterface},
        types::{IntegerType, Signedness},
    },
    common_traits::Verify,
    context::Context,
    derive::pliron_op,
    op::Op,
    operation::Operation,
    result::Result,
    r#type::Typed,
    value::Value,
};

use super::{expect_type, expect_type_eq, no_side_effects, opd, opd_ty, res, res_ty};
use crate::types::{bool_type, is_bool, is_float, is_int_or_bool, is_ptr, is_rust_int};

/// The operand types an arithmetic op accepts.
#[derive(Clone, Copy)]
enum Operands {
    /// Rust integers and floats.
    IntOrFloat,
    /// Rust integers only.
    Int,
    /// Floats only.
    Float,
    /// Rust integers and `bool`.
    IntOrBool,
    /// Rust integers, `bool`, floats and pointers.
    Comparable,
    /// Rust integers, `bool` and floats.
    Ordered,
}

impl Operands {
    fn accepts(self, ctx: &Context, ty: pliron::r#type::TypeHandle) -> bool {
        match self {
            Operands::IntOrFloat => is_rust_int(ctx, ty) || is_float(ctx, ty),
            Operands::Int => is_rust_int(ctx, ty),
            Operands::Float => is_float(ctx, ty),
            Operands::IntOrBool => is_int_or_bool(ctx, ty),
            Operands::Comparable => is_int_or_bool(ctx, ty) || is_float(ctx, ty) || is_ptr(ctx, ty),
            Operands::Ordered => is_int_or_bool(ctx, ty) || is_float(ctx, ty),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Operands::IntOrFloat => "a signed/unsigned integer or a float",
            Operands::Int => "a signed/unsigned integer",
            Operands::Float => "a float",
            Operands::IntOrBool => "a signed/unsigned integer or i1",
            Operands::Comparable => "an integer, i1, float or pointer",
            Operands::Ordered => "an integer, i1 or float",
        }
    }
}

/// Check that every operand of `op` has the type of operand 0, accepted by `operands`.
fn verify_operands(op: &dyn Op, ctx: &Context, operands: Operands) -> Result<()> {
    let ty = opd_ty(op, ctx, 0);
    expect_type(
        op,
        ctx,
        operands.accepts(ctx, ty),
        "operand 0",
        operands.describe(),
        ty,
    )?;
    let num_operands = op.get_operation().deref(ctx).get_num_operands();
    for idx in 1..num_operands {
        expect_type_eq(op, ctx, &format!("operand {idx}"), ty, opd_ty(op, ctx, idx))?;
    }
    Ok(())
}

/// Declare a binary op whose operands and result share one type.
macro_rules! binary_op {
    ($(#[$doc:meta])* $name:ident, $opid:literal, $operands:expr) => {
        $(#[$doc])*
        ///
        /// Printed as `r = <opid> lhs, rhs : T`.
        ///
        /// | operand / result | type |
        /// |---------|------|
        /// | `lhs`, `rhs`, `res` | `T` |
        #[pliron_op(
            name = $opid,
            format = "$0 `, ` $1 ` : ` type($0)",
            interfaces = [NOpdsInterface<2>, OneResultInterface]
        )]
        pub struct $name;

        impl $name {
            /// `lhs <op> rhs`; the result has the type of `lhs`.
            pub fn new(ctx: &mut Context, lhs: Value, rhs: Value) -> Self {
                let ty = lhs.get_type(ctx);
                let op = Operation::new(
                    ctx,
                    Self::get_concrete_op_info(),
                    vec![ty],
                    vec![lhs, rhs],
                    vec![],
                    0,
                );
                Self { op }
            }

            /// The left operand.
            pub fn lhs(&self, ctx: &Context) -> Value {
                opd(self, ctx, 0)
            }

            /// The right operand.
            pub fn rhs(&self, ctx: &Context) -> Value {
                opd(self, ctx, 1)
            }

            /// The result.
            pub fn result(&self, ctx: &Context) -> Value {
                res(self, ctx, 0)
            }
        }

        impl Verify for $name {
            fn verify(&self, ctx: &Context) -> Result<()> {
                verify_operands(self, ctx, $operands)?;
                expect_type_eq(self, ctx, "result", opd_ty(self, ctx, 0), res_ty(self, ctx, 0))
            }
        }

        no_side_effects!($name);
    };
}

binary_op!(
    /// Wrapping addition of integers, or float addition.
    AddOp, "mir.add", Operands::IntOrFloat
);
binary_op!(
    /// Wrapping subtraction of integers, or float subtraction.
    SubOp, "mir.sub", Operands::IntOrFloat
);
binary_op!(
    /// Wrapping multiplication of integers, or float multiplication.
    MulOp, "mir.mul", Operands::IntOrFloat
);
binary_op!(
    /// Division: signed or unsigned by the type for integers (the divisor is known non-zero,
    /// Rust's checks are separate asserts), or float division.
    DivOp, "mir.div", Operands::IntOrFloat
);
binary_op!(
    /// Remainder: signed or unsigned by the type for integers, or float remainder.
    RemOp, "mir.rem", Operands::IntOrFloat
);
binary_op!(
    /// Bitwise and of integers, logical and of `bool`s.
    BitAndOp, "mir.bitand", Operands::IntOrBool
);
binary_op!(
    /// Bitwise or of integers, logical or of `bool`s.
    BitOrOp, "mir.bitor", Operands::IntOrBool
);
binary_op!(
    /// Bitwise xor of integers, logical xor of `bool`s.
    BitXorOp, "mir.bitxor", Operands::IntOrBool
);
binary_op!(
    /// Left shift; the translator has already cast the shift amount to `T` (and masked it for
    /// the wrapping shifts).
    ShlOp, "mir.shl", Operands::Int
);
binary_op!(
    /// Right shift: arithmetic for a signed `T`, logical for an unsigned one; the shift amount
    /// is already of type `T`.
    ShrOp, "mir.shr", Operands::Int
);
binary_op!(
    /// Float addition that may be reassociated and contracted with its neighbours, with a
    /// reciprocal for a division and signed zeros ignored (`f32::algebraic_add`; LLVM's
    /// `reassoc nsz arcp contract`).
    AlgebraicAddOp, "mir.add_algebraic", Operands::Float
);
binary_op!(
    /// Float subtraction with the freedoms of [AlgebraicAddOp] (`algebraic_sub`).
    AlgebraicSubOp, "mir.sub_algebraic", Operands::Float
);
binary_op!(
    /// Float multiplication with the freedoms of [AlgebraicAddOp] (`algebraic_mul`).
    AlgebraicMulOp, "mir.mul_algebraic", Operands::Float
);
binary_op!(
    /// Float division with the freedoms of [AlgebraicAddOp] (`algebraic_div`).
    AlgebraicDivOp, "mir.div_algebraic", Operands::Float
);
binary_op!(
    /// Float remainder with the freedoms of [AlgebraicAddOp] (`algebraic_rem`).
    AlgebraicRemOp, "mir.rem_algebraic", Operands::Float
);

/// Declare a unary op whose operand and result share one type.
macro_rules! unary_op {
    ($(#[$doc:meta])* $name:ident, $opid:literal, $operands:expr) => {
        $(#[$doc])*
        ///
        /// Printed as `r = <opid> v : T`.
        ///
        /// | operand / result | type |
        /// |---------|------|
        /// | `value`, `res` | `T` |
        #[pliron_op(
            name = $opid,
            format = "$0 ` : ` type($0)",
            interfaces = [NOpdsInterface<1>, OneResultInterface]
        )]
        pub struct $name;

        impl $name {
            /// `<op> value`; the result has the type of `value`.
            pub fn new(ctx: &mut Context, value: Value) -> Self {
                let ty = value.get_type(ctx);
                let op = Operation::new(
                    ctx,
                    Self::get_concrete_op_info(),
                    vec![ty],
                    vec![value],
                    vec![],
                    0,
                );
                Self { op }
            }

            /// The operand.
            pub fn value(&self, ctx: &Context) -> Value {
                opd(self, ctx, 0)
            }

            /// The result.
            pub fn result(&self, ctx: &Context) -> Value {
                res(self, ctx, 0)
            }
        }

        impl Verify for $name {
            fn verify(&self, ctx: &Context) -> Result<()> {
                verify_operands(self, ctx, $operands)?;
                expect_type_eq(self, ctx, "result", opd_ty(self, ctx, 0), res_ty(self, ctx, 0))
            }
        }

        no_side_effects!($name);
    };
}

unary_op!(
    /// Wrapping negation of an integer, or float negation.
    NegOp, "mir.neg", Operands::IntOrFloat
);
unary_op!(
    /// Bitwise not of an integer, logical not of a `bool`.
    NotOp, "mir.not", Operands::IntOrBool
);

/// Declare a checked op: two results, the wrapped value and an `i1` overflow flag.
macro_rules! checked_op {
    ($(#[$doc:meta])* $name:ident, $opid:literal) => {
        $(#[$doc])*
        /// Overflow is signed or unsigned by the type `T`.
        ///
        /// Printed as `r, o = <opid> lhs, rhs : T, i1`.
        ///
        /// | operand / result | type |
        /// |---------|------|
        /// | `lhs`, `rhs` | `T` (a signed/unsigned integer) |
        /// | `value` | `T`, the wrapped result |
        /// | `overflow` | `i1` |
        #[pliron_op(
            name = $opid,
            format = "$0 `, ` $1 ` : ` types(CharSpace(`,`))",
            interfaces = [NOpdsInterface<2>, NResultsInterface<2>]
        )]
        pub struct $name;

        impl $name {
            /// `lhs <op> rhs` with overflow detection.
            pub fn new(ctx: &mut Context, lhs: Value, rhs: Value) -> Self {
                let ty = lhs.get_type(ctx);
                let flag = bool_type(ctx).into();
                let op = Operation::new(
                    ctx,
                    Self::get_concrete_op_info(),
                    vec![ty, flag],
                    vec![lhs, rhs],
                    vec![],
                    0,
                );
                Self { op }
            }

            /// The left operand.
            pub fn lhs(&self, ctx: &Context) -> Value {
                opd(self, ctx, 0)
            }

            /// The right operand.
            pub fn rhs(&self, ctx: &Context) -> Value {
                opd(self, ctx, 1)
            }

            /// The wrapped result (result 0).
            pub fn value(&self, ctx: &Context) -> Value {
                res(self, ctx, 0)
            }

            /// The overflow flag (result 1).
            pub fn overflow(&self, ctx: &Context) -> Value {
                res(self, ctx, 1)
            }
        }

        impl Verify for $name {
            fn verify(&self, ctx: &Context) -> Result<()> {
                verify_operands(self, ctx, Operands::Int)?;
                expect_type_eq(self, ctx, "result 0", opd_ty(self, ctx, 0), res_ty(self, ctx, 0))?;
                let flag_ty = res_ty(self, ctx, 1);
                expect_type(self, ctx, is_bool(ctx, flag_ty), "result 1", "i1", flag_ty)
            }
        }

        no_side_effects!($name);
    };
}

checked_op!(
    /// Addition with an overflow flag.
    CheckedAddOp, "mir.checked_add"
);
checked_op!(
    /// Subtraction with an overflow flag.
    CheckedSubOp, "mir.checked_sub"
);
checked_op!(
    /// Multiplication with an overflow flag.
    CheckedMulOp, "mir.checked_mul"
);

/// Declare a comparison op: two operands of one type, an `i1` result.
macro_rules! compare_op {
    ($(#[$doc:meta])* $name:ident, $opid:literal, $operands:expr) => {
        $(#[$doc])*
        /// Integers compare signed or unsigned by their type, `bool`s as unsigned, floats with
        /// an ordered comparison (false if either is NaN, except `mir.ne` which is unordered),
        /// pointers by address.
        ///
        /// Printed as `r = <opid> lhs, rhs : i1`.
        ///
        /// | operand / result | type |
        /// |---------|------|
        /// | `lhs`, `rhs` | `T` |
        /// | `res` | `i1` |
        #[pliron_op(
            name = $opid,
            format = "$0 `, ` $1 ` : ` type($0)",
            interfaces = [NOpdsInterface<2>, OneResultInterface]
        )]
        pub struct $name;

        impl $name {
            /// Compare `lhs` and `rhs`.
            pub fn new(ctx: &mut Context, lhs: Value, rhs: Value) -> Self {
                let ty = bool_type(ctx).into();
                let op = Operation::new(
                    ctx,
                    Self::get_concrete_op_info(),
                    vec![ty],
                    vec![lhs, rhs],
                    vec![],
                    0,
                );
                Self { op }
            }

            /// The left operand.
            pub fn lhs(&self, ctx: &Context) -> Value {
                opd(self, ctx, 0)
            }

            /// The right operand.
            pub fn rhs(&self, ctx: &Context) -> Value {
                opd(self, ctx, 1)
            }

            /// The result.
            pub fn result(&self, ctx: &Context) -> Value {
                res(self, ctx, 0)
            }
        }

        impl Verify for $name {
            fn verify(&self, ctx: &Context) -> Result<()> {
                verify_operands(self, ctx, $operands)?;
                let ty = res_ty(self, ctx, 0);
                expect_type(self, ctx, is_bool(ctx, ty), "result", "i1", ty)
            }
        }

        no_side_effects!($name);
    };
}

compare_op!(
    /// `lhs == rhs`.
    EqOp, "mir.eq", Operands::Comparable
);
compare_op!(
    /// `lhs != rhs`.
    NeOp, "mir.ne", Operands::Comparable
);
compare_op!(
    /// `lhs < rhs`.
    LtOp, "mir.lt", Operands::Comparable
);
compare_op!(
    /// `lhs <= rhs`.
    LeOp, "mir.le", Operands::Comparable
);
compare_op!(
    /// `lhs > rhs`.
    GtOp, "mir.gt", Operands::Comparable
);
compare_op!(
    /// `lhs >= rhs`.
    GeOp, "mir.ge", Operands::Comparable
);

/// Three-way comparison (MIR's `BinOp::Cmp`, `Ord::cmp`): `-1`, `0` or `1` as an `si8` for
/// less, equal, greater. Integers compare by their signedness, `bool`s as unsigned, floats as
/// `partial_cmp` would on ordered values.
///
/// Printed as `r = mir.cmp lhs, rhs : si8`.
///
/// | operand / result | type |
/// |---------|------|
/// | `lhs`, `rhs` | `T` |
/// | `res` | `si8` |
#[pliron_op(
    name = "mir.cmp",
    format = "$0 `, ` $1 ` : ` type($0)",
    interfaces = [NOpdsInterface<2>, OneResultInterface]
)]
pub struct CmpOp;

impl CmpOp {
    /// `lhs.cmp(rhs)` as `si8`.
    pub fn new(ctx: &mut Context, lhs: Value, rhs: Value) -> Self {
        let ty = IntegerType::get(ctx, 8, Signedness::Signed).into();
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ty],
            vec![lhs, rhs],
            vec![],
            0,
        );
        Self { op }
    }

    /// The left operand.
    pub fn lhs(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The right operand.
    pub fn rhs(&self, ctx: &Context) -> Value {
        opd(self, ctx, 1)
    }

    /// The result.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for CmpOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        verify_operands(self, ctx, Operands::Ordered)?;
        let si8 = IntegerType::get(ctx, 8, Signedness::Signed).into();
        expect_type_eq(self, ctx, "result", si8, res_ty(self, ctx, 0))
    }
}

no_side_effects!(CmpOp);

/// `cond ? a : b` without a branch (`intrinsics::select_unpredictable`, `bool::select_unpredictable`);
/// `a` and `b` may have any value type.
///
/// Printed as `r = mir.select cond, a, b : T`.
///
/// | operand / result | type |
/// |---------|------|
/// | `cond` | `i1` |
/// | `a`, `b`, `res` | `T` |
#[pliron_op(
    name = "mir.select",
    format = "$0 `, ` $1 `, ` $2 ` : ` type($0)",
    interfaces = [NOpdsInterface<3>, OneResultInterface]
)]
pub struct SelectOp;

impl SelectOp {
    /// `cond ? a : b`; the result has the type of `a`.
    pub fn new(ctx: &mut Context, cond: Value, a: Value, b: Value) -> Self {
        let ty = a.get_type(ctx);
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ty],
            vec![cond, a, b],
            vec![],
            0,
        );
        Self { op }
    }

    /// The condition.
    pub fn cond(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The value when the condition holds.
    pub fn when_true(&self, ctx: &Context) -> Value {
        opd(self, ctx, 1)
    }

    /// The value otherwise.
    pub fn when_false(&self, ctx: &Context) -> Value {
        opd(self, ctx, 2)
    }

    /// The result.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for SelectOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let cond = opd_ty(self, ctx, 0);
        expect_type(
            self,
            ctx,
            is_bool(ctx, cond),
            "operand 0 (condition)",
            "i1",
            cond,
        )?;
        let ty = opd_ty(self, ctx, 1);
        expect_type_eq(self, ctx, "operand 2", ty, opd_ty(self, ctx, 2))?;
        expect_type_eq(self, ctx, "result", ty, res_ty(self, ctx, 0))
    }
}

no_side_effects!(SelectOp);
