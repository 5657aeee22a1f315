//! Promotion of allocations to SSA values (mem2reg) in time linear in the IR's size.
//!
//! The classic algorithm (Cytron et al.: block arguments at the iterated dominance frontier of
//! the stores, pruned by liveness, then renaming along the dominator tree), on pliron's
//! promotion interfaces (`PromotableAllocationInterface`, `PromotableOpInterface`), as
//! `pliron::opts::mem2reg` uses them. That pass asks every op of a block about every
//! allocation of the function, and copies the map of reaching definitions into every block:
//! a function with thousands of locals and tens of thousands of ops (a generated program) spent
//! most of its build there. Here an op is asked only about the allocations it uses (found
//! through their use lists), each allocation's reaching definition is a stack that the walk of
//! the dominator tree pushes and pops, and liveness is computed from the uses' positions.
//!
//! Blocks that the entry does not reach are renamed too (with no reaching definition, so the
//! allocation's default value), so that no use of an erased allocation is left behind.

use std::collections::{HashMap, HashSet};

use pliron::basic_block::BasicBlock;
use pliron::builtin::given_names::set_block_arg_name;
use pliron::builtin::op_interfaces::BranchOpInterface;
use pliron::common_traits::Named;
use pliron::context::{Context, Ptr};
use pliron::graph::dominance::{DomTree, compute_dominator_tree};
use pliron::irbuild::inserter::{IRInserter, Inserter};
use pliron::irbuild::listener::{Recorder, RecorderEvent};
use pliron::irbuild::rewriter::IRRewriter;
use pliron::op::{op_cast, op_impls};
use pliron::operation::Operation;
use pliron::opts::mem2reg::{
    AllocInfo, PromotableAllocationInterface, PromotableOpInterface, PromotableOpKind,
};
use pliron::region::Region;
use pliron::result::Result;
use pliron::utils::table::{IMap, ISet};
use pliron::value::Value;

/// One promotable allocation.
struct Candidate {
    alloc_op: Ptr<Operation>,
    info: AllocInfo,
}

/// Promotes every promotable allocation nested in `root`. Returns whether anything changed.
pub fn mem2reg(ctx: &mut Context, root: Ptr<Operation>) -> Result<bool> {
    let mut by_region: Vec<(Ptr<Region>, Vec<Candidate>)> = Vec::new();
    let mut region_index: HashMap<Ptr<Region>, usize> = HashMap::new();
    for candidate in candidates(ctx, root) {
        if !promotable(ctx, &candidate) {
            continue;
        }
        let region = candidate
            .alloc_op
            .deref(ctx)
            .get_parent_region(ctx)
            .expect("an allocation with a use is in a region");
        let index = *region_index.entry(region).or_insert_with(|| {
            by_region.push((region, Vec::new()));
            by_region.len() - 1
        });
        by_region[index].1.push(candidate);
    }
    let mut changed = false;
    for (region, candidates) in by_region {
        changed |= promote_in_region(ctx, region, candidates)?;
    }
    Ok(changed)
}

/// Every allocation that an op nested in `root` offers for promotion.
fn candidates(ctx: &Context, root: Ptr<Operation>) -> Vec<Candidate> {
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(op) = stack.pop() {
        {
            let op_obj = Operation::get_op_dyn(op, ctx);
            if let Some(alloc) = op_cast::<dyn PromotableAllocationInterface>(op_obj.as_ref()) {
                found.extend(
                    alloc
                        .alloc_info(ctx)
                        .into_iter()
                        .map(|info| Candidate { alloc_op: op, info }),
                );
            }
        }
        let regions: Vec<Ptr<Region>> = op.deref(ctx).regions().collect();
        for region in regions.into_iter().rev() {
            let blocks: Vec<Ptr<BasicBlock>> = region.iter(ctx).collect();
            for block in blocks.into_iter().rev() {
                let ops: Vec<Ptr<Operation>> = block.iter(ctx).collect();
                stack.extend(ops.into_iter().rev());
            }
        }
    }
    found
}

/// Whether every use of the allocation is a load or store of it (or a use the interface can
/// remove) in the allocation's own region.
fn promotable(ctx: &Context, candidate: &Candidate) -> bool {
    let region = candidate.alloc_op.deref(ctx).get_parent_region(ctx);
    candidate.info.ptr.uses(ctx).iter().all(|r#use| {
        let user = r#use.user_op();
        user.deref(ctx).get_parent_region(ctx) == region
            && !matches!(
                kind_of(ctx, user, &candidate.info),
                PromotableOpKind::NonPromotableUse
            )
    })
}

