//! `examples/x86_baseline` calls every SSE and SSE2 function of this toolchain's
//! `core::arch::x86_64` (the x86-64 baseline) in a kernel and compares each with the CPU on the
//! GPU. This checks that its list is complete: every public function of `core`'s SSE and SSE2
//! source files has a case there, but for the MXCSR functions, which are build errors.

use std::path::Path;
use std::process::Command;

/// The baseline's functions that device code cannot call: the MXCSR register's.
const WITHOUT_GPU_VERSION: &[&str] = &[
    "_mm_getcsr",
    "_mm_setcsr",
    "_MM_GET_EXCEPTION_MASK",
    "_MM_GET_EXCEPTION_STATE",
    "_MM_GET_FLUSH_ZERO_MODE",
    "_MM_GET_ROUNDING_MODE",
    "_MM_SET_EXCEPTION_MASK",
    "_MM_SET_EXCEPTION_STATE",
    "_MM_SET_FLUSH_ZERO_MODE",
    "_MM_SET_ROUNDING_MODE",
];

/// The public functions of `core::arch::x86_64`'s SSE and SSE2 files, from `rust-src`.
fn baseline_functions() -> Vec<String> {
    let out = Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc runs");
    let sysroot = String::from_utf8(out.stdout).unwrap();
    let dir =
        Path::new(sysroot.trim()).join("lib/rustlib/src/rust/library/stdarch/crates/core_arch/src");
    let mut names = Vec::new();
    for file in [
        "x86/sse.rs",
        "x86/sse2.rs",
        "x86_64/sse.rs",
        "x86_64/sse2.rs",
    ] {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{} (the `rust-src` component): {e}", path.display()));
        let text = &text[..text.find("#[cfg(test)]\nmod tests").unwrap_or(text.len())];
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("pub ") else {
                continue;
            };
            let rest = rest
                .trim_start_matches("const ")
                .trim_start_matches("unsafe ");
            let Some(rest) = rest.strip_prefix("fn ") else {
                continue;
            };
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if name.starts_with("_mm") || name.starts_with("_MM") {
                names.push(name);
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

#[test]
fn every_sse_and_sse2_function_has_a_case_in_the_example() {
    let cases_rs =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/x86_baseline/src/cases.rs");
    let cases = std::fs::read_to_string(&cases_rs).unwrap();
    // The cases follow `cases! { r;`, one `function => call,` a line.
    let start = cases.find("cases! { r;").expect("the list of cases");
    let listed: Vec<&str> = cases[start..]
        .lines()
        .skip(1)
        .filter_map(|line| line.trim_start().split_once(" => ").map(|(name, _)| name))
        .collect();
    let functions = baseline_functions();
    assert!(functions.len() > 300, "{} functions", functions.len());
    let missing: Vec<&String> = functions
        .iter()
        .filter(|f| !listed.contains(&f.as_str()) && !WITHOUT_GPU_VERSION.contains(&f.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "without a case in {}: {missing:?}",
        cases_rs.display()
    );
    let stale: Vec<&&str> = listed
        .iter()
        .filter(|name| !functions.iter().any(|f| f == *name))
        .collect();
    assert!(
        stale.is_empty(),
        "cases of functions `core` does not have: {stale:?}"
    );
    for excluded in WITHOUT_GPU_VERSION {
        assert!(
            functions.iter().any(|f| f == excluded),
            "{excluded} is gone from `core`"
        );
    }
}
