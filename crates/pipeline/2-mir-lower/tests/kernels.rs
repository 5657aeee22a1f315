//! Small kernels built with the dialect builders, as the translator would emit them: lowered
//! (snapshot of the LLVM dialect), exported (snapshot of the `.ll`), compiled to PTX and
//! assembled with `ptxas` when available.

mod common;

use common::*;
use dialect_mir::{
    ops::*,
    types::{EnumTag, EnumType, EnumVariant, FieldLayout, StructType},
};
use dialect_nvvm::{IntrinsicOp, table};
use pliron::{
    builtin::{ops::ModuleOp, types::FunctionType},
    context::Context,
    ident,
    op::Op,
    opts::mem2reg::mem2reg,
    pass::AnalysisManager,
    r#type::{TypeHandle, TypedHandle},
};

/// Lower the module `build` makes, snapshot the LLVM dialect and the `.ll`, and compile it.
fn run_case(name: &str, build: fn(&mut Context) -> ModuleOp, entries: &[&str]) -> String {
    let ctx = &mut context();
    let module = build(ctx);
    let lowered = lower(ctx, module);
    insta::assert_snapshot!(format!("{name}_lowered"), lowered);
    let ll = export(ctx, module);
    insta::assert_snapshot!(format!("{name}_ll"), ll);
    check_ptx(&ll, entries);
    ll
}

/// `c[i] = a[i] + b[i]` for `i = blockIdx.x * blockDim.x + threadIdx.x < a.len()`, with the
/// bounds check of `b[i]` panicking.
fn vecadd(ctx: &mut Context) -> ModuleOp {
    let m = module(ctx);
    let (f32_, u64_) = (f32t(ctx), ui(ctx, 64));
    let (a_ty, c_ty) = (slice(ctx, f32_), disjoint(ctx, f32_));
    let (f, entry, args) = func(
        ctx,
        m,
        "vecadd",
        &[("a", a_ty), ("b", a_ty), ("c", c_ty)],
        vec![],
        true,
    );
    let (a, b_, c) = (args[0], args[1], args[2]);
    let (check_b, _) = block(ctx, f, "check_b", vec![]);
    let (body, _) = block(ctx, f, "body", vec![]);
    let (panic, _) = block(ctx, f, "panic", vec![]);
    let (exit, _) = block(ctx, f, "exit", vec![]);

    let mut b = B::new(ctx, entry);
    let ctaid = b.val(|ctx| IntrinsicOp::new(ctx, &table::read_ptx_sreg_ctaid_x, vec![]));
    let ntid = b.val(|ctx| IntrinsicOp::new(ctx, &table::read_ptx_sreg_ntid_x, vec![]));
    let tid = b.val(|ctx| IntrinsicOp::new(ctx, &table::read_ptx_sreg_tid_x, vec![]));
    let base = b.val(|ctx| MulOp::new(ctx, ctaid, ntid));
    let i32_ = b.val(|ctx| AddOp::new(ctx, base, tid));
    let i = b.val(|ctx| IntCastOp::new(ctx, i32_, u64_));
    let n = b.val(|ctx| SliceLenOp::new(ctx, a));
    let in_range = b.val(|ctx| LtOp::new(ctx, i, n));
    b.op(|ctx| CondBrOp::new(ctx, in_range, check_b, exit));

    b.at(check_b);
    let nb = b.val(|ctx| SliceLenOp::new(ctx, b_));
    let ok = b.val(|ctx| LtOp::new(ctx, i, nb));
    b.op(|ctx| CondBrOp::new(ctx, ok, body, panic));

    b.at(body);
    let element = |b: &mut B, s| {
        let data = b.val(|ctx| SlicePtrOp::new(ctx, s));
        b.val(|ctx| PtrOffsetOp::new(ctx, data, i))
    };
    let pa = element(&mut b, a);
    let pb = element(&mut b, b_);
    let pc = element(&mut b, c);
    let x = b.val(|ctx| LoadOp::new(ctx, pa));
    let y = b.val(|ctx| LoadOp::new(ctx, pb));
    let sum = b.val(|ctx| AddOp::new(ctx, x, y));
    b.op(|ctx| StoreOp::new(ctx, sum, pc));
    b.op(|ctx| GotoOp::new(ctx, exit));

    b.at(panic);
    b.op(TrapOp::new);
    b.at(exit);
    b.op(|ctx| ReturnOp::new(ctx, None));
    m
}

