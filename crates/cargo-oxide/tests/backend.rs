//! End-to-end tests of the codegen backend through `cargo oxide build`, on the crates in
//! `tests/fixtures/`: which functions are collected and under which export names, the crate
//! rules, and that crates without kernels are left alone.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn fixture(name: &str) -> PathBuf {
    repo().join("tests/fixtures").join(name).join("Cargo.toml")
}

fn oxide(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"));
    cmd.args(args);
    for var in [
        "CUDA_OXIDE_VERBOSE",
        "CUDA_OXIDE_DUMP_MIR",
        "CUDA_OXIDE_DUMP_LLVM",
        "CUDA_OXIDE_SHOW_RUSTC_MIR",
        "CUDA_OXIDE_PTX_DIR",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(envs.iter().copied());
    cmd.output().expect("cargo-oxide runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn assert_no_compiler_crash(text: &str) {
    for sign in ["panicked", "internal compiler error", "RUST_BACKTRACE"] {
        assert!(!text.contains(sign), "the compiler crashed:\n{text}");
    }
}

/// The verbose listing line of the function with this export name.
fn listing_line<'a>(text: &'a str, role: &str, export_name: &str) -> &'a str {
    text.lines()
        .find(|line| {
            let mut words = line.split_whitespace().skip(1);
            words.next() == Some(role) && words.next() == Some(export_name)
        })
        .unwrap_or_else(|| panic!("no `{role} {export_name}` in the listing:\n{text}"))
}

#[test]
fn verbose_build_lists_kernels_and_every_collected_device_function() {
    let manifest = fixture("collect_demo");
    let out = oxide(
        &["build", "--manifest-path", manifest.to_str().unwrap()],
        &[("CUDA_OXIDE_VERBOSE", "1")],
    );
    let text = stderr(&out);
    assert_no_compiler_crash(&text);

    assert!(
        text.contains("crate `collect_demo`: 4 kernel(s)"),
        "kernel count:\n{text}"
    );
    for kernel in ["square_scaled", "clamp_all", "count_up", "indirect"] {
        let line = listing_line(&text, "kernel", kernel);
        assert!(line.contains("from `collect_demo`"), "{line}");
    }
    // Helpers of the kernel's crate, found without any attribute.
    assert!(listing_line(&text, "device", "collect_demo__square").contains("collect_demo::square"));
    assert!(
        listing_line(&text, "device", "collect_demo__bits__add_one")
            .contains("collect_demo::bits::add_one")
    );
    // A #[device] helper of a dependency: its reserved prefix is gone from the export name.
    assert!(listing_line(&text, "device", "collect_dep__scale").contains("from `collect_dep`"));
    // cuda_device code that is not an intrinsic is compiled like user code.
    assert!(
        listing_line(&text, "device", "cuda_device__thread__index_1d")
            .contains("from `cuda_device`")
    );
    // Generic helpers from the dependency, instantiated by the kernels, under mangled names.
    let generic = |path: &str| {
        text.lines()
            .find(|l| l.contains("device") && l.trim_end().ends_with(path))
            .unwrap_or_else(|| panic!("no instance `{path}` in the listing:\n{text}"))
            .to_owned()
    };
    assert!(generic("collect_dep::clamp_to::<i32>").contains("from `collect_dep`"));
    assert!(generic("collect_dep::sum_of::<u32>").contains("from `collect_dep`"));
    assert!(generic("cuda_device::disjoint_slice::DisjointSlice::<f32>::get_mut").contains("_R"));
    // Functions reached only by address: a reified item, a pointer in a static, a vtable entry.
    assert!(listing_line(&text, "device", "collect_demo__halve").contains("collect_demo::halve"));
    assert!(listing_line(&text, "device", "collect_demo__triple").contains("collect_demo::triple"));
    assert!(generic("<collect_demo::By as collect_demo::Step>::step").contains("_R"));
    // Functions of `core` that the kernels reach.
    assert!(generic("core::num::<impl u32>::wrapping_add").contains("from `core`"));
    // Intrinsic stubs are never collected: they become instructions.
    assert!(
        !text.contains("threadIdx_x"),
        "an intrinsic stub was collected:\n{text}"
    );
    assert!(
        !text.contains("blockIdx_x"),
        "an intrinsic stub was collected:\n{text}"
    );
    // The dependency's own build checks its device code, but generates nothing.
    assert!(
        text.contains("crate `collect_dep`: 0 kernel(s), 1 device function(s)"),
        "{text}"
    );
    assert!(text.contains("stage collect"), "{text}");

    // Without the variable the same (unchanged) crate builds quietly: the backend declares
    // its variables as inputs, so cargo does not replay the verbose output.
    let quiet = oxide(
        &["build", "--manifest-path", manifest.to_str().unwrap()],
        &[],
    );
    let quiet_text = stderr(&quiet);
    assert!(quiet.status.success(), "{quiet_text}");
    assert!(
        !quiet_text.contains("cuda-oxide:"),
        "verbose output without CUDA_OXIDE_VERBOSE:\n{quiet_text}"
    );
}

