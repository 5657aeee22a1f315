//! The op-by-op conversion to the LLVM dialect, on pliron's [DialectConversion] framework.
//!
//! Every `mir` / `nvvm` op implements the [MirToLlvmConversion] op interface (the
//! `conversions!` table below), which calls the converter of its family. [MirToLlvm] drives
//! them: block arguments are converted first, then each op after the ops defining its
//! operands, so a converter sees LLVM-typed operands and finds their former `mir` types
//! (signedness, pointee, layout) in [OperandsInfo].
//!
//! Every converter gives each result a *new* value: reusing an operand as a result (a no-op
//! cast) would merge the type histories of two values and give later users the wrong
//! signedness or pointee.

pub mod aggregate;
pub mod arithmetic;
pub mod atomic;
pub mod call;
pub mod cast;
pub mod constants;
pub mod control_flow;
pub mod enums;
pub mod global;
pub mod intrinsics;
pub mod math;
pub mod memory;
pub mod raw_memory;
pub mod wide_shift;

use std::num::NonZero;

use dialect_mir::ops as mir;
use dialect_nvvm as nvvm;
use pliron::{
    basic_block::BasicBlock,
    builtin::{attributes::IntegerAttr, attributes::StringAttr, types::IntegerType},
    context::{Context, Ptr},
    derive::{op_interface, op_interface_impl},
    identifier::Identifier,
    input_error_noloc,
    irbuild::{
        dialect_conversion::{DialectConversion, DialectConversionRewriter, OperandsInfo},
        inserter::{Inserter, OpInsertionPoint},
        rewriter::Rewriter,
    },
    linked_list::ContainsLinkedList,
    op::{Op, op_cast, op_impls},
    operation::Operation,
    printable::Printable,
    r#type::{TypeHandle, Typed, TypedHandle},
    utils::apint::APInt,
    value::Value,
};
use pliron_llvm::{
    attributes::{GepNoWrapFlags, IntegerOverflowFlagsAttr},
    llvm_attrs::{LlvmAttrValue, LlvmAttributesAttr},
    op_interfaces::{AlignableOpInterface, IntBinArithOpWithOverflowFlag},
    ops::{
        AllocaOp as LlvmAllocaOp, CallIntrinsicOp, ConstantOp, FuncOp as LlvmFuncOp, GepIndex,
        GetElementPtrOp, UndefOp,
    },
    types::FuncType,
};

use crate::{
    error::{LoweringError, OpError},
    flavour::Flavour,
    globals::GlobalSpaces,
    types::{int_type, needs_conversion, value_type},
};

/// Conversion of one `mir` / `nvvm` op to LLVM dialect ops.
#[op_interface]
pub trait MirToLlvmConversion {
    /// Replace this op (the op of `rw`) by LLVM dialect ops, inserted through `rw`.
    fn convert(&self, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError>;

    fn verify(_op: &dyn Op, _ctx: &Context) -> pliron::result::Result<()>
    where
        Self: Sized,
    {
        Ok(())
    }
}

/// What a converter works with: the rewriter positioned before its op, and the former types
/// of the op's operands.
pub struct Rewrite<'a> {
    rewriter: &'a mut DialectConversionRewriter,
    operands_info: &'a OperandsInfo,
    op: Ptr<Operation>,
    global_spaces: &'a GlobalSpaces,
    flavour: Flavour,
}