#[test]
fn vecadd_kernel() {
    let ll = run_case("vecadd", vecadd, &["vecadd"]);
    assert!(ll.contains("define ptx_kernel void @vecadd(ptr addrspace(1)"));
    assert!(ll.contains("addrspacecast ptr addrspace(1)"));
    assert!(ll.contains("call void @llvm.trap()"));
}

/// `out[0] = 0 + 1 + ... + (n - 1)` with every local in a slot, then mem2reg: the counter and
/// the sum become loop-carried block arguments.
fn sum_loop(ctx: &mut Context) -> ModuleOp {
    let m = module(ctx);
    let u32_ = ui(ctx, 32);
    let out_ty = disjoint(ctx, u32_);
    let (f, entry, args) = func(
        ctx,
        m,
        "sum_to",
        &[("out", out_ty), ("n", u32_)],
        vec![],
        true,
    );
    let (header, _) = block(ctx, f, "header", vec![]);
    let (body, _) = block(ctx, f, "body", vec![]);
    let (exit, _) = block(ctx, f, "exit", vec![]);

    let mut b = B::new(ctx, entry);
    let n_slot = b.val(|ctx| AllocaOp::new(ctx, u32_));
    let i_slot = b.val(|ctx| AllocaOp::new(ctx, u32_));
    let acc_slot = b.val(|ctx| AllocaOp::new(ctx, u32_));
    b.op(|ctx| StoreOp::new(ctx, args[1], n_slot));
    let zero = b.int(u32_, 0);
    b.op(|ctx| StoreOp::new(ctx, zero, i_slot));
    b.op(|ctx| StoreOp::new(ctx, zero, acc_slot));
    b.op(|ctx| GotoOp::new(ctx, header));

    b.at(header);
    let i = b.val(|ctx| LoadOp::new(ctx, i_slot));
    let n = b.val(|ctx| LoadOp::new(ctx, n_slot));
    let more = b.val(|ctx| LtOp::new(ctx, i, n));
    b.op(|ctx| CondBrOp::new(ctx, more, body, exit));

    b.at(body);
    let acc = b.val(|ctx| LoadOp::new(ctx, acc_slot));
    let i = b.val(|ctx| LoadOp::new(ctx, i_slot));
    let sum = b.val(|ctx| AddOp::new(ctx, acc, i));
    b.op(|ctx| StoreOp::new(ctx, sum, acc_slot));
    let one = b.int(u32_, 1);
    let next = b.val(|ctx| AddOp::new(ctx, i, one));
    b.op(|ctx| StoreOp::new(ctx, next, i_slot));
    b.op(|ctx| GotoOp::new(ctx, header));

    b.at(exit);
    let acc = b.val(|ctx| LoadOp::new(ctx, acc_slot));
    let data = b.val(|ctx| SlicePtrOp::new(ctx, args[0]));
    b.op(|ctx| StoreOp::new(ctx, acc, data));
    b.op(|ctx| ReturnOp::new(ctx, None));

    verify(ctx, m);
    mem2reg(m.get_operation(), ctx, &mut AnalysisManager::default()).expect("mem2reg");
    m
}

#[test]
fn loop_after_mem2reg() {
    let ll = run_case("sum_loop", sum_loop, &["sum_to"]);
    assert!(ll.contains("phi i32"), "{ll}");
    assert!(!ll.contains("alloca"), "{ll}");
}

