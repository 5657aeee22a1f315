//! Atomics: `core`'s `atomic_*` intrinsics (behind `core::sync::atomic`) and the stubs of
//! `cuda_device::atomic::intrinsics` (behind `DeviceAtomicU32` & co.) become the `mir.atomic_*`
//! ops of dialect-mir.
//!
//! Both pass their orderings as const generic arguments, encoded as `core`'s
//! `AtomicOrdering` discriminants (Relaxed 0, Release 1, Acquire 2, AcqRel 3, SeqCst 4).
//! `cuda_device` adds the scope (Block 0, Device 1, System 2) and the read-modify-write
//! operation the same way. `core`'s atomics get the [SyncScope::Device] scope (PTX `.gpu`),
//! the scope of CUDA's `atomicAdd`: every thread of the kernel's GPU sees them; memory that the
//! host or another GPU uses while the kernel runs needs `SystemAtomic*`.
//!
//! Atomics on raw pointers (`AtomicPtr`) are atomics on the address as a `usize`.

use dialect_mir::ops::{
    AtomicCmpxchgOp, AtomicLoadOp, AtomicOrdering, AtomicRmwOp, AtomicStoreOp, FenceOp,
    FieldAddrOp, IntToPtrOp, PtrCastOp, PtrToIntOp, RmwKind, StoreOp, SyncScope, atomic_int_width,
};
use dialect_mir::types::{PtrType, is_float, usize_type};
use pliron::r#type::{TypeHandle, Typed};
use pliron::value::Value;
use rustc_public::mir::mono::Instance;
use rustc_public::mir::{Operand, Place};
use rustc_public::ty::{GenericArgKind, RigidTy, Ty, TyConstKind, TyKind};

use super::body::FnTranslator;
use super::error::{TResult, unsupported};

/// The oldest architecture with the scoped atomics and fences of the PTX memory model.
const MIN_ATOMIC_SM: u32 = 70;

/// An atomic operation, before its types are known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    Load,
    Store,
    Rmw(RmwKind),
    /// `max`/`min` of `core`, which name their signedness; `unsigned` for `umax`/`umin`.
    RmwSigned {
        kind: RmwKind,
        unsigned: bool,
    },
    Cmpxchg,
    Fence,
}

impl Access {
    /// The name of the Rust method that performs it, for messages.
    fn method(self) -> &'static str {
        match self {
            Access::Load => "load",
            Access::Store => "store",
            Access::Cmpxchg => "compare_exchange",
            Access::Fence => "fence",
            Access::Rmw(kind) | Access::RmwSigned { kind, .. } => match kind {
                RmwKind::Xchg => "swap",
                RmwKind::Add => "fetch_add",
                RmwKind::Sub => "fetch_sub",
                RmwKind::And => "fetch_and",
                RmwKind::Nand => "fetch_nand",
                RmwKind::Or => "fetch_or",
                RmwKind::Xor => "fetch_xor",
                RmwKind::Max => "fetch_max",
                RmwKind::Min => "fetch_min",
            },
        }
    }
}

/// The ordering encoded as `core::intrinsics::AtomicOrdering`'s discriminant.
fn ordering(code: u128) -> TResult<AtomicOrdering> {
    Ok(match code {
        0 => AtomicOrdering::Relaxed,
        1 => AtomicOrdering::Release,
        2 => AtomicOrdering::Acquire,
        3 => AtomicOrdering::AcqRel,
        4 => AtomicOrdering::SeqCst,
        other => unsupported!("an atomic ordering encoded as {other}"),
    })
}

/// The scope encoded as `cuda_device::atomic`'s scope constant.
fn scope(code: u128) -> TResult<SyncScope> {
    Ok(match code {
        0 => SyncScope::Block,
        1 => SyncScope::Device,
        2 => SyncScope::System,
        other => unsupported!("an atomic scope encoded as {other}"),
    })
}

/// The read-modify-write encoded as `cuda_device::atomic`'s operation constant.
fn rmw_kind(code: u128) -> TResult<RmwKind> {
    Ok(match code {
        0 => RmwKind::Xchg,
        1 => RmwKind::Add,
        2 => RmwKind::Sub,
        3 => RmwKind::And,
        4 => RmwKind::Or,
        5 => RmwKind::Xor,
        6 => RmwKind::Max,
        7 => RmwKind::Min,
        other => unsupported!("an atomic read-modify-write encoded as {other}"),
    })
}

