//! Rust types (as `rustc_public` sees them) to dialect-mir types, with rustc's layout.
//!
//! Sizes, alignments and field offsets come from `Ty::layout()`: the host's layout, which is
//! what host and device share. Zero-sized types still get a type (an empty struct) so that
//! pointers to them and fields of them can be described; the translator simply never gives
//! them a slot or passes them as arguments.

use std::collections::HashMap;

use dialect_mir::types::{
    DisjointSliceType, DynPtrType, EnumTag, EnumType, EnumVariant, FieldLayout, PtrType, SliceType,
    StructType, UnionType, usize_type,
};
use pliron::builtin::types::{FP16Type, FP32Type, FP64Type, IntegerType, Signedness};
use pliron::context::Context;
use pliron::r#type::TypeHandle;
use rustc_public::abi::{FieldsShape, LayoutShape, Primitive, Scalar, TagEncoding, VariantsShape};
use rustc_public::ty::{
    AdtDef, AdtKind, FloatTy, GenericArgKind, GenericArgs, IntTy, RigidTy, Ty, TyKind, UintTy,
    VariantIdx,
};

use rustc_public::CrateDef;
use rustc_public_bridge::IndexedVal;

use super::error::{TResult, unsupported};

/// Whether `def` is `cuda_device`'s `DisjointSlice`, which has its own dialect-mir type.
pub fn is_disjoint_slice(def: AdtDef) -> bool {
    def.krate().name == "cuda_device" && def.trimmed_name() == "DisjointSlice"
}

/// Whether `def` is `cuda_device::shared::SharedArray`.
pub fn is_shared_array(def: AdtDef) -> bool {
    def.krate().name == "cuda_device" && def.trimmed_name() == "SharedArray"
}

/// Translates and caches types for one module.
#[derive(Default)]
pub struct TypeTranslator {
    cache: HashMap<Ty, TypeHandle>,
}

impl TypeTranslator {
    /// The dialect-mir type of `ty`.
    pub fn translate(&mut self, ctx: &mut Context, ty: Ty) -> TResult<TypeHandle> {
        if let Some(&handle) = self.cache.get(&ty) {
            return Ok(handle);
        }
        let handle = self.translate_uncached(ctx, ty)?;
        self.cache.insert(ty, handle);
        Ok(handle)
    }

    fn translate_uncached(&mut self, ctx: &mut Context, ty: Ty) -> TResult<TypeHandle> {
        let TyKind::RigidTy(rigid) = ty.kind() else {
            unsupported!("the type `{ty}` (not fully known after monomorphisation)")
        };
        Ok(match rigid {
            RigidTy::Bool => IntegerType::get(ctx, 1, Signedness::Signless).into(),
            RigidTy::Char => IntegerType::get(ctx, 32, Signedness::Unsigned).into(),
            RigidTy::Int(int) => IntegerType::get(ctx, int_bits(int), Signedness::Signed).into(),
            RigidTy::Uint(uint) => {
                IntegerType::get(ctx, uint_bits(uint), Signedness::Unsigned).into()
            }
            RigidTy::Float(FloatTy::F16) => FP16Type::get(ctx).into(),
            RigidTy::Float(FloatTy::F32) => FP32Type::get(ctx).into(),
            RigidTy::Float(FloatTy::F64) => FP64Type::get(ctx).into(),
            RigidTy::Float(other) => unsupported!("the float type `{other:?}`"),
            RigidTy::Ref(_, pointee, _) | RigidTy::RawPtr(pointee, _) => {
                self.pointer_to(ctx, pointee)?
            }
            RigidTy::Array(elem, _) => {
                let layout = layout(ty)?;
                let FieldsShape::Array { count, .. } = layout.fields else {
                    unsupported!("the array type `{ty}` with an unexpected layout")
                };
                let elem = self.translate(ctx, elem)?;
                dialect_mir::types::ArrayType::get(ctx, elem, count).into()
            }
            RigidTy::Tuple(fields) => {
                let layout = layout(ty)?;
                self.struct_type(ctx, "tuple", &layout, &fields)?
            }
            RigidTy::Closure(def, args) => {
                let layout = layout(ty)?;
                let upvars = closure_upvars(&args)?;
                self.struct_type(ctx, &def.name(), &layout, &upvars)?
            }
            RigidTy::Adt(def, args) => self.adt(ctx, ty, def, &args)?,
            RigidTy::Never => StructType::get(ctx, "!", 0, 1, vec![]).into(),
            RigidTy::FnDef(def, _) => StructType::get(ctx, def.name(), 0, 1, vec![]).into(),
            RigidTy::Str | RigidTy::Slice(_) => {
                unsupported!("the unsized type `{ty}` outside a reference")
            }
            // A function pointer: the address of a device function, called through
            // `mir.call_indirect` with the signature of the call site.
            RigidTy::FnPtr(_) => fn_pointer_type(ctx),
            RigidTy::Dynamic(..) => unsupported!("trait objects (`{ty}`)"),
            // An extern type (a vtable's pointee in `DynMetadata`): only pointers to it exist.
            RigidTy::Foreign(def) => StructType::get(ctx, def.name(), 0, 1, vec![]).into(),
            RigidTy::Coroutine(..)
            | RigidTy::CoroutineClosure(..)
            | RigidTy::CoroutineWitness(..) => {
                unsupported!("coroutines and async code (`{ty}`)")
            }
            RigidTy::Pat(base, _) => self.translate(ctx, base)?,
        })
    }

