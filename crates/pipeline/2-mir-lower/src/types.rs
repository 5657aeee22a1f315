//! Type conversion from `mir` types to LLVM dialect types.
//!
//! Values and memory differ only for `bool`: an `i1` value is one `i8` byte in memory, so
//! [memory_type] (used for slots, loads, stores, element types and aggregate fields) differs
//! from [value_type] there. Aggregates keep rustc's layout exactly: structs become literal
//! structs in offset order with explicit `[k x i8]` padding (packed when LLVM's natural
//! alignment would move a field), enums an opaque blob of their size and alignment, unions an
//! array of their bytes.

use dialect_mir::types::{
    ArrayType, DisjointSliceType, DynPtrType, EnumType, Layout, PtrType, SliceType, StructType,
    UnionType, layout_of,
};
use pliron::{
    builtin::{
        type_interfaces::{FloatTypeInterface, FunctionTypeInterface},
        types::{FunctionType, IntegerType, Signedness},
    },
    context::Context,
    printable::Printable,
    r#type::{TypeHandle, TypedHandle, type_cast, type_impls},
};
use pliron_llvm::types::{
    ArrayType as LlvmArrayType, FuncType, PointerType, StructLayout, StructType as LlvmStructType,
    VoidType,
};

use crate::error::OpError;

/// Where a struct field lives in the lowered LLVM struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldSlot {
    /// The field is LLVM struct field `index`.
    Index(u32),
    /// The field is zero-sized: it has no LLVM field, only a byte offset.
    ZeroSized {
        /// The byte offset of the field.
        offset: u64,
    },
}

/// A `mir.struct` lowered to LLVM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructLowering {
    /// The literal LLVM struct type.
    pub llvm_type: TypeHandle,
    /// For each field in declaration order, where it is.
    pub fields: Vec<FieldSlot>,
}

/// The error for a type that cannot be lowered.
pub(crate) fn unsupported(ctx: &Context, ty: TypeHandle, reason: impl Into<String>) -> OpError {
    OpError::UnsupportedType {
        ty: ty.disp(ctx).to_string(),
        reason: reason.into(),
    }
}

/// Whether `ty` is a `mir` type (or a signed / unsigned integer, or a builtin function type)
/// that the lowering must replace; signless integers and floats are already LLVM types.
pub fn needs_conversion(ctx: &Context, ty: TypeHandle) -> bool {
    let ty_ref = ty.deref(ctx);
    if let Some(int_ty) = ty_ref.downcast_ref::<IntegerType>() {
        return !int_ty.is_signless();
    }
    ty_ref.is::<PtrType>()
        || ty_ref.is::<SliceType>()
        || ty_ref.is::<DisjointSliceType>()
        || ty_ref.is::<DynPtrType>()
        || ty_ref.is::<ArrayType>()
        || ty_ref.is::<StructType>()
        || ty_ref.is::<EnumType>()
        || ty_ref.is::<UnionType>()
        || ty_ref.is::<FunctionType>()
}

/// The signless LLVM integer type of `width` bits.
pub fn int_type(ctx: &Context, width: u32) -> TypeHandle {
    IntegerType::get(ctx, width, Signedness::Signless).into()
}

/// The width of `ty` if it is an integer (of any signedness).
pub fn int_width(ctx: &Context, ty: TypeHandle) -> Option<u32> {
    ty.deref(ctx)
        .downcast_ref::<IntegerType>()
        .map(IntegerType::width)
}

/// Whether `ty` is a signed integer (`si*`): it selects signed division, shifts, comparisons
/// and extensions.
pub fn is_signed(ctx: &Context, ty: TypeHandle) -> bool {
    ty.deref(ctx)
        .downcast_ref::<IntegerType>()
        .is_some_and(IntegerType::is_signed)
}

/// The number of bits of `ty` if it is a float type.
pub fn float_bits(ctx: &Context, ty: TypeHandle) -> Option<u32> {
    let ty_ref = ty.deref(ctx);
    type_cast::<dyn FloatTypeInterface>(&*ty_ref)
        .and_then(|float_ty| u32::try_from(float_ty.get_semantics().bits).ok())
}

/// Whether `ty` is a float type.
pub fn is_float(ctx: &Context, ty: TypeHandle) -> bool {
    type_impls::<dyn FloatTypeInterface>(&*ty.deref(ctx))
}

/// rustc's size and alignment of `ty`.
pub fn layout(ctx: &Context, ty: TypeHandle) -> Result<Layout, OpError> {
    layout_of(ctx, ty).ok_or_else(|| unsupported(ctx, ty, "it has no memory layout"))
}

/// The literal `{ ptr, i64 }` of slices.
pub fn slice_type(ctx: &Context) -> TypeHandle {
    let ptr = PointerType::get(ctx, 0).into();
    let len = int_type(ctx, 64);
    LlvmStructType::get_unnamed(ctx, (vec![ptr, len], StructLayout::Unpacked)).into()
}

