//! Casts, one op per kind of conversion. All are printed as `r = <opid> v to T`.

use pliron::{
    builtin::op_interfaces::{NOpdsInterface, OneResultInterface},
    common_traits::Verify,
    context::Context,
    derive::pliron_op,
    op::Op,
    operation::Operation,
    result::Result,
    r#type::TypeHandle,
    value::Value,
};

use super::{expect_type, invalid, no_side_effects, opd, opd_ty, res, res_ty, ty_str};
use crate::types::{is_bool, is_float, is_int_or_bool, is_ptr, is_rust_int, layout_of};

/// The kinds of type a cast converts between.
#[derive(Clone, Copy)]
enum Class {
    /// Rust integers and `bool`.
    IntOrBool,
    /// Rust integers (not `bool`).
    Int,
    /// Floats.
    Float,
    /// Pointers.
    Ptr,
    /// Integers, `bool`, floats and pointers.
    Scalar,
}

impl Class {
    fn accepts(self, ctx: &Context, ty: TypeHandle) -> bool {
        match self {
            Class::IntOrBool => is_int_or_bool(ctx, ty),
            Class::Int => is_rust_int(ctx, ty),
            Class::Float => is_float(ctx, ty),
            Class::Ptr => is_ptr(ctx, ty),
            Class::Scalar => is_int_or_bool(ctx, ty) || is_float(ctx, ty) || is_ptr(ctx, ty),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Class::IntOrBool => "an integer or i1",
            Class::Int => "a signed/unsigned integer",
            Class::Float => "a float",
            Class::Ptr => "a mir.ptr",
            Class::Scalar => "an integer, i1, float or pointer",
        }
    }
}

/// Check the operand and result classes of a cast.
fn verify_cast(op: &dyn Op, ctx: &Context, from: Class, to: Class) -> Result<()> {
    let src = opd_ty(op, ctx, 0);
    expect_type(
        op,
        ctx,
        from.accepts(ctx, src),
        "operand",
        from.describe(),
        src,
    )?;
    let dst = res_ty(op, ctx, 0);
    expect_type(op, ctx, to.accepts(ctx, dst), "result", to.describe(), dst)
}

/// Declare a cast op from the `$from` class to the `$to` class.
macro_rules! cast_op {
    ($(#[$doc:meta])* $name:ident, $opid:literal, $from:expr, $to:expr) => {
        cast_op!(@def $(#[$doc])* $name, $opid);

        impl Verify for $name {
            fn verify(&self, ctx: &Context) -> Result<()> {
                verify_cast(self, ctx, $from, $to)
            }
        }
    };
    (@def $(#[$doc:meta])* $name:ident, $opid:literal) => {
        $(#[$doc])*
        ///
        /// Printed as `r = <opid> value to T`.
        #[pliron_op(
            name = $opid,
            format = "$0 ` to ` type($0)",
            interfaces = [NOpdsInterface<1>, OneResultInterface]
        )]
        pub struct $name;

        impl $name {
            /// Convert `value` to `to`.
            pub fn new(ctx: &mut Context, value: Value, to: TypeHandle) -> Self {
                let op = Operation::new(
                    ctx,
                    Self::get_concrete_op_info(),
                    vec![to],
                    vec![value],
                    vec![],
                    0,
                );
                Self { op }
            }

            /// The converted value.
            pub fn value(&self, ctx: &Context) -> Value {
                opd(self, ctx, 0)
            }

            /// The result.
            pub fn result(&self, ctx: &Context) -> Value {
                res(self, ctx, 0)
            }
        }

        no_side_effects!($name);
    };
}

cast_op!(
    /// Integer to integer (`as`): truncation, or sign / zero extension by the signedness of the
    /// source (a `bool` source zero-extends), or a no-op change of signedness.
    IntCastOp, "mir.int_cast", Class::IntOrBool, Class::IntOrBool
);
cast_op!(
    /// Integer (signed or unsigned by its type, `bool` as unsigned) to float, rounding.
    IntToFloatOp, "mir.int_to_float", Class::IntOrBool, Class::Float
);
cast_op!(
    /// Float to integer with Rust's saturating `as` semantics: out-of-range values clamp to the
    /// integer's bounds and NaN becomes 0.
    FloatToIntOp, "mir.float_to_int", Class::Float, Class::Int
);
cast_op!(
    /// Float to float: extension or rounding truncation.
    FloatCastOp, "mir.float_cast", Class::Float, Class::Float
);
cast_op!(
    /// Pointer to pointer: changes the pointee type and/or the address space.
    PtrCastOp, "mir.ptr_cast", Class::Ptr, Class::Ptr
);
cast_op!(
    /// Pointer to integer (its address, truncated or zero-extended).
    PtrToIntOp, "mir.ptr_to_int", Class::Ptr, Class::Int
);
cast_op!(
    /// Integer to pointer.
    IntToPtrOp, "mir.int_to_ptr", Class::Int, Class::Ptr
);
cast_op!(
    @def
    /// Reinterpretation of the bits of a scalar as another scalar of the same size
    /// (`transmute`); when one side is a pointer the lowering uses `ptrtoint` / `inttoptr`.
    BitcastOp, "mir.bitcast"
);

impl Verify for BitcastOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        verify_cast(self, ctx, Class::Scalar, Class::Scalar)?;
        let src = opd_ty(self, ctx, 0);
        let dst = res_ty(self, ctx, 0);
        let src_size = layout_of(ctx, src).map(|layout| layout.size);
        let dst_size = layout_of(ctx, dst).map(|layout| layout.size);
        if src_size != dst_size || (src != dst && (is_bool(ctx, src) || is_bool(ctx, dst))) {
            return invalid(
                self,
                ctx,
                format!(
                    "cannot reinterpret {} as {}: the sizes differ",
                    ty_str(ctx, src),
                    ty_str(ctx, dst)
                ),
            );
        }
        Ok(())
    }
}