/// The generic arguments of `instance`: its types and its constants, in order.
fn generic_args(instance: &Instance) -> TResult<(Vec<Ty>, Vec<u128>)> {
    let mut types = Vec::new();
    let mut consts = Vec::new();
    for arg in &instance.args().0 {
        match arg {
            GenericArgKind::Type(ty) => types.push(*ty),
            GenericArgKind::Const(constant) => match constant.kind() {
                TyConstKind::Value(_, alloc) => match alloc.read_uint() {
                    Ok(value) => consts.push(value),
                    Err(err) => unsupported!("an atomic ordering that is not an integer ({err:?})"),
                },
                other => unsupported!("an atomic ordering that is not a constant ({other:?})"),
            },
            GenericArgKind::Lifetime(_) => {}
        }
    }
    Ok((types, consts))
}

/// The `N` constants of an atomic's generic arguments.
fn consts<const N: usize>(name: &str, consts: &[u128]) -> TResult<[u128; N]> {
    match consts.try_into() {
        Ok(values) => Ok(values),
        Err(_) => unsupported!("`{name}` with {} constant arguments", consts.len()),
    }
}

/// One atomic access with its orderings, scope and Rust value type.
struct Atomic {
    access: Access,
    ty: Option<Ty>,
    orderings: (AtomicOrdering, AtomicOrdering),
    scope: SyncScope,
}

