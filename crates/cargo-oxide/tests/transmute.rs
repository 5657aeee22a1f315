//! A `transmute` goes through a stack slot aligned for both of its types: unoptimised code
//! (`--device-debug full`, where nothing raises the slot's alignment) loaded a `u128` from a
//! slot of `[u8; 16]`, aligned to 1, and the GPU stopped with `CUDA_ERROR_MISALIGNED_ADDRESS`
//! (issue 31; tests/fuzz-regressions/31001.rs runs it on the GPU).

mod common;

use common::{pipeline_stages, read};

#[test]
fn the_slot_has_the_alignment_of_the_more_aligned_type() {
    let out = pipeline_stages("transmute", "transmute-stages", &["--device-debug", "full"]);
    let ll = read(&out.join("transmute.ll"));
    let start = ll
        .find("define internal i128 @")
        .expect("the helper is in the .ll");
    let widen = &ll[start..start + ll[start..].find("\n}\n").expect("its body ends")];
    assert!(widen.contains("alloca i128, align 16"), "{widen}");
    assert!(!widen.contains("alloca [16 x i8], align 1"), "{widen}");
    // The value is stored through the slot at its own alignment and loaded at the target's.
    assert!(widen.contains("store [16 x i8]"), "{widen}");
    assert!(widen.contains("load i128, ptr"), "{widen}");
}
