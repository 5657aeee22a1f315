//! The CPU flavour (`Flavour::Cpu`): every GPU intrinsic becomes a call of the runtime function
//! named after its row, the exported module is the CPU image (`llvm_export::cpu_image`), and
//! the host's `opt` and `llc` compile it to an object that needs no symbol from the program.

mod common;

use common::*;
use dialect_nvvm::table;
use llvm_export::{CpuImage, ExportOptions, export_module_with};
use mir_lower::{CPU_RUNTIME_PREFIX, Flavour, lower_mir_to_llvm_for};
use pliron::{builtin::ops::ModuleOp, context::Context};

const HOST_TRIPLE: &str = "x86_64-unknown-linux-gnu";
const HOST_LAYOUT: &str =
    "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128";

/// A module with one kernel per intrinsic of the table, lowered for the CPU and exported as
/// its image.
fn every_intrinsic_on_the_cpu() -> String {
    intrinsics_on_the_cpu(table::ALL)
}

/// A module with one kernel per intrinsic of `intrinsics`, lowered for the CPU and exported as
/// its image.
fn intrinsics_on_the_cpu(intrinsics: &[&'static dialect_nvvm::Intrinsic]) -> String {
    let ctx = &mut context();
    let m = module(ctx);
    for &intrinsic in intrinsics {
        add_intrinsic_kernel(ctx, m, intrinsic);
    }
    lower_for_cpu(ctx, m)
}

fn lower_for_cpu(ctx: &mut Context, m: ModuleOp) -> String {
    verify(ctx, m);
    lower_mir_to_llvm_for(ctx, m, Flavour::Cpu).unwrap_or_else(|e| panic!("lowering: {e}"));
    verify(ctx, m);
    let options = ExportOptions {
        target_triple: HOST_TRIPLE.into(),
        data_layout: HOST_LAYOUT.into(),
        cpu: Some(CpuImage {
            table_symbol: "cuda_oxide_cpu_test".into(),
            race: false,
        }),
        ..Default::default()
    };
    export_module_with(ctx, m, &options).unwrap_or_else(|e| panic!("export: {e}"))
}

#[test]
fn every_intrinsic_calls_its_runtime_function_through_a_slot() {
    let ll = every_intrinsic_on_the_cpu();
    for intrinsic in table::ALL {
        let fence = matches!(intrinsic.lowering, dialect_nvvm::Lowering::Fence(_));
        let thunk = "define internal ";
        let name = format!("@{CPU_RUNTIME_PREFIX}{}(", intrinsic.name);
        assert_eq!(
            !fence,
            ll.lines()
                .any(|l| l.starts_with(thunk) && l.contains(&name)),
            "{}",
            intrinsic.name
        );
    }
    for gpu_only in ["llvm.nvvm.", "asm ", "ptx_kernel", "syncscope("] {
        assert!(!ll.contains(gpu_only), "`{gpu_only}` in the CPU flavour");
    }
    assert!(
        ll.contains("@cuda_oxide_cpu_test = hidden constant"),
        "{ll}"
    );
}

#[test]
fn the_image_glue_of_three_kernels() {
    // A special register, a barrier and a shuffle: what the runtime finds in the table (entries,
    // parameter sizes, "may wait" flags, slots) and the thunks that call through the slots.
    let ll = intrinsics_on_the_cpu(&[
        &table::read_ptx_sreg_tid_x,
        &table::barrier0,
        &table::shfl_sync_down_i32,
    ]);
    let glue = &ll[ll.find("@oxide.missing =").expect("the image's glue")..];
    insta::assert_snapshot!(glue);
}

#[test]
fn the_cpu_image_compiles_to_an_object_that_needs_nothing_from_the_program() {
    let ll = every_intrinsic_on_the_cpu();
    let object = llvm_to_ptx::compile_cpu_object(&ll, 3, None, 900, "cuda_oxide_cpu_test")
        .unwrap_or_else(|e| panic!("opt/llc for the host: {e}"));
    assert_eq!(&object[..4], b"\x7fELF");
    // Every symbol the object refers to is its own: an undefined one would fail to link.
    let undefined = undefined_symbols(&object);
    assert!(undefined.is_empty(), "undefined: {undefined:?}");
}

/// The names of the undefined symbols of an object file.
fn undefined_symbols(object: &[u8]) -> Vec<String> {
    use object::{Object as _, ObjectSymbol as _};
    let file = object::File::parse(object).unwrap_or_else(|e| panic!("not an object: {e}"));
    file.symbols()
        .filter(|symbol| symbol.is_undefined())
        .filter_map(|symbol| {
            symbol
                .name()
                .ok()
                .filter(|n| !n.is_empty())
                .map(String::from)
        })
        .collect()
}