    /// The type of a reference or raw pointer to `pointee`: a slice for `[T]`, `str` and
    /// structs ending in one (the data pointer then points to the struct, the length is the
    /// tail's), a trait object pointer for `dyn Trait`, a thin pointer otherwise.
    fn pointer_to(&mut self, ctx: &mut Context, pointee: Ty) -> TResult<TypeHandle> {
        if let Some(elem) = slice_tail(pointee).map(slice_elem) {
            let elem = self.translate(ctx, elem)?;
            return Ok(SliceType::get(ctx, elem).into());
        }
        match pointee.kind() {
            TyKind::RigidTy(RigidTy::Dynamic(..)) => {
                Ok(DynPtrType::get(ctx, trait_name(pointee)).into())
            }
            _ => {
                let pointee = self.translate(ctx, pointee)?;
                Ok(PtrType::get_generic(ctx, pointee).into())
            }
        }
    }

    fn adt(
        &mut self,
        ctx: &mut Context,
        ty: Ty,
        def: AdtDef,
        args: &GenericArgs,
    ) -> TResult<TypeHandle> {
        let layout = layout(ty)?;
        match def.kind() {
            AdtKind::Struct => {
                if is_disjoint_slice(def) {
                    let elem = type_arg(args, 0, ty)?;
                    let elem = self.translate(ctx, elem)?;
                    return Ok(DisjointSliceType::get(ctx, elem).into());
                }
                if is_shared_array(def) {
                    // `#[repr(transparent)]` over `MaybeUninit<[T; N]>`: the layout of `[T; N]`.
                    let elem = type_arg(args, 0, ty)?;
                    let len = match args.0.get(1) {
                        Some(GenericArgKind::Const(len)) => len.eval_target_usize().ok(),
                        _ => None,
                    };
                    let Some(len) = len else {
                        unsupported!("the shared array `{ty}` of unknown length")
                    };
                    let elem = self.translate(ctx, elem)?;
                    return Ok(dialect_mir::types::ArrayType::get(ctx, elem, len).into());
                }
                let variant = def.variants()[0];
                let fields: Vec<Ty> = variant
                    .fields()
                    .iter()
                    .map(|f| f.ty_with_args(args))
                    .collect();
                self.struct_type(ctx, &def.name(), &layout, &fields)
            }
            AdtKind::Enum => self.enum_type(ctx, ty, def, args, &layout),
            AdtKind::Union => {
                let fields = def.variants()[0]
                    .fields()
                    .iter()
                    .map(|f| self.translate(ctx, f.ty_with_args(args)))
                    .collect::<TResult<Vec<_>>>()?;
                Ok(UnionType::get(
                    ctx,
                    def.name(),
                    layout.size.bytes() as u64,
                    layout.abi_align,
                    fields,
                )
                .into())
            }
        }
    }

    /// A struct-like type: `field_tys` in declaration order, offsets from `layout`.
    fn struct_type(
        &mut self,
        ctx: &mut Context,
        name: &str,
        layout: &LayoutShape,
        field_tys: &[Ty],
    ) -> TResult<TypeHandle> {
        let offsets = match &layout.fields {
            FieldsShape::Arbitrary { offsets } => {
                offsets.iter().map(|o| o.bytes() as u64).collect()
            }
            FieldsShape::Primitive if field_tys.is_empty() => vec![],
            other => unsupported!("the type `{name}` with field layout {other:?}"),
        };
        let fields = self.field_layouts(ctx, field_tys, &offsets)?;
        Ok(StructType::get(
            ctx,
            name,
            layout.size.bytes() as u64,
            layout.abi_align,
            fields,
        )
        .into())
    }

