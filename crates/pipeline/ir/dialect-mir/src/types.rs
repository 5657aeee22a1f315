//! The types of the `mir` dialect.
//!
//! Scalars are pliron builtin types: `builtin.integer` (signed `si*` for Rust's `i*`, unsigned
//! `ui*` for `u*`, `usize` and `char`, signless `i1` for a `bool` value) and `builtin.fp32` /
//! `builtin.fp64`. This module adds the pointer, slice and aggregate types. Structs, enums and
//! unions carry rustc's layout (size, alignment, field offsets, tag encoding) so that the
//! lowering never recomputes a layout.
//!
//! Recursive types (a struct holding a pointer to itself) cannot be expressed: types are uniqued
//! by their contents.

use pliron::{
    builtin::{
        type_interfaces::FloatTypeInterface,
        types::{IntegerType, Signedness},
    },
    combine::{Parser, attempt, between, choice, parser::char::string, token},
    common_traits::Verify,
    context::Context,
    derive::{format, pliron_type},
    irfmt::{
        parsers::{delimited_list_parser, int_parser, spaced},
        printers::list_with_sep,
    },
    parsable::{Parsable, ParseResult, StateStream},
    printable::{self, ListSeparator, Printable},
    result::Result,
    r#type::{Type, TypeHandle, TypedHandle, type_impls},
    verify_err_noloc,
};
use thiserror::Error;

/// The size in bytes of a pointer (and of `usize`) on the NVPTX64 target.
pub const POINTER_SIZE: u64 = 8;

/// The address space of generic pointers (the only kind Rust code manipulates directly).
pub const ADDRSPACE_GENERIC: u32 = 0;

/// A pointer to a sized `pointee` in an NVPTX `address_space` (0 = generic, 1 = global,
/// 3 = shared, 4 = constant, 5 = local).
///
/// Printed as `mir.ptr <pointee, address_space>`.
#[pliron_type(
    name = "mir.ptr",
    generate_get = true,
    format = "`<` $pointee `, ` $address_space `>`",
    verifier = "succ"
)]
#[derive(Hash, PartialEq, Eq, Debug)]
pub struct PtrType {
    pointee: TypeHandle,
    address_space: u32,
}

impl PtrType {
    /// The type pointed to.
    pub fn pointee(&self) -> TypeHandle {
        self.pointee
    }

    /// The NVPTX address space of the pointer.
    pub fn address_space(&self) -> u32 {
        self.address_space
    }

    /// A generic (address space 0) pointer to `pointee`.
    pub fn get_generic(ctx: &Context, pointee: TypeHandle) -> TypedHandle<Self> {
        Self::get(ctx, pointee, ADDRSPACE_GENERIC)
    }
}

/// A reference to a slice `&[T]` / `&mut [T]` / `*const [T]`: a generic data pointer to `elem`
/// and a `usize` length.
///
/// Printed as `mir.slice <elem>`.
#[pliron_type(
    name = "mir.slice",
    generate_get = true,
    format = "`<` $elem `>`",
    verifier = "succ"
)]
#[derive(Hash, PartialEq, Eq, Debug)]
pub struct SliceType {
    elem: TypeHandle,
}

impl SliceType {
    /// The element type.
    pub fn elem(&self) -> TypeHandle {
        self.elem
    }
}

/// `cuda_device::DisjointSlice<T>`: a slice that each GPU thread writes at its own index.
/// Field 0 is the generic data pointer to `elem`, field 1 the `usize` length.
///
/// Printed as `mir.disjoint_slice <elem>`.
#[pliron_type(
    name = "mir.disjoint_slice",
    generate_get = true,
    format = "`<` $elem `>`",
    verifier = "succ"
)]
#[derive(Hash, PartialEq, Eq, Debug)]
pub struct DisjointSliceType {
    elem: TypeHandle,
}

impl DisjointSliceType {
    /// The element type.
    pub fn elem(&self) -> TypeHandle {
        self.elem
    }
}

/// A reference or raw pointer to a trait object (`&dyn Trait`, `*const dyn Fn(u32) -> u32`): a
/// generic data pointer and a generic pointer to the vtable rustc lays out for the concrete
/// type (drop glue, size, align, then the methods, one pointer-sized entry each). `name` is
/// the trait's, only informative.
///
/// Printed as `mir.dyn_ptr <"name">`.
#[pliron_type(
    name = "mir.dyn_ptr",
    generate_get = true,
    format = "`<` $name `>`",
    verifier = "succ"
)]
#[derive(Hash, PartialEq, Eq, Debug)]
pub struct DynPtrType {
    name: String,
}

