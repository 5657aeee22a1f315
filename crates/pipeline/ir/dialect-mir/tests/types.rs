//! The `mir` types: printing, parsing back, uniquing, layout helpers and verification.

mod common;

use common::*;
use dialect_mir::types::*;
use pliron::{
    builtin::types::{FP32Type, IntegerType, Signedness},
    common_traits::Verify,
    context::Context,
    irfmt::parsers::type_parser,
    parsable::parse_from_str,
    printable::Printable,
    r#type::TypeHandle,
};

/// `Option<&u8>`: the null pointer is the niche of `None`.
fn option_ref(ctx: &Context) -> TypeHandle {
    let u8_ty = ui(ctx, 8);
    let ptr = PtrType::get(ctx, u8_ty, 0).into();
    EnumType::get(
        ctx,
        "Option<&u8>",
        8,
        8,
        IntegerType::get(ctx, 64, Signedness::Signed),
        EnumTag::Niche {
            ty: IntegerType::get(ctx, 64, Signedness::Unsigned),
            offset: 0,
            niche_variants_start: 0,
            niche_variants_end: 0,
            niche_start: 0,
            untagged_variant: 1,
        },
        vec![
            EnumVariant::new("None", 0, vec![]),
            EnumVariant::new("Some", 1, vec![FieldLayout::new(ptr, 0)]),
        ],
    )
    .into()
}

/// A sample of every kind of `mir` type.
fn samples(ctx: &Context) -> Vec<TypeHandle> {
    let f32_ty: TypeHandle = FP32Type::get(ctx).into();
    let i8_ty = si(ctx, 8);
    let u16_ty = ui(ctx, 16);
    let bool_ty: TypeHandle = bool_type(ctx).into();
    // (bool, u16, i8) laid out by rustc as u16 @ 0, bool @ 2, i8 @ 3.
    let tuple = StructType::get(
        ctx,
        "(bool, u16, i8)",
        4,
        2,
        vec![
            FieldLayout::new(bool_ty, 2),
            FieldLayout::new(u16_ty, 0),
            FieldLayout::new(i8_ty, 3),
        ],
    );
    let unit_enum = EnumType::get(
        ctx,
        "Single",
        0,
        1,
        IntegerType::get(ctx, 64, Signedness::Signed),
        EnumTag::None,
        vec![EnumVariant::new("Only", 0, vec![])],
    );
    vec![
        PtrType::get(ctx, f32_ty, 3).into(),
        SliceType::get(ctx, i8_ty).into(),
        DisjointSliceType::get(ctx, f32_ty).into(),
        ArrayType::get(ctx, tuple.into(), 16).into(),
        tuple.into(),
        option_ref(ctx),
        unit_enum.into(),
        StructType::get(ctx, "Empty", 0, 1, vec![]).into(),
        UnionType::get(
            ctx,
            "MaybeUninit<f32>",
            4,
            4,
            vec![StructType::get(ctx, "()", 0, 1, vec![]).into(), f32_ty],
        )
        .into(),
    ]
}

#[test]
fn types_print_and_parse_back() {
    let ctx = &mut context();
    let types = samples(ctx);
    let printed: Vec<String> = types.iter().map(|ty| ty.disp(ctx).to_string()).collect();
    insta::assert_snapshot!(printed.join("\n"));
    for (ty, text) in types.iter().zip(&printed) {
        ty.verify(ctx).unwrap();
        let parsed =
            parse_from_str(type_parser(), ctx, text).unwrap_or_else(|err| panic!("{text}: {err}"));
        assert_eq!(parsed, *ty, "{text} parses back to the same (uniqued) type");
    }
}

#[test]
fn types_are_uniqued_by_content() {
    let ctx = &context();
    assert_eq!(samples(ctx), samples(ctx));
    let u8_ty = ui(ctx, 8);
    let a = StructType::get(ctx, "S", 1, 1, vec![FieldLayout::new(u8_ty, 0)]);
    let b = StructType::get(ctx, "S", 2, 1, vec![FieldLayout::new(u8_ty, 0)]);
    assert_ne!(a, b, "same name, different layouts: different types");
    assert_ne!(
        PtrType::get(ctx, u8_ty, 0),
        PtrType::get(ctx, u8_ty, 1),
        "address spaces differ"
    );
}

