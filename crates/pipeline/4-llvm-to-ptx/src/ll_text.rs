//! Reading the LLVM IR text that `opt` prints, for the passes made between two `opt` runs
//! ([crate::loop_versioning]): a module's function definitions as blocks of instructions,
//! each instruction with its result name, opcode and operands, and the renaming of local
//! names that copying a block needs.
//!
//! The model is deliberately small: it reads what an instruction defines and uses (every
//! `%name` outside string literals), the operands of the integer arithmetic, comparisons,
//! casts, `phi`s and branches that loop analysis needs, and the successors of terminators;
//! everything else is kept as text and written back unchanged.

use std::collections::HashMap;

/// One function definition: its `define` line, its blocks and the `}` that ends it.
#[derive(Clone, Debug)]
pub(crate) struct Function {
    pub header: String,
    pub blocks: Vec<Block>,
}

/// A basic block: its label (without `%` or `:`) and its instructions, the last one its
/// terminator.
#[derive(Clone, Debug)]
pub(crate) struct Block {
    pub label: String,
    pub insts: Vec<Inst>,
}

/// One instruction as printed (a `switch` spans several lines).
#[derive(Clone, Debug)]
pub(crate) struct Inst {
    pub text: String,
}

/// A piece of a module: text kept as it is, or a function definition.
pub(crate) enum Piece {
    Text(String),
    Function(Function),
}

/// `ll` split into function definitions and the text between them; `None` for a function
/// whose blocks this model cannot read (an unlabelled block), which is then kept as text.
pub(crate) fn parse_module(ll: &str) -> Vec<Piece> {
    let lines: Vec<&str> = ll.split_inclusive('\n').collect();
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut at = 0;
    while at < lines.len() {
        let line = lines[at];
        if line.starts_with("define ") && line.trim_end().ends_with('{') {
            let end = (at..lines.len())
                .find(|&i| lines[i].trim_end() == "}")
                .unwrap_or(lines.len() - 1);
            match parse_function(&lines[at..=end]) {
                Some(function) => {
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    pieces.push(Piece::Function(function));
                }
                None => lines[at..=end].iter().for_each(|l| text.push_str(l)),
            }
            at = end + 1;
            continue;
        }
        text.push_str(line);
        at += 1;
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    pieces
}

/// The module text of `pieces`.
pub(crate) fn write_module(pieces: &[Piece]) -> String {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Function(function) => out.push_str(&function.to_text()),
        }
    }
    out
}

fn parse_function(lines: &[&str]) -> Option<Function> {
    let header = lines[0].trim_end().to_owned();
    let mut blocks: Vec<Block> = Vec::new();
    let mut at = 1;
    while at + 1 < lines.len() {
        let line = lines[at].trim_end();
        at += 1;
        if line.trim().is_empty() || line.trim_start().starts_with(';') {
            continue;
        }
        if !line.starts_with(' ') {
            blocks.push(Block {
                label: parse_label(line)?,
                insts: Vec::new(),
            });
            continue;
        }
        let mut text = line.trim_start().to_owned();
        if text.ends_with('[') {
            while at + 1 < lines.len() {
                let more = lines[at].trim_end();
                at += 1;
                text.push('\n');
                text.push_str(more);
                if more.trim_start().starts_with(']') {
                    break;
                }
            }
        }
        blocks.last_mut()?.insts.push(Inst { text });
    }
    (!blocks.is_empty() && blocks.iter().all(|b| !b.insts.is_empty()))
        .then_some(Function { header, blocks })
}

/// `bb11:   ; preds = ...` -> `bb11`; `"a b":` -> `"a b"`.
fn parse_label(line: &str) -> Option<String> {
    let code = line.split(';').next()?.trim_end();
    let label = code.strip_suffix(':')?;
    (!label.is_empty() && !label.contains(' ') || label.starts_with('"')).then(|| label.to_owned())
}

impl Function {
    pub fn to_text(&self) -> String {
        let mut out = format!("{}\n", self.header);
        for (i, block) in self.blocks.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&block.label);
            out.push_str(":\n");
            for inst in &block.insts {
                out.push_str("  ");
                out.push_str(&inst.text);
                out.push('\n');
            }
        }
        out.push_str("}\n");
        out
    }

    /// Block index by label.
    pub fn block_index(&self) -> HashMap<&str, usize> {
        self.blocks
            .iter()
            .enumerate()
            .map(|(i, b)| (b.label.as_str(), i))
            .collect()
    }
}

