//! Source lines for the device: LLVM debug metadata built from the ops' [Location]s.
//!
//! The importer gives every op the Rust source position it was translated from, and every
//! function a [Location::Named] with its Rust name (see docs/debugging.md). With
//! [DeviceDebug::Lines] (the default of the pipeline, like nvcc's `-lineinfo`) the module gets
//! a `DICompileUnit` with `emissionKind: DebugDirectivesOnly`, a `DISubprogram` per defined
//! function and a `DILocation` on each instruction: `llc` then writes `.file`/`.loc` directives
//! into the PTX and nothing else. [DeviceDebug::Full] (like `-G`) asks for `FullDebug`, so `llc`
//! also writes the DWARF sections, and the pipeline turns optimisation off.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use pliron::context::Context;
use pliron::location::{Location, Source};
use pliron::uniqued_any;

use crate::naming::escape;

/// How much source information the device code carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DeviceDebug {
    /// No debug metadata: the PTX has no `.loc`.
    None,
    /// Line tables only (`.file`/`.loc` in the PTX), optimisation unchanged, like nvcc's
    /// `-lineinfo`. The default of `cargo oxide`.
    #[default]
    Lines,
    /// Full debug information for stepping through a kernel (DWARF sections in the PTX,
    /// `opt`/`llc` at `-O0`, the driver compiles with `-G`), like nvcc's `-G`.
    Full,
}

impl DeviceDebug {
    /// The spellings [DeviceDebug::parse] accepts, for messages.
    pub const CHOICES: &'static str = "`none`, `lines` or `full`";

    /// `none`, `lines` or `full` (any case, surrounding blanks ignored).
    pub fn parse(value: &str) -> Option<DeviceDebug> {
        match value.trim().to_ascii_lowercase().as_str() {
            "none" => Some(DeviceDebug::None),
            "lines" => Some(DeviceDebug::Lines),
            "full" => Some(DeviceDebug::Full),
            _ => None,
        }
    }

    /// Whether any debug metadata is written.
    pub fn enabled(self) -> bool {
        self != DeviceDebug::None
    }

    fn emission_kind(self) -> &'static str {
        match self {
            DeviceDebug::Full => "FullDebug",
            _ => "DebugDirectivesOnly",
        }
    }
}

impl fmt::Display for DeviceDebug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceDebug::None => "none",
            DeviceDebug::Lines => "lines",
            DeviceDebug::Full => "full",
        })
    }
}

/// A source position: file (as rustc names it), line and column (1-based).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SourcePos {
    pub(crate) file: PathBuf,
    pub(crate) line: u32,
    pub(crate) column: u32,
}

/// The position of a [Location::SrcPos] (through [Location::Named] and the first of a
/// [Location::Fused]); `None` when unknown.
pub(crate) fn source_pos(ctx: &Context, loc: &Location) -> Option<SourcePos> {
    match loc {
        Location::SrcPos {
            src: Source::File(key),
            pos,
        } => Some(SourcePos {
            file: uniqued_any::get(ctx, *key).clone(),
            line: u32::try_from(pos.line).ok().filter(|&l| l > 0)?,
            column: u32::try_from(pos.column).unwrap_or(0),
        }),
        Location::Named { child_loc, .. } => source_pos(ctx, child_loc),
        Location::Fused { locations, .. } => locations.iter().find_map(|l| source_pos(ctx, l)),
        Location::CallSite { callee, .. } => source_pos(ctx, callee),
        _ => None,
    }
}

/// The name of a [Location::Named].
pub(crate) fn location_name(loc: &Location) -> Option<&str> {
    match loc {
        Location::Named { name, .. } => Some(name),
        _ => None,
    }
}

/// A function's `DISubprogram` and the `DIFile` it is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Scope {
    pub(crate) subprogram: usize,
    file: usize,
}

/// The metadata nodes of one module, numbered in order of creation.
pub(crate) struct DebugInfo {
    level: DeviceDebug,
    nodes: Vec<String>,
    files: HashMap<PathBuf, usize>,
    locations: HashMap<(u32, u32, usize), usize>,
    /// The `DILexicalBlockFile` of each (subprogram, file) pair.
    block_files: HashMap<(usize, usize), usize>,
    comp_dir: PathBuf,
    compile_unit: usize,
    subroutine_type: usize,
}

