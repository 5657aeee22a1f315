//! Memory: stack slots, loads, stores and address computations.
//!
//! `mir.alloca`, `mir.load` and `mir.store` implement pliron's mem2reg interfaces: a slot whose
//! every use is a `mir.load` from it or a `mir.store` to it (not a store *of* its address) is
//! promoted to SSA values. Any other use (an address computation, a call argument, a store of
//! the address) keeps the slot in memory.

use pliron::{
    arg_err,
    builtin::{
        attributes::{StringAttr, TypeAttr},
        op_interfaces::{NOpdsInterface, NResultsInterface, OneResultInterface},
    },
    combine::{self, Parser},
    common_traits::Verify,
    context::Context,
    derive::{op_interface_impl, pliron_op},
    identifier::Identifier,
    input_err,
    irbuild::{inserter::Inserter, rewriter::Rewriter},
    irfmt::parsers::{process_parsed_ssa_defs, spaced, type_parser},
    location::Location,
    op::{Op, OpObj},
    operation::Operation,
    opts::mem2reg::{
        AllocInfo, PromotableAllocationInterface, PromotableOpInterface, PromotableOpKind,
    },
    parsable::{IntoParseResult, Parsable, ParseResult, StateStream, StreamLocation},
    printable::{self, Printable},
    result::Result,
    r#type::{TypeHandle, Typed},
    value::Value,
};
use thiserror::Error;

use super::{
    UndefOp, expect_type, expect_type_eq, invalid, no_side_effects, opd, opd_ty, res, res_ty,
    slice::slice_elem, wrong_type,
};
use crate::{
    attributes::IndexAttr,
    types::{ADDRSPACE_GENERIC, ArrayType, PtrType, StructType, UnionType, usize_type},
};

/// The `mir.ptr` type of `ty`, if it is one: `(pointee, address space)`.
pub(crate) fn ptr_parts(ctx: &Context, ty: TypeHandle) -> Option<(TypeHandle, u32)> {
    ty.deref(ctx)
        .downcast_ref::<PtrType>()
        .map(|ptr| (ptr.pointee(), ptr.address_space()))
}

/// Check that operand `idx` of `op` is a pointer, returning its pointee and address space.
pub(crate) fn expect_ptr_operand(
    op: &dyn Op,
    ctx: &Context,
    idx: usize,
    what: &str,
) -> Result<(TypeHandle, u32)> {
    let ty = opd_ty(op, ctx, idx);
    match ptr_parts(ctx, ty) {
        Some(parts) => Ok(parts),
        None => wrong_type(op, ctx, what, "a mir.ptr", ty),
    }
}

/// Check that result 0 of `op` is `mir.ptr<pointee, address_space>`.
pub(crate) fn expect_ptr_result(
    op: &dyn Op,
    ctx: &Context,
    pointee: TypeHandle,
    address_space: u32,
) -> Result<()> {
    let expected = PtrType::get(ctx, pointee, address_space).into();
    expect_type_eq(op, ctx, "result", expected, res_ty(op, ctx, 0))
}

/// Check that operand `idx` of `op` is a 64-bit integer (an index or an element count).
pub(crate) fn expect_index_operand(
    op: &dyn Op,
    ctx: &Context,
    idx: usize,
    what: &str,
) -> Result<()> {
    let ty = opd_ty(op, ctx, idx);
    let ok = ty
        .deref(ctx)
        .downcast_ref::<pliron::builtin::types::IntegerType>()
        .is_some_and(|int_ty| !int_ty.is_signless() && int_ty.width() == 64);
    expect_type(op, ctx, ok, what, "ui64 or si64", ty)
}

/// A stack slot holding one value of a type (a MIR local), in the entry block.
///
/// Printed as `p = mir.alloca T`.
///
/// | result | type |
/// |--------|------|
/// | `res` | `mir.ptr<T, 0>` |
#[pliron_op(
    name = "mir.alloca",
    interfaces = [NOpdsInterface<0>, OneResultInterface],
    attributes = (mir_alloca_type: TypeAttr)
)]
pub struct AllocaOp;