impl Rewrite<'_> {
    /// Whether the module is lowered for the CPU device ([Flavour::Cpu]).
    pub fn for_cpu(&self) -> bool {
        self.flavour == Flavour::Cpu
    }

    /// The op being converted.
    pub fn op(&self) -> Ptr<Operation> {
        self.op
    }

    /// Operand `idx` of the op (already converted).
    pub fn operand(&self, ctx: &Context, idx: usize) -> Value {
        self.op.deref(ctx).get_operand(idx)
    }

    /// All operands of the op.
    pub fn operands(&self, ctx: &Context) -> Vec<Value> {
        self.op.deref(ctx).operands().collect()
    }

    /// The `mir` type `value` had before the conversion.
    pub fn mir_type(&self, ctx: &Context, value: Value) -> TypeHandle {
        self.operands_info
            .lookup_most_recent_type(value)
            .unwrap_or_else(|| value.get_type(ctx))
    }

    /// The `mir` type of operand `idx`.
    pub fn operand_mir_type(&self, ctx: &Context, idx: usize) -> TypeHandle {
        self.mir_type(ctx, self.operand(ctx, idx))
    }

    /// The address space of the global named `name` (lowered before the functions).
    pub fn global_space(&self, name: &Identifier) -> Result<u32, OpError> {
        self.global_spaces
            .get(name)
            .copied()
            .ok_or_else(|| OpError::Malformed(format!("no global named `{name}`")))
    }

    /// The (still `mir`) type of result `idx` of the op.
    pub fn result_mir_type(&self, ctx: &Context, idx: usize) -> TypeHandle {
        self.op.deref(ctx).get_result(idx).get_type(ctx)
    }

    /// Insert `op` before the op being converted (after the ops inserted so far). It takes
    /// over the converted op's source location.
    pub fn insert<O: Op>(&mut self, ctx: &mut Context, op: O) -> O {
        let loc = self.op.deref(ctx).loc().clone();
        if !loc.is_unknown() {
            op.get_operation().deref_mut(ctx).set_loc(loc);
        }
        self.rewriter.append_op(ctx, &op);
        op
    }

    /// Insert `op` and return its (first) result.
    pub fn value<O: Op>(&mut self, ctx: &mut Context, op: O) -> Value {
        let op = self.insert(ctx, op);
        op.get_operation().deref(ctx).get_result(0)
    }

    /// Run `build` with insertions going to the start of the function's entry block (where
    /// allocas belong), after the allocas already there, in order.
    pub fn in_entry<R>(
        &mut self,
        ctx: &mut Context,
        build: impl FnOnce(&mut Self, &mut Context) -> R,
    ) -> R {
        let entry = entry_block(ctx, self.op);
        let last_alloca = entry
            .deref(ctx)
            .iter(ctx)
            .take_while(|&op| {
                let op = Operation::get_op_dyn(op, ctx);
                op.op_ref().is::<LlvmAllocaOp>() || op.op_ref().is::<ConstantOp>()
            })
            .last();
        let point = match last_alloca {
            Some(op) => OpInsertionPoint::AfterOperation(op),
            None => OpInsertionPoint::AtBlockStart(entry),
        };
        let saved = self.rewriter.get_insertion_point();
        self.rewriter.set_insertion_point(point);
        let result = build(self, ctx);
        self.rewriter.set_insertion_point(saved);
        result
    }

    /// Replace the op's results by `values` and erase it.
    pub fn replace(&mut self, ctx: &mut Context, values: Vec<Value>) {
        self.rewriter
            .replace_operation_with_values(ctx, self.op, values);
    }

    /// Erase the op (which has no result).
    pub fn erase(&mut self, ctx: &mut Context) {
        self.rewriter.erase_operation(ctx, self.op);
    }

    /// The LLVM value type of `mir` type `ty`.
    pub fn llvm_type(&self, ctx: &Context, ty: TypeHandle) -> Result<TypeHandle, OpError> {
        value_type(ctx, ty)
    }

    /// An integer constant of `width` bits holding the low bits of `bits`.
    pub fn const_int(&mut self, ctx: &mut Context, width: u32, bits: u128) -> Value {
        let ty = IntegerType::get(ctx, width, pliron::builtin::types::Signedness::Signless);
        let attr = IntegerAttr::new(ty, APInt::from_u128(bits, nonzero(width)));
        let op = ConstantOp::new(ctx, Box::new(attr));
        self.value(ctx, op)
    }

    /// An `undef` of LLVM type `ty`.
    pub fn undef(&mut self, ctx: &mut Context, ty: TypeHandle) -> Value {
        let op = UndefOp::new(ctx, ty);
        self.value(ctx, op)
    }

    /// A call of intrinsic `name` returning `result` (an LLVM type, `void` included);
    /// `convergent` marks calls that all threads of a warp or block must make together.
    pub fn intrinsic(
        &mut self,
        ctx: &mut Context,
        name: &str,
        result: TypeHandle,
        args: Vec<Value>,
        convergent: bool,
    ) -> Value {
        let arg_types = args.iter().map(|arg| arg.get_type(ctx)).collect();
        let ty = FuncType::get(ctx, result, arg_types, false);
        let op = CallIntrinsicOp::new(ctx, StringAttr::new(name.into()), ty, args);
        if convergent {
            let mut attrs = LlvmAttributesAttr::new();
            attrs.set("convergent", LlvmAttrValue::Unit);
            op.set_attr_llvm_intrinsic_attrs(ctx, attrs);
        }
        self.value(ctx, op)
    }

    /// `ptr + offset` bytes (an `i8` GEP; a new value even for offset 0).
    pub fn byte_offset(&mut self, ctx: &mut Context, ptr: Value, offset: u64) -> Value {
        let i8_ty = int_type(ctx, 8);
        let offset = self.const_int(ctx, 64, u128::from(offset));
        let gep = GetElementPtrOp::new_with_no_wrap_flags(
            ctx,
            ptr,
            vec![GepIndex::Value(offset)],
            i8_ty,
            GepNoWrapFlags::INBOUNDS,
        );
        self.value(ctx, gep)
    }

    /// An integer binary op without overflow flags (wrapping).
    pub fn int_binary<O: IntBinArithOpWithOverflowFlag>(
        &mut self,
        ctx: &mut Context,
        lhs: Value,
        rhs: Value,
    ) -> Value {
        let op = O::new_with_overflow_flag(ctx, lhs, rhs, IntegerOverflowFlagsAttr::default());
        self.value(ctx, op)
    }
}

