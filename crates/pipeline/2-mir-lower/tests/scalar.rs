//! Instruction selection for scalar ops: signedness picks the LLVM opcode or predicate, float
//! comparisons are ordered except `!=`, casts extend by the source's signedness, booleans are
//! bytes in memory.

mod common;

use common::*;
use dialect_mir::ops::*;
use pliron::{builtin::ops::ModuleOp, context::Context, r#type::TypeHandle, value::Value};

/// Store `value` at `slice[index]`.
fn store_at(b: &mut B, slice: Value, index: u128, value: Value) {
    let u64_ = ui(b.ctx, 64);
    let data = b.val(|ctx| SlicePtrOp::new(ctx, slice));
    let index = b.int(u64_, index);
    let addr = b.val(|ctx| PtrOffsetOp::new(ctx, data, index));
    b.op(|ctx| StoreOp::new(ctx, value, addr));
}

/// A kernel `name(a: T, b: T, out: &mut [T], flags: &mut [bool], order: &mut [i8])` storing
/// every binary op, comparison and the three-way compare of `a` and `b`.
fn ops_kernel(ctx: &mut Context, m: ModuleOp, name: &str, ty: TypeHandle, float: bool) {
    let (bool_, i8_) = (boolean(ctx), si(ctx, 8));
    let (out_ty, flags_ty, order_ty) =
        (disjoint(ctx, ty), disjoint(ctx, bool_), disjoint(ctx, i8_));
    let (_, entry, args) = func(
        ctx,
        m,
        name,
        &[
            ("a", ty),
            ("b", ty),
            ("out", out_ty),
            ("flags", flags_ty),
            ("order", order_ty),
        ],
        vec![],
        true,
    );
    let (x, y) = (args[0], args[1]);
    let mut b = B::new(ctx, entry);
    let mut results = vec![
        b.val(|ctx| AddOp::new(ctx, x, y)),
        b.val(|ctx| SubOp::new(ctx, x, y)),
        b.val(|ctx| MulOp::new(ctx, x, y)),
        b.val(|ctx| DivOp::new(ctx, x, y)),
        b.val(|ctx| RemOp::new(ctx, x, y)),
        b.val(|ctx| NegOp::new(ctx, x)),
    ];
    if !float {
        results.extend([
            b.val(|ctx| BitAndOp::new(ctx, x, y)),
            b.val(|ctx| BitOrOp::new(ctx, x, y)),
            b.val(|ctx| BitXorOp::new(ctx, x, y)),
            b.val(|ctx| ShlOp::new(ctx, x, y)),
            b.val(|ctx| ShrOp::new(ctx, x, y)),
            b.val(|ctx| NotOp::new(ctx, x)),
        ]);
    }
    for (idx, value) in results.into_iter().enumerate() {
        store_at(&mut b, args[2], idx as u128, value);
    }
    let flags = [
        b.val(|ctx| EqOp::new(ctx, x, y)),
        b.val(|ctx| NeOp::new(ctx, x, y)),
        b.val(|ctx| LtOp::new(ctx, x, y)),
        b.val(|ctx| LeOp::new(ctx, x, y)),
        b.val(|ctx| GtOp::new(ctx, x, y)),
        b.val(|ctx| GeOp::new(ctx, x, y)),
    ];
    for (idx, flag) in flags.into_iter().enumerate() {
        store_at(&mut b, args[3], idx as u128, flag);
    }
    let order = b.val(|ctx| CmpOp::new(ctx, x, y));
    store_at(&mut b, args[4], 0, order);
    b.op(|ctx| ReturnOp::new(ctx, None));
}

/// The `.ll` lines of function `name`.
fn function_text<'a>(ll: &'a str, name: &str) -> &'a str {
    let start = ll
        .find(&format!("@{name}("))
        .unwrap_or_else(|| panic!("no {name}"));
    let rest = &ll[start..];
    &rest[..rest.find("\n}\n").unwrap()]
}

