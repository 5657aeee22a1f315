//! `mir.atomic_*` and `mir.fence` to PTX memory-model instructions.
//!
//! Loads, stores, fences and compare-exchanges become LLVM's `load atomic`, `store atomic`,
//! `fence` and `cmpxchg` with the ordering and a `syncscope` ("block" `.cta`, "device" `.gpu`,
//! none for `.sys`), which LLVM's NVPTX backend turns into `ld.acquire.gpu`, `st.release.cta`,
//! `fence.sc.sys`, `atom.acq_rel.gpu.cas`, ... (SeqCst as `fence.sc` then the acquire form).
//!
//! Read-modify-writes mostly cannot go through LLVM's `atomicrmw`: LLVM 22 emits a plain
//! `atom.<op>` (relaxed, `.gpu`) for it, whatever its ordering and scope. That plain `atom` is
//! exactly a relaxed one at device scope, and at least what a relaxed one at block scope asks
//! (`.gpu` includes `.cta`); and LLVM infers its state space, which inline PTX hides: a shared
//! histogram bin reached through a reference becomes `atom.shared.add` (ptxas's shared-memory
//! atomic, `ATOMS`) instead of a generic `atom` (`ATOM.E`), and ptxas turns an unused result
//! into a reduction (`RED`). So the relaxed ones at block and device scope that PTX has as one
//! instruction (32 and 64 bits: exchange, add, sub, and, or, xor, min, max; float add, and sub
//! as an add of the negation) are `atomicrmw`s. The other orderings and the system scope of
//! those are inline PTX `atom.<sem>.<scope>[.global|.shared].<op>.<type>`, with SeqCst as
//! `fence.sc.<scope>` followed by the `.acquire` form; 8- and 16-bit and, or, xor are that
//! instruction on the aligned 32-bit word that holds the value; the rest (`nand`, and 8- and
//! 16-bit exchange, add, sub, min, max) are LLVM `atomicrmw`s, which LLVM expands into a loop
//! of `cmpxchg`, whose ordering and scope it does keep.
//!
//! A `thread`-scope fence (`compiler_fence`) emits no instruction: it is an empty inline asm
//! with a memory clobber, which no compiler pass moves memory accesses across.

use dialect_mir::ops::{
    AtomicCmpxchgOp, AtomicLoadOp, AtomicOrdering, AtomicRmwOp, AtomicStoreOp, FenceOp, RmwKind,
    SyncScope,
};
use dialect_nvvm::Memory;
use pliron::{
    context::Context,
    r#type::{TypeHandle, Typed},
    value::Value,
};
use pliron_llvm::{
    attributes::{AtomicOrderingAttr, AtomicRmwKindAttr, SyncScopeAttr},
    op_interfaces::{BinArithOp, CastOpInterface, CastOpWithNNegInterface},
    ops::{
        AndOp, AtomicCmpxchgOp as LlvmCmpxchgOp, AtomicLoadOp as LlvmAtomicLoadOp,
        AtomicRmwOp as LlvmAtomicRmwOp, AtomicStoreOp as LlvmAtomicStoreOp, ExtractValueOp, FNegOp,
        FenceOp as LlvmFenceOp, IntToPtrOp, LShrOp, OrOp, PtrToIntOp, ShlOp, SubOp, TruncOp, XorOp,
        ZExtOp,
    },
    types::VoidType,
};

use super::{
    Rewrite,
    intrinsics::{inline_ptx, named_scope},
    set_align,
};
use crate::{
    error::OpError,
    types::{float_bits, int_type, int_width, is_signed, layout},
};

/// The LLVM ordering of `ordering` (`Relaxed` is LLVM's `monotonic`).
fn llvm_ordering(ordering: AtomicOrdering) -> AtomicOrderingAttr {
    match ordering {
        AtomicOrdering::Relaxed => AtomicOrderingAttr::Monotonic,
        AtomicOrdering::Acquire => AtomicOrderingAttr::Acquire,
        AtomicOrdering::Release => AtomicOrderingAttr::Release,
        AtomicOrdering::AcqRel => AtomicOrderingAttr::AcqRel,
        AtomicOrdering::SeqCst => AtomicOrderingAttr::SeqCst,
    }
}

