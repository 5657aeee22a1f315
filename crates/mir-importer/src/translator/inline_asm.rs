//! Inline `asm!` in device code. Device code is compiled from the host's MIR, so assembly is
//! x86 assembly. Its few pure arithmetic forms that crates use as fast paths (`libm`'s
//! `sqrtss`/`sqrtsd` and FMA instructions) are recognised here by their template and become
//! the `mir.math` operation they compute, exactly rounded like the instruction. Anything else
//! is a build error naming the template.
//!
//! These usually arrive through the `mir_importer::shims` table, which swaps the whole function
//! holding them; a release build inlines such small functions into their callers at the MIR
//! level, so the assembly then turns up here instead.

use dialect_mir::ops::MathFn;
use rustc_public::mir::InlineAsmOperand;

use super::body::FnTranslator;
use super::error::{TResult, unsupported};

/// A recognised template (placeholders as `{N}`, N the operand index), what it computes, and
/// which operands are its arguments, in the order of [MathFn]'s arguments. The result goes to
/// operand 0's output place.
const PURE_X86_ASM: &[(&str, MathFn, &[usize])] = &[
    ("sqrtss {0}, {0}", MathFn::Sqrt, &[0]),
    ("sqrtsd {0}, {0}", MathFn::Sqrt, &[0]),
    // Intel syntax, FMA3 "213" form: x = y * x + z.
    ("vfmadd213ss {0}, {1}, {2}", MathFn::Fma, &[1, 0, 2]),
    ("vfmadd213sd {0}, {1}, {2}", MathFn::Fma, &[1, 0, 2]),
    // FMA4: x = x * y + z.
    ("vfmaddss {0}, {0}, {1}, {2}", MathFn::Fma, &[0, 1, 2]),
    ("vfmaddsd {0}, {0}, {1}, {2}", MathFn::Fma, &[0, 1, 2]),
];

/// The template of an `asm!` as written with positional placeholders (`sqrtss {0}, {0}`), from
/// the debug form of rustc's template pieces that stable MIR gives
/// (`[String("sqrtss "), Placeholder { operand_idx: 0, modifier: None, span: .. }, ..]`).
/// `None` when it is not in that form.
pub fn template_text(pieces: &str) -> Option<String> {
    let mut text = String::new();
    let mut rest = pieces.trim().strip_prefix('[')?.strip_suffix(']')?.trim();
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("String(\"") {
            let end = after.find("\")")?;
            let literal = &after[..end];
            if literal.contains('\\') {
                return None;
            }
            text.push_str(literal);
            rest = &after[end + 2..];
        } else {
            let after = rest.strip_prefix("Placeholder { operand_idx: ")?;
            let digits = after.find(|c: char| !c.is_ascii_digit())?;
            let index: usize = after[..digits].parse().ok()?;
            let after = after[digits..].strip_prefix(", modifier: ")?;
            let modifier = if let Some(after_none) = after.strip_prefix("None") {
                rest = after_none;
                None
            } else {
                let after = after.strip_prefix("Some('")?;
                let c = after.chars().next()?;
                rest = after[c.len_utf8()..].strip_prefix("')")?;
                Some(c)
            };
            let close = rest.find('}')?;
            rest = &rest[close + 1..];
            match modifier {
                Some(c) => text.push_str(&format!("{{{index}:{c}}}")),
                None => text.push_str(&format!("{{{index}}}")),
            }
        }
        rest = rest
            .trim_start()
            .strip_prefix(',')
            .unwrap_or(rest)
            .trim_start();
    }
    Some(text)
}

impl FnTranslator<'_> {
    /// An `asm!` terminator: one of [PURE_X86_ASM] becomes its `mir.math` operation, anything
    /// else is an error.
    pub(crate) fn translate_inline_asm(
        &mut self,
        template: &str,
        operands: &[InlineAsmOperand],
        options: &str,
        destination: Option<usize>,
    ) -> TResult<()> {
        let text = template_text(template);
        let pure = options.contains("PURE") && options.contains("NOMEM");
        let known = text.as_deref().and_then(|text| {
            PURE_X86_ASM
                .iter()
                .find(|(known, ..)| *known == text)
                .filter(|_| pure)
        });
        let Some(&(name, function, order)) = known else {
            unsupported!(
                "inline `asm!`{} (assembly for the host CPU: device code is compiled from the \
                 host's MIR, so a crate that picks its code by `cfg(target_arch)` sees the \
                 host's; see docs/crates.md for the paths that have GPU versions)",
                text.map(|t| format!(" `{t}`")).unwrap_or_default()
            )
        };
        let mut values = Vec::with_capacity(order.len());
        for &index in order {
            let Some(value) = operands.get(index).and_then(|op| op.in_value.as_ref()) else {
                unsupported!("inline `asm!` `{name}` without an input for operand {index}")
            };
            let Some(value) = self.translate_operand(value)? else {
                unsupported!("inline `asm!` `{name}` with a zero-sized operand")
            };
            values.push(value);
        }
        let Some(out) = operands.first().and_then(|op| op.out_place.as_ref()) else {
            unsupported!("inline `asm!` `{name}` without an output")
        };
        let result = self.math(function, name, values, out)?;
        self.store_result(out, Some(result))?;
        self.continue_to(destination)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_read_back_with_positional_placeholders() {
        let pieces = "[String(\"sqrtss \"), Placeholder { operand_idx: 0, modifier: None, span: \
                      src/math/arch/x86.rs:13:13: 13:16 (#0) }, String(\", \"), Placeholder { \
                      operand_idx: 0, modifier: None, span: x.rs:1:1: 1:2 (#0) }]";
        assert_eq!(template_text(pieces).as_deref(), Some("sqrtss {0}, {0}"));
        let modified = "[String(\"mov \"), Placeholder { operand_idx: 1, modifier: Some('e'), \
                        span: a.rs:1:1: 1:2 (#0) }]";
        assert_eq!(template_text(modified).as_deref(), Some("mov {1:e}"));
        assert_eq!(template_text("not pieces"), None);
    }

    #[test]
    fn every_recognised_form_is_pure_arithmetic_with_in_range_operands() {
        for (text, function, order) in PURE_X86_ASM {
            assert_eq!(order.len(), function.arity(), "{text}");
            let highest = text.matches('{').count();
            assert!(order.iter().all(|&i| i < highest), "{text}");
        }
    }
}