/// `NonZero` of an integer width.
pub(crate) fn nonzero(width: u32) -> NonZero<usize> {
    NonZero::new(width as usize).expect("integer types have a non-zero width")
}

/// Set the alignment of a load, store or alloca.
pub(crate) fn set_align<O: AlignableOpInterface>(ctx: &Context, op: &O, align: u64) {
    op.set_alignment(ctx, u32::try_from(align).unwrap_or(u32::MAX));
}

/// The entry block of the function holding `op`.
fn entry_block(ctx: &Context, op: Ptr<Operation>) -> Ptr<BasicBlock> {
    let region = op
        .deref(ctx)
        .get_parent_region(ctx)
        .expect("converted ops are inside a function");
    region
        .deref(ctx)
        .get_head()
        .expect("a region holding an op has blocks")
}

/// Whether the function holding the op being converted allows contracting float
/// multiplications and additions into fused multiply-adds (its `mir.func` had
/// [dialect_mir::ops::ATTR_KEY_MIR_FUNC_FMAD], which the lowering moves to the `llvm.func`).
pub(crate) fn contracts(ctx: &Context, rw: &Rewrite) -> bool {
    let mut current = rw.op.deref(ctx).get_parent_op(ctx);
    while let Some(parent) = current {
        if Operation::get_op::<LlvmFuncOp>(parent, ctx).is_some() {
            return parent
                .deref(ctx)
                .attributes
                .get::<pliron::builtin::attributes::UnitAttr>(
                    &dialect_mir::ops::ATTR_KEY_MIR_FUNC_FMAD,
                )
                .is_some();
        }
        current = parent.deref(ctx).get_parent_op(ctx);
    }
    false
}

/// The symbol of the `llvm.func` holding `op`, for error messages.
pub(crate) fn enclosing_function(ctx: &Context, op: Ptr<Operation>) -> String {
    use pliron::builtin::op_interfaces::SymbolOpInterface;
    let mut current = op.deref(ctx).get_parent_op(ctx);
    while let Some(parent) = current {
        if let Some(func) = Operation::get_op::<LlvmFuncOp>(parent, ctx) {
            return func.get_symbol_name(ctx).to_string();
        }
        current = parent.deref(ctx).get_parent_op(ctx);
    }
    "<none>".to_string()
}

