//! Checks in a row merged into one: a run of blocks each ending in a check that branches to
//! the same bare trap becomes one branch on all their conditions.
//!
//! After `opt -O3`, the checks of straight-line code sit one after the other, each its own
//! branch to the trap (`a[(i - 1) * n + j - 1]`, `a[(i - 1) * n + j]`, ... in a stencil:
//! nine branches before the nine loads). ptxas issues no load of such a run before the last
//! branch. This pass, run on `opt`'s output (the device pipeline's `check-hoisting` stage) in builds whose
//! failed checks are bare traps, computes the conditions of a run in its first block and
//! branches once on their conjunction; the blocks after it then only fall through. The
//! second `opt` run merges them. `CUDA_OXIDE_CHECK_HOISTING=0` turns it off.
//!
//! A run is blocks `B1, ..., Bk` where each `Bi` (i > 1) is entered only from `Bi-1`, every
//! `Bi` ends in `br i1 %ci` with one target the trap, no `Bi` after the first has an effect
//! another thread or the host could see (a store, an atomic, a fence, a volatile access, a
//! call), and the instructions the conditions `c2 ... ck` need, which move into `B1`, are pure
//! arithmetic, comparisons, address computations and special-register reads: no load moves.
//! What a program could tell apart: when a later check of the run fails, the kernel traps
//! before the instructions between the first check and that one, which only compute values
//! and read memory; a trap without a message says nothing about which check failed.
//!
//! **Families of checks.** A stencil's checks are one index plus constants against one
//! length (`a[(i - 1) * n + j - 1]` .. `a[(i + 1) * n + j + 1]`), and their conjunction, a
//! chain of 64-bit maxima, cost more than the loads they guard. Indices that are the same sum
//! of values times constants (`i * n + j`, modulo 2^64) plus constants `c_k`, compared with
//! one length, form a family: with `t` the index of the least constant and `D` the spread of
//! the constants, `len > D && t < len - D` implies that every index of the family lies in
//! `[0, len)` (`t + D` cannot wrap). A run with a family branches on these two comparisons
//! per family (and its other checks) to the code after it, and otherwise to a block that
//! tests every check as before and traps or goes on: the same checks pass and fail as
//! without the merge; the sufficient test is only the fast way through.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::ll_text::{Block, Function, Inst, Piece, parse_module, write_module};

/// Opcodes that compute a value from their operands alone (no memory, no trap).
const PURE: &[&str] = &[
    "add",
    "sub",
    "mul",
    "shl",
    "lshr",
    "ashr",
    "and",
    "or",
    "xor",
    "icmp",
    "select",
    "zext",
    "sext",
    "trunc",
    "getelementptr",
    "ptrtoint",
    "inttoptr",
    "bitcast",
    "addrspacecast",
    "freeze",
    "fadd",
    "fsub",
    "fmul",
    "fneg",
    "fcmp",
];

/// `ll` (as `opt` printed it) with every run of checks merged, and how many checks were
/// merged into the one before them.
pub fn merge_check_runs(ll: &str) -> (String, usize) {
    let mut pieces = parse_module(ll);
    let mut total = 0;
    for piece in &mut pieces {
        if let Piece::Function(function) = piece {
            total += merge_function(function);
        }
    }
    if total == 0 {
        return (ll.to_owned(), 0);
    }
    (write_module(&pieces), total)
}

/// Whether `inst` may move: pure, or a read of a special register.
fn movable(inst: &Inst) -> bool {
    let opcode = inst.opcode();
    PURE.contains(&opcode)
        || (opcode == "call" && inst.body().contains("@llvm.nvvm.read.ptx.sreg."))
}

/// Whether a block does something another thread or the host could see before its check:
/// a store, an atomic, a fence, a volatile access or a call other than a special-register
/// read. (Its check moving above such an effect would hide it when the check fails.)
fn has_side_effects(insts: &[Inst]) -> bool {
    insts.iter().any(|inst| match inst.opcode() {
        "store" | "atomicrmw" | "cmpxchg" | "fence" | "va_arg" => true,
        "load" => {
            inst.body().starts_with("load volatile") || inst.body().starts_with("load atomic")
        }
        "call" => !movable(inst),
        _ => false,
    })
}

