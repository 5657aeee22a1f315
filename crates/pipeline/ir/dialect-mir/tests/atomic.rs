//! The atomic ops: every kind, ordering and scope built, verified, printed (snapshot) and
//! parsed back; unused atomics survive dead-code elimination, and a slot that an atomic uses
//! stays in memory through mem2reg.

mod common;

use common::*;
use dialect_mir::{ops::*, types::PtrType};
use pliron::{
    builtin::types::FP64Type, op::Op, opts::mem2reg::mem2reg, pass::AnalysisManager,
    r#type::TypeHandle,
};

#[test]
fn every_atomic_op_prints_and_parses_back() {
    let ctx = &mut context();
    let module = module(ctx);
    let u16_ty = ui(ctx, 16);
    let i64_ty = si(ctx, 64);
    let f64_ty: TypeHandle = FP64Type::get(ctx).into();
    let p16 = PtrType::get(ctx, u16_ty, 0).into();
    let p64 = PtrType::get(ctx, i64_ty, 1).into();
    let pf = PtrType::get(ctx, f64_ty, 3).into();
    let f = func(
        ctx,
        module,
        "atomics",
        vec![p16, u16_ty, p64, i64_ty, pf, f64_ty],
        vec![],
    );
    let entry = f.entry_block(ctx).unwrap();
    let arg = |i| entry.deref(ctx).get_argument(i);
    let (p, v, q, w, r, x) = (arg(0), arg(1), arg(2), arg(3), arg(4), arg(5));
    let mut b = Builder::at_end(entry);
    use AtomicOrdering::*;
    for (&ordering, &scope) in AtomicOrdering::ALL
        .iter()
        .zip(SyncScope::ALL.iter().cycle().skip(1))
    {
        if ordering.valid_for_load() {
            b.add(AtomicLoadOp::new(ctx, q, i64_ty, ordering, scope), ctx);
        }
        if ordering.valid_for_store() {
            b.add(AtomicStoreOp::new(ctx, x, r, ordering, scope), ctx);
        }
        if ordering != Relaxed {
            b.add(FenceOp::new(ctx, ordering, scope), ctx);
        }
    }
    for &kind in RmwKind::ALL {
        b.add(
            AtomicRmwOp::new(ctx, kind, p, v, SeqCst, SyncScope::Block),
            ctx,
        );
        b.add(
            AtomicRmwOp::new(ctx, kind, q, w, Relaxed, SyncScope::System),
            ctx,
        );
    }
    b.add(
        AtomicRmwOp::new(ctx, RmwKind::Add, r, x, AcqRel, SyncScope::Device),
        ctx,
    );
    b.add(
        AtomicCmpxchgOp::new(ctx, q, w, w, (Release, Acquire), SyncScope::Device),
        ctx,
    );
    b.add(FenceOp::new(ctx, SeqCst, SyncScope::Thread), ctx);
    b.add(ReturnOp::new(ctx, None), ctx);
    verify(ctx, module.get_operation());
    insta::assert_snapshot!(print(ctx, module.get_operation()));
    assert_roundtrip(ctx, module.get_operation());
}

#[test]
fn unused_atomics_are_kept_and_their_slots_stay_in_memory() {
    let ctx = &mut context();
    let module = module(ctx);
    let u32_ty = ui(ctx, 32);
    let f = func(ctx, module, "f", vec![u32_ty], vec![u32_ty]);
    let entry = f.entry_block(ctx).unwrap();
    let x = entry.deref(ctx).get_argument(0);
    let mut b = Builder::at_end(entry);
    let slot = b.add(AllocaOp::new(ctx, u32_ty), ctx).result(ctx);
    b.add(StoreOp::new(ctx, x, slot), ctx);
    let ordering = AtomicOrdering::Relaxed;
    b.add(
        AtomicRmwOp::new(ctx, RmwKind::Add, slot, x, ordering, SyncScope::Device),
        ctx,
    );
    b.add(
        AtomicLoadOp::new(ctx, slot, u32_ty, ordering, SyncScope::Device),
        ctx,
    );
    let value = b.add(LoadOp::new(ctx, slot), ctx).result(ctx);
    b.add(ReturnOp::new(ctx, Some(value)), ctx);
    verify(ctx, module.get_operation());

    mem2reg(module.get_operation(), ctx, &mut AnalysisManager::default()).expect("mem2reg");
    pliron::opts::dce::dce(module.get_operation(), ctx).expect("dce succeeds");
    verify(ctx, module.get_operation());
    let text = print(ctx, module.get_operation());
    for op in [
        "mir.alloca",
        "mir.atomic_rmw",
        "mir.atomic_load",
        "mir.load",
    ] {
        assert!(text.contains(op), "{op} removed:\n{text}");
    }
}

#[test]
fn atomics_check_orderings_scopes_and_types() {
    let errors: Vec<String> = [
        "v = mir.atomic_load release device p : builtin.integer ui32",
        "mir.atomic_store acq_rel device x, p",
        "v = mir.atomic_rmw add relaxed thread p, x : builtin.integer ui32",
        "v = mir.atomic_rmw max relaxed device f, y : builtin.fp32",
        "v, ok = mir.atomic_cmpxchg seq_cst release device p, x, x : builtin.integer ui32, builtin.integer i1",
        "v, ok = mir.atomic_cmpxchg seq_cst relaxed device f, y, y : builtin.fp32, builtin.integer i1",
        "mir.fence relaxed block",
        "v = mir.atomic_load relaxed device w : builtin.integer ui128",
    ]
    .iter()
    .map(|body| {
        let (ctx, op) = parse_unverified(&format!(
            "builtin.module @m {{
              ^m():
                mir.func @f: builtin.function <(mir.ptr <builtin.integer ui32, 0>, builtin.integer ui32, mir.ptr <builtin.fp32, 0>, builtin.fp32, mir.ptr <builtin.integer ui128, 0>) -> ()> {{
                  ^entry(p: mir.ptr <builtin.integer ui32, 0>, x: builtin.integer ui32, f: mir.ptr <builtin.fp32, 0>, y: builtin.fp32, w: mir.ptr <builtin.integer ui128, 0>):
                    {body};
                    mir.return
                }}
            }}"
        ));
        verify_error(&ctx, op).lines().last().unwrap().to_string()
    })
    .collect();
    insta::assert_snapshot!(errors.join("\n"));
}