/// The literal `{ ptr, ptr }` of trait object pointers (data, vtable).
pub fn dyn_ptr_type(ctx: &Context) -> TypeHandle {
    let ptr: TypeHandle = PointerType::get(ctx, 0).into();
    LlvmStructType::get_unnamed(ctx, (vec![ptr, ptr], StructLayout::Unpacked)).into()
}

/// The LLVM type of an SSA value of type `ty`.
pub fn value_type(ctx: &Context, ty: TypeHandle) -> Result<TypeHandle, OpError> {
    let ty_ref = ty.deref(ctx);
    if let Some(int_ty) = ty_ref.downcast_ref::<IntegerType>() {
        return Ok(int_type(ctx, int_ty.width()));
    }
    if type_impls::<dyn FloatTypeInterface>(&*ty_ref) {
        return Ok(ty);
    }
    if let Some(ptr) = ty_ref.downcast_ref::<PtrType>() {
        return Ok(PointerType::get(ctx, ptr.address_space()).into());
    }
    if ty_ref.is::<SliceType>() || ty_ref.is::<DisjointSliceType>() {
        return Ok(slice_type(ctx));
    }
    if ty_ref.is::<DynPtrType>() {
        return Ok(dyn_ptr_type(ctx));
    }
    if let Some(array) = ty_ref.downcast_ref::<ArrayType>() {
        let elem = memory_type(ctx, array.elem())?;
        return Ok(LlvmArrayType::get(ctx, elem, array.len()).into());
    }
    if let Some(struct_ty) = ty_ref.downcast_ref::<StructType>() {
        return lower_struct(ctx, struct_ty).map(|lowered| lowered.llvm_type);
    }
    if let Some(enum_ty) = ty_ref.downcast_ref::<EnumType>() {
        return Ok(enum_blob(ctx, enum_ty.size(), enum_ty.align()));
    }
    if let Some(union_ty) = ty_ref.downcast_ref::<UnionType>() {
        return Ok(union_bytes(ctx, union_ty.size()));
    }
    if let Some(func_ty) = ty_ref.downcast_ref::<FunctionType>() {
        let (args, results) = (func_ty.arg_types(), func_ty.res_types());
        drop(ty_ref);
        return function_type(ctx, &args, &results).map(Into::into);
    }
    drop(ty_ref);
    Err(unsupported(ctx, ty, "not a mir value type"))
}

/// The LLVM type of a value of type `ty` stored in memory: a `bool` is an `i8` byte.
pub fn memory_type(ctx: &Context, ty: TypeHandle) -> Result<TypeHandle, OpError> {
    if dialect_mir::types::is_bool(ctx, ty) {
        return Ok(int_type(ctx, 8));
    }
    value_type(ctx, ty)
}

/// An enum of `size` bytes aligned to `align`: `[size/align x i(align*8)]`, or `{}` when
/// empty. The element is at most an `i128`, LLVM's widest aligned integer on NVPTX.
pub fn enum_blob(ctx: &Context, size: u64, align: u64) -> TypeHandle {
    if size == 0 {
        return LlvmStructType::get_unnamed(ctx, (vec![], StructLayout::Unpacked)).into();
    }
    let unit = align.clamp(1, 16);
    let elem = int_type(ctx, (unit * 8) as u32);
    LlvmArrayType::get(ctx, elem, size / unit).into()
}

/// A union of `size` bytes: `[size x i8]`, or `{}` when empty. Bytes, not wider integers: a
/// union (a `MaybeUninit`) may be partly uninitialised, and a wider integer holding one
/// uninitialised byte would poison its initialised neighbours when loaded.
pub fn union_bytes(ctx: &Context, size: u64) -> TypeHandle {
    if size == 0 {
        return LlvmStructType::get_unnamed(ctx, (vec![], StructLayout::Unpacked)).into();
    }
    LlvmArrayType::get(ctx, int_type(ctx, 8), size).into()
}

/// The LLVM function type of a function with `args` and zero or one `results`.
pub fn function_type(
    ctx: &Context,
    args: &[TypeHandle],
    results: &[TypeHandle],
) -> Result<TypedHandle<FuncType>, OpError> {
    let args = args
        .iter()
        .map(|&arg| value_type(ctx, arg))
        .collect::<Result<Vec<_>, _>>()?;
    let result = match results {
        [] => VoidType::get(ctx).into(),
        [result] => value_type(ctx, *result)?,
        _ => {
            return Err(OpError::Unsupported(
                "a function with several results".into(),
            ));
        }
    };
    Ok(FuncType::get(ctx, result, args, false))
}

