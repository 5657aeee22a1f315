//! LLVM identifiers: quoting of global symbols and unique local names for values and blocks.
//!
//! Every value and block of a function is named before any instruction is written, so that
//! forward references (loop back edges, phi entries) always find their name.

use std::collections::{HashMap, HashSet};

use pliron::{basic_block::BasicBlock, context::Ptr, value::Value};

/// Characters LLVM accepts in an unquoted `%name` / `@name`.
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '$' | '.' | '_')
}

/// Whether `name` can follow `%` or `@` without quotes (and is not a numbered name).
pub(crate) fn is_plain_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if is_name_char(c) && !c.is_ascii_digit())
        && chars.all(is_name_char)
}

/// Escape `s` for use between double quotes in LLVM IR (`\XX` for `"`, `\` and non-printables).
pub(crate) fn escape(s: &str) -> String {
    escape_bytes(s.as_bytes())
}

/// Byte-wise version of [`escape`], for `c"..."` array constants.
pub(crate) fn escape_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' {
            out.push(b as char);
        } else {
            out.push_str(&format!("\\{b:02X}"));
        }
    }
    out
}

/// `@name`, quoted when `name` is not a plain LLVM identifier (`@"a::b"`).
pub(crate) fn global_ref(name: &str) -> String {
    if is_plain_name(name) {
        format!("@{name}")
    } else {
        format!("@\"{}\"", escape(name))
    }
}

/// `%name` for a named struct type, quoted when needed.
pub(crate) fn type_ref(name: &str) -> String {
    if is_plain_name(name) {
        format!("%{name}")
    } else {
        format!("%\"{}\"", escape(name))
    }
}

/// Turn a given name into a plain LLVM identifier.
fn sanitize(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| if is_name_char(c) { c } else { '_' })
        .collect();
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'v');
    }
    out
}

/// The names of one function: values and blocks share LLVM's local namespace.
#[derive(Default)]
pub(crate) struct LocalNames {
    used: HashSet<String>,
    values: HashMap<Value, String>,
    blocks: HashMap<Ptr<BasicBlock>, String>,
    next_value: usize,
    next_block: usize,
}

impl LocalNames {
    /// Reserve a unique local name derived from `base` (which must already be plain).
    pub(crate) fn fresh(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut k = 1;
        while self.used.contains(&name) {
            name = format!("{base}.{k}");
            k += 1;
        }
        self.used.insert(name.clone());
        name
    }

    fn generated(&mut self, prefix: &str, counter: fn(&mut Self) -> &mut usize) -> String {
        loop {
            let n = *counter(self);
            *counter(self) += 1;
            let name = format!("{prefix}{n}");
            if !self.used.contains(&name) {
                self.used.insert(name.clone());
                return name;
            }
        }
    }

    /// Name `value` `%given` (sanitised, made unique) or `%vN`.
    pub(crate) fn name_value(&mut self, value: Value, given: Option<&str>) {
        let name = match given {
            Some(given) => self.fresh(&sanitize(given)),
            None => self.generated("v", |s| &mut s.next_value),
        };
        self.values.insert(value, format!("%{name}"));
    }

    /// Make `value` print as the constant `text` wherever it is used.
    pub(crate) fn set_inline(&mut self, value: Value, text: String) {
        self.values.insert(value, text);
    }

    /// Label `block` with its given label (sanitised, made unique) or `bbN`.
    pub(crate) fn name_block(&mut self, block: Ptr<BasicBlock>, given: Option<&str>) {
        let name = match given {
            Some(given) => self.fresh(&sanitize(given)),
            None => self.generated("bb", |s| &mut s.next_block),
        };
        self.blocks.insert(block, name);
    }

    /// The operand text of `value`: `%name` or an inline constant.
    pub(crate) fn value(&self, value: &Value) -> Option<&str> {
        self.values.get(value).map(String::as_str)
    }

    /// The label of `block`, without `%`.
    pub(crate) fn block(&self, block: Ptr<BasicBlock>) -> Option<&str> {
        self.blocks.get(&block).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(global_ref("main"), "@main");
        assert_eq!(
            global_ref("llvm.nvvm.read.ptx.sreg.tid.x"),
            "@llvm.nvvm.read.ptx.sreg.tid.x"
        );
        assert_eq!(global_ref("a::b"), "@\"a::b\"");
        assert_eq!(global_ref("0"), "@\"0\"");
        assert_eq!(global_ref("q\"x\\"), "@\"q\\22x\\5C\"");
        assert_eq!(escape_bytes(b"hi\n\0"), "hi\\0A\\00");
    }

    #[test]
    fn sanitising() {
        assert_eq!(sanitize("x"), "x");
        assert_eq!(sanitize("1x"), "v1x");
        assert_eq!(sanitize("a b"), "a_b");
        assert_eq!(sanitize(""), "v");
    }

    #[test]
    fn fresh_names_are_unique() {
        let mut names = LocalNames::default();
        assert_eq!(names.fresh("x"), "x");
        assert_eq!(names.fresh("x"), "x.1");
        assert_eq!(names.fresh("x"), "x.2");
        assert_eq!(names.fresh("v0"), "v0");
        assert_eq!(names.generated("v", |s| &mut s.next_value), "v1");
    }
}
