//! Every intrinsic of `dialect_nvvm::table` has its stub in `cuda_device`, with the declared
//! signature: a kernel generated from the table calls each one, and `cargo oxide build` must
//! compile it (rustc type-checks the calls against the stubs, the importer checks them against
//! the declarations) to PTX holding every intrinsic. And the PTX ISA version follows the
//! intrinsics used.

use std::path::Path;
use std::process::Command;

use dialect_nvvm::{Scalar, table};

/// A Rust expression of type `scalar` made from the `u32` named `x`.
fn argument(scalar: Scalar) -> &'static str {
    match scalar {
        Scalar::Bool => "x & 1 == 1",
        Scalar::U32 => "x",
        Scalar::I32 => "x as i32",
        Scalar::U64 => "u64::from(x)",
        Scalar::I64 => "i64::from(x)",
        Scalar::F32 => "x as f32",
        Scalar::F64 => "f64::from(x)",
        Scalar::F32x32 => "[x as f32; 32]",
        Scalar::F32x64 => "[x as f32; 64]",
        Scalar::F32x128 => "[x as f32; 128]",
    }
}

/// `value` (an expression of type `scalar`) as a `u64`.
fn widened(scalar: Scalar, value: &str) -> String {
    match scalar {
        Scalar::F32 => format!("u64::from(({value}).to_bits())"),
        Scalar::F64 => format!("({value}).to_bits()"),
        Scalar::F32x32 | Scalar::F32x64 | Scalar::F32x128 => {
            format!("u64::from(({value})[1].to_bits())")
        }
        _ => format!("({value}) as u64"),
    }
}

/// Statements that call every intrinsic and fold their results into `acc`.
fn calls() -> String {
    let mut body = String::new();
    for intrinsic in table::ALL {
        let args: Vec<&str> = intrinsic.operands.iter().map(|s| argument(*s)).collect();
        // Some stubs are `unsafe` (they take raw addresses); the block is harmless around the
        // others.
        let call = format!(
            "(unsafe {{ {}({}) }})",
            intrinsic.rust_path,
            args.join(", ")
        );
        let line = match (intrinsic.result, intrinsic.rust_path) {
            (_, "cuda_device::trap") => format!("if x == 0x7777_7777 {{ {call} }}"),
            (Some(result), _) => format!("acc ^= {};", widened(result, &call)),
            (None, _) => format!("{call};"),
        };
        body.push_str(&format!("    {line}\n"));
    }
    body
}

/// Writes a crate `name` whose kernel `k(input: &[u32], out: DisjointSlice<u64>)` runs
/// `statements` (with `x` the thread's input and `acc` its output), builds it with
/// `cargo oxide build` and `args`, and returns its PTX.
fn build_kernel(name: &str, statements: &str, args: &[&str]) -> String {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = repo.join("tests/fixtures/target").join(name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let cuda_device = repo.join("crates/cuda-device").canonicalize().unwrap();
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
            "#![no_std]\n\nuse cuda_device::{{DisjointSlice, kernel, thread}};\n\n\
             #[kernel]\n#[allow(unused_unsafe)]\npub fn k(input: &[u32], mut out: DisjointSlice<u64>) {{\n    \
             let i = thread::index_1d();\n    let x = input[i.get()];\n    let mut acc = 0u64;\n\
             {statements}    if let Some(slot) = out.get_mut(i) {{\n        *slot = acc;\n    }}\n}}\n"
        ),
    )
    .unwrap();
    let ptx_dir = dir.join("ptx");
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
        .args(["build", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .args(args)
        .env(
            "CUDA_OXIDE_TARGET_DIR",
            repo.join("tests/fixtures/target/diagnostics-build"),
        )
        .env("CUDA_OXIDE_PTX_DIR", &ptx_dir)
        .env_remove("CUDA_OXIDE_TARGET")
        .output()
        .expect("cargo-oxide runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(ptx_dir.join(format!("{name}.ptx"))).unwrap()
}

#[test]
fn every_declared_intrinsic_has_a_callable_stub() {
    // `wgmma` is specific to sm_90a.
    let ptx = build_kernel("intrinsic_stubs", &calls(), &["--arch", "sm_90a"]);
    for instruction in [
        "%gridid",
        "shfl.sync.idx.b32",
        "vote.sync.uni.pred",
        "match.all.sync.b64",
        "redux.sync.xor.b32",
        "elect.sync",
        "bar.red.or.pred",
        "fence.sc.sys",
        "%globaltimer",
        "nanosleep.u32",
        "trap;",
        "mbarrier.try_wait.parity.b64",
        "cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group",
        "fence.proxy.tensormap::generic.acquire.gpu",
        "wgmma.wait_group.sync.aligned 2;",
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16",
        "barrier.cluster.wait.acquire.aligned",
        "mapa.u64",
        "setmaxnreg.dec.sync.aligned.u32 24;",
    ] {
        assert!(ptx.contains(instruction), "{instruction} missing:\n{ptx}");
    }
    // `fence.proxy.tensormap` is PTX ISA 8.3, newer than sm_90a's default 8.0.
    assert!(
        ptx.contains(".version 8.3") && ptx.contains(".target sm_90a"),
        "{ptx}"
    );
}

#[test]
fn the_ptx_isa_is_raised_only_as_far_as_the_intrinsics_need() {
    // On sm_70 (PTX ISA 6.0 by default), `nanosleep` needs 6.3.
    let ptx = build_kernel(
        "needs_ptx63",
        "    cuda_device::time::nanosleep(x);\n",
        &["--arch", "sm_70"],
    );
    assert!(
        ptx.contains(".version 6.3") && ptx.contains(".target sm_70"),
        "{ptx}"
    );
    let ptx = build_kernel(
        "default_ptx",
        "    acc = u64::from(cuda_device::warp::ballot(x > 3));\n",
        &["--arch", "sm_70"],
    );
    assert!(
        ptx.contains(".version 6.0") && ptx.contains(".target sm_70"),
        "{ptx}"
    );
}