/// `struct P { a: u8, b: u64, c: u16, flag: bool, z: () }` as rustc lays it out (b, c, a, flag
/// in memory, `z` zero-sized at 0), passed by value: `out[0] = a + b + c + flag + (&z - &p)`.
fn struct_param(ctx: &mut Context) -> ModuleOp {
    let m = module(ctx);
    let (u8_, u16_, u64_, bool_) = (ui(ctx, 8), ui(ctx, 16), ui(ctx, 64), boolean(ctx));
    let unit: TypeHandle = StructType::get(ctx, "()", 0, 1, vec![]).into();
    let p_ty: TypeHandle = StructType::get(
        ctx,
        "P",
        16,
        8,
        vec![
            FieldLayout::new(u8_, 10),
            FieldLayout::new(u64_, 0),
            FieldLayout::new(u16_, 8),
            FieldLayout::new(bool_, 11),
            FieldLayout::new(unit, 0),
        ],
    )
    .into();
    let out_ty = disjoint(ctx, u64_);
    let (_, entry, args) = func(
        ctx,
        m,
        "fields",
        &[("p", p_ty), ("out", out_ty)],
        vec![],
        true,
    );
    let mut b = B::new(ctx, entry);
    let slot = b.val(|ctx| AllocaOp::new(ctx, p_ty));
    b.op(|ctx| StoreOp::new(ctx, args[0], slot));
    let field = |b: &mut B, idx| {
        let addr = b.val(|ctx| FieldAddrOp::new(ctx, slot, idx));
        b.val(|ctx| LoadOp::new(ctx, addr))
    };
    let a = field(&mut b, 0);
    let bv = field(&mut b, 1);
    let c = field(&mut b, 2);
    let flag = field(&mut b, 3);
    let a = b.val(|ctx| IntCastOp::new(ctx, a, u64_));
    let c = b.val(|ctx| IntCastOp::new(ctx, c, u64_));
    let flag = b.val(|ctx| IntCastOp::new(ctx, flag, u64_));
    let z = b.val(|ctx| FieldAddrOp::new(ctx, slot, 4));
    let z = b.val(|ctx| PtrToIntOp::new(ctx, z, u64_));
    let base = b.val(|ctx| PtrToIntOp::new(ctx, slot, u64_));
    let offset = b.val(|ctx| SubOp::new(ctx, z, base));
    let mut sum = b.val(|ctx| AddOp::new(ctx, a, bv));
    for term in [c, flag, offset] {
        sum = b.val(|ctx| AddOp::new(ctx, sum, term));
    }
    let data = b.val(|ctx| SlicePtrOp::new(ctx, args[1]));
    b.op(|ctx| StoreOp::new(ctx, sum, data));
    b.op(|ctx| ReturnOp::new(ctx, None));
    m
}

#[test]
fn struct_parameter_with_reordered_fields() {
    let ll = run_case("struct_param", struct_param, &["fields"]);
    assert!(
        ll.contains("define ptx_kernel void @fields({ i64, i16, i8, i8, [4 x i8] } %p"),
        "{ll}"
    );
}

/// `Option<u32>`: tag `u32` at 0, payload at 4.
fn option_u32(ctx: &Context) -> TypeHandle {
    let (u32_, isize_) = (ui(ctx, 32), si(ctx, 64));
    let tag = TypedHandle::from_handle(u32_, ctx).unwrap();
    let discr = TypedHandle::from_handle(isize_, ctx).unwrap();
    EnumType::get(
        ctx,
        "Option<u32>",
        8,
        4,
        discr,
        EnumTag::Direct { ty: tag, offset: 0 },
        vec![
            EnumVariant::new("None", 0, vec![]),
            EnumVariant::new("Some", 1, vec![FieldLayout::new(u32_, 4)]),
        ],
    )
    .into()
}

