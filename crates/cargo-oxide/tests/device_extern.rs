//! A `#[device] extern` declaration (CUDA's `vprintf`) called from a kernel: declared by its
//! own name at every stage, never compiled, and a call of the PTX system call in the end.

use std::path::{Path, PathBuf};
use std::process::Command;

fn stages() -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = repo.join("tests/fixtures/target/device-extern-stages");
    let _ = std::fs::remove_dir_all(&out);
    let status = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
        .args(["pipeline", "--manifest-path"])
        .arg(repo.join("tests/fixtures/device_extern/Cargo.toml"))
        .arg("--out")
        .arg(&out)
        .env_remove("CUDA_OXIDE_TARGET")
        .status()
        .expect("cargo-oxide runs");
    assert!(status.success(), "cargo oxide pipeline failed");
    out
}

fn read(dir: &Path, extension: &str) -> String {
    let path = dir.join(format!("device_extern.{extension}"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn extern_functions_are_declared_and_called_by_their_own_name() {
    let dir = stages();

    let mir = read(&dir, "mir");
    assert!(
        mir.contains(
            "mir.func @vprintf: builtin.function <(mir.ptr <builtin.integer ui8, 0>, mir.ptr \
             <builtin.integer ui8, 0>) -> (builtin.integer si32)> \n"
        ),
        "a declaration without body:\n{mir}"
    );
    assert!(mir.contains("mir.call @vprintf("), "{mir}");
    assert!(
        !mir.contains("cuda_oxide_device_extern"),
        "the reserved stub is not compiled:\n{mir}"
    );

    let ll = read(&dir, "ll");
    assert!(ll.contains("declare i32 @vprintf(ptr, ptr)"), "{ll}");
    assert!(ll.contains("call i32 @vprintf(ptr "), "{ll}");

    let ptx = read(&dir, "ptx");
    assert!(
        ptx.contains(".extern .func  (.param .b32 func_retval0) vprintf"),
        "{ptx}"
    );
    assert!(ptx.contains("call.uni (retval0), vprintf, "), "{ptx}");
    let Some(ptxas) = llvm_export::find_ptxas() else {
        println!("note: ptxas not found, PTX not assembled");
        return;
    };
    if let Err(e) = llvm_export::assemble_with_ptxas(&ptxas, &ptx, "sm_90") {
        panic!("ptxas refused the call of the system call: {e}\n{ptx}");
    }
}
