//! Every declared GPU intrinsic, enumerated from `dialect_nvvm::table::ALL`: lowered and
//! exported (one snapshot of the `.ll` of all of them), then each alone compiled by `llc` for
//! the oldest architecture and PTX ISA its declaration claims (`sm_90a` for those specific to
//! it), and assembled by `ptxas`, which checks the instructions against that `.target` and
//! `.version`.

mod common;

use common::*;
use dialect_nvvm::{Target, table};
use gpu_toolchain::find_ptxas;
use llvm_to_ptx::{PtxOptions, compile_to_ptx};
use ptx_tools::assemble_with_ptxas;

/// The oldest architecture this `ptxas` assembles for (CUDA 13 dropped the older ones); PTX
/// for an older `.target` is still checked against that `.target`.
const OLDEST_PTXAS_ARCH: u32 = 75;

#[test]
fn every_intrinsic_lowers_to_the_llvm_of_its_declaration() {
    let ctx = &mut context();
    let m = module(ctx);
    for intrinsic in table::ALL {
        add_intrinsic_kernel(ctx, m, intrinsic);
    }
    lower(ctx, m);
    let ll = export(ctx, m);
    for intrinsic in table::ALL {
        assert!(
            ll.contains(&format!("@{}(", intrinsic.name)),
            "{}:\n{ll}",
            intrinsic.name
        );
    }
    assert!(
        ll.contains("call void @llvm.nvvm.barrier0() convergent"),
        "{ll}"
    );
    assert!(
        ll.contains("asm \"match.all.sync.b32 _|$0, $1, -1;\", \"=b,r\"(i32 %a0) convergent memory(none) nounwind"),
        "{ll}"
    );
    assert!(ll.contains("fence syncscope(\"device\") seq_cst"), "{ll}");
    insta::assert_snapshot!(ll);
}

#[test]
fn every_intrinsic_assembles_on_its_oldest_target() {
    let ptxas = find_ptxas();
    if ptxas.is_none() {
        println!("note: ptxas not found, PTX not assembled");
    }
    let mut failures = Vec::new();
    for intrinsic in table::ALL {
        let ctx = &mut context();
        let m = module(ctx);
        add_intrinsic_kernel(ctx, m, intrinsic);
        lower(ctx, m);
        let ll = export(ctx, m);
        let target = Target::required_by(intrinsic);
        let options = PtxOptions {
            ptx_isa: Some(intrinsic.min_ptx.max(target.min_ptx_isa())),
            ..Default::default()
        };
        let ptx = match compile_to_ptx(&ll, &target.to_string(), &options) {
            Ok(ptx) => ptx,
            Err(err) => {
                failures.push(format!("{} on {target}: llc: {err}", intrinsic.name));
                continue;
            }
        };
        let arch = if intrinsic.min_sm < OLDEST_PTXAS_ARCH {
            format!("sm_{OLDEST_PTXAS_ARCH}")
        } else {
            target.to_string()
        };
        if let Some(ptxas) = &ptxas
            && let Err(err) = assemble_with_ptxas(ptxas, &ptx, &arch)
        {
            failures.push(format!(
                "{} on {target}: ptxas: {err}\n{ptx}",
                intrinsic.name
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn an_intrinsic_newer_than_the_declared_ptx_isa_is_rejected() {
    // The check above is only worth something if ptxas rejects a `.version` below what an
    // instruction needs: `elect.sync` is PTX ISA 8.0, sm_90's default is 7.8.
    let Some(ptxas) = find_ptxas() else {
        println!("note: ptxas not found");
        return;
    };
    let ctx = &mut context();
    let m = module(ctx);
    add_intrinsic_kernel(ctx, m, &table::elect_sync);
    lower(ctx, m);
    let ll = export(ctx, m);
    let ptx = compile_to_ptx(&ll, "sm_90", &PtxOptions::default()).unwrap();
    assert!(ptx.contains(".version 7.8"), "{ptx}");
    let err = assemble_with_ptxas(&ptxas, &ptx, "sm_90").expect_err("PTX 7.8 has no elect.sync");
    assert!(err.to_string().contains("elect"), "{err}");
}

#[test]
fn an_architecture_specific_intrinsic_is_rejected_on_the_plain_architecture() {
    // The `sm_90a` declarations are checked above on `sm_90a`; that check means something
    // only if ptxas refuses them on plain `sm_90`.
    let Some(ptxas) = find_ptxas() else {
        println!("note: ptxas not found");
        return;
    };
    assert!(table::wgmma_fence.arch_specific);
    let ctx = &mut context();
    let m = module(ctx);
    add_intrinsic_kernel(ctx, m, &table::wgmma_fence);
    lower(ctx, m);
    let ll = export(ctx, m);
    let options = PtxOptions {
        ptx_isa: Some(80),
        ..Default::default()
    };
    let ptx = compile_to_ptx(&ll, "sm_90", &options).unwrap();
    let err = assemble_with_ptxas(&ptxas, &ptx, "sm_90").expect_err("wgmma needs sm_90a");
    assert!(err.to_string().contains("wgmma"), "{err}");
    let ptx = compile_to_ptx(&ll, "sm_90a", &PtxOptions::default()).unwrap();
    assert!(
        ptx.contains(".version 8.0") && ptx.contains(".target sm_90a"),
        "{ptx}"
    );
    assemble_with_ptxas(&ptxas, &ptx, "sm_90a").unwrap_or_else(|e| panic!("{e}"));
}