/// `Option<&u32>`: the null pointer is `None`.
fn option_ref(ctx: &Context) -> TypeHandle {
    let (u32_, u64_, isize_) = (ui(ctx, 32), ui(ctx, 64), si(ctx, 64));
    let niche = TypedHandle::from_handle(u64_, ctx).unwrap();
    let discr = TypedHandle::from_handle(isize_, ctx).unwrap();
    let ref_ty = ptr(ctx, u32_);
    EnumType::get(
        ctx,
        "Option<&u32>",
        8,
        8,
        discr,
        EnumTag::Niche {
            ty: niche,
            offset: 0,
            niche_variants_start: 0,
            niche_variants_end: 0,
            niche_start: 0,
            untagged_variant: 1,
        },
        vec![
            EnumVariant::new("None", 0, vec![]),
            EnumVariant::new("Some", 1, vec![FieldLayout::new(ref_ty, 0)]),
        ],
    )
    .into()
}

/// `out[0] = match x { Some(v) => v, None => 100 } + match y { Some(r) => *r, None => 1000 }`
/// where `x: Option<u32>` is a parameter and `y: Option<&u32>` is `Some(&7)` for odd `sel`.
fn enum_match(ctx: &mut Context) -> ModuleOp {
    let m = module(ctx);
    let u32_ = ui(ctx, 32);
    let (opt, opt_ref) = (option_u32(ctx), option_ref(ctx));
    let out_ty = disjoint(ctx, u32_);
    let (f, entry, args) = func(
        ctx,
        m,
        "matches",
        &[("x", opt), ("sel", u32_), ("out", out_ty)],
        vec![],
        true,
    );
    let (x_some, _) = block(ctx, f, "x_some", vec![]);
    let (x_none, _) = block(ctx, f, "x_none", vec![]);
    let (x_done, xd) = block(ctx, f, "x_done", vec![u32_]);
    let (mk_some, _) = block(ctx, f, "mk_some", vec![]);
    let (mk_none, _) = block(ctx, f, "mk_none", vec![]);
    let (check, _) = block(ctx, f, "check", vec![]);
    let (y_some, _) = block(ctx, f, "y_some", vec![]);
    let (y_none, _) = block(ctx, f, "y_none", vec![]);
    let (done, dv) = block(ctx, f, "done", vec![u32_]);

    let mut b = B::new(ctx, entry);
    let xs = b.val(|ctx| AllocaOp::new(ctx, opt));
    let ys = b.val(|ctx| AllocaOp::new(ctx, opt_ref));
    let local = b.val(|ctx| AllocaOp::new(ctx, u32_));
    b.op(|ctx| StoreOp::new(ctx, args[0], xs));
    let d = b.val(|ctx| GetDiscriminantOp::new(ctx, xs));
    b.op(|ctx| SwitchIntOp::new(ctx, d, vec![(1, x_some)], x_none));

    b.at(x_some);
    let payload = b.val(|ctx| VariantFieldAddrOp::new(ctx, xs, 1, 0));
    let v = b.val(|ctx| LoadOp::new(ctx, payload));
    b.op(|ctx| GotoOp::new_with_args(ctx, x_done, vec![v]));
    b.at(x_none);
    let hundred = b.int(u32_, 100);
    b.op(|ctx| GotoOp::new_with_args(ctx, x_done, vec![hundred]));

    b.at(x_done);
    let seven = b.int(u32_, 7);
    b.op(|ctx| StoreOp::new(ctx, seven, local));
    let two = b.int(u32_, 2);
    let rem = b.val(|ctx| RemOp::new(ctx, args[1], two));
    let one = b.int(u32_, 1);
    let odd = b.val(|ctx| EqOp::new(ctx, rem, one));
    b.op(|ctx| CondBrOp::new(ctx, odd, mk_some, mk_none));

    b.at(mk_some);
    let payload = b.val(|ctx| VariantFieldAddrOp::new(ctx, ys, 1, 0));
    b.op(|ctx| StoreOp::new(ctx, local, payload));
    b.op(|ctx| SetDiscriminantOp::new(ctx, ys, 1));
    b.op(|ctx| GotoOp::new(ctx, check));
    b.at(mk_none);
    b.op(|ctx| SetDiscriminantOp::new(ctx, ys, 0));
    b.op(|ctx| GotoOp::new(ctx, check));

    b.at(check);
    let d = b.val(|ctx| GetDiscriminantOp::new(ctx, ys));
    b.op(|ctx| SwitchIntOp::new(ctx, d, vec![(0, y_none)], y_some));

    b.at(y_some);
    let payload = b.val(|ctx| VariantFieldAddrOp::new(ctx, ys, 1, 0));
    let r = b.val(|ctx| LoadOp::new(ctx, payload));
    let v = b.val(|ctx| LoadOp::new(ctx, r));
    let total = b.val(|ctx| AddOp::new(ctx, xd[0], v));
    b.op(|ctx| GotoOp::new_with_args(ctx, done, vec![total]));
    b.at(y_none);
    let thousand = b.int(u32_, 1000);
    let total = b.val(|ctx| AddOp::new(ctx, xd[0], thousand));
    b.op(|ctx| GotoOp::new_with_args(ctx, done, vec![total]));

    b.at(done);
    let data = b.val(|ctx| SlicePtrOp::new(ctx, args[2]));
    b.op(|ctx| StoreOp::new(ctx, dv[0], data));
    b.op(|ctx| ReturnOp::new(ctx, None));
    m
}

