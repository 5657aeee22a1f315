//! Lowering of what `core`'s memory functions and intrinsics need: bulk copies and fills,
//! volatile accesses, unions, `select`, and conversions between 128-bit integers and floats.
//! Each kernel is compiled to PTX (and assembled when `ptxas` is installed).

mod common;

use common::*;
use dialect_mir::{ops::*, types::UnionType};
use pliron::r#type::TypeHandle;

#[test]
fn bulk_copies_fills_and_volatile_accesses() {
    let ctx = &mut context();
    let m = module(ctx);
    let (u8_, u32_, u64_) = (ui(ctx, 8), ui(ctx, 32), ui(ctx, 64));
    let p32 = ptr(ctx, u32_);
    let (_, entry, args) = func(
        ctx,
        m,
        "bulk",
        &[("dst", p32), ("src", p32), ("n", u64_), ("byte", u8_)],
        vec![],
        true,
    );
    let (dst, src, n, byte) = (args[0], args[1], args[2], args[3]);
    let mut b = B::new(ctx, entry);
    b.op(|ctx| CopyNonOverlappingOp::new(ctx, dst, src, n, false));
    b.op(|ctx| CopyOp::new(ctx, dst, src, n, false));
    b.op(|ctx| WriteBytesOp::new(ctx, dst, byte, n, true));
    let x = b.val(|ctx| VolatileLoadOp::new(ctx, src, 1));
    b.op(|ctx| VolatileStoreOp::new(ctx, x, dst, 4));
    b.op(|ctx| ReturnOp::new(ctx, None));
    lower(ctx, m);
    let ll = export(ctx, m);
    for expected in [
        "mul i64 %n, 4",
        "call void @llvm.memcpy.p0.p0.i64(ptr %dst",
        "call void @llvm.memmove.p0.p0.i64(ptr %dst",
        "call void @llvm.memset.p0.i64(ptr %dst, i8 %byte",
        ", i1 true)",
        // Generic pointers of unknown origin go through an inline `mov` first, so that NVPTX
        // cannot see a local address and drop `volatile`.
        "= call ptr asm \"mov.b64 $0, $1;\", \"=l,l\"(ptr %src)",
        "= call ptr asm \"mov.b64 $0, $1;\", \"=l,l\"(ptr %dst)",
        "load volatile i32, ptr %v3, align 1",
        "store volatile i32 %v4, ptr %v5, align 4",
    ] {
        assert!(ll.contains(expected), "{expected} in\n{ll}");
    }
    check_ptx(&ll, &["bulk"]);
}

#[test]
fn union_fields_share_the_union_address_and_select_picks() {
    let ctx = &mut context();
    let m = module(ctx);
    let (u32_, f32_, flag) = (ui(ctx, 32), f32t(ctx), boolean(ctx));
    let union_ty: TypeHandle = UnionType::get(ctx, "U", 4, 4, vec![u32_, f32_]).into();
    let out_ty = disjoint(ctx, u32_);
    let (_, entry, args) = func(
        ctx,
        m,
        "unions",
        &[("x", f32_), ("c", flag), ("out", out_ty)],
        vec![],
        true,
    );
    let mut b = B::new(ctx, entry);
    let slot = b.val(|ctx| AllocaOp::new(ctx, union_ty));
    let as_f32 = b.val(|ctx| FieldAddrOp::new(ctx, slot, 1));
    b.op(|ctx| StoreOp::new(ctx, args[0], as_f32));
    let whole = b.val(|ctx| LoadOp::new(ctx, slot));
    let copy = b.val(|ctx| AllocaOp::new(ctx, union_ty));
    b.op(|ctx| StoreOp::new(ctx, whole, copy));
    let as_u32 = b.val(|ctx| FieldAddrOp::new(ctx, copy, 0));
    let bits = b.val(|ctx| LoadOp::new(ctx, as_u32));
    let seven = b.int(u32_, 7);
    let chosen = b.val(|ctx| SelectOp::new(ctx, args[1], bits, seven));
    let data = b.val(|ctx| SlicePtrOp::new(ctx, args[2]));
    b.op(|ctx| StoreOp::new(ctx, chosen, data));
    b.op(|ctx| ReturnOp::new(ctx, None));
    lower(ctx, m);
    let ll = export(ctx, m);
    for expected in ["alloca [4 x i8], align 4", "load [4 x i8]", "select i1 %c"] {
        assert!(ll.contains(expected), "{expected} in\n{ll}");
    }
    check_ptx(&ll, &["unions"]);
}

#[test]
fn conversions_between_128_bit_integers_and_floats() {
    let ctx = &mut context();
    let m = module(ctx);
    let (i128_, u128_, f32_, f64_) = (si(ctx, 128), ui(ctx, 128), f32t(ctx), f64t(ctx));
    let usize_ = ui(ctx, 64);
    let ints_ty = disjoint(ctx, i128_);
    let floats_ty = disjoint(ctx, f64_);
    let (_, entry, args) = func(
        ctx,
        m,
        "wide",
        &[
            ("a", i128_),
            ("b", u128_),
            ("x", f32_),
            ("y", f64_),
            ("ints", ints_ty),
            ("floats", floats_ty),
        ],
        vec![],
        true,
    );
    let (a, bu, x, y) = (args[0], args[1], args[2], args[3]);
    let mut b = B::new(ctx, entry);
    let from_signed = b.val(|ctx| IntToFloatOp::new(ctx, a, f64_));
    let from_unsigned = b.val(|ctx| IntToFloatOp::new(ctx, bu, f32_));
    let from_unsigned = b.val(|ctx| FloatCastOp::new(ctx, from_unsigned, f64_));
    let ints = b.val(|ctx| SlicePtrOp::new(ctx, args[4]));
    let floats = b.val(|ctx| SlicePtrOp::new(ctx, args[5]));
    let to_signed = b.val(|ctx| FloatToIntOp::new(ctx, y, i128_));
    let to_unsigned = b.val(|ctx| FloatToIntOp::new(ctx, x, u128_));
    let to_unsigned = b.val(|ctx| IntCastOp::new(ctx, to_unsigned, i128_));
    let one = b.int(usize_, 1);
    let second_int = b.val(|ctx| PtrOffsetOp::new(ctx, ints, one));
    let second_float = b.val(|ctx| PtrOffsetOp::new(ctx, floats, one));
    b.op(|ctx| StoreOp::new(ctx, to_signed, ints));
    b.op(|ctx| StoreOp::new(ctx, to_unsigned, second_int));
    b.op(|ctx| StoreOp::new(ctx, from_signed, floats));
    b.op(|ctx| StoreOp::new(ctx, from_unsigned, second_float));
    b.op(|ctx| ReturnOp::new(ctx, None));
    lower(ctx, m);
    let ll = export(ctx, m);
    for expected in [
        "sitofp i128 %a to double",
        "uitofp i128 %b to float",
        "fptosi double %y to i128",
        "fptoui float %x to i128",
        "fcmp uno double %y",
    ] {
        assert!(ll.contains(expected), "{expected} in\n{ll}");
    }
    assert!(!ll.contains(".sat.i128"), "{ll}");
    check_ptx(&ll, &["wide"]);
}
