//! `mir.math`: verification, text form, and lowering of every function on every type it
//! accepts (all float and integer widths), compiled to PTX (libdevice linked in where the
//! lowering calls it).

mod common;

use common::*;
use dialect_mir::ops::{MathFn, MathOp, Operands, ReturnOp, SlicePtrOp, StoreOp};
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
/// `f(x[, y[, z]])` to `out[0]` (`y` is an `i32` for `powi`).
fn add_math_kernel(ctx: &mut Context, m: ModuleOp, name: &str, function: MathFn, ty: TypeHandle) {
    let out_ty = disjoint(ctx, ty);
    let y_ty = match function.operands() {
        Operands::FloatAndI32 => si(ctx, 32),
        _ => ty,
    };
    let (_, entry, args) = func(
        ctx,
        m,
        name,
        &[("x", ty), ("y", y_ty), ("z", ty), ("out", out_ty)],
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
    // What each kernel computes its function with: an intrinsic or libdevice call (or a
    // bitcast, for a one-byte `bswap`), one line per kernel. 128-bit funnel shifts call nothing:
    // they are computed on their 64-bit halves (`wide_shift`).
    let mut lines = Vec::new();
    for body in ll.split("\ndefine ").skip(1) {
        let name = body.split(['@', '(']).nth(1).unwrap_or_default();
        let calls: Vec<&str> = body
            .lines()
            .filter(|line| line.contains("call ") || line.contains("bitcast"))
            .map(|line| line.trim().split(" = ").last().unwrap_or_default())
            .collect();
        assert!(!calls.is_empty(), "{name} calls nothing:\n{body}");
        lines.push(format!("{name}: {}", calls.join("; ")));
    }
    assert_eq!(lines.len(), kernels.len());
    insta::assert_snapshot!(lines.join("\n"));
}

#[test]
fn transcendentals_call_libdevice_and_exact_functions_do_not() {
    let ctx = &mut context();
    let m = module(ctx);
    let f32_ = f32t(ctx);
    for function in [
        MathFn::Sin,
        MathFn::Fmod,
        MathFn::Powi,
        MathFn::Sqrt,
        MathFn::Fma,
    ] {
        add_math_kernel(ctx, m, function.name(), function, f32_);
    }
    lower(ctx, m);
    let ll = export(ctx, m);
    for declaration in [
        "declare float @__nv_sinf(float)",
        "declare float @__nv_fmodf(float, float)",
        "declare float @__nv_powif(float, i32)",
        "declare float @llvm.sqrt.f32(float)",
        "declare float @llvm.fma.f32(float, float, float)",
    ] {
        assert!(ll.contains(declaration), "{declaration}:\n{ll}");
    }
    assert!(
        !ll.contains("__nv_sqrt") && !ll.contains("__nv_fma"),
        "{ll}"
    );
    // Linked, the module defines what it called, internal, and declares no `__nv_` function.
    let linked = llvm_to_ptx::link_libdevice_if_needed(&ll, None, None).unwrap();
    assert!(
        linked.contains("define internal float @__nv_sinf("),
        "{linked}"
    );
    assert!(!llvm_to_ptx::needs_libdevice(&linked));
    assert!(
        !linked.contains("@__nv_cosf("),
        "only what is needed is linked"
    );
    let ptx = check_ptx(&ll, &["sin", "fmod", "powi", "sqrt", "fma"]);
    // Everything is inlined: no call is left, nothing external.
    assert!(!ptx.contains("call") && !ptx.contains(".extern"), "{ptx}");
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
    let cases: [VerifyCase; 5] = [
        (MathFn::Sqrt, |ctx| si(ctx, 32), 1, "must be a float"),
        (MathFn::Ctpop, f32t, 1, "must be a signed/unsigned integer"),
        (
            MathFn::Ctpop,
            boolean,
            1,
            "must be a signed/unsigned integer",
        ),
        (MathFn::Fma, f32t, 2, "fma takes 3 operand(s), found 2"),
        (
            MathFn::Powi,
            f64t,
            2,
            "operand 1 must be builtin.integer si32",
        ),
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
