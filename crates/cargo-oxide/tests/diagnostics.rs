//! Rust that device code does not support must fail the build with an error that names the
//! construct, the function and (where MIR has it) the source location: never a compiler crash,
//! never silently wrong PTX. Each case is a small crate generated here and built with
//! `cargo oxide build`.

use std::path::{Path, PathBuf};
use std::process::Command;

struct Case {
    name: &'static str,
    /// The body of `fn helper(x: u32) -> u32`, which the kernel calls.
    helper: &'static str,
    /// What the error must say.
    expected: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "shared_array_local",
        helper: "let tile = cuda_device::SharedArray::<u32, 4>::UNINIT; tile[0] + x",
        expected: "a `SharedArray` in a local variable",
    },
    Case {
        name: "shared_array_plain_static",
        helper: "static TILE: cuda_device::SharedArray<u32, 4> = \
                 cuda_device::SharedArray::UNINIT; TILE[0] + x",
        expected: "declared as a plain `static`",
    },
    Case {
        name: "inline_asm",
        helper: "unsafe { core::arch::asm!(\"nop\") }; x",
        expected: "inline `asm!`",
    },
    Case {
        name: "std_call",
        helper: "std::thread::yield_now(); x",
        expected: "forbidden crate in device code",
    },
];

/// What a GPU cannot do, behind the features that make it expressible: each is a build error
/// that says why.
#[test]
fn what_a_gpu_cannot_do_is_a_build_error_saying_why() {
    let root = repo().join("tests/fixtures/target/diagnostics");
    let cases = [
        (
            Case {
                name: "refused_core_intrinsic",
                helper: "core::intrinsics::breakpoint(); x",
                expected: "the compiler intrinsic `breakpoint`: a debugger breakpoint",
            },
            "#![feature(core_intrinsics)]\n#![allow(internal_features)]\n\n",
        ),
        (
            Case {
                name: "thread_local_static",
                helper: "#[thread_local]\n    static COUNT: core::cell::Cell<u32> = \
                         core::cell::Cell::new(0);\n    COUNT.set(COUNT.get() + x);\n    \
                         COUNT.get()",
                expected: "thread-local statics",
            },
            "#![feature(thread_local)]\n\n",
        ),
    ];
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(case, preamble)| {
            expect_failure(&write_crate(&root, case, preamble), &[], case)
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Writes the crate of `case` and returns its manifest.
fn write_case(root: &Path, case: &Case) -> PathBuf {
    write_crate(root, case, "")
}

/// Writes the crate of `case`, its `lib.rs` starting with `preamble`, and returns its manifest.
fn write_crate(root: &Path, case: &Case, preamble: &str) -> PathBuf {
    let dir = root.join(case.name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let cuda_device = repo().join("crates/cuda-device").canonicalize().unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [dependencies]\ncuda-device = {{ path = {:?} }}\n\n[workspace]\n",
            case.name, cuda_device
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        format!(
            "{preamble}use cuda_device::{{DisjointSlice, kernel, thread}};\n\n\
             fn double(x: u32) -> u32 {{\n    2 * x\n}}\n\n\
             fn helper(x: u32) -> u32 {{\n    {}\n}}\n\n\
             #[kernel]\npub fn k(input: &[u32], mut out: DisjointSlice<u32>) {{\n    \
             let i = thread::index_1d();\n    \
             if let Some(slot) = out.get_mut(i) {{\n        *slot = helper(input[i.get()]) + double(1);\n    }}\n}}\n",
            case.helper
        ),
    )
    .unwrap();
    dir.join("Cargo.toml")
}

/// Builds the crate of `manifest` with `cargo oxide build` and extra `args`; returns what
/// is wrong with the failure it must be (nothing when it failed as `case` expects).
fn expect_failure(manifest: &Path, args: &[&str], case: &Case) -> Option<String> {
    let target_dir = repo().join("tests/fixtures/target/diagnostics-build");
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
        .args(["build", "--manifest-path"])
        .arg(manifest)
        .args(args)
        .env("CUDA_OXIDE_TARGET_DIR", &target_dir)
        .output()
        .expect("cargo-oxide runs");
    let text = String::from_utf8_lossy(&out.stderr);
    let problems: Vec<&str> = [
        (out.status.success(), "the build succeeded"),
        (text.contains("panicked"), "the compiler crashed"),
        (
            !text.contains(case.expected),
            "the message does not name the construct",
        ),
        (
            !text.contains("src/lib.rs:"),
            "the message has no source location",
        ),
        (
            !text.contains("helper"),
            "the message does not name the function",
        ),
    ]
    .into_iter()
    .filter_map(|(bad, what)| bad.then_some(what))
    .collect();
    (!problems.is_empty()).then(|| format!("{}: {}\n{text}", case.name, problems.join(", ")))
}

#[test]
fn unsupported_constructs_are_build_errors_naming_them() {
    let root = repo().join("tests/fixtures/target/diagnostics");
    let failures: Vec<String> = CASES
        .iter()
        .filter_map(|case| expect_failure(&write_case(&root, case), &[], case))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn intrinsics_newer_than_the_target_are_build_errors() {
    let root = repo().join("tests/fixtures/target/diagnostics");
    let cases = [
        (
            Case {
                name: "redux_on_sm_70",
                helper: "cuda_device::warp::reduce_add(x)",
                expected: "`cuda_device::warp::reduce_add` needs sm_80 or newer, but this build \
                           targets sm_70",
            },
            "sm_70",
        ),
        (
            Case {
                name: "elect_on_sm_80",
                helper: "cuda_device::warp::elect_one() as u32 + x",
                expected: "`cuda_device::warp::elect_one` needs sm_90 or newer, but this build \
                           targets sm_80",
            },
            "sm_80",
        ),
        (
            Case {
                name: "wgmma_on_sm_90",
                helper: "cuda_device::wgmma::fence(); x",
                expected: "`cuda_device::wgmma::raw::fence` needs the architecture-specific \
                           target sm_90a (exactly that GPU architecture), but this build targets \
                           sm_90; build for sm_90a (`--arch sm_90a`",
            },
            "sm_90",
        ),
        (
            Case {
                name: "wgmma_on_sm_100a",
                helper: "cuda_device::wgmma::commit_group(); x",
                expected: "`cuda_device::wgmma::raw::commit_group` needs the architecture-specific \
                           target sm_90a (exactly that GPU architecture), but this build targets \
                           sm_100a",
            },
            "sm_100a",
        ),
        (
            Case {
                name: "wide_atomic_on_sm_80",
                helper: "let a = cuda_device::atomic::DeviceAtomicU128::new(x as u128);\n    \
                         a.swap(1, cuda_device::atomic::AtomicOrdering::Relaxed) as u32",
                expected: "128-bit atomics (`atom.cas.b128`) need sm_90 or newer, but this build \
                           targets sm_80",
            },
            "sm_80",
        ),
    ];
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(case, arch)| {
            expect_failure(&write_case(&root, case), &["--arch", arch], case)
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn atomics_on_unsupported_types_are_build_errors() {
    let root = repo().join("tests/fixtures/target/diagnostics");
    let case = Case {
        name: "atomic_u128",
        helper: "let mut wide = x as u128;\n    \
                 let old = unsafe { core::intrinsics::atomic_xadd::<u128, u128, \
                 { core::intrinsics::AtomicOrdering::Relaxed }>(&mut wide, 1) };\n    \
                 old as u32",
        expected: "an atomic `fetch_add` on `u128`",
    };
    let preamble = "#![feature(core_intrinsics)]\n#![allow(internal_features)]\n\n";
    let failure = expect_failure(&write_crate(&root, &case, preamble), &[], &case);
    assert!(failure.is_none(), "{}", failure.unwrap_or_default());
}

/// A construct that cannot be translated inside `core` is reported at the user's own line (the
/// call that leads into `core`), with the chain of calls from the kernel to the function that
/// holds it.
#[cfg(target_arch = "x86_64")]
#[test]
fn errors_inside_core_point_at_the_users_line_with_the_call_chain() {
    let case = Case {
        name: "error_inside_core",
        helper: "let t = unsafe { core::arch::x86_64::_rdtsc() };\n    \
                 t as u32 + x",
        expected: "the host CPU's LLVM intrinsic `llvm.x86.rdtsc`",
    };
    let root = repo().join("tests/fixtures/target/diagnostics");
    let manifest = write_case(&root, &case);
    let text = failed_build(&manifest);
    assert!(text.contains(case.expected), "{text}");
    // The user's line comes first: the `-->` of the diagnostic is the call in `helper`.
    let arrow = text.find("-->").expect("a source location");
    assert!(
        text[arrow..].starts_with("--> src/lib.rs:8:"),
        "not the user's line:\n{text}"
    );
    assert!(
        text.contains("core::arch::x86_64::_rdtsc()"),
        "the user's line is not shown:\n{text}"
    );
    let chain = text
        .split("device code reached it through:")
        .nth(1)
        .expect("a call chain");
    let positions: Vec<Option<usize>> = [
        "`error_inside_core::k` (error_inside_core)",
        "`error_inside_core::helper` (error_inside_core)",
        "`core::core_arch::x86::rdtsc::_rdtsc` (core)",
    ]
    .iter()
    .map(|step| chain.find(step))
    .collect();
    assert!(
        positions.iter().all(Option::is_some) && positions.is_sorted(),
        "the chain is not kernel -> helper -> core:\n{text}"
    );
}

/// Runs `cargo oxide build` on `manifest`; the build must fail without a crash. Returns stderr.
fn failed_build(manifest: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
        .args(["build", "--manifest-path"])
        .arg(manifest)
        .env(
            "CUDA_OXIDE_TARGET_DIR",
            repo().join("tests/fixtures/target/diagnostics-build"),
        )
        .output()
        .expect("cargo-oxide runs");
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success() && !text.contains("panicked"),
        "{text}"
    );
    text
}

/// Asserts that `text` shows the chain of calls `steps`, in order, after its note.
fn assert_chain(text: &str, steps: &[&str]) {
    let chain = text
        .split("device code reached it through:")
        .nth(1)
        .unwrap_or_else(|| panic!("no call chain:\n{text}"));
    let positions: Vec<Option<usize>> = steps.iter().map(|step| chain.find(step)).collect();
    assert!(
        positions.iter().all(Option::is_some) && positions.is_sorted(),
        "the chain is not {steps:?}:\n{text}"
    );
}

/// A dependency that takes a path written for the host CPU (chosen by `cfg(target_arch)`,
/// which device code sees as the host's) is reported with the crate, the construct, and the
/// chain of calls from the kernel, at the user's line.
#[test]
fn host_cpu_paths_of_dependencies_are_errors_naming_the_crate_and_the_chain() {
    let root = repo().join("tests/fixtures/target/diagnostics");
    let dep = root.join("cpu_dep");
    std::fs::create_dir_all(dep.join("src")).unwrap();
    std::fs::write(
        dep.join("Cargo.toml"),
        "[package]\nname = \"cpu_dep\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    )
    .unwrap();
    std::fs::write(
        dep.join("src/lib.rs"),
        "#![no_std]\n\n\
         /// The CPU's time-stamp counter where there is one.\n\
         pub fn cycles() -> u64 {\n    \
         #[cfg(target_arch = \"x86_64\")]\n    \
         {\n        \
         let (lo, hi): (u32, u32);\n        \
         unsafe { core::arch::asm!(\"rdtsc\", out(\"eax\") lo, out(\"edx\") hi) };\n        \
         (u64::from(hi) << 32) | u64::from(lo)\n    \
         }\n    \
         #[cfg(not(target_arch = \"x86_64\"))]\n    \
         {\n        \
         0\n    \
         }\n}\n",
    )
    .unwrap();
    let case = Case {
        name: "host_cpu_path",
        helper: "cpu_dep::cycles() as u32 + x",
        expected: "inline `asm!` `rdtsc` (assembly for the host CPU",
    };
    let manifest = write_case(&root, &case);
    let with_dep = std::fs::read_to_string(&manifest).unwrap().replace(
        "[dependencies]\n",
        &format!("[dependencies]\ncpu_dep = {{ path = {:?} }}\n", dep),
    );
    std::fs::write(&manifest, with_dep).unwrap();
    let text = failed_build(&manifest);
    assert!(text.contains(case.expected), "{text}");
    assert!(
        text.contains("the construct is in `cpu_dep::cycles` (crate `cpu_dep`)"),
        "the crate is not named:\n{text}"
    );
    assert!(
        text.contains("--> src/lib.rs:8:"),
        "not the user's line:\n{text}"
    );
    assert_chain(
        &text,
        &[
            "`host_cpu_path::k` (host_cpu_path)",
            "`host_cpu_path::helper` (host_cpu_path)",
            "`cpu_dep::cycles` (cpu_dep)",
        ],
    );
}

/// An x86 SIMD intrinsic beyond the x86-64 baseline (SSE4.1's `_mm_round_ps`), called by the
/// kernel's own crate, is an error naming the function, the features it needs and the chain.
/// (Dependencies may reach such functions behind CPU detection: see
/// `host_only_functions_behind_cpu_detection_build_and_trap`.)
#[cfg(target_arch = "x86_64")]
#[test]
fn x86_intrinsics_beyond_the_baseline_are_errors_naming_them() {
    let root = repo().join("tests/fixtures/target/diagnostics");
    let case = Case {
        name: "x86_round",
        helper: "use core::arch::x86_64::*;\n    \
                 let r = unsafe { _mm_round_ps::<0>(_mm_set1_ps(x as f32)) };\n    \
                 unsafe { _mm_cvtss_f32(r) as u32 }",
        expected: "device code calls `core::core_arch::x86::sse41::_mm_round_ps::<0>`, which \
                   needs the CPU feature(s) sse4.1\n",
    };
    let text = failed_build(&write_case(&root, &case));
    assert!(text.contains(case.expected), "{text}");
    assert!(
        text.contains("CPU detection in device code answers that nothing beyond it"),
        "{text}"
    );
    assert!(
        text.contains("--> src/lib.rs:9:"),
        "not the user's line:\n{text}"
    );
    assert_chain(
        &text,
        &[
            "`x86_round::k` (x86_round)",
            "`x86_round::helper` (x86_round)",
            "`core::core_arch::x86::sse41::_mm_round_ps::<0>` (core)",
        ],
    );
}

/// The baseline's one part without a GPU version, the MXCSR register (`_mm_getcsr`,
/// `_mm_setcsr`, `_MM_GET_*`, `_MM_SET_*`), is an error saying why.
#[cfg(target_arch = "x86_64")]
#[test]
fn the_mxcsr_register_is_an_error_saying_why() {
    let root = repo().join("tests/fixtures/target/diagnostics");
    let case = Case {
        name: "x86_mxcsr",
        helper: "#[allow(deprecated)]\n    \
                 let csr = unsafe { core::arch::x86_64::_mm_getcsr() };\n    \
                 csr + x",
        expected: "the CPU's floating-point control and status register (MXCSR",
    };
    let text = failed_build(&write_case(&root, &case));
    assert!(text.contains(case.expected), "{text}");
    assert!(text.contains("the GPU has no such register"), "{text}");
}

/// A `&T` kernel parameter is a grid constant (a read-only copy in the parameter space): an
/// atomic there is a build error pointing at the kernel, not a crash of LLVM's NVPTX backend.
#[test]
fn interior_mutable_grid_constants_are_build_errors() {
    let case = Case {
        name: "atomic_grid_constant",
        helper: "",
        expected: "is written through shared references (interior mutability)",
    };
    let root = repo().join("tests/fixtures/target/diagnostics");
    let manifest = write_case(&root, &case);
    std::fs::write(
        manifest.parent().unwrap().join("src/lib.rs"),
        "use cuda_device::atomic::{AtomicOrdering, DeviceAtomicU32};\n\
         use cuda_device::kernel;\n\n\
         #[kernel]\npub fn count(counter: &DeviceAtomicU32) {\n    \
         counter.fetch_add(1, AtomicOrdering::Relaxed);\n}\n",
    )
    .unwrap();
    let text = failed_build(&manifest);
    assert!(
        !text.contains("LLVM ERROR")
            && text.contains(case.expected)
            && text.contains("pass a buffer in device memory as `&[ScopedAtomic<u32, 1>]`")
            && text.contains("src/lib.rs:"),
        "{text}"
    );
}

/// Functions that exist only for the CPU build, and a call to one traps: in a dependency, one
/// that needs a CPU feature beyond the target (`#[target_feature(enable = "avx2")]`, with an
/// AVX2 intrinsic that has no GPU version) and a foreign function. Behind CPU detection, as
/// crates call them, they are never called (detection answers "x86-64 baseline"); called
/// without it, the kernel traps. The foreign function is named in a warning.
#[cfg(target_arch = "x86_64")]
#[test]
fn host_only_functions_behind_cpu_detection_build_and_trap() {
    let root = repo().join("tests/fixtures/target/diagnostics");
    let dep = root.join("dispatching_dep");
    std::fs::create_dir_all(dep.join("src")).unwrap();
    std::fs::write(
        dep.join("Cargo.toml"),
        "[package]\nname = \"dispatching_dep\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    )
    .unwrap();
    std::fs::write(
        dep.join("src/lib.rs"),
        "#![no_std]\n\
         use core::arch::x86_64::*;\n\n\
         #[target_feature(enable = \"avx2\")]\n\
         unsafe fn wide(x: u32) -> u32 {\n    \
         let v = _mm256_set1_epi16(x as i16);\n    \
         _mm256_extract_epi32::<0>(_mm256_madd_epi16(v, v)) as u32\n}\n\n\
         unsafe extern \"C\" {\n    \
         fn host_sum(x: *const u32, n: usize) -> u32;\n}\n\n\
         /// With AVX2 (leaf 7, EBX bit 5) the wide path, else the portable one.\n\
         pub fn dispatched(x: u32) -> u32 {\n    \
         if __cpuid_count(7, 0).ebx & (1 << 5) != 0 {\n        \
         unsafe { wide(x) + host_sum(&x, 1) }\n    \
         } else {\n        \
         x + 1\n    \
         }\n}\n\n\
         /// Both called without detection.\n\
         pub fn undetected(x: u32) -> u32 {\n    \
         unsafe { wide(x) + host_sum(&x, 1) }\n}\n",
    )
    .unwrap();
    let case = Case {
        name: "host_only",
        helper: "dispatching_dep::dispatched(x)",
        expected: "",
    };
    let preamble = "#[cuda_device::kernel]\n\
                    pub fn unguarded(out: &mut [u32]) {\n    \
                    out[0] = dispatching_dep::undetected(out[0]);\n}\n\n";
    let manifest = write_crate(&root, &case, preamble);
    let with_dep = std::fs::read_to_string(&manifest).unwrap().replace(
        "[dependencies]\n",
        &format!("[dependencies]\ndispatching_dep = {{ path = {:?} }}\n", dep),
    );
    std::fs::write(&manifest, with_dep).unwrap();
    let target_dir = repo().join("tests/fixtures/target/diagnostics-build");
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
        .args(["build", "--manifest-path"])
        .arg(&manifest)
        .env("CUDA_OXIDE_TARGET_DIR", &target_dir)
        .output()
        .expect("cargo-oxide runs");
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains(
            "can reach 1 function(s) that exist only for the host (foreign \
                 functions, `std`, `thread_local!`): `dispatching_dep::host_sum`"
        ),
        "{text}"
    );
    let ptx = std::fs::read_to_string(target_dir.join("debug/host_only.ptx")).unwrap();
    // Behind detection, which answers "no AVX2", neither function is called.
    let guarded = &ptx[ptx.find(".entry k(").expect("kernel k")..];
    let guarded = &guarded[..guarded.find("\n}").unwrap()];
    assert!(
        !guarded.contains("trap;") && !guarded.contains("host_sum"),
        "a host-only function is reached:\n{guarded}"
    );
    // Without detection, the kernel traps where it would call them: the foreign one's body is
    // a trap, the other's a panic naming it (a dev build has panic messages).
    let unguarded = &ptx[ptx.find(".entry unguarded(").expect("kernel unguarded")..];
    let unguarded = &unguarded[..unguarded.find("\n}").unwrap()];
    assert!(
        unguarded.contains("trap;") || unguarded.contains("call.uni"),
        "no trap:\n{unguarded}"
    );
    assert!(
        ptx.contains("cuda_device__shims__panicking__panic_nounwind"),
        "the host-only function does not panic with its name:\n{ptx}"
    );
}
