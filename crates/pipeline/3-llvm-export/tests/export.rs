//! Exact LLVM IR text of hand-built modules, and the errors of unsupported input.

mod common;

use common::*;
use llvm_export::{ExportError, export_module};
use pliron::context::Context;
use pliron_llvm::ops::{ReturnOp, VAArgOp};

fn export(build: fn(&mut Context) -> pliron::builtin::ops::ModuleOp) -> String {
    let ctx = &mut Context::new();
    let module = build(ctx);
    export_module(ctx, module).unwrap_or_else(|e| panic!("export failed: {e}"))
}

#[test]
fn tid_kernel_text() {
    insta::assert_snapshot!(export(tid_kernel));
}

#[test]
fn loop_back_edge_phis() {
    insta::assert_snapshot!(export(loop_kernel));
}

#[test]
fn nested_joins() {
    insta::assert_snapshot!(export(nested_joins_kernel));
}

#[test]
fn cond_br_both_edges_to_one_block() {
    insta::assert_snapshot!(export(same_target_kernel));
}

#[test]
fn switch_with_parallel_edges() {
    insta::assert_snapshot!(export(switch_kernel));
}

#[test]
fn globals_calls_intrinsics_asm() {
    insta::assert_snapshot!(export(features_kernel));
}

#[test]
fn unsupported_op_is_an_error() {
    let ctx = &mut Context::new();
    let mut b = Builder::new(ctx, "bad");
    let p0 = ptr(b.ctx, 0);
    let i32t = int(b.ctx, 32);
    let args = b.func("va", i32t, &[("list", p0)]);
    let va = VAArgOp::new(b.ctx, args[0], i32t);
    let v = b.val("v", va);
    let ret = ReturnOp::new(b.ctx, Some(v));
    b.push(ret);
    let module = b.module;
    let err = export_module(ctx, module).unwrap_err();
    assert!(
        matches!(&err, ExportError::InFunction { func, source }
            if func == "va" && matches!(&**source, ExportError::UnsupportedOp { op } if op == "llvm.va_arg")),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "in function `@va`: op `llvm.va_arg` is not supported by the LLVM IR exporter"
    );
}

#[test]
fn kernel_must_return_void() {
    let ctx = &mut Context::new();
    let mut b = Builder::new(ctx, "bad");
    let i32t = int(b.ctx, 32);
    let args = b.func("k", i32t, &[("a", i32t)]);
    nvptx_attrs::mark_kernel(b.ctx, &b.current_func());
    let ret = ReturnOp::new(b.ctx, Some(args[0]));
    b.push(ret);
    let module = b.module;
    let err = export_module(ctx, module).unwrap_err();
    assert_eq!(
        err.to_string(),
        "in function `@k`: kernel functions must return void"
    );
}

#[test]
fn unknown_callee_is_an_error() {
    use pliron::builtin::op_interfaces::CallOpCallable;
    use pliron_llvm::ops::CallOp;
    let ctx = &mut Context::new();
    let mut b = Builder::new(ctx, "bad");
    let void = void(b.ctx);
    b.kernel("k", &[]);
    let ty = fn_ty(b.ctx, void, vec![]);
    let call = CallOp::new(b.ctx, CallOpCallable::Direct(id("missing")), ty, vec![]);
    b.push(call);
    b.ret();
    let module = b.module;
    let err = export_module(ctx, module).unwrap_err();
    assert_eq!(
        err.to_string(),
        "in function `@k`: op `llvm.call` refers to `@missing`, which is not a function or global \
         of the module"
    );
}

#[test]
fn branch_to_entry_is_an_error() {
    let ctx = &mut Context::new();
    let mut b = Builder::new(ctx, "bad");
    b.kernel("spin", &[]);
    let entry = b.current_func().get_entry_block(b.ctx).unwrap();
    b.br(entry, vec![]);
    let module = b.module;
    let err = export_module(ctx, module).unwrap_err();
    assert_eq!(
        err.to_string(),
        "in function `@spin`: the entry block is the target of a branch"
    );
}

#[test]
fn constants_and_named_types() {
    insta::assert_snapshot!(export(constants_module));
}

#[test]
fn atomics_and_casts() {
    insta::assert_snapshot!(export(atomics_kernel));
}
