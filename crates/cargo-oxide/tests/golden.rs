//! Golden files: what each stage makes of the kernels in `tests/fixtures/golden_kernels` and
//! of the float math in `tests/fixtures/golden_math`, and of the GPU intrinsics and atomics in
//! `tests/fixtures/golden_gpu` (dialect-mir before and after mem2reg, LLVM IR, PTX). A change
//! to any stage shows up here as a snapshot diff to review (`cargo insta review`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use regex::Regex;

/// The stage outputs of the fixture crate `fixture`, generated once for all tests of this file.
fn stages(fixture: &'static str) -> PathBuf {
    static DIRS: Mutex<BTreeMap<&str, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut dirs = DIRS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    dirs.entry(fixture)
        .or_insert_with(|| {
            let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
            let out = repo.join(format!("tests/fixtures/target/golden-stages/{fixture}"));
            let _ = std::fs::remove_dir_all(&out);
            let status = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
                .args(["pipeline", "--manifest-path"])
                .arg(repo.join(format!("tests/fixtures/{fixture}/Cargo.toml")))
                .arg("--out")
                .arg(&out)
                .env_remove("CUDA_OXIDE_TARGET")
                // Panic locations in dependencies (`cuda_device`) name their files by absolute
                // path: the snapshots see the repository as `/oxide`, wherever it is.
                .env(
                    "RUSTFLAGS",
                    format!(
                        "--remap-path-prefix={}=/oxide",
                        repo.canonicalize().unwrap_or(repo.clone()).display()
                    ),
                )
                .status()
                .expect("cargo-oxide runs");
            assert!(
                status.success(),
                "cargo oxide pipeline failed for {fixture}"
            );
            out
        })
        .clone()
}

/// The text of one stage of `fixture`, with what depends on the machine replaced: mangled
/// symbols (their crate hashes depend on where the sources are) become `_R<n>` in order of
/// appearance.
fn stage(fixture: &'static str, extension: &str) -> String {
    let path = stages(fixture).join(format!("{fixture}.{extension}"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let symbol = Regex::new(r"_R[0-9A-Za-z_]+").unwrap();
    let mut seen: Vec<String> = Vec::new();
    symbol
        .replace_all(&text, |caps: &regex::Captures| {
            let found = caps[0].to_string();
            let index = match seen.iter().position(|s| *s == found) {
                Some(i) => i,
                None => {
                    seen.push(found);
                    seen.len() - 1
                }
            };
            format!("_R{index}")
        })
        .into_owned()
}

#[test]
fn dialect_mir_as_translated() {
    let text = stage("golden_kernels", "mir");
    // Device globals: the table, the string literal, the vtable, the shared array.
    for op in [
        "mir.global @golden_kernels__POWERS",
        "mir.global_addr",
        "mir.func_addr",
        "mir.make_dyn",
        "mir.call_indirect",
        "addrspace 3> mutable uninit",
    ] {
        assert!(text.contains(op), "no `{op}` in:\n{text}");
    }
    insta::assert_snapshot!("golden_kernels.mir", text);
}

#[test]
fn dialect_mir_after_mem2reg() {
    let text = stage("golden_kernels", "mem2reg.mir");
    // The loop's accumulator and counter cross the back edge as block arguments.
    assert!(text.contains("mir.func @triangle"), "{text}");
    insta::assert_snapshot!("golden_kernels.mem2reg.mir", text);
}

#[test]
fn llvm_ir() {
    let text = stage("golden_kernels", "ll");
    assert!(text.contains("define ptx_kernel void @vecadd("), "{text}");
    assert!(
        text.contains(" phi "),
        "loops and joins need phi nodes:\n{text}"
    );
    assert!(
        text.contains("internal addrspace(3) global [128 x i8] undef, align 4"),
        "the shared array:\n{text}"
    );
    insta::assert_snapshot!("golden_kernels.ll", text);
}

/// The body of `.entry kernel` in `ptx`, up to its closing brace.
fn entry_body<'a>(ptx: &'a str, kernel: &str) -> &'a str {
    let start = ptx
        .find(&format!(".visible .entry {kernel}("))
        .unwrap_or_else(|| panic!("no entry `{kernel}`"));
    let body = &ptx[start..];
    &body[..body.find("\n}").expect("a closing brace")]
}