/// What `op` does with the allocation `info`.
fn kind_of(ctx: &Context, op: Ptr<Operation>, info: &AllocInfo) -> PromotableOpKind {
    let op_obj = Operation::get_op_dyn(op, ctx);
    match op_cast::<dyn PromotableOpInterface>(op_obj.as_ref()) {
        Some(promotable) => promotable.promotion_kind(ctx, info),
        None => PromotableOpKind::NonPromotableUse,
    }
}

/// Every op's position in its block, computed per block on first use.
#[derive(Default)]
struct Positions(HashMap<Ptr<BasicBlock>, HashMap<Ptr<Operation>, usize>>);

impl Positions {
    fn of(&mut self, ctx: &Context, op: Ptr<Operation>) -> (Ptr<BasicBlock>, usize) {
        let block = op
            .deref(ctx)
            .get_parent_block()
            .expect("a use is in a block");
        let table = self
            .0
            .entry(block)
            .or_insert_with(|| block.iter(ctx).enumerate().map(|(i, op)| (op, i)).collect());
        (block, table[&op])
    }
}

fn promote_in_region(
    ctx: &mut Context,
    region: Ptr<Region>,
    mut candidates: Vec<Candidate>,
) -> Result<bool> {
    let tree = compute_dominator_tree(ctx, &region);
    let mut positions = Positions::default();
    let liveness: Vec<_> = candidates
        .iter()
        .map(|candidate| defining_and_live_in_blocks(ctx, candidate, &mut positions))
        .collect();
    let live_somewhere: HashSet<Ptr<BasicBlock>> = liveness
        .iter()
        .flat_map(|(_, live_in)| live_in.keys().copied())
        .collect();
    let frontiers = live_frontiers(ctx, region, &tree, &live_somewhere);

    // Where each allocation needs a block argument.
    let mut phi_blocks: Vec<ISet<Ptr<BasicBlock>>> = Vec::with_capacity(candidates.len());
    for (defining, live_in) in liveness {
        let mut blocks = ISet::default();
        let mut worklist: Vec<Ptr<BasicBlock>> = defining.keys().copied().collect();
        while let Some(block) = worklist.pop() {
            for &frontier in frontiers.get(&block).into_iter().flatten() {
                if live_in.contains_key(&frontier)
                    && blocks.insert(frontier)
                    && !defining.contains_key(&frontier)
                {
                    worklist.push(frontier);
                }
            }
        }
        phi_blocks.push(blocks);
    }

    // A block argument needs every predecessor's branch to pass a value.
    let passes_values = |ctx: &Context, block: &Ptr<BasicBlock>| {
        block.preds(ctx).into_iter().all(|pred| {
            pred.deref(ctx).get_terminator(ctx).is_some_and(|term| {
                op_impls::<dyn BranchOpInterface>(Operation::get_op_dyn(term, ctx).as_ref())
            })
        })
    };
    let keep: Vec<bool> = phi_blocks
        .iter()
        .map(|blocks| blocks.iter().all(|b| passes_values(ctx, b)))
        .collect();
    let mut kept_phis = Vec::new();
    candidates = candidates
        .into_iter()
        .zip(phi_blocks)
        .zip(keep)
        .filter_map(|((c, phis), keep)| {
            keep.then(|| {
                kept_phis.push(phis);
                c
            })
        })
        .collect();
    if candidates.is_empty() {
        return Ok(false);
    }

    // The block arguments, in candidate order per block (the order branches pass them in).
    let mut phis_of_block: HashMap<Ptr<BasicBlock>, Vec<(usize, usize)>> = HashMap::new();
    for (index, blocks) in kept_phis.iter().enumerate() {
        let info = &candidates[index].info;
        for &block in blocks {
            let arg = BasicBlock::push_argument(block, ctx, info.ty);
            set_block_arg_name(ctx, block, arg, info.ptr.given_name(ctx));
            phis_of_block.entry(block).or_default().push((index, arg));
        }
    }

    // The candidates each op uses, in candidate order.
    let mut users: HashMap<Ptr<Operation>, Vec<usize>> = HashMap::new();
    for (index, candidate) in candidates.iter().enumerate() {
        for r#use in candidate.info.ptr.uses(ctx) {
            let list = users.entry(r#use.user_op()).or_default();
            if list.last() != Some(&index) {
                list.push(index);
            }
        }
    }

    let mut renamer = Renamer {
        candidates: &candidates,
        phis_of_block: &phis_of_block,
        users: &users,
        reaching: vec![Vec::new(); candidates.len()],
        defaults: vec![None; candidates.len()],
    };
    let entry = region
        .deref(ctx)
        .get_entry_block()
        .expect("a region with allocations has an entry block");
    // Depth-first over the dominator tree; on leaving a block, the definitions it pushed go.
    enum Step {
        Enter(Ptr<BasicBlock>),
        Leave(Vec<usize>),
    }
    let mut visited = std::collections::HashSet::new();
    let mut steps = vec![Step::Enter(entry)];
    while let Some(step) = steps.pop() {
        match step {
            Step::Enter(block) => {
                visited.insert(block);
                let pushed = renamer.rename_block(ctx, block)?;
                steps.push(Step::Leave(pushed));
                let children: Vec<Ptr<BasicBlock>> = tree.children(&block).collect();
                steps.extend(children.into_iter().rev().map(Step::Enter));
            }
            Step::Leave(pushed) => {
                for index in pushed {
                    renamer.reaching[index].pop();
                }
            }
        }
    }
    let unreachable: Vec<Ptr<BasicBlock>> =
        region.iter(ctx).filter(|b| !visited.contains(b)).collect();
    for block in unreachable {
        let pushed = renamer.rename_block(ctx, block)?;
        for index in pushed {
            renamer.reaching[index].pop();
        }
    }

    // The allocations themselves go last, one call per allocating op.
    let mut infos_of_op: IMap<Ptr<Operation>, Vec<AllocInfo>> = IMap::default();
    for candidate in &candidates {
        infos_of_op
            .entry(candidate.alloc_op)
            .or_default()
            .push(candidate.info.clone());
    }
    for (op, infos) in infos_of_op {
        let mut rewriter = IRRewriter::<Recorder>::default();
        rewriter.set_insertion_point_before_operation(op);
        let op_obj = Operation::get_op_dyn(op, ctx);
        let alloc = op_cast::<dyn PromotableAllocationInterface>(op_obj.as_ref())
            .expect("a candidate's op offers promotion");
        alloc.promote(ctx, &mut rewriter, &infos)?;
    }
    Ok(true)
}

