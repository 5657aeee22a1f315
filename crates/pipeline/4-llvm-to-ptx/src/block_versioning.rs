//! Kernel versioning on the block's size: bounds checks whose index is affine in the thread
//! index, decided once for the whole block.
//!
//! A tile in shared memory is indexed by the thread (`tile[ty * 33 + tx]`, `red[t + 3]`), and
//! without a declared block size (`#[block_dims]`) nothing bounds `threadIdx`: `opt` keeps
//! every such check, and ptxas neither predicates a guarded block that holds a branch to the
//! trap nor issues its loads together (a 32 × 8 transpose through a tile ran at 0.71 of its
//! CUDA C++ counterpart with the checks, 0.96 without, H200). Yet whether such a check can
//! fail depends only on the block's size and on values all its threads share. This pass, run
//! on `opt`'s output (the device pipeline's `check-hoisting` stage, before
//! [crate::loop_versioning]), tests that once per block and runs a copy of the kernel without
//! the checks it proves:
//!
//! 1. A value is *uniform* when every thread of a block computes the same: a constant, a
//!    kernel parameter, `%ntid`, `%ctaid`, `%nctaid`, or arithmetic on those that cannot be
//!    poison (no shift by an unknown amount, no division). A value of `w` bits is
//!    *thread-affine* when it equals `u + cx·tx + cy·ty + cz·tz` modulo `2^w`, `u` and the
//!    `c` uniform (leaves read as unsigned; each `c` of a sign its form shows, as in
//!    `y * width` or `(h - 1 - ty) * 17`): the thread indices, sums, differences, products
//!    with uniform values, left shifts by constants, disjoint `or`s, `x ^ -1` (`-1 - x`) and
//!    truncations of those, which all agree with exact arithmetic modulo a power of two. A
//!    zero or sign extension needs the exact value `u + c·t` in the range its operand's bits
//!    hold, for every thread: a *requirement*.
//! 2. A *check* is a comparison `x <u y` (or `≤`, in any of `icmp`'s spellings) that a branch
//!    to a failure block (one from which every path ends in `unreachable`: a trap or a panic)
//!    needs to hold, alone or in a conjunction, with `x` thread-affine and `y` uniform. It
//!    holds for every thread when the exact `u + c·t` lies in `[0, y)` for every thread (then
//!    it is also the `w`-bit value). Over the block, that value is largest where each thread
//!    index with a positive coefficient is at its largest (`ntid - 1`) and those with negative
//!    ones are 0, and least the other way round: two values to test, as for a requirement.
//! 3. A kernel with shared memory and a check proven this way gets a new entry block that
//!    computes these extremes in 64 bits, where nothing wraps (a check whose extremes may
//!    need more, such as a product with a 64-bit length, is left in the copy: the test runs
//!    in every thread before its first load, and a 128-bit test cost a transpose 35 % of its
//!    speed), and branches to a copy of the kernel in which the proven comparisons are
//!    constants when all hold, else calls the kernel as it was, moved into a function of its
//!    own (`__oxide_checked_<kernel>`, `noinline`): with both versions in one function, ptxas
//!    predicated the guarded loads of one of them only (SASS), and the copy's were branched
//!    around one at a time. A kernel whose parameters are not all plain scalars and pointers
//!    keeps both versions in itself. The test reads only uniform
//!    values, so all threads of a block take the same version, and barriers and warp
//!    operations meet as before. For a tile it folds to one comparison of the block's size
//!    (`17 * ntid.y + ntid.x < 290`).
//!
//! What the transformation preserves: each thread runs the same operations in either version,
//! and a comparison is a constant in the copy only when it has that value for every thread
//! of the block. The test's values are recomputed in the entry block without poison flags.
//! The moved kernel loses its debug locations (one subprogram per function); its panics keep
//! their messages and `file:line`, which are values.
//! Cost: the kernel's code doubles; only kernels of at most [MAX_INSTRUCTIONS] instructions,
//! with shared memory (the tiles that global-memory checks, which fault instead of branching
//! after `llc`, cannot help) and no `alloca`, are copied.
//! `CUDA_OXIDE_CHECK_HOISTING=0` turns it off with the other check-hoisting passes.

use std::collections::{HashMap, HashSet};

use crate::ll_text::{Block, Function, Inst, Piece, parse_module, write_module};
use crate::loop_versioning::{
    COPY_IS_LIKELY, Cfg, LOOP_ID_OF_COPY, fresh_loop_ids, int_width, inverse,
};

/// Largest kernel (in instructions) that is copied.
pub const MAX_INSTRUCTIONS: usize = 2000;

/// What the copy's names (values and labels) start with.
const PREFIX: &str = "oxt.";

/// The special registers every thread of a block reads alike.
const UNIFORM_REGISTERS: &[&str] = &["ntid", "ctaid", "nctaid"];

/// Bits an intermediate value of the test may need at most (they are computed in 128).
const MAX_BITS: u32 = 120;

/// `ll` (as `opt` printed it) with every kernel that qualifies versioned (see the module
/// docs), and how many kernels were.
pub fn version_on_block_size(ll: &str) -> (String, usize) {
    let mut pieces = parse_module(ll);
    let mut total = 0;
    let mut checked_kernels = Vec::new();
    for piece in &mut pieces {
        if let Piece::Function(function) = piece
            && let Some(checked) = version_kernel(function)
        {
            total += 1;
            checked_kernels.extend(checked);
        }
    }
    if total == 0 {
        return (ll.to_owned(), 0);
    }
    for checked in checked_kernels {
        pieces.push(Piece::Text("\n".to_owned()));
        pieces.push(Piece::Function(checked));
    }
    (fresh_loop_ids(write_module(&pieces)), total)
}