/// The LLVM sync scope of `scope` (on the CPU every scope is the system's).
fn llvm_scope(rw: &Rewrite, scope: SyncScope) -> Result<SyncScopeAttr, OpError> {
    match scope {
        SyncScope::Block | SyncScope::Device if rw.for_cpu() => Ok(SyncScopeAttr::System),
        SyncScope::Block => Ok(named_scope("block")),
        SyncScope::Device => Ok(named_scope("device")),
        SyncScope::System => Ok(SyncScopeAttr::System),
        SyncScope::Thread => Err(OpError::Malformed(
            "the thread scope on a memory access".into(),
        )),
    }
}

/// The PTX scope qualifier of `scope`.
fn ptx_scope(scope: SyncScope) -> &'static str {
    match scope {
        SyncScope::Thread | SyncScope::Block => "cta",
        SyncScope::Device => "gpu",
        SyncScope::System => "sys",
    }
}

/// The PTX state space qualifier of a pointer in LLVM address space `address_space`.
fn ptx_space(address_space: u32) -> &'static str {
    match address_space {
        1 => ".global",
        3 => ".shared",
        _ => "",
    }
}

/// `mir.atomic_load` -> `load atomic`.
pub fn load(op: &AtomicLoadOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let ty = rw.result_mir_type(ctx, 0);
    let llvm_ty = rw.llvm_type(ctx, ty)?;
    let load = LlvmAtomicLoadOp::new(
        ctx,
        op.ptr(ctx),
        llvm_ty,
        llvm_ordering(op.ordering(ctx)),
        llvm_scope(rw, op.scope(ctx))?,
    );
    set_align(ctx, &load, layout(ctx, ty)?.size);
    let value = rw.value(ctx, load);
    rw.replace(ctx, vec![value]);
    Ok(())
}

/// `mir.atomic_store` -> `store atomic`.
pub fn store(op: &AtomicStoreOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let ty = rw.mir_type(ctx, op.value(ctx));
    let store = LlvmAtomicStoreOp::new(
        ctx,
        op.value(ctx),
        op.ptr(ctx),
        llvm_ordering(op.ordering(ctx)),
        llvm_scope(rw, op.scope(ctx))?,
    );
    set_align(ctx, &store, layout(ctx, ty)?.size);
    rw.insert(ctx, store);
    rw.erase(ctx);
    Ok(())
}

/// `mir.fence` -> `fence`, or a compiler barrier for the thread scope.
pub fn fence(op: &FenceOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    if op.scope(ctx) == SyncScope::Thread {
        let void = VoidType::get(ctx).into();
        inline_ptx(ctx, rw, void, vec![], "", "", Memory::ReadWrite, false);
    } else {
        let fence = LlvmFenceOp::new(
            ctx,
            llvm_ordering(op.ordering(ctx)),
            llvm_scope(rw, op.scope(ctx))?,
        );
        rw.insert(ctx, fence);
    }
    rw.erase(ctx);
    Ok(())
}

/// `mir.atomic_cmpxchg` -> `cmpxchg`, then its two fields.
pub fn cmpxchg(op: &AtomicCmpxchgOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let (success, failure) = op.orderings(ctx);
    let cas = LlvmCmpxchgOp::new(
        ctx,
        op.ptr(ctx),
        op.expected(ctx),
        op.new_value(ctx),
        llvm_ordering(success),
        llvm_ordering(failure),
        llvm_scope(rw, op.scope(ctx))?,
    );
    let both = rw.value(ctx, cas);
    let mut fields = vec![];
    for idx in 0..2 {
        let extract = ExtractValueOp::new(ctx, both, vec![idx])
            .map_err(|err| OpError::Malformed(err.to_string()))?;
        fields.push(rw.value(ctx, extract));
    }
    rw.replace(ctx, fields);
    Ok(())
}

