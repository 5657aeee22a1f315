//! Constructs of `core` that device code must compile, through the whole backend: each is the
//! body of a helper called by its own kernel in one generated crate, built with
//! `cargo oxide build` and its PTX assembled with `ptxas` when there is one. Among them the
//! regression of the three-way comparison whose `Ordering` once reached the dialect-mir
//! verifier as an `i8` (an internal error).

use std::path::{Path, PathBuf};
use std::process::Command;

/// `(name, body)`: the body of `fn name(x: &[u32], i: usize) -> u32`.
const CASES: &[(&str, &str)] = &[
    (
        "ordering_of_integers",
        "match (x[i] as i32).cmp(&(x[0] as i32)) { core::cmp::Ordering::Less => 1, \
         core::cmp::Ordering::Equal => 2, core::cmp::Ordering::Greater => 3 }",
    ),
    ("signum", "((x[i] as i32) - 5).signum() as u32"),
    (
        "inclusive_range_step_by",
        "(1..=x[i] as i32 % 50).step_by(3).sum::<i32>() as u32",
    ),
    (
        "ordering_of_tuples",
        "((x[i], 1u8).cmp(&(x[0], 2u8)) as i8) as u32",
    ),
    (
        "max_by_total_cmp",
        "x.iter().map(|&v| v as f32).max_by(|a, b| a.total_cmp(b)).unwrap_or(0.0) as u32",
    ),
    (
        "slice_iterators",
        "x.iter().zip(x.iter().skip(1)).map(|(a, b)| a ^ b).sum()",
    ),
    (
        "array_by_value",
        "let mut s = 0; for v in [x[i], x[0], 3] { s += v; } s",
    ),
    ("array_equality", "([x[i], 1, 2] == [x[0], 1, 2]) as u32"),
    (
        "swap_and_reverse",
        "let mut a = [x[i], x[0], 3, 4]; a.swap(0, 2); a.reverse(); a[0]",
    ),
    (
        "mem_swap_replace_take",
        "let mut a = x[i]; let mut b = x[0]; core::mem::swap(&mut a, &mut b); \
         core::mem::replace(&mut a, 5) + core::mem::take(&mut b)",
    ),
    (
        "result_unwrap",
        "let r: Result<u32, i32> = Ok(x[i]); r.unwrap()",
    ),
    (
        "slice_pattern_with_rest",
        "match x { [a, rest @ ..] => a + rest.len() as u32, [] => 0 }",
    ),
    (
        "array_pattern_with_rest",
        "let [a, mid @ .., z] = [x[i], x[0], 3, 4]; a + mid[1] + z",
    ),
    (
        "maybe_uninit",
        "let mut m = core::mem::MaybeUninit::<u32>::uninit(); m.write(x[i]); unsafe { m.assume_init() }",
    ),
    (
        "volatile_and_unaligned",
        "let mut v = x[i]; let b = [1u8, 2, 3, 4, 5]; unsafe { core::ptr::write_volatile(&mut v, 3); \
         core::ptr::read_volatile(&v) + core::ptr::read_unaligned(b.as_ptr().add(1) as *const u32) }",
    ),
    (
        "copy_from_slice",
        "let mut b = [0u32; 2]; b.copy_from_slice(&x[..2]); b[1]",
    ),
    (
        "wide_division_and_conversions",
        "let a = x[i] as i128 * 1_000_000_000_000; let b = x[0] as u128 + 1; \
         ((a / 7) as f64 as u32) ^ ((b as f32) as u128 % 3) as u32",
    ),
    (
        "zeroed",
        "let z: [u32; 4] = unsafe { core::mem::zeroed() }; z[1] + x[i]",
    ),
    (
        "long_byte_slice_contains",
        "let b = [x[i] as u8; 40]; b.contains(&(x[0] as u8)) as u32",
    ),
    (
        "long_array_repeat",
        "let a = [x[i]; 2000]; a[x[0] as usize % 2000]",
    ),
    (
        "intrinsic_fallback_bodies",
        "let (lo, hi) = (x[i] as u64).carrying_mul(x[0] as u64 + 99, 5); \
         ((lo ^ hi) as u32) ^ (x[i]).funnel_shl(x[0], 7)",
    ),
    (
        "array_map_and_from_fn",
        "let a = [x[i], 1, 2].map(|v| v * 2); \
         let b: [u32; 4] = core::array::from_fn(|k| x[k] + k as u32); a[0] + b[3]",
    ),
    (
        "bool_from_byte",
        "let b: bool = unsafe { core::mem::transmute((x[i] & 1) as u8) }; b as u32",
    ),
    // Functions that the toolchain's `core` ships without MIR (neither generic nor
    // `#[inline]`): the standard library with MIR makes them compile (`cargo_oxide::sysroot`).
    (
        "str_from_utf8",
        "let b = [x[i] as u8, 0xC3, 0xA9]; match core::str::from_utf8(&b) { \
         Ok(s) => s.chars().count() as u32, Err(e) => e.valid_up_to() as u32 + 100 }",
    ),
    (
        "integer_display",
        "struct Count(u32); impl core::fmt::Write for Count { fn write_str(&mut self, s: &str) \
         -> core::fmt::Result { self.0 += s.len() as u32; Ok(()) } } let mut c = Count(0); \
         let _ = core::fmt::write(&mut c, format_args!(\"{} {}\", x[i] as usize, x[0] as i64 - 7)); c.0",
    ),
    // `TypeId` constants: pointers whose offsets are the type's hash.
    (
        "type_id_comparison",
        "fn is_f64<T: 'static>() -> bool { core::any::TypeId::of::<T>() == \
         core::any::TypeId::of::<f64>() } (is_f64::<f64>() as u32) * 2 + is_f64::<u32>() as u32 + x[i]",
    ),
    // Indexing an array of no elements: never made (the bounds check fails first), compiled.
    (
        "zero_length_array_of_tables",
        "let t: [[u32; 4]; 0] = []; if i < t.len() { t[i][1] } else { x[i] }",
    ),
    // CPU detection answers the x86-64 baseline: `std_detect` (with its MIR) over `cpuid`.
    (
        "cpu_feature_detection",
        "(std::is_x86_feature_detected!(\"avx2\") as u32) * 4 \
         + (std::is_x86_feature_detected!(\"sse4.1\") as u32) * 2 \
         + std::is_x86_feature_detected!(\"sse2\") as u32 + x[i]",
    ),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Writes the crate with one helper and one kernel per case, and returns its manifest.
fn write_crate(root: &Path) -> PathBuf {
    let dir = root.join("core_constructs");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let cuda_device = repo().join("crates/cuda-device").canonicalize().unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"core_constructs\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [dependencies]\ncuda-device = {{ path = {cuda_device:?} }}\n\n[workspace]\n"
        ),
    )
    .unwrap();
    let mut source = String::from(
        "#![allow(unused)]\n#![feature(funnel_shifts)]\n\
         use cuda_device::{DisjointSlice, kernel, thread};\n",
    );
    for (name, body) in CASES {
        source.push_str(&format!(
            "\nfn {name}(x: &[u32], i: usize) -> u32 {{\n    {body}\n}}\n\n\
             #[kernel]\npub fn kernel_{name}(x: &[u32], mut out: DisjointSlice<u32>) {{\n    \
             let i = thread::index_1d();\n    \
             if let Some(slot) = out.get_mut(i) {{\n        *slot = {name}(x, i.get());\n    }}\n}}\n"
        ));
    }
    std::fs::write(dir.join("src/lib.rs"), source).unwrap();
    dir.join("Cargo.toml")
}