/// The [DialectConversion] from `mir` / `nvvm` to LLVM: converts every op that implements
/// [MirToLlvmConversion] and every `mir` type.
#[derive(Default)]
pub struct MirToLlvm {
    /// The address space of each global of the module.
    pub global_spaces: GlobalSpaces,
    /// The machine the module is lowered for.
    pub flavour: Flavour,
}

impl DialectConversion for MirToLlvm {
    fn can_convert_op(&self, ctx: &Context, op: Ptr<Operation>) -> bool {
        op_impls::<dyn MirToLlvmConversion>(Operation::get_op_dyn(op, ctx).op_ref())
    }

    fn can_convert_type(&self, ctx: &Context, ty: TypeHandle) -> bool {
        needs_conversion(ctx, ty)
    }

    fn convert_type(
        &mut self,
        ctx: &mut Context,
        ty: TypeHandle,
    ) -> pliron::result::Result<TypeHandle> {
        value_type(ctx, ty).map_err(|source| {
            input_error_noloc!(LoweringError::BlockArgument {
                function: "<unknown>".into(),
                ty: ty.disp(ctx).to_string(),
                source,
            })
        })
    }

    fn rewrite(
        &mut self,
        ctx: &mut Context,
        rewriter: &mut DialectConversionRewriter,
        op: Ptr<Operation>,
        operands_info: &OperandsInfo,
    ) -> pliron::result::Result<()> {
        let op_obj = Operation::get_op_dyn(op, ctx);
        let Some(conversion) = op_cast::<dyn MirToLlvmConversion>(op_obj.op_ref()) else {
            return Ok(());
        };
        let mut rw = Rewrite {
            rewriter,
            operands_info,
            op,
            global_spaces: &self.global_spaces,
            flavour: self.flavour,
        };
        match conversion.convert(ctx, &mut rw) {
            Ok(()) => Ok(()),
            // Converters fail before replacing their op, so it can still be printed.
            Err(source) => Err(input_error_noloc!(LoweringError::Op {
                function: enclosing_function(ctx, op),
                op: op.deref(ctx).disp(ctx).to_string(),
                source,
            })),
        }
    }
}

/// Generate the [MirToLlvmConversion] impls: `Op => converter[extra args];` calls
/// `converter(&op, ctx, rw, extra args...)`.
macro_rules! conversions {
    ($($op:ty => $func:path $([$($arg:expr),*])?;)*) => {$(
        #[op_interface_impl]
        impl MirToLlvmConversion for $op {
            fn convert(&self, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
                $func(self, ctx, rw $($(, $arg)*)?)
            }
        }
    )*};
}

use aggregate::FieldOf;
use arithmetic::{Binary, Compare, Overflow};
use cast::Cast;
use raw_memory::Bulk;