#[test]
fn enum_match_direct_and_niche() {
    let ll = run_case("enum_match", enum_match, &["matches"]);
    assert!(ll.contains("[2 x i32] %x"), "{ll}");
}

/// `out[0] = a + b`, panicking on overflow (`checked_add` + `assert`).
fn checked_add(ctx: &mut Context) -> ModuleOp {
    let m = module(ctx);
    let i32_ = si(ctx, 32);
    let out_ty = disjoint(ctx, i32_);
    let (f, entry, args) = func(
        ctx,
        m,
        "checked",
        &[("a", i32_), ("b", i32_), ("out", out_ty)],
        vec![],
        true,
    );
    let (ok, _) = block(ctx, f, "ok", vec![]);
    let (overflow, _) = block(ctx, f, "overflow", vec![]);
    let mut b = B::new(ctx, entry);
    let checked = b.op(|ctx| CheckedAddOp::new(ctx, args[0], args[1]));
    let (value, flag) = (checked.value(b.ctx), checked.overflow(b.ctx));
    b.op(|ctx| CondBrOp::new(ctx, flag, overflow, ok));
    b.at(ok);
    let data = b.val(|ctx| SlicePtrOp::new(ctx, args[2]));
    b.op(|ctx| StoreOp::new(ctx, value, data));
    b.op(|ctx| ReturnOp::new(ctx, None));
    b.at(overflow);
    b.op(TrapOp::new);
    m
}

#[test]
fn checked_add_traps_on_overflow() {
    let ll = run_case("checked_add", checked_add, &["checked"]);
    assert!(ll.contains("@llvm.sadd.with.overflow.i32"), "{ll}");
}

/// `bytes[0] = x as u8; wide[0] = y as i64` (saturating).
fn float_to_int(ctx: &mut Context) -> ModuleOp {
    let m = module(ctx);
    let (f32_, f64_, u8_, i64_) = (f32t(ctx), f64t(ctx), ui(ctx, 8), si(ctx, 64));
    let (bytes_ty, wide_ty) = (disjoint(ctx, u8_), disjoint(ctx, i64_));
    let (_, entry, args) = func(
        ctx,
        m,
        "saturate",
        &[
            ("x", f32_),
            ("y", f64_),
            ("bytes", bytes_ty),
            ("wide", wide_ty),
        ],
        vec![],
        true,
    );
    let mut b = B::new(ctx, entry);
    let byte = b.val(|ctx| FloatToIntOp::new(ctx, args[0], u8_));
    let wide = b.val(|ctx| FloatToIntOp::new(ctx, args[1], i64_));
    let bytes = b.val(|ctx| SlicePtrOp::new(ctx, args[2]));
    b.op(|ctx| StoreOp::new(ctx, byte, bytes));
    let wides = b.val(|ctx| SlicePtrOp::new(ctx, args[3]));
    b.op(|ctx| StoreOp::new(ctx, wide, wides));
    b.op(|ctx| ReturnOp::new(ctx, None));
    m
}

