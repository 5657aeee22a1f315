//! Float math in device code, end to end through `cargo oxide build`: every float method of
//! `std` compiles to PTX that `ptxas` accepts (the `math_methods` fixture has one kernel per
//! method and type), with libdevice linked in and nothing left to resolve; `a * b + c` is not
//! contracted into an `fma`; and a machine without libdevice gets it installed by `cargo oxide`,
//! or a message that says what to do.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn oxide_build(manifest: &Path, envs: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"));
    cmd.args(["build", "--manifest-path"]).arg(manifest);
    for var in [
        "CUDA_OXIDE_DUMP_MIR",
        "CUDA_OXIDE_DUMP_LLVM",
        "CUDA_OXIDE_TARGET",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("CUDA_OXIDE_VERBOSE", "1");
    cmd.envs(envs.iter().copied());
    cmd.output().expect("cargo-oxide runs")
}

/// The PTX of the `math_methods` fixture (built once for all tests) and the kernels its source
/// declares.
fn math_methods() -> &'static (String, Vec<String>) {
    static BUILT: std::sync::OnceLock<(String, Vec<String>)> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let fixture = repo().join("tests/fixtures/math_methods");
        let out = oxide_build(&fixture.join("Cargo.toml"), &[]);
        let text = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "the build failed:\n{text}");
        assert!(
            text.contains("stage link"),
            "libdevice was not linked:\n{text}"
        );
        // The C math functions `std` binds are foreign, but computed on the GPU: not host-only.
        assert!(
            !text.contains("exist only for the host"),
            "math functions taken for host-only ones:\n{text}"
        );
        let ptx_path = repo().join("tests/fixtures/target/oxide/debug/math_methods.ptx");
        let ptx = std::fs::read_to_string(&ptx_path)
            .unwrap_or_else(|e| panic!("{}: {e}", ptx_path.display()));
        let source = std::fs::read_to_string(fixture.join("src/lib.rs")).unwrap();
        let kernels = source
            .lines()
            .filter_map(|line| line.trim().split_once(": f"))
            .filter(|(_, ty)| ty.starts_with("32 =>") || ty.starts_with("64 =>"))
            .map(|(name, _)| name.to_owned())
            .collect();
        (ptx, kernels)
    })
}

/// The PTX of one entry, from its `.entry` line to its closing brace.
fn entry<'a>(ptx: &'a str, name: &str) -> &'a str {
    let start = ptx
        .find(&format!(".visible .entry {name}("))
        .unwrap_or_else(|| panic!("no entry {name}"));
    let end = ptx[start..].find("\n}\n").map_or(ptx.len(), |e| start + e);
    &ptx[start..end]
}

#[test]
fn every_float_method_compiles_to_ptx_that_ptxas_accepts() {
    let (ptx, kernels) = math_methods();
    assert!(kernels.len() > 100, "the fixture lists {kernels:?}");
    for kernel in kernels {
        entry(ptx, kernel);
    }
    // libdevice is inlined: no external function, no call left to one.
    assert!(!ptx.contains(".extern"), "{ptx}");
    for line in ptx.lines().filter(|line| line.contains("call")) {
        assert!(!line.contains("__nv_"), "{line}");
    }
    // The IEEE flavour of libdevice: no flush-to-zero fma, square roots correctly rounded.
    let instructions: Vec<&str> = ptx.lines().map(str::trim_start).collect();
    for flavour in ["fma.rn.ftz", "mul.rn.ftz", "add.rn.ftz", "sqrt.approx"] {
        assert!(
            !instructions.iter().any(|i| i.starts_with(flavour)),
            "{flavour} in the PTX"
        );
    }
    match gpu_toolchain::find_ptxas() {
        Some(ptxas) => {
            if let Err(e) = ptx_tools::assemble_with_ptxas(&ptxas, ptx, "sm_90") {
                panic!("ptxas rejects the PTX: {e}");
            }
        }
        None => println!("note: ptxas not found, PTX not assembled"),
    }
}

#[test]
fn multiply_then_add_is_not_contracted() {
    let (ptx, _) = math_methods();
    for (bits, suffix) in [("32", "f32"), ("64", "f64")] {
        // `.rn` on the multiply and the add keeps ptxas from fusing them.
        let body = entry(ptx, &format!("mul_then_add_{suffix}"));
        assert!(body.contains(&format!("mul.rn.f{bits}")), "{body}");
        assert!(body.contains(&format!("add.rn.f{bits}")), "{body}");
        assert!(!body.contains("fma"), "{body}");
        // `mul_add` is the one that fuses.
        let body = entry(ptx, &format!("mul_add_{suffix}"));
        assert!(body.contains(&format!("fma.rn.f{bits}")), "{body}");
    }
}

