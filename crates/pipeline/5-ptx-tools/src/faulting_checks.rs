//! Failed checks that fault at the access they guard instead of branching to a trap.
//!
//! In a build without panic messages a bounds check (or any other panic condition) reaches
//! `llc` as a branch to a block holding only `llvm.trap`, and the PTX reads
//!
//! ```text
//!     setp.ge.u64     %p4, %rd6, %rd24;
//!     @%p4 bra        $L__BB12_25;          // $L__BB12_25: trap; exit;
//!     shl.b64         %rd30, %rd6, 2;
//!     add.s64         %rd31, %rd23, %rd30;
//!     ld.global.nc.b32 %r7, [%rd31];
//! ```
//!
//! ptxas never moves a load above a branch that may end the kernel, and a block holding a
//! branch is not one it predicates: a tile loop of four guarded loads
//! (`if x < width { tile[..] = input[y * width + x] }`, unrolled) issues its loads one at a
//! time, each waiting for the one before (the transpose benchmark ran at 0.78 of its CUDA C++
//! counterpart, which has no checks). [`fault_at_guarded_accesses`] removes such a branch when
//! the next thing the thread does that memory or another thread could see is a load or store
//! through a global (or generic) address, and makes every such access of the straight-line
//! stretch after the check fault instead: its base register becomes
//! `selp.b64 %oxfault0, -off, %rd31, %p4` — the access's own base when the check passed, else
//! one that makes the access touch address 0, which is never mapped. Later accesses of the
//! stretch through the same base, at most [FAULT_PAGE] bytes above the first, share that
//! selection (a failed check sends them into the first page, which is not mapped either: one
//! `selp` for `w[0]` to `w[6]`, not seven). The kernel stops with `CUDA_ERROR_ILLEGAL_ADDRESS`
//! rather than a trap (the host reports both as a fault of the kernel), and the accesses the
//! check guarded touch no memory out of bounds. The guarded block is then straight-line code,
//! and ptxas predicates it and issues the four loads together (0.98).
//!
//! The stretch holds only arithmetic, moves, conversions, comparisons that leave the branch's
//! predicate alone, loads from other state spaces (shared memory, kernel parameters) and the
//! redirected accesses; it ends at a label (another way in), a conditional branch, a call, a
//! barrier, an atomic, inline assembly or a store to another state space, and a check with no
//! access before that end stays a branch. What a program could tell apart: a fault is reported
//! after the access leaves the SM, and a thread may issue instructions that do not wait for the
//! faulting access before it stops, where a trap stops it at once. After a fault the CUDA
//! context refuses every call and its memory is released, so only memory the host reads
//! directly (mapped host memory) could show their writes; `CUDA_OXIDE_FAULTING_CHECKS=0` keeps
//! the traps.

use crate::ptx_text::{CondBranch, code, is_annotation, label_definition, names, rewrite_bodies};

/// Register name prefix of the selected addresses, one `.reg .b64 %oxfault<N>` per function.
const FAULT_REG: &str = "%oxfault";

/// Instruction roots that neither touch memory nor leave the straight line: these may lie
/// between a removed check and the access that faults in its place.
const PURE_ROOTS: &[&str] = &[
    "abs", "add", "addc", "and", "bfe", "bfi", "bfind", "brev", "clz", "cnot", "copysign", "cos",
    "cvt", "cvta", "div", "dp2a", "dp4a", "ex2", "fma", "fns", "lg2", "lop3", "mad", "mad24",
    "madc", "max", "min", "mov", "mul", "mul24", "neg", "not", "or", "popc", "prmt", "rcp", "rem",
    "rsqrt", "sad", "selp", "set", "setp", "shf", "shl", "shr", "sin", "slct", "sqrt", "sub",
    "subc", "tanh", "testp", "xor",
];

/// `ptx` with each check that can fault at the accesses it guards rewritten so (see the module
/// docs), and how many address selections (`selp`s) that added.
pub fn fault_at_guarded_accesses(ptx: &str) -> (String, usize) {
    let mut total = 0;
    let out = rewrite_bodies(ptx, |_, body| {
        let (text, redirected) = rewrite_body(body);
        total += redirected;
        (redirected > 0).then(|| format!("\t.reg .b64 \t{FAULT_REG}<{redirected}>;\n{text}"))
    });
    (out, total)
}

