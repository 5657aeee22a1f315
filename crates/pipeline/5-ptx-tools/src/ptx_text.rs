//! Reading the PTX text `llc` writes, line by line, for every pass made after it
//! ([crate::debug_labels], [crate::faulting_checks], [crate::declared_block_dims],
//! [crate::back_edges], [crate::wide_negation]): functions, branches,
//! their headers and bodies, lines without their comments, the labels lines define and the
//! names they mention.

use std::ops::Range;

/// A line without its comment and surrounding whitespace.
pub(crate) fn code(line: &str) -> &str {
    line.split("//").next().unwrap_or(line).trim()
}

/// The label `line` defines (`$L__BB0_9:`), without its colon.
pub(crate) fn label_definition(line: &str) -> Option<&str> {
    code(line).strip_suffix(':')
}

/// The names `line` mentions outside its comment: registers, labels and symbols (runs of
/// letters, digits, `_`, `$` and `%`).
pub(crate) fn names(line: &str) -> impl Iterator<Item = &str> {
    code(line)
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '$' || c == '_' || c == '%'))
        .filter(|name| !name.is_empty())
}

/// Whether a line (as [code] leaves it) is no instruction: blank, a comment, or `.loc` line
/// info.
pub(crate) fn is_annotation(line: &str) -> bool {
    line.is_empty() || line.starts_with(".loc")
}

/// A conditional branch, `@%p4 bra $L__BB0_9;` or `@!%p4 bra.uni $L__BB0_9;`.
pub(crate) struct CondBranch<'a> {
    pub predicate: &'a str,
    pub negated: bool,
    pub target: &'a str,
}

impl<'a> CondBranch<'a> {
    pub fn parse(line: &'a str) -> Option<CondBranch<'a>> {
        let rest = code(line).strip_prefix('@')?;
        let (negated, rest) = match rest.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, rest),
        };
        let (predicate, rest) = rest.split_once(char::is_whitespace)?;
        let target = jump_target(rest.trim_start())?;
        predicate.starts_with("%p").then_some(CondBranch {
            predicate,
            negated,
            target,
        })
    }

    /// The guard as written: `%p4` or `!%p4`.
    pub fn guard(&self) -> String {
        format!("{}{}", if self.negated { "!" } else { "" }, self.predicate)
    }
}

/// The label an unguarded branch goes to (`bra.uni $L__BB0_9;` or `bra $L__BB0_9;`).
pub(crate) fn jump_target(line: &str) -> Option<&str> {
    let line = code(line);
    let rest = line
        .strip_prefix("bra.uni")
        .or_else(|| line.strip_prefix("bra"))?;
    let target = rest.trim().split(';').next()?.trim();
    (rest.starts_with(char::is_whitespace) && target.starts_with("$L")).then_some(target)
}

/// `ptx` with the body of each function (the lines between its `{` and `}`) replaced by what
/// `rewrite` returns for (the function's header lines, its body lines), or kept when it
/// returns `None`. The header runs from the line naming `.entry` or `.func` to the `{`; a
/// prototype (a header ending in `;`) has no body. Lines keep their `\n`.
pub(crate) fn rewrite_bodies(
    ptx: &str,
    mut rewrite: impl FnMut(&[&str], &[&str]) -> Option<String>,
) -> String {
    let lines: Vec<&str> = ptx.split_inclusive('\n').collect();
    let mut out = String::with_capacity(ptx.len() + 1024);
    let mut header: Option<usize> = None;
    let mut at = 0;
    while at < lines.len() {
        let line = code(lines[at]);
        if let (Some(start), "{") = (header, line) {
            let body = body_of(&lines, at);
            out.push_str(lines[at]);
            match rewrite(&lines[start..at], &lines[body.clone()]) {
                Some(text) => out.push_str(&text),
                None => lines[body.clone()].iter().for_each(|l| out.push_str(l)),
            }
            header = None;
            at = body.end;
            continue;
        }
        if line.contains(".entry ") || line.contains(".func ") {
            header = Some(at);
        }
        if line.ends_with(';') {
            header = None;
        }
        out.push_str(lines[at]);
        at += 1;
    }
    out
}

/// `body` with every line that `rewrite` replaces replaced (lines keep their `\n` unless the
/// replacement drops it), and how many were; `None` when none was.
pub(crate) fn rewrite_lines(
    body: &[&str],
    mut rewrite: impl FnMut(&str) -> Option<String>,
) -> Option<(String, usize)> {
    let mut replaced = 0;
    let text: String = body
        .iter()
        .map(|line| match rewrite(line) {
            Some(new) => {
                replaced += 1;
                new
            }
            None => line.to_string(),
        })
        .collect();
    (replaced > 0).then_some((text, replaced))
}

/// The body lines of the function whose `{` is `lines[brace]`: up to the first `}` in column
/// 0 (scopes nested in a body, call sequences and inline assembly, are indented).
fn body_of(lines: &[&str], brace: usize) -> Range<usize> {
    let end = (brace + 1..lines.len())
        .find(|&i| lines[i].trim_end() == "}")
        .unwrap_or(lines.len());
    brace + 1..end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_found_and_prototypes_skipped() {
        let ptx = "\
.extern .func (.param .b32 func_retval0) vprintf
(
\t.param .b64 vprintf_param_0
)
;
.visible .entry k(
\t.param .u64 k_param_0
)
.reqntid 32, 1, 1
{
\t{ // callseq 0, 0
\t}
\tret;
}
";
        let mut seen = Vec::new();
        let out = rewrite_bodies(ptx, |header, body| {
            seen.push((header.len(), body.len()));
            Some("\tnew;\n".to_string())
        });
        assert_eq!(seen, [(4, 3)]);
        assert!(out.ends_with(".reqntid 32, 1, 1\n{\n\tnew;\n}\n"), "{out}");
        assert!(out.starts_with(".extern .func (.param .b32 func_retval0) vprintf\n("));
    }

    #[test]
    fn labels_names_and_annotations() {
        assert_eq!(label_definition("$L__BB0_9:  // loop"), Some("$L__BB0_9"));
        assert_eq!(label_definition("\tbra.uni $L__BB0_9;"), None);
        let mentioned: Vec<_> = names("\t@%p4 bra $L__BB0_9; // $L__tmp1").collect();
        assert_eq!(mentioned, ["%p4", "bra", "$L__BB0_9"]);
        assert!(is_annotation(code("\t.loc 1 7 3  // x")));
        assert!(!is_annotation(code("\tret;")));
    }

    #[test]
    fn branches() {
        let branch = CondBranch::parse("\t@!%p4 bra.uni \t$L__BB0_9; // x").expect("a branch");
        assert_eq!(
            (branch.predicate, branch.negated, branch.target),
            ("%p4", true, "$L__BB0_9")
        );
        assert_eq!(branch.guard(), "!%p4");
        assert!(CondBranch::parse("\tbra.uni \t$L__BB0_9;").is_none());
        assert_eq!(jump_target("\tbra.uni \t$L__BB0_2;"), Some("$L__BB0_2"));
        assert_eq!(jump_target("\tbra \t$L__BB0_2;"), Some("$L__BB0_2"));
        assert_eq!(jump_target("\tbrev.b32 \t%r1, %r2;"), None);
    }
}
