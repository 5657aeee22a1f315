//! Building every `mir` op with its builder, verifying, printing (snapshots) and parsing back.

mod common;

use common::*;
use dialect_mir::{
    ops::*,
    types::{
        ArrayType, DisjointSliceType, EnumTag, EnumType, EnumVariant, FieldLayout, PtrType,
        SliceType, UnionType, bool_type, usize_type,
    },
};
use pliron::{
    builtin::{
        op_interfaces::CallOpInterface,
        types::{FP32Type, FP64Type, FunctionType, IntegerType, Signedness},
    },
    ident,
    op::Op,
    r#type::{TypeHandle, TypedHandle},
};

#[test]
fn arithmetic_comparisons_and_casts() {
    let ctx = &mut context();
    let module = module(ctx);
    let i32_ty = si(ctx, 32);
    let u64_ty = ui(ctx, 64);
    let f32_ty: TypeHandle = FP32Type::get(ctx).into();
    let f64_ty: TypeHandle = FP64Type::get(ctx).into();
    let u8_ty = ui(ctx, 8);
    let ptr_u8 = PtrType::get(ctx, u8_ty, 1).into();
    let f = func(
        ctx,
        module,
        "arith",
        vec![i32_ty, i32_ty, f32_ty, ptr_u8],
        vec![],
    );
    let entry = f.entry_block(ctx).unwrap();
    let arg = |i| entry.deref(ctx).get_argument(i);
    let (a, c, x, p) = (arg(0), arg(1), arg(2), arg(3));
    let mut b = Builder::at_end(entry);

    for value in [
        b.add(AddOp::new(ctx, a, c), ctx).result(ctx),
        b.add(SubOp::new(ctx, a, c), ctx).result(ctx),
        b.add(MulOp::new(ctx, a, c), ctx).result(ctx),
        b.add(DivOp::new(ctx, a, c), ctx).result(ctx),
        b.add(RemOp::new(ctx, a, c), ctx).result(ctx),
        b.add(BitAndOp::new(ctx, a, c), ctx).result(ctx),
        b.add(BitOrOp::new(ctx, a, c), ctx).result(ctx),
        b.add(BitXorOp::new(ctx, a, c), ctx).result(ctx),
        b.add(ShlOp::new(ctx, a, c), ctx).result(ctx),
        b.add(ShrOp::new(ctx, a, c), ctx).result(ctx),
        b.add(NegOp::new(ctx, a), ctx).result(ctx),
        b.add(NotOp::new(ctx, a), ctx).result(ctx),
    ] {
        assert_eq!(pliron::r#type::Typed::get_type(&value, ctx), i32_ty);
    }
    let fsum = b.add(AddOp::new(ctx, x, x), ctx).result(ctx);
    b.add(NegOp::new(ctx, fsum), ctx);

    let checked = b.add(CheckedAddOp::new(ctx, a, c), ctx);
    b.add(CheckedSubOp::new(ctx, checked.value(ctx), c), ctx);
    let overflow = checked.overflow(ctx);
    b.add(CheckedMulOp::new(ctx, a, c), ctx);

    b.add(EqOp::new(ctx, a, c), ctx);
    b.add(NeOp::new(ctx, x, x), ctx);
    b.add(LtOp::new(ctx, a, c), ctx);
    b.add(LeOp::new(ctx, p, p), ctx);
    b.add(GtOp::new(ctx, overflow, overflow), ctx);
    b.add(GeOp::new(ctx, a, c), ctx);
    b.add(CmpOp::new(ctx, a, c), ctx);
    let flipped = b.add(NotOp::new(ctx, overflow), ctx).result(ctx);
    b.add(BitAndOp::new(ctx, flipped, overflow), ctx);

    let wide = b.add(IntCastOp::new(ctx, a, u64_ty), ctx).result(ctx);
    b.add(IntCastOp::new(ctx, overflow, u8_ty), ctx);
    b.add(IntToFloatOp::new(ctx, wide, f64_ty), ctx);
    b.add(FloatToIntOp::new(ctx, x, u8_ty), ctx);
    b.add(FloatCastOp::new(ctx, x, f64_ty), ctx);
    let generic = PtrType::get(ctx, u8_ty, 0).into();
    let q = b.add(PtrCastOp::new(ctx, p, generic), ctx).result(ctx);
    let addr = b.add(PtrToIntOp::new(ctx, q, u64_ty), ctx).result(ctx);
    b.add(IntToPtrOp::new(ctx, addr, generic), ctx);
    b.add(BitcastOp::new(ctx, x, ui(ctx, 32)), ctx);

    let i32_int = TypedHandle::<IntegerType>::from_handle(i32_ty, ctx).unwrap();
    b.add(ConstantOp::new_int(ctx, i32_int, -7i32 as u32 as u128), ctx);
    b.add(ConstantOp::new_bool(ctx, true), ctx);
    b.add(ConstantOp::new_f32(ctx, 0.5), ctx);
    b.add(ConstantOp::new_f64(ctx, -2.25), ctx);
    b.add(UndefOp::new(ctx, f64_ty), ctx);
    b.add(ReturnOp::new(ctx, None), ctx);

    verify(ctx, module.get_operation());
    insta::assert_snapshot!(print(ctx, module.get_operation()));
    assert_roundtrip(ctx, module.get_operation());
}

/// `Option<u32>` with rustc's layout: a `u32` tag at 0, the payload at 4.
fn option_u32(ctx: &mut pliron::context::Context) -> TypeHandle {
    let u32_ty = ui(ctx, 32);
    let isize = IntegerType::get(ctx, 64, Signedness::Signed);
    EnumType::get(
        ctx,
        "Option<u32>",
        8,
        4,
        isize,
        EnumTag::Direct {
            ty: IntegerType::get(ctx, 32, Signedness::Unsigned),
            offset: 0,
        },
        vec![
            EnumVariant::new("None", 0, vec![]),
            EnumVariant::new("Some", 1, vec![FieldLayout::new(u32_ty, 4)]),
        ],
    )
    .into()
}

#[test]
fn memory_slices_enums_and_control_flow() {
    let ctx = &mut context();
    let module = module(ctx);
    let f32_ty: TypeHandle = FP32Type::get(ctx).into();
    let u32_ty = ui(ctx, 32);
    let usize_ty: TypeHandle = usize_type(ctx).into();
    let out_ty = DisjointSliceType::get(ctx, f32_ty).into();
    let in_ty = SliceType::get(ctx, f32_ty).into();
    let option = option_u32(ctx);
    let array = ArrayType::get(ctx, f32_ty, 4).into();

    let helper_ty = FunctionType::get(ctx, vec![f32_ty], vec![f32_ty]);
    let helper = func(ctx, module, "helper", vec![f32_ty], vec![f32_ty]);
    let helper_entry = helper.entry_block(ctx).unwrap();
    let h_arg = helper_entry.deref(ctx).get_argument(0);
    Builder::at_end(helper_entry).add(ReturnOp::new(ctx, Some(h_arg)), ctx);

    let f = func(ctx, module, "kernel", vec![in_ty, out_ty, usize_ty], vec![]);
    f.set_kernel(ctx, true);
    let entry = f.entry_block(ctx).unwrap();
    let some = block(ctx, f, "some");
    let none = block(ctx, f, "none");
    let fail = block(ctx, f, "fail");
    let dead = block(ctx, f, "dead");
    let arg = |i| entry.deref(ctx).get_argument(i);
    let (input, output, idx) = (arg(0), arg(1), arg(2));
    let mut b = Builder::at_end(entry);

    // Slices: read input[idx] through the data pointer, rebuild a slice.
    let data = b.add(SlicePtrOp::new(ctx, input), ctx).result(ctx);
    let len = b.add(SliceLenOp::new(ctx, input), ctx).result(ctx);
    let elem = b.add(PtrOffsetOp::new(ctx, data, idx), ctx).result(ctx);
    let value = b.add(LoadOp::new(ctx, elem), ctx).result(ctx);
    b.add(MakeSliceOp::new(ctx, data, len, in_ty), ctx);
    b.add(PtrOffsetOp::new(ctx, data, idx), ctx);

    // A disjoint slice in a slot: its fields through mir.field_addr.
    let out_slot = b.add(AllocaOp::new(ctx, out_ty), ctx).result(ctx);
    b.add(StoreOp::new(ctx, output, out_slot), ctx);
    let out_ptr_addr = b.add(FieldAddrOp::new(ctx, out_slot, 0), ctx).result(ctx);
    let out_len_addr = b.add(FieldAddrOp::new(ctx, out_slot, 1), ctx).result(ctx);
    b.add(LoadOp::new(ctx, out_len_addr), ctx);
    let out_data = b.add(LoadOp::new(ctx, out_ptr_addr), ctx).result(ctx);

    // An array slot.
    let array_slot = b.add(AllocaOp::new(ctx, array), ctx).result(ctx);
    let first = b
        .add(ArrayElemAddrOp::new(ctx, array_slot), ctx)
        .result(ctx);
    let slot_elem = b.add(PtrOffsetOp::new(ctx, first, idx), ctx).result(ctx);
    b.add(StoreOp::new(ctx, value, slot_elem), ctx);

    // An enum in memory: Some(7), then match on it.
    let option_slot = b.add(AllocaOp::new(ctx, option), ctx).result(ctx);
    let payload = b
        .add(VariantFieldAddrOp::new(ctx, option_slot, 1, 0), ctx)
        .result(ctx);
    let u32_int = TypedHandle::<IntegerType>::from_handle(u32_ty, ctx).unwrap();
    let seven = b.add(ConstantOp::new_int(ctx, u32_int, 7), ctx).result(ctx);
    b.add(StoreOp::new(ctx, seven, payload), ctx);
    b.add(SetDiscriminantOp::new(ctx, option_slot, 1), ctx);
    let discr = b
        .add(GetDiscriminantOp::new(ctx, option_slot), ctx)
        .result(ctx);
    b.add(
        SwitchIntOp::new(ctx, discr, vec![(0, none), (1, some)], dead),
        ctx,
    );

    let mut b = Builder::at_end(some);
    let call = b.add(
        CallOp::new(ctx, ident!("helper"), helper_ty, vec![value]),
        ctx,
    );
    let out_elem = b.add(PtrOffsetOp::new(ctx, out_data, idx), ctx).result(ctx);
    b.add(StoreOp::new(ctx, call.result(ctx).unwrap(), out_elem), ctx);
    let in_bounds = b.add(LtOp::new(ctx, idx, len), ctx).result(ctx);
    b.add(CondBrOp::new(ctx, in_bounds, none, fail), ctx);

    Builder::at_end(none).add(ReturnOp::new(ctx, None), ctx);
    Builder::at_end(fail).add(TrapOp::new(ctx), ctx);
    Builder::at_end(dead).add(UnreachableOp::new(ctx), ctx);

    verify(ctx, module.get_operation());
    assert!(f.is_kernel(ctx) && !helper.is_kernel(ctx));
    assert_eq!(call.callee_name(ctx).to_string(), "helper");
    assert_eq!(call.args(ctx), vec![value]);
    insta::assert_snapshot!(print(ctx, module.get_operation()));
    assert_roundtrip(ctx, module.get_operation());
}

#[test]
fn accessors_report_what_the_builders_got() {
    let ctx = &mut context();
    let module = module(ctx);
    let u8_ty = ui(ctx, 8);
    let f = func(ctx, module, "f", vec![u8_ty], vec![]);
    let entry = f.entry_block(ctx).unwrap();
    let (a, bb, c) = (block(ctx, f, "a"), block(ctx, f, "b"), block(ctx, f, "c"));
    let d = entry.deref(ctx).get_argument(0);
    let switch =
        Builder::at_end(entry).add(SwitchIntOp::new(ctx, d, vec![(255, a), (3, bb)], c), ctx);
    assert_eq!(switch.cases(ctx), vec![(255, a), (3, bb)]);
    assert_eq!(switch.otherwise(ctx), c);
    assert_eq!(switch.value(ctx), d);
    for block in [a, bb, c] {
        Builder::at_end(block).add(ReturnOp::new(ctx, None), ctx);
    }
    verify(ctx, module.get_operation());
    assert!(!f.is_declaration(ctx));
    f.set_kernel(ctx, true);
    assert!(f.is_kernel(ctx));
    f.set_kernel(ctx, false);
    assert!(!f.is_kernel(ctx));
    assert_eq!(f.arg_types(ctx), vec![u8_ty]);
    assert!(f.result_types(ctx).is_empty());
    let bool_ty: TypeHandle = bool_type(ctx).into();
    assert_ne!(bool_ty, u8_ty);
}

#[test]
fn launch_bounds_belong_to_kernels_and_survive_printing() {
    let ctx = &mut context();
    let module = module(ctx);
    let f = func(ctx, module, "k", vec![], vec![]);
    let entry = f.entry_block(ctx).unwrap();
    Builder::at_end(entry).add(ReturnOp::new(ctx, None), ctx);
    assert_eq!(f.launch_bounds(ctx), None);
    let bounds = LaunchBounds {
        max_threads: 256,
        min_blocks: Some(2),
    };
    f.set_launch_bounds(ctx, bounds);
    assert_eq!(f.launch_bounds(ctx), Some(bounds));
    assert!(verify_error(ctx, module.get_operation()).contains("only a kernel has launch bounds"));
    f.set_kernel(ctx, true);
    verify(ctx, module.get_operation());
    assert_roundtrip(ctx, module.get_operation());

    let without_min = LaunchBounds {
        max_threads: 64,
        min_blocks: None,
    };
    f.set_launch_bounds(ctx, without_min);
    assert_eq!(f.launch_bounds(ctx), Some(without_min));
    f.set_launch_bounds(
        ctx,
        LaunchBounds {
            max_threads: 2048,
            min_blocks: None,
        },
    );
    assert!(verify_error(ctx, module.get_operation()).contains("1 to 1024 are possible"));
}

#[test]
fn text_form_parses() {
    let text = r#"
builtin.module @m {
  ^m():
    mir.func @clamp: builtin.function <(builtin.integer si16, builtin.integer si16) -> (builtin.integer si16)> {
      ^entry(x: builtin.integer si16, hi: builtin.integer si16):
        big = mir.gt x, hi : builtin.integer i1;
        mir.cond_br big, ^done(hi), ^keep()
      ^keep():
        mir.switch_int x : builtin.integer si16 [-1: ^done(hi), otherwise: ^done(x)]
      ^done(r: builtin.integer si16):
        s, o = mir.checked_sub r, hi : builtin.integer si16, builtin.integer i1;
        mir.return s
    }
}
"#;
    let (ctx, op) = parse(text).unwrap_or_else(|err| panic!("{err}"));
    insta::assert_snapshot!(canonical(&ctx, op));
}

#[test]
fn dead_pure_ops_are_removed_by_dce() {
    let ctx = &mut context();
    let module = module(ctx);
    let u64_ty = ui(ctx, 64);
    let f = func(ctx, module, "f", vec![u64_ty], vec![u64_ty]);
    let entry = f.entry_block(ctx).unwrap();
    let x = entry.deref(ctx).get_argument(0);
    let mut b = Builder::at_end(entry);
    let slot = b.add(AllocaOp::new(ctx, u64_ty), ctx).result(ctx);
    b.add(StoreOp::new(ctx, x, slot), ctx);
    let unused = b.add(MulOp::new(ctx, x, x), ctx).result(ctx);
    b.add(IntCastOp::new(ctx, unused, ui(ctx, 8)), ctx);
    b.add(ReturnOp::new(ctx, Some(x)), ctx);
    verify(ctx, module.get_operation());

    pliron::opts::dce::dce(module.get_operation(), ctx).expect("dce succeeds");
    verify(ctx, module.get_operation());
    let text = print(ctx, module.get_operation());
    assert!(
        !text.contains("mir.mul") && !text.contains("mir.int_cast"),
        "{text}"
    );
    assert!(
        text.contains("mir.store"),
        "stores have side effects:\n{text}"
    );
}

#[test]
fn raw_memory_select_and_unions() {
    let ctx = &mut context();
    let module = module(ctx);
    let u32_ty = ui(ctx, 32);
    let u8_ty = ui(ctx, 8);
    let f32_ty: TypeHandle = FP32Type::get(ctx).into();
    let usize_ty: TypeHandle = usize_type(ctx).into();
    let union_ty = UnionType::get(ctx, "U", 4, 4, vec![u32_ty, f32_ty]).into();
    let ptr_u32: TypeHandle = PtrType::get(ctx, u32_ty, 0).into();
    let f = func(
        ctx,
        module,
        "raw",
        vec![ptr_u32, ptr_u32, usize_ty, u8_ty, bool_type(ctx).into()],
        vec![u32_ty],
    );
    let entry = f.entry_block(ctx).unwrap();
    let arg = |i| entry.deref(ctx).get_argument(i);
    let (dst, src, n, byte, cond) = (arg(0), arg(1), arg(2), arg(3), arg(4));
    let mut b = Builder::at_end(entry);

    b.add(CopyNonOverlappingOp::new(ctx, dst, src, n, false), ctx);
    let copy = b.add(CopyOp::new(ctx, dst, src, n, true), ctx);
    assert!(copy.is_volatile(ctx));
    b.add(WriteBytesOp::new(ctx, dst, byte, n, false), ctx);
    let x = b.add(VolatileLoadOp::new(ctx, src, 1), ctx);
    assert_eq!(x.align(ctx), 1);
    let x = x.result(ctx);
    b.add(VolatileStoreOp::new(ctx, x, dst, 4), ctx);

    let slot = b.add(AllocaOp::new(ctx, union_ty), ctx).result(ctx);
    let as_f32 = b.add(FieldAddrOp::new(ctx, slot, 1), ctx).result(ctx);
    let one = b.add(ConstantOp::new_f32(ctx, 1.0), ctx).result(ctx);
    b.add(StoreOp::new(ctx, one, as_f32), ctx);
    let as_u32 = b.add(FieldAddrOp::new(ctx, slot, 0), ctx).result(ctx);
    let bits = b.add(LoadOp::new(ctx, as_u32), ctx).result(ctx);
    let chosen = b.add(SelectOp::new(ctx, cond, bits, x), ctx).result(ctx);
    b.add(ReturnOp::new(ctx, Some(chosen)), ctx);

    verify(ctx, module.get_operation());
    insta::assert_snapshot!(print(ctx, module.get_operation()));
    assert_roundtrip(ctx, module.get_operation());
}