/// `mir.atomic_rmw` -> inline PTX `atom`, `atom` on the enclosing word, or `atomicrmw` (see
/// the module documentation).
pub fn rmw(op: &AtomicRmwOp, ctx: &mut Context, rw: &mut Rewrite) -> Result<(), OpError> {
    let ty = rw.result_mir_type(ctx, 0);
    let (kind, ordering, scope) = (op.kind(ctx), op.ordering(ctx), op.scope(ctx));
    let (ptr, value) = (op.ptr(ctx), op.value(ctx));
    let address_space = rw
        .mir_type(ctx, ptr)
        .deref(ctx)
        .downcast_ref::<dialect_mir::types::PtrType>()
        .map_or(0, |p| p.address_space());
    let atom = Atom {
        ordering,
        scope,
        space: ptx_space(address_space),
    };
    // On the CPU every ordering and scope is an LLVM `atomicrmw`.
    let relaxed_native = rw.for_cpu()
        || ordering == AtomicOrdering::Relaxed
            && matches!(scope, SyncScope::Block | SyncScope::Device);
    let result = match (float_bits(ctx, ty), int_width(ctx, ty)) {
        (Some(bits), _)
            if (rw.for_cpu() || relaxed_native && matches!(bits, 32 | 64))
                && matches!(kind, RmwKind::Add | RmwKind::Sub) =>
        {
            let value = if kind == RmwKind::Sub {
                let op = FNegOp::new_with_fast_math_flags(ctx, value, Default::default());
                rw.value(ctx, op)
            } else {
                value
            };
            let op = LlvmAtomicRmwOp::new(
                ctx,
                ptr,
                value,
                AtomicRmwKindAttr::FAdd,
                llvm_ordering(ordering),
                llvm_scope(rw, scope)?,
            );
            rw.value(ctx, op)
        }
        (None, Some(32 | 64)) if relaxed_native && (kind != RmwKind::Nand || rw.for_cpu()) => {
            let op = LlvmAtomicRmwOp::new(
                ctx,
                ptr,
                value,
                llvm_rmw_kind(kind, is_signed(ctx, ty)),
                llvm_ordering(ordering),
                llvm_scope(rw, scope)?,
            );
            rw.value(ctx, op)
        }
        (Some(bits), _) if kind == RmwKind::Add => atom.emit(ctx, rw, "add", 'f', bits, ptr, value),
        (Some(bits), _) if kind == RmwKind::Sub => {
            let op = FNegOp::new_with_fast_math_flags(ctx, value, Default::default());
            let negated = rw.value(ctx, op);
            atom.emit(ctx, rw, "add", 'f', bits, ptr, negated)
        }
        (None, Some(width @ (32 | 64))) if kind != RmwKind::Nand => {
            let signed = is_signed(ctx, ty);
            let (name, class, value) = match kind {
                RmwKind::Xchg => ("exch", 'b', value),
                RmwKind::Add => ("add", 'u', value),
                RmwKind::Sub => {
                    let zero = rw.const_int(ctx, width, 0);
                    ("add", 'u', rw.int_binary::<SubOp>(ctx, zero, value))
                }
                RmwKind::And => ("and", 'b', value),
                RmwKind::Or => ("or", 'b', value),
                RmwKind::Xor => ("xor", 'b', value),
                RmwKind::Max => ("max", if signed { 's' } else { 'u' }, value),
                RmwKind::Min => ("min", if signed { 's' } else { 'u' }, value),
                RmwKind::Nand => unreachable!("excluded above"),
            };
            atom.emit(ctx, rw, name, class, width, ptr, value)
        }
        (None, Some(width @ (8 | 16)))
            if !rw.for_cpu() && matches!(kind, RmwKind::And | RmwKind::Or | RmwKind::Xor) =>
        {
            atom.on_word(ctx, rw, kind, width, ptr, value)
        }
        (None, Some(_)) => {
            let op = LlvmAtomicRmwOp::new(
                ctx,
                ptr,
                value,
                llvm_rmw_kind(kind, is_signed(ctx, ty)),
                llvm_ordering(ordering),
                llvm_scope(rw, scope)?,
            );
            rw.value(ctx, op)
        }
        _ => {
            return Err(OpError::Malformed(format!(
                "mir.atomic_rmw {kind} on this type"
            )));
        }
    };
    rw.replace(ctx, vec![result]);
    Ok(())
}

/// The `atomicrmw` operation of the integer read-modify-write `kind`.
fn llvm_rmw_kind(kind: RmwKind, signed: bool) -> AtomicRmwKindAttr {
    match (kind, signed) {
        (RmwKind::Xchg, _) => AtomicRmwKindAttr::Xchg,
        (RmwKind::Add, _) => AtomicRmwKindAttr::Add,
        (RmwKind::Sub, _) => AtomicRmwKindAttr::Sub,
        (RmwKind::And, _) => AtomicRmwKindAttr::And,
        (RmwKind::Nand, _) => AtomicRmwKindAttr::Nand,
        (RmwKind::Or, _) => AtomicRmwKindAttr::Or,
        (RmwKind::Xor, _) => AtomicRmwKindAttr::Xor,
        (RmwKind::Max, true) => AtomicRmwKindAttr::Max,
        (RmwKind::Max, false) => AtomicRmwKindAttr::UMax,
        (RmwKind::Min, true) => AtomicRmwKindAttr::Min,
        (RmwKind::Min, false) => AtomicRmwKindAttr::UMin,
    }
}

