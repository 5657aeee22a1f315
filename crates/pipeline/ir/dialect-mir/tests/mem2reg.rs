//! pliron's mem2reg on `mir` functions: slots whose only uses are whole-value loads and stores
//! become SSA values (with block arguments at joins); slots whose address escapes stay.

mod common;

use common::*;
use dialect_mir::{
    ops::*,
    types::{FieldLayout, PtrType, StructType},
};
use pliron::{
    builtin::{ops::ModuleOp, types::FunctionType},
    context::{Context, Ptr},
    ident,
    irbuild::IRStatus,
    op::Op,
    operation::Operation,
    opts::mem2reg::mem2reg,
    pass::AnalysisManager,
};

/// Run mem2reg on `module`, verify the result and return the status.
fn run_mem2reg(ctx: &mut Context, module: ModuleOp) -> IRStatus {
    let status = mem2reg(module.get_operation(), ctx, &mut AnalysisManager::default())
        .expect("mem2reg succeeds");
    verify(ctx, module.get_operation());
    status
}

/// How many ops named `opid` are nested in `op`.
fn count_ops(ctx: &Context, op: Ptr<Operation>, opid: &str) -> usize {
    let text = print(ctx, op);
    text.matches(&format!("{opid} ")).count() + text.matches(&format!("{opid};")).count()
}

/// `fn sum(n: u32) -> u32 { let (mut i, mut acc) = (0, 0); while i < n { acc += i; i += 1 }
/// acc }` as the translator emits it: every local in a slot, blocks without arguments.
fn build_sum(ctx: &mut Context) -> ModuleOp {
    let module = module(ctx);
    let u32_ty = ui(ctx, 32);
    let f = func(ctx, module, "sum", vec![u32_ty], vec![u32_ty]);
    let entry = f.entry_block(ctx).unwrap();
    let header = block(ctx, f, "header");
    let body = block(ctx, f, "body");
    let exit = block(ctx, f, "exit");
    let n_arg = entry.deref(ctx).get_argument(0);

    let mut b = Builder::at_end(entry);
    let ret_slot = b.add(AllocaOp::new(ctx, u32_ty), ctx).result(ctx);
    let n_slot = b.add(AllocaOp::new(ctx, u32_ty), ctx).result(ctx);
    let i_slot = b.add(AllocaOp::new(ctx, u32_ty), ctx).result(ctx);
    let acc_slot = b.add(AllocaOp::new(ctx, u32_ty), ctx).result(ctx);
    b.add(StoreOp::new(ctx, n_arg, n_slot), ctx);
    let u32_int = pliron::r#type::TypedHandle::from_handle(u32_ty, ctx).unwrap();
    let zero = b.add(ConstantOp::new_int(ctx, u32_int, 0), ctx).result(ctx);
    b.add(StoreOp::new(ctx, zero, i_slot), ctx);
    b.add(StoreOp::new(ctx, zero, acc_slot), ctx);
    b.add(GotoOp::new(ctx, header), ctx);

    let mut b = Builder::at_end(header);
    let i = b.add(LoadOp::new(ctx, i_slot), ctx).result(ctx);
    let n = b.add(LoadOp::new(ctx, n_slot), ctx).result(ctx);
    let more = b.add(LtOp::new(ctx, i, n), ctx).result(ctx);
    b.add(CondBrOp::new(ctx, more, body, exit), ctx);

    let mut b = Builder::at_end(body);
    let acc = b.add(LoadOp::new(ctx, acc_slot), ctx).result(ctx);
    let i = b.add(LoadOp::new(ctx, i_slot), ctx).result(ctx);
    let sum = b.add(AddOp::new(ctx, acc, i), ctx).result(ctx);
    b.add(StoreOp::new(ctx, sum, acc_slot), ctx);
    let one = b.add(ConstantOp::new_int(ctx, u32_int, 1), ctx).result(ctx);
    let next = b.add(AddOp::new(ctx, i, one), ctx).result(ctx);
    b.add(StoreOp::new(ctx, next, i_slot), ctx);
    b.add(GotoOp::new(ctx, header), ctx);

    let mut b = Builder::at_end(exit);
    let acc = b.add(LoadOp::new(ctx, acc_slot), ctx).result(ctx);
    b.add(StoreOp::new(ctx, acc, ret_slot), ctx);
    let ret = b.add(LoadOp::new(ctx, ret_slot), ctx).result(ctx);
    b.add(ReturnOp::new(ctx, Some(ret)), ctx);
    module
}

