//! Global initializers given as regions: folded into constant expressions (`addrspacecast`,
//! `getelementptr`) and aggregates built with `insert_value`; anything else is refused.

mod common;

use common::*;
use llvm_export::{ExportError, export_module};
use pliron::{
    basic_block::BasicBlock,
    builtin::op_interfaces::SingleBlockRegionInterface,
    context::{Context, Ptr},
    irbuild::{
        inserter::{IRInserter, Inserter},
        listener::DummyListener,
    },
    op::Op,
    r#type::TypeHandle,
    value::Value,
};
use pliron_llvm::{
    attributes::{BytesAttr, LinkageAttr},
    op_interfaces::{BinArithOp, CastOpInterface},
    ops::{
        AddOp, AddrSpaceCastOp, AddressOfOp, ConstantOp, GepIndex, GetElementPtrOp, GlobalOp,
        InsertValueOp, ReturnOp, UndefOp,
    },
    types::{ArrayType, StructLayout, StructType},
};

/// A global `name` of type `ty` whose initializer region `fill` builds; returns the region's
/// block.
fn global_with_region(
    b: &mut Builder,
    name: &str,
    ty: TypeHandle,
    fill: impl FnOnce(&mut Context, &mut IRInserter<DummyListener>) -> Value,
) {
    let g = GlobalOp::new(b.ctx, id(name), ty);
    g.set_attr_llvm_global_linkage(b.ctx, LinkageAttr::InternalLinkage);
    g.set_address_space(b.ctx, 1);
    g.set_constant(b.ctx, true);
    g.add_initializer_region(b.ctx);
    let block: Ptr<BasicBlock> = g.get_initializer_block(b.ctx).unwrap();
    let mut inserter = IRInserter::<DummyListener>::new_at_block_end(block);
    let result = fill(b.ctx, &mut inserter);
    let ret = ReturnOp::new(b.ctx, Some(result));
    inserter.append_operation(b.ctx, ret.get_operation());
    b.module.append_operation(b.ctx, g.get_operation(), 0);
}

fn push<O: Op>(ctx: &mut Context, at: &mut IRInserter<DummyListener>, op: O) -> Value {
    at.append_operation(ctx, op.get_operation());
    op.get_operation().deref(ctx).get_result(0)
}

#[test]
fn relocated_initializer_is_one_constant() {
    let ctx = &mut Context::new();
    let mut b = Builder::new(ctx, "m");
    let i8t = int(b.ctx, 8);
    let text_ty: TypeHandle = ArrayType::get(b.ctx, i8t, 4).into();
    let text = GlobalOp::new(b.ctx, id("text"), text_ty);
    text.set_attr_llvm_global_linkage(b.ctx, LinkageAttr::InternalLinkage);
    text.set_address_space(b.ctx, 1);
    text.set_initializer_value(b.ctx, Box::new(BytesAttr::new(b"four".to_vec())));
    b.module.append_operation(b.ctx, text.get_operation(), 0);

    let (p0, bytes8) = (ptr(b.ctx, 0), ArrayType::get(b.ctx, i8t, 8).into());
    let table_ty: TypeHandle =
        StructType::get_unnamed(b.ctx, (vec![p0, bytes8, p0], StructLayout::Packed)).into();
    global_with_region(&mut b, "table", table_ty, |ctx, at| {
        let undef = UndefOp::new(ctx, table_ty);
        let undef = push(ctx, at, undef);
        let address = AddressOfOp::new(ctx, id("text"), 1);
        let address = push(ctx, at, address);
        let generic = AddrSpaceCastOp::new(ctx, address, p0);
        let generic = push(ctx, at, generic);
        let first = InsertValueOp::new(ctx, undef, generic, vec![0]);
        let first = push(ctx, at, first);
        let len = ConstantOp::new(ctx, Box::new(BytesAttr::new(vec![4, 0, 0, 0, 0, 0, 0, 0])));
        let len = push(ctx, at, len);
        let second = InsertValueOp::new(ctx, first, len, vec![1]);
        let second = push(ctx, at, second);
        let i8t = int(ctx, 8);
        let moved = GetElementPtrOp::new(ctx, generic, vec![GepIndex::Constant(1)], i8t);
        let moved = push(ctx, at, moved);
        let third = InsertValueOp::new(ctx, second, moved, vec![2]);
        push(ctx, at, third)
    });
    let module = b.module;
    let ll = export_module(ctx, module).unwrap_or_else(|e| panic!("export failed: {e}"));
    assert!(
        ll.contains(
            "@table = internal addrspace(1) constant <{ ptr, [8 x i8], ptr }> <{ ptr \
             addrspacecast (ptr addrspace(1) @text to ptr), [8 x i8] \
             c\"\\04\\00\\00\\00\\00\\00\\00\\00\", ptr getelementptr (i8, ptr addrspacecast \
             (ptr addrspace(1) @text to ptr), i32 1) }>\n"
        ),
        "{ll}"
    );
}

#[test]
fn instructions_in_an_initializer_are_refused() {
    let ctx = &mut Context::new();
    let mut b = Builder::new(ctx, "m");
    let i32t = int(b.ctx, 32);
    global_with_region(&mut b, "sum", i32t, |ctx, at| {
        let one = ConstantOp::new(ctx, Box::new(int_attr(ctx, 32, 1)));
        let one = push(ctx, at, one);
        let sum = AddOp::new(ctx, one, one);
        push(ctx, at, sum)
    });
    let module = b.module;
    let err = export_module(ctx, module).unwrap_err();
    assert!(
        matches!(&err, ExportError::UnsupportedOp { op } if op == "llvm.add (in a global initializer)"),
        "{err:?}"
    );
}

fn int_attr(ctx: &Context, width: u32, value: i64) -> pliron::builtin::attributes::IntegerAttr {
    use pliron::builtin::types::{IntegerType, Signedness};
    let ty = IntegerType::get(ctx, width, Signedness::Signless);
    pliron::builtin::attributes::IntegerAttr::new(
        ty,
        pliron::utils::apint::APInt::from_i64(
            value,
            std::num::NonZero::new(width as usize).unwrap(),
        ),
    )
}