impl DynPtrType {
    /// The (informative) name of the trait.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// A fixed-size array `[elem; len]`.
///
/// Printed as `mir.array <elem, len>`.
#[pliron_type(
    name = "mir.array",
    generate_get = true,
    format = "`<` $elem `, ` $len `>`",
    verifier = "succ"
)]
#[derive(Hash, PartialEq, Eq, Debug)]
pub struct ArrayType {
    elem: TypeHandle,
    len: u64,
}

impl ArrayType {
    /// The element type.
    pub fn elem(&self) -> TypeHandle {
        self.elem
    }

    /// The number of elements.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the array has no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// One field of a struct or of an enum variant: its type and its byte offset from the start of
/// the aggregate (for an enum variant, from the start of the enum).
///
/// Printed as `type @ offset`.
#[derive(Clone, Copy, Hash, PartialEq, Eq, Debug)]
#[format("$ty ` @ ` $offset")]
pub struct FieldLayout {
    /// The field's type.
    pub ty: TypeHandle,
    /// The field's byte offset.
    pub offset: u64,
}

impl FieldLayout {
    /// A field of type `ty` at byte `offset`.
    pub fn new(ty: TypeHandle, offset: u64) -> Self {
        Self { ty, offset }
    }
}

/// A tuple, struct or closure with rustc's layout. Fields are listed in **declaration order**
/// (the order MIR's field indices use); their offsets give the memory order, which
/// [StructType::memory_order] computes.
///
/// Printed as `mir.struct <"name", size, align, [type @ offset, ...]>`.
#[pliron_type(
    name = "mir.struct",
    format = "`<` $name `, ` $size `, ` $align `, ` `[` vec($fields, CharSpace(`,`)) `]` `>`"
)]
#[derive(Hash, PartialEq, Eq, Debug)]
pub struct StructType {
    name: String,
    size: u64,
    align: u64,
    fields: Vec<FieldLayout>,
}

impl StructType {
    /// Get the struct type named `name` (only informative: two structs with the same name and
    /// different layouts are different types) with rustc's `size` and `align` in bytes and its
    /// `fields` in declaration order.
    pub fn get(
        ctx: &Context,
        name: impl Into<String>,
        size: u64,
        align: u64,
        fields: Vec<FieldLayout>,
    ) -> TypedHandle<Self> {
        Type::instantiate(
            StructType {
                name: name.into(),
                size,
                align,
                fields,
            },
            ctx,
        )
    }

    /// The (informative) name of the Rust type.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The size in bytes (a multiple of the alignment).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The alignment in bytes.
    pub fn align(&self) -> u64 {
        self.align
    }

    /// The fields in declaration order.
    pub fn fields(&self) -> &[FieldLayout] {
        &self.fields
    }

    /// The number of fields.
    pub fn num_fields(&self) -> usize {
        self.fields.len()
    }

    /// The field with declaration index `idx`, if there is one.
    pub fn field(&self, idx: usize) -> Option<FieldLayout> {
        self.fields.get(idx).copied()
    }

    /// The declaration indices of the fields sorted by offset (ties keep declaration order):
    /// `memory_order()[k]` is the declaration index of the `k`-th field in memory.
    pub fn memory_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.fields.len()).collect();
        order.sort_by_key(|&idx| self.fields[idx].offset);
        order
    }
}

/// Errors found when verifying an aggregate type.
#[derive(Debug, Error)]
pub enum LayoutVerifyErr {
    #[error("{0}: alignment {1} is not a power of two")]
    BadAlign(String, u64),
    #[error("{0}: size {1} is not a multiple of the alignment {2}")]
    SizeNotMultipleOfAlign(String, u64, u64),
    #[error("{0}: field {1} (offset {2}, size {3}) does not fit in the size {4}")]
    FieldOutOfBounds(String, usize, u64, u64, u64),
    #[error("{0}: the tag (offset {1}, size {2}) does not fit in the size {3}")]
    TagOutOfBounds(String, u64, u64, u64),
    #[error("{0}: {1}")]
    BadEnum(String, String),
}

