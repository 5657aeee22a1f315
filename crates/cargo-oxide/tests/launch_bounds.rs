//! `#[launch_bounds]` from the attribute to the PTX: the kernels of
//! `tests/fixtures/launch_bounds` through every stage, the bounds' path checked in as golden
//! files of the dialect-mir, LLVM IR and PTX.

use std::path::{Path, PathBuf};

use regex::Regex;

mod common;

use common::{paragraph, pipeline_stages, read};

/// The stage outputs of the fixture, generated once.
fn stages() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        // Source lines have their own golden test (source_lines.rs); these snapshots are about
        // the code.
        pipeline_stages(
            "launch_bounds",
            "launch-bounds-stages",
            &["--device-debug", "none"],
        )
    })
}

/// One stage's text, mangled symbols (whose hashes depend on the machine) numbered in order.
fn stage(extension: &str) -> String {
    let text = read(&stages().join(format!("launch_bounds.{extension}")));
    let symbol = Regex::new(r"_R[0-9A-Za-z_]+").unwrap();
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

#[test]
fn dialect_mir_carries_the_bounds_on_the_kernel() {
    let text = stage("mir");
    let bounded = paragraph(&text, "mir.func @bounded");
    assert!(
        bounded.contains(
            "mir_func_max_threads: builtin.integer <256: ui32>, mir_func_min_blocks: \
             builtin.integer <2: ui32>]"
        ),
        "{bounded}"
    );
    let by_constant = paragraph(&text, "mir.func @by_constant");
    assert!(
        by_constant.contains("mir_func_max_threads: builtin.integer <128: ui32>]"),
        "{by_constant}"
    );
    assert!(
        !by_constant.contains("mir_func_min_blocks"),
        "{by_constant}"
    );
    let unbounded = paragraph(&text, "mir.func @unbounded");
    assert!(!unbounded.contains("mir_func_max_threads"), "{unbounded}");
}

#[test]
fn llvm_ir_has_nvvm_function_attributes() {
    let text = stage("ll");
    let defines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("define ptx_kernel"))
        .collect();
    insta::assert_snapshot!("launch_bounds.ll.defines", defines.join("\n"));
}

#[test]
fn ptx_has_maxntid_and_minnctapersm() {
    let text = stage("ptx");
    // Only the kernels' headers: the bodies are the golden tests' business.
    let headers: Vec<String> = ["bounded", "by_constant", "unbounded"]
        .iter()
        .map(|kernel| {
            let entry = format!(".visible .entry {kernel}(");
            let header = paragraph(&text, &entry);
            let end = header.find('{').unwrap_or(header.len());
            header[..end].trim_end().to_owned()
        })
        .collect();
    let joined = headers.join("\n\n");
    assert!(joined.contains(".maxntid 256\n.minnctapersm 2"), "{joined}");
    assert!(
        !text.contains("launch_bounds_marker"),
        "the marker call is optimised away"
    );
    insta::assert_snapshot!("launch_bounds.ptx.entries", joined);
}