/// One function body (between its braces) with its checks rewritten, and how many fault
/// registers it uses.
fn rewrite_body(body: &[&str]) -> (String, usize) {
    let traps = trap_labels(body);
    let mut removed = Vec::new();
    let mut selections: Vec<Selection> = Vec::new();
    for (at, line) in body.iter().enumerate() {
        let Some(branch) = CondBranch::parse(line) else {
            continue;
        };
        if !traps.contains(&branch.target) {
            continue;
        }
        let groups = guarded_accesses(body, at, &branch);
        let claimed = groups.iter().flat_map(|g| &g.accesses).any(|(line, _)| {
            selections
                .iter()
                .any(|s| s.accesses.iter().any(|(other, _)| other == line))
        });
        if !groups.is_empty() && !claimed {
            removed.push(at);
            selections.extend(groups);
        }
    }
    // A stretch may continue in a block placed above its check: number the registers in the
    // order of the text.
    selections.sort_by_key(|s| s.accesses[0].0);
    let mut out = String::new();
    for (at, line) in body.iter().enumerate() {
        if removed.contains(&at) {
            continue;
        }
        let access = selections
            .iter()
            .enumerate()
            .find(|(_, s)| s.accesses.iter().any(|(line, _)| *line == at));
        match access {
            Some((index, selection)) => {
                let reg = format!("{FAULT_REG}{index}");
                if selection.accesses[0].0 == at {
                    out.push_str(&selection.select(&reg));
                }
                out.push_str(&selection.redirected(line, &reg));
            }
            None => out.push_str(line),
        }
    }
    (out, selections.len())
}

/// Labels of the blocks that do nothing but trap.
fn trap_labels<'a>(body: &[&'a str]) -> Vec<&'a str> {
    let mut labels = Vec::new();
    for (at, line) in body.iter().enumerate() {
        let Some(label) = label_definition(line) else {
            continue;
        };
        let first = body[at + 1..]
            .iter()
            .map(|l| code(l))
            .find(|l| !is_annotation(l));
        if first.is_some_and(|l| l == "trap;" || l == "trap; exit;") {
            labels.push(label);
        }
    }
    labels
}

/// How far above a selected fault address the other accesses of its selection may reach:
/// they touch the first page of the address space, which is never mapped.
const FAULT_PAGE: i64 = 4096;

/// Accesses through one base register that fault in a check's place, `[base+offset]` each:
/// one `selp` before the first chooses `base`, or the fault address (0 for the first access,
/// within [FAULT_PAGE] of 0 for the others) when the check failed.
struct Selection {
    base: String,
    predicate: String,
    negated: bool,
    /// (body line, offset), in the order of the stretch.
    accesses: Vec<(usize, i64)>,
}

impl Selection {
    /// Whether an access at `offset` through the same base can share this selection.
    fn admits(&self, offset: i64) -> bool {
        (0..FAULT_PAGE).contains(&offset.wrapping_sub(self.accesses[0].1))
    }

    /// The line choosing the address: `base` when the check passed, else the fault base.
    fn select(&self, reg: &str) -> String {
        let fault = self.accesses[0].1.wrapping_neg().to_string();
        let (when_true, when_false) = if self.negated {
            (self.base.as_str(), fault.as_str())
        } else {
            (fault.as_str(), self.base.as_str())
        };
        format!(
            "\tselp.b64 \t{reg}, {when_true}, {when_false}, {};\n",
            self.predicate
        )
    }

    /// The access line with its base register replaced by `reg`.
    fn redirected(&self, line: &str, reg: &str) -> String {
        let operand = format!("[{}", self.base);
        let at = line.find(&operand).expect("the access names its base");
        format!("{}[{reg}{}", &line[..at], &line[at + operand.len()..])
    }
}

