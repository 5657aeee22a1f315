//! Builds for several GPU architectures: `--arch sm_80,sm_86,sm_90` gives a PTX and a cubin
//! each (the cubins in one set in the host artifact, `reserved_oxide_symbols::cubin_set`), and
//! `cargo oxide build --release` without `--arch` builds for the release default list, leaving
//! out, with a warning, the architectures that lack what the kernels use. The `ptxas` of these
//! builds is a script that writes the architecture it was asked for as the "cubin", so the set's
//! contents can be checked without NVIDIA's tools.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

use common::{manifest, read, repo};

/// A `ptxas` whose output file holds `\x7fELF` and the `-arch=` it was given.
fn fake_ptxas(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let script = dir.join("ptxas");
    std::fs::write(
        &script,
        "#!/bin/sh\narch=\nout=\nwhile [ $# -gt 0 ]; do\n  case \"$1\" in\n    -arch=*) \
         arch=\"${1#-arch=}\" ;;\n    -o) out=\"$2\"; shift ;;\n  esac\n  shift\ndone\n\
         printf '\\177ELF %s' \"$arch\" > \"$out\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// `cargo oxide build <args>` of `fixture`, in a target directory of this test's own.
fn build(fixture: &str, args: &[&str]) -> (Output, PathBuf) {
    let dir = repo().join("tests/fixtures/target/architectures");
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
        .arg("build")
        .args(args)
        .arg("--manifest-path")
        .arg(manifest(fixture))
        .env("CUDA_OXIDE_TARGET_DIR", dir.join("build"))
        .env("PTXAS", fake_ptxas(&dir.join("tool")))
        .env_remove("CUDA_OXIDE_TARGET")
        .env_remove("CUDA_OXIDE_NO_CUBIN")
        .output()
        .expect("cargo-oxide runs");
    (out, dir.join("build"))
}

/// The `.target` line of a PTX file.
fn target_of(ptx: &Path) -> String {
    read(ptx)
        .lines()
        .find_map(|line| line.strip_prefix(".target "))
        .unwrap_or_else(|| panic!("no .target in {}", ptx.display()))
        .to_owned()
}

/// The `(architecture, image)` entries of the cubin set embedded in `artifact`.
fn embedded_set(artifact: &Path) -> Vec<(String, String)> {
    let bytes = std::fs::read(artifact).unwrap();
    let magic = reserved_oxide_symbols::cubin_set::MAGIC;
    (0..bytes.len().saturating_sub(magic.len()))
        .filter(|&at| bytes[at..].starts_with(magic))
        .find_map(|at| reserved_oxide_symbols::cubin_set::decode(&bytes[at..]))
        .unwrap_or_else(|| panic!("no cubin set in {}", artifact.display()))
        .into_iter()
        .map(|(arch, image)| (arch.to_owned(), String::from_utf8_lossy(image).into_owned()))
        .collect()
}

#[test]
fn a_build_for_several_architectures_has_a_ptx_and_a_cubin_each() {
    let (out, build) = build("launch_bounds", &["--arch", "sm_86,sm_80,sm_90"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let artifacts = build.join("debug");
    // The newest's PTX is the module's; the older ones' are beside it.
    assert_eq!(target_of(&artifacts.join("launch_bounds.ptx")), "sm_90");
    assert_eq!(
        target_of(&artifacts.join("launch_bounds.sm_80.ptx")),
        "sm_80"
    );
    assert_eq!(
        target_of(&artifacts.join("launch_bounds.sm_86.ptx")),
        "sm_86"
    );
    let set = embedded_set(&artifacts.join("liblaunch_bounds.rlib"));
    let expected: Vec<(String, String)> = ["sm_80", "sm_86", "sm_90"]
        .iter()
        .map(|arch| (arch.to_string(), format!("\x7fELF {arch}")))
        .collect();
    assert_eq!(set, expected);
}

#[test]
fn a_release_build_takes_the_default_list_and_leaves_out_what_cannot_run_the_kernels() {
    // `launch_shape` has kernels with `#[cluster_dims]`, which need sm_90.
    let (out, build) = build("launch_shape", &["--release"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "without sm_80, sm_86, sm_89 of the release default architectures \
             (sm_80,sm_86,sm_89,sm_90): `#[cluster_dims]` needs sm_90 or newer"
        ),
        "{stderr}"
    );
    let artifacts = build.join("release");
    assert_eq!(target_of(&artifacts.join("launch_shape.ptx")), "sm_90");
    assert!(!artifacts.join("launch_shape.sm_80.ptx").exists());
    // One architecture left: a lone cubin, no set.
    let rlib = std::fs::read(artifacts.join("liblaunch_shape.rlib")).unwrap();
    assert!(
        rlib.windows(10).any(|w| w == b"\x7fELF sm_90"),
        "the sm_90 cubin is embedded"
    );
}

#[test]
fn an_explicit_list_refuses_what_its_oldest_architecture_lacks() {
    let (out, _) = build("launch_shape", &["--arch", "sm_80,sm_90"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("thread-block clusters need sm_90 or newer, but this build targets sm_80"),
        "{stderr}"
    );
}