/// A crate under `root/name` whose kernel stores `expression` (of `x: f32`, an `f32`), with the
/// crate attributes `attributes`; written again each time, so that it is rebuilt.
fn write_kernel_crate(root: &Path, name: &str, attributes: &str, expression: &str) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let cuda_device = repo().join("crates/cuda-device").canonicalize().unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [dependencies]\ncuda-device = {{ path = {cuda_device:?} }}\n\n[workspace]\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        format!(
            "{attributes}\nuse cuda_device::{{DisjointSlice, kernel, thread}};\n\n\
             #[kernel]\npub fn apply(input: &[f32], mut out: DisjointSlice<f32>) {{\n    \
             let i = thread::index_1d();\n    \
             if let Some(slot) = out.get_mut(i) {{\n        let x = input[i.get()];\n        \
             *slot = {expression};\n    }}\n}}\n"
        ),
    )
    .unwrap();
    dir.join("Cargo.toml")
}

/// A crate whose kernel needs libdevice (`f32::sin`).
fn write_sin_crate(root: &Path, name: &str) -> PathBuf {
    write_kernel_crate(root, name, "", "x.sin()")
}

/// A folder holding a `python3` that stands in for Python: its site-packages is `site`, and
/// `pip install` logs its arguments there and then, if `libdevice` is given, puts that file
/// where NVIDIA's wheel puts libdevice (else it fails).
fn fake_python(dir: &Path, site: &Path, libdevice: Option<&Path>) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(site).unwrap();
    let install = match libdevice {
        Some(file) => format!(
            "mkdir -p '{site}/nvidia/cu13/nvvm/libdevice' && cp '{}' '{site}/nvidia/cu13/nvvm/libdevice/'",
            file.display(),
            site = site.display()
        ),
        None => "exit 1".to_owned(),
    };
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = -c ]; then echo '{site}'; exit 0; fi\n\
         if [ \"$1\" = -m ] && [ \"$2\" = pip ]; then echo \"$@\" >> '{site}/pip.log'; {install}; exit $?; fi\n\
         exit 1\n",
        site = site.display()
    );
    let python = bin.join("python3");
    std::fs::write(&python, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// `PATH` with `first` in front.
fn path_with(first: &Path) -> PathBuf {
    let mut dirs = vec![first.to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    PathBuf::from(std::env::join_paths(dirs).unwrap())
}

#[test]
fn missing_libdevice_is_installed_or_explained() {
    let real = gpu_toolchain::find_libdevice().expect("libdevice for the test to copy");
    if ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .any(|var| std::env::var_os(var).is_some())
        || Path::new("/usr/local/cuda/nvvm/libdevice").exists()
    {
        println!("note: a CUDA installation provides libdevice here; nothing to install");
        return;
    }
    let root = repo().join("tests/fixtures/target/libdevice");
    let _ = std::fs::remove_dir_all(&root);
    let target_dir = repo().join("tests/fixtures/target/libdevice-build");

    // pip works: cargo oxide installs libdevice and the build goes through.
    let site = root.join("site-ok");
    let bin = fake_python(&root.join("ok"), &site, Some(&real));
    let manifest = write_sin_crate(&root, "needs_libdevice");
    let out = oxide_build(
        &manifest,
        &[
            ("PATH", &path_with(&bin)),
            ("CUDA_OXIDE_TARGET_DIR", &target_dir),
        ],
    );
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("installing it (python3 -m pip install nvidia-cuda-nvcc=="),
        "{text}"
    );
    let log = std::fs::read_to_string(site.join("pip.log")).unwrap();
    assert!(
        log.contains("install --quiet --disable-pip-version-check nvidia-cuda-nvcc=="),
        "{log}"
    );
    assert!(
        site.join("nvidia/cu13/nvvm/libdevice/libdevice.10.bc")
            .is_file()
    );

    // pip fails: the build fails with what to do.
    let site = root.join("site-failing");
    let bin = fake_python(&root.join("failing"), &site, None);
    let manifest = write_sin_crate(&root, "still_needs_libdevice");
    let out = oxide_build(
        &manifest,
        &[
            ("PATH", &path_with(&bin)),
            ("CUDA_OXIDE_TARGET_DIR", &target_dir),
        ],
    );
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(!text.contains("panicked"), "{text}");
    for expected in [
        "libdevice.10.bc was not found",
        "installing it failed",
        "python3 -m pip install nvidia-cuda-nvcc==",
        "CUDA_OXIDE_LIBDEVICE",
    ] {
        assert!(text.contains(expected), "`{expected}` in:\n{text}");
    }
}

#[test]
fn f128_math_is_refused_with_a_clear_error() {
    let root = repo().join("tests/fixtures/target/math-diagnostics");
    let target_dir = repo().join("tests/fixtures/target/libdevice-build");
    let manifest = write_kernel_crate(
        &root,
        "quad_math",
        "#![feature(f128)]",
        "(x as f128).sin() as f32",
    );
    let out = oxide_build(&manifest, &[("CUDA_OXIDE_TARGET_DIR", &target_dir)]);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(!text.contains("panicked"), "{text}");
    for expected in [
        "`std::f128::<impl f128>::sin`",
        "the GPU has no `f128` arithmetic and its math library no `f128` functions",
        "src/lib.rs:",
    ] {
        assert!(text.contains(expected), "`{expected}` in:\n{text}");
    }
}
