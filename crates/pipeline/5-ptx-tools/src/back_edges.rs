//! Loop back edges taken by the conditional branch, not by a `bra.uni` after it.
//!
//! A loop whose latch block is followed in `llc`'s layout by its exit ends in
//!
//! ```text
//!     setp.eq.b64     %p35, %rd77, 1048576;
//!     @%p35 bra       $L__BB43_13;          // the exit: the next block
//!     bra.uni         $L__BB43_27;          // back to the loop header
//! $L__BB43_13:
//! ```
//!
//! because the NVPTX backend cannot reverse a branch condition, so LLVM's branch folding never
//! turns "branch to the next block, else jump" into one branch on the opposite condition.
//! ptxas schedules such a loop worse than one whose back edge is the conditional branch on a
//! comparison of the counter (the form nvcc writes, `setp.ne ...; @%p bra HEADER;`): it
//! recognises the loop's trip count only then. [`branch_on_back_edges`] rewrites each pair
//! whose predicate is computed by an integer `setp` of the same block and used nowhere else,
//! with the opposite comparison (`eq`/`ne`, `lt`/`ge`, `le`/`gt`, `lo`/`hs`, `ls`/`hi`):
//!
//! - `@P bra NEXT; bra.uni L;` where `NEXT` is the label right after: `@P' bra L;`, falling
//!   through to `NEXT`;
//! - `@P bra EXIT; bra.uni HEADER;` where `HEADER` is defined above (a back edge) and `EXIT`
//!   is not: `@P' bra HEADER; bra.uni EXIT;`.
//!
//! Both go to the same place on the same condition as before. (Negating the guard instead,
//! `@!P`, hides the trip count from ptxas: PolyBench's covariance then ran at half speed.)

use std::collections::HashMap;

use crate::ptx_text::{
    CondBranch, code, is_annotation, jump_target, label_definition, names, rewrite_bodies,
};

/// `ptx` with each pair of branches described in the module docs rewritten, and how many
/// were.
pub fn branch_on_back_edges(ptx: &str) -> (String, usize) {
    let mut total = 0;
    let out = rewrite_bodies(ptx, |_, body| {
        let edits = edits_of(body);
        total += edits.len();
        (!edits.is_empty()).then(|| apply(body, &edits))
    });
    (out, total)
}

/// The integer comparison that holds exactly when `cmp` does not.
fn opposite(cmp: &str) -> Option<&'static str> {
    Some(match cmp {
        "eq" => "ne",
        "ne" => "eq",
        "lt" => "ge",
        "ge" => "lt",
        "le" => "gt",
        "gt" => "le",
        "lo" => "hs",
        "hs" => "lo",
        "ls" => "hi",
        "hi" => "ls",
        _ => return None,
    })
}