/// Check the size, alignment and field bounds of an aggregate named `name`.
fn verify_aggregate(
    ctx: &Context,
    name: &str,
    size: u64,
    align: u64,
    fields: &[FieldLayout],
) -> Result<()> {
    if !align.is_power_of_two() {
        return verify_err_noloc!(LayoutVerifyErr::BadAlign(name.to_string(), align));
    }
    if !size.is_multiple_of(align) {
        return verify_err_noloc!(LayoutVerifyErr::SizeNotMultipleOfAlign(
            name.to_string(),
            size,
            align
        ));
    }
    for (idx, field) in fields.iter().enumerate() {
        if let Some(layout) = layout_of(ctx, field.ty)
            && field
                .offset
                .checked_add(layout.size)
                .is_none_or(|end| end > size)
        {
            return verify_err_noloc!(LayoutVerifyErr::FieldOutOfBounds(
                name.to_string(),
                idx,
                field.offset,
                layout.size,
                size
            ));
        }
    }
    Ok(())
}

impl Verify for StructType {
    fn verify(&self, ctx: &Context) -> Result<()> {
        verify_aggregate(ctx, &self.name, self.size, self.align, &self.fields)
    }
}

/// A union (`MaybeUninit<T>`, `ManuallyDrop` inside it, user `union`s) with rustc's layout:
/// every field starts at offset 0, so a field's address is the union's address. Its bytes are
/// whatever was last written through any field; the lowering treats it as plain bytes.
///
/// Printed as `mir.union <"name", size, align, [type, ...]>`.
#[pliron_type(
    name = "mir.union",
    format = "`<` $name `, ` $size `, ` $align `, ` `[` vec($fields, CharSpace(`,`)) `]` `>`"
)]
#[derive(Hash, PartialEq, Eq, Debug)]
pub struct UnionType {
    name: String,
    size: u64,
    align: u64,
    fields: Vec<TypeHandle>,
}

impl UnionType {
    /// Get the union type named `name` (informative only) with rustc's `size` and `align` in
    /// bytes and its `fields` in declaration order.
    pub fn get(
        ctx: &Context,
        name: impl Into<String>,
        size: u64,
        align: u64,
        fields: Vec<TypeHandle>,
    ) -> TypedHandle<Self> {
        Type::instantiate(
            UnionType {
                name: name.into(),
                size,
                align,
                fields,
            },
            ctx,
        )
    }

    /// The (informative) name of the Rust type.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The alignment in bytes.
    pub fn align(&self) -> u64 {
        self.align
    }

    /// The field types in declaration order.
    pub fn fields(&self) -> &[TypeHandle] {
        &self.fields
    }

    /// The type of field `idx`, if there is one.
    pub fn field(&self, idx: usize) -> Option<TypeHandle> {
        self.fields.get(idx).copied()
    }
}

impl Verify for UnionType {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let fields: Vec<FieldLayout> = self
            .fields
            .iter()
            .map(|&ty| FieldLayout::new(ty, 0))
            .collect();
        verify_aggregate(ctx, &self.name, self.size, self.align, &fields)
    }
}

/// How an enum stores which variant it holds (rustc's `Variants` / `TagEncoding`).
#[derive(Clone, Copy, Hash, PartialEq, Eq, Debug)]
pub enum EnumTag {
    /// A single (or no) inhabited variant: nothing is stored.
    ///
    /// Printed as `none`.
    None,
    /// The discriminant value of the variant is stored, truncated to `ty`, at byte `offset`.
    ///
    /// Printed as `direct(ty @ offset)`.
    Direct {
        /// The integer type of the tag in memory.
        ty: TypedHandle<IntegerType>,
        /// The byte offset of the tag.
        offset: u64,
    },
    /// The variants `niche_variants_start..=niche_variants_end` are encoded in a niche of a
    /// field of `untagged_variant`: the value at `offset` (read as `ty`) is
    /// `(variant_index - niche_variants_start) + niche_start` (wrapping) for a niche variant;
    /// any other value means `untagged_variant`.
    ///
    /// Printed as `niche(ty @ offset, variants start..=end, niche_start N, untagged U)`.
    Niche {
        /// The integer type of the niche field in memory (a pointer niche is read as `ui64`).
        ty: TypedHandle<IntegerType>,
        /// The byte offset of the niche field.
        offset: u64,
        /// The first variant index encoded in the niche.
        niche_variants_start: u32,
        /// The last variant index encoded in the niche.
        niche_variants_end: u32,
        /// The tag value of `niche_variants_start`, as bits of `ty`.
        niche_start: u128,
        /// The variant whose fields contain the niche, encoded by any non-niche value.
        untagged_variant: u32,
    },
}

