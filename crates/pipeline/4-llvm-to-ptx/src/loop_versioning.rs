//! Loop versioning for bounds checks: a loop whose checked indices are affine in its
//! iteration count gets a copy without those checks, run when a test before the loop proves
//! that no check can fail.
//!
//! `opt -O3` keeps a bounds check inside a loop when the index moves with the loop
//! (`sum += a[row * k + i] * b[i * n + col]`): the check is one branch per iteration, and its
//! exit to the panic makes the loop one with several exits, which LLVM does not unroll. This
//! pass runs on `opt`'s output, between two `opt` runs (the device pipeline's `check-hoisting` stage), where
//! loops are rotated, invariants hoisted and induction variables simplified:
//!
//! 1. An innermost loop with one preheader and one latch is analysed. A value in it is
//!    *affine* when it equals `base + j * step` modulo 2^width at the loop's `j`-th iteration,
//!    with `base` and `step` invariant: header `phi`s that add an invariant step, sums,
//!    differences, products and shifts by invariants, truncations, and zero or sign extensions
//!    (these last two with a range requirement, below).
//! 2. A block of the loop that runs on every iteration and may leave it (the rotated loop's
//!    latch test, `i < n`, `i != n`, counting up or down by one) bounds the iteration count:
//!    iteration `J` at the latest takes the exit.
//! 3. Each *check*, a comparison `index <u len` whose failure branches to a failure block (one
//!    from which every path ends in `unreachable`: a trap or a panic), with `index` affine and
//!    `len` invariant, holds on every iteration when the exact values `base` and
//!    `base + J * step` (computed in 128 bits, so nothing wraps) both lie in `[0, len)`: the
//!    exact index is monotonic in `j`, so every iteration's exact index lies between the two,
//!    and an exact index below `len` is also the wrapped one. Comparisons combined with `and`
//!    (or a `select` standing for it) are checks each. So are a value counting by a power of
//!    two that must not meet an invariant (`remaining != 0`, LLVM's form of a counted-down
//!    `i < len`: the iteration where they would meet lies after `J`), and a condition computed
//!    before the loop (tested as it is).
//! 4. The preheader computes those conditions and branches to a copy of the loop in which the
//!    proven comparisons are constants, or to the original loop, unchanged, when any fails.
//!    Branches the proven comparisons decide are unconditional in the copy. Values of the loop
//!    used after it are joined with the copy's by `phi`s in the exit block (which only the loop
//!    enters) or on the exit edges. The second `opt` run folds the rest and unrolls the copy,
//!    which now has one exit.
//!
//! What the transformation preserves: the copy runs exactly the iterations the original would
//! (the conditions are side-effect free and only choose which copy runs), and its checks are
//! replaced only where they are proven to pass. The cost model bounds the growth: a loop is
//! copied only when a check in it is proven, only innermost loops of at most
//! [MAX_LOOP_INSTRUCTIONS] instructions, at most [MAX_LOOPS_PER_FUNCTION] per function, and
//! never a loop holding a convergent call (a barrier or a warp operation, which must not
//! become control-dependent on a new condition), inline assembly, or a `noalias` scope
//! declaration (a copy would need scopes of its own).
//! `CUDA_OXIDE_CHECK_HOISTING=0` turns the pass off (and [crate::check_merging]).

use std::collections::{HashMap, HashSet};

use crate::ll_text::{Block, Function, Inst, Piece, parse_module, write_module};

/// Largest loop (in instructions) that is copied.
pub const MAX_LOOP_INSTRUCTIONS: usize = 400;
/// Most loops copied in one function.
pub const MAX_LOOPS_PER_FUNCTION: usize = 16;
/// Most range conditions tested before one loop.
const MAX_REQUIREMENTS: usize = 32;

/// `ll` (as `opt` printed it) with every loop that qualifies versioned (see the module docs),
/// and how many loops were.
pub fn version_checked_loops(ll: &str) -> (String, usize) {
    let convergent = Convergent::of_module(ll);
    let mut pieces = parse_module(ll);
    let mut total = 0;
    for piece in &mut pieces {
        if let Piece::Function(function) = piece {
            total += version_function(function, &convergent);
        }
    }
    if total == 0 {
        return (ll.to_owned(), 0);
    }
    (fresh_loop_ids(write_module(&pieces)), total)
}

/// The branch weights of the test before a versioned loop: the copy is the expected path (the
/// weights of `__builtin_expect`), so `llc` lays the copy and its exit out as the straight
/// path, with a conditional back edge, and the checked original out of the way. ptxas
/// schedules a loop whose back edge is an unconditional `bra.uni` after a conditional exit
/// worse: gramschmidt's column update ran 1.2x slower so laid out.
pub(crate) const COPY_IS_LIKELY: &str = ", !prof !{!\"branch_weights\", i32 2000, i32 1}";

/// What a copy's branch names its loop metadata with until [fresh_loop_ids] gives it its own
/// node (a loop's `!llvm.loop` node is `distinct`: the copy is another loop).
pub(crate) const LOOP_ID_OF_COPY: &str = ", !llvm.loop !oxv.copy.";

