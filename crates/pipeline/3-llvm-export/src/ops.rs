//! The LLVM instruction text of every supported pliron-llvm op.

use std::collections::HashSet;

use pliron::{
    builtin::attributes::{BoolAttr, IntegerAttr, StringAttr, TypeAttr},
    builtin::op_interfaces::ATTR_KEY_CALLEE_TYPE,
    context::Ptr,
    identifier::Identifier,
    op::Op,
    operation::Operation,
    r#type::{TypeHandle, Typed},
    value::Value,
};
use pliron_llvm::{
    attributes::{
        AlignmentAttr, AtomicOrderingAttr, AtomicRmwKindAttr, FCmpPredicateAttr, FastmathFlags,
        FastmathFlagsAttr, GepIndexAttr, GepNoWrapFlags, ICmpPredicateAttr,
        IntegerOverflowFlagsAttr, SyncScopeAttr,
    },
    llvm_attrs::LlvmAttributesAttr,
    op_interfaces::{
        ATTR_KEY_FAST_MATH_FLAGS, ATTR_KEY_INTEGER_OVERFLOW_FLAGS, ATTR_KEY_LLVM_ALIGNMENT,
        ATTR_KEY_LLVM_VOLATILE, ATTR_KEY_NNEG_FLAG, ATTR_KEY_SYNC_SCOPE,
    },
    ops::*,
    types::PointerType,
};

use crate::{
    attrs::{attrs_text, string_of, type_of},
    constants::int_text,
    error::ExportError,
    function::FunctionWriter,
    module_state::callee_function,
    naming::{escape, global_ref},
    types::{func_signature, is_void, scalar_align},
};

/// Integer binary ops: opcode, and whether they take `nuw`/`nsw`.
fn int_binary(op: &dyn Op) -> Option<(&'static str, bool)> {
    Some(if op.is::<AddOp>() {
        ("add", true)
    } else if op.is::<SubOp>() {
        ("sub", true)
    } else if op.is::<MulOp>() {
        ("mul", true)
    } else if op.is::<ShlOp>() {
        ("shl", true)
    } else if op.is::<UDivOp>() {
        ("udiv", false)
    } else if op.is::<SDivOp>() {
        ("sdiv", false)
    } else if op.is::<URemOp>() {
        ("urem", false)
    } else if op.is::<SRemOp>() {
        ("srem", false)
    } else if op.is::<AndOp>() {
        ("and", false)
    } else if op.is::<OrOp>() {
        ("or", false)
    } else if op.is::<XorOp>() {
        ("xor", false)
    } else if op.is::<LShrOp>() {
        ("lshr", false)
    } else if op.is::<AShrOp>() {
        ("ashr", false)
    } else {
        return None;
    })
}

/// Float binary ops.
fn float_binary(op: &dyn Op) -> Option<&'static str> {
    Some(if op.is::<FAddOp>() {
        "fadd"
    } else if op.is::<FSubOp>() {
        "fsub"
    } else if op.is::<FMulOp>() {
        "fmul"
    } else if op.is::<FDivOp>() {
        "fdiv"
    } else if op.is::<FRemOp>() {
        "frem"
    } else {
        return None;
    })
}

/// Cast ops: opcode, whether they may carry `nneg`, whether they may carry fast-math flags.
fn cast(op: &dyn Op) -> Option<(&'static str, bool, bool)> {
    Some(if op.is::<TruncOp>() {
        ("trunc", false, false)
    } else if op.is::<ZExtOp>() {
        ("zext", true, false)
    } else if op.is::<SExtOp>() {
        ("sext", false, false)
    } else if op.is::<FPTruncOp>() {
        ("fptrunc", false, true)
    } else if op.is::<FPExtOp>() {
        ("fpext", false, true)
    } else if op.is::<FPToSIOp>() {
        ("fptosi", false, false)
    } else if op.is::<FPToUIOp>() {
        ("fptoui", false, false)
    } else if op.is::<SIToFPOp>() {
        ("sitofp", false, false)
    } else if op.is::<UIToFPOp>() {
        ("uitofp", true, false)
    } else if op.is::<PtrToIntOp>() {
        ("ptrtoint", false, false)
    } else if op.is::<IntToPtrOp>() {
        ("inttoptr", false, false)
    } else if op.is::<BitcastOp>() {
        ("bitcast", false, false)
    } else if op.is::<AddrSpaceCastOp>() {
        ("addrspacecast", false, false)
    } else {
        return None;
    })
}

fn icmp_predicate(p: &ICmpPredicateAttr) -> &'static str {
    match p {
        ICmpPredicateAttr::EQ => "eq",
        ICmpPredicateAttr::NE => "ne",
        ICmpPredicateAttr::SLT => "slt",
        ICmpPredicateAttr::SLE => "sle",
        ICmpPredicateAttr::SGT => "sgt",
        ICmpPredicateAttr::SGE => "sge",
        ICmpPredicateAttr::ULT => "ult",
        ICmpPredicateAttr::ULE => "ule",
        ICmpPredicateAttr::UGT => "ugt",
        ICmpPredicateAttr::UGE => "uge",
    }
}

fn fcmp_predicate(p: &FCmpPredicateAttr) -> &'static str {
    match p {
        FCmpPredicateAttr::False => "false",
        FCmpPredicateAttr::OEQ => "oeq",
        FCmpPredicateAttr::OGT => "ogt",
        FCmpPredicateAttr::OGE => "oge",
        FCmpPredicateAttr::OLT => "olt",
        FCmpPredicateAttr::OLE => "ole",
        FCmpPredicateAttr::ONE => "one",
        FCmpPredicateAttr::ORD => "ord",
        FCmpPredicateAttr::UEQ => "ueq",
        FCmpPredicateAttr::UGT => "ugt",
        FCmpPredicateAttr::UGE => "uge",
        FCmpPredicateAttr::ULT => "ult",
        FCmpPredicateAttr::ULE => "ule",
        FCmpPredicateAttr::UNE => "une",
        FCmpPredicateAttr::UNO => "uno",
        FCmpPredicateAttr::True => "true",
    }
}