impl Printable for EnumTag {
    fn fmt(
        &self,
        ctx: &Context,
        state: &printable::State,
        f: &mut core::fmt::Formatter<'_>,
    ) -> core::fmt::Result {
        match self {
            EnumTag::None => write!(f, "none"),
            EnumTag::Direct { ty, offset } => {
                write!(f, "direct({} @ {})", ty.print(ctx, state), offset)
            }
            EnumTag::Niche {
                ty,
                offset,
                niche_variants_start,
                niche_variants_end,
                niche_start,
                untagged_variant,
            } => write!(
                f,
                "niche({} @ {}, variants {}..={}, niche_start {}, untagged {})",
                ty.print(ctx, state),
                offset,
                niche_variants_start,
                niche_variants_end,
                niche_start,
                untagged_variant
            ),
        }
    }
}

impl Parsable for EnumTag {
    type Arg = ();
    type Parsed = Self;

    fn parse<'a>(
        state_stream: &mut StateStream<'a>,
        _arg: Self::Arg,
    ) -> ParseResult<'a, Self::Parsed> {
        let tag_ty = || {
            spaced(TypedHandle::<IntegerType>::parser(()))
                .skip(spaced(token('@')))
                .and(spaced(int_parser::<u64>()))
        };
        let none = attempt(string("none")).map(|_| EnumTag::None);
        let direct = attempt(string("direct"))
            .with(between(spaced(token('(')), spaced(token(')')), tag_ty()))
            .map(|(ty, offset)| EnumTag::Direct { ty, offset });
        let niche = string("niche")
            .with(between(
                spaced(token('(')),
                spaced(token(')')),
                (
                    tag_ty().skip(spaced(token(','))),
                    spaced(string("variants")).with(spaced(int_parser::<u32>())),
                    spaced(string("..=")).with(spaced(int_parser::<u32>())),
                    spaced(token(','))
                        .with(spaced(string("niche_start")))
                        .with(spaced(int_parser::<u128>())),
                    spaced(token(','))
                        .with(spaced(string("untagged")))
                        .with(spaced(int_parser::<u32>())),
                ),
            ))
            .map(
                |((ty, offset), start, end, niche_start, untagged)| EnumTag::Niche {
                    ty,
                    offset,
                    niche_variants_start: start,
                    niche_variants_end: end,
                    niche_start,
                    untagged_variant: untagged,
                },
            );
        choice((none, direct, niche))
            .parse_stream(state_stream)
            .into_result()
    }
}

/// One variant of an enum: its name, its discriminant value and its fields (with offsets from
/// the start of the enum).
///
/// Printed as `"name" = discriminant [type @ offset, ...]`.
#[derive(Clone, Hash, PartialEq, Eq, Debug)]
pub struct EnumVariant {
    /// The variant's name (informative).
    pub name: String,
    /// The discriminant value, as bits of the enum's discriminant type.
    pub discr: u128,
    /// The fields in declaration order.
    pub fields: Vec<FieldLayout>,
}

impl EnumVariant {
    /// A variant named `name` with discriminant `discr` and `fields`.
    pub fn new(name: impl Into<String>, discr: u128, fields: Vec<FieldLayout>) -> Self {
        Self {
            name: name.into(),
            discr,
            fields,
        }
    }
}

impl Printable for EnumVariant {
    fn fmt(
        &self,
        ctx: &Context,
        state: &printable::State,
        f: &mut core::fmt::Formatter<'_>,
    ) -> core::fmt::Result {
        write!(
            f,
            "{} = {} [{}]",
            self.name.print(ctx, state),
            self.discr,
            list_with_sep(&self.fields, ListSeparator::CharSpace(',')).print(ctx, state)
        )
    }
}

impl Parsable for EnumVariant {
    type Arg = ();
    type Parsed = Self;

    fn parse<'a>(
        state_stream: &mut StateStream<'a>,
        _arg: Self::Arg,
    ) -> ParseResult<'a, Self::Parsed> {
        (
            spaced(String::parser(())),
            spaced(token('=')).with(spaced(int_parser::<u128>())),
            spaced(delimited_list_parser(
                '[',
                ']',
                ',',
                FieldLayout::parser(()),
            )),
        )
            .map(|(name, discr, fields)| EnumVariant {
                name,
                discr,
                fields,
            })
            .parse_stream(state_stream)
            .into_result()
    }
}

