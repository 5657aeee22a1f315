//! The launch-shape attributes from the attribute to the PTX (`tests/fixtures/launch_shape`,
//! built for sm_90): `#[cluster_dims]` on the dialect-mir function, the LLVM
//! `"nvvm.cluster_dim"` attribute and PTX `.explicitcluster` / `.reqnctapercluster`, and a build
//! error for targets without clusters; `#[block_dims]` as `"nvvm.reqntid"` / PTX `.reqntid`, with
//! the bounds checks of a thread-indexed tile proved away.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::{manifest, paragraph, pipeline_stages, read, repo};

/// The stage outputs of the fixture for sm_90, generated once.
fn stages() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        pipeline_stages(
            "launch_shape",
            "launch-shape-stages",
            &["--device-debug", "none", "--arch", "sm_90"],
        )
    })
}

fn stage(extension: &str) -> String {
    read(&stages().join(format!("launch_shape.{extension}")))
}

/// The directives of the PTX entry `kernel`, between its parameters and its body.
fn entry_header(ptx: &str, kernel: &str) -> String {
    let entry = format!(".visible .entry {kernel}(");
    let begin = ptx
        .find(&entry)
        .unwrap_or_else(|| panic!("`{entry}` missing"));
    let rest = &ptx[begin..];
    let params_end = rest.find(')').expect("a parameter list");
    let body = rest.find("\n{").expect("a body");
    // Without llc's `// @name` comments.
    let lines: Vec<&str> = rest[params_end + 1..body]
        .lines()
        .map(|line| line.split("//").next().unwrap_or("").trim())
        .filter(|line| !line.is_empty())
        .collect();
    lines.join("\n")
}

#[test]
fn dialect_mir_carries_the_shape_on_the_kernel() {
    let text = stage("mir");
    let paired = paragraph(&text, "mir.func @paired");
    assert!(
        paired.contains(
            "mir_func_cluster_x: builtin.integer <2: ui32>, mir_func_cluster_y: builtin.integer \
             <1: ui32>, mir_func_cluster_z: builtin.integer <1: ui32>"
        ),
        "{paired}"
    );
    let by_constant = paragraph(&text, "mir.func @by_constant");
    assert!(
        by_constant.contains("mir_func_cluster_z: builtin.integer <2: ui32>"),
        "{by_constant}"
    );
    let single = paragraph(&text, "mir.func @single");
    assert!(!single.contains("mir_func_cluster"), "{single}");
}

#[test]
fn llvm_ir_and_ptx_have_the_cluster_shape() {
    let ll = stage("ll");
    assert!(ll.contains("\"nvvm.cluster_dim\"=\"2,1,1\""), "{ll}");
    assert!(ll.contains("\"nvvm.cluster_dim\"=\"2,1,2\""), "{ll}");
    let ptx = stage("ptx");
    assert_eq!(
        entry_header(&ptx, "paired"),
        ".explicitcluster\n.reqnctapercluster 2, 1, 1"
    );
    assert_eq!(
        entry_header(&ptx, "by_constant"),
        ".maxntid 128\n.explicitcluster\n.reqnctapercluster 2, 1, 2"
    );
    assert_eq!(entry_header(&ptx, "single"), "");
    assert!(
        !ptx.contains("cluster_dims_marker"),
        "the marker call is optimised away"
    );
}

#[test]
fn a_cluster_shape_before_sm_90_is_a_build_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-oxide"))
        .args(["build", "--arch", "sm_80", "--manifest-path"])
        .arg(manifest("launch_shape"))
        .env(
            "CUDA_OXIDE_TARGET_DIR",
            repo().join("tests/fixtures/target/launch-shape-sm80"),
        )
        .env_remove("CUDA_OXIDE_TARGET")
        .output()
        .expect("cargo-oxide runs");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the build succeeded:\n{text}");
    assert!(!text.contains("panicked"), "the compiler crashed:\n{text}");
    assert!(
        text.contains(
            "`#[cluster_dims]`: thread-block clusters need sm_90 or newer, but this build \
             targets sm_80"
        ),
        "{text}"
    );
    // The kernel is named (the first one translated).
    assert!(
        text.contains("cannot compile `launch_shape::paired`")
            || text.contains("cannot compile `launch_shape::by_constant`"),
        "the kernel is not named:\n{text}"
    );
}