#[test]
fn float_to_int_saturates() {
    let ll = run_case("float_to_int", float_to_int, &["saturate"]);
    assert!(ll.contains("@llvm.fptoui.sat.i8.f32"), "{ll}");
    assert!(ll.contains("@llvm.fptosi.sat.i64.f64"), "{ll}");
}

/// `out[0] = square(x)` with `square` a device function.
fn call(ctx: &mut Context) -> ModuleOp {
    let m = module(ctx);
    let f32_ = f32t(ctx);
    let (_, entry, args) = func(ctx, m, "square", &[("x", f32_)], vec![f32_], false);
    let mut b = B::new(ctx, entry);
    let sq = b.val(|ctx| MulOp::new(ctx, args[0], args[0]));
    b.op(|ctx| ReturnOp::new(ctx, Some(sq)));

    let out_ty = disjoint(ctx, f32_);
    let (_, entry, args) = func(
        ctx,
        m,
        "apply",
        &[("x", f32_), ("out", out_ty)],
        vec![],
        true,
    );
    let callee_ty = FunctionType::get(ctx, vec![f32_], vec![f32_]);
    let mut b = B::new(ctx, entry);
    let call = b.op(|ctx| CallOp::new(ctx, ident!("square"), callee_ty, vec![args[0]]));
    let r = call.result(b.ctx).unwrap();
    let data = b.val(|ctx| SlicePtrOp::new(ctx, args[1]));
    b.op(|ctx| StoreOp::new(ctx, r, data));
    b.op(|ctx| ReturnOp::new(ctx, None));
    m
}

#[test]
fn call_between_functions() {
    let ll = run_case("call", call, &["apply"]);
    assert!(ll.contains("define internal float @square(float"), "{ll}");
    assert!(ll.contains("call float @square("), "{ll}");
}

/// Warp and block intrinsics: `out[tid] = shfl_down(shfl_xor(tid ^ lane, 1), 2) + ...`,
/// around a barrier.
fn warp(ctx: &mut Context) -> ModuleOp {
    use dialect_nvvm::table::*;
    let m = module(ctx);
    let (u32_, u64_) = (ui(ctx, 32), ui(ctx, 64));
    let out_ty = disjoint(ctx, u32_);
    let (_, entry, args) = func(ctx, m, "warp", &[("out", out_ty)], vec![], true);
    let mut b = B::new(ctx, entry);
    let tid = b.val(|ctx| IntrinsicOp::new(ctx, &read_ptx_sreg_tid_x, vec![]));
    let lane = b.val(|ctx| IntrinsicOp::new(ctx, &read_ptx_sreg_laneid, vec![]));
    let x = b.val(|ctx| BitXorOp::new(ctx, tid, lane));
    b.op(|ctx| IntrinsicOp::new(ctx, &barrier0, vec![]));
    let one = b.int(u32_, 1);
    let two = b.int(u32_, 2);
    let s1 = b.val(|ctx| IntrinsicOp::new(ctx, &shfl_sync_bfly_i32, vec![x, one]));
    let s2 = b.val(|ctx| IntrinsicOp::new(ctx, &shfl_sync_down_i32, vec![s1, two]));
    let s3 = b.val(|ctx| IntrinsicOp::new(ctx, &shfl_sync_up_i32, vec![s2, one]));
    let zero = b.int(u32_, 0);
    let s4 = b.val(|ctx| IntrinsicOp::new(ctx, &shfl_sync_idx_i32, vec![s3, zero]));
    let idx = b.val(|ctx| IntCastOp::new(ctx, tid, u64_));
    let data = b.val(|ctx| SlicePtrOp::new(ctx, args[0]));
    let slot = b.val(|ctx| PtrOffsetOp::new(ctx, data, idx));
    b.op(|ctx| StoreOp::new(ctx, s4, slot));
    b.op(|ctx| ReturnOp::new(ctx, None));
    m
}

