//! Block arguments to `phi` nodes.
//!
//! Every CFG edge (a terminator's successor slot) carries the values for its target's
//! arguments. LLVM wants, per block, one phi entry per incoming *edge*: a predecessor that
//! reaches a block on two edges (a `cond_br` with both arms to one block, a `switch` with
//! several cases to one block) appears twice, and both entries must carry the same value.
//! When such parallel edges pass different values, all but the first are routed through a
//! trampoline block of their own (`br label %target`), which becomes the phi's predecessor.

use std::collections::HashMap;

use pliron::{
    basic_block::BasicBlock,
    builtin::op_interfaces::BranchOpInterface,
    context::{Context, Ptr},
    linked_list::ContainsLinkedList,
    op::op_cast,
    operation::Operation,
    region::Region,
    value::Value,
};

use crate::{error::ExportError, naming::LocalNames};

/// One CFG edge: successor slot `succ_idx` of `pred`'s terminator.
pub(crate) struct Edge {
    pub(crate) pred: Ptr<BasicBlock>,
    pub(crate) target: Ptr<BasicBlock>,
    pub(crate) operands: Vec<Value>,
    /// Whether this edge needs a trampoline block (see module docs).
    needs_trampoline: bool,
    /// The trampoline's label, once names are assigned.
    pub(crate) trampoline: Option<String>,
}

/// The edges of one function, indexed both ways.
#[derive(Default)]
pub(crate) struct CfgPlan {
    edges: Vec<Edge>,
    outgoing: HashMap<Ptr<BasicBlock>, Vec<usize>>,
    incoming: HashMap<Ptr<BasicBlock>, Vec<usize>>,
}

impl CfgPlan {
    /// Collect the edges of every block of `region`, whose first block is the entry.
    pub(crate) fn build(ctx: &Context, region: Ptr<Region>) -> Result<Self, ExportError> {
        let mut plan = CfgPlan::default();
        let blocks: Vec<_> = region.deref(ctx).iter(ctx).collect();
        for &block in &blocks {
            let Some(term) = block.deref(ctx).get_terminator(ctx) else {
                continue;
            };
            let num_succs = term.deref(ctx).get_num_successors();
            if num_succs == 0 {
                continue;
            }
            let op = Operation::get_op_dyn(term, ctx);
            let opid = op.get_opid().to_string();
            let Some(branch) = op_cast::<dyn BranchOpInterface>(op.as_ref()) else {
                return Err(ExportError::UnsupportedOp { op: opid });
            };
            if let Err(e) = branch.verify_successor_operand_layout(ctx) {
                return Err(ExportError::malformed(opid, e.to_string()));
            }
            for succ_idx in 0..num_succs {
                let target = term.deref(ctx).get_successor(succ_idx);
                let operands = branch.successor_operands(ctx, succ_idx);
                let num_args = target.deref(ctx).get_num_arguments();
                if operands.len() != num_args {
                    return Err(ExportError::malformed(
                        opid,
                        format!(
                            "successor {succ_idx} gets {} operands for {num_args} block arguments",
                            operands.len()
                        ),
                    ));
                }
                let first_parallel = plan
                    .outgoing
                    .get(&block)
                    .into_iter()
                    .flatten()
                    .map(|&e| &plan.edges[e])
                    .find(|e| e.target == target);
                let needs_trampoline = first_parallel.is_some_and(|e| e.operands != operands);
                let idx = plan.edges.len();
                plan.edges.push(Edge {
                    pred: block,
                    target,
                    operands,
                    needs_trampoline,
                    trampoline: None,
                });
                plan.outgoing.entry(block).or_default().push(idx);
                plan.incoming.entry(target).or_default().push(idx);
            }
        }
        if let Some(&entry) = blocks.first()
            && plan.incoming.contains_key(&entry)
        {
            return Err(ExportError::EntryBlockHasPredecessors);
        }
        Ok(plan)
    }

    /// Whether some edge enters `block`.
    pub(crate) fn has_predecessors(&self, block: Ptr<BasicBlock>) -> bool {
        self.incoming.contains_key(&block)
    }

    /// Give every trampoline a fresh label `<pred>.to.<target>`.
    pub(crate) fn name_trampolines(&mut self, names: &mut LocalNames) {
        for edge in self.edges.iter_mut().filter(|e| e.needs_trampoline) {
            let base = format!(
                "{}.to.{}",
                names.block(edge.pred).unwrap_or("bb"),
                names.block(edge.target).unwrap_or("bb")
            );
            edge.trampoline = Some(names.fresh(&base));
        }
    }

    /// The edges leaving `block`, in successor order.
    pub(crate) fn outgoing(&self, block: Ptr<BasicBlock>) -> impl Iterator<Item = &Edge> {
        self.outgoing
            .get(&block)
            .into_iter()
            .flatten()
            .map(|&e| &self.edges[e])
    }

    /// The edges entering `block`, in block then successor order.
    pub(crate) fn incoming(&self, block: Ptr<BasicBlock>) -> impl Iterator<Item = &Edge> {
        self.incoming
            .get(&block)
            .into_iter()
            .flatten()
            .map(|&e| &self.edges[e])
    }
}

impl Edge {
    /// The label a branch along this edge jumps to: the trampoline, or the target itself.
    pub(crate) fn branch_label<'n>(&'n self, names: &'n LocalNames) -> &'n str {
        self.trampoline
            .as_deref()
            .unwrap_or_else(|| names.block(self.target).unwrap_or_default())
    }

    /// The predecessor label a phi of the target lists for this edge.
    pub(crate) fn phi_label<'n>(&'n self, names: &'n LocalNames) -> &'n str {
        self.trampoline
            .as_deref()
            .unwrap_or_else(|| names.block(self.pred).unwrap_or_default())
    }
}
