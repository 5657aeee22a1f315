//! Inline `asm!` in device code. Device code is compiled from the host's MIR, so assembly is
//! x86 assembly. The forms that `core` and popular crates use are recognised here by their
//! template: pure arithmetic (`libm`'s `sqrtss`/`sqrtsd` and FMA instructions) becomes the
//! `mir.math` operation it computes, exactly rounded like the instruction; `core::arch`'s
//! non-temporal stores (`_mm_stream_ps` & co.) become plain stores; `cpuid` answers what an
//! x86-64 CPU with only the baseline features would ([super::x86::BASELINE_CPUID]). Anything
//! else is a build error naming the template.
//!
//! These usually arrive through the `mir_importer::shims` table, which swaps the whole function
//! holding them; a release build inlines such small functions into their callers at the MIR
//! level, so the assembly then turns up here instead.

use dialect_mir::ops::{ConstantOp, EqOp, IntCastOp, MathFn, PtrCastOp, SelectOp, StoreOp};
use pliron::builtin::types::{IntegerType, Signedness};
use pliron::r#type::Typed;
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

/// `core::arch`'s non-temporal stores (`_mm_stream_ps`, `_mm_stream_si128`, `_mm_stream_pd`,
/// `_mm_stream_si32`, `_mm_stream_si64`): operand 0 is the address, operand 1 the value. The
/// cache hint means nothing to a GPU thread; the store is a store.
const NON_TEMPORAL_STORES: &[&str] = &[
    "movntps [{0}],{1}",
    "movntpd [{0}],{1}",
    "movntdq [{0}],{1}",
    "movnti [{0}],{1:e}",
    "movnti [{0}],{1}",
];

/// `core::arch::x86_64::__cpuid_count`'s assembly: operand 0 receives `ebx`; the others are
/// `eax` (in: the leaf), `ecx` (in: the sub-leaf) and `edx`, by register.
const CPUID: &str = "mov {0:r}, rbx\ncpuid\nxchg {0:r}, rbx";

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
            // Lines of a multi-line template are joined by `\n`, which the debug form escapes;
            // any other escape is not a form recognised here.
            if literal.replace("\\n", "").contains('\\') {
                return None;
            }
            text.push_str(&literal.replace("\\n", "\n"));
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
        if let Some(text) = text.as_deref() {
            if NON_TEMPORAL_STORES.contains(&text) {
                return self.translate_asm_store(text, operands, destination);
            }
            if text == CPUID {
                return self.translate_cpuid(operands, destination);
            }
        }
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

