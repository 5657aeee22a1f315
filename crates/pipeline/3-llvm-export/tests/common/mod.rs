//! Hand-built pliron-llvm modules shared by the snapshot and the llc tests.

#![allow(dead_code)]

use std::num::NonZero;

use nvptx_attrs::mark_kernel;
use pliron::{
    basic_block::BasicBlock,
    builtin::{
        attributes::{FPSingleAttr, IntegerAttr, StringAttr},
        op_interfaces::{CallOpCallable, SingleBlockRegionInterface},
        ops::ModuleOp,
        types::{FP32Type, IntegerType, Signedness},
    },
    context::{Context, Ptr},
    identifier::Identifier,
    op::Op,
    operation::verify_operation,
    r#type::{TypeHandle, TypedHandle},
    utils::apint::APInt,
    value::Value,
};
use pliron_llvm::{
    attributes::{
        AggregateAttr, FCmpPredicateAttr, FastmathFlags, FastmathFlagsAttr, GepNoWrapFlags,
        ICmpPredicateAttr, IntegerOverflowFlagsAttr, LinkageAttr, UndefAttr,
    },
    llvm_attrs::{LlvmAttrValue, LlvmAttributesAttr},
    op_interfaces::{
        AlignableOpInterface, BinArithOp, CastOpInterface, CastOpWithNNegInterface, FastMathFlags,
        FloatBinArithOpWithFastMathFlags, IntBinArithOpWithOverflowFlag, LlvmSymbolName,
    },
    ops::*,
    types::{ArrayType, FuncType, PointerType, StructLayout, StructType, VoidType},
};

pub fn id(name: &str) -> Identifier {
    Identifier::try_from(name).unwrap()
}

pub fn int(ctx: &Context, width: u32) -> TypeHandle {
    IntegerType::get(ctx, width, Signedness::Signless).into()
}

pub fn f32t(ctx: &Context) -> TypeHandle {
    FP32Type::get(ctx).into()
}

pub fn ptr(ctx: &Context, addrspace: u32) -> TypeHandle {
    PointerType::get(ctx, addrspace).into()
}

pub fn void(ctx: &Context) -> TypeHandle {
    VoidType::get(ctx).into()
}

pub fn fn_ty(ctx: &Context, res: TypeHandle, args: Vec<TypeHandle>) -> TypedHandle<FuncType> {
    FuncType::get(ctx, res, args, false)
}

/// Builds functions op by op, appending to the current block.
pub struct Builder<'c> {
    pub ctx: &'c mut Context,
    pub module: ModuleOp,
    func: Option<FuncOp>,
    block: Option<Ptr<BasicBlock>>,
}

impl<'c> Builder<'c> {
    pub fn new(ctx: &'c mut Context, name: &str) -> Self {
        let module = ModuleOp::new(ctx, id(name));
        Builder {
            ctx,
            module,
            func: None,
            block: None,
        }
    }

    /// Start a function; returns its entry block arguments, named `arg_names`.
    pub fn func(&mut self, name: &str, res: TypeHandle, args: &[(&str, TypeHandle)]) -> Vec<Value> {
        let ty = fn_ty(self.ctx, res, args.iter().map(|a| a.1).collect());
        let func = FuncOp::new(self.ctx, id(name), ty);
        self.module
            .append_operation(self.ctx, func.get_operation(), 0);
        let entry = func.get_or_create_entry_block(self.ctx);
        self.func = Some(func);
        self.block = Some(entry);
        let values: Vec<Value> = entry.deref(self.ctx).arguments().collect();
        for (v, (n, _)) in values.iter().zip(args) {
            v.set_name(self.ctx, Some(id(n)));
        }
        values
    }

    pub fn current_func(&self) -> FuncOp {
        self.func.unwrap()
    }

    pub fn kernel(&mut self, name: &str, args: &[(&str, TypeHandle)]) -> Vec<Value> {
        let void = void(self.ctx);
        let values = self.func(name, void, args);
        mark_kernel(self.ctx, &self.current_func());
        values
    }

    /// Append a block with named arguments; returns it and its arguments.
    pub fn block(
        &mut self,
        label: &str,
        args: &[(&str, TypeHandle)],
    ) -> (Ptr<BasicBlock>, Vec<Value>) {
        let block = BasicBlock::new(
            self.ctx,
            Some(id(label)),
            args.iter().map(|a| a.1).collect(),
        );
        let region = self
            .current_func()
            .get_operation()
            .deref(self.ctx)
            .get_region(0);
        block.insert_at_back(region, self.ctx);
        let values: Vec<Value> = block.deref(self.ctx).arguments().collect();
        for (v, (n, _)) in values.iter().zip(args) {
            v.set_name(self.ctx, Some(id(n)));
        }
        (block, values)
    }

