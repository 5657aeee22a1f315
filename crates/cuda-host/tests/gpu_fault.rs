//! A kernel that traps is reported as a fault of that kernel. In its own test binary: a fault
//! leaves the process's CUDA context unusable.

#[macro_use]
mod common;

use common::kernels;
use cuda_host::{Error, LaunchConfig};

embed_handwritten_ptx!(
    "cuda_oxide_ptx_95f5e6c2 (the kernels of this crate were not compiled: build it with `cargo oxide build` or `cargo oxide run`, not plain cargo)",
    "cuda_oxide_ptx_len_95f5e6c2 (the kernels of this crate were not compiled: build it with `cargo oxide build` or `cargo oxide run`, not plain cargo)",
    "cuda_oxide_cubin_95f5e6c2 (the kernels of this crate were not compiled: build it with `cargo oxide build` or `cargo oxide run`, not plain cargo)",
    "cuda_oxide_cubin_len_95f5e6c2 (the kernels of this crate were not compiled: build it with `cargo oxide build` or `cargo oxide run`, not plain cargo)",
    "cuda_oxide_cpu_95f5e6c2 (the kernels of this crate were not compiled: build it with `cargo oxide build` or `cargo oxide run`, not plain cargo)"
);

#[test]
fn a_trap_is_a_fault_of_the_named_kernel() -> Result<(), Box<dyn std::error::Error>> {
    let Some(ctx) = common::gpu() else {
        return Ok(());
    };
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx)?;
    module.checked(&stream, LaunchConfig::for_num_elems(32), 10, 11)?;
    let error = cuda_host::synchronize(&stream).unwrap_err();
    let text = error.to_string();
    eprintln!("{text}");
    assert!(
        matches!(
            error,
            Error::KernelFault {
                kernel: "checked",
                ..
            }
        ),
        "{text}"
    );
    assert!(text.contains("kernel `checked` faulted"), "{text}");

    // The same fault seen by a cudarc call converts with `?` / `Error::from`.
    let later = stream.synchronize().map_err(Error::from).unwrap_err();
    assert!(
        matches!(
            later,
            Error::KernelFault {
                kernel: "checked",
                ..
            }
        ),
        "{later}"
    );
    Ok(())
}