impl AllocaOp {
    /// A slot for a value of type `ty`.
    pub fn new(ctx: &mut Context, ty: TypeHandle) -> Self {
        let ptr_ty = PtrType::get(ctx, ty, ADDRSPACE_GENERIC).into();
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ptr_ty],
            vec![],
            vec![],
            0,
        );
        let op = Self { op };
        op.set_attr_mir_alloca_type(ctx, TypeAttr::new(ty));
        op
    }

    /// The type of the value held by the slot.
    pub fn allocated_type(&self, ctx: &Context) -> TypeHandle {
        self.get_attr_mir_alloca_type(ctx)
            .expect("mir.alloca has a type attribute")
            .get_type(ctx)
    }

    /// The address of the slot.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }

    /// Marks the slot as holding a named Rust variable that a debugger shows, described by
    /// `description` (opaque here; the LLVM export reads it). Such a slot stays in memory:
    /// mem2reg leaves it alone.
    pub fn set_debug_variable(&self, ctx: &mut Context, description: String) {
        self.get_operation().deref_mut(ctx).attributes.set(
            ATTR_KEY_DEBUG_VARIABLE.clone(),
            StringAttr::new(description),
        );
    }

    /// The description given by [AllocaOp::set_debug_variable], if any.
    pub fn debug_variable(&self, ctx: &Context) -> Option<String> {
        self.get_operation()
            .deref(ctx)
            .attributes
            .get::<StringAttr>(&ATTR_KEY_DEBUG_VARIABLE)
            .map(|s| String::from(s.clone()))
    }
}

/// The key of the attribute of a `mir.alloca` that holds a named variable for the debugger.
pub static ATTR_KEY_DEBUG_VARIABLE: std::sync::LazyLock<Identifier> =
    std::sync::LazyLock::new(|| "mir_debug_variable".try_into().expect("a valid key"));

impl Printable for AllocaOp {
    fn fmt(
        &self,
        ctx: &Context,
        state: &printable::State,
        f: &mut core::fmt::Formatter<'_>,
    ) -> core::fmt::Result {
        write!(
            f,
            "{} = {} {}",
            self.result(ctx).print(ctx, state),
            self.get_opid(),
            self.allocated_type(ctx).print(ctx, state)
        )
    }
}

/// The number of results of a parsed op does not match its syntax.
#[derive(Debug, Error)]
#[error("{0} expects {1} result name(s), found {2}")]
pub struct ResultCountErr(pub String, pub usize, pub usize);

impl Parsable for AllocaOp {
    type Arg = Vec<(Identifier, Location)>;
    type Parsed = OpObj;

    fn parse<'a>(
        state_stream: &mut StateStream<'a>,
        results: Self::Arg,
    ) -> ParseResult<'a, Self::Parsed> {
        if results.len() != 1 {
            input_err!(
                state_stream.loc(),
                ResultCountErr(Self::get_opid_static().to_string(), 1, results.len())
            )?
        }
        spaced(type_parser())
            .then(move |ty| {
                let results = results.clone();
                combine::parser(move |state: &mut StateStream<'a>| {
                    let op = AllocaOp::new(state.state.ctx, ty);
                    process_parsed_ssa_defs(state, &results, op.get_operation())?;
                    Ok(OpObj::new(op)).into_parse_result()
                })
            })
            .parse_stream(state_stream)
            .into_result()
    }
}

impl Verify for AllocaOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let Some(ty) = self
            .get_attr_mir_alloca_type(ctx)
            .map(|attr| attr.get_type(ctx))
        else {
            return invalid(self, ctx, "missing type attribute");
        };
        expect_ptr_result(self, ctx, ty, ADDRSPACE_GENERIC)
    }
}

/// An [AllocInfo] given to an op that does not own it.
#[derive(Debug, Error)]
#[error("mem2reg: the allocation is not related to this operation")]
pub struct UnrelatedAllocInfo;

#[op_interface_impl]
impl PromotableAllocationInterface for AllocaOp {
    fn alloc_info(&self, ctx: &Context) -> Vec<AllocInfo> {
        // A variable the debugger shows keeps its slot.
        if self.debug_variable(ctx).is_some() {
            return vec![];
        }
        vec![AllocInfo {
            ptr: self.result(ctx),
            ty: self.allocated_type(ctx),
        }]
    }