/// `ll` with each copy's loop metadata a new `distinct` node holding the same properties as
/// the original's (`llvm.loop.mustprogress`, unrolling already done, ...); a copy whose
/// original node is not found gets none.
pub(crate) fn fresh_loop_ids(ll: String) -> String {
    let nodes: HashMap<&str, &str> = ll
        .lines()
        .filter_map(|line| {
            let (id, rest) = line.strip_prefix('!')?.split_once(" = distinct !{")?;
            let own = format!("!{id}");
            let properties = rest.strip_suffix('}')?.strip_prefix(own.as_str())?;
            id.bytes()
                .all(|b| b.is_ascii_digit())
                .then_some((id, properties))
        })
        .collect();
    let mut next = ll
        .lines()
        .filter_map(|line| {
            line.strip_prefix('!')?
                .split_once(" = ")?
                .0
                .parse::<u64>()
                .ok()
        })
        .max()
        .map_or(0, |max| max + 1);
    let mut out = String::with_capacity(ll.len());
    let mut added = String::new();
    let mut rest = ll.as_str();
    while let Some(at) = rest.find(LOOP_ID_OF_COPY) {
        out.push_str(&rest[..at]);
        let after = &rest[at + LOOP_ID_OF_COPY.len()..];
        let len = after.bytes().take_while(u8::is_ascii_digit).count();
        if let Some(properties) = nodes.get(&after[..len]) {
            out.push_str(&format!(", !llvm.loop !{next}"));
            added.push_str(&format!("!{next} = distinct !{{!{next}{properties}}}\n"));
            next += 1;
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    out.push_str(&added);
    out
}

/// Versions the loops of `function` one at a time (each changes the blocks the next one's
/// analysis sees); returns how many.
fn version_function(function: &mut Function, convergent: &Convergent) -> usize {
    let mut tried: HashSet<String> = HashSet::new();
    let mut done = 0;
    while done < MAX_LOOPS_PER_FUNCTION {
        let cfg = Cfg::new(function);
        let mut changed = false;
        for candidate in cfg.innermost_loops() {
            let header = function.blocks[candidate.header].label.clone();
            if !tried.insert(header) {
                continue;
            }
            if let Some(plan) = plan_loop(function, &cfg, &candidate, convergent) {
                let prefix = format!("oxv{done}.");
                tried.insert(format!(
                    "{prefix}{}",
                    function.blocks[candidate.header].label
                ));
                apply(function, &cfg, &candidate, plan, &prefix);
                done += 1;
                changed = true;
                break;
            }
        }
        if !changed {
            break;
        }
    }
    done
}

/// What makes a call convergent: the attribute groups holding `convergent` (`#3`) and the
/// functions declared or defined with it.
struct Convergent {
    groups: HashSet<String>,
    functions: HashSet<String>,
}

impl Convergent {
    fn of_module(ll: &str) -> Self {
        let groups: HashSet<String> = ll
            .lines()
            .filter_map(|l| l.strip_prefix("attributes #"))
            .filter(|l| l.contains(" convergent"))
            .filter_map(|l| l.split_whitespace().next().map(|n| format!("#{n}")))
            .collect();
        let functions = ll
            .lines()
            .filter(|l| l.starts_with("declare ") || l.starts_with("define "))
            .filter(|l| {
                l.contains(" convergent ")
                    || l.split_whitespace()
                        .any(|w| groups.contains(w.trim_end_matches('{')))
            })
            .filter_map(|l| called(l).map(str::to_owned))
            .collect();
        Convergent { groups, functions }
    }

    /// Whether the call `body` may be convergent (or is inline assembly, or calls through a
    /// pointer, which might be).
    fn call(&self, body: &str) -> bool {
        body.contains(" asm ")
            || body.contains(" convergent")
            || called(body).is_none_or(|callee| self.functions.contains(callee))
            || body
                .split_whitespace()
                .any(|w| self.groups.contains(w.trim_end_matches(',')))
    }
}

/// The control-flow graph of a function: successors, predecessors, dominators and the
/// blocks that can only end in `unreachable`.
pub(crate) struct Cfg {
    succs: Vec<Vec<usize>>,
    preds: Vec<Vec<usize>>,
    idom: Vec<Option<usize>>,
    /// Whether every path from the block ends in `unreachable` (a trap or a panic).
    pub(crate) failure: Vec<bool>,
}

/// A natural loop without loops inside it, entered from one block outside it (its
/// preheader, or the block a new preheader is placed after).
struct Loop {
    header: usize,
    blocks: Vec<usize>,
    in_loop: Vec<bool>,
    latch: usize,
    preheader: usize,
}

impl Cfg {
    pub(crate) fn new(function: &Function) -> Cfg {
        let index = function.block_index();
        let n = function.blocks.len();
        let succs: Vec<Vec<usize>> = function
            .blocks
            .iter()
            .map(|b| {
                b.terminator()
                    .successors()
                    .iter()
                    .filter_map(|l| index.get(l).copied())
                    .collect()
            })
            .collect();
        let mut preds = vec![Vec::new(); n];
        for (b, ss) in succs.iter().enumerate() {
            for &s in ss {
                if !preds[s].contains(&b) {
                    preds[s].push(b);
                }
            }
        }
        let idom = dominators(&succs, &preds);
        let mut failure: Vec<bool> = function
            .blocks
            .iter()
            .map(|b| b.terminator().opcode() == "unreachable")
            .collect();
        loop {
            let mut grew = false;
            for b in 0..n {
                let ends = b_ends_in_branch(&function.blocks[b]);
                if !failure[b]
                    && ends
                    && !succs[b].is_empty()
                    && succs[b].iter().all(|&s| failure[s])
                {
                    failure[b] = true;
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        Cfg {
            succs,
            preds,
            idom,
            failure,
        }
    }

    fn dominates(&self, a: usize, mut b: usize) -> bool {
        loop {
            if a == b {
                return true;
            }
            match self.idom[b] {
                Some(up) if up != b => b = up,
                _ => return false,
            }
        }
    }

    /// Natural loops with one latch, one edge entering them, and no other loop's header
    /// inside.
    fn innermost_loops(&self) -> Vec<Loop> {
        let n = self.succs.len();
        let mut loops = Vec::new();
        let headers: Vec<usize> = (0..n)
            .filter(|&h| {
                self.idom[h].is_some() && self.preds[h].iter().any(|&p| self.dominates(h, p))
            })
            .collect();
        for &header in &headers {
            let latches: Vec<usize> = self.preds[header]
                .iter()
                .copied()
                .filter(|&p| self.dominates(header, p))
                .collect();
            let mut in_loop = vec![false; n];
            in_loop[header] = true;
            let mut work = latches.clone();
            while let Some(b) = work.pop() {
                if !in_loop[b] {
                    in_loop[b] = true;
                    work.extend(
                        self.preds[b]
                            .iter()
                            .copied()
                            .filter(|&p| self.idom[p].is_some()),
                    );
                }
            }
            let blocks: Vec<usize> = (0..n).filter(|&b| in_loop[b]).collect();
            let nested = headers.iter().any(|&h| h != header && in_loop[h]);
            let outside: Vec<usize> = self.preds[header]
                .iter()
                .copied()
                .filter(|&p| !in_loop[p])
                .collect();
            if nested || latches.len() != 1 || outside.len() != 1 {
                continue;
            }
            let preheader = outside[0];
            if self.succs[preheader]
                .iter()
                .filter(|&&s| s == header)
                .count()
                != 1
            {
                continue;
            }
            loops.push(Loop {
                header,
                blocks,
                in_loop,
                latch: latches[0],
                preheader,
            });
        }
        loops
    }
}

fn b_ends_in_branch(block: &Block) -> bool {
    matches!(block.terminator().opcode(), "br" | "switch")
}

/// Immediate dominators (Cooper, Harvey and Kennedy's iteration over reverse postorder);
/// `None` for blocks not reachable from the entry.
fn dominators(succs: &[Vec<usize>], preds: &[Vec<usize>]) -> Vec<Option<usize>> {
    let n = succs.len();
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack = vec![(0usize, 0usize)];
    seen[0] = true;
    while let Some((b, next)) = stack.pop() {
        if next < succs[b].len() {
            stack.push((b, next + 1));
            let s = succs[b][next];
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            order.push(b);
        }
    }
    order.reverse();
    let mut rank = vec![usize::MAX; n];
    for (i, &b) in order.iter().enumerate() {
        rank[b] = i;
    }
    let mut idom: Vec<Option<usize>> = vec![None; n];
    idom[0] = Some(0);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            let mut new: Option<usize> = None;
            for &p in &preds[b] {
                if idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(mut x) => {
                        let mut y = p;
                        while x != y {
                            while rank[x] > rank[y] {
                                x = idom[x].expect("processed");
                            }
                            while rank[y] > rank[x] {
                                y = idom[y].expect("processed");
                            }
                        }
                        x
                    }
                });
            }
            if new.is_some() && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}

/// An integer of some width that does not change in the loop: a constant, a value defined
/// outside it, or arithmetic on those (materialised in the preheader).
#[derive(Clone, Debug, PartialEq)]
enum Inv {
    Const(i128),
    Value(String),
    Bin(&'static str, Box<Inv>, Box<Inv>),
    Cast(&'static str, Box<Inv>, u32),
    /// `distance >> k` when the low `k` bits of `distance` are zero, else all ones: the
    /// iteration at which a value counting by `2^k` from 0 meets `distance` (never, when the
    /// step does not divide it).
    Meets(Box<Inv>, u32),
}

/// `value` as a `width`-bit two's complement number (sign-extended into an `i128`).
fn wrap(value: i128, width: u32) -> i128 {
    let shift = 128 - width;
    (value << shift) >> shift
}

impl Inv {
    fn bin(op: &'static str, a: Inv, b: Inv, width: u32) -> Inv {
        match (op, &a, &b) {
            ("add", Inv::Const(x), Inv::Const(y)) => Inv::Const(wrap(x + y, width)),
            ("sub", Inv::Const(x), Inv::Const(y)) => Inv::Const(wrap(x - y, width)),
            ("mul", Inv::Const(x), Inv::Const(y)) => Inv::Const(wrap(x.wrapping_mul(*y), width)),
            ("shl", Inv::Const(x), Inv::Const(y)) if (0..width as i128).contains(y) => {
                Inv::Const(wrap(x << y, width))
            }
            ("add", _, Inv::Const(0)) | ("sub", _, Inv::Const(0)) | ("shl", _, Inv::Const(0)) => a,
            ("add", Inv::Const(0), _) => b,
            ("mul", _, Inv::Const(1)) => a,
            ("mul", Inv::Const(1), _) => b,
            ("mul", _, Inv::Const(0)) | ("mul", Inv::Const(0), _) => Inv::Const(0),
            _ => Inv::Bin(op, Box::new(a), Box::new(b)),
        }
    }

    fn cast(op: &'static str, a: Inv, from: u32, to: u32) -> Inv {
        match a {
            Inv::Const(x) => Inv::Const(match op {
                "zext" => wrap(x & ((1i128 << from) - 1), to),
                _ => wrap(x, to),
            }),
            a => Inv::Cast(op, Box::new(a), from),
        }
    }
}

/// A value equal to `base + j * step` (modulo 2^width) at the loop's `j`-th iteration, given
/// that the range requirements it collected hold.
#[derive(Clone, Debug)]
struct Affine {
    base: Inv,
    step: Inv,
    requires: Vec<Requirement>,
}

/// The exact values `base + j * step` for `j` in `0..=J` all lie in `[lo, hi)`, with `base`
/// read as unsigned (`signed` false) or signed and `step` as signed.
#[derive(Clone, Debug)]
struct Requirement {
    width: u32,
    base: Inv,
    step: Inv,
    signed: bool,
    lo: Wide,
    hi: Wide,
}

/// A 128-bit bound: a constant, an invariant read as unsigned plus a constant, or the
/// iteration after the last (`J + 1`).
#[derive(Clone, Debug)]
enum Wide {
    Const(i128),
    AfterLast,
    Unsigned(Inv, u32, i128),
}

/// How the loop's exit test bounds its iteration count.
#[derive(Clone, Debug)]
struct ExitTest {
    /// `pred` compares the tested value with `end`; the loop continues while it holds.
    pred: &'static str,
    width: u32,
    start: Inv,
    step: i128,
    end: Inv,
}

/// What versioning one loop takes: the exit test, the conditions, and the comparisons that
/// become constants in the copy.
struct Plan {
    exit: ExitTest,
    requires: Vec<Requirement>,
    proven: HashMap<String, bool>,
    /// Each loop block's successors in the copy, where branches the proven comparisons
    /// decide go one way only.
    copy_succs: HashMap<usize, Vec<usize>>,
    /// Values of the loop used after it, joined with the copy's by a `phi` in an exit block
    /// every such use lies below: (exit block, value, its type).
    merges: Vec<(usize, String, String)>,
}

/// The affine analysis of one loop's values.
struct Analysis<'f> {
    function: &'f Function,
    /// Block index by label.
    index: HashMap<&'f str, usize>,
    lp: &'f Loop,
    defs: HashMap<&'f str, (usize, usize)>,
    memo: HashMap<String, Option<Affine>>,
    visiting: HashSet<String>,
}

pub(crate) fn int_width(ty: &str) -> Option<u32> {
    let width: u32 = ty.strip_prefix('i')?.parse().ok()?;
    (1..=64).contains(&width).then_some(width)
}

impl<'f> Analysis<'f> {
    fn new(function: &'f Function, lp: &'f Loop) -> Self {
        let mut defs = HashMap::new();
        for (b, block) in function.blocks.iter().enumerate() {
            for (i, inst) in block.insts.iter().enumerate() {
                if let Some(name) = inst.result() {
                    defs.insert(name, (b, i));
                }
            }
        }
        Analysis {
            function,
            index: function.block_index(),
            lp,
            defs,
            memo: HashMap::new(),
            visiting: HashSet::new(),
        }
    }

    fn def_in_loop(&self, operand: &str) -> Option<&'f Inst> {
        let name = operand.strip_prefix('%')?;
        let &(b, i) = self.defs.get(name)?;
        self.lp.in_loop[b].then(|| &self.function.blocks[b].insts[i])
    }

    /// `operand` as an invariant, if it is one.
    fn invariant(&self, operand: &str, width: u32) -> Option<Inv> {
        if operand.starts_with('%') {
            return self
                .def_in_loop(operand)
                .is_none()
                .then(|| Inv::Value(operand.to_owned()));
        }
        let value: i128 = match operand {
            "true" => 1,
            "false" => 0,
            _ => operand.parse().ok()?,
        };
        Some(Inv::Const(wrap(value, width)))
    }

    fn affine(&mut self, operand: &str, width: u32) -> Option<Affine> {
        if let Some(inv) = self.invariant(operand, width) {
            return Some(Affine {
                base: inv,
                step: Inv::Const(0),
                requires: Vec::new(),
            });
        }
        if let Some(known) = self.memo.get(operand) {
            return known.clone();
        }
        if !self.visiting.insert(operand.to_owned()) {
            return None;
        }
        let result = self
            .def_in_loop(operand)
            .and_then(|inst| self.affine_of(operand, inst, width));
        self.visiting.remove(operand);
        self.memo.insert(operand.to_owned(), result.clone());
        result
    }

    fn affine_of(&mut self, name: &str, inst: &'f Inst, width: u32) -> Option<Affine> {
        let opcode = inst.opcode();
        match opcode {
            "phi" => self.header_phi(name, inst, width),
            "zext" | "sext" | "trunc" => {
                let (value, from, to) = inst.cast()?;
                let (from, to) = (int_width(from)?, int_width(to)?);
                (to == width).then_some(())?;
                let inner = self.affine(value, from)?;
                let mut requires = inner.requires.clone();
                let (base, step) = match opcode {
                    "trunc" => (
                        Inv::cast("trunc", inner.base, from, to),
                        Inv::cast("trunc", inner.step, from, to),
                    ),
                    _ => {
                        let signed = opcode == "sext";
                        let (lo, hi) = if signed {
                            (-(1i128 << (from - 1)), 1i128 << (from - 1))
                        } else {
                            (0, 1i128 << from)
                        };
                        requires.push(Requirement {
                            width: from,
                            base: inner.base.clone(),
                            step: inner.step.clone(),
                            signed,
                            lo: Wide::Const(lo),
                            hi: Wide::Const(hi),
                        });
                        (
                            Inv::cast(if signed { "sext" } else { "zext" }, inner.base, from, to),
                            Inv::cast("sext", inner.step, from, to),
                        )
                    }
                };
                Some(Affine {
                    base,
                    step,
                    requires,
                })
            }
            "add" | "sub" | "mul" | "shl" | "or" => {
                if opcode == "or" && !inst.body().starts_with("or disjoint ") {
                    return None;
                }
                let (ty, operands) = inst.typed_operands()?;
                (int_width(ty)? == width && operands.len() == 2).then_some(())?;
                let a = self.affine(operands[0], width)?;
                let b = self.affine(operands[1], width)?;
                let mut requires = a.requires.clone();
                requires.extend(b.requires.iter().cloned());
                let (base, step) = match opcode {
                    "add" | "or" => (
                        Inv::bin("add", a.base, b.base, width),
                        Inv::bin("add", a.step, b.step, width),
                    ),
                    "sub" => (
                        Inv::bin("sub", a.base, b.base, width),
                        Inv::bin("sub", a.step, b.step, width),
                    ),
                    "mul" if b.step == Inv::Const(0) => (
                        Inv::bin("mul", a.base, b.base.clone(), width),
                        Inv::bin("mul", a.step, b.base, width),
                    ),
                    "mul" if a.step == Inv::Const(0) => (
                        Inv::bin("mul", b.base, a.base.clone(), width),
                        Inv::bin("mul", b.step, a.base, width),
                    ),
                    "shl" if b.step == Inv::Const(0) && matches!(b.base, Inv::Const(_)) => (
                        Inv::bin("shl", a.base, b.base.clone(), width),
                        Inv::bin("shl", a.step, b.base, width),
                    ),
                    _ => return None,
                };
                Some(Affine {
                    base,
                    step,
                    requires,
                })
            }
            _ => None,
        }
    }

    /// A header `phi` of an induction variable: `[start, preheader], [next, latch]` with
    /// `next = phi + step`, or `next` affine with `next.base - next.step == start` (a `phi`
    /// that lags another induction variable by one iteration).
    fn header_phi(&mut self, name: &str, inst: &'f Inst, width: u32) -> Option<Affine> {
        let (ty, entries) = inst.phi()?;
        (int_width(ty)? == width && entries.len() == 2).then_some(())?;
        let (b, _) = self.defs[name.strip_prefix('%')?];
        (b == self.lp.header).then_some(())?;
        let label = |i: usize| self.function.blocks[i].label.as_str();
        let start = entries.iter().find(|e| e.1 == label(self.lp.preheader))?.0;
        let next = entries.iter().find(|e| e.1 == label(self.lp.latch))?.0;
        let start = self.invariant(start, width)?;
        if let Some(step) = self.self_increment(name, next, width) {
            return Some(Affine {
                base: start,
                step,
                requires: Vec::new(),
            });
        }
        let next = self.affine(next, width)?;
        let lagged = Inv::bin("sub", next.base.clone(), next.step.clone(), width);
        (lagged == start).then_some(Affine {
            base: start,
            step: next.step,
            requires: next.requires,
        })
    }

    /// `step` when `next` is `phi + step` or `phi - c` with `step` invariant.
    fn self_increment(&self, phi: &str, next: &str, width: u32) -> Option<Inv> {
        let inst = self.def_in_loop(next)?;
        let (ty, operands) = inst.typed_operands()?;
        (int_width(ty)? == width && operands.len() == 2).then_some(())?;
        match inst.opcode() {
            "add" if operands[0] == phi => self.on_back_edge(operands[1], width),
            "add" if operands[1] == phi => self.on_back_edge(operands[0], width),
            "sub" if operands[0] == phi => match self.invariant(operands[1], width)? {
                Inv::Const(c) => Some(Inv::Const(wrap(-c, width))),
                _ => None,
            },
            _ => None,
        }
    }

    /// `operand` as an invariant on the loop's back edge: an invariant, or the latch's own
    /// branch condition widened to an integer, which is known there (a dev build's
    /// `Range::next` adds `zext(i < end)` to the counter and loops while `i < end`).
    fn on_back_edge(&self, operand: &str, width: u32) -> Option<Inv> {
        if let Some(inv) = self.invariant(operand, width) {
            return Some(inv);
        }
        let (value, from, _) = self
            .def_in_loop(operand)
            .filter(|i| i.opcode() == "zext")?
            .cast()?;
        let (cond, on_true, _) = self.function.blocks[self.lp.latch].terminator().cond_br()?;
        let header = &self.function.blocks[self.lp.header].label;
        (from == "i1" && value == cond).then(|| Inv::Const(i128::from(on_true == header)))
    }

    /// The exit test of the block `b` (which runs on every iteration), if it bounds the
    /// iteration count.
    fn exit_test(&mut self, cfg: &Cfg, b: usize) -> Option<ExitTest> {
        let (cond, t, f) = self.function.blocks[b].terminator().cond_br()?;
        let (t, f) = (self.index[t], self.index[f]);
        let continues_on_true = match (self.lp.in_loop[t], self.lp.in_loop[f]) {
            (true, false) if !cfg.failure[f] => true,
            (false, true) if !cfg.failure[t] => false,
            _ => return None,
        };
        let cmp = self.def_in_loop(cond)?;
        let pred = cmp.icmp_predicate()?;
        let (ty, operands) = cmp.typed_operands()?;
        let width = int_width(ty)?;
        let (mut pred, tested, end) = match (
            self.invariant(operands[0], width),
            self.invariant(operands[1], width),
        ) {
            (None, Some(end)) => (canonical(pred), operands[0], end),
            (Some(end), None) => (swapped(pred), operands[1], end),
            _ => return None,
        };
        if !continues_on_true {
            pred = inverse(pred);
        }
        let tested = self.affine(tested, width)?;
        if !tested.requires.is_empty() {
            return None;
        }
        let Inv::Const(step) = tested.step else {
            return None;
        };
        let fits = match pred {
            // Counting by a power of two reaches `end` exactly when the distance is a multiple
            // of the step (a condition of the test before the loop).
            "ne" => {
                step != 0
                    && step.unsigned_abs().is_power_of_two()
                    && step.unsigned_abs() < 1 << (width - 1)
            }
            "ult" | "ule" | "slt" | "sle" => step == 1,
            "ugt" | "uge" | "sgt" | "sge" => step == -1,
            _ => false,
        };
        fits.then_some(ExitTest {
            pred,
            width,
            start: tested.base,
            step,
            end,
        })
    }

    /// The conditions under which the comparison `cond` takes the value `holds`, when it is
    /// a check (or `and`s of checks) on an affine index; every proven comparison goes to
    /// `proven`. Comparisons that cannot be proven are left alone.
    fn checks(
        &mut self,
        cond: &str,
        holds: bool,
        requires: &mut Vec<Requirement>,
        proven: &mut Vec<(String, bool)>,
    ) {
        let Some(inst) = self.def_in_loop(cond) else {
            // A condition computed before the loop (`i < len` for an index that does not
            // move): tested before the loop as it is.
            if let Some(name) = cond.strip_prefix('%') {
                requires.push(Requirement::flag(cond, holds));
                proven.push((name.to_owned(), holds));
            }
            return;
        };
        // Both parts of a conjunction that holds, or of a disjunction that fails.
        if let Some((a, b)) = inst.logical(holds) {
            self.checks(a, holds, requires, proven);
            self.checks(b, holds, requires, proven);
            return;
        }
        let Some(pred) = inst.icmp_predicate() else {
            return;
        };
        let Some((ty, operands)) = inst.typed_operands() else {
            return;
        };
        let Some(width) = int_width(ty) else {
            return;
        };
        let pred = if holds { pred } else { inverse(pred) };
        if pred == "ne" {
            self.avoided(
                cond,
                operands[0],
                operands[1],
                width,
                holds,
                requires,
                proven,
            );
            return;
        }
        // index <u len, index <=u last (and the same with the operands swapped)
        let (index, bound, inclusive) = match canonical(pred) {
            "ult" => (operands[0], operands[1], false),
            "ule" => (operands[0], operands[1], true),
            "ugt" => (operands[1], operands[0], false),
            "uge" => (operands[1], operands[0], true),
            _ => return,
        };
        let Some(bound) = self.invariant(bound, width) else {
            return;
        };
        let Some(index) = self.affine(index, width) else {
            return;
        };
        if index.step == Inv::Const(0) {
            return;
        }
        let name = cond.strip_prefix('%').unwrap_or(cond).to_owned();
        requires.extend(index.requires);
        requires.push(Requirement {
            width,
            base: index.base,
            step: index.step,
            signed: false,
            lo: Wide::Const(0),
            hi: Wide::Unsigned(bound, width, i128::from(inclusive)),
        });
        proven.push((name, holds));
    }
}

impl Analysis<'_> {
    /// A check that a value counting by one never meets an invariant (`remaining != 0`, the
    /// form LLVM gives `i < len` when it counts the distance down): it holds on every
    /// iteration when the iteration at which they would meet lies after `J`.
    #[allow(clippy::too_many_arguments)]
    fn avoided(
        &mut self,
        cond: &str,
        a: &str,
        b: &str,
        width: u32,
        holds: bool,
        requires: &mut Vec<Requirement>,
        proven: &mut Vec<(String, bool)>,
    ) {
        let (value, avoided) = match (self.invariant(a, width), self.invariant(b, width)) {
            (None, Some(avoided)) => (a, avoided),
            (Some(avoided), None) => (b, avoided),
            _ => return,
        };
        let Some(value) = self.affine(value, width) else {
            return;
        };
        let Inv::Const(step) = value.step else {
            return;
        };
        let stride = step.unsigned_abs();
        if step == 0 || !stride.is_power_of_two() || stride >= 1 << (width - 1) {
            return;
        }
        // They meet at the iteration `distance / stride`, if `stride` divides `distance`.
        let distance = if step > 0 {
            Inv::bin("sub", avoided, value.base, width)
        } else {
            Inv::bin("sub", value.base, avoided, width)
        };
        let meets = match stride {
            1 => distance,
            _ => Inv::Meets(Box::new(distance), stride.trailing_zeros()),
        };
        requires.extend(value.requires);
        requires.push(Requirement::after_last(width, meets));
        proven.push((cond.strip_prefix('%').unwrap_or(cond).to_owned(), holds));
    }
}

impl Requirement {
    /// The invariant `i1` value `cond` is `holds`: as a range, its value (0 or 1) lies in
    /// `[holds, holds + 1)`.
    fn flag(cond: &str, holds: bool) -> Requirement {
        Requirement {
            width: 1,
            base: Inv::Value(cond.to_owned()),
            step: Inv::Const(0),
            signed: false,
            lo: Wide::Const(i128::from(holds)),
            hi: Wide::Const(i128::from(holds) + 1),
        }
    }

    /// `value` (of `width` bits, read as unsigned) is above the last iteration `J`: the
    /// exact values `value + j * 0` lie in `[J + 1, ∞)`, written as a range whose lower bound
    /// is the iteration count.
    fn after_last(width: u32, value: Inv) -> Requirement {
        Requirement {
            width,
            base: value,
            step: Inv::Const(0),
            signed: false,
            lo: Wide::AfterLast,
            hi: Wide::Const(1i128 << width),
        }
    }
}

/// The predicate itself (the table of predicates is closed under these maps).
fn canonical(pred: &str) -> &'static str {
    match pred {
        "eq" => "eq",
        "ne" => "ne",
        "ult" => "ult",
        "ule" => "ule",
        "ugt" => "ugt",
        "uge" => "uge",
        "slt" => "slt",
        "sle" => "sle",
        "sgt" => "sgt",
        _ => "sge",
    }
}

/// `b pred' a` for `a pred b`.
fn swapped(pred: &str) -> &'static str {
    match pred {
        "ult" => "ugt",
        "ule" => "uge",
        "ugt" => "ult",
        "uge" => "ule",
        "slt" => "sgt",
        "sle" => "sge",
        "sgt" => "slt",
        "sge" => "sle",
        other => canonical(other),
    }
}