fn ordering(o: &AtomicOrderingAttr) -> &'static str {
    match o {
        AtomicOrderingAttr::Monotonic => "monotonic",
        AtomicOrderingAttr::Acquire => "acquire",
        AtomicOrderingAttr::Release => "release",
        AtomicOrderingAttr::AcqRel => "acq_rel",
        AtomicOrderingAttr::SeqCst => "seq_cst",
    }
}

fn rmw_kind(k: &AtomicRmwKindAttr) -> &'static str {
    match k {
        AtomicRmwKindAttr::Xchg => "xchg",
        AtomicRmwKindAttr::Add => "add",
        AtomicRmwKindAttr::Sub => "sub",
        AtomicRmwKindAttr::And => "and",
        AtomicRmwKindAttr::Nand => "nand",
        AtomicRmwKindAttr::Or => "or",
        AtomicRmwKindAttr::Xor => "xor",
        AtomicRmwKindAttr::Max => "max",
        AtomicRmwKindAttr::Min => "min",
        AtomicRmwKindAttr::UMax => "umax",
        AtomicRmwKindAttr::UMin => "umin",
        AtomicRmwKindAttr::FAdd => "fadd",
        AtomicRmwKindAttr::FSub => "fsub",
        AtomicRmwKindAttr::FMax => "fmax",
        AtomicRmwKindAttr::FMin => "fmin",
    }
}

/// Fast-math flags followed by a space, or nothing.
fn fmf_text(flags: FastmathFlags) -> String {
    if flags.contains(FastmathFlags::FAST) {
        return "fast ".into();
    }
    [
        (FastmathFlags::NNAN, "nnan "),
        (FastmathFlags::NINF, "ninf "),
        (FastmathFlags::NSZ, "nsz "),
        (FastmathFlags::ARCP, "arcp "),
        (FastmathFlags::CONTRACT, "contract "),
        (FastmathFlags::AFN, "afn "),
        (FastmathFlags::REASSOC, "reassoc "),
    ]
    .iter()
    .filter(|(f, _)| flags.contains(*f))
    .map(|(_, t)| *t)
    .collect()
}

/// ` syncscope("name")` for a non-system scope.
fn syncscope_text(scope: &SyncScopeAttr) -> String {
    match scope {
        SyncScopeAttr::System => String::new(),
        other => format!(" syncscope(\"{}\")", escape(&other.to_name())),
    }
}

/// Declares, once for every op with an emitter of its own, the op and the method of
/// [FunctionWriter] that writes its instruction(s), and derives the dispatch from that table.
macro_rules! op_emitters {
    ($($op:ty => $method:ident),* $(,)?) => {
        impl FunctionWriter<'_> {
            /// The instruction(s) of `op` by its emitter; `None` for an op without one.
            fn emit_op(&mut self, o: &OpCtx, op: &dyn Op) -> Option<Result<(), ExportError>> {
                $(
                    if let Some(op) = op.downcast_ref::<$op>() {
                        return Some(self.$method(o, op));
                    }
                )*
                None
            }
        }
    };
}

op_emitters! {
    FNegOp => fneg,
    ICmpOp => icmp,
    FCmpOp => fcmp,
    AllocaOp => alloca_op,
    LoadOp => load,
    StoreOp => store,
    GetElementPtrOp => gep,
    InsertValueOp => insert_value,
    ExtractValueOp => extract_value,
    InsertElementOp => insert_element,
    ExtractElementOp => extract_element,
    ShuffleVectorOp => shuffle_vector,
    SelectOp => select,
    FreezeOp => freeze,
    CallOp => call,
    CallIntrinsicOp => call_intrinsic,
    InlineAsmOp => inline_asm,
    AtomicRmwOp => atomic_rmw,
    AtomicCmpxchgOp => atomic_cmpxchg,
    FenceOp => fence,
    AtomicLoadOp => atomic_load,
    AtomicStoreOp => atomic_store,
    ReturnOp => ret,
    UnreachableOp => unreachable,
    BrOp => br,
    CondBrOp => cond_br,
    SwitchOp => switch,
}