#[test]
fn loop_carried_slots_become_block_arguments() {
    let ctx = &mut context();
    let module = build_sum(ctx);
    verify(ctx, module.get_operation());
    insta::assert_snapshot!("sum_before", print(ctx, module.get_operation()));

    assert_eq!(run_mem2reg(ctx, module), IRStatus::Changed);
    let after = print(ctx, module.get_operation());
    insta::assert_snapshot!("sum_after", after);
    assert_eq!(count_ops(ctx, module.get_operation(), "mir.alloca"), 0);
    assert_eq!(count_ops(ctx, module.get_operation(), "mir.load"), 0);
    assert_eq!(count_ops(ctx, module.get_operation(), "mir.store"), 0);
    assert_roundtrip(ctx, module.get_operation());
}

#[test]
fn promoted_form_parses_and_reruns_unchanged() {
    let ctx = &mut context();
    let module = build_sum(ctx);
    run_mem2reg(ctx, module);
    assert_eq!(run_mem2reg(ctx, module), IRStatus::Unchanged);
}

#[test]
fn address_taken_slots_stay_in_memory() {
    let ctx = &mut context();
    let module = module(ctx);
    let i32_ty = si(ctx, 32);
    let pair = StructType::get(
        ctx,
        "Pair",
        8,
        4,
        vec![FieldLayout::new(i32_ty, 0), FieldLayout::new(i32_ty, 4)],
    )
    .into();
    let ptr_i32 = PtrType::get(ctx, i32_ty, 0).into();
    let sink_ty = FunctionType::get(ctx, vec![ptr_i32], vec![]);
    let sink = FuncOp::new_declaration(ctx, ident!("sink"), sink_ty);
    sink.get_operation().insert_at_back(
        pliron::builtin::op_interfaces::SingleBlockRegionInterface::get_body(&module, ctx, 0),
        ctx,
    );
    let f = func(ctx, module, "fields", vec![i32_ty], vec![pair]);
    let entry = f.entry_block(ctx).unwrap();
    let x = entry.deref(ctx).get_argument(0);

    let mut b = Builder::at_end(entry);
    let pair_slot = b.add(AllocaOp::new(ctx, pair), ctx).result(ctx);
    let escaped_slot = b.add(AllocaOp::new(ctx, i32_ty), ctx).result(ctx);
    let scalar_slot = b.add(AllocaOp::new(ctx, i32_ty), ctx).result(ctx);
    let addr_slot = b.add(AllocaOp::new(ctx, ptr_i32), ctx).result(ctx);
    b.add(StoreOp::new(ctx, x, scalar_slot), ctx);
    let x = b.add(LoadOp::new(ctx, scalar_slot), ctx).result(ctx);
    let first = b.add(FieldAddrOp::new(ctx, pair_slot, 0), ctx).result(ctx);
    b.add(StoreOp::new(ctx, x, first), ctx);
    let second = b.add(FieldAddrOp::new(ctx, pair_slot, 1), ctx).result(ctx);
    b.add(StoreOp::new(ctx, x, second), ctx);
    b.add(StoreOp::new(ctx, x, escaped_slot), ctx);
    b.add(StoreOp::new(ctx, escaped_slot, addr_slot), ctx);
    let addr = b.add(LoadOp::new(ctx, addr_slot), ctx).result(ctx);
    b.add(CallOp::new(ctx, ident!("sink"), sink_ty, vec![addr]), ctx);
    let value = b.add(LoadOp::new(ctx, pair_slot), ctx).result(ctx);
    b.add(ReturnOp::new(ctx, Some(value)), ctx);
    verify(ctx, module.get_operation());

    assert_eq!(run_mem2reg(ctx, module), IRStatus::Changed);
    insta::assert_snapshot!(print(ctx, module.get_operation()));
    // The struct slot (used by mir.field_addr) and the slot whose address is stored stay; the
    // scalar slot and the slot holding the address are promoted.
    assert_eq!(count_ops(ctx, module.get_operation(), "mir.alloca"), 2);
    assert_roundtrip(ctx, module.get_operation());
}

#[test]
fn slot_passed_to_a_call_stays() {
    let ctx = &mut context();
    let module = module(ctx);
    let u8_ty = ui(ctx, 8);
    let ptr_u8 = PtrType::get(ctx, u8_ty, 0).into();
    let callee_ty = FunctionType::get(ctx, vec![ptr_u8], vec![u8_ty]);
    func(ctx, module, "read", vec![ptr_u8], vec![u8_ty]);
    let f = func(ctx, module, "caller", vec![u8_ty], vec![u8_ty]);
    let read = module_func(ctx, module, "read");
    let read_entry = read.entry_block(ctx).unwrap();
    let p = read_entry.deref(ctx).get_argument(0);
    let mut b = Builder::at_end(read_entry);
    let v = b.add(LoadOp::new(ctx, p), ctx).result(ctx);
    b.add(ReturnOp::new(ctx, Some(v)), ctx);

    let entry = f.entry_block(ctx).unwrap();
    let x = entry.deref(ctx).get_argument(0);
    let mut b = Builder::at_end(entry);
    let slot = b.add(AllocaOp::new(ctx, u8_ty), ctx).result(ctx);
    b.add(StoreOp::new(ctx, x, slot), ctx);
    let call = b.add(CallOp::new(ctx, ident!("read"), callee_ty, vec![slot]), ctx);
    let r = call.result(ctx).unwrap();
    b.add(ReturnOp::new(ctx, Some(r)), ctx);
    verify(ctx, module.get_operation());

    assert_eq!(run_mem2reg(ctx, module), IRStatus::Unchanged);
    assert_eq!(count_ops(ctx, module.get_operation(), "mir.alloca"), 1);
}

