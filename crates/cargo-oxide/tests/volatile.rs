//! Volatile accesses stay volatile: the kernels of `tests/fixtures/volatile` read and write
//! through a `&[T]`, a `&mut [T]`, a `DisjointSlice`, a static, shared memory and a local, and
//! hide a value with `black_box`; in the PTX of a release and a dev build every one of those
//! accesses is a `ld.volatile` / `st.volatile` (never a non-coherent `ld.global.nc`, never a
//! plain local access that ptxas could merge). The release PTX's memory instructions are
//! checked in as a golden file.

use std::path::{Path, PathBuf};

mod common;

use common::{pipeline_stages, read};

fn stages(release: bool) -> &'static Path {
    static RELEASE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    static DEV: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let (cell, out, extra): (_, _, &[&str]) = if release {
        (&RELEASE, "volatile-release", &["--release"])
    } else {
        (&DEV, "volatile-dev", &[])
    };
    cell.get_or_init(|| {
        let mut args = vec!["--device-debug", "none"];
        args.extend_from_slice(extra);
        pipeline_stages("volatile", out, &args)
    })
}

/// The body of the PTX entry `kernel`.
fn entry(ptx: &str, kernel: &str) -> String {
    let start = ptx
        .find(&format!(".entry {kernel}("))
        .unwrap_or_else(|| panic!("no entry {kernel}:\n{ptx}"));
    let rest = &ptx[start..];
    let end = rest.find("\n}\n").unwrap_or(rest.len());
    rest[..end].to_string()
}

/// The loads and stores of `body` other than those of parameters.
fn accesses(body: &str) -> Vec<&str> {
    body.lines()
        .map(str::trim)
        .filter(|l| (l.starts_with("ld.") || l.starts_with("st.")) && !l.contains(".param"))
        .collect()
}

/// The volatile accesses each kernel makes in its source.
const KERNELS: &[(&str, usize)] = &[
    ("through_slices", 4),
    ("through_static_and_shared", 4),
    ("through_locals", 4),
];

fn check(release: bool) {
    let ptx = read(&stages(release).join("volatile.ptx"));
    for &(kernel, count) in KERNELS {
        let body = entry(&ptx, kernel);
        let volatile: Vec<&str> = accesses(&body)
            .into_iter()
            .filter(|l| l.contains(".volatile"))
            .collect();
        assert_eq!(
            volatile.len(),
            count,
            "{kernel} (release: {release}): {volatile:#?}\n{body}"
        );
        assert!(
            !body.contains("ld.volatile.global.nc") && !body.contains(".nc.volatile"),
            "{body}"
        );
    }
}

#[test]
fn release_build_keeps_every_volatile_access() {
    check(true);
    let ptx = read(&stages(true).join("volatile.ptx"));
    let golden: Vec<String> = KERNELS
        .iter()
        .map(|(kernel, _)| {
            let body = entry(&ptx, kernel);
            format!("{kernel}:\n  {}", accesses(&body).join("\n  "))
        })
        .collect();
    insta::assert_snapshot!("volatile.ptx.accesses", golden.join("\n"));
}

#[test]
fn dev_build_keeps_every_volatile_access() {
    check(false);
}