    pub fn at(&mut self, block: Ptr<BasicBlock>) {
        self.block = Some(block);
    }

    /// Append `op`; returns its first result, if any.
    pub fn push(&mut self, op: impl Op) -> Option<Value> {
        let opr = op.get_operation();
        opr.insert_at_back(self.block.unwrap(), self.ctx);
        opr.deref(self.ctx).results().next()
    }

    /// Append `op` and name its result.
    pub fn val(&mut self, name: &str, op: impl Op) -> Value {
        let v = self.push(op).expect("op has a result");
        if !name.is_empty() {
            v.set_name(self.ctx, Some(id(name)));
        }
        v
    }

    pub fn const_int(&mut self, width: u32, value: i64) -> Value {
        let ty = IntegerType::get(self.ctx, width, Signedness::Signless);
        let attr = IntegerAttr::new(
            ty,
            APInt::from_i64(value, NonZero::new(width as usize).unwrap()),
        );
        let op = ConstantOp::new(self.ctx, Box::new(attr));
        self.push(op).unwrap()
    }

    pub fn const_f32(&mut self, value: f32) -> Value {
        let op = ConstantOp::new(self.ctx, Box::new(FPSingleAttr::from(value)));
        self.push(op).unwrap()
    }

    pub fn add(&mut self, name: &str, a: Value, b: Value, nsw: bool, nuw: bool) -> Value {
        let op =
            AddOp::new_with_overflow_flag(self.ctx, a, b, IntegerOverflowFlagsAttr { nsw, nuw });
        self.val(name, op)
    }

    pub fn icmp(&mut self, name: &str, pred: ICmpPredicateAttr, a: Value, b: Value) -> Value {
        let op = ICmpOp::new(self.ctx, pred, a, b);
        self.val(name, op)
    }

    pub fn store(&mut self, value: Value, addr: Value, align: u32) {
        let op = StoreOp::new(self.ctx, value, addr);
        op.set_alignment(self.ctx, align);
        self.push(op);
    }

    pub fn br(&mut self, dest: Ptr<BasicBlock>, args: Vec<Value>) {
        let op = BrOp::new(self.ctx, dest, args);
        self.push(op);
    }

    pub fn cond_br(
        &mut self,
        cond: Value,
        t: Ptr<BasicBlock>,
        t_args: Vec<Value>,
        f: Ptr<BasicBlock>,
        f_args: Vec<Value>,
    ) {
        let op = CondBrOp::new(self.ctx, cond, t, t_args, f, f_args);
        self.push(op);
    }

    pub fn ret(&mut self) {
        let op = ReturnOp::new(self.ctx, None);
        self.push(op);
    }

    pub fn intrinsic(&mut self, name: &str, res: TypeHandle, args: Vec<Value>) -> Value {
        use pliron::r#type::Typed;
        let arg_tys = args.iter().map(|a| a.get_type(self.ctx)).collect();
        let ty = fn_ty(self.ctx, res, arg_tys);
        let op = CallIntrinsicOp::new(self.ctx, StringAttr::new(name.into()), ty, args);
        self.push(op).unwrap()
    }

    /// Verify the module and hand it out.
    pub fn finish(self) -> ModuleOp {
        if let Err(e) = verify_operation(self.module.get_operation(), self.ctx) {
            panic!("test module does not verify: {e}");
        }
        self.module
    }
}

/// A kernel storing `threadIdx.x` to `out[threadIdx.x]`.
pub fn tid_kernel(ctx: &mut Context) -> ModuleOp {
    let mut b = Builder::new(ctx, "tid");
    let p1 = ptr(b.ctx, 1);
    let args = b.kernel("store_tid", &[("out", p1)]);
    let i32t = int(b.ctx, 32);
    let i64t = int(b.ctx, 64);
    let tid = b.intrinsic("llvm.nvvm.read.ptx.sreg.tid.x", i32t, vec![]);
    tid.set_name(b.ctx, Some(id("tid")));
    let zext = ZExtOp::new_with_nneg(b.ctx, tid, i64t, true);
    let idx = b.val("idx", zext);
    let gep = GetElementPtrOp::new_with_no_wrap_flags(
        b.ctx,
        args[0],
        vec![GepIndex::Value(idx)],
        i32t,
        GepNoWrapFlags::INBOUNDS,
    );
    let slot = b.val("slot", gep);
    b.store(tid, slot, 4);
    b.ret();
    b.finish()
}

