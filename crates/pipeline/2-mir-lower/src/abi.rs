//! The kernel entry ABI, built from [kernel_abi::slots] so that the PTX `.entry` takes exactly
//! the parameters the host launcher pushes.
//!
//! Each `mir` parameter of a kernel has a [ParamKind] ([kernel_param_kind]); each of its slots
//! becomes one entry parameter, typed in `mir` terms first ([entry_param_types]) so that the
//! prologue can be written with `mir` ops and lowered like the body:
//!
//! | slot | entry parameter | LLVM |
//! |---|---|---|
//! | `GlobalPointer` | `mir.ptr<T, 1>` | `ptr addrspace(1)` |
//! | `Length` | `ui64` | `i64` |
//! | `Scalar` | the scalar (`ui8` for a `bool`) | `iN` / `float` / `double` / `ptr` |
//! | `Aggregate` | the struct / array / enum | its LLVM type, by value |
//! | `GridConstant` (a `&T`) | `mir.ptr<T, 0>` itself | `ptr byval(T) align A "nvvm.grid_constant"` |
//!
//! The prologue ([build_prologue]) rebuilds each parameter's `mir` value at the top of the entry
//! block: `mir.ptr_cast` to the generic address space + `mir.make_slice` for slices,
//! `mir.int_cast` to `i1` for a `bool`, `mir.undef` for a zero-sized parameter.
//!
//! A slice's pointer slot carries what Rust promises about the memory behind it
//! ([entry_param_attrs]): `noalias` for `&mut [T]` and `DisjointSlice<T>`, `noalias readonly`
//! for a `&[T]` without interior mutability (its loads become `ld.global.nc`; `readonly` alone
//! in a kernel that may read volatile memory, whose volatile loads must stay coherent), and for every
//! slice `nonnull` (the launcher never passes a null pointer, not even for an empty buffer) and
//! `align(align_of::<T>())`. The prologue's cast to the generic address space is marked
//! [ATTR_KEY_MIR_PTR_CAST_NONNULL], so that its lowering tells LLVM the generic pointer is not
//! null either (`llvm.assume`): `DisjointSlice::get_mut`'s `Option<&mut T>` then needs no test.

use dialect_mir::{
    ops::{IntCastOp, MakeSliceOp, ParamAccess, PtrCastOp, UndefOp, slice_elem},
    types::{
        ArrayType, EnumType, PtrType, StructType, UnionType, is_bool, is_float, is_ptr,
        is_rust_int, layout_of, usize_type,
    },
};
use kernel_abi::{ParamKind, Slot, slots};
use pliron::{
    basic_block::BasicBlock,
    builtin::attributes::UnitAttr,
    builtin::types::{IntegerType, Signedness},
    common_traits::Named,
    context::{Context, Ptr},
    dict_key,
    identifier::Identifier,
    irbuild::{
        inserter::{IRInserter, Inserter},
        listener::DummyListener,
    },
    op::Op,
    r#type::{TypeHandle, TypedHandle},
    value::Value,
};
use pliron_llvm::{
    llvm_attrs::{LlvmAttrValue, LlvmAttributesAttr},
    types::FuncType,
};

use crate::{error::OpError, types::function_type};

/// The NVPTX address space of global memory, where the host's buffers live.
pub const ADDRSPACE_GLOBAL: u32 = 1;

dict_key!(
    /// Marks a `mir.ptr_cast` whose operand is known not to be null (a `builtin.unit`): its
    /// lowering adds `llvm.assume(result != null)`, because LLVM does not carry `nonnull`
    /// across an `addrspacecast`.
    ATTR_KEY_MIR_PTR_CAST_NONNULL,
    "mir_ptr_cast_nonnull"
);