/// Panic paths cost nothing where nothing panics: in every kernel, the blocks that call a
/// panic function (bounds and overflow checks) come after the kernel's `ret`, out of line,
/// and vecadd's path to `ret` is its two bounds checks, the loads, the add and the store.
#[test]
fn panic_paths_are_out_of_line() {
    let text = stage("golden_kernels", "ptx");
    let mut calls = 0;
    for kernel in ["vecadd", "triangle", "apply", "table"] {
        let body = entry_body(&text, kernel);
        let ret = body
            .find("\tret;")
            .unwrap_or_else(|| panic!("no ret in `{kernel}`"));
        for (at, _) in body.match_indices("call.uni cuda_device__shims__panicking__") {
            calls += 1;
            assert!(
                at > ret,
                "`{kernel}` calls a panic function before its ret:\n{body}"
            );
        }
    }
    assert!(
        calls >= 2,
        "vecadd's bounds checks call panic_bounds_check:\n{text}"
    );
    let vecadd = entry_body(&text, "vecadd");
    let hot = &vecadd[..vecadd.find("\tret;").unwrap()];
    assert!(!hot.contains("call") && !hot.contains("trap"), "{hot}");
    assert_eq!(hot.matches("ld.global").count(), 2, "{hot}");
    assert_eq!(hot.matches("st.global").count(), 1, "{hot}");
    assert_eq!(hot.matches("add.rn.f32").count(), 1, "{hot}");
}

#[test]
fn ptx() {
    let text = stage("golden_kernels", "ptx");
    for kernel in [
        "vecadd",
        "triangle",
        "apply",
        "with_params",
        "table",
        "dispatch",
        "reverse_warp",
    ] {
        assert!(
            text.contains(&format!(".visible .entry {kernel}(")),
            "{kernel} missing:\n{text}"
        );
    }
    assert!(
        text.contains("st.shared.b32"),
        "shared memory stores:\n{text}"
    );
    insta::assert_snapshot!("golden_kernels.ptx", text);
}

#[test]
fn math_dialect_mir() {
    let text = stage("golden_math", "mem2reg.mir");
    for op in [
        "mir.math sin(",
        "mir.math lgamma(",
        "mir.math gamma_sign(",
        "mir.math fma(",
    ] {
        assert!(text.contains(op), "{op} missing:\n{text}");
    }
    insta::assert_snapshot!("golden_math.mir", stage("golden_math", "mir"));
    insta::assert_snapshot!("golden_math.mem2reg.mir", text);
}

#[test]
fn math_llvm_ir_calls_libdevice() {
    let text = stage("golden_math", "ll");
    for declaration in [
        "declare float @__nv_sinf(float)",
        "declare double @__nv_fmod(double, double)",
        "declare float @__nv_lgammaf(float)",
    ] {
        assert!(text.contains(declaration), "{declaration} missing:\n{text}");
    }
    insta::assert_snapshot!("golden_math.ll", text);
    // Linked: libdevice's functions are defined, internal, and nothing is left to declare.
    let linked = stage("golden_math", "linked.ll");
    assert!(
        linked.contains("define internal float @__nv_sinf("),
        "{linked}"
    );
    assert!(
        !linked
            .lines()
            .any(|l| l.starts_with("declare") && l.contains("@__nv_"))
    );
}

#[test]
fn math_ptx() {
    let text = stage("golden_math", "ptx");
    for kernel in ["sine", "remainder", "log_gamma", "multiply_add"] {
        assert!(
            text.contains(&format!(".visible .entry {kernel}(")),
            "{kernel} missing:\n{text}"
        );
    }
    insta::assert_snapshot!("golden_math.ptx", text);
}

