//! 16-bit negations computed in 32 bits, where NVIDIA's optimiser gets them wrong.
//!
//! `neg.s16` and `abs.s16` of -32768 are -32768 in PTX (the two's complement wraps). The
//! `ptxas` of CUDA 13.0 at `-O3`, which is also the JIT of the 580 drivers, computes them as if
//! they could not wrap: measured on the H200 (driver 580.159.04) with `tests/fuzz-regressions`,
//! seeds 245, 2253 and the hand-reduced 1000245 (`abs.s16` then `cvt.s64.s16` gave `0x8000`
//! instead of `0xffff_ffff_ffff_8000`) and seed 702 (`neg.s16`). The same PTX through that
//! `ptxas -O0`, or through the `ptxas` 13.5 of `nvidia-cuda-nvcc`, is right. LLVM's NVPTX
//! backend selects these instructions for every `i16` negation and absolute value (`0 - x`,
//! `wrapping_neg`, `abs_diff`, `wrapping_abs`), and offers no way to avoid them, so this pass
//! rewrites them after `llc`: the operand is sign-extended to 32 bits, negated (or made
//! absolute) there, and truncated back, which no optimiser can read as non-wrapping:
//!
//! ```text
//! abs.s16 %rs2, %rs1;
//! ```
//! becomes
//! ```text
//! { .reg .b32 %wide16; cvt.s32.s16 %wide16, %rs1; abs.s32 %wide16, %wide16; cvt.u16.u32 %rs2, %wide16; }
//! ```
//!
//! The scoped register costs nothing: ptxas keeps 16-bit values in 32-bit registers anyway.

use crate::ptx_text::{code, rewrite_bodies, rewrite_lines};

/// `ptx` with every `neg.s16` and `abs.s16` of a register computed in 32 bits, and how many
/// were.
pub fn widen_16_bit_negations(ptx: &str) -> (String, usize) {
    let mut total = 0;
    let out = rewrite_bodies(ptx, |_, body| {
        let (text, widened) = rewrite_lines(body, widened_negation)?;
        total += widened;
        Some(text)
    });
    (out, total)
}

/// The 32-bit form of `line`, when it is an unpredicated `neg.s16` or `abs.s16` of a
/// register, with the line's indentation and end.
fn widened_negation(line: &str) -> Option<String> {
    let instruction = code(line);
    let (operation, rest) = instruction.split_once(char::is_whitespace)?;
    let wide = match operation {
        "neg.s16" => "neg.s32",
        "abs.s16" => "abs.s32",
        _ => return None,
    };
    let (destination, source) = rest.trim().strip_suffix(';')?.split_once(',')?;
    let (destination, source) = (destination.trim(), source.trim());
    if !destination.starts_with('%') || !source.starts_with('%') {
        return None;
    }
    let indent = &line[..line.len() - line.trim_start().len()];
    let end = if line.ends_with('\n') { "\n" } else { "" };
    Some(format!(
        "{indent}{{ .reg .b32 %wide16; cvt.s32.s16 %wide16, {source}; {wide} %wide16, %wide16; \
         cvt.u16.u32 {destination}, %wide16; }}{end}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "\
.visible .entry k(
\t.param .u64 k_param_0
)
{
\t.reg .b16 \t%rs<5>;
\tld.param.b16 \t%rs1, [k_param_0];
\tabs.s16 \t%rs2, %rs1;
\tneg.s16 \t%rs3, %rs2;  // a comment
\tadd.s16 \t%rs4, %rs3, 1;
\tret;
}
";

    #[test]
    fn negations_of_16_bit_registers_are_computed_in_32_bits() {
        let (out, count) = widen_16_bit_negations(PTX);
        assert_eq!(count, 2);
        assert!(
            out.contains(
                "\t{ .reg .b32 %wide16; cvt.s32.s16 %wide16, %rs1; abs.s32 %wide16, %wide16; \
                 cvt.u16.u32 %rs2, %wide16; }\n"
            ),
            "{out}"
        );
        assert!(
            out.contains(
                "\t{ .reg .b32 %wide16; cvt.s32.s16 %wide16, %rs2; neg.s32 %wide16, %wide16; \
                 cvt.u16.u32 %rs3, %wide16; }\n"
            ),
            "{out}"
        );
        // Everything else is left as it was.
        assert!(out.contains("\tadd.s16 \t%rs4, %rs3, 1;\n"), "{out}");
        assert_eq!(out.lines().count(), PTX.lines().count());
    }

    #[test]
    fn other_negations_are_left_alone() {
        for line in [
            "\tneg.s32 \t%r2, %r1;\n",
            "\tneg.f32 \t%f2, %f1;\n",
            "\t@%p1 neg.s16 \t%rs2, %rs1;\n",
            "\tabs.s16 \t%rs2, 5;\n",
        ] {
            assert_eq!(widened_negation(line), None, "{line}");
        }
    }
}
