//! The operations of the `mir` dialect, one module per family.
//!
//! Every op has a `new` builder taking the [Context] first, and a verifier that checks the
//! types of its operands and results (failures are [MirVerifyErr]s).

use pliron::{
    context::Context,
    op::Op,
    printable::Printable,
    result::Result,
    r#type::{TypeHandle, Typed},
    value::Value,
    verify_err,
};
use thiserror::Error;

pub mod arith;
pub mod atomic;
pub mod call;
pub mod cast;
pub mod constants;
pub mod control_flow;
pub mod dyn_ptr;
pub mod enums;
pub mod func;
pub mod global;
pub mod math;
pub mod memory;
pub mod raw_memory;
pub mod slice;

pub use arith::*;
pub use atomic::*;
pub use call::*;
pub use cast::*;
pub use constants::*;
pub use control_flow::*;
pub use dyn_ptr::*;
pub use enums::*;
pub use func::*;
pub use global::*;
pub use math::*;
pub use memory::*;
pub use raw_memory::*;
pub use slice::*;

/// A verification failure of a `mir` op.
#[derive(Debug, Error)]
pub enum MirVerifyErr {
    /// An operand or result does not have the kind of type the op requires.
    #[error("{op}: {what} must be {expected}, but has type {found}")]
    WrongType {
        op: String,
        what: String,
        expected: String,
        found: String,
    },
    /// Any other malformation.
    #[error("{op}: {msg}")]
    Invalid { op: String, msg: String },
}

/// The printed form of `ty`.
pub(crate) fn ty_str(ctx: &Context, ty: TypeHandle) -> String {
    ty.disp(ctx).to_string()
}

/// The type of operand `idx` of `op`.
pub(crate) fn opd_ty(op: &dyn Op, ctx: &Context, idx: usize) -> TypeHandle {
    op.get_operation().deref(ctx).get_operand(idx).get_type(ctx)
}

/// The type of result `idx` of `op`.
pub(crate) fn res_ty(op: &dyn Op, ctx: &Context, idx: usize) -> TypeHandle {
    op.get_operation().deref(ctx).get_result(idx).get_type(ctx)
}

/// Operand `idx` of `op`.
pub(crate) fn opd(op: &dyn Op, ctx: &Context, idx: usize) -> Value {
    op.get_operation().deref(ctx).get_operand(idx)
}

/// Result `idx` of `op`.
pub(crate) fn res(op: &dyn Op, ctx: &Context, idx: usize) -> Value {
    op.get_operation().deref(ctx).get_result(idx)
}

/// Fail with [MirVerifyErr::WrongType] unless `ok`.
pub(crate) fn expect_type(
    op: &dyn Op,
    ctx: &Context,
    ok: bool,
    what: &str,
    expected: &str,
    found: TypeHandle,
) -> Result<()> {
    if ok {
        return Ok(());
    }
    wrong_type(op, ctx, what, expected, found)
}

/// Fail with [MirVerifyErr::WrongType]: `what` has type `found` instead of `expected`.
pub(crate) fn wrong_type<T>(
    op: &dyn Op,
    ctx: &Context,
    what: &str,
    expected: &str,
    found: TypeHandle,
) -> Result<T> {
    verify_err!(
        op.loc(ctx),
        MirVerifyErr::WrongType {
            op: op.get_opid().to_string(),
            what: what.to_string(),
            expected: expected.to_string(),
            found: ty_str(ctx, found),
        }
    )
}

/// Fail with [MirVerifyErr::WrongType] unless `found == expected`.
pub(crate) fn expect_type_eq(
    op: &dyn Op,
    ctx: &Context,
    what: &str,
    expected: TypeHandle,
    found: TypeHandle,
) -> Result<()> {
    expect_type(
        op,
        ctx,
        expected == found,
        what,
        &ty_str(ctx, expected),
        found,
    )
}

/// Fail with [MirVerifyErr::Invalid].
pub(crate) fn invalid<T>(op: &dyn Op, ctx: &Context, msg: impl Into<String>) -> Result<T> {
    verify_err!(
        op.loc(ctx),
        MirVerifyErr::Invalid {
            op: op.get_opid().to_string(),
            msg: msg.into(),
        }
    )
}

/// Implement [SideEffects](pliron::opts::dce::SideEffects) as "none" for ops whose only effect
/// is their result, so that pliron's DCE may remove them when unused.
macro_rules! no_side_effects {
    ($($op:ty),+ $(,)?) => {
        $(
            #[pliron::derive::op_interface_impl]
            impl pliron::opts::dce::SideEffects for $op {
                fn has_side_effects(&self, _ctx: &pliron::context::Context) -> bool {
                    false
                }
            }
        )+
    };
}
pub(crate) use no_side_effects;