    fn default_value(
        &self,
        ctx: &mut Context,
        inserter: &mut dyn Inserter,
        alloc_info: &AllocInfo,
    ) -> Result<Value> {
        if alloc_info.ptr != self.result(ctx) {
            return arg_err!(self.loc(ctx), UnrelatedAllocInfo);
        }
        let undef = UndefOp::new(ctx, alloc_info.ty);
        inserter.insert_op(ctx, &undef);
        Ok(undef.result(ctx))
    }

    fn promote(
        &self,
        ctx: &mut Context,
        rewriter: &mut dyn Rewriter,
        alloc_infos: &[AllocInfo],
    ) -> Result<()> {
        if alloc_infos.len() != 1 || alloc_infos[0].ptr != self.result(ctx) {
            return arg_err!(self.loc(ctx), UnrelatedAllocInfo);
        }
        rewriter.erase_operation(ctx, self.get_operation());
        Ok(())
    }
}

/// A load of the whole value at an address (a `bool` is one byte in memory, `i1` as a value).
///
/// Printed as `v = mir.load p : T`.
///
/// | operand / result | type |
/// |---------|------|
/// | `ptr` | `mir.ptr<T, _>` |
/// | `res` | `T` |
#[pliron_op(
    name = "mir.load",
    format = "$0 ` : ` type($0)",
    interfaces = [NOpdsInterface<1>, OneResultInterface]
)]
pub struct LoadOp;

impl LoadOp {
    /// Load the value that `ptr` points to.
    pub fn new(ctx: &mut Context, ptr: Value) -> Self {
        let ty = ptr_parts(ctx, ptr.get_type(ctx))
            .expect("mir.load needs a mir.ptr operand")
            .0;
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ty],
            vec![ptr],
            vec![],
            0,
        );
        Self { op }
    }

    /// The address.
    pub fn ptr(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The loaded value.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for LoadOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let (pointee, _) = expect_ptr_operand(self, ctx, 0, "operand")?;
        expect_type_eq(self, ctx, "result", pointee, res_ty(self, ctx, 0))
    }
}

#[op_interface_impl]
impl PromotableOpInterface for LoadOp {
    fn promotion_kind(&self, ctx: &Context, alloc_info: &AllocInfo) -> PromotableOpKind {
        if self.ptr(ctx) == alloc_info.ptr && self.result(ctx).get_type(ctx) == alloc_info.ty {
            PromotableOpKind::Load
        } else {
            PromotableOpKind::NonPromotableUse
        }
    }

    fn promote(
        &self,
        ctx: &mut Context,
        alloc_info_reaching_defs: &[(AllocInfo, Value)],
        rewriter: &mut dyn Rewriter,
    ) -> Result<()> {
        let [(alloc_info, reaching_def)] = alloc_info_reaching_defs else {
            return arg_err!(self.loc(ctx), UnrelatedAllocInfo);
        };
        if self.ptr(ctx) != alloc_info.ptr {
            return arg_err!(self.loc(ctx), UnrelatedAllocInfo);
        }
        rewriter.replace_operation_with_values(ctx, self.get_operation(), vec![*reaching_def]);
        Ok(())
    }
}

/// A store of a whole value at an address.
///
/// Printed as `mir.store *p = v`.
///
/// | operand | type |
/// |---------|------|
/// | `value` | `T` |
/// | `ptr` | `mir.ptr<T, _>` |
#[pliron_op(
    name = "mir.store",
    format = "`*` $1 ` = ` $0",
    interfaces = [NOpdsInterface<2>, NResultsInterface<0>]
)]
pub struct StoreOp;

impl StoreOp {
    /// Store `value` at `ptr`.
    pub fn new(ctx: &mut Context, value: Value, ptr: Value) -> Self {
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![],
            vec![value, ptr],
            vec![],
            0,
        );
        Self { op }
    }

    /// The stored value (operand 0).
    pub fn value(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The address (operand 1).
    pub fn ptr(&self, ctx: &Context) -> Value {
        opd(self, ctx, 1)
    }
}

impl Verify for StoreOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let (pointee, _) = expect_ptr_operand(self, ctx, 1, "operand 1 (address)")?;
        expect_type_eq(
            self,
            ctx,
            "operand 0 (value)",
            pointee,
            opd_ty(self, ctx, 0),
        )
    }
}