/// An enum (including `Option` and `Result`) with rustc's layout. It is always handled in
/// memory: `mir.get_discriminant`, `mir.set_discriminant` and `mir.variant_field_addr` take a
/// pointer to it.
///
/// `discr_ty` is the type of the discriminant values (`isize` unless the enum has a `repr`),
/// the result type of `mir.get_discriminant`.
///
/// Printed as `mir.enum <"name", size, align, discr_ty, tag, [variant, ...]>`.
#[pliron_type(
    name = "mir.enum",
    format = "`<` $name `, ` $size `, ` $align `, ` $discr_ty `, ` $tag `, ` `[` vec($variants, CharSpace(`,`)) `]` `>`"
)]
#[derive(Hash, PartialEq, Eq, Debug)]
pub struct EnumType {
    name: String,
    size: u64,
    align: u64,
    discr_ty: TypedHandle<IntegerType>,
    tag: EnumTag,
    variants: Vec<EnumVariant>,
}

impl EnumType {
    /// Get the enum type named `name` (informative only) with rustc's `size` and `align`, the
    /// type of its discriminant values, its tag encoding and its variants (in variant index
    /// order).
    pub fn get(
        ctx: &Context,
        name: impl Into<String>,
        size: u64,
        align: u64,
        discr_ty: TypedHandle<IntegerType>,
        tag: EnumTag,
        variants: Vec<EnumVariant>,
    ) -> TypedHandle<Self> {
        Type::instantiate(
            EnumType {
                name: name.into(),
                size,
                align,
                discr_ty,
                tag,
                variants,
            },
            ctx,
        )
    }

    /// The (informative) name of the Rust type.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The alignment in bytes.
    pub fn align(&self) -> u64 {
        self.align
    }

    /// The type of the discriminant values.
    pub fn discr_ty(&self) -> TypedHandle<IntegerType> {
        self.discr_ty
    }

    /// The tag encoding.
    pub fn tag(&self) -> EnumTag {
        self.tag
    }

    /// The variants, by variant index.
    pub fn variants(&self) -> &[EnumVariant] {
        &self.variants
    }

    /// The variant with index `idx`, if there is one.
    pub fn variant(&self, idx: usize) -> Option<&EnumVariant> {
        self.variants.get(idx)
    }

    /// The number of variants.
    pub fn num_variants(&self) -> usize {
        self.variants.len()
    }
}

