//! Host/device agreement on kernel parameters: for a kernel taking one parameter of every
//! kind, the lowered entry's LLVM parameters and the PTX `.param`s match `kernel_abi::slots` of
//! `mir_lower::kernel_param_kind` one to one, in kind and size.

mod common;

use common::*;
use dialect_mir::{
    ops::ReturnOp,
    types::{ArrayType, EnumTag, EnumType, EnumVariant, FieldLayout, StructType},
};
use kernel_abi::{ParamKind, Slot, signature_slots, slots};
use mir_lower::{kernel_param_kind, types::llvm_size};
use pliron::{
    builtin::{op_interfaces::SymbolTableInterface, type_interfaces::FunctionTypeInterface},
    context::Context,
    operation::Operation,
    r#type::{TypeHandle, TypedHandle},
};
use pliron_llvm::{
    ops::FuncOp as LlvmFuncOp,
    types::{ArrayType as LlvmArrayType, PointerType, StructType as LlvmStructType},
};

/// One parameter of every kind, with the kind `kernel_param_kind` must give it.
fn parameters(ctx: &Context) -> Vec<(&'static str, TypeHandle, ParamKind)> {
    let (u8_, u16_, u32_, u64_) = (ui(ctx, 8), ui(ctx, 16), ui(ctx, 32), ui(ctx, 64));
    let point: TypeHandle = StructType::get(
        ctx,
        "Point",
        16,
        8,
        vec![FieldLayout::new(u32_, 8), FieldLayout::new(u64_, 0)],
    )
    .into();
    let unit: TypeHandle = StructType::get(ctx, "()", 0, 1, vec![]).into();
    let triple: TypeHandle = ArrayType::get(ctx, u16_, 3).into();
    let option: TypeHandle = EnumType::get(
        ctx,
        "Option<u32>",
        8,
        4,
        TypedHandle::from_handle(si(ctx, 64), ctx).unwrap(),
        EnumTag::Direct {
            ty: TypedHandle::from_handle(u32_, ctx).unwrap(),
            offset: 0,
        },
        vec![
            EnumVariant::new("None", 0, vec![]),
            EnumVariant::new("Some", 1, vec![FieldLayout::new(u32_, 4)]),
        ],
    )
    .into();
    vec![
        ("input", slice(ctx, f32t(ctx)), ParamKind::Slice),
        ("output", disjoint(ctx, u8_), ParamKind::Slice),
        ("count", u32_, ParamKind::Scalar { size: 4 }),
        ("flag", boolean(ctx), ParamKind::Scalar { size: 1 }),
        ("small", u8_, ParamKind::Scalar { size: 1 }),
        ("half", si(ctx, 16), ParamKind::Scalar { size: 2 }),
        ("scale", f64t(ctx), ParamKind::Scalar { size: 8 }),
        ("raw", ptr(ctx, u32_), ParamKind::Scalar { size: 8 }),
        ("wide", ui(ctx, 128), ParamKind::Scalar { size: 16 }),
        ("point", point, ParamKind::Aggregate { size: 16, align: 8 }),
        ("triple", triple, ParamKind::Aggregate { size: 6, align: 2 }),
        ("option", option, ParamKind::Aggregate { size: 8, align: 4 }),
        ("nothing", unit, ParamKind::ZeroSized),
        ("tail", slice(ctx, u64_), ParamKind::Slice),
    ]
}

#[test]
fn param_kinds() {
    let ctx = &context();
    for (name, ty, kind) in parameters(ctx) {
        assert_eq!(kernel_param_kind(ctx, ty), kind, "{name}");
    }
    assert_eq!(
        mir_lower::abi::try_kernel_param_kind(ctx, f32t(ctx)),
        Some(ParamKind::Scalar { size: 4 })
    );
}

/// Whether the LLVM type `ty` fits `slot`: same class and size.
fn matches_slot(ctx: &Context, ty: TypeHandle, slot: Slot) -> bool {
    let size = llvm_size(ctx, ty);
    let ty_ref = ty.deref(ctx);
    let aggregate = ty_ref.is::<LlvmStructType>() || ty_ref.is::<LlvmArrayType>();
    let address_space = ty_ref
        .downcast_ref::<PointerType>()
        .map(PointerType::address_space);
    match slot {
        Slot::GlobalPointer => address_space == Some(1),
        Slot::Length => size == 8 && !aggregate && address_space.is_none(),
        Slot::Scalar { size: expected } => !aggregate && size == u64::from(expected),
        Slot::Aggregate { size: expected, .. } => aggregate && size == u64::from(expected),
    }
}

/// The sizes in bytes of the `.param`s of PTX entry `entry`.
fn ptx_param_sizes(ptx: &str, entry: &str) -> Vec<u32> {
    let start = ptx
        .find(&format!(".visible .entry {entry}("))
        .expect("the entry is in the PTX");
    let params = &ptx[start..];
    let params = &params[..params.find(')').unwrap()];
    params
        .lines()
        .filter(|line| line.trim_start().starts_with(".param"))
        .map(|line| {
            if let Some(open) = line.find('[') {
                let close = line.find(']').unwrap();
                return line[open + 1..close].parse().unwrap();
            }
            let width = [
                ".u8", ".u16", ".u32", ".u64", ".f32", ".f64", ".b32", ".b64",
            ]
            .iter()
            .find(|ty| line.contains(&format!("{} ", ty)))
            .unwrap_or_else(|| panic!("unknown .param: {line}"));
            width[2..].parse::<u32>().unwrap() / 8
        })
        .collect()
}

#[test]
fn entry_parameters_follow_the_slots() {
    let ctx = &mut context();
    let m = module(ctx);
    let params = parameters(ctx);
    let named: Vec<(&str, TypeHandle)> = params.iter().map(|(n, ty, _)| (*n, *ty)).collect();
    let (_, entry, _) = func(ctx, m, "every_kind", &named, vec![], true);
    let mut b = B::new(ctx, entry);
    b.op(|ctx| ReturnOp::new(ctx, None));
    lower(ctx, m);

    let kinds: Vec<ParamKind> = params
        .iter()
        .map(|(_, ty, _)| kernel_param_kind(ctx, *ty))
        .collect();
    let expected: Vec<Slot> = signature_slots(&kinds).collect();
    let func = m.lookup(ctx, &"every_kind".try_into().unwrap()).unwrap();
    let func = Operation::get_op::<LlvmFuncOp>(func, ctx).unwrap();
    let arg_types = func.get_type(ctx).deref(ctx).arg_types();
    assert_eq!(arg_types.len(), expected.len());
    for (idx, (&ty, &slot)) in arg_types.iter().zip(&expected).enumerate() {
        assert!(
            matches_slot(ctx, ty, slot),
            "parameter {idx}: {} does not fit {slot:?}",
            pliron::printable::Printable::disp(&ty, ctx)
        );
    }

    let ll = export(ctx, m);
    let ptx = check_ptx(&ll, &["every_kind"]);
    let sizes: Vec<u32> = expected.iter().map(|slot| slot.size()).collect();
    assert_eq!(ptx_param_sizes(&ptx, "every_kind"), sizes, "{ptx}");
    assert_eq!(slots(ParamKind::ZeroSized).as_slice(), &[]);
}