/// The dominance frontier of each block, restricted to `joins` (Cooper, Harvey and Kennedy's
/// walk up the dominator tree from each predecessor of a join). Phi placement only keeps
/// frontier blocks where the allocation is live, so only blocks where some allocation is live
/// matter; leaving out the others (a block that every failed check of the function branches
/// to has thousands of predecessors and would be in the frontier of most blocks) keeps the
/// frontiers small. A walk stops at a block that already has the join: the rest of its way
/// up was walked before.
fn live_frontiers(
    ctx: &Context,
    region: Ptr<Region>,
    tree: &DomTree<Ptr<Region>, Context>,
    joins: &HashSet<Ptr<BasicBlock>>,
) -> HashMap<Ptr<BasicBlock>, Vec<Ptr<BasicBlock>>> {
    let mut frontiers: HashMap<Ptr<BasicBlock>, Vec<Ptr<BasicBlock>>> = HashMap::new();
    for join in region.iter(ctx) {
        if !joins.contains(&join) || !tree.contains(&join) {
            continue;
        }
        let preds = join.preds(ctx);
        if preds.len() < 2 {
            continue;
        }
        let stop = tree.idom(&join);
        for pred in preds {
            if !tree.contains(&pred) {
                continue;
            }
            let mut runner = Some(pred);
            while let Some(block) = runner
                && runner != stop
            {
                let frontier = frontiers.entry(block).or_default();
                if frontier.last() == Some(&join) {
                    break;
                }
                frontier.push(join);
                runner = tree.idom(&block);
            }
        }
    }
    frontiers
}

/// The blocks that store to the allocation (with the position of their first store), and the
/// blocks where its value is live on entry.
fn defining_and_live_in_blocks(
    ctx: &Context,
    candidate: &Candidate,
    positions: &mut Positions,
) -> (
    HashMap<Ptr<BasicBlock>, usize>,
    HashMap<Ptr<BasicBlock>, ()>,
) {
    let mut first_store: HashMap<Ptr<BasicBlock>, usize> = HashMap::new();
    let mut first_read: HashMap<Ptr<BasicBlock>, usize> = HashMap::new();
    for r#use in candidate.info.ptr.uses(ctx) {
        let user = r#use.user_op();
        let (block, position) = positions.of(ctx, user);
        let table = match kind_of(ctx, user, &candidate.info) {
            PromotableOpKind::Store(_) => &mut first_store,
            _ => &mut first_read,
        };
        table
            .entry(block)
            .and_modify(|p| *p = (*p).min(position))
            .or_insert(position);
    }
    // Live on entry: a block that reads before it stores, and every predecessor chain up to a
    // block that stores.
    let mut live_in = HashMap::new();
    let mut worklist: Vec<Ptr<BasicBlock>> = first_read
        .iter()
        .filter(|(block, read)| first_store.get(block).is_none_or(|store| *read < store))
        .map(|(block, _)| *block)
        .collect();
    while let Some(block) = worklist.pop() {
        if live_in.insert(block, ()).is_some() {
            continue;
        }
        for pred in block.preds(ctx) {
            if !first_store.contains_key(&pred) {
                worklist.push(pred);
            }
        }
    }
    (first_store, live_in)
}