    fn field_layouts(
        &mut self,
        ctx: &mut Context,
        field_tys: &[Ty],
        offsets: &[u64],
    ) -> TResult<Vec<FieldLayout>> {
        if field_tys.len() != offsets.len() {
            unsupported!("a type whose layout does not list all its fields");
        }
        field_tys
            .iter()
            .zip(offsets)
            .map(|(&ty, &offset)| Ok(FieldLayout::new(self.translate(ctx, ty)?, offset)))
            .collect()
    }

    fn enum_type(
        &mut self,
        ctx: &mut Context,
        ty: Ty,
        def: AdtDef,
        args: &GenericArgs,
        layout: &LayoutShape,
    ) -> TResult<TypeHandle> {
        let discr_ty = match ty.kind().discriminant_ty().map(|t| t.kind()) {
            Some(TyKind::RigidTy(RigidTy::Int(int))) => {
                IntegerType::get(ctx, int_bits(int), Signedness::Signed)
            }
            Some(TyKind::RigidTy(RigidTy::Uint(uint))) => {
                IntegerType::get(ctx, uint_bits(uint), Signedness::Unsigned)
            }
            _ => usize_type(ctx),
        };
        let variant_offsets: Vec<Vec<u64>> = match &layout.variants {
            VariantsShape::Multiple { variants, .. } => variants
                .iter()
                .map(|v| v.offsets.iter().map(|o| o.bytes() as u64).collect())
                .collect(),
            VariantsShape::Single { index } => {
                let offsets: Vec<u64> = match &layout.fields {
                    FieldsShape::Arbitrary { offsets } => {
                        offsets.iter().map(|o| o.bytes() as u64).collect()
                    }
                    _ => vec![],
                };
                (0..def.num_variants())
                    .map(|i| {
                        if i == index.to_index() {
                            offsets.clone()
                        } else {
                            vec![]
                        }
                    })
                    .collect()
            }
            VariantsShape::Empty => vec![vec![]; def.num_variants()],
        };
        let mut variants = Vec::with_capacity(def.num_variants());
        for (i, variant) in def.variants().iter().enumerate() {
            let field_tys: Vec<Ty> = variant
                .fields()
                .iter()
                .map(|f| f.ty_with_args(args))
                .collect();
            let offsets = &variant_offsets[i];
            // Variants that the layout leaves empty (uninhabited ones) keep no fields.
            let fields = if offsets.len() == field_tys.len() {
                self.field_layouts(ctx, &field_tys, offsets)?
            } else {
                vec![]
            };
            let discr = def.discriminant_for_variant(VariantIdx::to_val(i)).val;
            variants.push(EnumVariant::new(variant.name(), discr, fields));
        }
        let tag = match &layout.variants {
            VariantsShape::Multiple {
                tag,
                tag_encoding,
                tag_field,
                ..
            } => {
                let FieldsShape::Arbitrary { offsets } = &layout.fields else {
                    unsupported!("the enum `{ty}` with an unexpected tag layout")
                };
                let offset = offsets[*tag_field].bytes() as u64;
                let tag_ty = tag_int_type(ctx, tag, &ty)?;
                match tag_encoding {
                    TagEncoding::Direct => EnumTag::Direct { ty: tag_ty, offset },
                    TagEncoding::Niche {
                        untagged_variant,
                        niche_variants,
                        niche_start,
                    } => EnumTag::Niche {
                        ty: tag_ty,
                        offset,
                        niche_variants_start: niche_variants.start().to_index() as u32,
                        niche_variants_end: niche_variants.end().to_index() as u32,
                        niche_start: *niche_start,
                        untagged_variant: untagged_variant.to_index() as u32,
                    },
                }
            }
            VariantsShape::Single { .. } | VariantsShape::Empty => EnumTag::None,
        };
        Ok(EnumType::get(
            ctx,
            def.name(),
            layout.size.bytes() as u64,
            layout.abi_align,
            discr_ty,
            tag,
            variants,
        )
        .into())
    }
}

// Type names given to dialect types are informative only. They come from `CrateDef::name`:
// printing a `Ty` would ask rustc for "trimmed" paths, which it only allows while reporting a
// diagnostic.