/// `!(a pred b)` as `a pred' b`.
pub(crate) fn inverse(pred: &str) -> &'static str {
    match pred {
        "eq" => "ne",
        "ne" => "eq",
        "ult" => "uge",
        "ule" => "ugt",
        "ugt" => "ule",
        "uge" => "ult",
        "slt" => "sge",
        "sle" => "sgt",
        "sgt" => "sle",
        _ => "slt",
    }
}

/// The versioning plan of `lp`, or `None` when it does not qualify.
fn plan_loop(function: &Function, cfg: &Cfg, lp: &Loop, convergent: &Convergent) -> Option<Plan> {
    let size: usize = lp
        .blocks
        .iter()
        .map(|&b| function.blocks[b].insts.len())
        .sum();
    if size > MAX_LOOP_INSTRUCTIONS {
        return None;
    }
    for &b in &lp.blocks {
        for inst in &function.blocks[b].insts {
            // A scope declaration of `noalias` metadata would need scopes of its own in a copy.
            let unsafe_call = inst.opcode() == "call"
                && (convergent.call(inst.body())
                    || inst
                        .body()
                        .contains("@llvm.experimental.noalias.scope.decl"));
            if unsafe_call || matches!(inst.opcode(), "indirectbr" | "callbr" | "invoke") {
                return None;
            }
        }
    }
    let mut analysis = Analysis::new(function, lp);
    let exit = lp
        .blocks
        .iter()
        .copied()
        .filter(|&b| cfg.dominates(b, lp.latch))
        .find_map(|b| analysis.exit_test(cfg, b))?;
    let mut requires = Vec::new();
    let mut proven = Vec::new();
    for &b in &lp.blocks {
        let Some((cond, t, f)) = function.blocks[b].terminator().cond_br() else {
            continue;
        };
        let (t, f) = (analysis.index[t], analysis.index[f]);
        let holds = match (cfg.failure[t], cfg.failure[f]) {
            (false, true) if !lp.in_loop[f] => true,
            (true, false) if !lp.in_loop[t] => false,
            _ => continue,
        };
        analysis.checks(cond, holds, &mut requires, &mut proven);
    }
    if proven.is_empty() || requires.len() > MAX_REQUIREMENTS {
        return None;
    }
    let proven: HashMap<String, bool> = proven.into_iter().collect();
    let copy_succs = lp
        .blocks
        .iter()
        .map(|&b| {
            let terminator = function.blocks[b].terminator();
            let succs = match terminator.cond_br() {
                Some((cond, t, f)) => match decided(&analysis, cond, &proven) {
                    Some(true) => vec![analysis.index[t]],
                    Some(false) => vec![analysis.index[f]],
                    None => cfg.succs[b].clone(),
                },
                None => cfg.succs[b].clone(),
            };
            (b, succs)
        })
        .collect();
    let merges = merges_at_exits(function, cfg, lp, &copy_succs)?;
    Some(Plan {
        exit,
        requires,
        proven,
        copy_succs,
        merges,
    })
}