/// `out[0] = 0 + 1 + ... + (n - 1)` with the counter and the sum carried around the loop.
pub fn loop_kernel(ctx: &mut Context) -> ModuleOp {
    let mut b = Builder::new(ctx, "sum");
    let (p1, i32t) = (ptr(b.ctx, 1), int(b.ctx, 32));
    let args = b.kernel("sum_to", &[("out", p1), ("n", i32t)]);
    let (header, ha) = b.block("header", &[("i", i32t), ("acc", i32t)]);
    let (body, _) = b.block("body", &[]);
    let (exit, ea) = b.block("exit", &[("result", i32t)]);

    let zero = b.const_int(32, 0);
    b.br(header, vec![zero, zero]);

    b.at(header);
    let c = b.icmp("more", ICmpPredicateAttr::SLT, ha[0], args[1]);
    b.cond_br(c, body, vec![], exit, vec![ha[1]]);

    b.at(body);
    let acc = b.add("acc_next", ha[1], ha[0], true, false);
    let one = b.const_int(32, 1);
    let i = b.add("i_next", ha[0], one, true, true);
    b.br(header, vec![i, acc]);

    b.at(exit);
    b.store(ea[0], args[0], 4);
    b.ret();
    b.finish()
}

/// Two nested if/else diamonds merging values, with the outer join placed before the inner
/// blocks in the region.
pub fn nested_joins_kernel(ctx: &mut Context) -> ModuleOp {
    let mut b = Builder::new(ctx, "joins");
    let (p1, i32t) = (ptr(b.ctx, 1), int(b.ctx, 32));
    let args = b.kernel("nested", &[("out", p1), ("a", i32t), ("b", i32t)]);
    let (a, bv) = (args[1], args[2]);
    let (outer_then, _) = b.block("outer_then", &[]);
    let (outer_join, oj) = b.block("outer_join", &[("r", i32t)]);
    let (inner_then, _) = b.block("inner_then", &[]);
    let (inner_else, _) = b.block("inner_else", &[]);
    let (inner_join, ij) = b.block("inner_join", &[("ij", i32t)]);
    let (outer_else, _) = b.block("outer_else", &[]);

    let zero = b.const_int(32, 0);
    let c1 = b.icmp("a_pos", ICmpPredicateAttr::SGT, a, zero);
    b.cond_br(c1, outer_then, vec![], outer_else, vec![]);

    b.at(outer_then);
    let c2 = b.icmp("b_pos", ICmpPredicateAttr::SGT, bv, zero);
    b.cond_br(c2, inner_then, vec![], inner_else, vec![]);

    b.at(inner_then);
    let mul = MulOp::new_with_overflow_flag(b.ctx, a, bv, IntegerOverflowFlagsAttr::default());
    let x = b.val("x", mul);
    b.br(inner_join, vec![x]);

    b.at(inner_else);
    let sub = SubOp::new_with_overflow_flag(b.ctx, a, bv, IntegerOverflowFlagsAttr::default());
    let y = b.val("y", sub);
    b.br(inner_join, vec![y]);

    b.at(inner_join);
    b.br(outer_join, vec![ij[0]]);

    b.at(outer_else);
    let seven = b.const_int(32, 7);
    b.br(outer_join, vec![seven]);

    b.at(outer_join);
    b.store(oj[0], args[0], 4);
    b.ret();
    b.finish()
}

/// `cond_br` with both arms to one block: with equal operands (one phi entry per edge) and
/// with different operands (a trampoline block for the second edge).
pub fn same_target_kernel(ctx: &mut Context) -> ModuleOp {
    let mut b = Builder::new(ctx, "same_target");
    let (p1, i32t) = (ptr(b.ctx, 1), int(b.ctx, 32));
    for (name, differ) in [("same_values", false), ("different_values", true)] {
        let args = b.kernel(name, &[("out", p1), ("a", i32t)]);
        let (join, j) = b.block("join", &[("v", i32t)]);
        let zero = b.const_int(32, 0);
        let c = b.icmp("is_zero", ICmpPredicateAttr::EQ, args[1], zero);
        let other = if differ { b.const_int(32, 2) } else { args[1] };
        b.cond_br(c, join, vec![args[1]], join, vec![other]);
        b.at(join);
        b.store(j[0], args[0], 4);
        b.ret();
    }
    b.finish()
}