impl Block {
    pub fn terminator(&self) -> &Inst {
        self.insts.last().expect("blocks are never empty")
    }
}

impl Inst {
    /// The local name this instruction defines (`%x = ...` -> `x`).
    pub fn result(&self) -> Option<&str> {
        let rest = self.text.strip_prefix('%')?;
        let (name, after) = rest.split_once(" = ")?;
        (!name.contains(' ') || name.starts_with('"'))
            .then_some(name)
            .filter(|_| !after.is_empty())
    }

    /// The text after `%x = ` (or the whole text for an instruction without a result).
    pub fn body(&self) -> &str {
        match self.result() {
            Some(name) => &self.text[name.len() + 4..],
            None => &self.text,
        }
    }

    /// The opcode: `add`, `icmp`, `br`, `call` (also for `tail call`), ...
    pub fn opcode(&self) -> &str {
        let mut words = self
            .body()
            .split_whitespace()
            .map(|w| w.trim_end_matches(','));
        let first = words.next().unwrap_or("");
        match first {
            "tail" | "musttail" | "notail" => words.next().unwrap_or(""),
            _ => first,
        }
    }

    /// The local names this instruction uses (block labels included), in order.
    pub fn uses(&self) -> Vec<&str> {
        let body = self.body();
        let mut names = Vec::new();
        scan_locals(body, |range| names.push(&body[range]));
        names
    }

    /// The labels a terminator branches to, in order, repeats kept.
    pub fn successors(&self) -> Vec<&str> {
        let body = self.body();
        let mut labels = Vec::new();
        let mut rest = body;
        while let Some(at) = rest.find("label %") {
            let after = &rest[at + "label ".len()..];
            let len = local_len(after);
            labels.push(&after[1..len]);
            rest = &after[len..];
        }
        labels
    }

    /// `self` with each local name `rename` maps replaced.
    pub fn renamed(&self, rename: &impl Fn(&str) -> Option<String>) -> Inst {
        let mut out = String::with_capacity(self.text.len() + 16);
        let mut last = 0;
        scan_locals(&self.text, |range| {
            if let Some(new) = rename(&self.text[range.clone()]) {
                out.push_str(&self.text[last..range.start]);
                out.push_str(&new);
                last = range.end;
            }
        });
        out.push_str(&self.text[last..]);
        Inst { text: out }
    }

    /// The type of the value this instruction defines, for the common instructions whose
    /// text names it plainly (scalars and pointers); `None` otherwise.
    pub fn result_type(&self) -> Option<&str> {
        self.result()?;
        let body = self.body();
        let opcode = self.opcode();
        let plain = |ty: &str| {
            (!ty.is_empty() && !ty.contains(['<', '{', '[', '(', ' ', ','])).then_some(())
        };
        let ty: &str = match opcode {
            "icmp" | "fcmp" => {
                let (ty, _) = self.typed_operands()?;
                plain(ty)?;
                return Some("i1");
            }
            "getelementptr" | "alloca" => return Some("ptr"),
            "phi" => {
                let rest = body.strip_prefix("phi ")?;
                rest.split_whitespace().find(|w| !FLAGS.contains(w))?
            }
            "select" => {
                let (_, rest) = body.split_once(", ")?;
                rest.split_whitespace().next()?
            }
            "load" => body
                .split_whitespace()
                .skip(1)
                .find(|w| *w != "volatile" && *w != "atomic")?
                .trim_end_matches(','),
            "call" => body.split(" @").next()?.split_whitespace().last()?,
            "zext" | "sext" | "trunc" | "fpext" | "fptrunc" | "sitofp" | "uitofp" | "fptosi"
            | "fptoui" | "bitcast" | "ptrtoint" | "inttoptr" | "addrspacecast" => self.cast()?.2,
            "add" | "sub" | "mul" | "shl" | "lshr" | "ashr" | "and" | "or" | "xor" | "udiv"
            | "sdiv" | "urem" | "srem" | "fadd" | "fsub" | "fmul" | "fdiv" | "frem" | "fneg" => {
                self.typed_operands()?.0
            }
            _ => return None,
        };
        plain(ty)?;
        Some(ty)
    }