/// A uniform value: how to compute it in the new entry block, and a bound on its bits.
#[derive(Clone, Debug, PartialEq)]
enum Uniform {
    Const(i128),
    /// A local name (or a parameter) of `width` bits, read as unsigned.
    Value(String, u32),
    Add(Box<Uniform>, Box<Uniform>),
    Sub(Box<Uniform>, Box<Uniform>),
    Mul(Box<Uniform>, Box<Uniform>),
}

/// Which side of zero a uniform value lies on, for every block.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Sign {
    NonNegative,
    NonPositive,
}

impl Uniform {
    fn bits(&self) -> u32 {
        match self {
            Uniform::Const(c) => 128 - c.unsigned_abs().leading_zeros(),
            Uniform::Value(_, width) => *width,
            Uniform::Add(a, b) | Uniform::Sub(a, b) => a.bits().max(b.bits()) + 1,
            Uniform::Mul(a, b) => a.bits() + b.bits(),
        }
    }

    fn is_zero(&self) -> bool {
        *self == Uniform::Const(0)
    }

    /// The sign, when the expression's form shows it (unsigned leaves are never negative).
    fn sign(&self) -> Option<Sign> {
        match self {
            Uniform::Const(c) if *c >= 0 => Some(Sign::NonNegative),
            Uniform::Const(_) => Some(Sign::NonPositive),
            Uniform::Value(..) => Some(Sign::NonNegative),
            Uniform::Add(a, b) => {
                let sign = a.sign()?;
                (sign == b.sign()?).then_some(sign)
            }
            Uniform::Sub(a, b) => {
                let sign = a.sign()?;
                (sign != b.sign()?).then_some(sign)
            }
            Uniform::Mul(a, b) => Some(if a.sign()? == b.sign()? {
                Sign::NonNegative
            } else {
                Sign::NonPositive
            }),
        }
    }

    fn plus(self, other: Uniform) -> Uniform {
        match (self, other) {
            (Uniform::Const(x), Uniform::Const(y)) => Uniform::Const(x + y),
            (a, b) if b.is_zero() => a,
            (a, b) if a.is_zero() => b,
            (a, b) => Uniform::Add(Box::new(a), Box::new(b)),
        }
    }

    fn minus(self, other: Uniform) -> Uniform {
        match (self, other) {
            (Uniform::Const(x), Uniform::Const(y)) => Uniform::Const(x - y),
            (a, b) if b.is_zero() => a,
            (a, b) => Uniform::Sub(Box::new(a), Box::new(b)),
        }
    }

    fn times(self, other: Uniform) -> Uniform {
        match (self, other) {
            (Uniform::Const(x), Uniform::Const(y)) => Uniform::Const(x * y),
            (a, b) if a.is_zero() || b.is_zero() => Uniform::Const(0),
            (a, Uniform::Const(1)) | (Uniform::Const(1), a) => a,
            (a, b) => Uniform::Mul(Box::new(a), Box::new(b)),
        }
    }
}

/// `base + Σ coef[d] · tid[d]`, modulo `2^width` (see `Analysis::affine_of`).
#[derive(Clone, Debug)]
struct Affine {
    base: Uniform,
    coef: [Uniform; 3],
}

impl Affine {
    fn uniform(base: Uniform) -> Self {
        Affine {
            base,
            coef: [Uniform::Const(0), Uniform::Const(0), Uniform::Const(0)],
        }
    }

    fn depends_on_threads(&self) -> bool {
        self.coef.iter().any(|c| !c.is_zero())
    }

    fn add(&self, other: &Affine) -> Affine {
        Affine {
            base: self.base.clone().plus(other.base.clone()),
            coef: [0, 1, 2].map(|d| self.coef[d].clone().plus(other.coef[d].clone())),
        }
    }

    fn sub(&self, other: &Affine) -> Affine {
        Affine {
            base: self.base.clone().minus(other.base.clone()),
            coef: [0, 1, 2].map(|d| self.coef[d].clone().minus(other.coef[d].clone())),
        }
    }

    fn scaled(&self, by: &Uniform) -> Affine {
        Affine {
            base: self.base.clone().times(by.clone()),
            coef: [0, 1, 2].map(|d| self.coef[d].clone().times(by.clone())),
        }
    }

    /// Whether the test can compute its extremes: every coefficient's sign is known, and no
    /// value needs more than [MAX_BITS] (thread indices are below 1024: 11 bits).
    fn testable(&self) -> bool {
        self.base.bits() <= MAX_BITS
            && self
                .coef
                .iter()
                .all(|c| c.bits() + 11 <= MAX_BITS && c.sign().is_some())
    }

    /// The coefficients, when all are constants.
    fn constant_coefs(&self) -> Option<[i128; 3]> {
        let c = |u: &Uniform| match u {
            Uniform::Const(c) => Some(*c),
            _ => None,
        };
        Some([c(&self.coef[0])?, c(&self.coef[1])?, c(&self.coef[2])?])
    }
}

/// What the test before the copy must establish.
#[derive(Clone, Debug)]
enum Condition {
    /// The value lies in `[lo, hi)` for every thread of the block.
    InRange(Affine, i128, i128),
    /// `0 ≤ x` and `x < y` (`strict`) or `x ≤ y` for every thread, `y` uniform.
    Below(Affine, Uniform, bool),
}