/// A `switch` whose default and three cases go to one block, two with the default's value
/// and one with another, plus a case through a block of its own.
pub fn switch_kernel(ctx: &mut Context) -> ModuleOp {
    let mut b = Builder::new(ctx, "switch");
    let (p1, i32t) = (ptr(b.ctx, 1), int(b.ctx, 32));
    let args = b.kernel("pick", &[("out", p1), ("sel", i32t), ("a", i32t)]);
    let (zero_case, _) = b.block("zero_case", &[]);
    let (done, d) = b.block("done", &[("v", i32t)]);
    let five = b.const_int(32, 5);
    let case = |b: &mut Builder, value: i64, dest, dest_opds| SwitchCase {
        value: IntegerAttr::new(
            IntegerType::get(b.ctx, 32, Signedness::Signless),
            APInt::from_i64(value, NonZero::new(32).unwrap()),
        ),
        dest,
        dest_opds,
    };
    let cases = vec![
        case(&mut b, 0, zero_case, vec![]),
        case(&mut b, 1, done, vec![args[2]]),
        case(&mut b, 2, done, vec![five]),
        case(&mut b, -1, done, vec![args[2]]),
    ];
    let switch = SwitchOp::new(b.ctx, args[1], done, vec![args[2]], cases);
    b.push(switch);

    b.at(zero_case);
    let zero = b.const_int(32, 0);
    b.br(done, vec![zero]);

    b.at(done);
    b.store(d[0], args[0], 4);
    b.ret();
    b.finish()
}

