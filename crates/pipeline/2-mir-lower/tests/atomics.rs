//! Atomics: each `mir.atomic_*` op in kernels, lowered, exported (snapshot of the `.ll`),
//! compiled to PTX and assembled; the PTX must hold the instruction the PTX memory model asks
//! for each ordering and scope. (LLVM infers that a kernel's pointer parameters point to global
//! memory: its own instructions carry `.global`, so relaxed read-modify-writes at block and
//! device scope, which are LLVM's `atomicrmw`, do too; the inline `atom`s of the other
//! orderings and of the system scope use generic addresses.)

mod common;

use common::*;
use dialect_mir::ops::*;
use pliron::{builtin::ops::ModuleOp, context::Context, op::Op, r#type::TypeHandle};

/// One kernel `name(p: *mut T, v: T, out: *mut T)` doing `*out = <access>(p, v)`.
struct Case {
    name: &'static str,
    ty: fn(&Context) -> TypeHandle,
    access: Access,
    /// What the PTX of the kernel must contain.
    ptx: &'static [&'static str],
}

enum Access {
    Load(AtomicOrdering, SyncScope),
    Store(AtomicOrdering, SyncScope),
    Rmw(RmwKind, AtomicOrdering, SyncScope),
    Cmpxchg(AtomicOrdering, AtomicOrdering, SyncScope),
    Fence(AtomicOrdering, SyncScope),
}

fn u8t(ctx: &Context) -> TypeHandle {
    ui(ctx, 8)
}
fn u16t(ctx: &Context) -> TypeHandle {
    ui(ctx, 16)
}
fn u32t(ctx: &Context) -> TypeHandle {
    ui(ctx, 32)
}
fn i32t(ctx: &Context) -> TypeHandle {
    si(ctx, 32)
}
fn u64t(ctx: &Context) -> TypeHandle {
    ui(ctx, 64)
}
fn i64t(ctx: &Context) -> TypeHandle {
    si(ctx, 64)
}

use AtomicOrdering::*;
use RmwKind::*;
use SyncScope::{Block, Device, System, Thread};