#[test]
fn core_constructs_compile_to_ptx() {
    let root = repo().join("tests/fixtures/target/core-constructs");
    let manifest = write_crate(&root);
    let ptx_dir = root.join("ptx");
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
        .args(["build", "--manifest-path"])
        .arg(&manifest)
        .env("CUDA_OXIDE_TARGET_DIR", root.join("build"))
        .env("CUDA_OXIDE_PTX_DIR", &ptx_dir)
        .env_remove("CUDA_OXIDE_TARGET")
        .output()
        .expect("cargo-oxide runs");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the build failed:\n{text}");
    assert!(!text.contains("internal error"), "{text}");
    let ptx = std::fs::read_to_string(ptx_dir.join("core_constructs.ptx")).expect("the PTX");
    // Every function called is defined in the module (a fallback body or a device version
    // of a `core` function under the wrong symbol would be an unresolved `.extern`).
    assert!(
        !ptx.contains(".extern .func"),
        "unresolved functions:\n{ptx}"
    );
    for (name, _) in CASES {
        assert!(
            ptx.contains(&format!(".visible .entry kernel_{name}(")),
            "no kernel for `{name}` in the PTX"
        );
    }
    // `integer_display` formats for real (`core::fmt::write`): with panic messages (this dev
    // build's default) the formatting methods it calls through pointers must stay functions,
    // listed with their descriptors in the module's table, not be replaced by descriptors
    // (calling one then jumped into data on the GPU).
    let table = ptx
        .lines()
        .find(|line| line.contains("cuda_device__panic__FORMATTING_METHODS["))
        .expect("the table of formatting methods");
    assert!(
        table.contains("7Display3fmt"),
        "`Display::fmt` of an integer is not in the table: {table}"
    );
    if let Some(ptxas) = gpu_toolchain::find_ptxas() {
        ptx_tools::assemble_with_ptxas(&ptxas, &ptx, "sm_90").unwrap_or_else(|e| panic!("{e}"));
    }
}