impl Condition {
    /// The bits its test needs (thread indices are below 1024: 11 bits, and a sum of four
    /// terms needs two more than its largest).
    fn bits(&self) -> u32 {
        let bits = |value: &Affine| {
            let coef = value.coef.iter().map(|c| c.bits() + 11);
            coef.chain([value.base.bits()]).max().unwrap_or(0) + 2
        };
        match self {
            Condition::InRange(value, lo, hi) => bits(value)
                .max(Uniform::Const(*lo).bits() + 1)
                .max(Uniform::Const(*hi).bits() + 1),
            Condition::Below(value, bound, _) => bits(value).max(bound.bits() + 1),
        }
    }
}

/// A thread-affine value and the ranges its computation needs (`InRange` conditions).
type Analysed = (Affine, Vec<Condition>);

/// The thread-affine analysis of one function's values.
struct Analysis<'f> {
    defs: HashMap<&'f str, &'f Inst>,
    memo: HashMap<String, Option<Analysed>>,
}

impl<'f> Analysis<'f> {
    fn new(function: &'f Function) -> Self {
        let defs = function
            .blocks
            .iter()
            .flat_map(|b| &b.insts)
            .filter_map(|inst| Some((inst.result()?, inst)))
            .collect();
        Analysis {
            defs,
            memo: HashMap::new(),
        }
    }

    /// `operand` (of type `i{width}`) as a thread-affine value, with its requirements.
    fn affine(&mut self, operand: &str, width: u32) -> Option<Analysed> {
        if let Ok(c) = operand.parse::<i128>() {
            // As LLVM prints it (signed): any representative will do, see `affine_of`.
            return Some((Affine::uniform(Uniform::Const(c)), Vec::new()));
        }
        let name = operand.strip_prefix('%')?;
        if let Some(known) = self.memo.get(name) {
            return known.clone();
        }
        let found = self.affine_of(name, width);
        self.memo.insert(name.to_owned(), found.clone());
        found
    }

    fn affine_of(&mut self, name: &str, width: u32) -> Option<Analysed> {
        let Some(inst) = self.defs.get(name).copied() else {
            // A parameter.
            let value = Uniform::Value(format!("%{name}"), width);
            return Some((Affine::uniform(value), Vec::new()));
        };
        if let Some((register, dim)) = special_register(inst) {
            return if register == "tid" {
                let mut tid = Affine::uniform(Uniform::Const(0));
                tid.coef[dim] = Uniform::Const(1);
                Some((tid, Vec::new()))
            } else if UNIFORM_REGISTERS.contains(&register) {
                let value = Uniform::Value(format!("%{name}"), width);
                Some((Affine::uniform(value), Vec::new()))
            } else {
                None
            };
        }
        // A thread-affine value stands for its `width`-bit value modulo `2^width`: addition,
        // subtraction, multiplication and truncation agree with the exact arithmetic modulo a
        // power of two, so they need nothing; an extension needs the exact value in the
        // range its operand's bits can hold.
        let opcode = inst.opcode();
        if let Some((value, from, _)) = inst.cast() {
            let from_width = int_width(from)?;
            let (operand, mut requires) = self.affine(value, from_width)?;
            if !operand.depends_on_threads() {
                return self.uniform_leaf(name, width);
            }
            let half = 1i128 << (from_width - 1);
            match opcode {
                "zext" => requires.push(Condition::InRange(operand.clone(), 0, 2 * half)),
                "sext" => requires.push(Condition::InRange(operand.clone(), -half, half)),
                "trunc" => {}
                _ => return None,
            }
            return Some((operand, requires));
        }
        let (ty, operands) = inst.typed_operands()?;
        if int_width(ty)? != width || operands.len() != 2 {
            return None;
        }
        let (a, mut requires) = self.affine(operands[0], width)?;
        let (b, more) = self.affine(operands[1], width)?;
        requires.extend(more);
        let constant = |x: &Affine| match (&x.base, x.depends_on_threads()) {
            (Uniform::Const(c), false) => Some(*c),
            _ => None,
        };
        let disjoint = inst.body().split_whitespace().any(|w| w == "disjoint");
        let result = match opcode {
            "add" => a.add(&b),
            "or" if disjoint => a.add(&b),
            "sub" => a.sub(&b),
            "mul" => match (a.depends_on_threads(), b.depends_on_threads()) {
                (false, false) => return self.uniform_leaf(name, width),
                (true, false) => a.scaled(&b.base),
                (false, true) => b.scaled(&a.base),
                (true, true) => return None,
            },
            "shl" => match constant(&b) {
                Some(k) if (0..i128::from(width)).contains(&k) => a.scaled(&Uniform::Const(1 << k)),
                _ => return None,
            },
            // `x ^ -1` is `-1 - x`.
            "xor" if constant(&b) == Some(-1) => Affine::uniform(Uniform::Const(-1)).sub(&a),
            "and" | "or" | "xor" | "lshr" | "ashr"
                if !a.depends_on_threads() && !b.depends_on_threads() =>
            {
                return self.uniform_leaf(name, width);
            }
            _ => return None,
        };
        if !result.testable() {
            return None;
        }
        if result.depends_on_threads() {
            Some((result, requires))
        } else {
            // Uniform arithmetic: the value as computed (it may wrap), recomputed in the test.
            self.uniform_leaf(name, width)
        }
    }

