//! The `mir` dialect: Rust's MIR semantics as pliron IR (see `docs/device-ir.md`).
//!
//! * [types]: `mir.ptr`, `mir.slice`, `mir.disjoint_slice`, `mir.dyn_ptr`, `mir.array`,
//!   `mir.struct`, `mir.enum`, `mir.union` (scalars are pliron's builtin integer and float types);
//! * [attributes]: `mir.index` (field / variant indices), `mir.case_values`, `mir.align`, and the
//!   layout and initial content of globals (`mir.global_layout`, `mir.global_init`);
//! * [ops]: constants, arithmetic, casts, memory (raw copies and volatile accesses included),
//!   atomics, slices, trait objects, enums, control flow, calls, `mir.func` and `mir.global`;
//! * [passes]: linear-time verification and mem2reg.
//!
//! Every type and op registers itself in each new [Context] when
//! this crate is linked; [register] does it explicitly (and makes sure the crate is linked).

use pliron::{
    attribute::Attribute,
    context::Context,
    dialect::{Dialect, DialectName},
    op::Op,
    r#type::Type,
};

pub mod attributes;
pub mod ops;
pub mod passes;
pub mod types;

/// The name of the dialect.
pub const DIALECT_NAME: &str = "mir";

/// Register the `mir` dialect, its types, attributes and ops in `ctx` (idempotent).
pub fn register(ctx: &mut Context) {
    let name = DialectName::try_new(DIALECT_NAME).expect("a valid dialect name");
    Dialect::register(ctx, &name);

    types::PtrType::register(ctx);
    types::SliceType::register(ctx);
    types::DisjointSliceType::register(ctx);
    types::DynPtrType::register(ctx);
    types::ArrayType::register(ctx);
    types::StructType::register(ctx);
    types::EnumType::register(ctx);
    types::UnionType::register(ctx);

    attributes::IndexAttr::register(ctx);
    attributes::CaseValuesAttr::register(ctx);
    attributes::GlobalInitAttr::register(ctx);
    attributes::GlobalLayoutAttr::register(ctx);
    attributes::AlignAttr::register(ctx);

    macro_rules! register_ops {
        ($($op:ident),* $(,)?) => {
            $(ops::$op::register(ctx);)*
        };
    }
    register_ops!(
        ConstantOp,
        UndefOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        RemOp,
        AlgebraicAddOp,
        AlgebraicSubOp,
        AlgebraicMulOp,
        AlgebraicDivOp,
        AlgebraicRemOp,
        NegOp,
        BitAndOp,
        BitOrOp,
        BitXorOp,
        NotOp,
        ShlOp,
        ShrOp,
        CheckedAddOp,
        CheckedSubOp,
        CheckedMulOp,
        EqOp,
        NeOp,
        LtOp,
        LeOp,
        GtOp,
        GeOp,
        CmpOp,
        IntCastOp,
        IntToFloatOp,
        FloatToIntOp,
        FloatCastOp,
        PtrCastOp,
        PtrToIntOp,
        IntToPtrOp,
        BitcastOp,
        AllocaOp,
        LoadOp,
        StoreOp,
        FieldAddrOp,
        ArrayElemAddrOp,
        PtrOffsetOp,
        MakeSliceOp,
        SlicePtrOp,
        SliceLenOp,
        MakeDynOp,
        DynDataOp,
        DynVtableOp,
        GetDiscriminantOp,
        SetDiscriminantOp,
        VariantFieldAddrOp,
        GotoOp,
        CondBrOp,
        SwitchIntOp,
        ReturnOp,
        UnreachableOp,
        TrapOp,
        CallOp,
        CallIndirectOp,
        FuncOp,
        MathOp,
        GlobalOp,
        GlobalAddrOp,
        FuncAddrOp,
        AtomicLoadOp,
        AtomicStoreOp,
        AtomicRmwOp,
        AtomicCmpxchgOp,
        FenceOp,
        SelectOp,
        CopyNonOverlappingOp,
        CopyOp,
        WriteBytesOp,
        VolatileLoadOp,
        VolatileStoreOp,
    );
}
