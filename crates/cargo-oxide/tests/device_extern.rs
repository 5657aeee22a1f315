//! A `#[device] extern` declaration (CUDA's `vprintf`) called from a kernel: declared by its
//! own name at every stage, never compiled, and a call of the PTX system call in the end.

use std::path::{Path, PathBuf};

mod common;

use common::{pipeline_stages, read};

fn stages() -> PathBuf {
    pipeline_stages("device_extern", "device-extern-stages", &[])
}

fn stage(dir: &Path, extension: &str) -> String {
    read(&dir.join(format!("device_extern.{extension}")))
}

#[test]
fn extern_functions_are_declared_and_called_by_their_own_name() {
    let dir = stages();

    let mir = stage(&dir, "mir");
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

    let ll = stage(&dir, "ll");
    assert!(ll.contains("declare i32 @vprintf(ptr, ptr)"), "{ll}");
    assert!(ll.contains("call i32 @vprintf(ptr "), "{ll}");

    let ptx = stage(&dir, "ptx");
    assert!(
        ptx.contains(".extern .func  (.param .b32 func_retval0) vprintf"),
        "{ptx}"
    );
    assert!(ptx.contains("call.uni (retval0), vprintf, "), "{ptx}");
    let Some(ptxas) = gpu_toolchain::find_ptxas() else {
        println!("note: ptxas not found, PTX not assembled");
        return;
    };
    if let Err(e) = ptx_tools::assemble_with_ptxas(&ptxas, &ptx, "sm_90") {
        panic!("ptxas refused the call of the system call: {e}\n{ptx}");
    }
}