/// The qualifiers of a PTX `atom` instruction.
struct Atom {
    ordering: AtomicOrdering,
    scope: SyncScope,
    space: &'static str,
}

impl Atom {
    /// `atom.<sem>.<scope><space>.<op>.<class><bits> $0, [$1], $2;` (after `fence.sc` for
    /// SeqCst) on the value `value` of `bits` bits at `ptr`.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        ctx: &mut Context,
        rw: &mut Rewrite,
        op: &str,
        class: char,
        bits: u32,
        ptr: Value,
        value: Value,
    ) -> Value {
        let scope = ptx_scope(self.scope);
        let (fence, sem) = match self.ordering {
            AtomicOrdering::Relaxed => ("", "relaxed"),
            AtomicOrdering::Acquire => ("", "acquire"),
            AtomicOrdering::Release => ("", "release"),
            AtomicOrdering::AcqRel => ("", "acq_rel"),
            AtomicOrdering::SeqCst => ("fence.sc.", "acquire"),
        };
        let fence = if fence.is_empty() {
            String::new()
        } else {
            format!("{fence}{scope};\n\t")
        };
        let template = format!(
            "{fence}atom.{sem}.{scope}{}.{op}.{class}{bits} $0, [$1], $2;",
            self.space
        );
        let register = match (class, bits) {
            ('f', 32) => "f",
            ('f', _) => "d",
            (_, 64) => "l",
            _ => "r",
        };
        let constraints = format!("={register},l,{register}");
        let result_ty: TypeHandle = value.get_type(ctx);
        inline_ptx(
            ctx,
            rw,
            result_ty,
            vec![ptr, value],
            &template,
            &constraints,
            Memory::ReadWrite,
            false,
        )
    }

    /// An 8- or 16-bit and/or/xor as the same `atom` on the aligned 32-bit word holding the
    /// value (little-endian): the operand is shifted into place, and for `and` the other bits
    /// of the word are ones, so the neighbours are left unchanged.
    fn on_word(
        &self,
        ctx: &mut Context,
        rw: &mut Rewrite,
        kind: RmwKind,
        width: u32,
        ptr: Value,
        value: Value,
    ) -> Value {
        let (i32_ty, i64_ty) = (int_type(ctx, 32), int_type(ctx, 64));
        let ptr_ty = ptr.get_type(ctx);
        let address = {
            let op = PtrToIntOp::new(ctx, ptr, i64_ty);
            rw.value(ctx, op)
        };
        let align_mask = rw.const_int(ctx, 64, u128::from(!3u64));
        let word_address = plain::<AndOp>(ctx, rw, address, align_mask);
        let word_ptr = {
            let op = IntToPtrOp::new(ctx, word_address, ptr_ty);
            rw.value(ctx, op)
        };
        let low = {
            let op = TruncOp::new(ctx, address, i32_ty);
            rw.value(ctx, op)
        };
        let three = rw.const_int(ctx, 32, 3);
        let byte = plain::<AndOp>(ctx, rw, low, three);
        let shift = rw.int_binary::<ShlOp>(ctx, byte, three);
        let widened = {
            let op = ZExtOp::new_with_nneg(ctx, value, i32_ty, false);
            rw.value(ctx, op)
        };
        let mut operand = rw.int_binary::<ShlOp>(ctx, widened, shift);
        if kind == RmwKind::And {
            let ones = rw.const_int(ctx, 32, (1u128 << width) - 1);
            let mask = rw.int_binary::<ShlOp>(ctx, ones, shift);
            let all = rw.const_int(ctx, 32, u128::from(u32::MAX));
            let others = plain::<XorOp>(ctx, rw, mask, all);
            operand = plain::<OrOp>(ctx, rw, operand, others);
        }
        let name = match kind {
            RmwKind::And => "and",
            RmwKind::Or => "or",
            _ => "xor",
        };
        let old_word = self.emit(ctx, rw, name, 'b', 32, word_ptr, operand);
        let old = plain::<LShrOp>(ctx, rw, old_word, shift);
        let value_ty = value.get_type(ctx);
        let op = TruncOp::new(ctx, old, value_ty);
        rw.value(ctx, op)
    }
}

/// `lhs <O> rhs` for an LLVM binary op without flags.
fn plain<O: BinArithOp>(ctx: &mut Context, rw: &mut Rewrite, lhs: Value, rhs: Value) -> Value {
    let op = O::new(ctx, lhs, rhs);
    rw.value(ctx, op)
}
