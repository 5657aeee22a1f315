//! Rust source lines on the device: the debug metadata of the LLVM IR and the `.file`/`.loc`
//! lines of the PTX for the kernel of `tests/fixtures/golden_lines`, checked in as golden files,
//! at each `--device-debug` level. Line info is on by default and must not change the code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use regex::Regex;

const FIXTURE: &str = "golden_lines";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository exists")
}

/// The stage outputs of the fixture at `level` (`None`: the default, no flag and no
/// `CUDA_OXIDE_DEVICE_DEBUG`), generated once per level.
fn stages(level: Option<&'static str>) -> PathBuf {
    static DIRS: Mutex<BTreeMap<&str, PathBuf>> = Mutex::new(BTreeMap::new());
    let mut dirs = DIRS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let name = level.unwrap_or("default");
    dirs.entry(name)
        .or_insert_with(|| {
            let repo = repo();
            let out = repo.join(format!("tests/fixtures/target/source-lines/{name}"));
            let _ = std::fs::remove_dir_all(&out);
            let mut command = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"));
            command.arg("pipeline");
            if let Some(level) = level {
                command.args(["--device-debug", level]);
            }
            let status = command
                .arg("--manifest-path")
                .arg(repo.join(format!("tests/fixtures/{FIXTURE}/Cargo.toml")))
                .arg("--out")
                .arg(&out)
                .env_remove("CUDA_OXIDE_TARGET")
                .env_remove("CUDA_OXIDE_DEVICE_DEBUG")
                // Panics as bare traps (as in a release build): the lines of the code itself.
                .env("CUDA_OXIDE_PANIC_MESSAGES", "0")
                .status()
                .expect("cargo-oxide runs");
            assert!(status.success(), "cargo oxide pipeline failed ({name})");
            out
        })
        .clone()
}