impl FnTranslator<'_> {
    /// A call of `core::intrinsics::atomic_*` (`name`), whose non-zero-sized arguments are
    /// `values`. Returns the value for the call's destination; a compare-exchange stores its
    /// `(T, bool)` itself.
    pub(crate) fn translate_core_atomic(
        &mut self,
        name: &str,
        instance: &Instance,
        values: &[Value],
        destination: &Place,
    ) -> TResult<Option<Value>> {
        let (types, codes) = generic_args(instance)?;
        let access = match name {
            "atomic_load" => Access::Load,
            "atomic_store" => Access::Store,
            "atomic_xchg" => Access::Rmw(RmwKind::Xchg),
            "atomic_xadd" => Access::Rmw(RmwKind::Add),
            "atomic_xsub" => Access::Rmw(RmwKind::Sub),
            "atomic_and" => Access::Rmw(RmwKind::And),
            "atomic_nand" => Access::Rmw(RmwKind::Nand),
            "atomic_or" => Access::Rmw(RmwKind::Or),
            "atomic_xor" => Access::Rmw(RmwKind::Xor),
            "atomic_max" | "atomic_umax" => Access::RmwSigned {
                kind: RmwKind::Max,
                unsigned: name == "atomic_umax",
            },
            "atomic_min" | "atomic_umin" => Access::RmwSigned {
                kind: RmwKind::Min,
                unsigned: name == "atomic_umin",
            },
            "atomic_cxchg" | "atomic_cxchgweak" => Access::Cmpxchg,
            "atomic_fence" | "atomic_singlethreadfence" => Access::Fence,
            other => unsupported!("the compiler intrinsic `{other}`"),
        };
        let orderings = if access == Access::Cmpxchg {
            let [success, failure] = consts(name, &codes)?;
            (ordering(success)?, ordering(failure)?)
        } else {
            let [order] = consts(name, &codes)?;
            (ordering(order)?, ordering(order)?)
        };
        let scope = if name == "atomic_singlethreadfence" {
            SyncScope::Thread
        } else {
            SyncScope::Device
        };
        let atomic = Atomic {
            access,
            ty: types.first().copied(),
            orderings,
            scope,
        };
        self.atomic(atomic, values, destination)
    }

    /// A call of the stub `cuda_device::atomic::intrinsics::<stub>`; stores its result into
    /// `destination`.
    pub(crate) fn translate_atomic_stub(
        &mut self,
        stub: &str,
        instance: &Instance,
        args: &[Operand],
        destination: &Place,
    ) -> TResult<()> {
        let (types, codes) = generic_args(instance)?;
        let atomic = match stub {
            "load" | "store" => {
                let [scope_code, order] = consts(stub, &codes)?;
                let order = ordering(order)?;
                Atomic {
                    access: if stub == "load" {
                        Access::Load
                    } else {
                        Access::Store
                    },
                    ty: types.first().copied(),
                    orderings: (order, order),
                    scope: scope(scope_code)?,
                }
            }
            "rmw" => {
                let [kind, scope_code, order] = consts(stub, &codes)?;
                let order = ordering(order)?;
                Atomic {
                    access: Access::Rmw(rmw_kind(kind)?),
                    ty: types.first().copied(),
                    orderings: (order, order),
                    scope: scope(scope_code)?,
                }
            }
            "cmpxchg" => {
                let [scope_code, success, failure] = consts(stub, &codes)?;
                Atomic {
                    access: Access::Cmpxchg,
                    ty: types.first().copied(),
                    orderings: (ordering(success)?, ordering(failure)?),
                    scope: scope(scope_code)?,
                }
            }
            "fence" => {
                let [scope_code, order] = consts(stub, &codes)?;
                let order = ordering(order)?;
                Atomic {
                    access: Access::Fence,
                    ty: None,
                    orderings: (order, order),
                    scope: scope(scope_code)?,
                }
            }
            other => unsupported!("the atomic stub `cuda_device::atomic::intrinsics::{other}`"),
        };
        let values = self.argument_values(args)?;
        let result = self.atomic(atomic, &values, destination)?;
        self.store_result(destination, result)
    }

    /// Emits `atomic` on `values` (pointer first).
    fn atomic(
        &mut self,
        atomic: Atomic,
        values: &[Value],
        destination: &Place,
    ) -> TResult<Option<Value>> {
        let Atomic {
            access,
            ty,
            orderings: (order, failure),
            scope,
        } = atomic;
        let method = access.method();
        if self.target.sm < MIN_ATOMIC_SM {
            unsupported!(
                "atomic `{method}` on {}: device atomics need sm_{MIN_ATOMIC_SM} or newer \
                 (build with `--arch sm_{MIN_ATOMIC_SM}` or newer)",
                self.target
            )
        }
        let valid = match access {
            Access::Load => order.valid_for_load(),
            Access::Store => order.valid_for_store(),
            Access::Cmpxchg => failure.valid_for_load(),
            Access::Fence => order != AtomicOrdering::Relaxed,
            Access::Rmw(_) | Access::RmwSigned { .. } => true,
        };
        if !valid {
            let which = if access == Access::Cmpxchg {
                "failure ordering"
            } else {
                "ordering"
            };
            let bad = if access == Access::Cmpxchg {
                failure
            } else {
                order
            };
            unsupported!(
                "an atomic `{method}` with the {which} `{}`",
                rust_ordering(bad)
            )
        }
        if access == Access::Fence {
            self.emit(|ctx| FenceOp::new(ctx, order, scope));
            return Ok(None);
        }
        let Some(ty) = ty else {
            unsupported!("an atomic `{method}` without its type argument")
        };
        let Some((&ptr, operands)) = values.split_first() else {
            unsupported!("an atomic `{method}` without its pointer argument")
        };
        // A pointer value travels as its address.
        let is_pointer = matches!(ty.kind(), TyKind::RigidTy(RigidTy::RawPtr(..)));
        let value_ty: TypeHandle = if is_pointer {
            usize_type(self.ctx).into()
        } else {
            self.types.translate(self.ctx, ty)?
        };
        let width = atomic_int_width(self.ctx, value_ty);
        let float = is_float(self.ctx, value_ty);
        let wide = dialect_mir::ops::is_wide_atomic_int(self.ctx, value_ty);
        let supported = match access {
            _ if wide => matches!(access, Access::Cmpxchg | Access::Rmw(RmwKind::Xchg)),
            Access::Load | Access::Store => width.is_some() || float,
            Access::Rmw(RmwKind::Add | RmwKind::Sub) => width.is_some() || float,
            _ => width.is_some(),
        };
        if !supported {
            unsupported!(
                "an atomic `{method}` on `{ty}` (device atomics are on integers of 8, 16, 32 or \
                 64 bits, and loads, stores, `fetch_add` and `fetch_sub` also on `f32` and `f64`; \
                 128-bit integers have `compare_exchange` and `swap` only, PTX's \
                 `atom.cas.b128` and `atom.exch.b128`)"
            )
        }
        if wide && self.target.sm < dialect_mir::ops::SM_OF_128_BIT_ATOMICS {
            unsupported!(
                "an atomic `{method}` on `{ty}`: 128-bit atomics (`atom.cas.b128`) need sm_90 or \
                 newer, but this build targets sm_{}",
                self.target.sm
            )
        }
        if let Access::RmwSigned { unsigned, .. } = access {
            let signed = super::arith::is_signed(self.ctx, value_ty);
            if signed == unsigned {
                unsupported!("an atomic `{method}` on `{ty}` with the other signedness")
            }
        }
        let ptr = if is_pointer {
            let address_space = ptr
                .get_type(self.ctx)
                .deref(self.ctx)
                .downcast_ref::<PtrType>()
                .map(|p| p.address_space())
                .unwrap_or(dialect_mir::types::ADDRSPACE_GENERIC);
            let to = PtrType::get(self.ctx, value_ty, address_space).into();
            self.emit(|ctx| PtrCastOp::new(ctx, ptr, to))
                .result(self.ctx)
        } else {
            ptr
        };
        let mut operands: Vec<Value> = operands.to_vec();
        for operand in &mut operands {
            let operand_ty = operand.get_type(self.ctx);
            if operand_ty != value_ty {
                *operand = if dialect_mir::types::is_ptr(self.ctx, operand_ty) {
                    self.emit(|ctx| PtrToIntOp::new(ctx, *operand, value_ty))
                        .result(self.ctx)
                } else {
                    unsupported!("an atomic `{method}` on `{ty}` with an operand of another type")
                };
            }
        }
        let result = match (access, operands.as_slice()) {
            (Access::Load, []) => Some(
                self.emit(|ctx| AtomicLoadOp::new(ctx, ptr, value_ty, order, scope))
                    .result(self.ctx),
            ),
            (Access::Store, [value]) => {
                let value = *value;
                self.emit(|ctx| AtomicStoreOp::new(ctx, value, ptr, order, scope));
                None
            }
            (Access::Rmw(kind) | Access::RmwSigned { kind, .. }, [value]) => {
                let value = *value;
                Some(
                    self.emit(|ctx| AtomicRmwOp::new(ctx, kind, ptr, value, order, scope))
                        .result(self.ctx),
                )
            }
            (Access::Cmpxchg, [expected, new]) => {
                let (expected, new) = (*expected, *new);
                let op = self.emit(|ctx| {
                    AtomicCmpxchgOp::new(ctx, ptr, expected, new, (order, failure), scope)
                });
                let (old, success) = (op.old(self.ctx), op.success(self.ctx));
                let old = if is_pointer {
                    self.address_to_pointer(old, ty)?
                } else {
                    old
                };
                let Some(slot) = self.translate_place(destination)?.thin()? else {
                    return Ok(None);
                };
                for (field, part) in [(0, old), (1, success)] {
                    let addr = self
                        .emit(|ctx| FieldAddrOp::new(ctx, slot, field))
                        .result(self.ctx);
                    self.emit(|ctx| StoreOp::new(ctx, part, addr));
                }
                return Ok(None);
            }
            _ => unsupported!(
                "an atomic `{method}` with {} value arguments",
                operands.len()
            ),
        };
        match result {
            Some(value) if is_pointer => Ok(Some(self.address_to_pointer(value, ty)?)),
            other => Ok(other),
        }
    }

    /// The address `value` as a raw pointer of type `ty`.
    fn address_to_pointer(&mut self, value: Value, ty: Ty) -> TResult<Value> {
        let ptr_ty = self.types.translate(self.ctx, ty)?;
        Ok(self
            .emit(|ctx| IntToPtrOp::new(ctx, value, ptr_ty))
            .result(self.ctx))
    }
}

/// The name of `ordering` in `core::sync::atomic::Ordering`.
fn rust_ordering(ordering: AtomicOrdering) -> &'static str {
    match ordering {
        AtomicOrdering::Relaxed => "Relaxed",
        AtomicOrdering::Acquire => "Acquire",
        AtomicOrdering::Release => "Release",
        AtomicOrdering::AcqRel => "AcqRel",
        AtomicOrdering::SeqCst => "SeqCst",
    }
}
