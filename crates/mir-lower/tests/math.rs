//! `mir.math`: verification, text form, and lowering of every function on every type it
//! accepts (all float and integer widths), compiled to PTX.

mod common;

use common::*;
use dialect_mir::ops::{MathFn, MathOp, ReturnOp, SlicePtrOp, StoreOp};
use pliron::{
    builtin::ops::ModuleOp,
    context::Context,
    irfmt::parsers::spaced,
    op::Op,
    operation::{Operation, verify_operation},
    parsable::parse_from_str,
    printable::Printable,
    r#type::TypeHandle,
};

/// Add to `m` a kernel `name(x: T, y: T, z: T, out: DisjointSlice<T>)` storing
/// `f(x[, y[, z]])` to `out[0]`.
fn add_math_kernel(ctx: &mut Context, m: ModuleOp, name: &str, function: MathFn, ty: TypeHandle) {
    let out_ty = disjoint(ctx, ty);
    let (_, entry, args) = func(
        ctx,
        m,
        name,
        &[("x", ty), ("y", ty), ("z", ty), ("out", out_ty)],
        vec![],
        true,
    );
    let mut b = B::new(ctx, entry);
    let operands = args[..function.arity()].to_vec();
    let r = b.val(|ctx| MathOp::new(ctx, function, operands));
    let data = b.val(|ctx| SlicePtrOp::new(ctx, args[3]));
    b.op(|ctx| StoreOp::new(ctx, r, data));
    b.op(|ctx| ReturnOp::new(ctx, None));
}

/// The types `function` accepts.
fn types_of(ctx: &Context, function: MathFn) -> Vec<TypeHandle> {
    if function.is_float() {
        vec![f32t(ctx), f64t(ctx)]
    } else {
        [8, 16, 32, 64, 128]
            .into_iter()
            .flat_map(|w| [si(ctx, w), ui(ctx, w)])
            .collect()
    }
}

#[test]
fn every_function_on_every_type_compiles() {
    let ctx = &mut context();
    let m = module(ctx);
    let mut kernels = vec![];
    for function in MathFn::ALL {
        for ty in types_of(ctx, function) {
            let name = format!("{}_{}", function.name(), kernels.len());
            add_math_kernel(ctx, m, &name, function, ty);
            kernels.push(name);
        }
    }
    lower(ctx, m);
    let ll = export(ctx, m);
    let entries: Vec<&str> = kernels.iter().map(String::as_str).collect();
    check_ptx(&ll, &entries);
    let calls: Vec<&str> = ll
        .lines()
        .filter(|line| line.contains("call ") || line.contains("bitcast"))
        .map(str::trim)
        .collect();
    assert_eq!(calls.len(), kernels.len());
    insta::assert_snapshot!(calls.join("\n"));
}

#[test]
fn text_form_parses_back() {
    let ctx = &mut context();
    let m = module(ctx);
    let i32_ = si(ctx, 32);
    add_math_kernel(ctx, m, "k", MathFn::SaddSat, i32_);
    verify(ctx, m);
    let text = m.get_operation().deref(ctx).disp(ctx).to_string();
    assert!(text.contains("mir.math sadd_sat("), "{text}");
    let ctx2 = &mut context();
    let parsed = parse_from_str(spaced(Operation::top_level_parser()), ctx2, &text)
        .unwrap_or_else(|err| panic!("{text}\ndoes not parse: {err}"));
    verify_operation(parsed, ctx2).unwrap();
    let reprinted = parsed.deref(ctx2).disp(ctx2).to_string();
    assert!(
        reprinted.contains("mir.math sadd_sat(x_v0, y_v1) : builtin.integer si32"),
        "{reprinted}"
    );
}

/// A malformed `mir.math`: function, operand type, operand count, expected error.
type VerifyCase = (MathFn, fn(&Context) -> TypeHandle, usize, &'static str);

#[test]
fn verifier_checks_arity_and_operand_class() {
    let cases: [VerifyCase; 4] = [
        (MathFn::Sqrt, |ctx| si(ctx, 32), 1, "must be a float"),
        (MathFn::Ctpop, f32t, 1, "must be a signed/unsigned integer"),
        (
            MathFn::Ctpop,
            boolean,
            1,
            "must be a signed/unsigned integer",
        ),
        (MathFn::Fma, f32t, 2, "fma takes 3 operand(s), found 2"),
    ];
    for (function, ty, arity, expected) in cases {
        let ctx = &mut context();
        let ty = ty(ctx);
        let m = module(ctx);
        let params: Vec<(&str, TypeHandle)> = vec![("a", ty); arity];
        let (_, entry, args) = func(ctx, m, "f", &params, vec![ty], false);
        let mut b = B::new(ctx, entry);
        let r = b.val(|ctx| MathOp::new(ctx, function, args.clone()));
        b.op(|ctx| ReturnOp::new(ctx, Some(r)));
        let err = verify_operation(m.get_operation(), ctx).unwrap_err();
        assert!(err.to_string().contains(expected), "{function}: {err}");
    }
}