/// The slice (`[T]` or `str`) an unsized type ends in: the type itself for a slice or `str`,
/// the tail of the last field for a struct ending in one (a custom DST such as
/// `struct Packet { len: u32, data: [u8] }`); `None` for sized types and trait objects.
pub fn slice_tail(ty: Ty) -> Option<Ty> {
    match ty.kind() {
        TyKind::RigidTy(RigidTy::Slice(_) | RigidTy::Str) => Some(ty),
        TyKind::RigidTy(RigidTy::Adt(def, args)) if def.kind() == AdtKind::Struct => {
            let last = def.variants().first()?.fields().last()?.ty_with_args(&args);
            slice_tail(last)
        }
        _ => None,
    }
}

/// The element type of a slice type (`u8` for `str`).
pub fn slice_elem(slice: Ty) -> Ty {
    match slice.kind() {
        TyKind::RigidTy(RigidTy::Slice(elem)) => elem,
        _ => Ty::unsigned_ty(UintTy::U8),
    }
}

/// The layout of `ty`, or an error naming it.
pub fn layout(ty: Ty) -> TResult<LayoutShape> {
    match ty.layout() {
        Ok(layout) => Ok(layout.shape()),
        Err(e) => unsupported!("the type `{ty}` (rustc has no layout for it: {e:?})"),
    }
}

/// Whether `ty` occupies no memory (such values are never stored or passed).
pub fn is_zero_sized(ty: Ty) -> TResult<bool> {
    Ok(layout(ty)?.size.bytes() == 0)
}

/// The integer type a tag is read as (a pointer niche is read as a `u64`).
fn tag_int_type(
    ctx: &mut Context,
    tag: &Scalar,
    ty: &Ty,
) -> TResult<pliron::r#type::TypedHandle<IntegerType>> {
    let primitive = match tag {
        Scalar::Initialized { value, .. } | Scalar::Union { value } => *value,
    };
    Ok(match primitive {
        Primitive::Int { length, signed } => IntegerType::get(
            ctx,
            length.bits() as u32,
            if signed {
                Signedness::Signed
            } else {
                Signedness::Unsigned
            },
        ),
        Primitive::Pointer(_) => IntegerType::get(ctx, 64, Signedness::Unsigned),
        Primitive::Float { .. } => unsupported!("the enum `{ty}` whose niche is a float"),
    })
}

/// The type of function pointers: a pointer to code, whose pointee has no layout of its own.
pub fn fn_pointer_type(ctx: &Context) -> TypeHandle {
    let code = StructType::get(ctx, "fn", 0, 1, vec![]).into();
    PtrType::get_generic(ctx, code).into()
}

/// The name of the principal trait of the trait object type `ty` (informative only).
fn trait_name(ty: Ty) -> String {
    match ty.kind().trait_principal() {
        Some(principal) => principal.value.def_id.name(),
        None => "dyn".into(),
    }
}

/// The upvar types of a closure: its last generic argument is their tuple.
fn closure_upvars(args: &GenericArgs) -> TResult<Vec<Ty>> {
    match args.0.last().cloned() {
        Some(GenericArgKind::Type(tuple)) => match tuple.kind() {
            TyKind::RigidTy(RigidTy::Tuple(tys)) => Ok(tys),
            _ => unsupported!("a closure whose captures could not be determined"),
        },
        _ => unsupported!("a closure whose captures could not be determined"),
    }
}

fn type_arg(args: &GenericArgs, index: usize, ty: Ty) -> TResult<Ty> {
    match args.0.get(index) {
        Some(GenericArgKind::Type(t)) => Ok(*t),
        _ => unsupported!("the type `{ty}` without its element type"),
    }
}

/// Bits of a signed integer type (`isize` is 64 on NVPTX64, as on the host).
pub fn int_bits(int: IntTy) -> u32 {
    match int {
        IntTy::I8 => 8,
        IntTy::I16 => 16,
        IntTy::I32 => 32,
        IntTy::I64 | IntTy::Isize => 64,
        IntTy::I128 => 128,
    }
}

/// Bits of an unsigned integer type (`usize` is 64 on NVPTX64, as on the host).
pub fn uint_bits(uint: UintTy) -> u32 {
    match uint {
        UintTy::U8 => 8,
        UintTy::U16 => 16,
        UintTy::U32 => 32,
        UintTy::U64 | UintTy::Usize => 64,
        UintTy::U128 => 128,
    }
}

/// Whether `ty` is a reference or raw pointer to `[T]`, `str` or a struct ending in one (a
/// `mir.slice` value).
pub(crate) fn pointee_is_unsized_slice(ty: Ty) -> bool {
    ty.kind()
        .builtin_deref(true)
        .and_then(|t| slice_tail(t.ty))
        .is_some()
}