/// The state of the renaming walk.
struct Renamer<'a> {
    candidates: &'a [Candidate],
    phis_of_block: &'a HashMap<Ptr<BasicBlock>, Vec<(usize, usize)>>,
    users: &'a HashMap<Ptr<Operation>, Vec<usize>>,
    /// Per candidate: the reaching definitions, innermost last.
    reaching: Vec<Vec<Value>>,
    /// Per candidate: its default value (an undefined value), made on first need.
    defaults: Vec<Option<Value>>,
}

impl Renamer<'_> {
    /// Rewrites the loads and stores of `block`, passes the reaching definitions to its
    /// successors' new arguments, and returns the candidates whose stacks it pushed (once per
    /// push).
    fn rename_block(&mut self, ctx: &mut Context, block: Ptr<BasicBlock>) -> Result<Vec<usize>> {
        let mut pushed = Vec::new();
        if let Some(phis) = self.phis_of_block.get(&block) {
            for &(index, arg) in phis {
                let value = block.deref(ctx).get_argument(arg);
                self.reaching[index].push(value);
                pushed.push(index);
            }
        }
        let ops: Vec<Ptr<Operation>> = block.iter(ctx).collect();
        let mut erased = std::collections::HashSet::new();
        for op in ops {
            if erased.contains(&op) {
                continue;
            }
            let Some(used) = self.users.get(&op) else {
                continue;
            };
            let mut queue = Vec::new();
            for &index in used {
                let info = &self.candidates[index].info;
                match kind_of(ctx, op, info) {
                    PromotableOpKind::Load | PromotableOpKind::EliminatableUse => {
                        let value = self.current(ctx, index)?;
                        queue.push((info.clone(), value));
                    }
                    PromotableOpKind::Store(value) => {
                        self.reaching[index].push(value);
                        pushed.push(index);
                        queue.push((info.clone(), value));
                    }
                    PromotableOpKind::NonPromotableUse => {}
                }
            }
            if queue.is_empty() {
                continue;
            }
            let mut rewriter = IRRewriter::<Recorder>::default();
            rewriter.set_insertion_point_before_operation(op);
            {
                let op_obj = Operation::get_op_dyn(op, ctx);
                let promotable = op_cast::<dyn PromotableOpInterface>(op_obj.as_ref())
                    .expect("an op that loads or stores offers promotion");
                promotable.promote(ctx, &queue, &mut rewriter)?;
            }
            for event in rewriter.get_listener_mut().events.drain(..) {
                if let RecorderEvent::ErasedOperation(op) = event {
                    erased.insert(op);
                }
            }
        }
        let succs = block.deref(ctx).succs(ctx);
        for (succ_index, succ) in succs.iter().enumerate() {
            let Some(phis) = self.phis_of_block.get(succ) else {
                continue;
            };
            for &(index, arg) in phis {
                let value = self.current(ctx, index)?;
                let term = block
                    .deref(ctx)
                    .get_terminator(ctx)
                    .expect("a block with successors ends in a terminator");
                let term_obj = Operation::get_op_dyn(term, ctx);
                let branch = op_cast::<dyn BranchOpInterface>(term_obj.as_ref())
                    .expect("checked: the predecessors of argument blocks branch");
                let operand = branch.add_successor_operand(ctx, succ_index, value);
                assert_eq!(operand, arg, "block arguments are passed in order");
            }
        }
        Ok(pushed)
    }

    /// The reaching definition of candidate `index`, or its default value.
    fn current(&mut self, ctx: &mut Context, index: usize) -> Result<Value> {
        if let Some(&value) = self.reaching[index].last() {
            return Ok(value);
        }
        if let Some(value) = self.defaults[index] {
            return Ok(value);
        }
        let candidate = &self.candidates[index];
        let alloc_op = candidate.alloc_op;
        let block = alloc_op
            .deref(ctx)
            .get_parent_block()
            .expect("an allocation is in a block");
        let entry = block
            .deref(ctx)
            .get_parent_region()
            .and_then(|r| r.deref(ctx).get_entry_block())
            .expect("an allocation's region has an entry block");
        // Before the allocation when it is in the entry block, else at the entry's end: a
        // point that dominates every use.
        let mut inserter = if entry == block {
            IRInserter::<Recorder>::new_before_operation(alloc_op)
        } else {
            IRInserter::<Recorder>::new_before_block_terminator(entry, ctx)
        };
        let op_obj = Operation::get_op_dyn(alloc_op, ctx);
        let alloc = op_cast::<dyn PromotableAllocationInterface>(op_obj.as_ref())
            .expect("a candidate's op offers promotion");
        let value = alloc.default_value(ctx, &mut inserter, &candidate.info)?;
        self.defaults[index] = Some(value);
        Ok(value)
    }
}