/// The value the `i1` condition `cond` takes in the copy when the proven comparisons decide
/// it (alone, or through `and`, `or` and the `select`s standing for them).
fn decided(analysis: &Analysis<'_>, cond: &str, proven: &HashMap<String, bool>) -> Option<bool> {
    let name = cond.strip_prefix('%')?;
    if let Some(&value) = proven.get(name) {
        return Some(value);
    }
    let inst = analysis.def_in_loop(cond)?;
    let value = |operand: &str| match operand {
        "true" => Some(true),
        "false" => Some(false),
        _ => decided(analysis, operand, proven),
    };
    let (is_and, (a, b)) = match inst.logical(true) {
        Some(parts) => (true, parts),
        None => (false, inst.logical(false)?),
    };
    match (value(a), value(b)) {
        (Some(x), Some(y)) => Some(if is_and { x && y } else { x || y }),
        (Some(x), None) | (None, Some(x)) if x != is_and => Some(x),
        _ => None,
    }
}

/// The `phi`s joining the loop's values with the copy's for their uses after the loop: a use
/// the copy can reach (a non-`phi` use, or a `phi`'s on an edge from outside the loop) must lie
/// below an exit block that only the loop enters, where the `phi` goes. `None` when a use has
/// no such block.
fn merges_at_exits(
    function: &Function,
    cfg: &Cfg,
    lp: &Loop,
    copy_succs: &HashMap<usize, Vec<usize>>,
) -> Option<Vec<(usize, String, String)>> {
    let mut defined: HashMap<&str, &Inst> = HashMap::new();
    for &b in &lp.blocks {
        for inst in &function.blocks[b].insts {
            if let Some(name) = inst.result() {
                defined.insert(name, inst);
            }
        }
    }
    let exits: Vec<usize> = copy_succs
        .values()
        .flatten()
        .copied()
        .filter(|&s| !lp.in_loop[s])
        .collect();
    let mut reached = vec![false; function.blocks.len()];
    let mut work = exits.clone();
    while let Some(b) = work.pop() {
        if !lp.in_loop[b] && !reached[b] {
            reached[b] = true;
            work.extend(cfg.succs[b].iter().copied());
        }
    }
    let label_index = function.block_index();
    let mut merges: Vec<(usize, String, String)> = Vec::new();
    for (u, block) in function.blocks.iter().enumerate() {
        if lp.in_loop[u] || !reached[u] {
            continue;
        }
        for inst in &block.insts {
            // Where each use is: a `phi`'s at the end of the predecessor it names.
            let used: Vec<(&str, usize)> = match inst.phi() {
                Some((_, entries)) => entries
                    .iter()
                    .filter_map(|(value, pred)| {
                        Some((value.strip_prefix('%')?, label_index.get(pred).copied()?))
                    })
                    .filter(|&(_, p)| !lp.in_loop[p])
                    .collect(),
                None => inst.uses().into_iter().map(|v| (v, u)).collect(),
            };
            for (value, at) in used.into_iter().filter(|(v, _)| defined.contains_key(v)) {
                let exit = exits.iter().copied().find(|&y| {
                    cfg.dominates(y, at) && cfg.preds[y].iter().all(|&p| lp.in_loop[p])
                })?;
                if !merges.iter().any(|(y, v, _)| *y == exit && v == value) {
                    let ty = defined[value].result_type()?;
                    merges.push((exit, value.to_owned(), ty.to_owned()));
                }
            }
        }
    }
    Some(merges)
}