/// The LLVM struct of `struct_ty` and where each of its fields went.
pub fn lower_struct(ctx: &Context, struct_ty: &StructType) -> Result<StructLowering, OpError> {
    let mut elems: Vec<(TypeHandle, u64)> = vec![];
    let mut fields = vec![FieldSlot::ZeroSized { offset: 0 }; struct_ty.num_fields()];
    let mut end = 0;
    let padding = |ctx: &Context, bytes: u64| LlvmArrayType::get(ctx, int_type(ctx, 8), bytes);
    for decl_idx in struct_ty.memory_order() {
        let field = struct_ty.fields()[decl_idx];
        let size = layout(ctx, field.ty)?.size;
        if size == 0 {
            fields[decl_idx] = FieldSlot::ZeroSized {
                offset: field.offset,
            };
            continue;
        }
        if field.offset < end {
            return Err(OpError::UnsupportedType {
                ty: struct_ty.name().to_string(),
                reason: format!("field {decl_idx} overlaps the previous field"),
            });
        }
        if field.offset > end {
            elems.push((padding(ctx, field.offset - end).into(), end));
        }
        fields[decl_idx] = FieldSlot::Index(elems.len() as u32);
        elems.push((memory_type(ctx, field.ty)?, field.offset));
        end = field.offset + size;
    }
    if struct_ty.size() > end {
        elems.push((padding(ctx, struct_ty.size() - end).into(), end));
    }
    let natural = natural_layout_matches(ctx, &elems, struct_ty.size());
    let layout = if natural {
        StructLayout::Unpacked
    } else {
        StructLayout::Packed
    };
    let types = elems.into_iter().map(|(ty, _)| ty).collect();
    Ok(StructLowering {
        llvm_type: LlvmStructType::get_unnamed(ctx, (types, layout)).into(),
        fields,
    })
}

/// Whether an unpacked LLVM struct of `elems` puts each at its given offset and has `size`.
fn natural_layout_matches(ctx: &Context, elems: &[(TypeHandle, u64)], size: u64) -> bool {
    let mut offset: u64 = 0;
    let mut max_align = 1;
    for &(ty, expected) in elems {
        let align = llvm_align(ctx, ty);
        max_align = max_align.max(align);
        offset = offset.next_multiple_of(align);
        if offset != expected {
            return false;
        }
        offset += llvm_size(ctx, ty);
    }
    offset.next_multiple_of(max_align) == size
}

/// LLVM's ABI alignment of a lowered type under the NVPTX data layout.
pub fn llvm_align(ctx: &Context, ty: TypeHandle) -> u64 {
    let ty_ref = ty.deref(ctx);
    if let Some(int_ty) = ty_ref.downcast_ref::<IntegerType>() {
        return u64::from(int_ty.width().div_ceil(8))
            .next_power_of_two()
            .min(16);
    }
    if let Some(bits) = type_cast::<dyn FloatTypeInterface>(&*ty_ref)
        .map(|float_ty| float_ty.get_semantics().bits as u64)
    {
        return bits.div_ceil(8).next_power_of_two();
    }
    if let Some(array) = ty_ref.downcast_ref::<LlvmArrayType>() {
        let elem = array.elem_type();
        drop(ty_ref);
        return llvm_align(ctx, elem);
    }
    if let Some(struct_ty) = ty_ref.downcast_ref::<LlvmStructType>() {
        if struct_ty.layout() == StructLayout::Packed {
            return 1;
        }
        let fields: Vec<_> = struct_ty.fields().collect();
        drop(ty_ref);
        return fields
            .into_iter()
            .map(|field| llvm_align(ctx, field))
            .max()
            .unwrap_or(1);
    }
    8
}

/// LLVM's allocation size of a lowered type under the NVPTX data layout.
pub fn llvm_size(ctx: &Context, ty: TypeHandle) -> u64 {
    let ty_ref = ty.deref(ctx);
    if let Some(int_ty) = ty_ref.downcast_ref::<IntegerType>() {
        return u64::from(int_ty.width().div_ceil(8)).next_multiple_of(llvm_align(ctx, ty));
    }
    if let Some(bits) = type_cast::<dyn FloatTypeInterface>(&*ty_ref)
        .map(|float_ty| float_ty.get_semantics().bits as u64)
    {
        return bits.div_ceil(8);
    }
    if let Some(array) = ty_ref.downcast_ref::<LlvmArrayType>() {
        let (elem, len) = (array.elem_type(), array.size());
        drop(ty_ref);
        return llvm_size(ctx, elem) * len;
    }
    if let Some(struct_ty) = ty_ref.downcast_ref::<LlvmStructType>() {
        let packed = struct_ty.layout() == StructLayout::Packed;
        let fields: Vec<_> = struct_ty.fields().collect();
        drop(ty_ref);
        let mut size: u64 = 0;
        for field in fields {
            let align = if packed { 1 } else { llvm_align(ctx, field) };
            size = size.next_multiple_of(align) + llvm_size(ctx, field);
        }
        return size.next_multiple_of(llvm_align(ctx, ty));
    }
    8
}