/// Globals (shared memory, constant table), a quoted device function, intrinsics with
/// aggregate results, inline asm, casts, selects, float constants and a trap path.
pub fn features_kernel(ctx: &mut Context) -> ModuleOp {
    let mut b = Builder::new(ctx, "features");
    let (p1, i32t, i1t, f32) = (ptr(b.ctx, 1), int(b.ctx, 32), int(b.ctx, 1), f32t(b.ctx));

    let smem_ty: TypeHandle = ArrayType::get(b.ctx, f32, 256).into();
    let smem = GlobalOp::new(b.ctx, id("smem"), smem_ty);
    smem.set_address_space(b.ctx, 3);
    smem.set_attr_llvm_global_linkage(b.ctx, LinkageAttr::InternalLinkage);
    smem.set_initializer_value(b.ctx, Box::new(UndefAttr(smem_ty)));
    smem.set_alignment(b.ctx, 4);
    b.module.append_operation(b.ctx, smem.get_operation(), 0);

    let table_ty: TypeHandle = ArrayType::get(b.ctx, i32t, 3).into();
    let table = GlobalOp::new(b.ctx, id("table"), table_ty);
    table.set_constant(b.ctx, true);
    table.set_attr_llvm_global_linkage(b.ctx, LinkageAttr::PrivateLinkage);
    let elems = (1..=3)
        .map(|v| {
            let ty = IntegerType::get(b.ctx, 32, Signedness::Signless);
            Box::new(IntegerAttr::new(
                ty,
                APInt::from_i64(v, NonZero::new(32).unwrap()),
            )) as Box<dyn pliron::builtin::attr_interfaces::TypedAttrInterface>
        })
        .collect();
    table.set_initializer_value(b.ctx, Box::new(AggregateAttr::new(elems, table_ty)));
    b.module.append_operation(b.ctx, table.get_operation(), 0);

    let fargs = b.func("helper", f32, &[("x", f32)]);
    let helper = b.current_func();
    helper.set_llvm_symbol_name(b.ctx, "device::helper".into());
    helper.set_attr_llvm_function_linkage(b.ctx, LinkageAttr::InternalLinkage);
    let mut attrs = LlvmAttributesAttr::new();
    attrs.set("nounwind", LlvmAttrValue::Unit);
    attrs.set(
        "denormal-fp-math-f32",
        LlvmAttrValue::Str("preserve-sign".into()),
    );
    helper.set_attr_llvm_func_attrs(b.ctx, attrs);
    let tenth = b.const_f32(0.1);
    let fmul = FMulOp::new_with_fast_math_flags(b.ctx, fargs[0], tenth, FastmathFlags::FAST.into());
    let scaled = b.val("scaled", fmul);
    let ret = ReturnOp::new(b.ctx, Some(scaled));
    b.push(ret);

    let args = b.kernel(
        "features",
        &[("out", p1), ("x", f32), ("a", i32t), ("b", i32t)],
    );
    let (trap, _) = b.block("overflow", &[]);
    let (ok, _) = b.block("ok", &[]);
    let pair: TypeHandle =
        StructType::get_unnamed(b.ctx, (vec![i32t, i1t], StructLayout::Unpacked)).into();
    let sum = b.intrinsic("llvm.sadd.with.overflow.i32", pair, vec![args[2], args[3]]);
    let ev = ExtractValueOp::new(b.ctx, sum, vec![0]).unwrap();
    let value = b.val("sum", ev);
    let ev = ExtractValueOp::new(b.ctx, sum, vec![1]).unwrap();
    let overflow = b.val("overflow", ev);
    let sat = b.intrinsic("llvm.fptosi.sat.i32.f32", i32t, vec![args[1]]);
    let helper_ty = fn_ty(b.ctx, f32, vec![f32]);
    let call = CallOp::new(
        b.ctx,
        CallOpCallable::Direct(id("helper")),
        helper_ty,
        vec![args[1]],
    );
    let h = b.val("h", call);
    let limit = b.const_f32(1.0e-3);
    let fcmp = FCmpOp::new(b.ctx, FCmpPredicateAttr::OLT, h, limit);
    fcmp.set_fast_math_flags(b.ctx, FastmathFlagsAttr::default());
    let small = b.val("small", fcmp);
    let select = SelectOp::new(b.ctx, small, value, sat);
    let chosen = b.val("chosen", select);

    let addr = AddressOfOp::new(b.ctx, id("smem"), 3);
    let base = b.push(addr).unwrap();
    let zero = b.const_int(32, 0);
    let gep = GetElementPtrOp::new_with_no_wrap_flags(
        b.ctx,
        base,
        vec![GepIndex::Constant(0), GepIndex::Value(args[2])],
        smem_ty,
        GepNoWrapFlags::INBOUNDS | GepNoWrapFlags::NUW,
    );
    let elem = b.val("elem", gep);
    b.store(h, elem, 4);
    let load = LoadOp::new(b.ctx, elem, f32);
    load.set_alignment(b.ctx, 4);
    let shared = b.val("shared", load);
    let to_int = FPToUIOp::new(b.ctx, shared, i32t);
    let shared_int = b.val("shared_int", to_int);

    let one = b.const_int(32, 1);
    let alloca = AllocaOp::new(b.ctx, i32t, one, 0);
    alloca.set_alignment(b.ctx, 4);
    let slot = b.val("slot", alloca);
    b.store(chosen, slot, 4);
    let load = LoadOp::new(b.ctx, slot, i32t);
    let reloaded = b.val("reloaded", load);
    let undef = UndefOp::new(b.ctx, pair);
    let agg = b.push(undef).unwrap();
    let iv = InsertValueOp::new(b.ctx, agg, reloaded, vec![0]);
    let agg = b.val("agg", iv);
    let ev = ExtractValueOp::new(b.ctx, agg, vec![0]).unwrap();
    let back = b.val("back", ev);

    let asm = InlineAsmOp::new(b.ctx, i32t, vec![], "mov.u32 $0, %laneid;", "=r", false);
    let lane = b.val("lane", asm);
    let xor = XorOp::new(b.ctx, back, lane);
    let mixed = b.val("mixed", xor);
    let mixed2 = b.add("mixed2", mixed, shared_int, false, false);
    let table_addr = AddressOfOp::new(b.ctx, id("table"), 0);
    let table_ptr = b.push(table_addr).unwrap();
    let gep = GetElementPtrOp::new(
        b.ctx,
        table_ptr,
        vec![GepIndex::Value(zero), GepIndex::Value(one)],
        table_ty,
    );
    let entry_ptr = b.val("entry_ptr", gep);
    let load = LoadOp::new(b.ctx, entry_ptr, i32t);
    let from_table = b.val("from_table", load);
    let freeze = FreezeOp::new(b.ctx, from_table);
    let frozen = b.val("frozen", freeze);
    let total = b.add("total", mixed2, frozen, false, false);
    b.cond_br(overflow, trap, vec![], ok, vec![]);

    b.at(trap);
    let void = void(b.ctx);
    b.intrinsic("llvm.trap", void, vec![]);
    let unreachable = UnreachableOp::new(b.ctx);
    b.push(unreachable);

    b.at(ok);
    b.store(total, args[0], 4);
    b.ret();
    b.finish()
}