    /// `%name`, a uniform value, as a leaf of the test when its whole computation can be
    /// repeated in the entry block without poison.
    fn uniform_leaf(&self, name: &str, width: u32) -> Option<Analysed> {
        self.recomputable(name, &mut HashSet::new()).then(|| {
            let value = Uniform::Value(format!("%{name}"), width);
            (Affine::uniform(value), Vec::new())
        })
    }

    /// Whether `%name` is a parameter, a uniform special register, or plain integer arithmetic
    /// on recomputable values (shifts by constants below the width only).
    fn recomputable(&self, name: &str, seen: &mut HashSet<String>) -> bool {
        let Some(inst) = self.defs.get(name).copied() else {
            return true;
        };
        if !seen.insert(name.to_owned()) {
            return true;
        }
        if let Some((register, _)) = special_register(inst) {
            return UNIFORM_REGISTERS.contains(&register);
        }
        let operands: Vec<&str> = match (inst.opcode(), inst.cast(), inst.typed_operands()) {
            ("zext" | "sext" | "trunc", Some((value, from, _)), _) if int_width(from).is_some() => {
                vec![value]
            }
            (
                op @ ("add" | "sub" | "mul" | "and" | "or" | "xor" | "shl" | "lshr" | "ashr"),
                _,
                Some((ty, operands)),
            ) => {
                let Some(width) = int_width(ty) else {
                    return false;
                };
                let shift = matches!(op, "shl" | "lshr" | "ashr");
                if shift
                    && !operands
                        .get(1)
                        .and_then(|k| k.parse::<i128>().ok())
                        .is_some_and(|k| (0..i128::from(width)).contains(&k))
                {
                    return false;
                }
                operands
            }
            _ => return false,
        };
        operands.iter().all(|operand| {
            operand.parse::<i128>().is_ok()
                || operand
                    .strip_prefix('%')
                    .is_some_and(|name| self.recomputable(name, seen))
        })
    }
}

/// `%x = call i32 @llvm.nvvm.read.ptx.sreg.<register>.<x|y|z>()`: the register and dimension.
fn special_register(inst: &Inst) -> Option<(&str, usize)> {
    let rest = inst.body().split("@llvm.nvvm.read.ptx.sreg.").nth(1)?;
    let (register, rest) = rest.split_once('.')?;
    let dim = match rest.split('(').next()? {
        "x" => 0,
        "y" => 1,
        "z" => 2,
        _ => return None,
    };
    Some((register, dim))
}

/// A comparison a check needs: the `icmp`'s name, and the value it must have when the check
/// passes.
struct Check {
    icmp: String,
    holds_as: bool,
}

/// The checks of `function`: comparisons that branches to failure blocks need, with the
/// operands they compare (`x <u y`, strict or not) and the value the `icmp` has on success.
fn checks(
    function: &Function,
    cfg: &Cfg,
    defs: &HashMap<&str, &Inst>,
) -> Vec<(Check, String, String, bool, u32)> {
    let index = function.block_index();
    let mut found = Vec::new();
    let mut seen = HashSet::new();
    for block in &function.blocks {
        let Some((cond, on_true, on_false)) = block.terminator().cond_br() else {
            continue;
        };
        let fails = |label: &str| index.get(label).is_some_and(|&b| cfg.failure[b]);
        let needed = match (fails(on_true), fails(on_false)) {
            (false, true) => true,
            (true, false) => false,
            _ => continue,
        };
        // The comparisons the branch needs to have the value `needed`: the conjuncts of a
        // condition that must be true, the disjuncts of one that must be false.
        let mut work = vec![cond];
        while let Some(value) = work.pop() {
            let Some(inst) = value.strip_prefix('%').and_then(|n| defs.get(n)) else {
                continue;
            };
            if let Some((a, b)) = inst.logical(needed) {
                work.extend([a, b]);
                continue;
            }
            let Some(pred) = inst.icmp_predicate() else {
                continue;
            };
            let Some((ty, operands)) = inst.typed_operands() else {
                continue;
            };
            let (Some(width), [a, b]) = (int_width(ty), &operands[..]) else {
                continue;
            };
            let (a, b) = (*a, *b);
            // The predicate that holds on success, then `x < y` or `x ≤ y`.
            let pred = if needed { pred } else { inverse(pred) };
            let (x, y, strict) = match pred {
                "ult" => (a, b, true),
                "ule" => (a, b, false),
                "ugt" => (b, a, true),
                "uge" => (b, a, false),
                _ => continue,
            };
            let name = inst.result().unwrap_or_default().to_owned();
            if seen.insert(name.clone()) {
                found.push((
                    Check {
                        icmp: name,
                        holds_as: needed,
                    },
                    x.to_owned(),
                    y.to_owned(),
                    strict,
                    width,
                ));
            }
        }
    }
    found
}

