//! Verification of IR in time linear in its size (up to hashing).
//!
//! pliron's `verify_operation` checks def-use dominance use by use: each check walks a block to
//! order two ops and climbs the dominator tree, and each call builds its dominator trees anew.
//! Called per op (to report a bug at the user's line) that is quadratic in a function's size:
//! a 10,000-line generated function took minutes. Here every op is checked on its own
//! (attributes, operands, interfaces, its verifier: `Operation::verify`), then
//! dominance once for the whole IR, with one dominator tree per region numbered by a
//! depth-first walk (a dominates b when b's interval lies in a's) and every op's position in its
//! block.

use std::collections::HashMap;

use pliron::basic_block::BasicBlock;
use pliron::common_traits::{Named, Verify};
use pliron::context::{Context, Ptr};
use pliron::graph::dominance::compute_dominator_tree;
use pliron::operation::Operation;
use pliron::printable::Printable;
use pliron::region::Region;
use pliron::value::{DefiningEntity, Value};

/// An op that fails verification, and what is wrong with it.
#[derive(Debug)]
pub struct VerifyFailure {
    pub op: Ptr<Operation>,
    pub message: String,
}

/// Verifies every op nested in `root` (not `root`'s own verifier), then that every operand's
/// definition dominates its use.
pub fn verify_nested(ctx: &Context, root: Ptr<Operation>) -> Result<(), VerifyFailure> {
    let mut ops = Vec::new();
    collect_ops(ctx, root, &mut ops);
    for &op in &ops {
        verify_op(ctx, op)?;
    }
    let mut dominance = Dominance::default();
    for &op in &ops {
        for value in op.deref(ctx).operands() {
            if !dominance.value_dominates_use(ctx, value, op) {
                return Err(VerifyFailure {
                    op,
                    message: format!(
                        "the definition of {} does not dominate this use",
                        value.unique_name(ctx).disp(ctx)
                    ),
                });
            }
        }
    }
    Ok(())
}

/// Verifies `root` and everything nested in it.
pub fn verify_all(ctx: &Context, root: Ptr<Operation>) -> Result<(), VerifyFailure> {
    verify_op(ctx, root)?;
    verify_nested(ctx, root)
}

/// Verifies `op` itself. `Operation::verify` also verifies an op's regions, recursively, which
/// would verify a function's body once for the function and once for the module: an op with
/// regions (a module, a function) is verified through its interfaces and its own verifier,
/// every other op through `Operation::verify` (its attributes, operands and results too).
fn verify_op(ctx: &Context, op: Ptr<Operation>) -> Result<(), VerifyFailure> {
    let result = if op.deref(ctx).num_regions() == 0 {
        op.deref(ctx).verify(ctx)
    } else {
        let alone = Operation::get_op_dyn(op, ctx);
        alone
            .verify_interfaces(ctx)
            .and_then(|()| alone.verify(ctx))
    };
    result.map_err(|error| VerifyFailure {
        op,
        message: error.disp(ctx).to_string(),
    })
}

/// Every op nested in the regions of `root`, outermost first.
fn collect_ops(ctx: &Context, root: Ptr<Operation>, ops: &mut Vec<Ptr<Operation>>) {
    let regions: Vec<Ptr<Region>> = root.deref(ctx).regions().collect();
    for region in regions {
        for block in region.iter(ctx) {
            for op in block.iter(ctx) {
                ops.push(op);
                collect_ops(ctx, op, ops);
            }
        }
    }
}

/// Each reachable block's depth-first entry and exit numbers in its region's dominator tree.
type Intervals = HashMap<Ptr<BasicBlock>, (usize, usize)>;

/// Dominance queries in constant time, from tables built once per region and block.
#[derive(Default)]
struct Dominance {
    /// Per region: each reachable block's depth-first entry and exit numbers in the region's
    /// dominator tree.
    intervals: HashMap<Ptr<Region>, Intervals>,
    /// Per block: each op's position.
    positions: HashMap<Ptr<BasicBlock>, HashMap<Ptr<Operation>, usize>>,
}

impl Dominance {
    /// Whether `value` is available at `user`: defined before it in the same block, or in (or as
    /// an argument of) a block that dominates the user's (or its ancestor's) block.
    fn value_dominates_use(&mut self, ctx: &Context, value: Value, user: Ptr<Operation>) -> bool {
        let (def_block, def_op) = match value.defining_entity() {
            DefiningEntity::Op(op) => match op.deref(ctx).get_parent_block() {
                Some(block) => (block, Some(op)),
                None => return false,
            },
            DefiningEntity::Block(block) => (block, None),
        };
        let Some(region) = def_block.deref(ctx).get_parent_region() else {
            return false;
        };
        // The user, or the op that holds it, in the definition's region.
        let mut user = user;
        loop {
            match user.deref(ctx).get_parent_region(ctx) {
                Some(r) if r == region => break,
                Some(r) => user = r.deref(ctx).get_parent_op(),
                None => return false,
            }
        }
        let Some(user_block) = user.deref(ctx).get_parent_block() else {
            return false;
        };
        if user_block == def_block {
            return match def_op {
                None => true,
                Some(def) => {
                    !region.deref(ctx).has_ssa_dominance(ctx) || {
                        let positions = self.positions_in(ctx, def_block);
                        positions[&def] < positions[&user]
                    }
                }
            };
        }
        let intervals = self.intervals_of(ctx, region);
        match (intervals.get(&def_block), intervals.get(&user_block)) {
            (Some(&(def_in, def_out)), Some(&(use_in, use_out))) => {
                def_in <= use_in && use_out <= def_out
            }
            // An unreachable block is dominated by itself alone.
            _ => false,
        }
    }

    fn positions_in(
        &mut self,
        ctx: &Context,
        block: Ptr<BasicBlock>,
    ) -> &HashMap<Ptr<Operation>, usize> {
        self.positions
            .entry(block)
            .or_insert_with(|| block.iter(ctx).enumerate().map(|(i, op)| (op, i)).collect())
    }

    fn intervals_of(&mut self, ctx: &Context, region: Ptr<Region>) -> &Intervals {
        self.intervals.entry(region).or_insert_with(|| {
            let tree = compute_dominator_tree(ctx, &region);
            let mut intervals = HashMap::new();
            let Some(root) = tree.root() else {
                return intervals;
            };
            let mut clock = 0;
            // (block, whether its children were pushed)
            let mut stack = vec![(root, false)];
            while let Some((block, expanded)) = stack.pop() {
                if expanded {
                    intervals.entry(block).and_modify(|(_, out)| *out = clock);
                    clock += 1;
                    continue;
                }
                intervals.insert(block, (clock, clock));
                clock += 1;
                stack.push((block, true));
                stack.extend(tree.children(&block).map(|child| (child, false)));
            }
            intervals
        })
    }
}