/// `line`, an integer `setp.<cmp>.<type> %p, a, b;` writing `predicate`, with the opposite
/// comparison.
fn opposite_setp(line: &str, predicate: &str) -> Option<String> {
    let text = code(line);
    let (op, operands) = text.split_once(char::is_whitespace)?;
    let mut parts = op.split('.');
    let (Some("setp"), Some(cmp), Some(ty), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let integer = ["s", "u", "b"].iter().any(|kind| ty.starts_with(kind));
    let dest = operands.split(',').next()?.trim();
    if !integer || dest != predicate {
        return None;
    }
    let flipped = format!("setp.{}.{ty}", opposite(cmp)?);
    let at = line.find(op)?;
    Some(format!(
        "{}{flipped}{}",
        &line[..at],
        &line[at + op.len()..]
    ))
}

/// The lines to replace (by index; an empty text removes the line) for every pair of the body
/// that is rewritten.
fn edits_of(body: &[&str]) -> Vec<HashMap<usize, String>> {
    let defined_at: HashMap<&str, usize> = body
        .iter()
        .enumerate()
        .filter_map(|(i, line)| Some((label_definition(line)?, i)))
        .collect();
    let uses = |name: &str| {
        body.iter()
            .filter(|line| names(line).any(|n| n == name))
            .count()
    };
    let next_code = |from: usize| (from..body.len()).find(|&i| !is_annotation(code(body[i])));
    let mut edits = Vec::new();
    for (at, line) in body.iter().enumerate() {
        let Some(branch) = CondBranch::parse(line) else {
            continue;
        };
        let Some(jump_at) = next_code(at + 1) else {
            continue;
        };
        let Some(jump) = jump_target(body[jump_at]) else {
            continue;
        };
        let after = next_code(jump_at + 1).and_then(|i| label_definition(body[i]));
        let is_back_edge = |label: &str| defined_at.get(label).is_some_and(|&i| i <= at);
        let target = branch.target;
        let falls_through = after == Some(target);
        if !falls_through && !(is_back_edge(jump) && !is_back_edge(target)) {
            continue;
        }
        // The predicate's comparison, in this block, used by this branch alone.
        let predicate = branch.predicate;
        let Some(setp_at) = (0..at)
            .rev()
            .take_while(|&i| label_definition(body[i]).is_none())
            .find(|&i| names(body[i]).any(|name| name == predicate))
        else {
            continue;
        };
        let Some(flipped) = opposite_setp(body[setp_at], predicate) else {
            continue;
        };
        if uses(predicate) != 2 {
            continue;
        }
        let mut edit = HashMap::from([(setp_at, flipped)]);
        edit.insert(at, format!("\t@{} bra \t{jump};\n", branch.guard()));
        let exit = if falls_through {
            String::new()
        } else {
            format!("\tbra.uni \t{target};\n")
        };
        edit.insert(jump_at, exit);
        edits.push(edit);
    }
    edits
}

/// `body` with `edits` made.
fn apply(body: &[&str], edits: &[HashMap<usize, String>]) -> String {
    let mut out = String::new();
    for (i, line) in body.iter().enumerate() {
        match edits.iter().find_map(|edit| edit.get(&i)) {
            Some(text) => out.push_str(text),
            None => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(body: &str) -> String {
        format!(".visible .entry k(\n\t.param .u64 k_param_0\n)\n{{\n{body}}}\n")
    }

    #[test]
    fn a_latch_falling_through_to_its_exit_branches_back_on_the_opposite_comparison() {
        let ptx = function(
            "$L__BB0_2:\n\tadd.s64 \t%rd7, %rd7, 4;\n\tsetp.eq.b64 \t%p3, %rd7, 64;\n\t@%p3 bra \t$L__BB0_3;\n\t.loc\t1 9 5\n\tbra.uni \t$L__BB0_2;\n$L__BB0_3:\n\tret;\n",
        );
        let (out, n) = branch_on_back_edges(&ptx);
        assert_eq!(n, 1);
        assert_eq!(
            out,
            function(
                "$L__BB0_2:\n\tadd.s64 \t%rd7, %rd7, 4;\n\tsetp.ne.b64 \t%p3, %rd7, 64;\n\t@%p3 bra \t$L__BB0_2;\n\t.loc\t1 9 5\n$L__BB0_3:\n\tret;\n",
            )
        );
    }

    #[test]
    fn a_latch_whose_exit_lies_elsewhere_takes_the_back_edge_conditionally() {
        let ptx = function(
            "$L__BB0_2:\n\tsetp.lo.u32 \t%p3, %r1, %r2;\n\t@!%p3 bra \t$L__BB0_9;\n\tbra.uni \t$L__BB0_2;\n$L__BB0_5:\n\tret;\n$L__BB0_9:\n\tret;\n",
        );
        let (out, n) = branch_on_back_edges(&ptx);
        assert_eq!(n, 1);
        assert!(
            out.contains(
                "\tsetp.hs.u32 \t%p3, %r1, %r2;\n\t@!%p3 bra \t$L__BB0_2;\n\tbra.uni \t$L__BB0_9;\n$L__BB0_5:"
            ),
            "{out}"
        );
    }

    #[test]
    fn pairs_whose_comparison_cannot_be_reversed_in_place_stay() {
        let latch = |setp: &str, more: &str| {
            function(&format!(
                "$L__BB0_2:\n\t{setp}\n\t@%p3 bra \t$L__BB0_3;\n\tbra.uni \t$L__BB0_2;\n$L__BB0_3:\n{more}\tret;\n"
            ))
        };
        for ptx in [
            // A float comparison (its opposite must also hold for NaN).
            latch("setp.lt.f32 \t%p3, %r1, %r2;", ""),
            // The predicate is used again after the loop.
            latch(
                "setp.eq.b32 \t%p3, %r1, 8;",
                "\tselp.b32 \t%r4, 1, 2, %p3;\n",
            ),
            // The predicate combines two comparisons.
            latch("and.pred \t%p3, %p1, %p2;", ""),
        ] {
            assert_eq!(branch_on_back_edges(&ptx), (ptx.clone(), 0));
        }
    }

    #[test]
    fn forward_branches_and_branches_to_loops_above_both_stay() {
        // Both targets forward, the next label another: nothing to gain.
        let forward = function(
            "\tsetp.eq.b32 \t%p1, %r1, 8;\n\t@%p1 bra \t$L__BB0_4;\n\tbra.uni \t$L__BB0_6;\n$L__BB0_3:\n\tret;\n$L__BB0_4:\n\tret;\n$L__BB0_6:\n\tret;\n",
        );
        assert_eq!(branch_on_back_edges(&forward), (forward.clone(), 0));
        // Both targets above (an inner loop's latch jumping to the outer header).
        let both_back = function(
            "$L__BB0_1:\n$L__BB0_2:\n\tsetp.eq.b32 \t%p1, %r1, 8;\n\t@%p1 bra \t$L__BB0_2;\n\tbra.uni \t$L__BB0_1;\n$L__BB0_3:\n\tret;\n",
        );
        assert_eq!(branch_on_back_edges(&both_back), (both_back.clone(), 0));
        // A label between the two branches: another way into the jump.
        let entered = function(
            "$L__BB0_2:\n\tsetp.eq.b32 \t%p1, %r1, 8;\n\t@%p1 bra \t$L__BB0_4;\n$L__BB0_3:\n\tbra.uni \t$L__BB0_2;\n$L__BB0_4:\n\tret;\n",
        );
        assert_eq!(branch_on_back_edges(&entered), (entered.clone(), 0));
    }
}