#[test]
fn signedness_selects_opcodes_and_predicates() {
    let ctx = &mut context();
    let m = module(ctx);
    let (i32_, u32_, u8_, f64_, bool_) = (
        si(ctx, 32),
        ui(ctx, 32),
        ui(ctx, 8),
        f64t(ctx),
        boolean(ctx),
    );
    ops_kernel(ctx, m, "ops_i32", i32_, false);
    ops_kernel(ctx, m, "ops_u32", u32_, false);
    ops_kernel(ctx, m, "ops_u8", u8_, false);
    ops_kernel(ctx, m, "ops_f64", f64_, true);

    let out_ty = disjoint(ctx, bool_);
    let order_ty = disjoint(ctx, si(ctx, 8));
    let (_, entry, args) = func(
        ctx,
        m,
        "ops_bool",
        &[
            ("a", bool_),
            ("b", bool_),
            ("out", out_ty),
            ("order", order_ty),
        ],
        vec![],
        true,
    );
    let mut b = B::new(ctx, entry);
    let (x, y) = (args[0], args[1]);
    let values = [
        b.val(|ctx| BitAndOp::new(ctx, x, y)),
        b.val(|ctx| BitOrOp::new(ctx, x, y)),
        b.val(|ctx| BitXorOp::new(ctx, x, y)),
        b.val(|ctx| NotOp::new(ctx, x)),
        b.val(|ctx| LtOp::new(ctx, x, y)),
    ];
    for (idx, value) in values.into_iter().enumerate() {
        store_at(&mut b, args[2], idx as u128, value);
    }
    let order = b.val(|ctx| CmpOp::new(ctx, x, y));
    store_at(&mut b, args[3], 0, order);
    b.op(|ctx| ReturnOp::new(ctx, None));

    lower(ctx, m);
    let ll = export(ctx, m);
    insta::assert_snapshot!(ll);
    check_ptx(
        &ll,
        &["ops_i32", "ops_u32", "ops_u8", "ops_f64", "ops_bool"],
    );

    let signed = function_text(&ll, "ops_i32");
    for expected in [
        "sdiv i32",
        "srem i32",
        "ashr i32",
        "sub i32 0,",
        "xor i32 %a, -1",
        "icmp slt",
        "icmp sle",
        "icmp sgt",
        "icmp sge",
        "@llvm.scmp.i8.i32",
    ] {
        assert!(signed.contains(expected), "{expected} in\n{signed}");
    }
    let unsigned = function_text(&ll, "ops_u32");
    for expected in [
        "udiv i32",
        "urem i32",
        "lshr i32",
        "icmp ult",
        "icmp ule",
        "icmp ugt",
        "icmp uge",
        "@llvm.ucmp.i8.i32",
    ] {
        assert!(unsigned.contains(expected), "{expected} in\n{unsigned}");
    }
    let float = function_text(&ll, "ops_f64");
    for expected in [
        "fadd double",
        "fsub double",
        "fmul double",
        "fdiv double",
        "call double @__nv_fmod(double %a, double %b)",
        "fneg double",
        "fcmp oeq",
        "fcmp une",
        "fcmp olt",
        "fcmp ole",
        "fcmp ogt",
        "fcmp oge",
    ] {
        assert!(float.contains(expected), "{expected} in\n{float}");
    }
    assert!(
        float.contains("select i1"),
        "three-way compare of floats:\n{float}"
    );
    let boolean = function_text(&ll, "ops_bool");
    for expected in [
        "xor i1 %a.1, true",
        "icmp ult i1",
        "zext i1",
        "store i8",
        "@llvm.ucmp.i8.i1",
    ] {
        assert!(boolean.contains(expected), "{expected} in\n{boolean}");
    }
}