/// Versions `function` when it qualifies: `None` when it does not, else the checked kernel as
/// a function of its own when it could be moved out (see [outline_checked]).
fn version_kernel(function: &mut Function) -> Option<Option<Function>> {
    let instructions: usize = function.blocks.iter().map(|b| b.insts.len()).sum();
    let text = function.to_text();
    if !function.header.starts_with("define ptx_kernel ")
        || instructions > MAX_INSTRUCTIONS
        || !text.contains("addrspace(3)")
        || text.contains(&format!("%{PREFIX}"))
        || function
            .blocks
            .iter()
            .flat_map(|b| &b.insts)
            .any(|inst| inst.opcode() == "alloca")
    {
        return None;
    }
    let cfg = Cfg::new(function);
    let mut analysis = Analysis::new(function);
    let mut proven: Vec<Check> = Vec::new();
    let mut conditions: Vec<Condition> = Vec::new();
    for (check, x, y, strict, width) in checks(function, &cfg, &analysis.defs) {
        let (Some((x, requires)), Some((y, _))) =
            (analysis.affine(&x, width), analysis.affine(&y, width))
        else {
            continue;
        };
        if !x.depends_on_threads() || y.depends_on_threads() {
            continue;
        }
        // `y` compared as unsigned: a constant as LLVM prints it may be negative.
        let bound = match y.base {
            Uniform::Const(c) => Uniform::Const(c.rem_euclid(1i128 << width)),
            other => other,
        };
        let below = Condition::Below(x, bound, strict);
        // The test runs in every thread before anything else: a check whose test needs
        // 128-bit arithmetic (a product with a 64-bit length, `y * width + x < len`) costs
        // more there than it saves, and stays in the copy (where it faults instead, if it
        // guards a global access).
        if requires.iter().chain([&below]).any(|c| c.bits() >= 64) {
            continue;
        }
        conditions.extend(requires);
        conditions.push(below);
        proven.push(check);
    }
    if proven.is_empty() {
        return None;
    }
    let test = Test::new(&analysis, &conditions);
    let (lines, ok) = test.emit(&conditions);
    Some(apply(function, &proven, lines, &ok))
}

/// Whether `value` is never negative: no coefficient and no base below zero.
fn nonnegative(value: &Affine) -> bool {
    std::iter::once(&value.base)
        .chain(&value.coef)
        .all(|u| u.sign() == Some(Sign::NonNegative))
}

/// Whether `condition`, a range, follows from a check among `conditions`: a check `x < c`
/// (or `≤`) against a constant no larger than the range's end, where `x` is the value plus a
/// nonnegative constant and nonnegative multiples of the thread indices (so `x` is at least
/// the value for every thread), and the value is never negative. Tiles are indexed this way
/// (`tile[ty * 33 + tx + 264]`): the range of the `u32` index widened to `usize` follows
/// from the check.
fn implied(condition: &Condition, conditions: &[Condition]) -> bool {
    let Condition::InRange(value, lo, hi) = condition else {
        return false;
    };
    let Uniform::Const(base) = value.base else {
        return false;
    };
    *lo <= 0
        && nonnegative(value)
        && conditions.iter().any(|other| match other {
            Condition::Below(x, Uniform::Const(bound), strict) => {
                let (Some(xc), Some(vc)) = (x.constant_coefs(), value.constant_coefs()) else {
                    return false;
                };
                matches!(x.base, Uniform::Const(b) if b >= base)
                    && (0..3).all(|d| xc[d] >= vc[d])
                    && if *strict { bound <= hi } else { bound < hi }
            }
            _ => false,
        })
}

/// The instructions of the new entry block that compute the test.
struct Test<'a, 'f> {
    analysis: &'a Analysis<'f>,
    lines: Vec<String>,
    values: HashMap<String, String>,
    /// The integer type the test computes in, wide enough that nothing wraps.
    wide: &'static str,
}

impl<'a, 'f> Test<'a, 'f> {
    /// A test of `conditions`, computed in 64 bits when none of its values needs more.
    fn new(analysis: &'a Analysis<'f>, conditions: &[Condition]) -> Self {
        let needed = conditions.iter().map(Condition::bits).max().unwrap_or(0);
        Test {
            analysis,
            lines: Vec::new(),
            values: HashMap::new(),
            wide: if needed < 64 { "i64" } else { "i128" },
        }
    }

    /// Every condition computed, and the name of their conjunction. A range that a check
    /// against a constant implies is not tested (see [implied]).
    fn emit(mut self, conditions: &[Condition]) -> (Vec<String>, String) {
        let mut all = "true".to_owned();
        let mut tested = HashSet::new();
        for condition in conditions {
            if !tested.insert(format!("{condition:?}")) || implied(condition, conditions) {
                continue;
            }
            let holds = match condition {
                Condition::InRange(value, lo, hi) => {
                    let most = self.extreme(value, true);
                    let below = self.instruction(format!("icmp slt {} {most}, {hi}", self.wide));
                    self.at_least(value, *lo, below)
                }
                Condition::Below(value, bound, strict) => {
                    let most = self.extreme(value, true);
                    let bound = self.uniform(bound);
                    let pred = if *strict { "slt" } else { "sle" };
                    let below =
                        self.instruction(format!("icmp {pred} {} {most}, {bound}", self.wide));
                    self.at_least(value, 0, below)
                }
            };
            all = if all == "true" {
                holds
            } else {
                self.instruction(format!("and i1 {all}, {holds}"))
            };
        }
        (self.lines, all)
    }

    /// `and` of `holds` and `value ≥ lo` for every thread (`holds` alone when that is
    /// certain).
    fn at_least(&mut self, value: &Affine, lo: i128, holds: String) -> String {
        if lo <= 0 && nonnegative(value) {
            return holds;
        }
        let least = self.extreme(value, false);
        let above = self.instruction(format!("icmp sge {} {least}, {lo}", self.wide));
        self.instruction(format!("and i1 {above}, {holds}"))
    }

    fn instruction(&mut self, body: String) -> String {
        if let Some(known) = self.values.get(&body) {
            return known.clone();
        }
        let name = format!("%{PREFIX}t{}", self.lines.len());
        self.lines.push(format!("{name} = {body}"));
        self.values.insert(body, name.clone());
        name
    }