/// The LLVM attributes of each entry parameter of a kernel whose parameters have types
/// `params` and accesses `access` (one set per [kernel_abi] slot, in order; see the module
/// docs). A kernel that `reads_volatile` memory has no `noalias` on its read-only slices:
/// NVPTX would turn its volatile loads through them into non-coherent `ld.global.nc`.
pub fn entry_param_attrs(
    ctx: &Context,
    params: &[TypeHandle],
    access: &[ParamAccess],
    reads_volatile: bool,
) -> Result<Vec<LlvmAttributesAttr>, OpError> {
    let mut attrs = vec![];
    for (index, &ty) in params.iter().enumerate() {
        let kind = param_kind(ctx, ty)?;
        for (slot_index, &slot) in slots(kind).as_slice().iter().enumerate() {
            let mut set = LlvmAttributesAttr::new();
            if slot == Slot::GlobalPointer && slot_index == 0 {
                match access.get(index).copied().unwrap_or(ParamAccess::Plain) {
                    ParamAccess::Shared => {
                        if !reads_volatile {
                            set.set("noalias", LlvmAttrValue::Unit);
                        }
                        set.set("readonly", LlvmAttrValue::Unit);
                    }
                    ParamAccess::Exclusive => set.set("noalias", LlvmAttrValue::Unit),
                    ParamAccess::Plain => {}
                }
                set.set("nonnull", LlvmAttrValue::Unit);
                let align = slice_elem(ctx, ty)
                    .and_then(|elem| layout_of(ctx, elem))
                    .map_or(1, |layout| layout.align.max(1));
                set.set("align", LlvmAttrValue::Int(align));
            }
            attrs.push(set);
        }
    }
    Ok(attrs)
}

/// The [ParamKind] of a kernel parameter of `mir` type `ty`, or `None` for a type that is not
/// a `mir` value type.
pub fn try_kernel_param_kind(ctx: &Context, ty: TypeHandle) -> Option<ParamKind> {
    if slice_elem(ctx, ty).is_some() {
        return Some(ParamKind::Slice);
    }
    let layout = layout_of(ctx, ty)?;
    let size = u32::try_from(layout.size).ok()?;
    let align = u32::try_from(layout.align).ok()?;
    if is_rust_int(ctx, ty) || is_bool(ctx, ty) || is_float(ctx, ty) || is_ptr(ctx, ty) {
        return Some(ParamKind::Scalar { size });
    }
    let ty_ref = ty.deref(ctx);
    let aggregate = ty_ref.is::<StructType>()
        || ty_ref.is::<ArrayType>()
        || ty_ref.is::<EnumType>()
        || ty_ref.is::<UnionType>();
    if !aggregate {
        return None;
    }
    Some(if size == 0 {
        ParamKind::ZeroSized
    } else {
        ParamKind::Aggregate { size, align }
    })
}

/// The [ParamKind] of a kernel parameter of `mir` type `ty`: slices and disjoint slices are
/// `Slice`; integers, `bool`, floats and pointers `Scalar`; structs, arrays, enums and unions
/// `Aggregate`, or `ZeroSized` when they have no bytes.
///
/// Panics if `ty` is not a `mir` value type (see [try_kernel_param_kind]).
pub fn kernel_param_kind(ctx: &Context, ty: TypeHandle) -> ParamKind {
    try_kernel_param_kind(ctx, ty).expect("a kernel parameter has a mir value type")
}

/// The [ParamKind] of `ty`, or the error naming it.
fn param_kind(ctx: &Context, ty: TypeHandle) -> Result<ParamKind, OpError> {
    try_kernel_param_kind(ctx, ty)
        .ok_or_else(|| crate::types::unsupported(ctx, ty, "not a kernel parameter type"))
}

