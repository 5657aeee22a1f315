//! Builds the driver shim: a shared object named `libcuda.so` (its SONAME) that defines every
//! entry point of `driver_entry_points.txt` as a jump through a table the CPU device fills at
//! run time. Loaded first (and globally), it is the library cudarc's `dlopen("libcuda.so")`
//! finds, so every driver call of an unchanged program reaches the CPU device.
//!
//! An entry the CPU device does not implement jumps to a stub that passes its index to the
//! device's `unimplemented` handler, which names it.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=driver_entry_points.txt");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=CC");
    let names = fs::read_to_string("driver_entry_points.txt").expect("driver_entry_points.txt");
    let names: Vec<&str> = names
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let os = env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let shim = out.join("libcuda_shim.so");
    if arch != "x86_64" || os != "linux" {
        // The CPU device needs the shim; elsewhere it reports itself unavailable.
        fs::write(&shim, b"").expect("writing the empty shim");
        return;
    }
    let mut asm = String::from(
        ".data\n.p2align 3\n.globl __oxide_driver_table\n__oxide_driver_table:\n.Ltable:\n",
    );
    for index in 0..names.len() {
        writeln!(asm, "  .quad .Lstub{index}").unwrap();
    }
    asm.push_str(
        ".globl __oxide_driver_unimplemented\n__oxide_driver_unimplemented:\n.Lunimplemented:\n  .quad 0\n.text\n",
    );
    for (index, name) in names.iter().enumerate() {
        writeln!(
            asm,
            ".globl {name}\n.type {name},@function\n{name}:\n  jmp *(.Ltable+{})(%rip)\n\
             .Lstub{index}:\n  mov ${index}, %edi\n  jmp *.Lunimplemented(%rip)",
            index * 8
        )
        .unwrap();
    }
    asm.push_str(".section .note.GNU-stack,\"\",@progbits\n");
    let source = out.join("driver_shim.s");
    fs::write(&source, asm).expect("writing the shim's assembly");
    let cc = env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-shared", "-nostdlib", "-Wl,-soname,libcuda.so", "-o"])
        .arg(&shim)
        .arg(&source)
        .status()
        .unwrap_or_else(|e| panic!("running `{cc}` to build the CPU device's driver shim: {e}"));
    assert!(
        status.success(),
        "`{cc}` failed to build the CPU device's driver shim"
    );
}