    /// The operands of a plain instruction: after the opcode, its flags and its type, the
    /// comma-separated values up to the metadata (`add nuw i64 %a, 1, !dbg !4` -> `["%a", "1"]`,
    /// type `i64`). `None` for anything with nested parentheses or brackets.
    pub fn typed_operands(&self) -> Option<(&str, Vec<&str>)> {
        let body = self.body();
        let mut words = body.splitn(2, ' ');
        words.next()?;
        let mut rest = words.next()?.trim_start();
        loop {
            let (word, after) = rest.split_once(' ')?;
            if FLAGS.contains(&word) || PREDICATES.contains(&word) {
                rest = after;
            } else {
                let ty = word;
                let operands: Vec<&str> = after
                    .split(", ")
                    .take_while(|o| !o.starts_with('!'))
                    .map(str::trim)
                    .collect();
                if operands.iter().any(|o| o.contains(['(', '[', '<', ' '])) {
                    return None;
                }
                return Some((ty, operands));
            }
        }
    }

    /// The predicate of an `icmp` (`ult`, `eq`, ...).
    pub fn icmp_predicate(&self) -> Option<&str> {
        if self.opcode() != "icmp" {
            return None;
        }
        self.body()
            .split_whitespace()
            .skip(1)
            .find(|w| PREDICATES.contains(w))
    }

    /// A cast's operand, its type and the result type (`zext nneg i32 %a to i64`).
    pub fn cast(&self) -> Option<(&str, &str, &str)> {
        let body = self.body();
        let mut words = body
            .split_whitespace()
            .skip(1)
            .filter(|w| !FLAGS.contains(w));
        let from = words.next()?;
        let value = words.next()?;
        (words.next()? == "to").then_some(())?;
        let to = words.next()?.trim_end_matches(',');
        Some((value, from, to))
    }

    /// A `phi`'s type and its (value, predecessor label) pairs.
    pub fn phi(&self) -> Option<(&str, Vec<(&str, &str)>)> {
        let body = self.body().strip_prefix("phi ")?;
        let body = body.trim_start_matches("fast ").trim_start_matches("nnan ");
        let (ty, mut rest) = body.split_once(' ')?;
        let mut entries = Vec::new();
        while let Some(open) = rest.find("[ ") {
            let close = rest[open..].find(" ]")? + open;
            let (value, label) = rest[open + 2..close].rsplit_once(", ")?;
            entries.push((value.trim(), label.trim().strip_prefix('%')?));
            rest = &rest[close + 2..];
            if !rest.starts_with(", [") {
                break;
            }
        }
        Some((ty, entries))
    }

    /// A conditional `br`'s condition and its two targets.
    pub fn cond_br(&self) -> Option<(&str, &str, &str)> {
        let rest = self.body().strip_prefix("br i1 ")?;
        let (cond, _) = rest.split_once(", label ")?;
        let succs = self.successors();
        (succs.len() == 2).then(|| (cond, succs[0], succs[1]))
    }

    /// `select i1 %c, i1 %a, i1 %b`: the three operands.
    pub fn select_i1(&self) -> Option<(&str, &str, &str)> {
        let rest = self.body().strip_prefix("select i1 ")?;
        let mut parts = rest.split(", ");
        let c = parts.next()?;
        let a = parts.next()?.strip_prefix("i1 ")?;
        let b = parts.next()?.strip_prefix("i1 ")?;
        Some((c, a, b))
    }

    /// The two `i1` operands of a conjunction (`conjunction`: `and i1 a, b`, or
    /// `select i1 a, i1 b, i1 false` as `opt` writes `a && b`) or of a disjunction (`or i1 a, b`,
    /// or `select i1 a, i1 true, i1 b`).
    pub fn logical(&self, conjunction: bool) -> Option<(&str, &str)> {
        match (self.opcode(), conjunction) {
            ("and", true) | ("or", false) => match self.typed_operands()? {
                ("i1", operands) => match operands[..] {
                    [a, b] => Some((a, b)),
                    _ => None,
                },
                _ => None,
            },
            ("select", _) => match (self.select_i1()?, conjunction) {
                ((c, a, "false"), true) => Some((c, a)),
                ((c, "true", b), false) => Some((c, b)),
                _ => None,
            },
            _ => None,
        }
    }
}

/// Instruction flags that may stand between an opcode and its type.
const FLAGS: &[&str] = &[
    "nuw", "nsw", "exact", "disjoint", "nneg", "samesign", "fast", "nnan", "ninf", "nsz", "arcp",
    "contract", "afn", "reassoc",
];

/// Integer comparison predicates.
const PREDICATES: &[&str] = &[
    "eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle",
];

