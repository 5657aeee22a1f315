//! Slices: building a `mir.slice` / `mir.disjoint_slice` value and taking it apart.

use pliron::{
    builtin::op_interfaces::{NOpdsInterface, OneResultInterface},
    common_traits::Verify,
    context::Context,
    derive::pliron_op,
    op::Op,
    operation::Operation,
    result::Result,
    r#type::{TypeHandle, Typed},
    value::Value,
};

use super::{expect_type, expect_type_eq, no_side_effects, opd, opd_ty, res, res_ty, wrong_type};
use crate::types::{ADDRSPACE_GENERIC, DisjointSliceType, PtrType, SliceType, usize_type};

/// The element type of `ty` if it is a `mir.slice` or a `mir.disjoint_slice`.
pub fn slice_elem(ctx: &Context, ty: TypeHandle) -> Option<TypeHandle> {
    let ty_ref = ty.deref(ctx);
    if let Some(slice) = ty_ref.downcast_ref::<SliceType>() {
        Some(slice.elem())
    } else {
        ty_ref
            .downcast_ref::<DisjointSliceType>()
            .map(|slice| slice.elem())
    }
}

const SLICE: &str = "a mir.slice or mir.disjoint_slice";

/// Check that operand 0 of `op` is a slice, returning its element type.
fn expect_slice_operand(op: &dyn Op, ctx: &Context) -> Result<TypeHandle> {
    let ty = opd_ty(op, ctx, 0);
    match slice_elem(ctx, ty) {
        Some(elem) => Ok(elem),
        None => wrong_type(op, ctx, "operand", SLICE, ty),
    }
}

/// A slice (`mir.slice<T>` or `mir.disjoint_slice<T>`, the result type) from a generic data
/// pointer and a length.
///
/// Printed as `s = mir.make_slice p, n : mir.slice<T>`.
///
/// | operand / result | type |
/// |---------|------|
/// | `ptr` | `mir.ptr<T, 0>` |
/// | `len` | `ui64` |
/// | `res` | `mir.slice<T>` or `mir.disjoint_slice<T>` |
#[pliron_op(
    name = "mir.make_slice",
    format = "$0 `, ` $1 ` : ` type($0)",
    interfaces = [NOpdsInterface<2>, OneResultInterface]
)]
pub struct MakeSliceOp;

impl MakeSliceOp {
    /// The slice of type `slice_ty` with data pointer `ptr` and length `len`.
    pub fn new(ctx: &mut Context, ptr: Value, len: Value, slice_ty: TypeHandle) -> Self {
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![slice_ty],
            vec![ptr, len],
            vec![],
            0,
        );
        Self { op }
    }

    /// The data pointer.
    pub fn ptr(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The length.
    pub fn len(&self, ctx: &Context) -> Value {
        opd(self, ctx, 1)
    }

    /// The slice.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for MakeSliceOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let slice_ty = res_ty(self, ctx, 0);
        let Some(elem) = slice_elem(ctx, slice_ty) else {
            return expect_type(self, ctx, false, "result", SLICE, slice_ty);
        };
        let ptr_ty = PtrType::get(ctx, elem, ADDRSPACE_GENERIC).into();
        expect_type_eq(self, ctx, "operand 0 (data)", ptr_ty, opd_ty(self, ctx, 0))?;
        expect_type_eq(
            self,
            ctx,
            "operand 1 (length)",
            usize_type(ctx).into(),
            opd_ty(self, ctx, 1),
        )
    }
}

/// The data pointer of a slice.
///
/// Printed as `p = mir.slice_ptr s : mir.ptr<T, 0>`.
///
/// | operand / result | type |
/// |---------|------|
/// | `slice` | `mir.slice<T>` or `mir.disjoint_slice<T>` |
/// | `res` | `mir.ptr<T, 0>` |
#[pliron_op(
    name = "mir.slice_ptr",
    format = "$0 ` : ` type($0)",
    interfaces = [NOpdsInterface<1>, OneResultInterface]
)]
pub struct SlicePtrOp;

impl SlicePtrOp {
    /// The data pointer of `slice`.
    ///
    /// Panics if `slice` is not a slice.
    pub fn new(ctx: &mut Context, slice: Value) -> Self {
        let elem = slice_elem(ctx, slice.get_type(ctx)).expect("mir.slice_ptr needs a slice");
        let ty = PtrType::get(ctx, elem, ADDRSPACE_GENERIC).into();
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ty],
            vec![slice],
            vec![],
            0,
        );
        Self { op }
    }

    /// The slice.
    pub fn slice(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The data pointer.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for SlicePtrOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let elem = expect_slice_operand(self, ctx)?;
        let ptr_ty = PtrType::get(ctx, elem, ADDRSPACE_GENERIC).into();
        expect_type_eq(self, ctx, "result", ptr_ty, res_ty(self, ctx, 0))
    }
}

/// The length of a slice.
///
/// Printed as `n = mir.slice_len s : ui64`.
///
/// | operand / result | type |
/// |---------|------|
/// | `slice` | `mir.slice<T>` or `mir.disjoint_slice<T>` |
/// | `res` | `ui64` |
#[pliron_op(
    name = "mir.slice_len",
    format = "$0 ` : ` type($0)",
    interfaces = [NOpdsInterface<1>, OneResultInterface]
)]
pub struct SliceLenOp;

impl SliceLenOp {
    /// The length of `slice`.
    pub fn new(ctx: &mut Context, slice: Value) -> Self {
        let ty = usize_type(ctx).into();
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ty],
            vec![slice],
            vec![],
            0,
        );
        Self { op }
    }

    /// The slice.
    pub fn slice(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The length.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for SliceLenOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        expect_slice_operand(self, ctx)?;
        expect_type_eq(
            self,
            ctx,
            "result",
            usize_type(ctx).into(),
            res_ty(self, ctx, 0),
        )
    }
}

no_side_effects!(MakeSliceOp, SlicePtrOp, SliceLenOp);