#[test]
fn gpu_ops_at_every_stage() {
    let mir = stage("golden_gpu", "mir");
    for op in [
        "nvvm.intrinsic vote_ballot_sync(",
        "nvvm.intrinsic redux_sync_add(",
        "nvvm.intrinsic fence_sc_gpu(",
        "mir.atomic_rmw add relaxed device",
        "mir.atomic_rmw max seq_cst device",
        "mir.atomic_cmpxchg acq_rel acquire block",
        "mir.fence release device",
    ] {
        assert!(mir.contains(op), "{op} missing:\n{mir}");
    }
    insta::assert_snapshot!("golden_gpu.mir", mir);
    insta::assert_snapshot!("golden_gpu.mem2reg.mir", stage("golden_gpu", "mem2reg.mir"));
    let ll = stage("golden_gpu", "ll");
    assert!(ll.contains("@llvm.nvvm.redux.sync.add("), "{ll}");
    assert!(
        ll.contains("atomicrmw add ptr") && ll.contains("syncscope(\"device\") monotonic"),
        "{ll}"
    );
    insta::assert_snapshot!("golden_gpu.ll", ll);
    let ptx = stage("golden_gpu", "ptx");
    for instruction in [
        "vote.sync.ballot.b32",
        "redux.sync.add",
        "bar.red.popc.u32",
        "fence.sc.gpu",
        "atom.global.add.u32",
        "atom.shared.add.u32",
        "atom.acquire.gpu.max.u32",
        "atom.acq_rel.cta.global.cas.b32",
        "fence.acq_rel.gpu",
    ] {
        assert!(ptx.contains(instruction), "{instruction} missing:\n{ptx}");
    }
    insta::assert_snapshot!("golden_gpu.ptx", ptx);
}

/// `core`'s building blocks (`golden_core`): an `Ordering` from `mir.cmp`, unions, raw copies,
/// volatile reads, slice patterns with a rest and `mir.select`, at every stage.
#[test]
fn core_building_blocks_at_every_stage() {
    let mir = stage("golden_core", "mir");
    for expected in [
        "mir.cmp",
        "mir.union <\"golden_core::Bits\"",
        "mir.copy_nonoverlapping",
        "mir.volatile_load",
        "mir.select",
        "mir.make_slice",
    ] {
        assert!(mir.contains(expected), "{expected} missing:\n{mir}");
    }
    insta::assert_snapshot!("golden_core.mir", mir);
    insta::assert_snapshot!(
        "golden_core.mem2reg.mir",
        stage("golden_core", "mem2reg.mir")
    );
    let ll = stage("golden_core", "ll");
    assert!(ll.contains("@llvm.memcpy.p0.p0.i64"), "{ll}");
    assert!(ll.contains("load volatile i32"), "{ll}");
    insta::assert_snapshot!("golden_core.ll", ll);
    let ptx = stage("golden_core", "ptx");
    for kernel in ["ordering", "unions", "raw_memory", "patterns"] {
        assert!(
            ptx.contains(&format!(".visible .entry {kernel}(")),
            "{kernel} missing:\n{ptx}"
        );
    }
    insta::assert_snapshot!("golden_core.ptx", ptx);
}

/// SIMD (`golden_simd`): an SSE intrinsic over `simd_add`, x86's `minps` (an LLVM x86
/// intrinsic that `core::arch` declares), and a portable comparison turned into a bitmask, all
/// computed lane by lane. The translated functions of `core` are many and long, so only the
/// PTX is a snapshot; the other stages are checked for what the lanes become.
#[test]
fn simd_lane_by_lane_at_every_stage() {
    let mir = stage("golden_simd", "mem2reg.mir");
    for expected in [
        "mir.func @core__arch__x86_64___mm_min_ps",
        "mir.func @core__arch__x86_64___mm_add_ps",
        "mir.select",
        "mir.lt",
        "mir.add",
        "mir.shl",
    ] {
        assert!(mir.contains(expected), "no `{expected}`:\n{mir}");
    }
    let ll = stage("golden_simd", "ll");
    assert!(
        !ll.contains("llvm.x86"),
        "an x86 intrinsic reached LLVM IR:\n{ll}"
    );
    let ptx = stage("golden_simd", "ptx");
    for expected in ["setp.lt.f32", "selp.f32", "add.rn.f32", "setp.lt.s32"] {
        assert!(ptx.contains(expected), "no `{expected}`:\n{ptx}");
    }
    insta::assert_snapshot!("golden_simd.ptx", ptx);
}
