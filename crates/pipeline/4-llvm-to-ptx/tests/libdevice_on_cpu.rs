//! All of libdevice compiles for the CPU device: every NVVM intrinsic and inline PTX block its
//! functions hold is modelled (`nvvm_on_cpu`), and the object refers to nothing but the C
//! library's math functions and the half-precision conversions of Rust's compiler builtins,
//! which every Rust program links.

use gpu_toolchain::{TempDir, find_libdevice, find_llvm_tools, run};

/// A host module that takes the address of every function libdevice defines, so that linking
/// with `--only-needed` keeps all of them.
/// The module's one visible symbol; a comma in it, as in the backend's table names.
const TABLE: &str = "every libdevice function, for the host";

fn module_using_all_of_libdevice() -> String {
    let tools = find_llvm_tools(None).expect("LLVM tools");
    let libdevice = find_libdevice().expect("libdevice (scripts/test.sh installs it)");
    let dir = TempDir::new().unwrap();
    let text = dir.path.join("libdevice.ll");
    run(
        tools.llvm_link.as_ref().expect("llvm-link"),
        &[
            "-S".as_ref(),
            libdevice.as_os_str(),
            "-o".as_ref(),
            text.as_os_str(),
        ],
    )
    .unwrap();
    let text = std::fs::read_to_string(&text).unwrap();
    let mut declarations = String::new();
    let mut names = Vec::new();
    // libdevice's own helpers (`__internal_*`) are internal; its functions are `__nv_*`.
    for line in text.lines().filter(|l| l.starts_with("define ")) {
        let Some(at) = line.find("@__nv_") else {
            continue;
        };
        let open = at + line[at..].find('(').unwrap();
        let close = open + line[open..].find(')').unwrap();
        let head = &line["define ".len()..at];
        let result = head
            .split_whitespace()
            .rfind(|w| !matches!(*w, "internal" | "noundef" | "zeroext" | "signext"))
            .unwrap();
        let params: Vec<&str> = line[open + 1..close]
            .split(',')
            .filter_map(|p| p.split_whitespace().next())
            .collect();
        declarations.push_str(&format!(
            "declare {result} {}({})\n",
            &line[at..open],
            params.join(", ")
        ));
        names.push(line[at..open].to_owned());
    }
    assert!(
        names.len() > 300,
        "libdevice defines {} functions",
        names.len()
    );
    let table: Vec<String> = names.iter().map(|n| format!("ptr {n}")).collect();
    format!(
        "target datalayout = \"e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128\"\n\
         target triple = \"x86_64-unknown-linux-gnu\"\n\n\
         @\"{TABLE}\" = global [{} x ptr] [{}]\n\n{declarations}\n\
         ; What the exporter gives a module that calls libdevice: the slot's thunk of the special\n\
         ; function unit, here a stand-in.\n\
         define hidden i64 @{}(i32 %op, i64 %a, i64 %b) {{\n  ret i64 %a\n}}\n",
        names.len(),
        table.join(", "),
        kernel_abi::CPU_SFU_FUNCTION
    )
}

#[test]
fn every_libdevice_function_compiles_for_the_cpu() {
    let module = module_using_all_of_libdevice();
    let object = llvm_to_ptx::compile_cpu_object(&module, 1, None, 900, TABLE)
        .unwrap_or_else(|e| panic!("libdevice for the CPU: {e}"));
    use object::{Object as _, ObjectSymbol as _};
    let file = object::File::parse(&*object).expect("an object file");
    let undefined: Vec<String> = file
        .symbols()
        .filter(|s| s.is_undefined() && !s.name().unwrap_or("").is_empty())
        .map(|s| s.name().unwrap_or("?").to_owned())
        .collect();
    // What the C library's libm and Rust's compiler builtins define (every Rust program on
    // Linux links both); nothing of NVVM's.
    let libm = |name: &str| {
        let stem = name.strip_suffix('f').unwrap_or(name);
        matches!(
            stem,
            "fma"
                | "exp2"
                | "log2"
                | "sin"
                | "cos"
                | "sincos"
                | "tanh"
                | "sqrt"
                | "fmin"
                | "fmax"
                | "fminimum_num"
                | "fmaximum_num"
                | "rint"
                | "floor"
                | "ceil"
                | "trunc"
                | "round"
                | "roundeven"
                | "memcpy"
                | "memset"
        ) || matches!(name, "__truncsfhf2" | "__extendhfsf2")
    };
    let foreign: Vec<&String> = undefined.iter().filter(|n| !libm(n)).collect();
    assert!(
        foreign.is_empty(),
        "undefined symbols besides libm's: {foreign:?}"
    );
    // The special function unit's thunk served libdevice and became internal: the table is
    // the one symbol the object shows the program.
    let exported: Vec<String> = file
        .symbols()
        .filter(|s| s.is_definition() && s.is_global())
        .map(|s| s.name().unwrap_or("?").to_owned())
        .collect();
    assert_eq!(exported, [TABLE]);
}