/// The cubin embedded beside the PTX: `ptxas` runs at build time; without a usable one the
/// build warns and embeds only the PTX (which still loads, compiled by the driver).
#[test]
fn the_cubin_is_built_with_ptxas_or_the_build_warns() {
    let manifest = fixture("golden_perf");
    let manifest = manifest.to_str().unwrap();
    let missing = oxide(
        &["build", "--manifest-path", manifest],
        &[
            ("PTXAS", "/nonexistent/cuda-oxide-test/ptxas"),
            ("CUDA_OXIDE_VERBOSE", "1"),
        ],
    );
    let text = stderr(&missing);
    assert_no_compiler_crash(&text);
    assert!(missing.status.success(), "{text}");
    assert!(
        text.contains("cuda-oxide embeds only the PTX of crate `golden_perf`, no cubin for sm_90")
            && text.contains("/nonexistent/cuda-oxide-test/ptxas"),
        "{text}"
    );
    if gpu_toolchain::find_ptxas().is_some_and(|p| p.is_file()) {
        let built = oxide(
            &["build", "--manifest-path", manifest],
            &[("CUDA_OXIDE_VERBOSE", "1")],
        );
        let text = stderr(&built);
        assert!(built.status.success(), "{text}");
        assert!(text.contains("stage ptxas"), "{text}");
        assert!(!text.contains("embeds only the PTX"), "{text}");
    }
}

#[test]
fn kernel_reaching_std_is_a_build_error_with_the_call_chain() {
    let manifest = fixture("forbidden_std");
    let out = oxide(
        &["build", "--manifest-path", manifest.to_str().unwrap()],
        &[],
    );
    let text = stderr(&out);
    assert!(!out.status.success(), "the build must fail:\n{text}");
    assert_no_compiler_crash(&text);
    assert!(
        text.contains(
            "error: cuda-oxide: forbidden crate in device code: `std::io::stdio::_print` is in crate `std`"
        ),
        "{text}"
    );
    assert!(
        text.contains("forbidden_std/src/main.rs:6:5"),
        "no source location:\n{text}"
    );
    let chain = text
        .split("device code reached it through:")
        .nth(1)
        .expect("a call chain");
    let kernel = chain
        .find("`forbidden_std::chatty`")
        .expect("kernel in chain");
    let helper = chain
        .find("`forbidden_std::report`")
        .expect("helper in chain");
    let print = chain
        .find("`std::io::stdio::_print` (std)")
        .expect("callee in chain");
    assert!(
        kernel < helper && helper < print,
        "chain out of order:\n{chain}"
    );
    assert!(
        text.contains("only these crates are allowed in device code"),
        "{text}"
    );
}

#[test]
fn crates_without_kernels_build_quietly_and_behave_the_same() {
    let manifest = fixture("no_kernels");
    let out = oxide(
        &["build", "--manifest-path", manifest.to_str().unwrap()],
        &[],
    );
    let text = stderr(&out);
    assert!(out.status.success(), "{text}");
    assert!(
        !text.contains("cuda-oxide:"),
        "a crate without kernels printed device output:\n{text}"
    );

    let with_backend = repo().join("tests/fixtures/target/oxide/debug/no_kernels");
    let plain_dir = repo().join("tests/fixtures/target/plain");
    let plain = Command::new("cargo")
        .args(["build", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", &plain_dir)
        .env_remove("RUSTFLAGS")
        .status()
        .expect("cargo runs");
    assert!(plain.success());
    let without_backend = plain_dir.join("debug/no_kernels");

    let run = |binary: &Path| {
        let out = Command::new(binary)
            .args(["alpha", "beta gamma"])
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", binary.display()));
        assert!(out.status.success());
        out.stdout
    };
    let expected = run(&without_backend);
    assert!(
        expected.len() > 100,
        "the program printed too little to compare"
    );
    assert_eq!(run(&with_backend), expected);
}

#[test]
fn unknown_example_lists_the_available_ones() {
    let out = oxide(&["build", "no-such-example"], &[]);
    assert!(!out.status.success());
    let text = stderr(&out);
    assert!(
        text.contains("no example named `no-such-example`"),
        "{text}"
    );
    assert_no_compiler_crash(&text);
}

#[test]
fn missing_manifest_is_reported() {
    let out = oxide(
        &["build", "--manifest-path", "/nonexistent/Cargo.toml"],
        &[],
    );
    assert!(!out.status.success());
    assert!(stderr(&out).contains("/nonexistent/Cargo.toml` does not exist"));
}
