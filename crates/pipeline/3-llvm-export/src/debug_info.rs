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

pub use nvptx_attrs::debug_variable::{DebugType, DebugVariable};

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

/// The Rust name of a type.
fn type_name(ty: &DebugType) -> String {
    match ty {
        DebugType::Signed(name, _)
        | DebugType::Unsigned(name, _)
        | DebugType::Float(name, _)
        | DebugType::Pointer(name, _)
        | DebugType::Slice(name, _) => name.clone(),
        DebugType::Bool => "bool".into(),
        DebugType::Char => "char".into(),
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
    /// The `DIBasicType` / `DIDerivedType` node of each variable type.
    types: HashMap<DebugType, usize>,
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
            types: HashMap::new(),
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

    /// Whether local variables are described (only with [DeviceDebug::Full]).
    pub(crate) fn describes_variables(&self) -> bool {
        self.level == DeviceDebug::Full
    }

    /// The `DILocalVariable` of `var`, declared at `pos` in `scope`, and the `DILocation` of
    /// its declaration.
    pub(crate) fn local_variable(
        &mut self,
        var: &DebugVariable,
        pos: Option<&SourcePos>,
        scope: Scope,
    ) -> (usize, usize) {
        let file = pos.map_or(scope.file, |pos| self.file_node(&pos.file));
        let ty = self.type_node(&var.ty);
        let arg = var.arg.map(|a| format!("arg: {a}, ")).unwrap_or_default();
        let node = self.push(format!(
            "!DILocalVariable(name: \"{}\", {arg}scope: !{}, file: !{file}, line: {}, type: !{ty})",
            escape(&var.name),
            scope.subprogram,
            pos.map_or(0, |p| p.line),
        ));
        (node, self.location(pos, scope))
    }

    fn type_node(&mut self, ty: &DebugType) -> usize {
        if let Some(&id) = self.types.get(ty) {
            return id;
        }
        let basic = |name: &str, bits: u32, encoding: &str| {
            format!(
                "!DIBasicType(name: \"{}\", size: {bits}, encoding: {encoding})",
                escape(name)
            )
        };
        let node = match ty {
            DebugType::Signed(name, bits) => basic(name, *bits, "DW_ATE_signed"),
            DebugType::Unsigned(name, bits) => basic(name, *bits, "DW_ATE_unsigned"),
            DebugType::Float(name, bits) => basic(name, *bits, "DW_ATE_float"),
            DebugType::Bool => basic("bool", 8, "DW_ATE_boolean"),
            DebugType::Char => basic("char", 32, "DW_ATE_UTF"),
            DebugType::Pointer(name, pointee) => {
                let base = match pointee {
                    Some(pointee) => format!("!{}", self.type_node(pointee)),
                    None => "null".to_string(),
                };
                format!(
                    "!DIDerivedType(tag: DW_TAG_pointer_type, name: \"{}\", baseType: {base}, \
                     size: 64, align: 64, dwarfAddressSpace: 0)",
                    escape(name)
                )
            }
            DebugType::Slice(name, elem) => {
                let elem_name = elem.as_deref().map_or_else(|| "_".to_string(), type_name);
                let data = self.type_node(&DebugType::Pointer(
                    format!("*const {elem_name}"),
                    elem.clone(),
                ));
                let length = self.type_node(&DebugType::Unsigned("usize".into(), 64));
                // The structure is numbered before its members, which name it as their scope.
                let id = self.push(String::new());
                let member = |field: &str, ty: usize, offset: u32| {
                    format!(
                        "!DIDerivedType(tag: DW_TAG_member, name: \"{field}\", scope: !{id}, \
                         baseType: !{ty}, size: 64, align: 64, offset: {offset})"
                    )
                };
                let data_member = self.push(member("data_ptr", data, 0));
                let length_member = self.push(member("length", length, 64));
                let elements = self.push(format!("!{{!{data_member}, !{length_member}}}"));
                self.nodes[id] = format!(
                    "!DICompositeType(tag: DW_TAG_structure_type, name: \"{}\", size: 128, \
                     align: 64, elements: !{elements})",
                    escape(name)
                );
                self.types.insert(ty.clone(), id);
                return id;
            }
        };
        let id = self.push(node);
        self.types.insert(ty.clone(), id);
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
    fn variables_round_trip_and_become_nodes() {
        let w = DebugVariable {
            name: "w".into(),
            arg: None,
            ty: DebugType::Pointer(
                "&[u8; 4]".into(),
                Some(Box::new(DebugType::Unsigned("u8".into(), 8))),
            ),
        };
        let n = DebugVariable {
            name: "n".into(),
            arg: Some(2),
            ty: DebugType::Signed("i32".into(), 32),
        };
        let untyped = DebugVariable {
            name: "p".into(),
            arg: None,
            ty: DebugType::Pointer("*const Foo".into(), None),
        };
        let xs = DebugVariable {
            name: "xs".into(),
            arg: Some(1),
            ty: DebugType::Slice(
                "&[f32]".into(),
                Some(Box::new(DebugType::Float("f32".into(), 32))),
            ),
        };
        for var in [&w, &n, &untyped, &xs] {
            assert_eq!(DebugVariable::decode(&var.encode()).as_ref(), Some(var));
        }
        assert_eq!(DebugVariable::decode("x"), None);
        assert_eq!(
            DebugVariable::decode(&format!("{}\u{1f}extra", n.encode())),
            None
        );

        let mut info = DebugInfo::new(DeviceDebug::Full, Path::new("/w"), "src/lib.rs");
        assert!(info.describes_variables());
        let pos = SourcePos {
            file: "src/lib.rs".into(),
            line: 4,
            column: 9,
        };
        let scope = info.subprogram("k", "k", &pos);
        let (wn, wl) = info.local_variable(&w, Some(&pos), scope);
        let (nn, _) = info.local_variable(&n, Some(&pos), scope);
        let (pn, _) = info.local_variable(&untyped, None, scope);
        let (xn, _) = info.local_variable(&xs, Some(&pos), scope);
        let text = info.write();
        let node_text = |id: &str| -> String {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{id} = ")))
                .unwrap_or_else(|| panic!("{id} in {text}"))
                .to_string()
        };
        let field = |t: &str, name: &str| -> String {
            t.split(&format!("{name}: "))
                .nth(1)
                .unwrap()
                .split([',', ')'])
                .next()
                .unwrap()
                .to_string()
        };
        let slice = node_text(&field(&node_text(&format!("!{xn}")), "type"));
        assert!(
            slice.starts_with(
                "!DICompositeType(tag: DW_TAG_structure_type, name: \"&[f32]\", size: 128"
            ),
            "{text}"
        );
        let elements = node_text(&field(&slice, "elements"));
        let members: Vec<String> = elements
            .trim_matches(|c| c == '!' || c == '{' || c == '}')
            .split(", ")
            .map(|m| node_text(&format!("!{}", m.trim_start_matches('!'))))
            .collect();
        assert!(
            members[0].contains("name: \"data_ptr\"") && members[0].contains("offset: 0"),
            "{text}"
        );
        assert!(
            members[1].contains("name: \"length\"") && members[1].contains("offset: 64"),
            "{text}"
        );
        let data = node_text(&field(&members[0], "baseType"));
        assert!(
            data.contains("DW_TAG_pointer_type, name: \"*const f32\""),
            "{text}"
        );
        let sp = scope.subprogram;
        assert!(
            text.contains(&format!(
                "!{wn} = !DILocalVariable(name: \"w\", scope: !{sp}, file: !1, line: 4, type: !"
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "!{wl} = !DILocation(line: 4, column: 9, scope: !{sp})"
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!("!{nn} = !DILocalVariable(name: \"n\", arg: 2, ")),
            "{text}"
        );
        assert!(
            text.contains("!DIBasicType(name: \"u8\", size: 8, encoding: DW_ATE_unsigned)"),
            "{text}"
        );
        assert!(
            text.contains("!DIBasicType(name: \"i32\", size: 32, encoding: DW_ATE_signed)"),
            "{text}"
        );
        assert!(
            text.contains("DW_TAG_pointer_type, name: \"*const Foo\", baseType: null, size: 64"),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "!{pn} = !DILocalVariable(name: \"p\", scope: !{sp}, file: !1, line: 0"
            )),
            "{text}"
        );
        assert!(!DebugInfo::new(DeviceDebug::Lines, Path::new("/w"), "a.rs").describes_variables());
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