/// The function a `call` names (`@f`), if it names one directly.
fn called(body: &str) -> Option<&str> {
    let at = body.find(" @")? + 2;
    let end = body[at..].find('(')? + at;
    Some(&body[at..end])
}

/// `name` (a local name without `%`, perhaps quoted) with `prefix` before it.
fn prefixed(prefix: &str, name: &str) -> String {
    match name.strip_prefix('"') {
        Some(quoted) => format!("\"{prefix}{quoted}"),
        None => format!("{prefix}{name}"),
    }
}

/// Writes the preheader's test and the loop's copy into `function`.
fn apply(function: &mut Function, cfg: &Cfg, lp: &Loop, plan: Plan, prefix: &str) {
    let loop_names: HashSet<String> = lp
        .blocks
        .iter()
        .flat_map(|&b| {
            let block = &function.blocks[b];
            std::iter::once(block.label.clone()).chain(
                block
                    .insts
                    .iter()
                    .filter_map(|i| i.result().map(str::to_owned)),
            )
        })
        .collect();
    let rename = |name: &str| -> Option<String> {
        loop_names.contains(name).then(|| prefixed(prefix, name))
    };
    let labels: Vec<String> = function.blocks.iter().map(|b| b.label.clone()).collect();
    let index: HashMap<&str, usize> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| (l.as_str(), i))
        .collect();
    let label = |b: usize| labels[b].clone();

    // The copy: every local name of the loop renamed, proven comparisons made constants,
    // branches they decide made unconditional, loop metadata of its own.
    let mut copies: Vec<Block> = Vec::new();
    for &b in &lp.blocks {
        let block = &function.blocks[b];
        let mut insts: Vec<Inst> = block
            .insts
            .iter()
            .map(|inst| {
                let mut copy = inst.renamed(&rename);
                if let Some(&value) = inst.result().and_then(|r| plan.proven.get(r)) {
                    let name = copy.result().unwrap_or_default().to_owned();
                    let pred = if value { "eq" } else { "ne" };
                    copy.text = format!("%{name} = icmp {pred} i8 0, 0");
                }
                copy.text = copy.text.replace(", !llvm.loop !", LOOP_ID_OF_COPY);
                copy
            })
            .collect();
        if let [only] = plan.copy_succs[&b][..]
            && cfg.succs[b].len() == 2
        {
            let target = rename(&label(only)).unwrap_or_else(|| label(only));
            let last = insts.last_mut().expect("a terminator");
            let metadata = last.text.find(", !").map_or("", |at| &last.text[at..]);
            last.text = format!("br label %{target}{metadata}");
        }
        copies.push(Block {
            label: rename(&block.label).expect("loop label"),
            insts,
        });
    }

    // Exits: each `phi` after the loop gets the copy's value on each edge the copy keeps.
    let edges = |from: usize, to: usize| cfg.succs[from].iter().filter(|&&s| s == to).count();
    let copy_edges = |from: usize, to: usize| {
        if plan.copy_succs[&from].contains(&to) {
            edges(from, to)
        } else {
            0
        }
    };
    let mut phi_updates: Vec<(usize, usize, String)> = Vec::new();
    for y in 0..function.blocks.len() {
        if lp.in_loop[y] || !cfg.preds[y].iter().any(|&p| lp.in_loop[p]) {
            continue;
        }
        for (i, inst) in function.blocks[y].insts.iter().enumerate() {
            let Some((_, entries)) = inst.phi() else {
                continue;
            };
            let mut extra = String::new();
            let mut seen = HashSet::new();
            for (value, pred) in entries {
                let Some(&x) = index.get(pred).filter(|&&x| lp.in_loop[x]) else {
                    continue;
                };
                if !seen.insert(x) {
                    continue;
                }
                let new_value = match value.strip_prefix('%') {
                    Some(v) => rename(v).map_or(value.to_string(), |n| format!("%{n}")),
                    None => value.to_string(),
                };
                let new_pred = rename(pred).expect("a loop label");
                for _ in 0..copy_edges(x, y) {
                    extra.push_str(&format!(", [ {new_value}, %{new_pred} ]"));
                }
            }
            if !extra.is_empty() {
                phi_updates.push((y, i, extra));
            }
        }
    }
    for (y, i, extra) in phi_updates {
        let inst = &mut function.blocks[y].insts[i];
        let end = inst.text.rfind(" ]").expect("phi entries") + 2;
        inst.text.insert_str(end, &extra);
    }

    // Values used after the loop: a `phi` in the exit block joins the two copies' values, and
    // the uses below it take the `phi`.
    for (y, value, ty) in &plan.merges {
        let joined = prefixed(&format!("{prefix}lcssa."), value);
        let mut entries = Vec::new();
        for &x in &cfg.preds[*y] {
            entries.extend((0..edges(x, *y)).map(|_| format!("[ %{value}, %{} ]", label(x))));
            let copy_value = rename(value).expect("a loop value");
            let copy_pred = rename(&label(x)).expect("a loop label");
            entries
                .extend((0..copy_edges(x, *y)).map(|_| format!("[ %{copy_value}, %{copy_pred} ]")));
        }
        let to_joined = |name: &str| (name == value).then(|| joined.clone());
        for u in 0..function.blocks.len() {
            if lp.in_loop[u] {
                continue;
            }
            for inst in &mut function.blocks[u].insts {
                if inst.opcode() == "phi" {
                    // Entries on edges from blocks below the exit.
                    for pred in &cfg.preds[u] {
                        if lp.in_loop[*pred] || !cfg.dominates(*y, *pred) {
                            continue;
                        }
                        let entry = format!("[ %{value}, %{} ]", labels[*pred]);
                        let joined_entry = format!("[ %{joined}, %{} ]", labels[*pred]);
                        inst.text = inst.text.replace(&entry, &joined_entry);
                    }
                } else if cfg.dominates(*y, u) {
                    *inst = inst.renamed(&to_joined);
                }
            }
        }
        function.blocks[*y].insts.insert(
            0,
            Inst {
                text: format!("%{joined} = phi {ty} {}", entries.join(", ")),
            },
        );
    }

    // The preheader computes the conditions, then enters the copy or the original. A loop
    // entered by a conditional branch gets a block of its own for that on the entering edge.
    let header_label = function.blocks[lp.header].label.clone();
    let copy_header = rename(&header_label).expect("header label");
    let mut emitter = Emitter::new(prefix);
    let ok = emitter.conditions(&plan);
    let entering = function.blocks[lp.preheader].terminator().clone();
    let metadata: String = entering
        .text
        .find(", !")
        .map_or("", |at| &entering.text[at..])
        .split(", !")
        .filter(|attachment| !attachment.is_empty() && !attachment.starts_with("prof "))
        .map(|attachment| format!(", !{attachment}"))
        .collect();
    let choose = Inst {
        text: format!(
            "br i1 {ok}, label %{copy_header}, label %{header_label}{metadata}{COPY_IS_LIKELY}"
        ),
    };
    let mut test: Vec<Inst> = emitter
        .lines
        .into_iter()
        .map(|text| Inst { text })
        .collect();
    test.push(choose);
    if entering.cond_br().is_none() && cfg.succs[lp.preheader].len() == 1 {
        let preheader = &mut function.blocks[lp.preheader];
        preheader.insts.pop();
        preheader.insts.extend(test);
    } else {
        let old = function.blocks[lp.preheader].label.clone();
        let new = format!("{prefix}ph");
        let retarget = |name: &str| (name == header_label).then(|| new.clone());
        let from_old = |name: &str| (name == old).then(|| new.clone());
        let preheader = &mut function.blocks[lp.preheader];
        let branch = preheader.insts.pop().expect("preheader branch");
        preheader.insts.push(branch.renamed(&retarget));
        let copy = copies
            .iter_mut()
            .find(|b| b.label == copy_header)
            .expect("the header's copy");
        for header in [&mut function.blocks[lp.header], copy] {
            for inst in header.insts.iter_mut().filter(|i| i.opcode() == "phi") {
                *inst = inst.renamed(&from_old);
            }
        }
        function.blocks.push(Block {
            label: new,
            insts: test,
        });
    }
    function.blocks.extend(copies);
}