#[op_interface_impl]
impl PromotableOpInterface for StoreOp {
    fn promotion_kind(&self, ctx: &Context, alloc_info: &AllocInfo) -> PromotableOpKind {
        let value = self.value(ctx);
        if self.ptr(ctx) == alloc_info.ptr
            && value != alloc_info.ptr
            && value.get_type(ctx) == alloc_info.ty
        {
            PromotableOpKind::Store(value)
        } else {
            PromotableOpKind::NonPromotableUse
        }
    }

    fn promote(
        &self,
        ctx: &mut Context,
        alloc_info_reaching_defs: &[(AllocInfo, Value)],
        rewriter: &mut dyn Rewriter,
    ) -> Result<()> {
        let [(alloc_info, _)] = alloc_info_reaching_defs else {
            return arg_err!(self.loc(ctx), UnrelatedAllocInfo);
        };
        if self.ptr(ctx) != alloc_info.ptr {
            return arg_err!(self.loc(ctx), UnrelatedAllocInfo);
        }
        rewriter.erase_operation(ctx, self.get_operation());
        Ok(())
    }
}

/// The address of a field of the struct (tuple, closure), union, `mir.disjoint_slice` or
/// `mir.slice` that `base` points to; `field` is the declaration-order index (for the slices, 0
/// is the data pointer `mir.ptr<T, 0>` and 1 the `ui64` length; every field of a union is at
/// the union's address).
///
/// Printed as `f = mir.field_addr p field N : mir.ptr<F, AS>`.
///
/// | operand / result | type |
/// |---------|------|
/// | `base` | `mir.ptr<S, AS>` |
/// | `res` | `mir.ptr<F, AS>`, `F` the type of field `N` of `S` |
#[pliron_op(
    name = "mir.field_addr",
    format = "$0 ` field ` attr($mir_field_index, $IndexAttr) ` : ` type($0)",
    interfaces = [NOpdsInterface<1>, OneResultInterface],
    attributes = (mir_field_index: IndexAttr)
)]
pub struct FieldAddrOp;

/// The type of field `idx` of the aggregate `ty`, if it has one.
pub fn field_type(ctx: &Context, ty: TypeHandle, idx: usize) -> Option<TypeHandle> {
    if let Some(struct_ty) = ty.deref(ctx).downcast_ref::<StructType>() {
        return struct_ty.field(idx).map(|field| field.ty);
    }
    if let Some(union_ty) = ty.deref(ctx).downcast_ref::<UnionType>() {
        return union_ty.field(idx);
    }
    let elem = slice_elem(ctx, ty)?;
    match idx {
        0 => Some(PtrType::get(ctx, elem, ADDRSPACE_GENERIC).into()),
        1 => Some(usize_type(ctx).into()),
        _ => None,
    }
}

impl FieldAddrOp {
    /// The address of field `field` of the aggregate that `base` points to.
    ///
    /// Panics if `base` is not a pointer to an aggregate with such a field.
    pub fn new(ctx: &mut Context, base: Value, field: u32) -> Self {
        let (pointee, address_space) =
            ptr_parts(ctx, base.get_type(ctx)).expect("mir.field_addr needs a mir.ptr operand");
        let field_ty =
            field_type(ctx, pointee, field as usize).expect("mir.field_addr: no such field");
        let res_ty = PtrType::get(ctx, field_ty, address_space).into();
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![res_ty],
            vec![base],
            vec![],
            0,
        );
        let op = Self { op };
        op.set_attr_mir_field_index(ctx, IndexAttr(field));
        op
    }

    /// The address of the aggregate.
    pub fn base(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The declaration-order field index.
    pub fn field_index(&self, ctx: &Context) -> usize {
        self.get_attr_mir_field_index(ctx)
            .expect("mir.field_addr has a field index")
            .index()
    }

    /// The address of the field.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for FieldAddrOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let Some(field) = self.get_attr_mir_field_index(ctx).map(|attr| attr.index()) else {
            return invalid(self, ctx, "missing field index");
        };
        let (pointee, address_space) = expect_ptr_operand(self, ctx, 0, "operand")?;
        let Some(field_ty) = field_type(ctx, pointee, field) else {
            let base_ty = opd_ty(self, ctx, 0);
            return expect_type(
                self,
                ctx,
                false,
                "operand",
                &format!("a pointer to a struct, union or slice with a field {field}"),
                base_ty,
            );
        };
        expect_ptr_result(self, ctx, field_ty, address_space)
    }
}