const CASES: &[Case] = &[
    Case {
        name: "load_relaxed_gpu",
        ty: u32t,
        access: Access::Load(Relaxed, Device),
        ptx: &["ld.relaxed.gpu.global.b32"],
    },
    Case {
        name: "load_acquire_cta_u64",
        ty: u64t,
        access: Access::Load(Acquire, Block),
        ptx: &["ld.acquire.cta.global.b64"],
    },
    Case {
        name: "load_seqcst_sys_f32",
        ty: f32t,
        access: Access::Load(SeqCst, System),
        ptx: &["fence.sc.sys;", "ld.acquire.sys.global.b32"],
    },
    Case {
        name: "load_acquire_u8",
        ty: u8t,
        access: Access::Load(Acquire, Device),
        ptx: &["ld.acquire.gpu.global.b8"],
    },
    Case {
        name: "store_release_gpu",
        ty: i32t,
        access: Access::Store(Release, Device),
        ptx: &["st.release.gpu.global.b32"],
    },
    Case {
        name: "store_seqcst_cta_f64",
        ty: f64t,
        access: Access::Store(SeqCst, Block),
        ptx: &["fence.sc.cta;", "st.release.cta.global.b64"],
    },
    Case {
        name: "add_relaxed_gpu",
        ty: u32t,
        access: Access::Rmw(Add, Relaxed, Device),
        ptx: &["atom.global.add.u32"],
    },
    Case {
        name: "add_acqrel_sys_u64",
        ty: u64t,
        access: Access::Rmw(Add, AcqRel, System),
        ptx: &["atom.acq_rel.sys.add.u64"],
    },
    Case {
        name: "sub_release_cta",
        ty: i32t,
        access: Access::Rmw(Sub, Release, Block),
        ptx: &["neg.s32", "atom.release.cta.add.u32"],
    },
    Case {
        name: "fadd_seqcst_gpu_f32",
        ty: f32t,
        access: Access::Rmw(Add, SeqCst, Device),
        ptx: &["fence.sc.gpu;", "atom.acquire.gpu.add.f32"],
    },
    Case {
        name: "fadd_relaxed_gpu_f64",
        ty: f64t,
        access: Access::Rmw(Add, Relaxed, Device),
        ptx: &["atom.global.add.f64"],
    },
    Case {
        name: "fsub_relaxed_cta_f32",
        ty: f32t,
        access: Access::Rmw(Sub, Relaxed, Block),
        ptx: &["neg.f32", "atom.global.add.f32"],
    },
    Case {
        name: "xchg_acquire_gpu_i64",
        ty: i64t,
        access: Access::Rmw(Xchg, Acquire, Device),
        ptx: &["atom.acquire.gpu.exch.b64"],
    },
    Case {
        name: "and_relaxed_gpu",
        ty: u32t,
        access: Access::Rmw(And, Relaxed, Device),
        ptx: &["atom.global.and.b32"],
    },
    Case {
        name: "or_release_sys_u64",
        ty: u64t,
        access: Access::Rmw(Or, Release, System),
        ptx: &["atom.release.sys.or.b64"],
    },
    Case {
        name: "xor_acqrel_gpu",
        ty: u32t,
        access: Access::Rmw(Xor, AcqRel, Device),
        ptx: &["atom.acq_rel.gpu.xor.b32"],
    },
    Case {
        name: "max_signed_gpu",
        ty: i32t,
        access: Access::Rmw(Max, Relaxed, Device),
        ptx: &["atom.global.max.s32"],
    },
    Case {
        name: "min_unsigned_gpu_u64",
        ty: u64t,
        access: Access::Rmw(Min, Relaxed, Device),
        ptx: &["atom.global.min.u64"],
    },
    Case {
        name: "nand_release_cta",
        ty: u32t,
        access: Access::Rmw(Nand, Release, Block),
        ptx: &["atom.release.cta.global.cas.b32"],
    },
    Case {
        name: "or_u8_acqrel_gpu",
        ty: u8t,
        access: Access::Rmw(Or, AcqRel, Device),
        ptx: &["atom.acq_rel.gpu.or.b32"],
    },
    Case {
        name: "and_u8_relaxed_sys",
        ty: u8t,
        access: Access::Rmw(And, Relaxed, System),
        ptx: &["atom.relaxed.sys.and.b32"],
    },
    Case {
        name: "xchg_u8_seqcst_gpu",
        ty: u8t,
        access: Access::Rmw(Xchg, SeqCst, Device),
        ptx: &["fence.sc.gpu;", "atom.acquire.gpu.global.cas.b32"],
    },
    Case {
        name: "add_u16_relaxed_cta",
        ty: u16t,
        access: Access::Rmw(Add, Relaxed, Block),
        ptx: &["atom.relaxed.cta.global.cas.b32"],
    },
    Case {
        name: "cas_acqrel_acquire_gpu",
        ty: u32t,
        access: Access::Cmpxchg(AcqRel, Acquire, Device),
        ptx: &["atom.acq_rel.gpu.global.cas.b32"],
    },
    Case {
        name: "cas_seqcst_sys_u64",
        ty: u64t,
        access: Access::Cmpxchg(SeqCst, SeqCst, System),
        ptx: &["fence.sc.sys;", "atom.acquire.sys.global.cas.b64"],
    },
    Case {
        name: "cas_relaxed_u8",
        ty: u8t,
        access: Access::Cmpxchg(Relaxed, Relaxed, Device),
        ptx: &["atom.relaxed.gpu.global.cas.b32"],
    },
    Case {
        name: "fence_seqcst_gpu",
        ty: u32t,
        access: Access::Fence(SeqCst, Device),
        ptx: &["fence.sc.gpu;"],
    },
    Case {
        name: "fence_acquire_cta",
        ty: u32t,
        access: Access::Fence(Acquire, Block),
        ptx: &["fence.acq_rel.cta;"],
    },
    Case {
        name: "compiler_fence",
        ty: u32t,
        access: Access::Fence(SeqCst, Thread),
        ptx: &[],
    },
];

/// Appends the kernel of `case` to `m`: `name(p: *mut T, v: T, w: T, out: *mut T, ok: *mut
/// bool)`, storing the access's result to `out` (and a compare-exchange's flag to `ok`).
fn add_kernel(ctx: &mut Context, m: ModuleOp, case: &Case) {
    let ty = (case.ty)(ctx);
    let p_ty = ptr(ctx, ty);
    let flag_ty = boolean(ctx);
    let ok_ty = ptr(ctx, flag_ty);
    let (_, entry, args) = func(
        ctx,
        m,
        case.name,
        &[
            ("p", p_ty),
            ("v", ty),
            ("w", ty),
            ("out", p_ty),
            ("ok", ok_ty),
        ],
        vec![],
        true,
    );
    let (p, v, w, out, ok) = (args[0], args[1], args[2], args[3], args[4]);
    let mut b = B::new(ctx, entry);
    let result = match case.access {
        Access::Load(o, s) => Some(b.val(|ctx| AtomicLoadOp::new(ctx, p, ty, o, s))),
        Access::Store(o, s) => {
            b.op(|ctx| AtomicStoreOp::new(ctx, v, p, o, s));
            None
        }
        Access::Rmw(k, o, s) => Some(b.val(|ctx| AtomicRmwOp::new(ctx, k, p, v, o, s))),
        Access::Cmpxchg(success, failure, s) => {
            let op = b.op(|ctx| AtomicCmpxchgOp::new(ctx, p, v, w, (success, failure), s));
            let (old, flag) = (op.old(b.ctx), op.success(b.ctx));
            b.op(|ctx| StoreOp::new(ctx, flag, ok));
            Some(old)
        }
        Access::Fence(o, s) => {
            b.op(|ctx| FenceOp::new(ctx, o, s));
            None
        }
    };
    if let Some(result) = result {
        b.op(|ctx| StoreOp::new(ctx, result, out));
    }
    b.op(|ctx| ReturnOp::new(ctx, None));
}