/// The function named `name` in `module`.
fn module_func(ctx: &Context, module: ModuleOp, name: &str) -> FuncOp {
    use pliron::builtin::op_interfaces::SymbolTableInterface;
    let op = module
        .lookup(ctx, &name.try_into().unwrap())
        .expect("function exists");
    Operation::get_op::<FuncOp>(op, ctx).unwrap()
}

#[test]
fn switch_join_gets_block_arguments() {
    // let r = match d { 0 => 10, 1 => 20, _ => 30 }; r
    let ctx = &mut context();
    let module = module(ctx);
    let u8_ty = ui(ctx, 8);
    let i64_ty = si(ctx, 64);
    let f = func(ctx, module, "pick", vec![u8_ty], vec![i64_ty]);
    let entry = f.entry_block(ctx).unwrap();
    let arms: Vec<_> = ["zero", "one", "other"]
        .iter()
        .map(|label| block(ctx, f, label))
        .collect();
    let join = block(ctx, f, "join");
    let d = entry.deref(ctx).get_argument(0);
    let i64_int = pliron::r#type::TypedHandle::from_handle(i64_ty, ctx).unwrap();

    let mut b = Builder::at_end(entry);
    let r_slot = b.add(AllocaOp::new(ctx, i64_ty), ctx).result(ctx);
    b.add(
        SwitchIntOp::new(ctx, d, vec![(0, arms[0]), (1, arms[1])], arms[2]),
        ctx,
    );
    for (arm, value) in arms.iter().zip([10u128, 20, 30]) {
        let mut b = Builder::at_end(*arm);
        let c = b
            .add(ConstantOp::new_int(ctx, i64_int, value), ctx)
            .result(ctx);
        b.add(StoreOp::new(ctx, c, r_slot), ctx);
        b.add(GotoOp::new(ctx, join), ctx);
    }
    let mut b = Builder::at_end(join);
    let r = b.add(LoadOp::new(ctx, r_slot), ctx).result(ctx);
    b.add(ReturnOp::new(ctx, Some(r)), ctx);
    verify(ctx, module.get_operation());

    assert_eq!(run_mem2reg(ctx, module), IRStatus::Changed);
    insta::assert_snapshot!(print(ctx, module.get_operation()));
    assert_eq!(join.deref(ctx).get_num_arguments(), 1);
    assert_roundtrip(ctx, module.get_operation());
}

#[test]
fn read_before_write_becomes_undef() {
    let ctx = &mut context();
    let module = module(ctx);
    let f32_ty = pliron::builtin::types::FP32Type::get(ctx).into();
    let bool_ty = dialect_mir::types::bool_type(ctx).into();
    let f = func(ctx, module, "maybe", vec![bool_ty], vec![f32_ty]);
    let entry = f.entry_block(ctx).unwrap();
    let set = block(ctx, f, "set");
    let join = block(ctx, f, "join");
    let c = entry.deref(ctx).get_argument(0);

    let mut b = Builder::at_end(entry);
    let slot = b.add(AllocaOp::new(ctx, f32_ty), ctx).result(ctx);
    b.add(CondBrOp::new(ctx, c, set, join), ctx);
    let mut b = Builder::at_end(set);
    let v = b.add(ConstantOp::new_f32(ctx, 1.5), ctx).result(ctx);
    b.add(StoreOp::new(ctx, v, slot), ctx);
    b.add(GotoOp::new(ctx, join), ctx);
    let mut b = Builder::at_end(join);
    let r = b.add(LoadOp::new(ctx, slot), ctx).result(ctx);
    b.add(ReturnOp::new(ctx, Some(r)), ctx);
    verify(ctx, module.get_operation());

    assert_eq!(run_mem2reg(ctx, module), IRStatus::Changed);
    insta::assert_snapshot!(print(ctx, module.get_operation()));
    assert_eq!(count_ops(ctx, module.get_operation(), "mir.undef"), 1);
    assert_roundtrip(ctx, module.get_operation());
}