impl DebugInfo {
    /// The compile unit of a module whose relative source paths are relative to `comp_dir`,
    /// with `main_file` as the unit's file (the crate root, or the first file seen).
    pub(crate) fn new(level: DeviceDebug, comp_dir: &Path, main_file: &str) -> DebugInfo {
        let mut info = DebugInfo {
            level,
            nodes: Vec::new(),
            files: HashMap::new(),
            locations: HashMap::new(),
            block_files: HashMap::new(),
            comp_dir: comp_dir.to_path_buf(),
            compile_unit: 0,
            subroutine_type: 0,
        };
        // `!0` is the compile unit; its file follows.
        info.nodes.push(String::new());
        let file = info.file_node(Path::new(main_file));
        info.nodes[0] = format!(
            "distinct !DICompileUnit(language: DW_LANG_Rust, file: !{file}, producer: \
             \"cuda-oxide\", isOptimized: {}, runtimeVersion: 0, emissionKind: {}, \
             nameTableKind: None)",
            level != DeviceDebug::Full,
            level.emission_kind()
        );
        let empty = info.push("!{}".into());
        info.subroutine_type = info.push(format!("!DISubroutineType(types: !{empty})"));
        info
    }

    fn push(&mut self, node: String) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn file_node(&mut self, file: &Path) -> usize {
        let comp_dir = self.comp_dir.clone();
        if let Some(&id) = self.files.get(file) {
            return id;
        }
        let (dir, name) = if file.is_absolute() {
            let dir = file.parent().unwrap_or(Path::new("/"));
            let name = file.file_name().map(Path::new).unwrap_or(file);
            (dir.to_path_buf(), name.to_path_buf())
        } else {
            (comp_dir, file.to_path_buf())
        };
        let id = self.push(format!(
            "!DIFile(filename: \"{}\", directory: \"{}\")",
            escape(&name.to_string_lossy()),
            escape(&dir.to_string_lossy())
        ));
        self.files.insert(file.to_path_buf(), id);
        id
    }

    /// A `DISubprogram` for the definition of `linkage_name`, called `name` in Rust, at `pos`.
    pub(crate) fn subprogram(&mut self, name: &str, linkage_name: &str, pos: &SourcePos) -> Scope {
        let file = self.file_node(&pos.file);
        let optimized = if self.level == DeviceDebug::Full {
            ""
        } else {
            " | DISPFlagOptimized"
        };
        let node = format!(
            "distinct !DISubprogram(name: \"{}\", linkageName: \"{}\", scope: !{file}, \
             file: !{file}, line: {line}, type: !{ty}, scopeLine: {line}, \
             spFlags: DISPFlagDefinition{optimized}, unit: !{cu})",
            escape(name),
            escape(linkage_name),
            line = pos.line,
            ty = self.subroutine_type,
            cu = self.compile_unit,
        );
        Scope {
            subprogram: self.push(node),
            file,
        }
    }

    /// A `DILocation` for `pos` inside `scope`; without a position, line 0 ("no source
    /// line"). A position in another file than the function's (code a macro brought in) gets
    /// a `DILexicalBlockFile` scope naming that file.
    pub(crate) fn location(&mut self, pos: Option<&SourcePos>, scope: Scope) -> usize {
        let Some(pos) = pos else {
            return self.line(0, 0, scope.subprogram);
        };
        let file = self.file_node(&pos.file);
        let node = if file == scope.file {
            scope.subprogram
        } else if let Some(&block) = self.block_files.get(&(scope.subprogram, file)) {
            block
        } else {
            let block = self.push(format!(
                "!DILexicalBlockFile(scope: !{}, file: !{file}, discriminator: 0)",
                scope.subprogram
            ));
            self.block_files.insert((scope.subprogram, file), block);
            block
        };
        self.line(pos.line, pos.column, node)
    }

    fn line(&mut self, line: u32, column: u32, scope: usize) -> usize {
        if let Some(&id) = self.locations.get(&(line, column, scope)) {
            return id;
        }
        let id = self.push(format!(
            "!DILocation(line: {line}, column: {column}, scope: !{scope})"
        ));
        self.locations.insert((line, column, scope), id);
        id
    }

    /// The named metadata and the numbered nodes, to end the module with.
    pub(crate) fn write(&self) -> String {
        let base = self.nodes.len();
        let mut out = format!(
            "!llvm.dbg.cu = !{{!{}}}\n!llvm.module.flags = !{{!{}, !{}}}\n\n",
            self.compile_unit,
            base,
            base + 1
        );
        for (id, node) in self.nodes.iter().enumerate() {
            out.push_str(&format!("!{id} = {node}\n"));
        }
        out.push_str(&format!(
            "!{base} = !{{i32 7, !\"Dwarf Version\", i32 2}}\n"
        ));
        out.push_str(&format!(
            "!{} = !{{i32 2, !\"Debug Info Version\", i32 3}}\n",
            base + 1
        ));
        out
    }
}

