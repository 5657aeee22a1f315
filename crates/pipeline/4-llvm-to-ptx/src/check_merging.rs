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

use std::collections::{HashMap, HashSet};

use crate::ll_text::{Function, Inst, Piece, parse_module, write_module};

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
    let moved: Vec<Inst> = moved.into_iter().map(|(_, _, inst)| inst).collect();
    let block = &mut function.blocks[first];
    let terminator = block.insts.pop().expect("a terminator");
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
    let mut lines: Vec<String> = Vec::new();
    let mut ok = String::new();
    for (k, (cond, passes_on_true)) in all.iter().enumerate() {
        let pass = if *passes_on_true {
            cond.clone()
        } else {
            let name = format!("%oxm{run}.not{k}");
            lines.push(format!("{name} = xor i1 {cond}, true"));
            name
        };
        ok = if k == 0 {
            pass
        } else {
            let name = format!("%oxm{run}.all{k}");
            lines.push(format!("{name} = and i1 {ok}, {pass}"));
            name
        };
    }
    let branch = format!("br i1 {ok}, label %{next}, label %{trap}{metadata}");
    block.insts.extend(moved);
    block
        .insts
        .extend(lines.into_iter().map(|text| Inst { text }));
    block.insts.push(Inst { text: branch });
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

    #[test]
    fn a_run_of_three_checks_branches_once() {
        let (out, merged) = merge_check_runs(RUN);
        assert_eq!(merged, 2);
        insta::assert_snapshot!("three_checks", out);
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

    #[test]
    fn checks_with_messages_stay() {
        let ll = RUN.replace(
            "  tail call void @llvm.trap()\n",
            "  tail call void @panic_bounds_check(i64 %i, i64 %len)\n",
        );
        assert_eq!(merge_check_runs(&ll), (ll.clone(), 0));
    }
}