/// Globals of every constant kind: named and packed structs, byte strings, symbol addresses,
/// splats, special floats, wide integers, an external declaration and a region initializer.
pub fn constants_module(ctx: &mut Context) -> ModuleOp {
    use pliron::builtin::{
        attr_interfaces::TypedAttrInterface,
        attributes::{FPDoubleAttr, FPHalfAttr},
        types::FP64Type,
    };
    use pliron_llvm::{
        attributes::{BytesAttr, SplatAttr, SymbolAddrAttr, ZeroAttr},
        types::{VectorType, VectorTypeKind},
    };
    type Elem = Box<dyn TypedAttrInterface>;

    let mut b = Builder::new(ctx, "constants");
    let (i8t, i32t, i64t, i128t, i1t) = (
        int(b.ctx, 8),
        int(b.ctx, 32),
        int(b.ctx, 64),
        int(b.ctx, 128),
        int(b.ctx, 1),
    );
    let (f32, p0, p1) = (f32t(b.ctx), ptr(b.ctx, 0), ptr(b.ctx, 1));
    let f64t: TypeHandle = FP64Type::get(b.ctx).into();
    let f16t: TypeHandle = pliron::builtin::types::FP16Type::get(b.ctx).into();
    let int_attr = |b: &mut Builder, width: u32, v: i64| -> Elem {
        let ty = IntegerType::get(b.ctx, width, Signedness::Signless);
        Box::new(IntegerAttr::new(
            ty,
            APInt::from_i64(v, NonZero::new(width as usize).unwrap()),
        ))
    };
    let global = |b: &mut Builder,
                  name: &str,
                  ty: TypeHandle,
                  init: Option<Box<dyn pliron::attribute::Attribute>>| {
        let g = GlobalOp::new(b.ctx, id(name), ty);
        if let Some(init) = init {
            g.set_attr_llvm_global_linkage(b.ctx, LinkageAttr::InternalLinkage);
            g.set_initializer_value(b.ctx, init);
        }
        b.module.append_operation(b.ctx, g.get_operation(), 0);
        g
    };

    let pair: TypeHandle = StructType::get_named(
        b.ctx,
        id("Pair"),
        Some((vec![i32t, f32], StructLayout::Unpacked)),
    )
    .unwrap()
    .into();
    let elems = vec![
        int_attr(&mut b, 32, -7),
        Box::new(FPSingleAttr::from(0.5)) as Elem,
    ];
    global(
        &mut b,
        "pair",
        pair,
        Some(Box::new(AggregateAttr::new(elems, pair))),
    );

    let packed: TypeHandle =
        StructType::get_unnamed(b.ctx, (vec![i8t, i64t], StructLayout::Packed)).into();
    let elems = vec![int_attr(&mut b, 8, 1), int_attr(&mut b, 64, 2)];
    global(
        &mut b,
        "packed",
        packed,
        Some(Box::new(AggregateAttr::new(elems, packed))),
    );

    let bytes_ty: TypeHandle = ArrayType::get(b.ctx, i8t, 4).into();
    let bytes = global(
        &mut b,
        "bytes",
        bytes_ty,
        Some(Box::new(BytesAttr::new(b"hi\n\0".to_vec()))),
    );
    bytes.set_constant(b.ctx, true);

    let ptrs_ty: TypeHandle = ArrayType::get(b.ctx, p0, 2).into();
    let p0_typed = PointerType::get(b.ctx, 0);
    let elems = vec![
        Box::new(SymbolAddrAttr::new(id("pair"), p0_typed)) as Elem,
        Box::new(ZeroAttr(p0)) as Elem,
    ];
    global(
        &mut b,
        "ptrs",
        ptrs_ty,
        Some(Box::new(AggregateAttr::new(elems, ptrs_ty))),
    );

    let vec_ty = VectorType::get(b.ctx, i32t, 4, VectorTypeKind::Fixed);
    let splat = SplatAttr::new(int_attr(&mut b, 32, 3), vec_ty);
    global(&mut b, "vec", vec_ty.into(), Some(Box::new(splat)));

    global(
        &mut b,
        "inf",
        f64t,
        Some(Box::new(FPDoubleAttr::from(f64::INFINITY))),
    );
    let one_half: pliron::utils::apfloat::Half = "1.0".parse().unwrap();
    global(&mut b, "one", f16t, Some(Box::new(FPHalfAttr(one_half))));
    let wide = int_attr(&mut b, 128, -1);
    global(&mut b, "wide", i128t, Some(wide));
    let flag = int_attr(&mut b, 1, -1);
    global(&mut b, "flag", i1t, Some(flag));
    let ext = global(&mut b, "ext", i32t, None);
    ext.set_address_space(b.ctx, 1);

    let decl_ty = FuncType::get(b.ctx, i32t, vec![i32t], true);
    let decl = FuncOp::new(b.ctx, id("external_fn"), decl_ty);
    decl.set_llvm_symbol_name(b.ctx, "ext::fn".into());
    b.module.append_operation(b.ctx, decl.get_operation(), 0);

    let from_region = GlobalOp::new(b.ctx, id("from_region"), i32t);
    from_region.set_attr_llvm_global_linkage(b.ctx, LinkageAttr::InternalLinkage);
    from_region.add_initializer_region(b.ctx);
    b.module
        .append_operation(b.ctx, from_region.get_operation(), 0);
    let init_block = from_region.get_initializer_block(b.ctx).unwrap();
    b.at(init_block);
    let forty_two = b.const_int(32, 42);
    let ret = ReturnOp::new(b.ctx, Some(forty_two));
    b.push(ret);

    let args = b.kernel("read_all", &[("out", p1)]);
    let addr = AddressOfOp::new(b.ctx, id("pair"), 0);
    let pair_ptr = b.push(addr).unwrap();
    let gep = GetElementPtrOp::new(
        b.ctx,
        pair_ptr,
        vec![GepIndex::Constant(0), GepIndex::Constant(1)],
        pair,
    );
    let field = b.val("field", gep);
    let load = LoadOp::new(b.ctx, field, f32);
    let half = b.val("half", load);
    let to_int = FPToSIOp::new(b.ctx, half, i32t);
    let as_int = b.val("as_int", to_int);
    let addr = AddressOfOp::new(b.ctx, id("ext"), 1);
    let ext_ptr = b.push(addr).unwrap();
    let load = LoadOp::new(b.ctx, ext_ptr, i32t);
    let external = b.val("external", load);
    let zero = ZeroOp::new(b.ctx, pair);
    let zero_pair = b.push(zero).unwrap();
    let poison = PoisonOp::new(b.ctx, i32t);
    let poison = b.push(poison).unwrap();
    let iv = InsertValueOp::new(b.ctx, zero_pair, poison, vec![0]);
    let with_poison = b.val("with_poison", iv);
    let iv = InsertValueOp::new(b.ctx, with_poison, external, vec![0]);
    let filled = b.val("filled", iv);
    let ev = ExtractValueOp::new(b.ctx, filled, vec![0]).unwrap();
    let first = b.val("first", ev);
    let sum = b.add("sum", first, as_int, false, false);
    b.store(sum, args[0], 4);
    b.ret();
    b.finish()
}

