//! `cargo oxide new` makes a crate outside this repository that `cargo oxide run` builds and
//! runs from its own directory, under the user's default toolchain (the crate has no
//! `rust-toolchain.toml`; cargo oxide picks the pinned one itself). Without a GPU the program
//! must end with the driver's error, cleanly; with one, with its check passing. The test makes
//! the kernel private first: a kernel needs no `pub` (its launcher is then visible to the
//! module around the `#[cuda_module]`).

use std::path::Path;
use std::process::Command;

#[test]
fn a_new_crate_builds_and_runs_from_its_directory() {
    let root = std::env::temp_dir().join(format!("oxide-new-crate-{}", std::process::id()));
    let target_dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/target/new-crate-build");
    let dir = root.join("hello-gpu");
    let oxide = || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"));
        // What a user's shell has: no toolchain chosen by a rustup proxy (the tests run under
        // `cargo +<pinned> test`), so rustup's default applies outside cargo oxide's builds.
        cmd.env_remove("RUSTUP_TOOLCHAIN")
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CUDA_OXIDE_VERBOSE")
            // Dependencies stay built between runs of this test.
            .env("CUDA_OXIDE_TARGET_DIR", &target_dir);
        cmd
    };

    let created = oxide().arg("new").arg(&dir).output().unwrap();
    assert!(created.status.success(), "{created:?}");
    assert!(dir.join("src/main.rs").is_file());
    assert!(!dir.join("rust-toolchain.toml").exists());
    let main = dir.join("src/main.rs");
    let source = std::fs::read_to_string(&main).unwrap();
    assert!(source.contains("    pub fn saxpy("), "{source}");
    std::fs::write(&main, source.replace("    pub fn saxpy(", "    fn saxpy(")).unwrap();

    let ran = oxide().arg("run").current_dir(&dir).output().unwrap();
    let stdout = String::from_utf8_lossy(&ran.stdout);
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    let ptx = std::fs::read_to_string(target_dir.join("debug/hello_gpu.ptx")).unwrap();
    assert!(ptx.contains(".visible .entry saxpy("), "{ptx}");
    if ran.status.success() {
        assert!(
            stdout.contains("ok: the GPU's saxpy matches the CPU's"),
            "{stdout}"
        );
    } else {
        // Built, then stopped by the missing driver or GPU, with cuda-host's message.
        assert!(stderr.contains("Compiling hello-gpu"), "{stderr}");
        let no_gpu = stderr
            .contains("error: the CUDA driver library (libcuda.so.1) could not be loaded")
            || stderr.contains("error: there is no CUDA device 0");
        assert!(no_gpu, "not the no-GPU error:\n{stderr}");
        assert_eq!(ran.status.code(), Some(1), "{stderr}");
    }
    std::fs::remove_dir_all(&root).unwrap();
}