/// Writes the preheader's instructions.
struct Emitter {
    prefix: String,
    lines: Vec<String>,
    values: HashMap<String, String>,
}

impl Emitter {
    fn new(prefix: &str) -> Self {
        Emitter {
            prefix: format!("%{prefix}c"),
            lines: Vec::new(),
            values: HashMap::new(),
        }
    }

    fn emit(&mut self, body: String) -> String {
        if let Some(known) = self.values.get(&body) {
            return known.clone();
        }
        let name = format!("{}{}", self.prefix, self.lines.len());
        self.lines.push(format!("{name} = {body}"));
        self.values.insert(body, name.clone());
        name
    }

    /// `inv` as an operand of type `i{width}`.
    fn inv(&mut self, inv: &Inv, width: u32) -> String {
        match inv {
            Inv::Const(c) => wrap(*c, width).to_string(),
            Inv::Value(v) => v.clone(),
            Inv::Bin(op, a, b) => {
                let (a, b) = (self.inv(a, width), self.inv(b, width));
                self.emit(format!("{op} i{width} {a}, {b}"))
            }
            Inv::Cast(op, a, from) => {
                let a = self.inv(a, *from);
                self.emit(format!("{op} i{from} {a} to i{width}"))
            }
            Inv::Meets(distance, k) => {
                let d = self.inv(distance, width);
                let low = self.emit(format!("and i{width} {d}, {}", (1i128 << k) - 1));
                let divides = self.emit(format!("icmp eq i{width} {low}, 0"));
                let at = self.emit(format!("lshr i{width} {d}, {k}"));
                self.emit(format!("select i1 {divides}, i{width} {at}, i{width} -1"))
            }
        }
    }