    /// The largest (`most`) or least value of `value` over the block's threads: each thread
    /// index at `ntid - 1` where its coefficient's sign makes the value larger (smaller), else
    /// at 0 (`Affine::testable` made sure every sign is known).
    fn extreme(&mut self, value: &Affine, most: bool) -> String {
        let mut sum = self.uniform(&value.base);
        for (dim, coef) in value.coef.iter().enumerate() {
            let grows = coef.sign() == Some(Sign::NonNegative);
            if coef.is_zero() || grows != most {
                continue;
            }
            let last = self.last_thread(dim);
            let term = match coef {
                Uniform::Const(1) => last,
                coef => {
                    let coef = self.uniform(coef);
                    self.instruction(format!("mul {} {last}, {coef}", self.wide))
                }
            };
            sum = match sum.as_str() {
                "0" => term,
                _ => self.instruction(format!("add {} {sum}, {term}", self.wide)),
            };
        }
        sum
    }

    /// `ntid - 1` in dimension `dim`.
    fn last_thread(&mut self, dim: usize) -> String {
        let axis = ["x", "y", "z"][dim];
        let size = self.instruction(format!("call i32 @llvm.nvvm.read.ptx.sreg.ntid.{axis}()"));
        let wide = self.instruction(format!("zext i32 {size} to {}", self.wide));
        self.instruction(format!("sub {} {wide}, 1", self.wide))
    }

    /// `uniform` computed in the test's type (its leaves read as unsigned).
    fn uniform(&mut self, uniform: &Uniform) -> String {
        match uniform {
            Uniform::Const(c) => c.to_string(),
            Uniform::Value(name, width) => {
                let value = self.recompute(name);
                self.instruction(format!("zext i{width} {value} to {}", self.wide))
            }
            Uniform::Add(a, b) | Uniform::Sub(a, b) => {
                let op = if matches!(uniform, Uniform::Add(..)) {
                    "add"
                } else {
                    "sub"
                };
                let (a, b) = (self.uniform(a), self.uniform(b));
                self.instruction(format!("{op} {} {a}, {b}", self.wide))
            }
            Uniform::Mul(a, b) => {
                let (a, b) = (self.uniform(a), self.uniform(b));
                self.instruction(format!("mul {} {a}, {b}", self.wide))
            }
        }
    }

    /// `%name`, a recomputable uniform value, computed in the entry block without its poison
    /// flags (its operands recomputed first); a parameter as it is.
    fn recompute(&mut self, operand: &str) -> String {
        let Some(name) = operand.strip_prefix('%') else {
            return operand.to_owned();
        };
        let Some(inst) = self.analysis.defs.get(name).copied() else {
            return operand.to_owned();
        };
        if let Some((register, dim)) = special_register(inst) {
            let axis = ["x", "y", "z"][dim];
            return self.instruction(format!(
                "call i32 @llvm.nvvm.read.ptx.sreg.{register}.{axis}()"
            ));
        }
        if let Some((value, from, to)) = inst.cast() {
            let value = self.recompute(value);
            let op = inst.opcode().to_owned();
            return self.instruction(format!("{op} {from} {value} to {to}"));
        }
        let (ty, operands) = inst
            .typed_operands()
            .expect("a recomputable value has plain operands");
        let operands: Vec<String> = operands.iter().map(|o| self.recompute(o)).collect();
        let op = inst.opcode().to_owned();
        self.instruction(format!("{op} {ty} {}", operands.join(", ")))
    }
}

/// Gives `function` the new entry block (`lines`, then a branch on `ok`) and the copy of its
/// blocks with the `proven` comparisons constants. The checked blocks move into a function of
/// their own that the kernel calls when the test fails, when [outline_checked] can make one
/// (returned); otherwise they stay in the kernel beside the copy.
fn apply(
    function: &mut Function,
    proven: &[Check],
    mut lines: Vec<String>,
    ok: &str,
) -> Option<Function> {
    let defined: HashSet<String> = function
        .blocks
        .iter()
        .flat_map(|b| {
            std::iter::once(b.label.clone())
                .chain(b.insts.iter().filter_map(|i| i.result().map(str::to_owned)))
        })
        .collect();
    let rename = |name: &str| {
        defined
            .contains(name)
            .then(|| match name.strip_prefix('"') {
                Some(quoted) => format!("\"{PREFIX}{quoted}"),
                None => format!("{PREFIX}{name}"),
            })
    };
    let constants: HashMap<&str, bool> = proven
        .iter()
        .map(|check| (check.icmp.as_str(), check.holds_as))
        .collect();
    let mut copies = Vec::new();
    for block in &function.blocks {
        let mut copy = block.clone();
        copy.label = rename(&block.label).expect("a block label is defined");
        for inst in &mut copy.insts {
            let renamed = match inst.result().and_then(|r| constants.get(r)) {
                Some(&value) => Inst {
                    text: format!(
                        "%{} = icmp {} i1 true, true",
                        rename(inst.result().unwrap_or_default()).unwrap_or_default(),
                        if value { "eq" } else { "ne" }
                    ),
                },
                None => inst.renamed(&rename),
            };
            *inst = Inst {
                text: renamed.text.replace(", !llvm.loop !", LOOP_ID_OF_COPY),
            };
        }
        copies.push(copy);
    }
    let entry = function.blocks[0].label.clone();
    let copy_entry = rename(&entry).expect("the entry label is defined");
    let checked = outline_checked(function);
    let otherwise = match &checked {
        Some(_) => format!("{PREFIX}checked"),
        None => entry,
    };
    lines.push(format!(
        "br i1 {ok}, label %{copy_entry}, label %{otherwise}{COPY_IS_LIKELY}"
    ));
    let test = Block {
        label: format!("{PREFIX}test"),
        insts: lines.into_iter().map(|text| Inst { text }).collect(),
    };
    match &checked {
        Some((_, call)) => {
            let call_block = Block {
                label: format!("{PREFIX}checked"),
                insts: vec![
                    Inst { text: call.clone() },
                    Inst {
                        text: "ret void".to_owned(),
                    },
                ],
            };
            function.blocks = std::iter::once(test)
                .chain(copies)
                .chain([call_block])
                .collect();
        }
        None => {
            function.blocks.insert(0, test);
            function.blocks.extend(copies);
        }
    }
    checked.map(|(function, _)| function)
}