/// `out[k] = cast_k(x)` for the integer casts of `x: i8`, `y: u8`, `z: i64` and `flag: bool`,
/// and the float casts of `f: f32`.
fn casts(ctx: &mut Context) -> ModuleOp {
    let m = module(ctx);
    let (i8_, u8_, i16_, i32_, u32_, i64_, u64_) = (
        si(ctx, 8),
        ui(ctx, 8),
        si(ctx, 16),
        si(ctx, 32),
        ui(ctx, 32),
        si(ctx, 64),
        ui(ctx, 64),
    );
    let (bool_, f32_, f64_) = (boolean(ctx), f32t(ctx), f64t(ctx));
    let (ints_ty, floats_ty) = (disjoint(ctx, i64_), disjoint(ctx, f64_));
    let (_, entry, args) = func(
        ctx,
        m,
        "casts",
        &[
            ("x", i8_),
            ("y", u8_),
            ("z", i64_),
            ("flag", bool_),
            ("f", f32_),
            ("ints", ints_ty),
            ("floats", floats_ty),
        ],
        vec![],
        true,
    );
    let (x, y, z, flag, f) = (args[0], args[1], args[2], args[3], args[4]);
    let mut b = B::new(ctx, entry);
    let sext = b.val(|ctx| IntCastOp::new(ctx, x, i64_));
    let zext = b.val(|ctx| IntCastOp::new(ctx, y, i64_));
    let narrow = b.val(|ctx| IntCastOp::new(ctx, z, i16_));
    let narrow = b.val(|ctx| IntCastOp::new(ctx, narrow, i64_));
    let from_bool = b.val(|ctx| IntCastOp::new(ctx, flag, i64_));
    let same_width = b.val(|ctx| IntCastOp::new(ctx, z, u64_));
    let same_width = b.val(|ctx| BitcastOp::new(ctx, same_width, i64_));
    let to_int = b.val(|ctx| FloatToIntOp::new(ctx, f, i32_));
    let to_int = b.val(|ctx| IntCastOp::new(ctx, to_int, i64_));
    let to_uint = b.val(|ctx| FloatToIntOp::new(ctx, f, u32_));
    let to_uint = b.val(|ctx| IntCastOp::new(ctx, to_uint, i64_));
    for (idx, value) in [sext, zext, narrow, from_bool, same_width, to_int, to_uint]
        .into_iter()
        .enumerate()
    {
        store_at(&mut b, args[5], idx as u128, value);
    }
    let widened = b.val(|ctx| FloatCastOp::new(ctx, f, f64_));
    let narrowed = b.val(|ctx| FloatCastOp::new(ctx, widened, f32_));
    let narrowed = b.val(|ctx| FloatCastOp::new(ctx, narrowed, f64_));
    let signed = b.val(|ctx| IntToFloatOp::new(ctx, x, f64_));
    let unsigned = b.val(|ctx| IntToFloatOp::new(ctx, y, f64_));
    let from_flag = b.val(|ctx| IntToFloatOp::new(ctx, flag, f64_));
    let bits = b.val(|ctx| BitcastOp::new(ctx, z, f64_));
    for (idx, value) in [widened, narrowed, signed, unsigned, from_flag, bits]
        .into_iter()
        .enumerate()
    {
        store_at(&mut b, args[6], idx as u128, value);
    }
    b.op(|ctx| ReturnOp::new(ctx, None));
    m
}

#[test]
fn casts_follow_the_source_signedness() {
    let ctx = &mut context();
    let m = casts(ctx);
    lower(ctx, m);
    let ll = export(ctx, m);
    insta::assert_snapshot!(ll);
    check_ptx(&ll, &["casts"]);
    for expected in [
        "sext i8 %x to i64",
        "zext i8 %y to i64",
        "trunc i64 %z to i16",
        "sext i16",
        "zext i1 %flag.1 to i64",
        "bitcast i64 %z to i64",
        "@llvm.fptosi.sat.i32.f32(float %f)",
        "@llvm.fptoui.sat.i32.f32(float %f)",
        "fpext float %f to double",
        "fptrunc double",
        "sitofp i8 %x to double",
        "uitofp i8 %y to double",
        "uitofp i1 %flag.1 to double",
        "bitcast i64 %z to double",
    ] {
        assert!(ll.contains(expected), "{expected} in\n{ll}");
    }
}
