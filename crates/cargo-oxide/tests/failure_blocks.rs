//! Where failed checks branch with panic messages on: a kernel with few checks has a failure
//! block per check (a call of the panic function each, laid out of line by LLVM); a function
//! with more than 256 checks has one failure block per panic function, which its checks
//! branch to with the call's arguments (issue 31: thousands of failure blocks were thousands
//! of loop exits, and LLVM's loop passes took minutes on a generated function).

mod common;

use common::{pipeline_stages, read};

/// The body of the LLVM function whose name contains `name`.
fn function<'a>(ll: &'a str, name: &str) -> &'a str {
    let start = ll
        .lines()
        .find(|l| l.starts_with("define") && l.contains(name))
        .and_then(|l| ll.find(l))
        .unwrap_or_else(|| panic!("no function {name}:\n{ll}"));
    &ll[start..start + ll[start..].find("\n}\n").expect("its body ends")]
}

#[test]
fn many_checks_share_a_failure_block_per_panic_function() {
    let out = pipeline_stages(
        "failure_blocks",
        "failure-blocks-stages",
        &["--device-debug", "none"],
    );
    let ll = read(&out.join("failure_blocks.ll"));
    let calls = |body: &str, callee: &str| body.matches(&format!("@{callee}(")).count();
    let bounds = "cuda_device__shims__panicking__panic_bounds_check";
    let add = "cuda_device__shims__panicking__panic_const__panic_const_add_overflow";

    let few = function(&ll, "few_checks");
    assert_eq!(calls(few, bounds), 2, "{few}");
    assert_eq!(calls(few, add), 1, "{few}");

    let many = function(&ll, "many_checks");
    assert_eq!(calls(many, bounds), 1, "{many}");
    assert_eq!(calls(many, add), 1, "{many}");
    // Every check branches there, passing the index, the length and the location.
    let to_bounds = many
        .lines()
        .filter(|l| l.trim_start().starts_with("br i1"))
        .count();
    assert!(
        to_bounds >= 400,
        "{to_bounds} conditional branches:\n{many}"
    );
    let panic_block = many
        .split("\npanic")
        .find(|block| block.contains(bounds))
        .expect("the bounds-check failure block");
    assert!(panic_block.contains("phi i64"), "{panic_block}");
}
