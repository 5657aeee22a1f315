//! Raw memory intrinsics of `core`: copies and fills (`mir.copy*`, `mir.write_bytes`), swaps,
//! and byte comparisons (`raw_eq`, `compare_bytes`), which become a loop over the bytes (or
//! aligned words) since the GPU has no `memcmp`.

use dialect_mir::ops::*;
use dialect_mir::types::{PtrType, usize_type};
use pliron::builtin::types::{IntegerType, Signedness};
use pliron::irbuild::inserter::IRInserter;
use pliron::r#type::{TypeHandle, TypedHandle};
use pliron::value::Value;
use rustc_public::ty::Ty;

use super::body::FnTranslator;
use super::error::{TResult, unsupported};
use super::types::layout;

/// What a byte-comparison loop computes.
#[derive(Clone, Copy)]
enum Comparison {
    /// Whether all units are equal (`raw_eq`): a `bool`.
    Equal,
    /// The difference of the first differing bytes, as `memcmp` (`compare_bytes`): an `i32`.
    Memcmp,
}

impl FnTranslator<'_> {
    /// Copies `count` elements of `dst`'s pointee from `src` to `dst`.
    pub(crate) fn copy(
        &mut self,
        dst: Value,
        src: Value,
        count: Value,
        overlapping: bool,
        volatile: bool,
    ) {
        if overlapping {
            self.emit(|ctx| CopyOp::new(ctx, dst, src, count, volatile));
        } else {
            self.emit(|ctx| CopyNonOverlappingOp::new(ctx, dst, src, count, volatile));
        }
    }

    /// Sets every byte of `count` elements at `dst` to `byte`.
    pub(crate) fn write_bytes(&mut self, dst: Value, byte: Value, count: Value, volatile: bool) {
        self.emit(|ctx| WriteBytesOp::new(ctx, dst, byte, count, volatile));
    }

    /// Exchanges the values at `x` and `y`.
    pub(crate) fn swap(&mut self, x: Value, y: Value) {
        let a = self.emit(|ctx| LoadOp::new(ctx, x)).result(self.ctx);
        let b = self.emit(|ctx| LoadOp::new(ctx, y)).result(self.ctx);
        self.emit(|ctx| StoreOp::new(ctx, b, x));
        self.emit(|ctx| StoreOp::new(ctx, a, y));
    }

    /// `raw_eq::<ty>(a, b)`: whether the bytes of `*a` and `*b` are equal, compared in units
    /// of the type's alignment (at most 8 bytes), which both addresses have.
    pub(crate) fn raw_eq(&mut self, ty: Ty, values: &[Value]) -> TResult<Value> {
        let shape = layout(ty)?;
        let size = shape.size.bytes() as u64;
        if size == 0 {
            return Ok(self.bool_constant(true));
        }
        let [a, b] = values[..] else {
            unsupported!("`raw_eq` with {} arguments", values.len())
        };
        let unit = shape.abi_align.clamp(1, 8);
        let count = self.usize_constant(u128::from(size / unit));
        self.compare_loop(a, b, count, unit, Comparison::Equal)
    }

    /// `compare_bytes(a, b, n)`: `memcmp`.
    pub(crate) fn compare_bytes(&mut self, a: Value, b: Value, n: Value) -> TResult<Value> {
        self.compare_loop(a, b, n, 1, Comparison::Memcmp)
    }

    /// A loop over `count` units of `unit` bytes at `a` and `b`, stopping at the first that
    /// differs:
    ///
    /// ```text
    ///   i = 0; result = <equal>; goto head
    /// head: if i < count { goto body } else { goto done }
    /// body: x = a[i]; y = b[i]; if x != y { result = <differ(x, y)>; goto done } else { goto next }
    /// next: i += 1; goto head
    /// done: (the code after the intrinsic)
    /// ```
    ///
    /// The counter and result live in slots, which mem2reg promotes.
    fn compare_loop(
        &mut self,
        a: Value,
        b: Value,
        count: Value,
        unit: u64,
        comparison: Comparison,
    ) -> TResult<Value> {
        let unit_ty = IntegerType::get(self.ctx, (unit * 8) as u32, Signedness::Unsigned);
        let unit_ptr: TypeHandle = PtrType::get_generic(self.ctx, unit_ty.into()).into();
        let a = self
            .emit(|ctx| PtrCastOp::new(ctx, a, unit_ptr))
            .result(self.ctx);
        let b = self
            .emit(|ctx| PtrCastOp::new(ctx, b, unit_ptr))
            .result(self.ctx);
        let result_ty: TypeHandle = match comparison {
            Comparison::Equal => dialect_mir::types::bool_type(self.ctx).into(),
            Comparison::Memcmp => IntegerType::get(self.ctx, 32, Signedness::Signed).into(),
        };
        let usize_ty = usize_type(self.ctx);
        let index_slot = self
            .emit(|ctx| AllocaOp::new(ctx, usize_ty.into()))
            .result(self.ctx);
        let result_slot = self
            .emit(|ctx| AllocaOp::new(ctx, result_ty))
            .result(self.ctx);
        let zero = self.usize_constant(0);
        self.emit(|ctx| StoreOp::new(ctx, zero, index_slot));
        let same = self.comparison_constant(comparison, true);
        self.emit(|ctx| StoreOp::new(ctx, same, result_slot));

        let head = self.new_block("cmp_head");
        let body = self.new_block("cmp_body");
        let differ = self.new_block("cmp_differ");
        let next = self.new_block("cmp_next");
        let done = self.new_block("cmp_done");
        self.emit(|ctx| GotoOp::new(ctx, head));

        self.inserter = IRInserter::new_at_block_end(head);
        let i = self
            .emit(|ctx| LoadOp::new(ctx, index_slot))
            .result(self.ctx);
        let more = self.emit(|ctx| LtOp::new(ctx, i, count)).result(self.ctx);
        self.emit(|ctx| CondBrOp::new(ctx, more, body, done));

        self.inserter = IRInserter::new_at_block_end(body);
        let addr_a = self
            .emit(|ctx| PtrOffsetOp::new(ctx, a, i))
            .result(self.ctx);
        let addr_b = self
            .emit(|ctx| PtrOffsetOp::new(ctx, b, i))
            .result(self.ctx);
        let x = self.emit(|ctx| LoadOp::new(ctx, addr_a)).result(self.ctx);
        let y = self.emit(|ctx| LoadOp::new(ctx, addr_b)).result(self.ctx);
        let ne = self.emit(|ctx| NeOp::new(ctx, x, y)).result(self.ctx);
        self.emit(|ctx| CondBrOp::new(ctx, ne, differ, next));

        self.inserter = IRInserter::new_at_block_end(differ);
        let differs = match comparison {
            Comparison::Equal => self.comparison_constant(comparison, false),
            Comparison::Memcmp => {
                let x = self
                    .emit(|ctx| IntCastOp::new(ctx, x, result_ty))
                    .result(self.ctx);
                let y = self
                    .emit(|ctx| IntCastOp::new(ctx, y, result_ty))
                    .result(self.ctx);
                self.emit(|ctx| SubOp::new(ctx, x, y)).result(self.ctx)
            }
        };
        self.emit(|ctx| StoreOp::new(ctx, differs, result_slot));
        self.emit(|ctx| GotoOp::new(ctx, done));

        self.inserter = IRInserter::new_at_block_end(next);
        let one = self.usize_constant(1);
        let i_next = self.emit(|ctx| AddOp::new(ctx, i, one)).result(self.ctx);
        self.emit(|ctx| StoreOp::new(ctx, i_next, index_slot));
        self.emit(|ctx| GotoOp::new(ctx, head));

        self.inserter = IRInserter::new_at_block_end(done);
        Ok(self
            .emit(|ctx| LoadOp::new(ctx, result_slot))
            .result(self.ctx))
    }

    /// The result of a comparison whose units were all equal (`same`) or not.
    fn comparison_constant(&mut self, comparison: Comparison, same: bool) -> Value {
        match comparison {
            Comparison::Equal => self.bool_constant(same),
            Comparison::Memcmp => {
                let i32_ty: TypedHandle<IntegerType> =
                    IntegerType::get(self.ctx, 32, Signedness::Signed);
                self.emit(|ctx| ConstantOp::new_int(ctx, i32_ty, 0))
                    .result(self.ctx)
            }
        }
    }
}