/// The length of the local name at the start of `text` (`%x`, `%12`, `%"a b"`), `%` included.
fn local_len(text: &str) -> usize {
    let bytes = text.as_bytes();
    if bytes.get(1) == Some(&b'"') {
        return text[2..].find('"').map_or(text.len(), |end| end + 3);
    }
    1 + text[1..]
        .bytes()
        .take_while(|&b| b.is_ascii_alphanumeric() || b"-$._".contains(&b))
        .count()
}

/// Calls `found` with the byte range of each local name in `text` (without its `%`), skipping
/// string literals (`c"..."`, inline assembly), whose `%` are not names.
fn scan_locals(text: &str, mut found: impl FnMut(std::ops::Range<usize>)) {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'"' => {
                at += 1 + text[at + 1..].find('"').map_or(text.len(), |end| end + 1);
            }
            b'%' => {
                let len = local_len(&text[at..]);
                if len > 1 {
                    found(at + 1..at + len);
                }
                at += len.max(1);
            }
            _ => at += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_read() {
        let add = Inst {
            text: "%v48 = add nuw i64 %v384, %v47, !dbg !21".into(),
        };
        assert_eq!(add.result(), Some("v48"));
        assert_eq!(add.opcode(), "add");
        assert_eq!(add.typed_operands(), Some(("i64", vec!["%v384", "%v47"])));
        let cmp = Inst {
            text: "%c = icmp samesign ult i64 %a, 7".into(),
        };
        assert_eq!(cmp.icmp_predicate(), Some("ult"));
        assert_eq!(cmp.typed_operands(), Some(("i64", vec!["%a", "7"])));
        let phi = Inst {
            text: "%i = phi i64 [ 0, %bb11.lr.ph ], [ %v405, %bb14 ]".into(),
        };
        assert_eq!(
            phi.phi(),
            Some(("i64", vec![("0", "bb11.lr.ph"), ("%v405", "bb14")]))
        );
        let br = Inst {
            text: "br i1 %c, label %ok, label %panic, !dbg !3, !llvm.loop !9".into(),
        };
        assert_eq!(br.cond_br(), Some(("%c", "ok", "panic")));
        let zext = Inst {
            text: "%w = zext nneg i32 %v to i64, !dbg !1".into(),
        };
        assert_eq!(zext.cast(), Some(("%v", "i32", "i64")));
        let types = [
            ("%a = fadd float %x, %y, !dbg !2", Some("float")),
            ("%a = load float, ptr %p, align 4", Some("float")),
            (
                "%a = tail call noundef range(i32 0, 9) i32 @f(i32 %x)",
                Some("i32"),
            ),
            ("%a = select i1 %c, i64 %x, i64 %y", Some("i64")),
            ("%a = icmp ult i64 %x, %y", Some("i1")),
            ("%a = fadd <2 x float> %x, %y", None),
            ("%a = extractvalue { i64, i1 } %p, 0", None),
        ];
        for (text, ty) in types {
            assert_eq!(Inst { text: text.into() }.result_type(), ty, "{text}");
        }
    }

    #[test]
    fn renaming_skips_strings() {
        let call = Inst {
            text: r#"call void asm "mov.u32 %r1, $0;", "r"(i32 %r1)"#.into(),
        };
        let renamed = call.renamed(&|n| (n == "r1").then(|| "x.r1".to_owned()));
        assert_eq!(
            renamed.text,
            r#"call void asm "mov.u32 %r1, $0;", "r"(i32 %x.r1)"#
        );
    }

    #[test]
    fn functions_round_trip() {
        let ll = "target triple = \"nvptx64-nvidia-cuda\"\n\ndefine void @f(i32 %n) {\nentry:\n  switch i32 %n, label %a [\n    i32 0, label %b\n  ]\n\na:                                                ; preds = %entry\n  ret void\n\nb:\n  ret void\n}\n\ndeclare void @g()\n";
        let pieces = parse_module(ll);
        let Piece::Function(f) = &pieces[1] else {
            panic!("no function")
        };
        assert_eq!(f.blocks.len(), 3);
        assert_eq!(f.blocks[0].terminator().successors(), vec!["a", "b"]);
        let again = write_module(&pieces);
        assert_eq!(parse_module(&again).len(), pieces.len());
        assert!(again.contains("  switch i32 %n, label %a [\n    i32 0, label %b\n  ]\n"));
    }
}