/// The body of an entry in the PTX: from its `{` to the next entry or the end.
fn entry_body<'a>(ptx: &'a str, kernel: &str) -> &'a str {
    let entry = format!(".visible .entry {kernel}(");
    let begin = ptx
        .find(&entry)
        .unwrap_or_else(|| panic!("`{entry}` missing"));
    let rest = &ptx[begin + entry.len()..];
    &rest[..rest.find(".visible .entry").unwrap_or(rest.len())]
}

#[test]
fn a_block_shape_becomes_reqntid_and_bounds_the_thread_indices() {
    let text = stage("mir");
    let declared = paragraph(&text, "mir.func @tile_declared");
    assert!(
        declared.contains(
            "mir_func_block_x: builtin.integer <32: ui32>, mir_func_block_y: builtin.integer \
             <8: ui32>, mir_func_block_z: builtin.integer <1: ui32>"
        ),
        "{declared}"
    );
    let ll = stage("ll");
    assert!(ll.contains("\"nvvm.reqntid\"=\"32,8,1\""), "{ll}");
    let ptx = stage("ptx");
    assert_eq!(entry_header(&ptx, "tile_declared"), ".reqntid 32, 8, 1");
    assert_eq!(entry_header(&ptx, "tile_undeclared"), "");
    // The same tile code: its bounds checks (the index compared with the tile's 256 elements)
    // are proved away with the shape; its `blockDim_x()` is the constant. Without it, the
    // kernel is versioned on its block's size (`llvm_to_ptx::block_versioning`): the checked
    // kernel, a function the kernel calls when the block does not fit the tile, keeps both
    // checks; the kernel's copy drops the store's (`tile[ty * 32 + tx]`) and keeps the load's
    // (`tile[255 - (ty * 32 + tx)]`, which `opt` writes with `xor`, not an affine form).
    let tile_checks = |code: &str| {
        code.lines()
            .filter(|line| line.contains("setp") && line.trim_end().ends_with(", 256;"))
            .count()
    };
    let undeclared = entry_body(&ptx, "tile_undeclared");
    let undeclared = &undeclared[..undeclared.find("\n}\n").expect("the kernel's end")];
    assert!(
        undeclared.contains("call.uni __oxide_checked_tile_undeclared"),
        "{undeclared}"
    );
    assert_eq!(tile_checks(undeclared), 1, "{undeclared}");
    let checked = ptx
        .rfind(".func __oxide_checked_tile_undeclared(")
        .map(|at| &ptx[at..])
        .expect("the checked kernel");
    let checked = &checked[..checked.find("\n}\n").expect("its end")];
    assert_eq!(tile_checks(checked), 2, "{checked}");
    assert_eq!(
        tile_checks(entry_body(&ptx, "tile_declared")),
        0,
        "{}",
        entry_body(&ptx, "tile_declared")
    );
    // The kernel's own `blockDim_x()` read is the declared side.
    let function = |name: &str| {
        let start = text
            .find(&format!("mir.func @{name}:"))
            .unwrap_or_else(|| panic!("`{name}` missing"));
        let rest = &text[start + 1..];
        &text[start..start + 1 + rest.find("mir.func @").unwrap_or(rest.len())]
    };
    let undeclared = function("tile_undeclared");
    assert!(undeclared.contains("read_ptx_sreg_ntid_x"), "{undeclared}");
    let declared = function("tile_declared");
    assert!(declared.contains("read_ptx_sreg_tid_x"), "{declared}");
    assert!(!declared.contains("read_ptx_sreg_ntid_x"), "{declared}");
}