#[test]
fn warp_intrinsics_are_convergent() {
    let ll = run_case("warp", warp, &["warp"]);
    assert!(
        ll.contains("call void @llvm.nvvm.barrier0() convergent"),
        "{ll}"
    );
    assert!(
        ll.contains("@llvm.nvvm.shfl.sync.up.i32(i32 -1, i32 %")
            && ll.contains(", i32 0) convergent"),
        "{ll}"
    );
    assert!(ll.contains("@llvm.nvvm.read.ptx.sreg.laneid()"), "{ll}");
}

/// A grid-constant parameter (`&T` of a kernel, here a 128-byte, 64-aligned struct like a TMA
/// tensor map) is the `byval` pointer itself: the PTX parameter holds the value, and the
/// pointer the kernel uses is the parameter's address (`cvta.param`), not a local copy.
#[test]
fn grid_constant_parameters_stay_in_the_param_space() {
    let ctx = &mut context();
    let m = module(ctx);
    let u64_ = ui(ctx, 64);
    let words: TypeHandle = dialect_mir::types::ArrayType::get(ctx, u64_, 16).into();
    let map_ty: TypeHandle =
        StructType::get(ctx, "TensorMap", 128, 64, vec![FieldLayout::new(words, 0)]).into();
    let map_ref = ptr(ctx, map_ty);
    let out_ty = slice(ctx, u64_);
    let (f, entry, args) = func(
        ctx,
        m,
        "gc",
        &[("out", out_ty), ("map", map_ref)],
        vec![],
        true,
    );
    f.set_grid_constants(ctx, 0b10);
    let mut b = B::new(ctx, entry);
    // out[0] = the map's address, then the map's first word through the pointer.
    let addr = b.val(|ctx| PtrToIntOp::new(ctx, args[1], u64_));
    let data = b.val(|ctx| SlicePtrOp::new(ctx, args[0]));
    b.op(|ctx| StoreOp::new(ctx, addr, data));
    b.op(|ctx| ReturnOp::new(ctx, None));
    lower(ctx, m);
    let ll = export(ctx, m);
    assert!(
        ll.contains(
            "define ptx_kernel void @gc(ptr addrspace(1) nonnull align(8) %out_ptr, i64 %out_len, \
             ptr align(64) \
             byval({ [16 x i64] }) \"nvvm.grid_constant\"=\"\" %map)"
        ),
        "{ll}"
    );
    let ptx = check_ptx(&ll, &["gc"]);
    assert!(
        ptx.contains(".param .align 64 .b8 gc_param_2[128]"),
        "{ptx}"
    );
    assert!(ptx.contains("cvta.param.u64"), "{ptx}");
    assert!(!ptx.contains(".local"), "{ptx}");
}

/// The verifier refuses a grid-constant mark on a parameter that is not a pointer.
#[test]
fn grid_constants_must_be_pointer_parameters() {
    let ctx = &mut context();
    let m = module(ctx);
    let u32_ = ui(ctx, 32);
    let (f, entry, _) = func(ctx, m, "bad", &[("x", u32_)], vec![], true);
    f.set_grid_constants(ctx, 1);
    let mut b = B::new(ctx, entry);
    b.op(|ctx| ReturnOp::new(ctx, None));
    let err = pliron::operation::verify_operation(m.get_operation(), ctx)
        .expect_err("a u32 cannot be a grid constant");
    let text = {
        use pliron::printable::Printable;
        err.disp(ctx).to_string()
    };
    assert!(
        text.contains("grid-constant parameter 0 is not a pointer"),
        "{text}"
    );
}