impl Verify for EnumType {
    fn verify(&self, ctx: &Context) -> Result<()> {
        verify_aggregate(ctx, &self.name, self.size, self.align, &[])?;
        for variant in &self.variants {
            verify_aggregate(ctx, &self.name, self.size, self.align, &variant.fields)?;
        }
        let bad = |msg: String| verify_err_noloc!(LayoutVerifyErr::BadEnum(self.name.clone(), msg));
        let discr_width = self.discr_ty.deref(ctx).width();
        for variant in &self.variants {
            if discr_width < 128 && variant.discr >> discr_width != 0 {
                return bad(format!(
                    "discriminant {} of variant {} does not fit in {} bits",
                    variant.discr, variant.name, discr_width
                ));
            }
        }
        let num_variants = self.variants.len() as u64;
        let tag_bounds = |ty: TypedHandle<IntegerType>, offset: u64| {
            let tag_size = u64::from(ty.deref(ctx).width().div_ceil(8));
            if offset + tag_size > self.size {
                verify_err_noloc!(LayoutVerifyErr::TagOutOfBounds(
                    self.name.clone(),
                    offset,
                    tag_size,
                    self.size
                ))
            } else {
                Ok(())
            }
        };
        match self.tag {
            // Several variants without a tag: all but one are uninhabited (rustc's `Single`
            // layout, e.g. `Result<Infallible, E>`), so the discriminant is a constant.
            EnumTag::None => {}
            EnumTag::Direct { ty, offset } => tag_bounds(ty, offset)?,
            EnumTag::Niche {
                ty,
                offset,
                niche_variants_start,
                niche_variants_end,
                untagged_variant,
                ..
            } => {
                tag_bounds(ty, offset)?;
                if niche_variants_start > niche_variants_end
                    || u64::from(niche_variants_end) >= num_variants
                {
                    return bad(format!(
                        "niche variants {niche_variants_start}..={niche_variants_end} are not \
                         variants"
                    ));
                }
                if u64::from(untagged_variant) >= num_variants {
                    return bad(format!(
                        "untagged variant {untagged_variant} is not a variant"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The size and alignment, in bytes, of a value of some type in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The size in bytes (a `bool` takes one byte).
    pub size: u64,
    /// The alignment in bytes.
    pub align: u64,
}

/// The memory layout of `ty` on NVPTX64, or `None` for a type that is not a `mir` value type.
pub fn layout_of(ctx: &Context, ty: TypeHandle) -> Option<Layout> {
    let ty_ref = ty.deref(ctx);
    if let Some(int_ty) = ty_ref.downcast_ref::<IntegerType>() {
        let bytes = u64::from(int_ty.width().div_ceil(8)).max(1);
        return Some(Layout {
            size: bytes,
            align: bytes.next_power_of_two(),
        });
    }
    if let Some(float_ty) = pliron::r#type::type_cast::<dyn FloatTypeInterface>(&*ty_ref) {
        let bits = float_ty.get_semantics().bits;
        let bytes = u64::try_from(bits.div_ceil(8)).ok()?;
        return Some(Layout {
            size: bytes,
            align: bytes,
        });
    }
    if ty_ref.is::<PtrType>() {
        return Some(Layout {
            size: POINTER_SIZE,
            align: POINTER_SIZE,
        });
    }
    if ty_ref.is::<SliceType>() || ty_ref.is::<DisjointSliceType>() || ty_ref.is::<DynPtrType>() {
        return Some(Layout {
            size: 2 * POINTER_SIZE,
            align: POINTER_SIZE,
        });
    }
    if let Some(array_ty) = ty_ref.downcast_ref::<ArrayType>() {
        let elem = layout_of(ctx, array_ty.elem())?;
        return Some(Layout {
            size: elem.size.checked_mul(array_ty.len())?,
            align: elem.align,
        });
    }
    if let Some(struct_ty) = ty_ref.downcast_ref::<StructType>() {
        return Some(Layout {
            size: struct_ty.size(),
            align: struct_ty.align(),
        });
    }
    if let Some(enum_ty) = ty_ref.downcast_ref::<EnumType>() {
        return Some(Layout {
            size: enum_ty.size(),
            align: enum_ty.align(),
        });
    }
    if let Some(union_ty) = ty_ref.downcast_ref::<UnionType>() {
        return Some(Layout {
            size: union_ty.size(),
            align: union_ty.align(),
        });
    }
    None
}

/// Whether `ty` is a Rust integer: a signed or unsigned `builtin.integer`.
pub fn is_rust_int(ctx: &Context, ty: TypeHandle) -> bool {
    ty.deref(ctx)
        .downcast_ref::<IntegerType>()
        .is_some_and(|int_ty| !int_ty.is_signless())
}

/// Whether `ty` is the type of a `bool` value: the signless `i1`.
pub fn is_bool(ctx: &Context, ty: TypeHandle) -> bool {
    ty.deref(ctx)
        .downcast_ref::<IntegerType>()
        .is_some_and(|int_ty| int_ty.is_signless() && int_ty.width() == 1)
}

/// Whether `ty` is a Rust integer or `bool`.
pub fn is_int_or_bool(ctx: &Context, ty: TypeHandle) -> bool {
    is_rust_int(ctx, ty) || is_bool(ctx, ty)
}

/// Whether `ty` is a floating-point type.
pub fn is_float(ctx: &Context, ty: TypeHandle) -> bool {
    type_impls::<dyn FloatTypeInterface>(&*ty.deref(ctx))
}

/// Whether `ty` is a `mir.ptr`.
pub fn is_ptr(ctx: &Context, ty: TypeHandle) -> bool {
    ty.deref(ctx).is::<PtrType>()
}

/// The signless `i1` type of `bool` values.
pub fn bool_type(ctx: &Context) -> TypedHandle<IntegerType> {
    IntegerType::get(ctx, 1, Signedness::Signless)
}

/// The `ui64` type of `usize` values.
pub fn usize_type(ctx: &Context) -> TypedHandle<IntegerType> {
    IntegerType::get(ctx, 64, Signedness::Unsigned)
}