/// The checked kernel, `function`'s blocks as they are, as an internal `noinline` function
/// (`__oxide_checked_<kernel>`), and the call the kernel makes to it: ptxas then compiles the
/// copy alone in the kernel (with both in one function it predicated the guarded loads of one
/// of them only, and transpose's copy branched around each). The moved blocks lose their debug
/// locations (a function has one subprogram); panics keep their messages and `file:line`,
/// which are values, not debug information. `None` when a parameter's type is not a plain
/// scalar or pointer (`byval` and the like stay in the kernel).
fn outline_checked(function: &Function) -> Option<(Function, String)> {
    let header = &function.header;
    let name_at = header.find(" @")? + 2;
    let open = name_at + header[name_at..].find('(')?;
    let name = &header[name_at..open];
    let mut depth = 0;
    let close = open
        + header[open..].char_indices().find_map(|(i, c)| {
            match c {
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i)
        })?;
    let params = &header[open + 1..close];
    let mut args = Vec::new();
    if !params.trim().is_empty() {
        let mut depth = 0;
        let mut start = 0;
        let mut pieces = Vec::new();
        for (i, c) in params.char_indices() {
            match c {
                '(' | '{' | '<' | '[' => depth += 1,
                ')' | '}' | '>' | ']' => depth -= 1,
                ',' if depth == 0 => {
                    pieces.push(&params[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        pieces.push(&params[start..]);
        for param in pieces {
            let param = param.trim();
            if ["byval", "sret", "inalloca", "preallocated", "byref"]
                .iter()
                .any(|a| param.contains(a))
            {
                return None;
            }
            let value = param.rsplit(' ').next()?;
            let ty = if let Some(rest) = param.strip_prefix("ptr addrspace(") {
                format!("ptr addrspace({}", &rest[..=rest.find(')')?])
            } else {
                let first = param.split(' ').next()?;
                let scalar = first == "ptr"
                    || int_width(first).is_some()
                    || ["half", "bfloat", "float", "double"].contains(&first);
                if !scalar {
                    return None;
                }
                first.to_owned()
            };
            if !value.starts_with('%') {
                return None;
            }
            args.push(format!("{ty} {value}"));
        }
    }
    let callee = format!("@__oxide_checked_{}", name.trim_matches('"'));
    let location = function
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .find_map(|inst| {
            let at = inst.text.find(", !dbg !")?;
            let id = &inst.text[at + ", !dbg ".len()..];
            Some(id.split([',', ' ']).next()?.to_owned())
        });
    let call = format!(
        "call void {callee}({}){}",
        args.join(", "),
        location.map_or(String::new(), |l| format!(", !dbg {l}"))
    );
    let without_debug = |inst: &Inst| -> Option<Inst> {
        let text = &inst.text;
        if text.starts_with("#dbg_") || text.contains("@llvm.dbg.") {
            return None;
        }
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.find(", !dbg !") {
            out.push_str(&rest[..at]);
            let after = &rest[at + ", !dbg !".len()..];
            let len = after.bytes().take_while(u8::is_ascii_digit).count();
            rest = &after[len..];
        }
        out.push_str(rest);
        Some(Inst { text: out })
    };
    let blocks = function
        .blocks
        .iter()
        .map(|block| Block {
            label: block.label.clone(),
            insts: block.insts.iter().filter_map(without_debug).collect(),
        })
        .collect();
    let checked = Function {
        header: format!("define internal void {callee}({params}) noinline {{"),
        blocks,
    };
    Some((checked, call))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel that stages `x[g]` in a 16 × 17 tile at `ty * 17 + tx` and reads it back at
    /// `(ntid.y - 1 - ty) * 17 + tx` (spelled `ntid.y + ~ty`, as `opt` does), each tile index
    /// checked against 272; `{store_index}` replaces the stored index's computation.
    fn tile_kernel(store_index: &str) -> String {
        format!(
            r#"@tile = internal addrspace(3) global [272 x i32] undef, align 4

define ptx_kernel void @flip(ptr addrspace(1) %x, i64 %n, ptr addrspace(1) %out) {{
entry:
  %tx = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = tail call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %h = tail call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %row = mul nuw nsw i32 %ty, 17
  {store_index}
  %wide = zext nneg i32 %at to i64
  %ok = icmp samesign ult i32 %at, 272
  br i1 %ok, label %store, label %panic

store:
  %g = zext i32 %tx to i64
  %src = getelementptr inbounds float, ptr addrspace(1) %x, i64 %g
  %v = load i32, ptr addrspace(1) %src, align 4
  %slot = getelementptr inbounds i32, ptr addrspace(3) @tile, i64 %wide
  store i32 %v, ptr addrspace(3) %slot, align 4
  tail call void @llvm.nvvm.barrier0()
  %not = xor i32 %ty, -1
  %flip = add i32 %h, %not
  %frow = mul i32 %flip, 17
  %fat = add i32 %frow, %tx
  %fwide = zext i32 %fat to i64
  %fok = icmp ugt i64 272, %fwide
  br i1 %fok, label %read, label %panic

read:
  %fslot = getelementptr inbounds i32, ptr addrspace(3) @tile, i64 %fwide
  %w = load i32, ptr addrspace(3) %fslot, align 4
  %dst = getelementptr inbounds i32, ptr addrspace(1) %out, i64 %g
  store i32 %w, ptr addrspace(1) %dst, align 4
  ret void

panic:
  tail call void @llvm.trap()
  unreachable
}}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
declare void @llvm.nvvm.barrier0()
declare void @llvm.trap()
"#
        )
    }

    const PLAIN_INDEX: &str = "%at = add nuw nsw i32 %row, %tx";

    #[test]
    fn a_tile_kernel_is_versioned_on_its_block_size() {
        let (out, kernels) = version_on_block_size(&tile_kernel(PLAIN_INDEX));
        assert_eq!(kernels, 1);
        let from_function = &out[out.find("define ").expect("a function")..];
        insta::assert_snapshot!("tile_kernel", from_function);
    }

    #[test]
    fn kernels_it_cannot_prove_are_left_alone() {
        let cases = [
            (
                "an index that is no affine function of the thread",
                tile_kernel("%at = urem i32 %tx, 272").replace(
                    "%fok = icmp ugt i64 272, %fwide",
                    "%fok = icmp ugt i64 272, %n",
                ),
            ),
            (
                "a shift by an amount the thread chooses",
                tile_kernel("%at = shl i32 %row, %tx").replace(
                    "%fok = icmp ugt i64 272, %fwide",
                    "%fok = icmp ugt i64 272, %n",
                ),
            ),
            (
                "no shared memory",
                tile_kernel(PLAIN_INDEX).replace("addrspace(3)", "addrspace(1)"),
            ),
            (
                "an alloca",
                tile_kernel(PLAIN_INDEX)
                    .replace("entry:\n", "entry:\n  %slot.local = alloca i32, align 4\n"),
            ),
            (
                "a device function, not a kernel",
                tile_kernel(PLAIN_INDEX).replace("define ptx_kernel void", "define void"),
            ),
        ];
        for (what, ll) in cases {
            let (out, kernels) = version_on_block_size(&ll);
            assert_eq!((kernels, out == ll), (0, true), "{what}:\n{out}");
        }
    }

    /// A check against a 64-bit length would need a 128-bit test: it stays in the copy, and
    /// the tile checks are still proven.
    #[test]
    fn a_check_against_a_64_bit_length_stays_in_the_copy() {
        let ll = tile_kernel(PLAIN_INDEX).replace(
            "%fok = icmp ugt i64 272, %fwide",
            "%fok = icmp ult i64 %fwide, %n",
        );
        let (out, kernels) = version_on_block_size(&ll);
        assert_eq!(kernels, 1);
        assert!(!out.contains("i128"), "{out}");
        assert!(
            out.contains("%oxt.fok = icmp ult i64 %oxt.fwide, %n"),
            "{out}"
        );
        assert!(out.contains("%oxt.ok = icmp eq i1 true, true"), "{out}");
    }

    /// Through `opt` and `llc`: the copy's tile accesses have no branch to the trap, and the
    /// test before them is one comparison of the block's size.
    #[test]
    fn the_copy_keeps_no_tile_check() {
        let ll = tile_kernel(PLAIN_INDEX);
        let codegen =
            crate::LlvmCodegen::new(&ll, "sm_90", &Default::default()).expect("llvm tools");
        let optimised = codegen.opt(&ll).expect("opt");
        let plain = codegen.llc(&optimised).expect("ptx");
        let (versioned, kernels) = version_on_block_size(&optimised);
        assert_eq!(kernels, 1);
        let ptx = codegen
            .llc(&codegen.opt(&versioned).expect("opt"))
            .expect("ptx");
        assert!(plain.contains("271"), "{plain}");
        // The kernel: the test (`17 * (ntid.y - 1) + ntid.x - 1 < 272`, as `opt` folds it),
        // the copy, and a call of the checked kernel, a function of its own.
        let kernel_at = ptx.find(".visible .entry flip(").expect("the kernel");
        let checked_at = ptx
            .find(".func __oxide_checked_flip(")
            .expect("the checked kernel");
        assert!(kernel_at < checked_at, "{ptx}");
        let kernel = &ptx[kernel_at..checked_at];
        let checked = &ptx[checked_at..];
        assert!(kernel.contains("17, %") && kernel.contains("289;"), "{ptx}");
        assert!(kernel.contains("call.uni __oxide_checked_flip"), "{ptx}");
        assert!(
            !kernel.contains("271") && !kernel.contains("trap;"),
            "{ptx}"
        );
        assert_eq!(checked.matches("271;").count(), 2, "{ptx}");
        assert!(
            checked.contains("trap;") && checked.contains("bar.sync"),
            "{ptx}"
        );
    }
}