#[test]
fn struct_memory_order_follows_offsets() {
    let ctx = &context();
    let tuple = samples(ctx)[4];
    let tuple = tuple.deref(ctx);
    let tuple = tuple.downcast_ref::<StructType>().unwrap();
    assert_eq!(tuple.memory_order(), vec![1, 0, 2]);
    assert_eq!(tuple.num_fields(), 3);
    assert_eq!(tuple.field(2).unwrap().offset, 3);
    assert!(tuple.field(3).is_none());
    assert_eq!(
        (tuple.size(), tuple.align(), tuple.name()),
        (4, 2, "(bool, u16, i8)")
    );
}

#[test]
fn layouts() {
    let ctx = &context();
    let layout = |ty| layout_of(ctx, ty).map(|l| (l.size, l.align));
    assert_eq!(layout(bool_type(ctx).into()), Some((1, 1)));
    assert_eq!(layout(si(ctx, 128)), Some((16, 16)));
    assert_eq!(layout(FP32Type::get(ctx).into()), Some((4, 4)));
    let types = samples(ctx);
    assert_eq!(layout(types[0]), Some((8, 8)), "pointer");
    assert_eq!(layout(types[1]), Some((16, 8)), "slice");
    assert_eq!(layout(types[2]), Some((16, 8)), "disjoint slice");
    assert_eq!(layout(types[3]), Some((64, 2)), "array of 16 4-byte tuples");
    assert_eq!(layout(types[5]), Some((8, 8)), "Option<&u8>");
    assert_eq!(layout(types[8]), Some((4, 4)), "MaybeUninit<f32>");
    assert_eq!(
        layout(pliron::builtin::types::UnitType::get(ctx).into()),
        None
    );
}

#[test]
fn enum_accessors() {
    let ctx = &context();
    let option = option_ref(ctx);
    let option = option.deref(ctx);
    let option = option.downcast_ref::<EnumType>().unwrap();
    assert_eq!(option.num_variants(), 2);
    assert_eq!(option.variant(1).unwrap().name, "Some");
    assert!(matches!(
        option.tag(),
        EnumTag::Niche {
            untagged_variant: 1,
            ..
        }
    ));
    assert_eq!(option.discr_ty().deref(ctx).width(), 64);
}

/// The verification error of `ty`.
fn type_error(ctx: &Context, ty: TypeHandle) -> String {
    ty.verify(ctx).unwrap_err().to_string()
}

#[test]
fn malformed_layouts_fail_to_verify() {
    let ctx = &context();
    let u32_ty = ui(ctx, 32);
    let u8 = IntegerType::get(ctx, 8, Signedness::Unsigned);
    let isize = IntegerType::get(ctx, 64, Signedness::Signed);
    let variants = |n: usize| {
        (0..n)
            .map(|i| EnumVariant::new(format!("V{i}"), i as u128, vec![]))
            .collect::<Vec<_>>()
    };
    let errors = [
        type_error(
            ctx,
            StructType::get(ctx, "Overflow", 4, 4, vec![FieldLayout::new(u32_ty, 2)]).into(),
        ),
        type_error(ctx, StructType::get(ctx, "BadAlign", 6, 3, vec![]).into()),
        type_error(
            ctx,
            UnionType::get(ctx, "TooSmall", 2, 2, vec![u32_ty]).into(),
        ),
        type_error(ctx, StructType::get(ctx, "Ragged", 6, 4, vec![]).into()),
        type_error(
            ctx,
            EnumType::get(
                ctx,
                "TagOutside",
                1,
                1,
                isize,
                EnumTag::Direct { ty: u8, offset: 1 },
                variants(2),
            )
            .into(),
        ),
        type_error(
            ctx,
            EnumType::get(
                ctx,
                "BadNiche",
                1,
                1,
                isize,
                EnumTag::Niche {
                    ty: u8,
                    offset: 0,
                    niche_variants_start: 1,
                    niche_variants_end: 2,
                    niche_start: 2,
                    untagged_variant: 0,
                },
                variants(2),
            )
            .into(),
        ),
        type_error(
            ctx,
            EnumType::get(
                ctx,
                "WideDiscr",
                1,
                1,
                IntegerType::get(ctx, 8, Signedness::Unsigned),
                EnumTag::Direct { ty: u8, offset: 0 },
                vec![EnumVariant::new("Big", 256, vec![])],
            )
            .into(),
        ),
    ];
    insta::assert_snapshot!(errors.join("\n"));
}