impl FunctionWriter<'_> {
    /// Write the instruction(s) of `ptr`: nothing for the constant-like ops (written inline
    /// at their uses), the families of integer, float and cast ops by their opcodes, any other
    /// op by its emitter ([op_emitters]).
    pub(crate) fn op(&mut self, ptr: Ptr<Operation>) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let obj = Operation::get_op_dyn(ptr, ctx);
        let op: &dyn Op = obj.as_ref();
        self.dbg = self.debug_location(ptr, op.is::<CallOp>());
        let opid = op.get_opid().to_string();
        let o = OpCtx { ptr, opid: &opid };

        if op.is::<ConstantOp>()
            || op.is::<UndefOp>()
            || op.is::<PoisonOp>()
            || op.is::<ZeroOp>()
            || op.is::<AddressOfOp>()
        {
            return Ok(());
        }
        if let Some((opcode, wraps)) = int_binary(op) {
            return self.int_binary_inst(&o, opcode, wraps);
        }
        if let Some(opcode) = float_binary(op) {
            return self.float_binary_inst(&o, opcode);
        }
        if let Some((opcode, nneg, fmf)) = cast(op) {
            return self.cast_inst(&o, opcode, nneg, fmf);
        }
        match self.emit_op(&o, op) {
            Some(result) => result,
            None => Err(ExportError::UnsupportedOp { op: opid }),
        }
    }

    /// An integer binary op: `opcode`, with `nuw`/`nsw` when it `wraps` and the op has them.
    fn int_binary_inst(&mut self, o: &OpCtx, opcode: &str, wraps: bool) -> Result<(), ExportError> {
        let [lhs, rhs] = self.operands(o)?;
        let mut flags = String::new();
        if wraps
            && let Some(f) =
                self.attr::<IntegerOverflowFlagsAttr>(o.ptr, &ATTR_KEY_INTEGER_OVERFLOW_FLAGS)
        {
            flags = format!(
                "{}{}",
                if f.nuw { "nuw " } else { "" },
                if f.nsw { "nsw " } else { "" }
            );
        }
        let line = format!(
            "{opcode} {flags}{}, {}",
            self.typed_opd(lhs)?,
            self.opd(rhs)?
        );
        self.assign(o, line)
    }

    /// A float binary op: `opcode` with the op's fast-math flags.
    fn float_binary_inst(&mut self, o: &OpCtx, opcode: &str) -> Result<(), ExportError> {
        let [lhs, rhs] = self.operands(o)?;
        let line = format!(
            "{opcode} {}{}, {}",
            self.fmf(o.ptr),
            self.typed_opd(lhs)?,
            self.opd(rhs)?
        );
        self.assign(o, line)
    }

    /// A cast: `opcode`, with `nneg` when it takes one and the op has it, and fast-math flags
    /// when it takes them (`fmf`).
    fn cast_inst(
        &mut self,
        o: &OpCtx,
        opcode: &str,
        nneg: bool,
        fmf: bool,
    ) -> Result<(), ExportError> {
        let [arg] = self.operands(o)?;
        let mut flags = String::new();
        if nneg
            && self
                .attr::<BoolAttr>(o.ptr, &ATTR_KEY_NNEG_FLAG)
                .is_some_and(bool::from)
        {
            flags.push_str("nneg ");
        }
        if fmf {
            flags.push_str(&self.fmf(o.ptr));
        }
        let to = self.ty(self.result_type(o)?)?;
        let line = format!("{opcode} {flags}{} to {to}", self.typed_opd(arg)?);
        self.assign(o, line)
    }

    /// `fneg`.
    fn fneg(&mut self, o: &OpCtx, _: &FNegOp) -> Result<(), ExportError> {
        let ptr = o.ptr;
        let [arg] = self.operands(o)?;
        let line = format!("fneg {}{}", self.fmf(ptr), self.typed_opd(arg)?);
        self.assign(o, line)
    }

    /// `icmp` with its predicate.
    fn icmp(&mut self, o: &OpCtx, icmp: &ICmpOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let Some(pred) = icmp
            .get_attr_llvm_icmp_predicate(ctx)
            .map(|p| icmp_predicate(&p))
        else {
            return Err(self.missing(o, "predicate"));
        };
        let [lhs, rhs] = self.operands(o)?;
        let line = format!("icmp {pred} {}, {}", self.typed_opd(lhs)?, self.opd(rhs)?);
        self.assign(o, line)
    }

    /// `fcmp` with its fast-math flags and predicate.
    fn fcmp(&mut self, o: &OpCtx, fcmp: &FCmpOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let ptr = o.ptr;
        let Some(pred) = fcmp
            .get_attr_llvm_fcmp_predicate(ctx)
            .map(|p| fcmp_predicate(&p))
        else {
            return Err(self.missing(o, "predicate"));
        };
        let [lhs, rhs] = self.operands(o)?;
        let line = format!(
            "fcmp {}{pred} {}, {}",
            self.fmf(ptr),
            self.typed_opd(lhs)?,
            self.opd(rhs)?
        );
        self.assign(o, line)
    }

    /// `alloca` of the op's element type.
    fn alloca_op(&mut self, o: &OpCtx, alloca: &AllocaOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let Some(elem) = alloca
            .get_attr_llvm_alloca_element_type(ctx)
            .map(|t| type_of(&t))
        else {
            return Err(self.missing(o, "element type"));
        };
        self.alloca(o, elem)
    }

    /// `load` (volatile when marked), aligned.
    fn load(&mut self, o: &OpCtx, _: &LoadOp) -> Result<(), ExportError> {
        let ptr = o.ptr;
        let [addr] = self.operands(o)?;
        let volatile = if self.is_volatile(ptr) {
            "volatile "
        } else {
            ""
        };
        let ty = self.ty(self.result_type(o)?)?;
        self.race_access(o, RaceAccess::Load, addr, &ty)?;
        let line = format!(
            "load {volatile}{ty}, {}{}",
            self.typed_opd(addr)?,
            self.align(ptr)
        );
        self.assign(o, line)
    }

    /// `store` (volatile when marked), aligned.
    fn store(&mut self, o: &OpCtx, _: &StoreOp) -> Result<(), ExportError> {
        let ptr = o.ptr;
        let [value, addr] = self.operands(o)?;
        let volatile = if self.is_volatile(ptr) {
            "volatile "
        } else {
            ""
        };
        let ty = self.ty(value.get_type(self.ctx))?;
        self.race_access(o, RaceAccess::Store, addr, &ty)?;
        let line = format!(
            "store {volatile}{}, {}{}",
            self.typed_opd(value)?,
            self.typed_opd(addr)?,
            self.align(ptr)
        );
        self.emit(line)
    }

    /// `insertvalue`.
    fn insert_value(&mut self, o: &OpCtx, insert: &InsertValueOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let Some(indices) = insert
            .get_attr_llvm_insert_value_indices(ctx)
            .map(|i| i.0.clone())
            .filter(|i| !i.is_empty())
        else {
            return Err(self.missing(o, "indices"));
        };
        let [aggr, value] = self.operands(o)?;
        let line = format!(
            "insertvalue {}, {}, {}",
            self.typed_opd(aggr)?,
            self.typed_opd(value)?,
            join_indices(&indices)
        );
        self.assign(o, line)
    }

    /// `extractvalue`.
    fn extract_value(&mut self, o: &OpCtx, extract: &ExtractValueOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let Some(indices) = extract
            .get_attr_llvm_extract_value_indices(ctx)
            .map(|i| i.0.clone())
            .filter(|i| !i.is_empty())
        else {
            return Err(self.missing(o, "indices"));
        };
        let [aggr] = self.operands(o)?;
        let line = format!(
            "extractvalue {}, {}",
            self.typed_opd(aggr)?,
            join_indices(&indices)
        );
        self.assign(o, line)
    }

    /// `insertelement`.
    fn insert_element(&mut self, o: &OpCtx, _: &InsertElementOp) -> Result<(), ExportError> {
        let [vector, elem, index] = self.operands(o)?;
        let line = format!(
            "insertelement {}, {}, {}",
            self.typed_opd(vector)?,
            self.typed_opd(elem)?,
            self.typed_opd(index)?
        );
        self.assign(o, line)
    }

    /// `extractelement`.
    fn extract_element(&mut self, o: &OpCtx, _: &ExtractElementOp) -> Result<(), ExportError> {
        let [vector, index] = self.operands(o)?;
        let line = format!(
            "extractelement {}, {}",
            self.typed_opd(vector)?,
            self.typed_opd(index)?
        );
        self.assign(o, line)
    }

    /// `shufflevector` with its mask.
    fn shuffle_vector(&mut self, o: &OpCtx, shuffle: &ShuffleVectorOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let Some(mask) = shuffle
            .get_attr_llvm_shuffle_vector_mask(ctx)
            .map(|m| m.0.clone())
        else {
            return Err(self.missing(o, "mask"));
        };
        let [a, b] = self.operands(o)?;
        let mask_items: Vec<String> = mask
            .iter()
            .map(|&m| {
                if m < 0 {
                    "i32 poison".to_string()
                } else {
                    format!("i32 {m}")
                }
            })
            .collect();
        let line = format!(
            "shufflevector {}, {}, <{} x i32> <{}>",
            self.typed_opd(a)?,
            self.typed_opd(b)?,
            mask.len(),
            mask_items.join(", ")
        );
        self.assign(o, line)
    }

    /// `select`.
    fn select(&mut self, o: &OpCtx, select: &SelectOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let fmf = select
            .get_attr_llvm_select_fast_math_flags(ctx)
            .map(|f| fmf_text(f.0))
            .unwrap_or_default();
        let [cond, a, b] = self.operands(o)?;
        let line = format!(
            "select {fmf}{}, {}, {}",
            self.typed_opd(cond)?,
            self.typed_opd(a)?,
            self.typed_opd(b)?
        );
        self.assign(o, line)
    }

    /// `freeze`.
    fn freeze(&mut self, o: &OpCtx, _: &FreezeOp) -> Result<(), ExportError> {
        let [arg] = self.operands(o)?;
        let line = format!("freeze {}", self.typed_opd(arg)?);
        self.assign(o, line)
    }

    /// `atomicrmw`.
    fn atomic_rmw(&mut self, o: &OpCtx, rmw: &AtomicRmwOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let ptr = o.ptr;
        let (Some(kind), Some(ord)) = (
            rmw.get_attr_llvm_rmw_kind(ctx).map(|k| rmw_kind(&k)),
            rmw.get_attr_llvm_rmw_ordering(ctx).map(|o| ordering(&o)),
        ) else {
            return Err(self.missing(o, "kind or ordering"));
        };
        let [addr, val] = self.operands(o)?;
        let ty = self.ty(val.get_type(ctx))?;
        self.race_access(o, RaceAccess::Atomic, addr, &ty)?;
        let line = format!(
            "atomicrmw {kind} {}, {}{} {ord}",
            self.typed_opd(addr)?,
            self.typed_opd(val)?,
            self.syncscope(ptr)
        );
        self.assign(o, line)
    }

    /// `cmpxchg`.
    fn atomic_cmpxchg(&mut self, o: &OpCtx, cas: &AtomicCmpxchgOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let ptr = o.ptr;
        let (Some(success), Some(failure)) = (
            cas.get_attr_llvm_cas_success_ordering(ctx)
                .map(|o| ordering(&o)),
            cas.get_attr_llvm_cas_failure_ordering(ctx)
                .map(|o| ordering(&o)),
        ) else {
            return Err(self.missing(o, "orderings"));
        };
        let [addr, cmp, new] = self.operands(o)?;
        let ty = self.ty(cmp.get_type(ctx))?;
        self.race_access(o, RaceAccess::Atomic, addr, &ty)?;
        let line = format!(
            "cmpxchg {}, {}, {}{} {success} {failure}",
            self.typed_opd(addr)?,
            self.typed_opd(cmp)?,
            self.typed_opd(new)?,
            self.syncscope(ptr)
        );
        self.assign(o, line)
    }

    /// `fence`.
    fn fence(&mut self, o: &OpCtx, fence: &FenceOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let ptr = o.ptr;
        let Some(ord) = fence
            .get_attr_llvm_fence_ordering(ctx)
            .map(|o| ordering(&o))
        else {
            return Err(self.missing(o, "ordering"));
        };
        let [] = self.operands(o)?;
        self.emit(format!("fence{} {ord}", self.syncscope(ptr)))
    }

    /// `load atomic`.
    fn atomic_load(&mut self, o: &OpCtx, load: &AtomicLoadOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let ptr = o.ptr;
        let Some(ord) = load.get_attr_llvm_ld_ordering(ctx).map(|o| ordering(&o)) else {
            return Err(self.missing(o, "ordering"));
        };
        let [addr] = self.operands(o)?;
        let res_ty = self.result_type(o)?;
        let align = self.atomic_align(o, res_ty)?;
        let ty = self.ty(res_ty)?;
        self.race_access(o, RaceAccess::Atomic, addr, &ty)?;
        let line = format!(
            "load atomic {}, {}{} {ord}, align {align}",
            self.ty(res_ty)?,
            self.typed_opd(addr)?,
            self.syncscope(ptr)
        );
        self.assign(o, line)
    }

    /// `store atomic`.
    fn atomic_store(&mut self, o: &OpCtx, store: &AtomicStoreOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let ptr = o.ptr;
        let Some(ord) = store.get_attr_llvm_st_ordering(ctx).map(|o| ordering(&o)) else {
            return Err(self.missing(o, "ordering"));
        };
        let [value, addr] = self.operands(o)?;
        let align = self.atomic_align(o, value.get_type(ctx))?;
        let ty = self.ty(value.get_type(ctx))?;
        self.race_access(o, RaceAccess::Atomic, addr, &ty)?;
        let line = format!(
            "store atomic {}, {}{} {ord}, align {align}",
            self.typed_opd(value)?,
            self.typed_opd(addr)?,
            self.syncscope(ptr)
        );
        self.emit(line)
    }

    /// `ret`.
    fn ret(&mut self, o: &OpCtx, _: &ReturnOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let ptr = o.ptr;
        let opid = o.opid;
        let values: Vec<Value> = ptr.deref(ctx).operands().collect();
        match values.as_slice() {
            [] => self.emit("ret void".into()),
            [v] => {
                let line = format!("ret {}", self.typed_opd(*v)?);
                self.emit(line)
            }
            _ => Err(ExportError::malformed(opid, "more than one returned value")),
        }
    }

    /// `unreachable`.
    fn unreachable(&mut self, _: &OpCtx, _: &UnreachableOp) -> Result<(), ExportError> {
        self.emit("unreachable".into())
    }

    /// `br label`.
    fn br(&mut self, o: &OpCtx, _: &BrOp) -> Result<(), ExportError> {
        let ptr = o.ptr;
        let opid = o.opid;
        let labels = self.successor_labels(ptr);
        let [dest] = labels.as_slice() else {
            return Err(ExportError::malformed(opid, "expected one successor"));
        };
        self.emit(format!("br label %{dest}"))
    }

    /// `br` on a condition.
    fn cond_br(&mut self, o: &OpCtx, cond_br: &CondBrOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let ptr = o.ptr;
        let opid = o.opid;
        let labels = self.successor_labels(ptr);
        let [if_true, if_false] = labels.as_slice() else {
            return Err(ExportError::malformed(opid, "expected two successors"));
        };
        let cond = cond_br.get_operand_condition(ctx);
        let line = format!(
            "br {}, label %{if_true}, label %{if_false}",
            self.typed_opd(cond)?
        );
        self.emit(line)
    }

    /// `alloca`, followed by an `addrspacecast` when the result is not a generic pointer.
    fn alloca(&mut self, o: &OpCtx, elem: TypeHandle) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let [size] = self.operands(o)?;
        let count = if self.opd(size)? == "1" {
            String::new()
        } else {
            format!(", {}", self.typed_opd(size)?)
        };
        let line = format!("alloca {}{count}{}", self.ty(elem)?, self.align(o.ptr));
        let res_ty = self.result_type(o)?;
        let addrspace = res_ty
            .deref(ctx)
            .downcast_ref::<PointerType>()
            .map_or(0, PointerType::address_space);
        if addrspace == 0 {
            self.assign(o, line)?;
            let result = self.result(o)?;
            return self.declare_variable(o, &result);
        }
        let result = self.result(o)?;
        let generic = format!(
            "%{}",
            self.names
                .fresh(&format!("{}.generic", result.trim_start_matches('%')))
        );
        self.emit(format!("{generic} = {line}"))?;
        self.declare_variable(o, &generic)?;
        let line = format!("addrspacecast ptr {generic} to {}", self.ty(res_ty)?);
        self.assign(o, line)
    }

    /// With full debug information, a `#dbg_declare` record after the alloca `o` (at
    /// `slot`) that holds a named Rust variable ([nvptx_attrs::ATTR_KEY_DEBUG_VARIABLE]).
    fn declare_variable(&mut self, o: &OpCtx, slot: &str) -> Result<(), ExportError> {
        let (Some(debug), Some(scope)) = (&mut self.state.debug, self.scope) else {
            return Ok(());
        };
        if !debug.describes_variables() {
            return Ok(());
        }
        let key = Identifier::try_from(nvptx_attrs::ATTR_KEY_DEBUG_VARIABLE)
            .expect("a valid attribute key");
        let Some(text) = o
            .ptr
            .deref(self.ctx)
            .attributes
            .get::<StringAttr>(&key)
            .cloned()
        else {
            return Ok(());
        };
        let Some(var) = crate::debug_info::DebugVariable::decode(&String::from(text)) else {
            return Err(self.missing(o, "debug variable"));
        };
        let pos = crate::debug_info::source_pos(self.ctx, o.ptr.deref(self.ctx).loc());
        let (node, loc) = debug.local_variable(&var, pos.as_ref(), scope);
        self.out.push_str(&format!(
            "    #dbg_declare(ptr {slot}, !{node}, !DIExpression(), !{loc})\n"
        ));
        Ok(())
    }

    fn gep(&mut self, o: &OpCtx, gep: &GetElementPtrOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let (Some(indices), Some(elem)) = (
            gep.get_attr_llvm_gep_indices(ctx).map(|i| i.0.clone()),
            gep.get_attr_llvm_gep_src_elem_type(ctx)
                .map(|t| type_of(&t)),
        ) else {
            return Err(self.missing(o, "indices or source element type"));
        };
        let flags = gep
            .get_attr_llvm_gep_no_wrap_flags(ctx)
            .map_or(GepNoWrapFlags::empty(), |f| f.0.normalized());
        let mut flag_text = String::new();
        if flags.contains(GepNoWrapFlags::INBOUNDS) {
            flag_text.push_str("inbounds ");
        } else if flags.contains(GepNoWrapFlags::NUSW) {
            flag_text.push_str("nusw ");
        }
        if flags.contains(GepNoWrapFlags::NUW) {
            flag_text.push_str("nuw ");
        }
        let operands: Vec<Value> = o.ptr.deref(ctx).operands().collect();
        let Some(&base) = operands.first() else {
            return Err(ExportError::malformed(o.opid, "no base pointer"));
        };
        let mut parts = vec![self.ty(elem)?, self.typed_opd(base)?];
        for index in indices {
            parts.push(match index {
                GepIndexAttr::Constant(c) => format!("i32 {c}"),
                GepIndexAttr::OperandIdx(i) => match operands.get(i) {
                    Some(&v) if i > 0 => self.typed_opd(v)?,
                    _ => {
                        return Err(ExportError::malformed(
                            o.opid,
                            format!("bad index operand {i}"),
                        ));
                    }
                },
            });
        }
        let line = format!("getelementptr {flag_text}{}", parts.join(", "));
        self.assign(o, line)
    }

    fn call(&mut self, o: &OpCtx, call: &CallOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let callee_ty = self
            .attr::<TypeAttr>(o.ptr, &ATTR_KEY_CALLEE_TYPE)
            .map(|t| type_of(&t))
            .ok_or_else(|| self.missing(o, "callee type"))?;
        let (res, _, var_arg) = func_signature(ctx, callee_ty, o.opid)?;
        let operands: Vec<Value> = o.ptr.deref(ctx).operands().collect();
        let (callee, args) = match call.get_attr_llvm_call_callee(ctx) {
            Some(sym) => {
                let symbol = Identifier::from(sym.clone()).to_string();
                let (llvm_name, declared) =
                    callee_function(self.state, &symbol).ok_or_else(|| {
                        ExportError::UnknownSymbol {
                            op: o.opid.to_string(),
                            symbol: symbol.clone(),
                        }
                    })?;
                if declared != callee_ty {
                    return Err(ExportError::malformed(
                        o.opid,
                        format!("call type differs from the type of `@{symbol}`"),
                    ));
                }
                if let Some(cpu) = &mut self.state.cpu {
                    cpu.calls(&self.name, Some(&llvm_name));
                }
                (global_ref(&llvm_name), &operands[..])
            }
            None => match operands.split_first() {
                Some((callee, args)) => {
                    if let Some(cpu) = &mut self.state.cpu {
                        cpu.calls(&self.name, None);
                    }
                    (self.opd(*callee)?, args)
                }
                None => return Err(ExportError::malformed(o.opid, "no callee")),
            },
        };
        let fmf = call
            .get_attr_llvm_call_fastmath_flags(ctx)
            .map(|f| fmf_text(f.0))
            .unwrap_or_default();
        let attrs = self.call_attrs(call.get_attr_llvm_call_attrs(ctx).as_deref())?;
        let fn_ty = if var_arg {
            self.ty(callee_ty)?
        } else {
            self.ty(res)?
        };
        let args = args
            .iter()
            .map(|a| self.typed_opd(*a))
            .collect::<Result<Vec<_>, _>>()?;
        let line = format!("call {fmf}{fn_ty} {callee}({}){attrs}", args.join(", "));
        self.assign_unless_void(o, res, line)
    }

    fn call_intrinsic(&mut self, o: &OpCtx, call: &CallIntrinsicOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let (Some(name), Some(ty)) = (
            call.get_attr_llvm_intrinsic_name(ctx)
                .map(|n| string_of(&n)),
            call.get_attr_llvm_intrinsic_type(ctx).map(|t| type_of(&t)),
        ) else {
            return Err(self.missing(o, "intrinsic name or type"));
        };
        let runtime = self.state.cpu.is_some() && name.starts_with(nvptx_attrs::CPU_RUNTIME_PREFIX);
        if !name.starts_with("llvm.") && !runtime {
            return Err(ExportError::malformed(
                o.opid,
                format!("`{name}` is not an LLVM intrinsic name"),
            ));
        }
        let (res, _, var_arg) = func_signature(ctx, ty, o.opid)?;
        self.state.use_intrinsic(&name, ty)?;
        if runtime && let Some(cpu) = &mut self.state.cpu {
            cpu.calls(&self.name, Some(&name));
        }
        if runtime {
            self.race_at(o)?;
        }
        if name.starts_with("llvm.mem") {
            self.race_mem_intrinsic(o, &name)?;
        }
        let fmf = call
            .get_attr_llvm_intrinsic_fastmath_flags(ctx)
            .map(|f| fmf_text(f.0))
            .unwrap_or_default();
        let attrs = self.call_attrs(call.get_attr_llvm_intrinsic_attrs(ctx).as_deref())?;
        let fn_ty = if var_arg { self.ty(ty)? } else { self.ty(res)? };
        let args = o
            .ptr
            .deref(ctx)
            .operands()
            .collect::<Vec<_>>()
            .into_iter()
            .map(|a| self.typed_opd(a))
            .collect::<Result<Vec<_>, _>>()?;
        let line = format!(
            "call {fmf}{fn_ty} {}({}){attrs}",
            global_ref(&name),
            args.join(", ")
        );
        self.assign_unless_void(o, res, line)
    }

    fn inline_asm(&mut self, o: &OpCtx, asm: &InlineAsmOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let (Some(template), Some(constraints), Some(side_effects)) = (
            asm.get_attr_llvm_inline_asm_template(ctx)
                .map(|s| string_of(&s)),
            asm.get_attr_llvm_inline_asm_constraints(ctx)
                .map(|s| string_of(&s)),
            asm.get_attr_llvm_inline_asm_side_effects(ctx)
                .map(|b| bool::from(b.clone())),
        ) else {
            return Err(self.missing(o, "template, constraints or side-effects flag"));
        };
        let attrs = self.call_attrs(asm.get_attr_llvm_inline_asm_attrs(ctx).as_deref())?;
        let res = self.result_type(o)?;
        let args = o
            .ptr
            .deref(ctx)
            .operands()
            .collect::<Vec<_>>()
            .into_iter()
            .map(|a| self.typed_opd(a))
            .collect::<Result<Vec<_>, _>>()?;
        let line = format!(
            "call {} asm {}\"{}\", \"{}\"({}){attrs}",
            self.ty(res)?,
            if side_effects { "sideeffect " } else { "" },
            escape(&template),
            escape(&constraints),
            args.join(", ")
        );
        self.assign_unless_void(o, res, line)
    }

    fn switch(&mut self, o: &OpCtx, switch: &SwitchOp) -> Result<(), ExportError> {
        let ctx = self.ctx;
        let Some(cases) = switch
            .get_attr_llvm_switch_case_values(ctx)
            .map(|c| c.0.clone())
        else {
            return Err(self.missing(o, "case values"));
        };
        let labels = self.successor_labels(o.ptr);
        let Some((default, case_labels)) = labels.split_first() else {
            return Err(ExportError::malformed(o.opid, "no default destination"));
        };
        if case_labels.len() != cases.len() {
            return Err(ExportError::malformed(
                o.opid,
                format!(
                    "{} case values for {} case destinations",
                    cases.len(),
                    case_labels.len()
                ),
            ));
        }
        let Some(cond) = o.ptr.deref(ctx).operands().next() else {
            return Err(ExportError::malformed(o.opid, "no condition"));
        };
        let mut seen = HashSet::new();
        let mut text = format!("switch {}, label %{default} [\n", self.typed_opd(cond)?);
        for (value, label) in cases.iter().zip(case_labels) {
            let value_text = int_text(value);
            if !seen.insert(value_text.clone()) {
                return Err(ExportError::malformed(
                    o.opid,
                    format!("duplicate case value {value_text}"),
                ));
            }
            text.push_str(&format!(
                "    {} {value_text}, label %{label}\n",
                self.int_ty(value)?
            ));
        }
        text.push_str("  ]");
        self.emit(text)
    }

    fn int_ty(&mut self, value: &IntegerAttr) -> Result<String, ExportError> {
        self.ty(value.get_type().into())
    }

    /// Branch labels of each successor slot of `ptr`, trampolines included.
    fn successor_labels(&self, ptr: Ptr<Operation>) -> Vec<String> {
        let block = ptr.deref(self.ctx).get_parent_block();
        block
            .map(|b| {
                self.cfg
                    .outgoing(b)
                    .map(|e| e.branch_label(&self.names).to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn call_attrs(&mut self, attrs: Option<&LlvmAttributesAttr>) -> Result<String, ExportError> {
        match attrs {
            Some(attrs) => attrs_text(self.ctx, &mut self.state.types, attrs),
            None => Ok(String::new()),
        }
    }

    fn atomic_align(&self, o: &OpCtx, ty: TypeHandle) -> Result<u32, ExportError> {
        self.attr::<AlignmentAttr>(o.ptr, &ATTR_KEY_LLVM_ALIGNMENT)
            .map(|a| a.0)
            .or_else(|| scalar_align(self.ctx, ty))
            .ok_or_else(|| self.missing(o, "alignment"))
    }

    /// A copy of the attribute `key` of `ptr`, if it is present and of type `A`.
    fn attr<A: pliron::attribute::Attribute + Clone>(
        &self,
        ptr: Ptr<Operation>,
        key: &Identifier,
    ) -> Option<A> {
        ptr.deref(self.ctx).attributes.get::<A>(key).cloned()
    }

    fn fmf(&self, ptr: Ptr<Operation>) -> String {
        self.attr::<FastmathFlagsAttr>(ptr, &ATTR_KEY_FAST_MATH_FLAGS)
            .map(|f| fmf_text(f.0))
            .unwrap_or_default()
    }

    fn is_volatile(&self, ptr: Ptr<Operation>) -> bool {
        self.attr::<BoolAttr>(ptr, &ATTR_KEY_LLVM_VOLATILE)
            .is_some_and(bool::from)
    }

    fn align(&self, ptr: Ptr<Operation>) -> String {
        self.attr::<AlignmentAttr>(ptr, &ATTR_KEY_LLVM_ALIGNMENT)
            .map(|a| format!(", align {}", a.0))
            .unwrap_or_default()
    }

    fn syncscope(&self, ptr: Ptr<Operation>) -> String {
        self.attr::<SyncScopeAttr>(ptr, &ATTR_KEY_SYNC_SCOPE)
            .map(|s| syncscope_text(&s))
            .unwrap_or_default()
    }

    /// Exactly `N` operands of the op.
    fn operands<const N: usize>(&self, o: &OpCtx) -> Result<[Value; N], ExportError> {
        let operands: Vec<Value> = o.ptr.deref(self.ctx).operands().collect();
        let found = operands.len();
        operands.try_into().map_err(|_| {
            ExportError::malformed(o.opid, format!("expected {N} operands, found {found}"))
        })
    }

    fn result_type(&self, o: &OpCtx) -> Result<TypeHandle, ExportError> {
        let op = o.ptr.deref(self.ctx);
        if op.get_num_results() != 1 {
            return Err(ExportError::malformed(o.opid, "expected one result"));
        }
        Ok(op.get_type(0))
    }

    fn result(&self, o: &OpCtx) -> Result<String, ExportError> {
        let op = o.ptr.deref(self.ctx);
        if op.get_num_results() != 1 {
            return Err(ExportError::malformed(o.opid, "expected one result"));
        }
        self.opd(op.get_result(0))
    }

    /// The race detector's source text of op `o`: `file:line:column`, or `?`.
    /// `None` unless the module is instrumented: every load and store asks.
    fn race_site(&mut self, o: &OpCtx) -> Option<String> {
        let cpu = self.state.cpu.as_mut().filter(|cpu| cpu.race)?;
        let pos = crate::debug_info::source_pos(self.ctx, o.ptr.deref(self.ctx).loc());
        let text = pos.map_or_else(
            || "?".to_owned(),
            |p| format!("{}:{}:{}", p.file.display(), p.line, p.column),
        );
        Some(cpu.site(&text))
    }

    /// For the race detector (`CpuImage::race`): before an access of a `ty` at `addr`, a call
    /// telling the runtime of it. Stack slots of the thread (an `alloca` itself) are left out.
    fn race_access(
        &mut self,
        o: &OpCtx,
        kind: RaceAccess,
        addr: Value,
        ty: &str,
    ) -> Result<(), ExportError> {
        let Some(site) = self.race_site(o) else {
            return Ok(());
        };
        let ctx = self.ctx;
        if addr
            .defining_op()
            .is_some_and(|def| Operation::get_op::<AllocaOp>(def, ctx).is_some())
        {
            return Ok(());
        }
        let generic = self.race_generic(addr)?;
        let size = format!("i64 ptrtoint (ptr getelementptr ({ty}, ptr null, i32 1) to i64)");
        let prefix = nvptx_attrs::CPU_RUNTIME_PREFIX;
        let line = match kind {
            RaceAccess::Load => {
                format!("call void @{prefix}race_load(ptr {generic}, {size}, ptr {site})")
            }
            RaceAccess::Store => {
                format!("call void @{prefix}race_store(ptr {generic}, {size}, ptr {site})")
            }
            RaceAccess::Atomic => format!("call void @{prefix}race_atomic(ptr {generic}, {size})"),
        };
        self.emit(line)
    }

    /// For the race detector: the ranges `llvm.memcpy`/`memmove` read and write and
    /// `llvm.memset` writes, before it.
    fn race_mem_intrinsic(&mut self, o: &OpCtx, name: &str) -> Result<(), ExportError> {
        let Some(site) = self.race_site(o) else {
            return Ok(());
        };
        let operands: Vec<Value> = o.ptr.deref(self.ctx).operands().collect();
        let (dst, src, len) = match (name, operands.as_slice()) {
            (n, [dst, src, len, ..])
                if n.starts_with("llvm.memcpy") || n.starts_with("llvm.memmove") =>
            {
                (*dst, Some(*src), *len)
            }
            (n, [dst, _, len, ..]) if n.starts_with("llvm.memset") => (*dst, None, *len),
            _ => return Ok(()),
        };
        let len_typed = self.typed_opd(len)?;
        let len = if len_typed.starts_with("i64 ") {
            self.opd(len)?
        } else {
            let Some(cpu) = &mut self.state.cpu else {
                return Ok(());
            };
            let name = cpu.race_value();
            self.emit(format!("{name} = zext {len_typed} to i64"))?;
            name
        };
        let prefix = nvptx_attrs::CPU_RUNTIME_PREFIX;
        for (addr, function) in src
            .map(|src| (src, "race_load"))
            .into_iter()
            .chain([(dst, "race_store")])
        {
            let generic = self.race_generic(addr)?;
            self.emit(format!(
                "call void @{prefix}{function}(ptr {generic}, i64 {len}, ptr {site})"
            ))?;
        }
        Ok(())
    }

    /// `addr` as a generic pointer operand (cast first when it has an address space).
    fn race_generic(&mut self, addr: Value) -> Result<String, ExportError> {
        let typed = self.typed_opd(addr)?;
        if !typed.starts_with("ptr addrspace(") {
            return self.opd(addr);
        }
        let Some(cpu) = &mut self.state.cpu else {
            return self.opd(addr);
        };
        let name = cpu.race_value();
        self.emit(format!("{name} = addrspacecast {typed} to ptr"))?;
        Ok(name)
    }

    /// For the race detector: before a call of a runtime function (a barrier, a warp
    /// operation), a call telling the runtime where it is.
    fn race_at(&mut self, o: &OpCtx) -> Result<(), ExportError> {
        let Some(site) = self.race_site(o) else {
            return Ok(());
        };
        let prefix = nvptx_attrs::CPU_RUNTIME_PREFIX;
        self.emit(format!("call void @{prefix}race_at(ptr {site})"))
    }

    fn missing(&self, o: &OpCtx, what: &str) -> ExportError {
        ExportError::malformed(o.opid, format!("missing or ill-typed {what} attribute"))
    }

    /// `  %result = line`.
    fn assign(&mut self, o: &OpCtx, line: String) -> Result<(), ExportError> {
        let result = self.result(o)?;
        self.emit(format!("{result} = {line}"))
    }

    /// `  %result = line`, or just `  line` for a `void` result.
    fn assign_unless_void(
        &mut self,
        o: &OpCtx,
        res: TypeHandle,
        line: String,
    ) -> Result<(), ExportError> {
        if is_void(self.ctx, res) {
            self.emit(line)
        } else {
            self.assign(o, line)
        }
    }

    /// The ` !dbg !N` suffix for the instructions of op `ptr`: its source position in the
    /// function's `DISubprogram`, or line 0 for a call without one (LLVM requires a location on
    /// calls between functions that both have debug information); empty without debug
    /// metadata.
    fn debug_location(&mut self, ptr: Ptr<Operation>, is_call: bool) -> String {
        let (Some(debug), Some(scope)) = (&mut self.state.debug, self.scope) else {
            return String::new();
        };
        let pos = crate::debug_info::source_pos(self.ctx, ptr.deref(self.ctx).loc());
        if pos.is_none() && !is_call {
            return String::new();
        }
        let id = debug.location(pos.as_ref(), scope);
        format!(", !dbg !{id}")
    }

    fn emit(&mut self, line: String) -> Result<(), ExportError> {
        self.out.push_str("  ");
        self.out.push_str(&line);
        self.out.push_str(&self.dbg);
        self.out.push('\n');
        Ok(())
    }
}

/// What a memory access the race detector is told of does.
#[derive(Clone, Copy)]
enum RaceAccess {
    Load,
    Store,
    /// Any atomic access: it races with nothing, but initialises shared memory.
    Atomic,
}

/// The op being written and its name, for error messages.
struct OpCtx<'a> {
    ptr: Ptr<Operation>,
    opid: &'a str,
}

/// `a, b, c` for insertvalue/extractvalue.
fn join_indices(indices: &[u32]) -> String {
    indices
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