/// Atomics, fences, a local (`addrspace(5)`) alloca, volatile accesses, NVVM intrinsics and
/// the remaining arithmetic and cast ops.
pub fn atomics_kernel(ctx: &mut Context) -> ModuleOp {
    use pliron_llvm::{
        attributes::{AtomicOrderingAttr, AtomicRmwKindAttr, SyncScopeAttr},
        op_interfaces::VolatilityOpInterface,
    };
    let scope = |name: &str| SyncScopeAttr::NamedScope(StringAttr::new(name.into()));

    let mut b = Builder::new(ctx, "atomics");
    let (p0, p1) = (ptr(b.ctx, 0), ptr(b.ctx, 1));
    let (i32t, i64t, i16t, f32) = (int(b.ctx, 32), int(b.ctx, 64), int(b.ctx, 16), f32t(b.ctx));
    let args = b.kernel("atomics", &[("out", p1), ("a", i32t), ("f", f32)]);
    let (out, a, f) = (args[0], args[1], args[2]);

    let one = b.const_int(32, 1);
    let alloca = AllocaOp::new(b.ctx, i32t, one, 5);
    alloca.set_alignment(b.ctx, 4);
    let local = b.val("local", alloca);
    let store = StoreOp::new(b.ctx, a, local);
    store.set_volatile(b.ctx, true);
    b.push(store);
    let load = LoadOp::new(b.ctx, local, i32t);
    load.set_volatile(b.ctx, true);
    load.set_alignment(b.ctx, 4);
    let l = b.val("l", load);

    let rmw = AtomicRmwOp::new(
        b.ctx,
        out,
        l,
        AtomicRmwKindAttr::Add,
        AtomicOrderingAttr::Monotonic,
        scope("device"),
    );
    let old = b.val("old", rmw);
    let three = b.const_int(32, 3);
    let cas = AtomicCmpxchgOp::new(
        b.ctx,
        out,
        old,
        three,
        AtomicOrderingAttr::AcqRel,
        AtomicOrderingAttr::Monotonic,
        scope("block"),
    );
    let cas = b.val("cas", cas);
    let ev = ExtractValueOp::new(b.ctx, cas, vec![0]).unwrap();
    let seen = b.val("seen", ev);
    let fence = FenceOp::new(b.ctx, AtomicOrderingAttr::SeqCst, scope("device"));
    b.push(fence);
    let aload = AtomicLoadOp::new(
        b.ctx,
        out,
        i32t,
        AtomicOrderingAttr::Acquire,
        SyncScopeAttr::System,
    );
    aload.set_alignment(b.ctx, 4);
    let acquired = b.val("acquired", aload);
    let void = void(b.ctx);
    b.intrinsic("llvm.nvvm.barrier0", void, vec![]);
    let all = b.const_int(32, -1);
    let clamp = b.const_int(32, 31);
    let shfl = b.intrinsic(
        "llvm.nvvm.shfl.sync.bfly.i32",
        i32t,
        vec![all, acquired, one, clamp],
    );

    let udiv = UDivOp::new(b.ctx, shfl, three);
    let q = b.val("q", udiv);
    let srem = SRemOp::new(b.ctx, q, seen);
    let r = b.val("r", srem);
    let lshr = LShrOp::new(b.ctx, r, one);
    let r = b.val("lshr", lshr);
    let ashr = AShrOp::new(b.ctx, r, one);
    let r = b.val("ashr", ashr);
    let shl = ShlOp::new_with_overflow_flag(
        b.ctx,
        r,
        one,
        IntegerOverflowFlagsAttr {
            nsw: false,
            nuw: true,
        },
    );
    let r = b.val("shl", shl);
    let and = AndOp::new(b.ctx, r, seen);
    let r = b.val("and", and);
    let or = OrOp::new(b.ctx, r, old);
    let r = b.val("or", or);

    let flags: FastmathFlagsAttr = (FastmathFlags::NNAN | FastmathFlags::NINF).into();
    let neg = FNegOp::new_with_fast_math_flags(b.ctx, f, FastmathFlagsAttr::default());
    let neg = b.val("neg", neg);
    let fadd = FAddOp::new_with_fast_math_flags(b.ctx, neg, f, flags);
    let fsum = b.val("fsum", fadd);
    let to_f = SIToFPOp::new(b.ctx, r, f32);
    let rf = b.val("rf", to_f);
    let to_f = UIToFPOp::new_with_nneg(b.ctx, r, f32, true);
    let uf = b.val("uf", to_f);
    let fdiv = FDivOp::new_with_fast_math_flags(b.ctx, rf, uf, FastmathFlagsAttr::default());
    let quot = b.val("quot", fdiv);
    let fsub = FSubOp::new_with_fast_math_flags(b.ctx, quot, fsum, FastmathFlagsAttr::default());
    let diff = b.val("diff", fsub);
    let bits = BitcastOp::new(b.ctx, diff, i32t);
    let bits = b.val("bits", bits);
    let trunc = TruncOp::new(b.ctx, bits, i16t);
    let narrow = b.val("narrow", trunc);
    let sext = SExtOp::new(b.ctx, narrow, i32t);
    let wide = b.val("wide", sext);
    let generic = AddrSpaceCastOp::new(b.ctx, out, p0);
    let generic = b.val("generic", generic);
    let p2i = PtrToIntOp::new(b.ctx, generic, i64t);
    let addr = b.val("addr", p2i);
    let i2p = IntToPtrOp::new(b.ctx, addr, p0);
    let back = b.val("back", i2p);
    let astore = AtomicStoreOp::new(
        b.ctx,
        wide,
        back,
        AtomicOrderingAttr::Release,
        scope("device"),
    );
    b.push(astore);
    b.ret();
    b.finish()
}