conversions! {
    mir::ConstantOp => constants::constant;
    mir::UndefOp => constants::undef;

    mir::AddOp => arithmetic::binary[Binary::Add];
    mir::SubOp => arithmetic::binary[Binary::Sub];
    mir::MulOp => arithmetic::binary[Binary::Mul];
    mir::DivOp => arithmetic::binary[Binary::Div];
    mir::RemOp => arithmetic::binary[Binary::Rem];
    mir::AlgebraicAddOp => arithmetic::algebraic[Binary::Add];
    mir::AlgebraicSubOp => arithmetic::algebraic[Binary::Sub];
    mir::AlgebraicMulOp => arithmetic::algebraic[Binary::Mul];
    mir::AlgebraicDivOp => arithmetic::algebraic[Binary::Div];
    mir::AlgebraicRemOp => arithmetic::algebraic[Binary::Rem];
    mir::BitAndOp => arithmetic::binary[Binary::And];
    mir::BitOrOp => arithmetic::binary[Binary::Or];
    mir::BitXorOp => arithmetic::binary[Binary::Xor];
    mir::ShlOp => arithmetic::binary[Binary::Shl];
    mir::ShrOp => arithmetic::binary[Binary::Shr];
    mir::NegOp => arithmetic::neg;
    mir::NotOp => arithmetic::not;
    mir::CheckedAddOp => arithmetic::checked[Overflow::Add];
    mir::CheckedSubOp => arithmetic::checked[Overflow::Sub];
    mir::CheckedMulOp => arithmetic::checked[Overflow::Mul];
    mir::EqOp => arithmetic::compare[Compare::Eq];
    mir::NeOp => arithmetic::compare[Compare::Ne];
    mir::LtOp => arithmetic::compare[Compare::Lt];
    mir::LeOp => arithmetic::compare[Compare::Le];
    mir::GtOp => arithmetic::compare[Compare::Gt];
    mir::GeOp => arithmetic::compare[Compare::Ge];
    mir::CmpOp => arithmetic::three_way;

    mir::IntCastOp => cast::cast[Cast::Int];
    mir::IntToFloatOp => cast::cast[Cast::IntToFloat];
    mir::FloatToIntOp => cast::cast[Cast::FloatToInt];
    mir::FloatCastOp => cast::cast[Cast::Float];
    mir::PtrCastOp => cast::cast[Cast::Ptr];
    mir::PtrToIntOp => cast::cast[Cast::PtrToInt];
    mir::IntToPtrOp => cast::cast[Cast::IntToPtr];
    mir::BitcastOp => cast::cast[Cast::Bits];

    mir::AllocaOp => memory::alloca;
    mir::LoadOp => memory::load;
    mir::StoreOp => memory::store;

    mir::FieldAddrOp => aggregate::field_addr;
    mir::PtrOffsetOp => aggregate::element_addr;
    mir::ArrayElemAddrOp => aggregate::array_elem_addr;
    mir::MakeSliceOp => aggregate::make_slice;
    mir::SlicePtrOp => aggregate::slice_field[FieldOf::Ptr];
    mir::SliceLenOp => aggregate::slice_field[FieldOf::Len];
    mir::MakeDynOp => aggregate::make_dyn;
    mir::DynDataOp => aggregate::slice_field[FieldOf::DynData];
    mir::DynVtableOp => aggregate::slice_field[FieldOf::DynVtable];

    mir::GlobalAddrOp => global::global_addr;
    mir::FuncAddrOp => global::func_addr;

    mir::GetDiscriminantOp => enums::get_discriminant;
    mir::SetDiscriminantOp => enums::set_discriminant;
    mir::VariantFieldAddrOp => enums::variant_field_addr;

    mir::GotoOp => control_flow::goto;
    mir::CondBrOp => control_flow::cond_br;
    mir::SwitchIntOp => control_flow::switch_int;
    mir::ReturnOp => control_flow::ret;
    mir::UnreachableOp => control_flow::unreachable;
    mir::TrapOp => control_flow::trap;

    mir::CallOp => call::call;
    mir::CallIndirectOp => call::call_indirect;
    mir::MathOp => math::math;

    mir::AtomicLoadOp => atomic::load;
    mir::AtomicStoreOp => atomic::store;
    mir::AtomicRmwOp => atomic::rmw;
    mir::AtomicCmpxchgOp => atomic::cmpxchg;
    mir::FenceOp => atomic::fence;

    mir::SelectOp => arithmetic::select;
    mir::CopyNonOverlappingOp => raw_memory::bulk[Bulk::CopyNonOverlapping];
    mir::CopyOp => raw_memory::bulk[Bulk::Copy];
    mir::WriteBytesOp => raw_memory::bulk[Bulk::WriteBytes];
    mir::VolatileLoadOp => raw_memory::volatile_load;
    mir::VolatileStoreOp => raw_memory::volatile_store;

    nvvm::IntrinsicOp => intrinsics::intrinsic;
}

/// The `TypedHandle<IntegerType>` of an LLVM integer value type, if it is one.
pub(crate) fn as_int_type(ctx: &Context, ty: TypeHandle) -> Option<TypedHandle<IntegerType>> {
    TypedHandle::<IntegerType>::from_handle(ty, ctx).ok()
}
