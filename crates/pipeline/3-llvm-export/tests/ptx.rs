//! The exported text through the real toolchain: `opt`/`llc` from the pinned Rust toolchain's
//! llvm-tools, then `ptxas` when one is installed.

mod common;

use std::path::Path;

use common::*;
use gpu_toolchain::{ToolError, find_llvm_tools, find_ptxas, probe_llc};
use llvm_export::export_module;
use llvm_to_ptx::{PtxOptions, compile_to_ptx};
use pliron::{builtin::ops::ModuleOp, context::Context};
use ptx_tools::assemble_with_ptxas;

/// Export, compile to PTX for sm_90, check the entry points, and assemble with ptxas if present.
fn check_ptx(build: fn(&mut Context) -> ModuleOp, entries: &[&str]) {
    let ctx = &mut Context::new();
    let module = build(ctx);
    let ll = export_module(ctx, module).expect("export");
    let ptx = compile_to_ptx(&ll, "sm_90", &PtxOptions::default())
        .unwrap_or_else(|e| panic!("llc failed: {e}\n{ll}"));
    for entry in entries {
        assert!(
            ptx.contains(&format!(".visible .entry {entry}(")),
            "no entry {entry} in:\n{ptx}"
        );
    }
    let Some(ptxas) = find_ptxas() else {
        println!("note: ptxas not found, PTX not assembled");
        return;
    };
    if let Err(e) = assemble_with_ptxas(&ptxas, &ptx, "sm_90") {
        panic!("{e}\n{ptx}");
    }
}

#[test]
fn tid_kernel_to_ptx() {
    check_ptx(tid_kernel, &["store_tid"]);
}

#[test]
fn loop_to_ptx() {
    check_ptx(loop_kernel, &["sum_to"]);
}

#[test]
fn nested_joins_to_ptx() {
    check_ptx(nested_joins_kernel, &["nested"]);
}

#[test]
fn same_target_to_ptx() {
    check_ptx(same_target_kernel, &["same_values", "different_values"]);
}

#[test]
fn switch_to_ptx() {
    check_ptx(switch_kernel, &["pick"]);
}

#[test]
fn features_to_ptx() {
    check_ptx(features_kernel, &["features"]);
}

#[test]
fn without_opt() {
    let ctx = &mut Context::new();
    let module = loop_kernel(ctx);
    let ll = export_module(ctx, module).unwrap();
    let options = PtxOptions {
        run_opt: false,
        opt_level: 0,
        ..PtxOptions::default()
    };
    let ptx = compile_to_ptx(&ll, "sm_80", &options).unwrap();
    assert!(ptx.contains(".target sm_80"));
    assert!(ptx.contains(".visible .entry sum_to("));
}

#[test]
fn toolchain_tools_are_found() {
    let tools = find_llvm_tools(None).expect("llvm-tools of the pinned toolchain");
    assert!(tools.version.major >= 21, "{tools:?}");
    assert!(
        tools.opt.is_some(),
        "opt sits beside the toolchain's llc: {tools:?}"
    );
    assert!(
        tools.llvm_link.is_some(),
        "llvm-link sits beside the toolchain's llc: {tools:?}"
    );
}

#[test]
fn old_llc_is_refused() {
    let debian = Path::new("/usr/bin/llc");
    if !debian.is_file() {
        println!("note: no /usr/bin/llc here");
        return;
    }
    match probe_llc(debian) {
        Err(e @ ToolError::TooOld { .. }) => {
            let msg = e.to_string();
            assert!(msg.starts_with("/usr/bin/llc is LLVM "), "{msg}");
            assert!(msg.ends_with("cuda-oxide needs LLVM 21 or newer"), "{msg}");
        }
        Ok(v) if v.major >= 21 => {}
        other => panic!("unexpected: {other:?}"),
    }
}

#[test]
fn llc_errors_carry_stderr() {
    let err = compile_to_ptx("this is not llvm ir", "sm_90", &PtxOptions::default()).unwrap_err();
    match &err {
        ToolError::ToolFailed { stderr, .. } => assert!(stderr.contains("error"), "{stderr}"),
        other => panic!("unexpected: {other:?}"),
    }
}

#[test]
fn bad_target_is_refused() {
    let err = compile_to_ptx("", "compute_90", &PtxOptions::default()).unwrap_err();
    assert!(matches!(err, ToolError::InvalidTarget(t) if t == "compute_90"));
}

#[test]
fn constants_to_ptx() {
    check_ptx(constants_module, &["read_all"]);
}

#[test]
fn atomics_to_ptx() {
    check_ptx(atomics_kernel, &["atomics"]);
}

#[test]
fn ptxas_rejects_broken_ptx() {
    let Some(ptxas) = find_ptxas() else {
        println!("note: ptxas not found, nothing to check");
        return;
    };
    let broken = ".version 7.8\n.target sm_90\n.address_size 64\n.visible .entry k() { bogus; }\n";
    assert!(matches!(
        assemble_with_ptxas(&ptxas, broken, "sm_90"),
        Err(ToolError::ToolFailed { .. })
    ));
}