/// One stage's text, with what depends on the machine replaced: the repository's path by
/// `<repo>`, the toolchain's sources by `<rust-src>` (or `/rustc/<hash>` without the
/// `rust-src` component), mangled symbols by `_R<n>`.
fn stage(level: Option<&'static str>, extension: &str) -> String {
    let path = stages(level).join(format!("{FIXTURE}.{extension}"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let text = text.replace(&repo().display().to_string(), "<repo>");
    let text = Regex::new(r"/rustc/[0-9a-f]{40}")
        .unwrap()
        .replace_all(&text, "/rustc/<hash>")
        .into_owned();
    let text = Regex::new(r#"/[^"]*/lib/rustlib/src/rust/"#)
        .unwrap()
        .replace_all(&text, "<rust-src>/")
        .into_owned();
    let symbol = Regex::new(r"\b_R[0-9A-Za-z_]+").unwrap();
    let mut seen: Vec<String> = Vec::new();
    symbol
        .replace_all(&text, |caps: &regex::Captures| {
            let found = caps[0].to_string();
            let index = seen.iter().position(|s| *s == found).unwrap_or_else(|| {
                seen.push(found);
                seen.len() - 1
            });
            format!("_R{index}")
        })
        .into_owned()
}

/// The 1-based line of the fixture's source that contains `needle`.
fn source_line(needle: &str) -> usize {
    let source =
        std::fs::read_to_string(repo().join(format!("tests/fixtures/{FIXTURE}/src/lib.rs")))
            .expect("the fixture's source");
    source
        .lines()
        .position(|line| line.contains(needle))
        .unwrap_or_else(|| panic!("`{needle}` is not in the fixture"))
        + 1
}

/// The PTX without what line info adds: `.loc` and `.file` directives and the empty
/// `.debug_macinfo` section (the labels `llc` adds for debug information are removed by the
/// pipeline, as they would change ptxas's code).
fn code_only(ptx: &str) -> String {
    ptx.lines()
        .filter(|line| {
            let t = line.trim_start();
            !(t.starts_with(".loc")
                || t.starts_with(".file")
                || t.starts_with(".section\t.debug_macinfo"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The debug metadata about the fixture's own file, one line per node in order, with node
/// numbers replaced by what they name: the compile unit, the fixture's subprograms, and the
/// locations in them (as `line:column in function`). What other files contribute (cuda-device,
/// core) is left out: their lines move whenever their sources change.
fn fixture_metadata(ll: &str) -> String {
    let node = Regex::new(r"^!(\d+) = (.*)$").unwrap();
    let nodes: BTreeMap<String, String> = ll
        .lines()
        .filter_map(|l| {
            node.captures(l)
                .map(|c| (c[1].to_string(), c[2].to_string()))
        })
        .collect();
    let field = |text: &str, name: &str| {
        let pattern = format!("{name}: ");
        text.split(&pattern).nth(1).map(|rest| {
            rest.split([',', ')'])
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
    };
    let fixture_file = nodes
        .iter()
        .find(|(_, text)| text.contains("filename: \"golden_lines/src/lib.rs\""))
        .map(|(id, _)| format!("!{id}"))
        .expect("the fixture's DIFile");
    let mut out = Vec::new();
    let mut subprograms = BTreeMap::new();
    for (id, text) in nodes
        .iter()
        .map(|(id, t)| (id.parse::<usize>().unwrap(), t))
        .collect::<BTreeMap<_, _>>()
    {
        if text.contains("!DICompileUnit(") {
            out.push(text.replace(&fixture_file, "<fixture file>"));
        } else if text.contains("!DISubprogram(")
            && field(text, "file").as_deref() == Some(&fixture_file)
        {
            let name = field(text, "name").unwrap_or_default();
            out.push(format!(
                "subprogram {name} (linkage {}) at line {}",
                field(text, "linkageName").unwrap_or_default(),
                field(text, "line").unwrap_or_default()
            ));
            subprograms.insert(format!("!{id}"), name);
        } else if text.starts_with("!DILocation(") {
            let scope = field(text, "scope").unwrap_or_default();
            if let Some(name) = subprograms.get(&scope) {
                out.push(format!(
                    "location {}:{} in {name}",
                    field(text, "line").unwrap_or_default(),
                    field(text, "column").unwrap_or_default()
                ));
            }
        }
    }
    out.join("\n")
}

#[test]
fn llvm_ir_carries_rust_lines_by_default() {
    let ll = stage(None, "ll");
    let kernel_line = source_line("pub fn saxpy");
    let update_line = source_line("*y_i += scale");
    assert!(
        ll.contains("emissionKind: DebugDirectivesOnly"),
        "line tables only by default:\n{ll}"
    );
    assert!(
        ll.contains(&format!(
            "!DISubprogram(name: \"golden_lines::saxpy\", linkageName: \"saxpy\", scope: !1, \
             file: !1, line: {kernel_line},"
        )),
        "the kernel's subprogram:\n{ll}"
    );
    assert!(
        ll.contains(&format!("!DILocation(line: {update_line}, column: 9,")),
        "the update's line:\n{ll}"
    );
    assert!(
        ll.contains("filename: \"golden_lines/src/lib.rs\", directory: \"<repo>/tests/fixtures\""),
        "{ll}"
    );
    // Every instruction of the kernel names its line (a `switch` names it on its last line).
    let kernel = ll
        .split("define ptx_kernel void @saxpy(")
        .nth(1)
        .and_then(|rest| rest.split("\n}\n").next())
        .expect("the kernel's body");
    let without: Vec<&str> = kernel
        .lines()
        .skip(1)
        .filter(|l| l.starts_with("  ") && !l.starts_with("    ") && !l.contains("!dbg"))
        .filter(|l| !l.contains(" phi ") && !l.trim_start().starts_with("switch "))
        .collect();
    assert!(
        without.is_empty(),
        "instructions without a location: {without:#?}"
    );
    insta::assert_snapshot!("golden_lines.ll.debug", fixture_metadata(&ll));
}

#[test]
fn ptx_has_loc_lines_and_the_same_code() {
    let ptx = stage(None, "ptx");
    let update_line = source_line("*y_i += scale");
    let scale_line = source_line("a * x");
    let file = Regex::new(r#"\t\.file\t(\d+) "<repo>/tests/fixtures/golden_lines/src/lib\.rs""#)
        .unwrap()
        .captures(&ptx)
        .map(|caps| caps[1].to_string())
        .unwrap_or_else(|| panic!("no .file for the fixture:\n{ptx}"));
    assert!(
        ptx.contains(&format!("\t.loc\t{file} {update_line} 9")),
        "the update's line:\n{ptx}"
    );
    // The helper is inlined; its multiplication keeps the helper's line, inlined at the call.
    let inlined = format!(
        "golden_lines/src/lib.rs:{scale_line}:5 @[ golden_lines/src/lib.rs:{update_line}:17 ]"
    );
    assert!(
        ptx.contains(&format!("\t.loc\t{file} {scale_line} 5")) && ptx.contains(&inlined),
        "the inlined helper's line:\n{ptx}"
    );
    assert!(!ptx.contains(".debug_info"), "no DWARF at `lines`:\n{ptx}");
    assert!(
        !ptx.contains("$L__tmp") && !ptx.contains("$L__func_begin"),
        "debug labels split ptxas's blocks:\n{ptx}"
    );
    // The fixture's own lines, in order (those of cuda-device and core move whenever their
    // sources change, so they are left out of the golden file).
    let directives: Vec<String> = ptx
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix(&format!(".loc\t{file} ")))
        .map(|rest| {
            rest.split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(":")
        })
        .collect();
    insta::assert_snapshot!("golden_lines.ptx.loc", directives.join("\n"));

    // Line info changes nothing else: the code is that of a build without it.
    let none = stage(Some("none"), "ptx");
    assert!(!none.contains(".loc"), "{none}");
    assert_eq!(code_only(&ptx), code_only(&none));
    let explicit = stage(Some("lines"), "ptx");
    assert_eq!(explicit, ptx, "`--device-debug lines` is the default");

    // And so is the machine code ptxas makes of it (with `-lineinfo`, as the driver compiles
    // it, against none).
    if let Some(ptxas) = gpu_toolchain::find_ptxas() {
        let with_lines = sass(&ptxas, &ptx, "lines", true);
        let without = sass(&ptxas, &none, "none", false);
        assert_eq!(
            with_lines.keys().collect::<Vec<_>>(),
            ["saxpy", "stencil"],
            "the kernels' code sections"
        );
        assert!(with_lines == without, "line info changed the SASS");
    }
}

/// The code of each kernel in the cubin ptxas makes of `ptx` (`-lineinfo` when `lines`):
/// the bytes of its ELF section `.text.<kernel>`.
fn sass(ptxas: &Path, ptx: &str, name: &str, lines: bool) -> BTreeMap<String, Vec<u8>> {
    let dir = repo().join("tests/fixtures/target/source-lines");
    let input = dir.join(format!("{name}.ptx"));
    let cubin = dir.join(format!("{name}.cubin"));
    std::fs::write(&input, ptx).expect("writing the PTX");
    let mut command = Command::new(ptxas);
    command.arg("-arch=sm_90");
    if lines {
        command.arg("-lineinfo");
    }
    let status = command
        .arg(&input)
        .arg("-o")
        .arg(&cubin)
        .status()
        .expect("ptxas runs");
    assert!(status.success(), "ptxas rejected {}", input.display());
    let elf = std::fs::read(&cubin).expect("the cubin");
    let u16_at = |at: usize| u16::from_le_bytes(elf[at..at + 2].try_into().unwrap()) as usize;
    let u32_at = |at: usize| u32::from_le_bytes(elf[at..at + 4].try_into().unwrap()) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(elf[at..at + 8].try_into().unwrap()) as usize;
    let (headers, size, count, names) = (u64_at(0x28), u16_at(0x3a), u16_at(0x3c), u16_at(0x3e));
    let section = |i: usize| {
        let header = headers + i * size;
        (u32_at(header), u64_at(header + 0x18), u64_at(header + 0x20))
    };
    let strings = section(names).1;
    let mut code = BTreeMap::new();
    for i in 0..count {
        let (name_at, offset, len) = section(i);
        let start = strings + name_at;
        let end = start + elf[start..].iter().position(|&b| b == 0).unwrap();
        let name = String::from_utf8_lossy(&elf[start..end]).into_owned();
        if let Some(kernel) = name.strip_prefix(".text.") {
            code.insert(kernel.to_string(), elf[offset..offset + len].to_vec());
        }
    }
    code
}

#[test]
fn full_debug_is_unoptimised_with_dwarf() {
    let ll = stage(Some("full"), "ll");
    assert!(ll.contains("emissionKind: FullDebug"), "{ll}");
    assert!(ll.contains("isOptimized: false"), "{ll}");
    let ptx = stage(Some("full"), "ptx");
    assert!(ptx.contains(".target sm_90, debug"), "{ptx}");
    assert!(ptx.contains(".section\t.debug_info"), "{ptx}");
    // Not optimised: the helper stays a function of its own.
    assert!(
        ptx.contains(".func  (.param .b32 func_retval0) golden_lines__scale"),
        "{ptx}"
    );
    if let Some(ptxas) = gpu_toolchain::find_ptxas() {
        ptx_tools::assemble_with_ptxas(&ptxas, &ptx, "sm_90")
            .expect("ptxas accepts the full debug PTX");
        // The cubin the backend embeds is built with `-g` (ptxas refuses `-g -O3`).
        let cubin = ptx_tools::assemble_cubin(&ptxas, &ptx, "sm_90")
            .expect("ptxas assembles the full debug PTX to a cubin");
        assert!(
            cubin.windows(11).any(|w| w == b".debug_info"),
            "the cubin keeps the DWARF"
        );
    }
}

/// The named variables of the fixture's functions in the `.ll`, as
/// `function: name (arg N) line L type` lines, with the type as its DWARF node names it; and
/// the variables that a `#dbg_declare` record puts in a stack slot.
fn fixture_variables(ll: &str) -> (Vec<String>, Vec<String>) {
    let node = Regex::new(r"(?m)^!(\d+) = (.*)$").unwrap();
    let nodes: BTreeMap<String, String> = node
        .captures_iter(ll)
        .map(|c| (format!("!{}", &c[1]), c[2].to_string()))
        .collect();
    let field = |text: &str, name: &str| -> Option<String> {
        let pattern = format!("{name}: ");
        text.split(&pattern).nth(1).map(|rest| {
            rest.split([',', ')'])
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches('"')
                .to_string()
        })
    };
    let subprogram_name = |id: &str| -> Option<String> {
        let text = nodes.get(id)?;
        let file = nodes.get(&field(text, "file")?)?;
        file.contains("golden_lines/src/lib.rs")
            .then(|| field(text, "name").unwrap_or_default())
    };
    let type_text = |id: &str| -> String {
        let text = &nodes[id];
        let name = field(text, "name").unwrap_or_default();
        if text.starts_with("!DICompositeType(tag: DW_TAG_structure_type") {
            // `struct NAME { member: its type's name, .. }`.
            let elements = field(text, "elements").unwrap_or_default();
            let members: Vec<String> = nodes[&elements]
                .trim_matches(|c| c == '!' || c == '{' || c == '}')
                .split(", ")
                .map(|m| {
                    let member = &nodes[&format!("!{}", m.trim_start_matches('!'))];
                    let base = field(member, "baseType").unwrap_or_default();
                    format!(
                        "{}@{}: {}",
                        field(member, "name").unwrap_or_default(),
                        field(member, "offset").unwrap_or_default(),
                        field(&nodes[&base], "name").unwrap_or_default()
                    )
                })
                .collect();
            format!(
                "struct {name} size {} {{ {} }}",
                field(text, "size").unwrap_or_default(),
                members.join(", ")
            )
        } else if text.starts_with("!DIDerivedType(tag: DW_TAG_pointer_type") {
            let base = field(text, "baseType").unwrap_or_default();
            let base = nodes
                .get(&base)
                .and_then(|b| field(b, "name"))
                .unwrap_or(base);
            format!("pointer {name} to {base}")
        } else {
            format!("{name} {}", field(text, "encoding").unwrap_or_default())
        }
    };
    let mut variables = Vec::new();
    let mut ids = BTreeMap::new();
    for (id, text) in &nodes {
        if !text.starts_with("!DILocalVariable(") {
            continue;
        }
        let Some(function) = field(text, "scope").and_then(|s| subprogram_name(&s)) else {
            continue;
        };
        let arg = field(text, "arg")
            .map(|a| format!(" (arg {a})"))
            .unwrap_or_default();
        let line = format!(
            "{function}: {}{arg} line {} type {}",
            field(text, "name").unwrap_or_default(),
            field(text, "line").unwrap_or_default(),
            type_text(&field(text, "type").unwrap_or_default()),
        );
        ids.insert(id.clone(), line.clone());
        variables.push(line);
    }
    let declare =
        Regex::new(r"#dbg_declare\(ptr %[\w.]+, (!\d+), !DIExpression\(\), !\d+\)").unwrap();
    let declared = declare
        .captures_iter(ll)
        .filter_map(|c| ids.get(&c[1]).cloned())
        .collect();
    variables.sort();
    (variables, declared)
}

#[test]
fn full_debug_describes_named_locals() {
    let ll = stage(Some("full"), "ll");
    let (variables, mut declared) = fixture_variables(&ll);
    let line = |needle| source_line(needle);
    let mut expected = vec![
        format!(
            "golden_lines::saxpy: a (arg 1) line {} type f32 DW_ATE_float",
            line("pub fn saxpy")
        ),
        format!(
            "golden_lines::saxpy: x (arg 2) line {} type struct &[f32] size 128 \
             {{ data_ptr@0: *const f32, length@64: usize }}",
            line("pub fn saxpy")
        ),
        format!(
            "golden_lines::saxpy: y (arg 3) line {} type struct DisjointSlice<f32> size 128 \
             {{ data_ptr@0: *const f32, length@64: usize }}",
            line("pub fn saxpy")
        ),
        format!(
            "golden_lines::stencil: x (arg 1) line {} type struct &[f32] size 128 \
             {{ data_ptr@0: *const f32, length@64: usize }}",
            line("pub fn stencil")
        ),
        format!(
            "golden_lines::stencil: out (arg 2) line {} type struct DisjointSlice<f32> size 128 \
             {{ data_ptr@0: *const f32, length@64: usize }}",
            line("pub fn stencil")
        ),
        format!(
            "golden_lines::saxpy: y_i line {} type pointer &mut f32 to f32",
            line("if let Some(y_i)")
        ),
        format!(
            "golden_lines::scale: a (arg 1) line {} type f32 DW_ATE_float",
            line("fn scale(a: f32")
        ),
        format!(
            "golden_lines::scale: x (arg 2) line {} type f32 DW_ATE_float",
            line("fn scale(a: f32")
        ),
        format!(
            "golden_lines::stencil: t line {} type usize DW_ATE_unsigned",
            line("let t = ")
        ),
        format!(
            "golden_lines::stencil: i line {} type usize DW_ATE_unsigned",
            line("let i = index.get()")
        ),
        format!(
            "golden_lines::stencil: sum line {} type f32 DW_ATE_float",
            line("let mut sum")
        ),
        format!(
            "golden_lines::stencil: k line {} type usize DW_ATE_unsigned",
            line("for (k, w)")
        ),
        format!(
            "golden_lines::stencil: slot line {} type pointer &mut f32 to f32",
            line("if let Some(slot)")
        ),
        format!(
            "golden_lines::stencil::{{closure#0}}: j (arg 2) line {} type usize DW_ATE_unsigned",
            line("let at = |j: usize|")
        ),
        format!(
            "golden_lines::stencil: w line {} type pointer &f32 to f32",
            line("for (k, w)")
        ),
    ];
    expected.sort();
    assert_eq!(variables, expected, "{ll}");
    // Each one is declared in its stack slot, once.
    declared.sort();
    assert_eq!(declared, expected, "{ll}");
    // Other aggregates (the `ThreadIndex`es `i` of saxpy and `index` of the stencil) are not
    // described: the lists above are exact.
    assert!(
        !variables
            .iter()
            .any(|v| v.contains("saxpy: i ") || v.contains(": index ")),
        "{variables:?}"
    );
    // The PTX's DWARF holds them, and ptxas takes it (checked by
    // `full_debug_is_unoptimised_with_dwarf`).
    let ptx = stage(Some("full"), "ptx");
    assert!(ptx.contains("DW_TAG_formal_parameter"), "{ptx}");
    assert!(ptx.contains("DW_TAG_variable"), "{ptx}");
    assert!(ptx.contains("DW_TAG_pointer_type"), "{ptx}");
    assert!(ptx.contains("DW_TAG_structure_type"), "{ptx}");
    assert!(ptx.contains("DW_TAG_member"), "{ptx}");
}

#[test]
fn only_full_debug_describes_locals() {
    for level in [None, Some("lines"), Some("none")] {
        let ll = stage(level, "ll");
        assert!(
            !ll.contains("DILocalVariable") && !ll.contains("#dbg_declare"),
            "{level:?}:\n{ll}"
        );
    }
}