/// The accesses that fault in place of the check `branch` at `body[at]`, grouped by the base
/// register they share: the global or generic loads and stores through a register address in
/// the straight-line stretch after it, which holds nothing else but pure arithmetic and loads
/// from other state spaces (no label, conditional branch, call, barrier, atomic, store to
/// another state space, or write of the branch's predicate). An unconditional branch to a
/// block that nothing else enters (no other branch names it, and the code above it does not
/// fall into it) continues the stretch there: `llc` often places the block of a guarded load
/// away from its check. Empty when the stretch holds no access, or when one of its accesses is
/// not through a register address.
fn guarded_accesses(body: &[&str], at: usize, branch: &CondBranch<'_>) -> Vec<Selection> {
    let mut selections: Vec<Selection> = Vec::new();
    // The selections later accesses may still join: their base has not been written since.
    let mut open: Vec<usize> = Vec::new();
    let mut next = at + 1;
    let mut jumps = 0;
    while let Some(line) = body.get(next) {
        let here = next;
        next += 1;
        // The user's inline assembly is left as written.
        if line.contains("begin inline asm") {
            break;
        }
        let line = code(line);
        if is_annotation(line) {
            continue;
        }
        if line.ends_with(':') || line.starts_with('@') {
            break;
        }
        let Some((opcode, operands)) = line.split_once(char::is_whitespace) else {
            break;
        };
        let mut parts = opcode.split('.');
        let root = parts.next().unwrap_or_default();
        let qualifiers: Vec<&str> = parts.collect();
        if root == "bra" {
            match sole_entry(body, operands.trim().trim_end_matches(';').trim()) {
                Some(block) if jumps < 8 => {
                    jumps += 1;
                    next = block;
                    continue;
                }
                _ => break,
            }
        }
        if writes(operands, branch.predicate) {
            break;
        }
        if root != "st" {
            open.retain(|&s| !writes(operands, &selections[s].base));
        }
        if PURE_ROOTS.contains(&root) {
            continue;
        }
        // Global or generic (no state space) accesses are redirected: address 0 of shared,
        // local, constant or parameter memory is an ordinary location. Loads from those spaces
        // change nothing another thread or the host could see, so the stretch goes on past them.
        const OTHER_SPACES: &[&str] = &["shared", "local", "const", "param", "tex", "async"];
        let global_or_generic = !qualifiers
            .iter()
            .any(|q| OTHER_SPACES.contains(q) || q.starts_with("shared"));
        if root == "ld" && !global_or_generic {
            continue;
        }
        if !(matches!(root, "ld" | "st") && global_or_generic) {
            break;
        }
        // An access the check guards must fault with it: one that cannot be redirected keeps
        // the branch.
        let Some((base, offset)) = register_address(operands) else {
            return Vec::new();
        };
        let joined = open.iter().copied().find(|&s| {
            let selection = &selections[s];
            selection.base == base && selection.admits(offset)
        });
        match joined {
            Some(s) => selections[s].accesses.push((here, offset)),
            None => {
                open.push(selections.len());
                selections.push(Selection {
                    base: base.to_string(),
                    predicate: branch.predicate.to_string(),
                    negated: branch.negated,
                    accesses: vec![(here, offset)],
                });
            }
        }
        // A load may write its own base register (`ld.global.u64 %rd5, [%rd5]`).
        if root == "ld" {
            open.retain(|&s| !writes(operands, &selections[s].base));
        }
    }
    selections
}

/// The first line of the block labelled `label` when an unconditional branch there is its only
/// way in: the label is named once in `body` besides its definition, and the instruction
/// above the definition does not fall through (an unpredicated `bra`, `ret`, `exit` or
/// `trap`).
fn sole_entry(body: &[&str], label: &str) -> Option<usize> {
    if !label.starts_with('$') {
        return None;
    }
    let defined = body
        .iter()
        .position(|line| label_definition(line) == Some(label))?;
    let named = body
        .iter()
        .flat_map(|line| names(line))
        .filter(|name| *name == label)
        .count();
    let above = body[..defined]
        .iter()
        .map(|line| code(line))
        .rfind(|line| !is_annotation(line))?;
    let root = above
        .split(|c: char| c == '.' || c == ';' || c.is_whitespace())
        .next()
        .unwrap_or_default();
    let ends_flow = matches!(root, "bra" | "ret" | "exit" | "trap");
    (named == 2 && ends_flow).then_some(defined + 1)
}