/// The [ParamKind] of the kernel parameter of type `ty`, a grid constant when `grid_constant`
/// (a `&T` parameter: its pointee's size and alignment).
fn entry_param_kind(
    ctx: &Context,
    ty: TypeHandle,
    grid_constant: bool,
) -> Result<ParamKind, OpError> {
    if !grid_constant {
        return param_kind(ctx, ty);
    }
    let pointee = grid_constant_pointee(ctx, ty)?;
    let layout = layout_of(ctx, pointee)
        .ok_or_else(|| crate::types::unsupported(ctx, ty, "a grid constant without a layout"))?;
    let size = u32::try_from(layout.size).ok().filter(|&size| size > 0);
    let align = u32::try_from(layout.align).ok();
    match (size, align) {
        (Some(size), Some(align)) => Ok(ParamKind::GridConstant { size, align }),
        _ => Err(crate::types::unsupported(
            ctx,
            ty,
            "a grid constant of a zero-sized or huge type",
        )),
    }
}

/// The type a grid-constant parameter (a generic `mir.ptr`) points to.
fn grid_constant_pointee(ctx: &Context, ty: TypeHandle) -> Result<TypeHandle, OpError> {
    ty.deref(ctx)
        .downcast_ref::<PtrType>()
        .filter(|ptr| ptr.address_space() == 0)
        .map(|ptr| ptr.pointee())
        .ok_or_else(|| crate::types::unsupported(ctx, ty, "a grid constant that is not a `&T`"))
}

/// A kernel entry parameter that is a grid constant: LLVM `ptr byval(T) align A
/// "nvvm.grid_constant"`, so that its address is the parameter's own (PTX `cvta.param`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridConstantParam {
    /// The index of the entry parameter.
    pub index: usize,
    /// The `mir` type of the value passed (`T` of `&T`).
    pub pointee: TypeHandle,
    /// Its alignment in bytes.
    pub align: u32,
}

/// The `mir` type of the entry parameter for `slot` of a parameter of type `ty`.
fn slot_type(ctx: &Context, ty: TypeHandle, slot: Slot) -> Result<TypeHandle, OpError> {
    Ok(match slot {
        Slot::GlobalPointer => {
            let elem = slice_elem(ctx, ty).ok_or_else(|| {
                crate::types::unsupported(ctx, ty, "a pointer slot of a non-slice")
            })?;
            PtrType::get(ctx, elem, ADDRSPACE_GLOBAL).into()
        }
        Slot::Length => usize_type(ctx).into(),
        Slot::Scalar { .. } if is_bool(ctx, ty) => {
            IntegerType::get(ctx, 8, Signedness::Unsigned).into()
        }
        Slot::Scalar { .. } | Slot::Aggregate { .. } => ty,
    })
}

/// The `mir` types of the entry parameters of a kernel whose parameters have types `params`,
/// one per [kernel_abi] slot, in order.
pub fn entry_param_types(ctx: &Context, params: &[TypeHandle]) -> Result<Vec<TypeHandle>, OpError> {
    let mut types = vec![];
    for &ty in params {
        for &slot in slots(param_kind(ctx, ty)?).as_slice() {
            types.push(slot_type(ctx, ty, slot)?);
        }
    }
    Ok(types)
}

/// The LLVM type of the entry of a kernel whose parameters have types `params` (it returns
/// `void`).
pub fn kernel_function_type(
    ctx: &Context,
    params: &[TypeHandle],
) -> Result<TypedHandle<FuncType>, OpError> {
    function_type(ctx, &entry_param_types(ctx, params)?, &[])
}