/// `ptx` without the labels that `llc` writes for debug information (`$L__tmpN`,
/// `$L__func_beginN`, `$L__func_endN`) where nothing refers to them, as with
/// [DeviceDebug::Lines], which writes no DWARF sections. ptxas treats every label as a possible
/// branch target: such labels split its basic blocks and change the machine code (seen in 7 of
/// the 25 example modules), while `.loc` lines alone do not. Without them the SASS is that of
/// a build without line info.
pub fn remove_unreferenced_debug_labels(ptx: &str) -> String {
    const PREFIXES: [&str; 3] = ["$L__tmp", "$L__func_begin", "$L__func_end"];
    let label_of = |line: &str| -> Option<String> {
        let name = line.trim_end().strip_suffix(':')?;
        let number = PREFIXES.iter().find_map(|p| name.strip_prefix(p))?;
        (!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())).then(|| name.to_string())
    };
    let mut uses: HashMap<&str, usize> = HashMap::new();
    let mut rest = ptx;
    while let Some(at) = rest.find("$L__") {
        let tail = &rest[at..];
        let end = tail[1..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(tail.len(), |i| i + 1);
        *uses.entry(&tail[..end]).or_default() += 1;
        rest = &tail[end..];
    }
    let mut out = String::with_capacity(ptx.len());
    for line in ptx.split_inclusive('\n') {
        match label_of(line) {
            Some(label) if uses.get(label.as_str()) == Some(&1) => {}
            _ => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod label_tests {
    #[test]
    fn unreferenced_debug_labels_go_and_the_rest_stays() {
        let ptx = "\
$L__func_begin0:
\t.loc\t1 13 0
$L__tmp0:
\tld.param.b64 \t%rd1, [k_param_0];
$L__BB0_2:
\t@%p1 bra \t$L__BB0_2;
$L__tmp1:
$L__func_end0:
\t.section\t.debug_info\t{ .b64 $L__func_begin0 .b64 $L__func_end0 }
";
        let out = super::remove_unreferenced_debug_labels(ptx);
        assert!(
            !out.contains("$L__tmp0:") && !out.contains("$L__tmp1:"),
            "{out}"
        );
        // Referenced (here by a DWARF section) or a branch target: kept.
        assert!(out.contains("$L__func_begin0:\n") && out.contains("$L__func_end0:\n"));
        assert!(out.contains("$L__BB0_2:\n"));
        assert!(out.contains("\t.loc\t1 13 0\n"));
        assert_eq!(out.lines().count(), ptx.lines().count() - 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_levels() {
        assert_eq!(DeviceDebug::parse(" Lines "), Some(DeviceDebug::Lines));
        assert_eq!(DeviceDebug::parse("none"), Some(DeviceDebug::None));
        assert_eq!(DeviceDebug::parse("FULL"), Some(DeviceDebug::Full));
        assert_eq!(DeviceDebug::parse("yes"), None);
        assert_eq!(DeviceDebug::default(), DeviceDebug::Lines);
        assert_eq!(DeviceDebug::Full.to_string(), "full");
    }

    #[test]
    fn nodes_are_numbered_and_shared() {
        let dir = Path::new("/work/app");
        let mut info = DebugInfo::new(DeviceDebug::Lines, dir, "src/main.rs");
        let pos = SourcePos {
            file: "src/main.rs".into(),
            line: 7,
            column: 1,
        };
        let scope = info.subprogram("add", "add", &pos);
        let sp = scope.subprogram;
        let at = |line| SourcePos {
            line,
            column: 5,
            ..pos.clone()
        };
        let a = info.location(Some(&at(8)), scope);
        let b = info.location(Some(&at(8)), scope);
        assert_eq!(a, b);
        assert_ne!(info.location(Some(&at(9)), scope), a);
        let elsewhere = SourcePos {
            file: "/rustc/core/src/macros.rs".into(),
            ..at(3)
        };
        let c = info.location(Some(&elsewhere), scope);
        let none = info.location(None, scope);
        let text = info.write();
        assert!(text.starts_with("!llvm.dbg.cu = !{!0}\n"), "{text}");
        assert!(
            text.contains("!1 = !DIFile(filename: \"src/main.rs\", directory: \"/work/app\")"),
            "{text}"
        );
        assert!(text.contains("emissionKind: DebugDirectivesOnly"), "{text}");
        assert!(
            text.contains(&format!(
                "!{a} = !DILocation(line: 8, column: 5, scope: !{sp})"
            )),
            "{text}"
        );
        assert!(text.contains("!\"Debug Info Version\", i32 3}"), "{text}");
        assert!(
            text.contains(&format!(
                "!{none} = !DILocation(line: 0, column: 0, scope: !{sp})"
            )),
            "{text}"
        );
        // The subprogram's file is the unit's; the other file is named once, in the
        // lexical block file that scopes `c`.
        assert_eq!(text.matches("!DIFile(").count(), 2, "{text}");
        assert!(
            text.contains("filename: \"macros.rs\", directory: \"/rustc/core/src\""),
            "{text}"
        );
        let block = text
            .lines()
            .find(|l| l.contains("DILexicalBlockFile"))
            .and_then(|l| l.split(' ').next())
            .expect("a lexical block file")
            .to_string();
        assert!(
            text.contains(&format!(
                "!{c} = !DILocation(line: 3, column: 5, scope: {block})"
            )),
            "{text}"
        );
    }
}