/// A block holding only `call void @llvm.trap()` and `unreachable`.
fn is_bare_trap(insts: &[Inst]) -> bool {
    matches!(insts, [call, end]
        if call.opcode() == "call"
            && call.body().contains("@llvm.trap()")
            && end.opcode() == "unreachable")
}

/// A check at the end of a block: (condition, the target when it passes, whether it passes
/// when the condition is true), for a branch whose other target is a bare trap.
fn check<'a>(block: &'a [Inst], traps: &HashSet<&str>) -> Option<(&'a str, &'a str, bool)> {
    let (cond, t, f) = block.last()?.cond_br()?;
    match (traps.contains(t), traps.contains(f)) {
        (false, true) => Some((cond, t, true)),
        (true, false) => Some((cond, f, false)),
        _ => None,
    }
}

fn merge_function(function: &mut Function) -> usize {
    let traps: HashSet<String> = function
        .blocks
        .iter()
        .filter(|b| is_bare_trap(&b.insts))
        .map(|b| b.label.clone())
        .collect();
    if traps.is_empty() {
        return 0;
    }
    let traps: HashSet<&str> = traps.iter().map(String::as_str).collect();
    let index = function.block_index();
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); function.blocks.len()];
    for (b, block) in function.blocks.iter().enumerate() {
        for s in block.terminator().successors() {
            if let Some(&s) = index.get(s) {
                preds[s].push(b);
            }
        }
    }
    // Each run: its first block and the blocks after it, with their checks' conditions.
    let mut runs: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut taken: HashSet<usize> = HashSet::new();
    for first in 0..function.blocks.len() {
        if taken.contains(&first) || check(&function.blocks[first].insts, &traps).is_none() {
            continue;
        }
        // A block whose check joins the run of the block before it starts none.
        let is_continuation = preds[first].len() == 1
            && needed(function, &[first]).is_some()
            && check(&function.blocks[preds[first][0]].insts, &traps)
                .is_some_and(|(_, next, _)| next == function.blocks[first].label);
        if is_continuation {
            continue;
        }
        let mut rest = Vec::new();
        let mut at = first;
        loop {
            let (_, next, _) = check(&function.blocks[at].insts, &traps).expect("a check");
            let Some(&next) = index.get(next) else { break };
            if preds[next] != [at]
                || check(&function.blocks[next].insts, &traps).is_none()
                || has_side_effects(&function.blocks[next].insts)
            {
                break;
            }
            let mut longer = rest.clone();
            longer.push(next);
            if needed(function, &longer).is_none() {
                break;
            }
            rest.push(next);
            at = next;
        }
        if !rest.is_empty() {
            taken.insert(first);
            taken.extend(rest.iter().copied());
            runs.push((first, rest));
        }
    }
    let mut merged = 0;
    for (n, (first, rest)) in runs.into_iter().enumerate() {
        merged += rest.len();
        merge_run(function, first, &rest, n, &traps);
    }
    merged
}

/// The instructions of the run's later blocks `run` (block, position) that the conditions of
/// their checks need, in program order, if all of them are movable.
fn needed(function: &Function, run: &[usize]) -> Option<Vec<(usize, usize)>> {
    let mut position: HashMap<&str, (usize, usize)> = HashMap::new();
    for (k, &b) in run.iter().enumerate() {
        for (i, inst) in function.blocks[b].insts.iter().enumerate() {
            if let Some(r) = inst.result() {
                position.insert(r, (k, i));
            }
        }
    }
    let mut need = HashSet::new();
    let mut work: Vec<&str> = Vec::new();
    for &b in run {
        let (cond, _, _) = function.blocks[b].terminator().cond_br()?;
        work.extend(cond.strip_prefix('%'));
    }
    while let Some(name) = work.pop() {
        let Some(&(k, i)) = position.get(name) else {
            continue;
        };
        if !need.insert((k, i)) {
            continue;
        }
        let inst = &function.blocks[run[k]].insts[i];
        if !movable(inst) {
            return None;
        }
        work.extend(inst.uses());
    }
    let mut need: Vec<(usize, usize)> = need.into_iter().collect();
    need.sort_unstable();
    Some(need.into_iter().map(|(k, i)| (run[k], i)).collect())
}

