//! Golden files: what each stage makes of the kernels in `tests/fixtures/golden_kernels` and
//! of the float math in `tests/fixtures/golden_math`, and of the GPU intrinsics and atomics in
//! `tests/fixtures/golden_gpu` (dialect-mir before and after mem2reg, LLVM IR, PTX). A change
//! to any stage shows up here as a snapshot diff to review (`cargo insta review`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use regex::Regex;

/// The stage outputs of the fixture crate `fixture`, generated once for all tests of this file,
/// with or without panic messages (`CUDA_OXIDE_PANIC_MESSAGES`; the snapshots of [stage] are
/// without, as in a release build: panics are bare traps).
fn stages_with(fixture: &'static str, panic_messages: bool) -> PathBuf {
    static DIRS: Mutex<BTreeMap<(&str, bool), PathBuf>> = Mutex::new(BTreeMap::new());
    let mut dirs = DIRS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    dirs.entry((fixture, panic_messages))
        .or_insert_with(|| {
            let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
            let variant = if panic_messages {
                "-panic-messages"
            } else {
                ""
            };
            let out = repo.join(format!(
                "tests/fixtures/target/golden-stages/{fixture}{variant}"
            ));
            let _ = std::fs::remove_dir_all(&out);
            // The file names in `Location`s (of `#[track_caller]` calls) are the same on
            // every checkout: the repository's path is remapped, as rustc allows.
            let root = repo.canonicalize().expect("the repository's path");
            let status = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
                .env(
                    "RUSTFLAGS",
                    format!("--remap-path-prefix={}=/cuda-oxide", root.display()),
                )
                // Source lines have their own golden test (source_lines.rs); these snapshots
                // are about the code.
                .args(["pipeline", "--device-debug", "none", "--manifest-path"])
                .arg(repo.join(format!("tests/fixtures/{fixture}/Cargo.toml")))
                .arg("--out")
                .arg(&out)
                .env_remove("CUDA_OXIDE_TARGET")
                .env(
                    "CUDA_OXIDE_PANIC_MESSAGES",
                    if panic_messages { "1" } else { "0" },
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
/// appearance. Without panic messages.
fn stage(fixture: &'static str, extension: &str) -> String {
    stage_with(fixture, extension, false)
}

/// [stage], with or without panic messages.
fn stage_with(fixture: &'static str, extension: &str, panic_messages: bool) -> String {
    let path = stages_with(fixture, panic_messages).join(format!("{fixture}.{extension}"));
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

/// With panic messages (`CUDA_OXIDE_PANIC_MESSAGES=1`, the dev profile's default), panic
/// paths cost nothing where nothing panics: in every kernel, the blocks that call a panic
/// function (bounds and overflow checks) come after the kernel's `ret`, out of line, and
/// vecadd's path to `ret` is its two bounds checks, the loads, the add and the store. The
/// module has the panic record the host fills in.
#[test]
fn panic_paths_are_out_of_line() {
    let text = stage_with("golden_kernels", "ptx", true);
    // (`cuda_device__panic__RECORD`, whose `_RECORD` [stage] reads as a mangled symbol.)
    assert!(
        text.contains(".visible .global .align 8 .b8 cuda_device__panic_"),
        "the panic record:\n{text}"
    );
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
    insta::assert_snapshot!("golden_kernels.panic_messages.ptx", text);
}

/// Without panic messages (`CUDA_OXIDE_PANIC_MESSAGES=0`, the release profile's default) a
/// panic is a bare trap: no panic function, no recorder, no record, no message text.
#[test]
fn without_panic_messages_panics_are_bare_traps() {
    let text = stage("golden_kernels", "ptx");
    for absent in [
        "cuda_device__shims__panicking__",
        "cuda_device__panic__",
        "index out of bounds",
    ] {
        assert!(!text.contains(absent), "`{absent}` in:\n{text}");
    }
    let vecadd = entry_body(&text, "vecadd");
    assert!(
        vecadd.contains("trap;"),
        "vecadd's bounds checks trap:\n{vecadd}"
    );
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

/// Code generation for speed (`golden_perf`, docs/bench.md): kernel parameters carry what Rust
/// promises about their memory, `#[kernel(fmad)]` contracts `a * b + c` into one `fma` (and
/// only there), a two-sided `if` of a loop becomes a `select`, bounds checks fault at the
/// loads they guard, and a loop unrolled at run time does its leftover iterations first.
#[test]
fn performance_facts_reach_llvm_and_ptx() {
    let ll = stage("golden_perf", "ll");
    for expected in [
        // `&[f32]`: never written while the kernel runs, reached through nothing else.
        "define ptx_kernel void @add(ptr addrspace(1) noalias readonly nonnull align(4) %v0, \
         i64 %v1, ptr addrspace(1) noalias readonly nonnull align(4) %v2, i64 %v3, \
         ptr addrspace(1) noalias nonnull align(4) %v4, i64 %v5)",
        // `&mut [u64]`, then atomics: no promise about memory others write.
        "define ptx_kernel void @count(ptr addrspace(1) noalias nonnull align(8) %v0, i64 %v1, \
         ptr addrspace(1) nonnull align(4) %v2, i64 %v3)",
        // The generic pointer of a slice is not null either.
        "call void @llvm.assume(i1",
    ] {
        assert!(ll.contains(expected), "no `{expected}` in:\n{ll}");
    }
    let fmad_kernel = function_text(&ll, "define ptx_kernel void @axpy_fmad(");
    let plain_kernel = function_text(&ll, "define ptx_kernel void @axpy(");
    assert!(fmad_kernel.contains("fmul contract float"), "{fmad_kernel}");
    assert!(fmad_kernel.contains("fadd contract float"), "{fmad_kernel}");
    assert!(!plain_kernel.contains("contract"), "{plain_kernel}");
    insta::assert_snapshot!("golden_perf.ll", ll);

    let ptx = stage("golden_perf", "ptx");
    let entry = |name: &str| function_text(&ptx, &format!(".visible .entry {name}("));
    let add = entry("add");
    assert_eq!(add.matches("ld.global.nc.b32").count(), 2, "{add}");
    // No test of the output pointer against null (`cvta.to.global` of 0, `setp.ne.b64`).
    assert!(!add.contains("setp.ne.b64"), "{add}");
    let count = entry("count");
    assert!(!count.contains(".nc"), "atomics are written: {count}");
    let axpy = entry("axpy");
    assert!(
        axpy.contains("mul.rn.f32") && axpy.contains("add.rn.f32"),
        "{axpy}"
    );
    assert!(!axpy.contains("fma"), "{axpy}");
    let axpy_fmad = entry("axpy_fmad");
    assert!(axpy_fmad.contains("fma.rn.f32"), "{axpy_fmad}");
    assert!(!axpy_fmad.contains("mul.rn.f32"), "{axpy_fmad}");
    let collatz = entry("collatz");
    assert!(collatz.contains("selp.b64"), "{collatz}");
    // Each of the four bounds checks faults at its load: the load's address is chosen by a
    // `selp`, and no branch leads to the trap block.
    let rows = entry("guarded_rows");
    assert_eq!(rows.matches("selp.b64 \t%oxfault").count(), 4, "{rows}");
    assert_eq!(rows.matches("ld.global.nc.b32 \t%r").count(), 4, "{rows}");
    assert_eq!(rows.matches(", [%oxfault").count(), 4, "{rows}");
    let trap_label = rows
        .lines()
        .zip(rows.lines().skip(1))
        .find(|(_, next)| next.trim() == "trap; exit;")
        .and_then(|(label, _)| label.split(':').next())
        .expect("the trap block stays, unreferenced")
        .to_string();
    assert!(!rows.contains(&format!("bra \t{trap_label};")), "{rows}");
    // The leftover iterations of the unrolled dot product run first (LLVM names their blocks
    // `.prol`, `.epil` when they come after), and the unrolled loop counts down to zero.
    let dot = entry("dot_rows");
    assert!(dot.contains(".prol") && !dot.contains(".epil"), "{dot}");
    assert_eq!(dot.matches("mul.rn.f32").count(), 1 + 8, "{dot}");
    // `index_1d()`'s block size in a `#[block_dims(256)]` kernel is the constant; the same helper
    // in a kernel without a declared shape still reads `%ntid.x`.
    let declared = entry("scale_declared");
    assert!(declared.contains(".reqntid 256, 1, 1"), "{declared}");
    assert!(!declared.contains("%ntid"), "{declared}");
    assert!(declared.contains(", 256;"), "{declared}");
    assert!(entry("axpy").contains("%ntid.x"));
    // The naive matrix product's loop, versioned: the copy (blocks `%oxv0.*`) loads both
    // slices with no branch to the trap and is unrolled; the checked twin keeps its checks.
    let matmul = entry("matmul_naive");
    let copy_loop = matmul
        .split("// %oxv0.")
        .skip(1)
        .map(|block| block.split("\n$L__").next().unwrap_or(block))
        .max_by_key(|block| block.matches("ld.global.nc.b32").count())
        .expect("the check-free copy");
    assert!(
        copy_loop.matches("ld.global.nc.b32").count() >= 8,
        "{matmul}"
    );
    assert!(!copy_loop.contains("trap"), "{matmul}");
    assert!(
        matmul.contains("trap; exit;"),
        "the checked twin stays: {matmul}"
    );
    insta::assert_snapshot!("golden_perf.ptx", ptx);
}

/// The text of the function of `text` whose definition starts with `header`, up to its end.
fn function_text(text: &str, header: &str) -> String {
    let start = text
        .find(header)
        .unwrap_or_else(|| panic!("no `{header}` in:\n{text}"));
    let rest = &text[start..];
    let end = rest.find("\n}").map_or(rest.len(), |end| end + 2);
    rest[..end].to_string()
}

/// Rust in full (`golden_full`): the `algebraic_*` float methods carry LLVM's fast-math flags
/// (and `a * b + c` becomes an `fma`), warp operations take a member mask from a register,
/// `Location::caller()` is a global `Location` passed to `#[track_caller]` functions, GPU
/// intrinsics called through pointers have wrapper functions, trait upcasting reads the
/// supertrait's vtable from the subtrait's, `NonNull<[T; N]>` and a user's pointer struct
/// unsize, `Vec`/`Box`/`Box<dyn Trait>` allocate with CUDA's `malloc`, `f16` arithmetic is
/// native, `u128` atomics are `atom.cas.b128`; the PTX assembles.
#[test]
fn rust_in_full_at_every_stage() {
    let mir = stage("golden_full", "mem2reg.mir");
    for expected in [
        "mir.add_algebraic",
        "mir.sub_algebraic",
        "mir.mul_algebraic",
        "mir.div_algebraic",
        "mir.rem_algebraic",
    ] {
        assert!(mir.contains(expected), "no `{expected}`:\n{mir}");
    }
    let ll = stage("golden_full", "ll");
    for expected in [
        "fadd nsz arcp contract reassoc float",
        "fmul nsz arcp contract reassoc float",
        "fdiv nsz arcp contract reassoc double",
        "call double @__nv_fmod",
        "@llvm.nvvm.shfl.sync.bfly.i32(i32 %",
        "@llvm.nvvm.vote.ballot.sync(i32 %",
        "@llvm.nvvm.match.any.sync.i32(i32 %",
        "@llvm.nvvm.bar.warp.sync(i32 %",
        "c\"golden_full/src/lib.rs\\00\"",
        "call i32 @golden_full__caller_line(ptr %",
        "define internal i32 @golden_full__inner_line(ptr %",
        "store ptr @__oxide_intrinsic_read_ptx_sreg_laneid",
        "define internal i1 @__oxide_intrinsic_vote_all_sync(i1 %",
        // The device heap: CUDA's `malloc`/`free`, `Box<dyn Shape>` dropped through its vtable.
        "declare ptr @malloc(i64)",
        "declare void @free(ptr)",
        "drop_dyn",
        // `f16`: native arithmetic, `%` through libdevice's `f32` `fmod`.
        "fadd half",
        "call float @__nv_fmodf(float",
    ] {
        assert!(ll.contains(expected), "no `{expected}`:\n{ll}");
    }
    // `&dyn Shape` to `&dyn Scaled`: the vtable pointer in entry 5 of `Shape`'s.
    assert!(
        ll.lines()
            .any(|l| l.contains("= getelementptr inbounds ptr, ptr %v") && l.ends_with(", i64 5")),
        "no load of vtable entry 5:\n{ll}"
    );
    let ptx = stage("golden_full", "ptx");
    for expected in [
        "fma.rn.f32",
        "vote.sync.ballot.b32",
        "redux.sync.add",
        "bar.warp.sync",
    ] {
        assert!(ptx.contains(expected), "no `{expected}`:\n{ptx}");
    }
    if let Some(ptxas) = gpu_toolchain::find_ptxas() {
        ptx_tools::assemble_with_ptxas(&ptxas, &ptx, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    }
    insta::assert_snapshot!("golden_full.ptx", ptx);
}
