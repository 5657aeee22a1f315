//! Generic kernels, closures and `#[cfg]`-gated kernels, end to end on the CPU device
//! (`tests/fixtures/generic_kernels`): kernels gated by a cargo feature build and run with the
//! feature on and off, a generic kernel of another crate (`tests/fixtures/generic_lib`, which
//! never launches it) instantiated and launched from the fixture, a crate that instantiates
//! none of its generic kernels still links and loads its module, a kernel refused under a feature is refused only with it, and launches
//! whose closures or generic arguments hold host addresses fail to build, each error naming
//! the capture or the parameter.

use std::process::{Command, Output};

mod common;

use common::manifest;

fn cargo_oxide(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
        .args(args)
        .arg("--manifest-path")
        .arg(manifest("generic_kernels"))
        .env_remove("CUDA_OXIDE_TARGET")
        .output()
        .expect("cargo-oxide runs")
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn feature_gated_kernels_build_and_run_with_the_feature_on_and_off() {
    let off = cargo_oxide(&["run", "--cpu"]);
    assert!(off.status.success(), "{}", text(&off));
    // fill 20, then the library's `scale::<u32>` by 3, instantiated (and compiled) here.
    assert!(
        text(&off).contains("result: [60, 60, 60, 60]"),
        "{}",
        text(&off)
    );
    let on = cargo_oxide(&["run", "--cpu", "--features", "extra"]);
    assert!(on.status.success(), "{}", text(&on));
    // fill 20, the gated `add_one` and the `cfg_attr` kernel `double`, then `scale` by 3.
    assert!(
        text(&on).contains("result: [126, 126, 126, 126]"),
        "{}",
        text(&on)
    );
}

#[test]
fn a_crate_that_launches_none_of_its_generic_kernels_links_and_loads() {
    let out = cargo_oxide(&["run", "--cpu", "--features", "load_only"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("loaded, nothing launched"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_gated_kernel_is_refused_only_where_it_exists() {
    let out = cargo_oxide(&["build", "--features", "refused_parameter"]);
    let text = text(&out);
    assert!(!out.status.success(), "{text}");
    let source = common::read(&common::repo().join("tests/fixtures/generic_kernels/src/main.rs"));
    let line = 1 + source
        .lines()
        .position(|l| l.contains("pub fn count("))
        .expect("the refused kernel in the fixture");
    assert!(
        text.contains("a kernel parameter that is a mutable reference must be a slice")
            && text.contains(&format!("src/main.rs:{line}:")),
        "{text}"
    );
}

#[test]
fn host_addresses_in_closures_and_generic_arguments_are_refused_by_name() {
    let out = cargo_oxide(&["build", "--features", "host_addresses"]);
    let text = text(&out);
    assert!(!out.status.success(), "{text}");
    for expected in [
        "captures `label` of type `&str`, which cannot go to the GPU",
        "captures `greeting` of type `&String`, which cannot go to the GPU",
        "kernel `map::<fn(u32) -> u32>` takes `f` of type `fn(u32) -> u32` by value",
        "kernel `size_of::<&str>` takes `value` of type `&str` by value",
        "a reference holds a host address",
        "a function pointer is the address of host code",
    ] {
        assert!(text.contains(expected), "missing `{expected}` in:\n{text}");
    }
}