/// Moves the conditions of `rest` into `first`, which branches on all of them; the blocks of
/// `rest` then fall through.
fn merge_run(
    function: &mut Function,
    first: usize,
    rest: &[usize],
    run: usize,
    traps: &HashSet<&str>,
) {
    let need = needed(function, rest).expect("checked before");
    let mut conds = Vec::new();
    for &b in rest {
        let insts = &mut function.blocks[b].insts;
        let (cond, next, passes_on_true) = check(insts, traps).expect("a check");
        let (cond, next) = (cond.to_owned(), next.to_owned());
        let last = insts.last_mut().expect("a terminator");
        let metadata = last
            .text
            .find(", !")
            .map_or(String::new(), |at| last.text[at..].to_owned());
        last.text = format!("br label %{next}{metadata}");
        conds.push((cond, passes_on_true));
    }
    // Take the needed instructions out, the later positions of a block first.
    let mut moved: Vec<(usize, usize, Inst)> = Vec::new();
    for &(b, i) in need.iter().rev() {
        moved.push((b, i, function.blocks[b].insts.remove(i)));
    }
    moved.reverse();
    let mut moved: Vec<Inst> = moved
        .into_iter()
        .map(|(_, _, inst)| without_poison_flags(inst))
        .collect();
    // Unnamed values must appear in increasing order: moved up, past others, they get names.
    let numbered: HashMap<String, String> = moved
        .iter()
        .filter_map(Inst::result)
        .filter(|name| name.bytes().all(|b| b.is_ascii_digit()))
        .map(|name| (name.to_owned(), format!("oxm{run}.n{name}")))
        .collect();
    if !numbered.is_empty() {
        let rename = |name: &str| numbered.get(name).cloned();
        for inst in function
            .blocks
            .iter_mut()
            .flat_map(|block| block.insts.iter_mut())
            .chain(moved.iter_mut())
        {
            *inst = inst.renamed(&rename);
        }
        for (cond, _) in &mut conds {
            if let Some(new) = cond.strip_prefix('%').and_then(rename) {
                *cond = format!("%{new}");
            }
        }
    }
    let terminator = function.blocks[first].insts.pop().expect("a terminator");
    let (cond, next, passes_on_true) =
        check(std::slice::from_ref(&terminator), traps).expect("a check");
    let trap = terminator
        .successors()
        .into_iter()
        .find(|s| traps.contains(s))
        .expect("a trap")
        .to_owned();
    let metadata = terminator
        .text
        .find(", !")
        .map_or("", |at| &terminator.text[at..]);
    let mut all = vec![(cond.to_owned(), passes_on_true)];
    all.extend(conds);
    let next = next.to_owned();
    let (lines, ok) = conjunction(&all, &format!("%oxm{run}"), Join::And);
    let next_has_phis = function
        .blocks
        .iter()
        .find(|b| b.label == next)
        .is_some_and(|b| b.insts.first().is_some_and(|i| i.opcode() == "phi"));
    let found = if next_has_phis {
        None
    } else {
        Some(families(function, &moved, &all)).filter(|found| !found.families.is_empty())
    };
    let block = &mut function.blocks[first];
    block.insts.extend(moved);
    let as_insts = |lines: Vec<String>| lines.into_iter().map(|text| Inst { text });
    let Some(found) = found else {
        block.insts.extend(as_insts(lines));
        block.insts.push(Inst {
            text: format!("br i1 {ok}, label %{next}, label %{trap}{metadata}"),
        });
        return;
    };
    // The fast test passes: every check passes. It fails: the block of every check decides.
    let (fast_lines, fast_ok) = fast_test(run, found);
    let slow = format!("oxm{run}.slow");
    block.insts.extend(as_insts(fast_lines));
    block.insts.push(Inst {
        text: format!("br i1 {fast_ok}, label %{next}, label %{slow}{metadata}"),
    });
    let mut slow_insts: Vec<Inst> = as_insts(lines).collect();
    slow_insts.push(Inst {
        text: format!("br i1 {ok}, label %{next}, label %{trap}{metadata}"),
    });
    function.blocks.push(Block {
        label: slow,
        insts: slow_insts,
    });
}

