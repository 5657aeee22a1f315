//! Trait objects: building a `mir.dyn_ptr` from its data and vtable pointers, and taking it
//! apart (a virtual call loads its method from the vtable; `size_of_val` reads the size there).

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

use super::{expect_type, no_side_effects, opd, opd_ty, res, res_ty};
use crate::types::{ADDRSPACE_GENERIC, DynPtrType, PtrType};

/// Whether `ty` is a generic `mir.ptr`.
fn is_generic_ptr(ctx: &Context, ty: TypeHandle) -> bool {
    ty.deref(ctx)
        .downcast_ref::<PtrType>()
        .is_some_and(|ptr| ptr.address_space() == ADDRSPACE_GENERIC)
}

fn is_dyn_ptr(ctx: &Context, ty: TypeHandle) -> bool {
    ty.deref(ctx).is::<DynPtrType>()
}

/// A trait object pointer (the result type) from a generic data pointer and a generic vtable
/// pointer: what an unsizing coercion `&T as &dyn Trait` builds.
///
/// Printed as `d = mir.make_dyn p, v : mir.dyn_ptr<"name">`.
///
/// | operand / result | type |
/// |---------|------|
/// | `data` | `mir.ptr<_, 0>` |
/// | `vtable` | `mir.ptr<_, 0>` |
/// | `res` | `mir.dyn_ptr` |
#[pliron_op(
    name = "mir.make_dyn",
    format = "$0 `, ` $1 ` : ` type($0)",
    interfaces = [NOpdsInterface<2>, OneResultInterface]
)]
pub struct MakeDynOp;

impl MakeDynOp {
    /// The trait object of type `dyn_ty` with `data` and `vtable`.
    pub fn new(ctx: &mut Context, data: Value, vtable: Value, dyn_ty: TypeHandle) -> Self {
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![dyn_ty],
            vec![data, vtable],
            vec![],
            0,
        );
        Self { op }
    }

    /// The trait object.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for MakeDynOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let result = res_ty(self, ctx, 0);
        expect_type(
            self,
            ctx,
            is_dyn_ptr(ctx, result),
            "result",
            "a mir.dyn_ptr",
            result,
        )?;
        for (idx, what) in [(0, "operand 0 (data)"), (1, "operand 1 (vtable)")] {
            let ty = opd_ty(self, ctx, idx);
            expect_type(
                self,
                ctx,
                is_generic_ptr(ctx, ty),
                what,
                "a generic mir.ptr",
                ty,
            )?;
        }
        Ok(())
    }
}

/// Declares an op reading one pointer out of a `mir.dyn_ptr`.
macro_rules! dyn_part_op {
    ($(#[$doc:meta])* $name:ident, $opid:literal) => {
        $(#[$doc])*
        ///
        /// | operand / result | type |
        /// |---------|------|
        /// | `dyn` | `mir.dyn_ptr` |
        /// | `res` | `mir.ptr<T, 0>` (any pointee) |
        #[pliron_op(
            name = $opid,
            format = "$0 ` : ` type($0)",
            interfaces = [NOpdsInterface<1>, OneResultInterface]
        )]
        pub struct $name;

        impl $name {
            /// The part of `object`, as a value of type `ptr_ty` (a generic `mir.ptr`).
            pub fn new(ctx: &mut Context, object: Value, ptr_ty: TypeHandle) -> Self {
                let op = Operation::new(
                    ctx,
                    Self::get_concrete_op_info(),
                    vec![ptr_ty],
                    vec![object],
                    vec![],
                    0,
                );
                Self { op }
            }

            /// The trait object.
            pub fn object(&self, ctx: &Context) -> Value {
                opd(self, ctx, 0)
            }

            /// The pointer.
            pub fn result(&self, ctx: &Context) -> Value {
                res(self, ctx, 0)
            }
        }

        impl Verify for $name {
            fn verify(&self, ctx: &Context) -> Result<()> {
                let object = opd_ty(self, ctx, 0);
                expect_type(self, ctx, is_dyn_ptr(ctx, object), "operand", "a mir.dyn_ptr", object)?;
                let result = res_ty(self, ctx, 0);
                expect_type(self, ctx, is_generic_ptr(ctx, result), "result", "a generic mir.ptr", result)
            }
        }
    };
}

dyn_part_op!(
    /// The data pointer of a trait object (what a method receives as `self`).
    ///
    /// Printed as `p = mir.dyn_data d : mir.ptr<T, 0>`.
    DynDataOp,
    "mir.dyn_data"
);

dyn_part_op!(
    /// The vtable pointer of a trait object.
    ///
    /// Printed as `v = mir.dyn_vtable d : mir.ptr<T, 0>`.
    DynVtableOp,
    "mir.dyn_vtable"
);

no_side_effects!(MakeDynOp, DynDataOp, DynVtableOp);