impl FnTranslator<'_> {
    /// A non-temporal store of operand 1 at the address operand 0.
    fn translate_asm_store(
        &mut self,
        text: &str,
        operands: &[InlineAsmOperand],
        destination: Option<usize>,
    ) -> TResult<()> {
        let input = |index: usize| operands.get(index).and_then(|op| op.in_value.as_ref());
        let (Some(address), Some(value)) = (input(0), input(1)) else {
            unsupported!("inline `asm!` `{text}` without its address and value")
        };
        let (Some(address), Some(value)) = (
            self.translate_operand(address)?,
            self.translate_operand(value)?,
        ) else {
            unsupported!("inline `asm!` `{text}` with a zero-sized operand")
        };
        let value_ty = value.get_type(self.ctx);
        let value_ptr = dialect_mir::types::PtrType::get_generic(self.ctx, value_ty).into();
        let at = self
            .emit(|ctx| PtrCastOp::new(ctx, address, value_ptr))
            .result(self.ctx);
        self.emit(|ctx| StoreOp::new(ctx, value, at));
        self.continue_to(destination)
    }

    /// `cpuid`: the registers an x86-64 CPU with only the baseline features gives for the leaf
    /// in `eax` ([super::x86::BASELINE_CPUID]; zeros for any other leaf).
    fn translate_cpuid(
        &mut self,
        operands: &[InlineAsmOperand],
        destination: Option<usize>,
    ) -> TResult<()> {
        let register = |name: &str| {
            operands
                .iter()
                .position(|op| op.raw_rpr.contains(&format!("Reg(X86({name}))")))
        };
        let (Some(eax), Some(ecx), Some(edx)) = (register("ax"), register("cx"), register("dx"))
        else {
            unsupported!("inline `asm!` `cpuid` whose operands are not `eax`, `ecx` and `edx`")
        };
        let Some(leaf) = operands[eax].in_value.as_ref() else {
            unsupported!("inline `asm!` `cpuid` without a leaf in `eax`")
        };
        let Some(leaf) = self.translate_operand(leaf)? else {
            unsupported!("inline `asm!` `cpuid` with a zero-sized leaf")
        };
        let u32_ty = IntegerType::get(self.ctx, 32, Signedness::Unsigned);
        let leaf = self
            .emit(|ctx| IntCastOp::new(ctx, leaf, u32_ty.into()))
            .result(self.ctx);
        // Register `r` (eax, ebx, ecx, edx) of the answer: a chain of selects over the leaves.
        for (r, operand) in [eax, 0, ecx, edx].into_iter().enumerate() {
            let Some(place) = operands.get(operand).and_then(|op| op.out_place.as_ref()) else {
                continue;
            };
            let mut value = self
                .emit(|ctx| ConstantOp::new_int(ctx, u32_ty, 0))
                .result(self.ctx);
            for &(known, registers) in super::x86::BASELINE_CPUID {
                let known = self
                    .emit(|ctx| ConstantOp::new_int(ctx, u32_ty, u128::from(known)))
                    .result(self.ctx);
                let answer = self
                    .emit(|ctx| ConstantOp::new_int(ctx, u32_ty, u128::from(registers[r])))
                    .result(self.ctx);
                let is_leaf = self
                    .emit(|ctx| EqOp::new(ctx, leaf, known))
                    .result(self.ctx);
                value = self
                    .emit(|ctx| SelectOp::new(ctx, is_leaf, answer, value))
                    .result(self.ctx);
            }
            let ty = self.place_type(place)?;
            let ty = self.types.translate(self.ctx, ty)?;
            let value = self
                .emit(|ctx| IntCastOp::new(ctx, value, ty))
                .result(self.ctx);
            self.store_result(place, Some(value))?;
        }
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

    /// Every `asm!` of the baseline's functions (the non-temporal stores) is recognised:
    /// `core` writes them as `vps!("movntps", ",{a}")`, `[{p}]` between the two.
    #[test]
    fn every_assembly_form_of_the_baseline_is_recognised() {
        let mut forms = 0;
        for text in super::super::x86::tests::baseline_sources() {
            for (at, _) in text.match_indices("vps!(\"") {
                let rest = &text[at + 6..];
                let mnemonic = &rest[..rest.find('"').unwrap()];
                let operand = rest.split('"').nth(2).unwrap();
                let operand = operand.replace("{a", "{1");
                let form = format!("{mnemonic} [{{0}}]{operand}");
                assert!(NON_TEMPORAL_STORES.contains(&form.as_str()), "{form}");
                forms += 1;
            }
        }
        assert_eq!(forms, 5);
    }

    #[test]
    fn multi_line_templates_read_back() {
        let pieces = "[String(\"mov \"), Placeholder { operand_idx: 0, modifier: Some('r'), \
                      span: a.rs:1:1: 1:2 (#0) }, String(\", rbx\\ncpuid\\nxchg \"), Placeholder { \
                      operand_idx: 0, modifier: Some('r'), span: a.rs:1:1: 1:2 (#0) }, \
                      String(\", rbx\")]";
        assert_eq!(template_text(pieces).as_deref(), Some(CPUID));
        assert_eq!(template_text("[String(\"a\\tb\")]"), None);
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