/// Flags that make an instruction's result poison when a fact fails (`nuw`, `disjoint`, ...).
const POISON_FLAGS: &[&str] = &[
    "nuw", "nsw", "exact", "disjoint", "nneg", "samesign", "inbounds", "nusw",
];

/// `inst` without [POISON_FLAGS]: it now runs before checks of the run that `opt` may have
/// drawn those facts from, where they need not hold (as LLVM drops them when it hoists).
fn without_poison_flags(inst: Inst) -> Inst {
    let Some(name) = inst.result() else {
        return inst;
    };
    let mut words = inst.body().split(' ');
    let opcode = words.next().unwrap_or_default();
    let rest: Vec<&str> = words.skip_while(|w| POISON_FLAGS.contains(w)).collect();
    Inst {
        text: format!("%{name} = {opcode} {}", rest.join(" ")),
    }
}

/// How a conjunction joins its parts: `and`, or `select c, x, false`, whose result is not
/// poison when a later part is poison where an earlier one is false.
#[derive(Clone, Copy)]
enum Join {
    And,
    Select,
}

/// The instructions that compute the conjunction of `checks` (each a condition and whether
/// the check passes when it is true), named from `prefix`, and the name of the result.
fn conjunction(checks: &[(String, bool)], prefix: &str, join: Join) -> (Vec<String>, String) {
    let mut lines = Vec::new();
    let mut ok = String::new();
    for (k, (cond, passes_on_true)) in checks.iter().enumerate() {
        let pass = if *passes_on_true {
            cond.clone()
        } else {
            let name = format!("{prefix}.not{k}");
            lines.push(format!("{name} = xor i1 {cond}, true"));
            name
        };
        ok = if k == 0 {
            pass
        } else {
            let name = format!("{prefix}.all{k}");
            lines.push(match join {
                Join::And => format!("{name} = and i1 {ok}, {pass}"),
                Join::Select => format!("{name} = select i1 {ok}, i1 {pass}, i1 false"),
            });
            name
        };
    }
    (lines, ok)
}

/// The fast test of a run with families: two comparisons per family (`len > D`, least index
/// `< len - D`), and the checks of no family as they are. Its instructions and result.
fn fast_test(run: usize, found: Families) -> (Vec<String>, String) {
    let mut lines = Vec::new();
    let mut parts: Vec<(String, bool)> = Vec::new();
    for (f, family) in found.families.iter().enumerate() {
        let name = |what: &str| format!("%oxm{run}.f{f}.{what}");
        let (len, spread) = (&family.len, family.spread);
        lines.push(format!("{} = icmp ugt i64 {len}, {spread}", name("wide")));
        lines.push(format!("{} = sub i64 {len}, {spread}", name("limit")));
        lines.push(format!(
            "{} = icmp ult i64 {}, {}",
            name("inside"),
            family.least,
            name("limit")
        ));
        parts.push((name("wide"), true));
        parts.push((name("inside"), true));
    }
    parts.extend(found.others);
    let (joined, ok) = conjunction(&parts, &format!("%oxm{run}.fast"), Join::Select);
    lines.extend(joined);
    (lines, ok)
}

/// Checks of a run whose indices differ by constants and share their length: one test of the
/// least index against the length less the spread covers them all (module docs).
struct Family {
    /// Positions of the members among the run's checks.
    members: Vec<usize>,
    /// The length they are compared with.
    len: String,
    /// The index with the least constant.
    least: String,
    /// The greatest constant less the least.
    spread: i128,
}

