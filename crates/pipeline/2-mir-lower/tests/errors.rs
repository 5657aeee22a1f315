//! What the lowering refuses, as typed errors naming the function (and op), and external
//! callees, which are declared.

mod common;

use common::*;
use dialect_mir::{
    ops::*,
    types::{FieldLayout, StructType},
};
use mir_lower::{LoweringError, OpError, lower_mir_to_llvm};
use pliron::{
    builtin::{ops::ModuleOp, types::FunctionType},
    context::Context,
    ident,
    op::Op,
};

/// Verify `m` and lower it, expecting an error.
fn lowering_error(ctx: &mut Context, m: ModuleOp) -> LoweringError {
    verify(ctx, m);
    lower_mir_to_llvm(ctx, m).expect_err("the lowering must fail")
}

#[test]
fn kernel_returning_a_value() {
    let ctx = &mut context();
    let m = module(ctx);
    let u32_ = ui(ctx, 32);
    let (_, entry, args) = func(ctx, m, "bad", &[("x", u32_)], vec![u32_], true);
    let mut b = B::new(ctx, entry);
    b.op(|ctx| ReturnOp::new(ctx, Some(args[0])));
    // The dialect verifier refuses this too; the lowering must not rely on it.
    let err = lower_mir_to_llvm(ctx, m).expect_err("the lowering must fail");
    assert!(
        matches!(&err, LoweringError::Signature { function, source: OpError::Unsupported(_) } if function == "bad"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "function `bad`: unsupported: a kernel that returns a value"
    );
}

#[test]
fn calling_a_kernel() {
    let ctx = &mut context();
    let m = module(ctx);
    let (_, entry, _) = func(ctx, m, "entry_point", &[], vec![], true);
    let mut b = B::new(ctx, entry);
    b.op(|ctx| ReturnOp::new(ctx, None));
    let (_, entry, _) = func(ctx, m, "caller", &[], vec![], false);
    let ty = FunctionType::get(ctx, vec![], vec![]);
    let mut b = B::new(ctx, entry);
    b.op(|ctx| CallOp::new(ctx, ident!("entry_point"), ty, vec![]));
    b.op(|ctx| ReturnOp::new(ctx, None));
    let err = lowering_error(ctx, m);
    let LoweringError::Op {
        function,
        op,
        source,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!(function, "caller");
    assert!(op.contains("mir.call @entry_point()"), "{op}");
    assert_eq!(
        source,
        &OpError::Unsupported("calling kernel `entry_point` from device code".into())
    );
}

#[test]
fn overlapping_struct_fields() {
    let ctx = &mut context();
    let m = module(ctx);
    let u32_ = ui(ctx, 32);
    let overlapping = StructType::get(
        ctx,
        "Overlap",
        4,
        4,
        vec![FieldLayout::new(u32_, 0), FieldLayout::new(u32_, 0)],
    )
    .into();
    let (_, entry, _) = func(ctx, m, "takes", &[("s", overlapping)], vec![], false);
    let mut b = B::new(ctx, entry);
    b.op(|ctx| ReturnOp::new(ctx, None));
    let err = lowering_error(ctx, m);
    assert!(
        matches!(&err, LoweringError::BlockArgument { function, source: OpError::UnsupportedType { .. }, .. } if function == "takes"),
        "{err:?}"
    );
}

#[test]
fn external_callees_are_declared() {
    let ctx = &mut context();
    let m = module(ctx);
    let f32_ = f32t(ctx);
    let ty = FunctionType::get(ctx, vec![f32_], vec![f32_]);
    let decl = FuncOp::new_declaration(ctx, ident!("__nv_sinf"), ty);
    decl.get_operation().insert_at_back(
        pliron::builtin::op_interfaces::SingleBlockRegionInterface::get_body(&m, ctx, 0),
        ctx,
    );
    let (_, entry, args) = func(ctx, m, "sine", &[("x", f32_)], vec![f32_], false);
    let mut b = B::new(ctx, entry);
    let call = b.op(|ctx| CallOp::new(ctx, ident!("__nv_sinf"), ty, vec![args[0]]));
    let r = call.result(b.ctx).unwrap();
    b.op(|ctx| ReturnOp::new(ctx, Some(r)));
    lower(ctx, m);
    let ll = export(ctx, m);
    assert!(ll.contains("declare float @__nv_sinf(float)"), "{ll}");
    assert!(ll.contains("define internal float @sine(float %x)"), "{ll}");
    assert!(ll.contains("call float @__nv_sinf(float %x)"), "{ll}");
}