/// Whether the destination operand(s) of an instruction with `operands` name `register`.
fn writes(operands: &str, register: &str) -> bool {
    let destination = if operands.trim_start().starts_with('{') {
        operands.split('}').next().unwrap_or(operands)
    } else {
        operands.split(',').next().unwrap_or(operands)
    };
    destination
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '%' || c == '_'))
        .any(|token| token == register)
}

/// `[%rdN]` or `[%rdN+K]` (K may be negative, `+-4`): the register and K.
fn register_address(operands: &str) -> Option<(&str, i64)> {
    let inside = operands.split_once('[')?.1.split_once(']')?.0.trim();
    let (base, offset) = match inside.split_once('+') {
        Some((base, offset)) => (base.trim(), offset.trim().parse::<i64>().ok()?),
        None => (inside, 0),
    };
    let number = base.strip_prefix("%rd")?;
    (!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())).then_some((base, offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel body as `llc` writes it: two guarded loads in a row, a guarded store, and a
    /// check followed by a barrier (which must stay).
    const KERNEL: &str = "\
.visible .entry k(
\t.param .u64 .ptr .global .align 4 k_param_0,
\t.param .u64 k_param_1
)
{
\t.reg .pred \t%p<5>;
\t.reg .b32 \t%r<4>;
\t.reg .b64 \t%rd<12>;
\tld.param.b64 \t%rd1, [k_param_0];
\tld.param.b64 \t%rd2, [k_param_1];
\tsetp.ge.u64 \t%p1, %rd3, %rd2;
\t@%p1 bra \t$L__BB0_9;
\t.loc\t1 12 9
\tshl.b64 \t%rd4, %rd3, 2;
\tadd.s64 \t%rd5, %rd1, %rd4;
\tld.global.nc.b32 \t%r1, [%rd5];
\tsetp.lt.u64 \t%p2, %rd6, %rd2;
\t@!%p2 bra \t$L__BB0_9;
\tld.global.nc.b32 \t%r2, [%rd5+1056];
\tsetp.ge.u64 \t%p3, %rd7, %rd2;
\t@%p3 bra \t$L__BB0_9;
\tst.global.b32 \t[%rd8+-4], %r2;
\tsetp.ge.u64 \t%p4, %rd9, %rd2;
\t@%p4 bra \t$L__BB0_9;
\tbar.sync \t0;
\tst.global.b32 \t[%rd10], %r1;
\tret;
$L__BB0_9:                              // %panic
\t.loc\t1 20 5
\ttrap; exit;
}
";

    #[test]
    fn checks_before_global_accesses_fault_there() {
        let (out, rewritten) = fault_at_guarded_accesses(KERNEL);
        insta::assert_snapshot!(out);
        assert_eq!(rewritten, 3);
        // The check before the barrier stays a branch.
        assert!(out.contains("\t@%p4 bra \t$L__BB0_9;\n\tbar.sync"));
        assert_eq!(out.matches("bra").count(), 1);
    }

    #[test]
    fn shared_accesses_labels_and_predicate_writes_keep_the_branch() {
        let cases = [
            // Address 0 of shared memory is an ordinary location, and a store there is seen by
            // the other threads of the block: the stretch ends.
            "\t@%p1 bra \t$L__T;\n\tst.shared.b32 \t[%rd5], %r1;\n\tst.global.b32 \t[%rd6], %r1;\n",
            // Another way into the access: the check does not dominate it.
            "\t@%p1 bra \t$L__T;\n$L__BB0_3:\n\tld.global.b32 \t%r1, [%rd5];\n",
            // The predicate changes before the access.
            "\t@%p1 bra \t$L__T;\n\tsetp.eq.s32 \t%p1, %r2, 0;\n\tld.global.b32 \t%r1, [%rd5];\n",
            // An atomic is an effect this pass does not redirect.
            "\t@%p1 bra \t$L__T;\n\tatom.global.add.u32 \t%r1, [%rd5], 1;\n",
            // A call may have effects before any access.
            "\t@%p1 bra \t$L__T;\n\tcall.uni f, ();\n\tld.global.b32 \t%r1, [%rd5];\n",
            // An address that is not a 64-bit register.
            "\t@%p1 bra \t$L__T;\n\tld.global.b32 \t%r1, [table+8];\n",
            // Inline assembly stays as the user wrote it.
            "\t@%p1 bra \t$L__T;\n\t// begin inline asm\n\tld.global.b32 \t%r1, [%rd5];\n\t// end inline asm\n",
        ];
        for case in cases {
            let ptx = format!(".visible .entry k()\n{{\n{case}\tret;\n$L__T:\n\ttrap; exit;\n}}\n");
            let (out, rewritten) = fault_at_guarded_accesses(&ptx);
            assert_eq!((out.as_str(), rewritten), (ptx.as_str(), 0), "{case}");
        }
    }

    #[test]
    fn every_access_of_the_stretch_faults_with_the_check() {
        // vecadd: one check of `i` against both inputs' lengths guards both loads; the store
        // after them is in the same stretch.
        let ptx = ".visible .entry k()\n{\n\t@%p2 bra \t$L__T;\n\
                   \tld.global.nc.b32 \t%r4, [%rd13];\n\tadd.s64 \t%rd14, %rd4, %rd11;\n\
                   \tld.global.nc.b32 \t%r5, [%rd14];\n\tadd.rn.f32 \t%r6, %r4, %r5;\n\
                   \tst.global.b32 \t[%rd12], %r6;\n\tbar.sync \t0;\n\
                   \tst.global.b32 \t[%rd15], %r6;\n\tret;\n$L__T:\n\ttrap; exit;\n}\n";
        let (out, redirected) = fault_at_guarded_accesses(ptx);
        assert_eq!(redirected, 3, "{out}");
        for (reg, base) in [(0, "%rd13"), (1, "%rd14"), (2, "%rd12")] {
            let select = format!("selp.b64 \t%oxfault{reg}, 0, {base}, %p2;");
            assert!(out.contains(&select), "{select} in {out}");
        }
        // After the barrier the stretch has ended.
        assert!(out.contains("st.global.b32 \t[%rd15], %r6;"), "{out}");
        assert!(!out.contains("bra"), "{out}");
    }

    #[test]
    fn the_stretch_follows_a_jump_to_a_block_nothing_else_enters() {
        // sgemm's loop: llc placed the guarded load's block above the loop header.
        let body = "\
$L__BB8_7:
\tld.global.nc.b32 \t%r76, [%rd40];
$L__BB8_8:
\tst.shared.b32 \t[%rd7], %r76;
\t@%p6 bra \t$L__BB8_2;
\tbra.uni \t$L__BB8_9;
$L__BB8_2:
\tsetp.ge.u64 \t%p5, %rd39, %rd17;
\t@%p5 bra \t$L__BB8_13;
\tbra.uni \t$L__BB8_7;
$L__BB8_13:
\ttrap; exit;
$L__BB8_9:
\tret;
";
        let ptx = format!(".visible .entry k()\n{{\n\tbra.uni \t$L__BB8_2;\n{body}}}\n");
        let (out, redirected) = fault_at_guarded_accesses(&ptx);
        assert_eq!(redirected, 1, "{out}");
        assert!(
            out.contains(
                "$L__BB8_7:\n\tselp.b64 \t%oxfault0, 0, %rd40, %p5;\n\
                 \tld.global.nc.b32 \t%r76, [%oxfault0];"
            ),
            "{out}"
        );
        assert!(!out.contains("bra \t$L__BB8_13"), "{out}");
        // The same block entered from a second place (a fall-through) keeps the check.
        let entered_twice = ptx.replace(
            "\tbra.uni \t$L__BB8_2;\n$L__BB8_7:",
            "\tadd.s64 \t%rd1, %rd1, 1;\n$L__BB8_7:",
        );
        assert_eq!(fault_at_guarded_accesses(&entered_twice).1, 0);
    }

    #[test]
    fn loads_from_shared_memory_do_not_end_the_stretch() {
        // transpose's second half: a value read from the shared tile, stored to the output.
        let ptx = ".visible .entry k()\n{\n\t@%p17 bra \t$L__T;\n\
                   \tld.shared.b32 \t%r11, [%rd56];\n\tst.global.b32 \t[%rd58], %r11;\n\
                   \tret;\n$L__T:\n\ttrap; exit;\n}\n";
        let (out, redirected) = fault_at_guarded_accesses(ptx);
        assert_eq!(redirected, 1, "{out}");
        assert!(
            out.contains(
                "\tld.shared.b32 \t%r11, [%rd56];\n\tselp.b64 \t%oxfault0, 0, %rd58, %p17;\n"
            ),
            "{out}"
        );
    }

    #[test]
    fn accesses_through_one_base_share_its_selection() {
        // stencil's weights: `w[0]` .. `w[2]` after one check of `w.len()`; then a rewritten
        // base, an offset below the first and one a page away, which need selections of their
        // own.
        let ptx = ".visible .entry k()\n{\n\t@%p7 bra \t$L__T;\n\
                   \tld.global.nc.b32 \t%r5, [%rd6];\n\tld.shared.b32 \t%r6, [%rd4];\n\
                   \tld.global.nc.b32 \t%r9, [%rd6+4];\n\tld.global.nc.b32 \t%r13, [%rd6+8];\n\
                   \tld.global.nc.b32 \t%r14, [%rd6+-4];\n\tld.global.nc.b32 \t%r15, [%rd6+4096];\n\
                   \tadd.s64 \t%rd6, %rd6, 64;\n\tst.global.b32 \t[%rd6+8], %r13;\n\
                   \tret;\n$L__T:\n\ttrap; exit;\n}\n";
        let (out, selections) = fault_at_guarded_accesses(ptx);
        assert_eq!(selections, 4, "{out}");
        for expected in [
            "\tselp.b64 \t%oxfault0, 0, %rd6, %p7;\n\tld.global.nc.b32 \t%r5, [%oxfault0];",
            "\tld.global.nc.b32 \t%r9, [%oxfault0+4];\n\tld.global.nc.b32 \t%r13, [%oxfault0+8];",
            "\tselp.b64 \t%oxfault1, 4, %rd6, %p7;\n\tld.global.nc.b32 \t%r14, [%oxfault1+-4];",
            "\tselp.b64 \t%oxfault2, -4096, %rd6, %p7;\n\tld.global.nc.b32 \t%r15, [%oxfault2+4096];",
            "\tselp.b64 \t%oxfault3, -8, %rd6, %p7;\n\tst.global.b32 \t[%oxfault3+8], %r13;",
        ] {
            assert!(out.contains(expected), "{expected}\nin\n{out}");
        }
    }

    #[test]
    fn branches_to_other_blocks_stay() {
        let ptx = ".visible .entry k()\n{\n\t@%p1 bra \t$L__BB0_2;\n\t\
                   ld.global.b32 \t%r1, [%rd5];\n$L__BB0_2:\n\tret;\n}\n";
        assert_eq!(fault_at_guarded_accesses(ptx), (ptx.to_string(), 0));
    }

    #[test]
    fn each_function_declares_its_own_registers() {
        let one = ".visible .entry k{n}()\n{{\n\t@%p1 bra \t$L__T{n};\n\t\
                   ld.global.b32 \t%r1, [%rd5];\n\tret;\n$L__T{n}:\n\ttrap; exit;\n}}\n";
        let ptx = format!("{}{}", one.replace("{n}", "0"), one.replace("{n}", "1"))
            .replace("{{", "{")
            .replace("}}", "}");
        let (out, rewritten) = fault_at_guarded_accesses(&ptx);
        assert_eq!(rewritten, 2);
        assert_eq!(out.matches(".reg .b64 \t%oxfault<1>;").count(), 2, "{out}");
        assert_eq!(out.matches("[%oxfault0]").count(), 2, "{out}");
    }

    #[test]
    fn address_operands() {
        assert_eq!(register_address("%r1, [%rd5]"), Some(("%rd5", 0)));
        assert_eq!(register_address("[%rd12+1056], %r1"), Some(("%rd12", 1056)));
        assert_eq!(register_address("[%rd8+-4], %r1"), Some(("%rd8", -4)));
        assert_eq!(register_address("%r1, [%r5]"), None);
        assert_eq!(register_address("%r1, [sym]"), None);
    }
}