/// The families of at least two checks among `checks` (the run's, in order).
/// `moved` are the run's instructions taken out of its blocks, which the checks may use.
/// A check whose condition is a conjunction (`and`, or `select` standing for it) counts as
/// its parts; the parts of no family stay in the fast test.
fn families(function: &Function, moved: &[Inst], checks: &[(String, bool)]) -> Families {
    let defs: HashMap<&str, &Inst> = function
        .blocks
        .iter()
        .flat_map(|b| b.insts.iter())
        .chain(moved)
        .filter_map(|inst| Some((inst.result()?, inst)))
        .collect();
    let mut parts: Vec<(String, bool)> = Vec::new();
    for (cond, passes_on_true) in checks {
        if *passes_on_true {
            conjuncts(&defs, cond, 0, &mut parts);
        } else {
            parts.push((cond.clone(), false));
        }
    }
    // By (length, the index's terms): each member's position, constant and index.
    type Key = (String, Vec<(String, u64)>);
    let mut groups: BTreeMap<Key, Vec<(usize, i64, String)>> = BTreeMap::new();
    for (k, (cond, passes_on_true)) in parts.iter().enumerate() {
        let Some((index, len)) = index_below_len(&defs, cond, *passes_on_true) else {
            continue;
        };
        let form = linear(&defs, index, 0);
        let terms: Vec<(String, u64)> = form.terms.into_iter().collect();
        groups.entry((len.to_owned(), terms)).or_default().push((
            k,
            form.constant as i64,
            index.to_owned(),
        ));
    }
    let families: Vec<Family> = groups
        .into_iter()
        .filter(|(_, members)| members.len() >= 2)
        .filter_map(|((len, _), members)| {
            let least = members.iter().min_by_key(|m| m.1)?;
            let most = members.iter().max_by_key(|m| m.1)?;
            let spread = i128::from(most.1) - i128::from(least.1);
            // A spread this small keeps `len - D` and `t + D` far from wrapping questions.
            (spread < 1 << 32).then(|| Family {
                members: members.iter().map(|m| m.0).collect(),
                len,
                least: least.2.clone(),
                spread,
            })
        })
        .collect();
    let grouped: HashSet<usize> = families.iter().flat_map(|f| f.members.clone()).collect();
    let others = parts
        .into_iter()
        .enumerate()
        .filter(|(k, _)| !grouped.contains(k))
        .map(|(_, part)| part)
        .collect();
    Families { families, others }
}

/// The families of a run's checks, and the checks (or parts of checks) of none.
struct Families {
    families: Vec<Family>,
    others: Vec<(String, bool)>,
}

/// The parts of a condition that must all hold: through `and` and `select c, x, false`.
fn conjuncts(defs: &HashMap<&str, &Inst>, cond: &str, depth: u32, out: &mut Vec<(String, bool)>) {
    let parts = cond
        .strip_prefix('%')
        .and_then(|name| defs.get(name))
        .and_then(|inst| inst.logical(true));
    match parts {
        Some((a, b)) if depth < 8 => {
            conjuncts(defs, a, depth + 1, out);
            conjuncts(defs, b, depth + 1, out);
        }
        _ => out.push((cond.to_owned(), true)),
    }
}

/// `(index, len)` when the check `cond` (passing when it is `passes_on_true`) passes exactly
/// when `index <u len`, both `i64`.
fn index_below_len<'a>(
    defs: &HashMap<&str, &'a Inst>,
    cond: &str,
    passes_on_true: bool,
) -> Option<(&'a str, &'a str)> {
    let inst = defs.get(cond.strip_prefix('%')?)?;
    let predicate = inst.icmp_predicate()?;
    let (ty, operands) = inst.typed_operands()?;
    let [a, b] = operands[..] else { return None };
    if ty != "i64" {
        return None;
    }
    match (predicate, passes_on_true) {
        ("ult", true) | ("uge", false) => Some((a, b)),
        ("ugt", true) | ("ule", false) => Some((b, a)),
        _ => None,
    }
}

/// An `i64` value as a sum of values times constants plus a constant, modulo 2^64.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Linear {
    terms: BTreeMap<String, u64>,
    constant: u64,
}

impl Linear {
    fn scaled(mut self, factor: u64) -> Linear {
        self.constant = self.constant.wrapping_mul(factor);
        for coefficient in self.terms.values_mut() {
            *coefficient = coefficient.wrapping_mul(factor);
        }
        self.terms.retain(|_, c| *c != 0);
        self
    }