/// The address of element 0 of the array that `base` points to.
///
/// Printed as `e = mir.array_elem_addr p : mir.ptr<T, AS>`.
///
/// | operand / result | type |
/// |---------|------|
/// | `base` | `mir.ptr<mir.array<T, N>, AS>` |
/// | `res` | `mir.ptr<T, AS>` |
#[pliron_op(
    name = "mir.array_elem_addr",
    format = "$0 ` : ` type($0)",
    interfaces = [NOpdsInterface<1>, OneResultInterface]
)]
pub struct ArrayElemAddrOp;

/// The element type of `ty` if it is a `mir.array`.
fn array_elem(ctx: &Context, ty: TypeHandle) -> Option<TypeHandle> {
    ty.deref(ctx)
        .downcast_ref::<ArrayType>()
        .map(|array| array.elem())
}

impl ArrayElemAddrOp {
    /// The address of element 0 of the array at `base`.
    ///
    /// Panics if `base` is not a pointer to a `mir.array`.
    pub fn new(ctx: &mut Context, base: Value) -> Self {
        let (pointee, address_space) = ptr_parts(ctx, base.get_type(ctx))
            .expect("mir.array_elem_addr needs a mir.ptr operand");
        let elem = array_elem(ctx, pointee).expect("mir.array_elem_addr needs a pointer to array");
        let ty = PtrType::get(ctx, elem, address_space).into();
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ty],
            vec![base],
            vec![],
            0,
        );
        Self { op }
    }

    /// The address of the array.
    pub fn base(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The address of element 0.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for ArrayElemAddrOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let (pointee, address_space) = expect_ptr_operand(self, ctx, 0, "operand")?;
        let Some(elem) = array_elem(ctx, pointee) else {
            return expect_type(
                self,
                ctx,
                false,
                "operand",
                "a pointer to a mir.array",
                opd_ty(self, ctx, 0),
            );
        };
        expect_ptr_result(self, ctx, elem, address_space)
    }
}

/// `base` moved by `count` elements of its pointee type: `base + count * size_of T`. MIR's
/// `Offset` (`ptr::add`), and the address of element `count` of an array or slice given the
/// address of its element 0 (from `mir.array_elem_addr` or `mir.slice_ptr`).
///
/// Printed as `q = mir.ptr_offset p, n : mir.ptr<T, AS>`.
///
/// | operand / result | type |
/// |---------|------|
/// | `base` | `mir.ptr<T, AS>` |
/// | `count` | `si64` or `ui64` |
/// | `res` | `mir.ptr<T, AS>` |
#[pliron_op(
    name = "mir.ptr_offset",
    format = "$0 `, ` $1 ` : ` type($0)",
    interfaces = [NOpdsInterface<2>, OneResultInterface]
)]
pub struct PtrOffsetOp;

impl PtrOffsetOp {
    /// `base` moved by `count` elements.
    pub fn new(ctx: &mut Context, base: Value, count: Value) -> Self {
        let ty = base.get_type(ctx);
        let op = Operation::new(
            ctx,
            Self::get_concrete_op_info(),
            vec![ty],
            vec![base, count],
            vec![],
            0,
        );
        Self { op }
    }

    /// The pointer moved.
    pub fn base(&self, ctx: &Context) -> Value {
        opd(self, ctx, 0)
    }

    /// The element count.
    pub fn count(&self, ctx: &Context) -> Value {
        opd(self, ctx, 1)
    }

    /// The moved pointer.
    pub fn result(&self, ctx: &Context) -> Value {
        res(self, ctx, 0)
    }
}

impl Verify for PtrOffsetOp {
    fn verify(&self, ctx: &Context) -> Result<()> {
        let (pointee, address_space) = expect_ptr_operand(self, ctx, 0, "operand 0 (base)")?;
        expect_index_operand(self, ctx, 1, "operand 1 (count)")?;
        expect_ptr_result(self, ctx, pointee, address_space)
    }
}

no_side_effects!(AllocaOp, FieldAddrOp, ArrayElemAddrOp, PtrOffsetOp);