/// Give `entry` (the entry block of a kernel, whose arguments are the `mir` parameters) the
/// entry parameters of the kernel ABI, and rebuild each `mir` parameter from them at the top of
/// the block. Returns the LLVM type of the entry.
///
/// `grid_constants` has bit `i` set for each parameter `i` that is a grid constant (a `&T`
/// whose value the host passes): its entry parameter is the pointer itself, marked `byval` and
/// `"nvvm.grid_constant"` by the returned [GridConstantParam]s.
pub fn build_prologue(
    ctx: &mut Context,
    entry: Ptr<BasicBlock>,
    grid_constants: u64,
) -> Result<(TypedHandle<FuncType>, Vec<GridConstantParam>), OpError> {
    let params: Vec<Value> = entry.deref(ctx).arguments().collect();
    let param_types: Vec<TypeHandle> = params
        .iter()
        .map(|param| pliron::r#type::Typed::get_type(param, ctx))
        .collect();
    let mut inserter = IRInserter::<DummyListener>::new_at_block_start(entry);
    let mut entry_types = vec![];
    let mut grid_constant_params = vec![];
    for (i, (&param, &ty)) in params.iter().zip(&param_types).enumerate() {
        let grid_constant = i < 64 && grid_constants >> i & 1 == 1;
        let kind = entry_param_kind(ctx, ty, grid_constant)?;
        if let ParamKind::GridConstant { align, .. } = kind {
            grid_constant_params.push(GridConstantParam {
                index: entry_types.len(),
                pointee: grid_constant_pointee(ctx, ty)?,
                align,
            });
        }
        let name = param.given_name(ctx);
        let mut slot_values = vec![];
        for (idx, &slot) in slots(kind).as_slice().iter().enumerate() {
            // A grid constant's entry parameter is the pointer (`byval`), not the value.
            let slot_ty = if grid_constant {
                ty
            } else {
                slot_type(ctx, ty, slot)?
            };
            entry_types.push(slot_ty);
            let arg_idx = BasicBlock::push_argument(entry, ctx, slot_ty);
            let arg = entry.deref(ctx).get_argument(arg_idx);
            if let Some(name) = &name {
                let suffix = match (kind, idx) {
                    (ParamKind::Slice, 0) => "_ptr",
                    (ParamKind::Slice, _) => "_len",
                    _ => "",
                };
                let arg_name = Identifier::try_from(format!("{name}{suffix}")).ok();
                arg.set_name(ctx, arg_name);
            }
            slot_values.push(arg);
        }
        let value = rebuild(ctx, &mut inserter, ty, kind, &slot_values)?;
        param.replace_all_uses_with(ctx, &value);
        if !slot_values.contains(&value) {
            value.set_name(ctx, name);
        }
    }
    for _ in &params {
        BasicBlock::remove_argument(entry, ctx, 0);
    }
    let func_ty = function_type(ctx, &entry_types, &[])?;
    Ok((func_ty, grid_constant_params))
}

/// The `mir` value of a parameter of type `ty` and `kind` from its entry parameters.
fn rebuild(
    ctx: &mut Context,
    inserter: &mut IRInserter<DummyListener>,
    ty: TypeHandle,
    kind: ParamKind,
    slot_values: &[Value],
) -> Result<Value, OpError> {
    let result = |op: &dyn Op, ctx: &Context| op.get_operation().deref(ctx).get_result(0);
    Ok(match (kind, slot_values) {
        (ParamKind::Slice, &[ptr, len]) => {
            let elem = slice_elem(ctx, ty).expect("a slice has an element type");
            let generic = PtrType::get_generic(ctx, elem).into();
            let cast = PtrCastOp::new(ctx, ptr, generic);
            cast.get_operation()
                .deref_mut(ctx)
                .attributes
                .set(ATTR_KEY_MIR_PTR_CAST_NONNULL.clone(), UnitAttr::new());
            inserter.append_op(ctx, &cast);
            let slice = MakeSliceOp::new(ctx, result(&cast, ctx), len, ty);
            inserter.append_op(ctx, &slice);
            result(&slice, ctx)
        }
        (ParamKind::Scalar { .. }, &[byte]) if is_bool(ctx, ty) => {
            let cast = IntCastOp::new(ctx, byte, ty);
            inserter.append_op(ctx, &cast);
            result(&cast, ctx)
        }
        (
            ParamKind::Scalar { .. } | ParamKind::Aggregate { .. } | ParamKind::GridConstant { .. },
            &[value],
        ) => value,
        (ParamKind::ZeroSized, []) => {
            let undef = UndefOp::new(ctx, ty);
            inserter.append_op(ctx, &undef);
            result(&undef, ctx)
        }
        _ => {
            return Err(OpError::Malformed(format!(
                "{kind:?} has {} slot values",
                slot_values.len()
            )));
        }
    })
}