    /// `inv` (of `width` bits) as a 128-bit operand, read as signed or unsigned.
    fn wide(&mut self, inv: &Inv, width: u32, signed: bool) -> String {
        if let Inv::Const(c) = inv {
            let c = wrap(*c, width);
            return if signed || c >= 0 {
                c
            } else {
                c + (1i128 << width)
            }
            .to_string();
        }
        let value = self.inv(inv, width);
        let op = if signed { "sext" } else { "zext" };
        self.emit(format!("{op} i{width} {value} to i128"))
    }

    fn bound(&mut self, bound: &Wide, last: &str) -> String {
        match bound {
            Wide::Const(c) => c.to_string(),
            Wide::AfterLast => self.emit(format!("add i128 {last}, 1")),
            Wide::Unsigned(inv, width, plus) => {
                let value = self.wide(inv, *width, false);
                if *plus == 0 {
                    value
                } else {
                    self.emit(format!("add i128 {value}, {plus}"))
                }
            }
        }
    }

    /// The largest iteration number `J` the exit test lets run, as an `i128` (see
    /// [ExitTest]); with the conditions it needs pushed onto `all`.
    fn iterations(&mut self, exit: &ExitTest, all: &mut Vec<String>) -> String {
        let w = exit.width;
        let signed = exit.pred.starts_with('s');
        if exit.pred == "ne" {
            let start = self.inv(&exit.start, w);
            let end = self.inv(&exit.end, w);
            let distance = if exit.step > 0 {
                self.emit(format!("sub i{w} {end}, {start}"))
            } else {
                self.emit(format!("sub i{w} {start}, {end}"))
            };
            let stride = exit.step.unsigned_abs();
            if stride == 1 {
                return self.emit(format!("zext i{w} {distance} to i128"));
            }
            let rest = self.emit(format!("and i{w} {distance}, {}", stride - 1));
            all.push(self.emit(format!("icmp eq i{w} {rest}, 0")));
            let count = self.emit(format!("lshr i{w} {distance}, {}", stride.trailing_zeros()));
            return self.emit(format!("zext i{w} {count} to i128"));
        }
        let start = self.wide(&exit.start, w, signed);
        let end = self.wide(&exit.end, w, signed);
        let up = exit.step == 1;
        let inclusive = matches!(exit.pred, "ule" | "sle" | "uge" | "sge");
        if inclusive {
            // `<= end` never fails when `end` is the type's extreme: no bound then.
            let extreme: i128 = match (signed, up) {
                (false, true) => (1i128 << w) - 1,
                (false, false) => 0,
                (true, true) => (1i128 << (w - 1)) - 1,
                (true, false) => -(1i128 << (w - 1)),
            };
            all.push(self.emit(format!("icmp ne i128 {end}, {extreme}")));
        }
        let (from, to) = if up { (&end, &start) } else { (&start, &end) };
        let mut distance = self.emit(format!("sub i128 {from}, {to}"));
        if inclusive {
            distance = self.emit(format!("add i128 {distance}, 1"));
        }
        let none = self.emit(format!("icmp slt i128 {distance}, 0"));
        self.emit(format!("select i1 {none}, i128 0, i128 {distance}"))
    }

