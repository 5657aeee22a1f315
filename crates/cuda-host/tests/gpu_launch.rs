//! The generated launchers end to end: `load` finds the embedded PTX, each launch packs its
//! arguments as kernel-abi says, and results come back. On a machine without a GPU only the
//! error paths run.

#[macro_use]
mod common;

use common::kernels::{self, Affine};
use cuda_host::{CudaContext, Error, LaunchConfig, PtxModule};

embed_handwritten_ptx!(
    "cuda_oxide_ptx_c1a15259 (the kernels of this crate were not compiled: build it with `cargo oxide build` or `cargo oxide run`, not plain cargo)",
    "cuda_oxide_ptx_len_c1a15259 (the kernels of this crate were not compiled: build it with `cargo oxide build` or `cargo oxide run`, not plain cargo)",
    "cuda_oxide_cubin_c1a15259 (the kernels of this crate were not compiled: build it with `cargo oxide build` or `cargo oxide run`, not plain cargo)",
    "cuda_oxide_cubin_len_c1a15259 (the kernels of this crate were not compiled: build it with `cargo oxide build` or `cargo oxide run`, not plain cargo)",
    "cuda_oxide_cpu_c1a15259 (the kernels of this crate were not compiled: build it with `cargo oxide build` or `cargo oxide run`, not plain cargo)"
);

#[test]
fn without_a_driver_everything_is_an_error() {
    if cuda_host::init().is_ok() {
        return;
    }
    assert!(matches!(CudaContext::new(0), Err(Error::NoDriver)));
    assert!(matches!(cuda_host::device_target(0), Err(Error::NoDriver)));
}

#[test]
fn launches_on_the_gpu() -> Result<(), Box<dyn std::error::Error>> {
    let Some(ctx) = common::gpu() else {
        return Ok(());
    };
    let target = ctx.target()?;
    eprintln!("device 0 is {target}");
    assert!(target.starts_with("sm_"), "{target}");

    let stream = ctx.default_stream();
    let module = kernels::load(&ctx)?;

    let n = 3000;
    let a_host: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b_host: Vec<f32> = (0..n).map(|i| 0.5 * i as f32).collect();
    let a = stream.clone_htod(&a_host)?;
    let b = stream.clone_htod(&b_host)?;
    let mut c = stream.alloc_zeros::<f32>(n)?;
    let cfg = LaunchConfig::for_num_elems(n as u32);
    module.vecadd(&stream, cfg, &a, &b, &mut c)?;
    let expected: Vec<f32> = a_host.iter().zip(&b_host).map(|(x, y)| x + y).collect();
    assert_eq!(stream.clone_dtoh(&c)?, expected);

    let p = Affine {
        scale: 2.0,
        shift: -1.0,
    };
    module.affine(&stream, cfg, &mut c, p)?;
    let expected: Vec<f32> = expected.iter().map(|x| x * 2.0 - 1.0).collect();
    assert_eq!(stream.clone_dtoh(&c)?, expected);

    let mut out = stream.alloc_zeros::<u32>(1000)?;
    module.fill(
        &stream,
        LaunchConfig::for_num_elems(1000),
        &mut out,
        0xdead_beef,
    )?;
    assert_eq!(stream.clone_dtoh(&out)?, vec![0xdead_beef; 1000]);

    module.checked(&stream, LaunchConfig::for_num_elems(1), 10, 3)?;
    cuda_host::synchronize(&stream)?;

    let too_big = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (4096, 1, 1),
        shared_mem_bytes: 0,
    };
    // Refused before the driver sees it (the driver would only say `CUDA_ERROR_INVALID_VALUE`),
    // with the kernel's own limit.
    let error = module.fill(&stream, too_big, &mut out, 1).unwrap_err();
    assert!(
        matches!(error, Error::BadLaunchConfig { kernel: "fill", .. }),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("a block of 4096 threads is more than the"),
        "{error}"
    );
    Ok(())
}

#[test]
fn bad_ptx_and_missing_kernels_are_explained() {
    let Some(ctx) = common::gpu() else {
        return;
    };
    let bad = c".version 7.0\n.target sm_52\n.address_size 64\n.visible .entry broken()\n{\n\tnot_an_instruction;\n}\n";
    let error = PtxModule::load(&ctx, "broken", bad).unwrap_err();
    let text = error.to_string();
    eprintln!("{text}");
    assert!(matches!(error, Error::ModuleLoad { .. }), "{text}");
    assert!(text.contains("jit log:"), "{text}");
    assert!(text.contains("not_an_instruction"), "{text}");

    let good = std::ffi::CString::new(common::PTX).unwrap();
    let module = PtxModule::load(&ctx, "handwritten", &good).unwrap();
    let error = module.kernel("no_such_kernel").unwrap_err();
    assert!(
        matches!(
            error,
            Error::MissingKernel {
                kernel: "no_such_kernel",
                ..
            }
        ),
        "{error}"
    );
}