#[test]
fn atomics_become_the_ptx_of_their_ordering_and_scope() {
    let ctx = &mut context();
    let m = module(ctx);
    for case in CASES {
        add_kernel(ctx, m, case);
    }
    lower(ctx, m);
    let ll = export(ctx, m);
    insta::assert_snapshot!(ll);
    let names: Vec<&str> = CASES.iter().map(|c| c.name).collect();
    let ptx = check_ptx(&ll, &names);
    let mut failures = Vec::new();
    for case in CASES {
        let body = kernel_body(&ptx, case.name);
        for expected in case.ptx {
            if !body.contains(expected) {
                failures.push(format!("{}: no `{expected}` in\n{body}", case.name));
            }
        }
        if case.ptx.is_empty() && (body.contains("fence.") || body.contains("membar")) {
            failures.push(format!("{}: a compiler fence emitted\n{body}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The PTX of the entry `name`, up to the next entry.
fn kernel_body<'a>(ptx: &'a str, name: &str) -> &'a str {
    let start = ptx
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no entry {name}"));
    let rest = &ptx[start..];
    let end = rest[1..].find(".entry ").map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

#[test]
fn ill_formed_atomics_fail_to_verify() {
    let ctx = &mut context();
    let m = module(ctx);
    let ty = u32t(ctx);
    let p_ty = ptr(ctx, ty);
    let (_, entry, args) = func(ctx, m, "bad", &[("p", p_ty), ("v", ty)], vec![], true);
    let mut b = B::new(ctx, entry);
    let (p, v) = (args[0], args[1]);
    let load = b.op(|ctx| AtomicLoadOp::new(ctx, p, ty, Release, Device));
    let store = b.op(|ctx| AtomicStoreOp::new(ctx, v, p, Acquire, Device));
    let fence = b.op(|ctx| FenceOp::new(ctx, Relaxed, Device));
    let scoped = b.op(|ctx| AtomicRmwOp::new(ctx, Add, p, v, Relaxed, Thread));
    let f = f32t(b.ctx);
    let fp = ptr(b.ctx, f);
    let fptr = b.val(|ctx| PtrCastOp::new(ctx, p, fp));
    let x = b.val(|ctx| ConstantOp::new_f32(ctx, 1.0));
    let fxor = b.op(|ctx| AtomicRmwOp::new(ctx, Xor, fptr, x, Relaxed, Device));
    let errors: Vec<String> = [
        load.get_operation(),
        store.get_operation(),
        fence.get_operation(),
        scoped.get_operation(),
        fxor.get_operation(),
    ]
    .into_iter()
    .map(|op| {
        pliron::operation::verify_operation(op, ctx)
            .expect_err("must not verify")
            .to_string()
            .lines()
            .last()
            .unwrap()
            .to_string()
    })
    .collect();
    insta::assert_snapshot!(errors.join("\n"));
}

#[test]
fn atomics_on_shared_memory_use_the_shared_state_space() {
    let ctx = &mut context();
    let m = module(ctx);
    let ty = u32t(ctx);
    let p_ty = ptr(ctx, ty);
    let shared_ty = dialect_mir::types::PtrType::get(ctx, ty, 3).into();
    let (_, entry, args) = func(
        ctx,
        m,
        "shared",
        &[("p", p_ty), ("v", ty), ("out", p_ty)],
        vec![],
        true,
    );
    let (p, v, out) = (args[0], args[1], args[2]);
    let mut b = B::new(ctx, entry);
    let s = b.val(|ctx| PtrCastOp::new(ctx, p, shared_ty));
    let old = b.val(|ctx| AtomicRmwOp::new(ctx, Add, s, v, Relaxed, Block));
    let seen = b.val(|ctx| AtomicLoadOp::new(ctx, s, ty, Acquire, Block));
    let cas = b.op(|ctx| AtomicCmpxchgOp::new(ctx, s, seen, old, (AcqRel, Relaxed), Block));
    let prev = cas.old(b.ctx);
    b.op(|ctx| StoreOp::new(ctx, prev, out));
    b.op(|ctx| ReturnOp::new(ctx, None));
    lower(ctx, m);
    let ll = export(ctx, m);
    let ptx = check_ptx(&ll, &["shared"]);
    for expected in [
        "atom.shared.add.u32",
        "ld.acquire.cta.shared.b32",
        "atom.acq_rel.cta.shared.cas.b32",
    ] {
        assert!(ptx.contains(expected), "no `{expected}` in\n{ptx}");
    }
}