    /// The preheader's condition: an `i1` operand true when every requirement holds.
    fn conditions(&mut self, plan: &Plan) -> String {
        let mut all = Vec::new();
        let last = self.iterations(&plan.exit, &mut all);
        for req in &plan.requires {
            let first = self.wide(&req.base, req.width, req.signed);
            let step = self.wide(&req.step, req.width, true);
            let span = match step.as_str() {
                "1" => last.clone(),
                _ => self.emit(format!("mul i128 {last}, {step}")),
            };
            let end = self.emit(format!("add i128 {first}, {span}"));
            let lo = self.bound(&req.lo, &last);
            let hi = self.bound(&req.hi, &last);
            // An unsigned first value is never below a lower bound of zero.
            if req.signed || !matches!(req.lo, Wide::Const(0)) {
                all.push(self.emit(format!("icmp sge i128 {first}, {lo}")));
            }
            all.push(self.emit(format!("icmp slt i128 {first}, {hi}")));
            all.push(self.emit(format!("icmp sge i128 {end}, {lo}")));
            all.push(self.emit(format!("icmp slt i128 {end}, {hi}")));
        }
        let mut ok = all[0].clone();
        for cond in &all[1..] {
            ok = self.emit(format!("and i1 {ok}, {cond}"));
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loop as `opt -O3` leaves it: `sum += a[row * k + i] * b[i * n + col]`, with a check
    /// for each slice branching to one trap block. `BODY_EXTRA` goes into the loop body,
    /// `AFTER` after the loop.
    fn two_slices(body_extra: &str, after: &str) -> String {
        format!(
            r#"target datalayout = "{layout}"
target triple = "nvptx64-nvidia-cuda"

define ptx_kernel void @dot(ptr addrspace(1) noalias readonly align 4 %a, i64 %a.len, ptr addrspace(1) noalias readonly align 4 %b, i64 %b.len, ptr addrspace(1) noalias align 4 %out, i64 %row, i64 %col, i64 %n, i64 %k) #1 {{
entry:
  %empty = icmp eq i64 %k, 0
  br i1 %empty, label %done, label %ph

ph:                                               ; preds = %entry
  %base = mul i64 %k, %row
  br label %loop

loop:                                             ; preds = %ph, %body
  %i = phi i64 [ 0, %ph ], [ %i.next, %body ]
  %sum = phi float [ 0.000000e+00, %ph ], [ %sum.next, %body ]
  %ia = add i64 %i, %base
  %ok.a = icmp ult i64 %ia, %a.len
  br i1 %ok.a, label %check.b, label %panic, !dbg !3

check.b:                                          ; preds = %loop
  %ib.0 = mul i64 %i, %n
  %ib = add i64 %ib.0, %col
  %ok.b = icmp samesign ult i64 %ib, %b.len
  br i1 %ok.b, label %body, label %panic

body:                                             ; preds = %check.b
  %pa = getelementptr inbounds float, ptr addrspace(1) %a, i64 %ia
  %va = load float, ptr addrspace(1) %pa, align 4
  %pb = getelementptr inbounds float, ptr addrspace(1) %b, i64 %ib
  %vb = load float, ptr addrspace(1) %pb, align 4
  %prod = fmul float %va, %vb
  %sum.next = fadd float %sum, %prod
{body_extra}  %i.next = add nuw i64 %i, 1
  %more = icmp ne i64 %i.next, %k
  br i1 %more, label %loop, label %done, !llvm.loop !5

done:                                             ; preds = %body, %entry
  %total = phi float [ 0.000000e+00, %entry ], [ %sum.next, %body ]
{after}  store float %total, ptr addrspace(1) %out, align 4
  ret void

panic:                                            ; preds = %check.b, %loop
  tail call void @llvm.trap()
  unreachable
}}

declare void @llvm.trap() #0

declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32) #2

attributes #0 = {{ cold noreturn nounwind }}
attributes #1 = {{ nounwind }}
attributes #2 = {{ convergent nocallback nounwind }}

!llvm.module.flags = !{{!0}}
!0 = !{{i32 2, !"Debug Info Version", i32 3}}
!3 = !{{}}
!5 = distinct !{{!5, !6}}
!6 = !{{!"llvm.loop.mustprogress"}}
"#,
            layout = llvm_export::NVPTX_DATA_LAYOUT
        )
    }

    fn function_text(ll: &str) -> &str {
        let start = ll.find("define ").expect("a function");
        let end = ll[start..].find("\n}\n").expect("its end") + start + 3;
        &ll[start..end]
    }

    /// The golden text: the preheader's test, the original loop unchanged, the copy with
    /// both checks constant and loop metadata of its own, the exit `phi` joined by the copy.
    #[test]
    fn a_loop_with_two_checked_slices_is_versioned() {
        let (out, loops) = version_checked_loops(&two_slices("", ""));
        assert_eq!(loops, 1);
        let from_function = &out[out.find("define ").expect("a function")..];
        insta::assert_snapshot!("two_checked_slices", from_function);
    }

    #[test]
    fn loops_it_cannot_prove_are_left_alone() {
        let cases = [
            (
                "a barrier in the loop",
                two_slices(
                    "  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)\n",
                    "",
                ),
            ),
            (
                "indices read from memory",
                two_slices("", "")
                    .replace(
                        "  %ia = add i64 %i, %base\n",
                        "  %ia = load i64, ptr addrspace(1) %out, align 8\n",
                    )
                    .replace("%ib = add i64 %ib.0, %col", "%ib = mul i64 %ib.0, %ib.0"),
            ),
            (
                "an exit test on a value read in the loop",
                two_slices("", "").replace(
                    "%more = icmp ne i64 %i.next, %k",
                    "%more = fcmp one float %sum.next, 0.000000e+00",
                ),
            ),
        ];
        for (what, ll) in cases {
            let (out, loops) = version_checked_loops(&ll);
            assert_eq!((loops, out == ll), (0, true), "{what}");
        }
    }

    /// With one check provable (`a`'s) and one not (`b` indexed by a loaded value), the copy
    /// keeps the second check.
    #[test]
    fn unprovable_checks_stay_in_the_copy() {
        let ll = two_slices("", "").replace(
            "  %ib = add i64 %ib.0, %col\n",
            "  %ib.l = load i64, ptr addrspace(1) %out, align 8\n  %ib = add i64 %ib.l, %col\n",
        );
        let (out, loops) = version_checked_loops(&ll);
        assert_eq!(loops, 1);
        assert!(out.contains("%oxv0.ok.a = icmp eq i8 0, 0"), "{out}");
        assert!(
            out.contains("%oxv0.ok.b = icmp samesign ult i64 %oxv0.ib, %b.len"),
            "{out}"
        );
    }

    /// A loop value used after the loop, below an exit only the loop enters: a `phi` there
    /// joins the two copies' values and the use takes it.
    #[test]
    fn values_used_after_the_loop_are_joined() {
        let ll = two_slices("", "")
            .replace(
                "br i1 %more, label %loop, label %done, !llvm.loop !5",
                "br i1 %more, label %loop, label %after, !llvm.loop !5\n\nafter:\n  store float %prod, ptr addrspace(1) %out, align 4\n  br label %done",
            )
            .replace(
                "[ 0.000000e+00, %entry ], [ %sum.next, %body ]",
                "[ 0.000000e+00, %entry ], [ %sum.next, %after ]",
            );
        let (out, loops) = version_checked_loops(&ll);
        assert_eq!(loops, 1);
        let text = function_text(&out);
        for joined in [
            "%oxv0.lcssa.prod = phi float [ %prod, %body ], [ %oxv0.prod, %oxv0.body ]",
            "store float %oxv0.lcssa.prod,",
            "[ %oxv0.lcssa.sum.next, %after ]",
        ] {
            assert!(text.contains(joined), "{joined}\n{text}");
        }
        assert!(text.contains("br label %oxv0.check.b"), "{text}");
    }

    /// A loop entered by a conditional branch gets a block for the test on that edge.
    #[test]
    fn a_conditional_entry_gets_its_own_test_block() {
        let ll = two_slices("", "")
            .replace(
                "  br i1 %empty, label %done, label %ph\n\nph:                                               ; preds = %entry\n  %base = mul i64 %k, %row\n  br label %loop\n",
                "  %base = mul i64 %k, %row\n  br i1 %empty, label %done, label %loop\n",
            )
            .replace("[ 0, %ph ]", "[ 0, %entry ]")
            .replace("[ 0.000000e+00, %ph ]", "[ 0.000000e+00, %entry ]");
        let (out, loops) = version_checked_loops(&ll);
        assert_eq!(loops, 1);
        let text = function_text(&out);
        assert!(
            text.contains("br i1 %empty, label %done, label %oxv0.ph"),
            "{text}"
        );
        assert!(text.contains("%i = phi i64 [ 0, %oxv0.ph ]"), "{text}");
        assert!(text.contains("%oxv0.i = phi i64 [ 0, %oxv0.ph ]"), "{text}");
    }

    /// Through `opt` and `llc`: the copy is unrolled (four iterations' loads in one), the
    /// checked loop and its trap stay; without versioning, one checked loop of two loads.
    #[test]
    fn the_copy_unrolls_and_the_checked_loop_stays() {
        let ll = two_slices("", "");
        let codegen =
            crate::LlvmCodegen::new(&ll, "sm_90", &Default::default()).expect("llvm tools");
        let optimised = codegen.opt(&ll).expect("opt");
        let (hoisted, changed) = crate::hoist_checks(&optimised);
        assert!(changed);
        let versioned = codegen
            .llc(&codegen.opt(&hoisted).expect("opt"))
            .expect("ptx");
        let plain = codegen.llc(&optimised).expect("ptx");
        let loads = |ptx: &str| ptx.matches("ld.global").count();
        assert_eq!(loads(&plain), 2, "{plain}");
        assert!(loads(&versioned) >= 2 + 8, "{versioned}");
        assert!(versioned.contains("trap;"), "{versioned}");
    }
}