    fn plus(mut self, other: Linear) -> Linear {
        self.constant = self.constant.wrapping_add(other.constant);
        for (value, coefficient) in other.terms {
            let sum = self.terms.entry(value).or_default();
            *sum = sum.wrapping_add(coefficient);
        }
        self.terms.retain(|_, c| *c != 0);
        self
    }
}

/// `value` (an `i64` operand) as a [Linear] form: through additions, subtractions, disjoint
/// `or`s, and multiplications and left shifts by constants; anything else is a term of its
/// own.
fn linear(defs: &HashMap<&str, &Inst>, value: &str, depth: u32) -> Linear {
    if let Ok(constant) = value.parse::<i64>() {
        return Linear {
            terms: BTreeMap::new(),
            constant: constant as u64,
        };
    }
    let opaque = || Linear {
        terms: BTreeMap::from([(value.to_owned(), 1)]),
        constant: 0,
    };
    let Some(inst) = value.strip_prefix('%').and_then(|name| defs.get(name)) else {
        return opaque();
    };
    let Some(("i64", operands)) = inst.typed_operands() else {
        return opaque();
    };
    let [a, b] = operands[..] else {
        return opaque();
    };
    if depth > 16 {
        return opaque();
    }
    let of = |operand: &str| linear(defs, operand, depth + 1);
    let constant = |operand: &str| operand.parse::<i64>().ok().map(|c| c as u64);
    // The run's own `or`s lost their `disjoint` when they moved (it may rest on a check of
    // the run that the fast test skips); those before the run hold on every path to it.
    let disjoint_or = inst.opcode() == "or" && inst.body().starts_with("or disjoint ");
    match inst.opcode() {
        "add" => of(a).plus(of(b)),
        "sub" => of(a).plus(of(b).scaled(u64::MAX)),
        "or" if disjoint_or => of(a).plus(of(b)),
        "mul" => match (constant(a), constant(b)) {
            (_, Some(factor)) => of(a).scaled(factor),
            (Some(factor), _) => of(b).scaled(factor),
            _ => opaque(),
        },
        "shl" => match constant(b) {
            Some(shift) if shift < 64 => of(a).scaled(1 << shift),
            _ => opaque(),
        },
        _ => opaque(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "define void @f(ptr addrspace(1) %a, i64 %len, i64 %i) {
entry:
  %i1 = add i64 %i, 1
  %ok0 = icmp ult i64 %i, %len
  br i1 %ok0, label %second, label %panic, !dbg !1

second:
  %x = load float, ptr addrspace(1) %a, align 4
  %bad1 = icmp uge i64 %i1, %len
  br i1 %bad1, label %panic, label %third

third:
  %i2 = add i64 %i, 2
  %ok2 = icmp ult i64 %i2, %len
  br i1 %ok2, label %body, label %panic

body:
  ret void

panic:
  tail call void @llvm.trap()
  unreachable
}
";

    /// `i`, `i + 1` and `i + 2` against one length are a family: the run branches on `len > 2`
    /// and `i < len - 2`, and to a block testing the three checks as they are otherwise.
    #[test]
    fn a_run_of_three_checks_branches_once() {
        let (out, merged) = merge_check_runs(RUN);
        assert_eq!(merged, 2);
        insta::assert_snapshot!("three_checks", out);
    }

    /// Checks against different lengths are no family: one conjunction, no second block.
    #[test]
    fn checks_of_different_lengths_are_conjoined() {
        let ll = RUN
            .replace(
                "i64 %len, i64 %i)",
                "i64 %len, i64 %len2, i64 %len3, i64 %i)",
            )
            .replace(
                "%ok2 = icmp ult i64 %i2, %len",
                "%ok2 = icmp ult i64 %i2, %len3",
            )
            .replace(
                "%bad1 = icmp uge i64 %i1, %len",
                "%bad1 = icmp uge i64 %i1, %len2",
            );
        let (out, merged) = merge_check_runs(&ll);
        assert_eq!(merged, 2, "{out}");
        assert!(!out.contains("oxm0.slow") && !out.contains(".f0."), "{out}");
        assert!(
            out.contains("br i1 %oxm0.all2, label %second, label %panic"),
            "{out}"
        );
    }

    /// A 3 x 3 stencil's nine indices (`(i + di) * 4096 + j + dj`, through shifts, disjoint
    /// `or`s and additions as `opt` writes them) are one family of spread 8194.
    #[test]
    fn a_stencil_is_one_family() {
        let mut body = String::from(
            "  %row = shl i64 %i, 12\n  %mid = or disjoint i64 %row, %j\n  %up = add i64 %mid, -4096\n",
        );
        let mut index = 0;
        for (base, di) in [("%up", 0), ("%mid", 4096), ("%up", 8192)] {
            for dj in [-1, 0, 1] {
                let offset = di + dj;
                let name = format!("%x{index}");
                if offset == 0 {
                    body.push_str(&format!("  {name} = add i64 {base}, 0\n"));
                } else {
                    body.push_str(&format!("  {name} = add i64 {base}, {offset}\n"));
                }
                body.push_str(&format!("  %ok{index} = icmp ult i64 {name}, %len\n"));
                let next = if index == 8 {
                    "done".to_string()
                } else {
                    format!("b{}", index + 1)
                };
                body.push_str(&format!(
                    "  br i1 %ok{index}, label %{next}, label %panic\n\nb{}:\n",
                    index + 1
                ));
                index += 1;
            }
        }
        let ll = format!(
            "define void @f(i64 %len, i64 %i, i64 %j) {{\nentry:\n{body}  ret void\n\n\
             done:\n  ret void\n\npanic:\n  tail call void @llvm.trap()\n  unreachable\n}}\n"
        );
        let (out, merged) = merge_check_runs(&ll);
        assert_eq!(merged, 8, "{out}");
        assert!(
            out.contains("%oxm0.f0.wide = icmp ugt i64 %len, 8194"),
            "{out}"
        );
        assert!(out.contains("%oxm0.f0.limit = sub i64 %len, 8194"), "{out}");
        assert!(
            out.contains("%oxm0.f0.inside = icmp ult i64 %x0, %oxm0.f0.limit"),
            "{out}"
        );
        assert!(!out.contains(".f1."), "{out}");
        assert!(
            out.contains("br i1 %oxm0.all8, label %b1, label %panic"),
            "{out}"
        );
    }

    /// A disjoint `or` computed inside the run may rest on a check the fast test skips: its
    /// index is no member, and its check stays in the fast test as it is.
    #[test]
    fn a_disjoint_or_of_the_run_is_no_addition() {
        let ll = RUN.replace("%i2 = add i64 %i, 2", "%i2 = or disjoint i64 %i, 2");
        let (out, _) = merge_check_runs(&ll);
        assert!(
            out.contains("%oxm0.f0.wide = icmp ugt i64 %len, 1"),
            "{out}"
        );
        assert!(
            out.contains("%oxm0.fast.all2 = select i1 %oxm0.fast.all1, i1 %ok2, i1 false"),
            "{out}"
        );
    }

    /// The parts of a conjunction (`select c, x, false`, as `opt` writes `&&`) are checks each:
    /// here the last index joins the family and the other part stays.
    #[test]
    fn conjunctions_count_as_their_parts() {
        let ll = RUN
            .replace("i64 %len, i64 %i)", "i64 %len, i64 %other, i64 %i)")
            .replace(
                "  %ok2 = icmp ult i64 %i2, %len\n",
                "  %in2 = icmp ult i64 %i2, %len\n  %small = icmp ult i64 %i, %other\n  \
                 %ok2 = select i1 %in2, i1 %small, i1 false\n",
            );
        let (out, _) = merge_check_runs(&ll);
        assert!(
            out.contains("%oxm0.f0.wide = icmp ugt i64 %len, 2"),
            "{out}"
        );
        assert!(
            out.contains("%oxm0.fast.all2 = select i1 %oxm0.fast.all1, i1 %small, i1 false"),
            "{out}"
        );
    }

    /// What the fast test rests on: `len > D` and `t < len - D` imply `t + d < len` for every
    /// `d` in `[0, D]`, in wrapping 64-bit arithmetic too (a few values at the edges).
    #[test]
    fn the_fast_test_implies_every_check() {
        let edges = [
            0,
            1,
            2,
            4094,
            4095,
            1 << 32,
            u64::MAX / 2,
            u64::MAX - 8194,
            u64::MAX,
        ];
        for t in edges {
            for len in edges {
                for spread in [1u64, 2, 8194] {
                    let fast = len > spread && t < len - spread;
                    let every = (0..=spread).all(|d| t.checked_add(d).is_some_and(|x| x < len));
                    assert!(!fast || every, "t {t} len {len} spread {spread}");
                }
            }
        }
    }

    #[test]
    fn a_condition_that_needs_a_load_ends_the_run() {
        let ll = RUN.replace(
            "  %bad1 = icmp uge i64 %i1, %len",
            "  %y = load i64, ptr addrspace(1) %a, align 8\n  %bad1 = icmp uge i64 %y, %len",
        );
        let (out, merged) = merge_check_runs(&ll);
        assert_eq!(merged, 1, "{out}");
        assert!(
            out.contains("br i1 %ok0, label %second, label %panic"),
            "{out}"
        );
        assert!(
            out.contains("%oxm0.all1 = and i1 %oxm0.not0, %ok2"),
            "{out}"
        );
    }

    /// A later condition may need a value of an earlier block of the run that the earlier
    /// check does not: it moves too, in its place in program order.
    #[test]
    fn values_of_earlier_blocks_move_with_the_conditions_that_need_them() {
        let ll = RUN
            .replace("  %i1 = add i64 %i, 1\n", "")
            .replace(
                "  %bad1 = icmp uge i64 %i1, %len",
                "  %i1 = add i64 %i, 1\n  %k = mul i64 %i1, 3\n  %bad1 = icmp uge i64 %i, %len",
            )
            .replace("%i2 = add i64 %i, 2", "%i2 = add i64 %k, 2");
        let (out, merged) = merge_check_runs(&ll);
        assert_eq!(merged, 2, "{out}");
        let entry = &out[..out.find("second:").expect("second")];
        let order: Vec<usize> = ["%i1 = ", "%k = ", "%bad1 = ", "%i2 = ", "%ok2 = ", "br i1"]
            .iter()
            .map(|s| entry.find(s).unwrap_or_else(|| panic!("{s} in {entry}")))
            .collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]), "{entry}");
    }

    /// A store between two checks ends the run: the second check may not trap before it.
    #[test]
    fn a_store_ends_the_run() {
        let ll = RUN.replace(
            "  %i2 = add i64 %i, 2\n",
            "  store float 1.0, ptr addrspace(1) %a, align 4\n  %i2 = add i64 %i, 2\n",
        );
        let (out, merged) = merge_check_runs(&ll);
        assert_eq!(merged, 1, "{out}");
        assert!(
            out.contains("br i1 %ok2, label %body, label %panic"),
            "{out}"
        );
    }

    /// Unnamed values moved up past others would break LLVM's increasing numbering: they are
    /// named.
    #[test]
    fn moved_unnamed_values_get_names() {
        let ll = RUN
            .replace(
                "  %i2 = add i64 %i, 2\n  %ok2 = icmp ult i64 %i2, %len",
                "  %0 = add i64 %i, 2\n  %1 = icmp ult i64 %0, %len",
            )
            .replace("br i1 %ok2, label %body", "br i1 %1, label %body")
            .replace("  %x = load float", "  %2 = load float");
        let (out, merged) = merge_check_runs(&ll);
        assert_eq!(merged, 2, "{out}");
        assert!(out.contains("%oxm0.n0 = add i64 %i, 2"), "{out}");
        assert!(
            out.contains("%oxm0.n1 = icmp ult i64 %oxm0.n0, %len"),
            "{out}"
        );
        assert!(out.contains("%2 = load float"), "{out}");
    }

    #[test]
    fn checks_with_messages_stay() {
        let ll = RUN.replace(
            "  tail call void @llvm.trap()\n",
            "  tail call void @panic_bounds_check(i64 %i, i64 %len)\n",
        );
        assert_eq!(merge_check_runs(&ll), (ll.clone(), 0));
    }
}
