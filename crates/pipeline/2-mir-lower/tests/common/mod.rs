//! Helpers shared by the `mir-lower` tests: building `mir` functions, lowering, exporting and
//! compiling to PTX (assembled with `ptxas` when one is installed).

#![allow(dead_code)]

use dialect_mir::{
    ops::{ConstantOp, FuncOp, ReturnOp, StoreOp},
    types::{DisjointSliceType, PtrType, SliceType, bool_type},
};
use dialect_nvvm::{Intrinsic, IntrinsicOp};
use gpu_toolchain::find_ptxas;
use llvm_export::export_module;
use llvm_to_ptx::{PtxOptions, compile_to_ptx, link_libdevice_if_needed};
use pliron::{
    basic_block::BasicBlock,
    builtin::{
        op_interfaces::{OneRegionInterface, SingleBlockRegionInterface},
        ops::ModuleOp,
        types::{FP32Type, FP64Type, FunctionType, IntegerType, Signedness},
    },
    context::{Context, Ptr},
    ident,
    op::Op,
    operation::verify_operation,
    printable::Printable,
    r#type::{TypeHandle, TypedHandle},
    value::Value,
};
use ptx_tools::assemble_with_ptxas;

/// A fresh context with the `mir` and `nvvm` dialects registered.
pub fn context() -> Context {
    let mut ctx = Context::new();
    dialect_mir::register(&mut ctx);
    dialect_nvvm::register(&mut ctx);
    ctx
}

/// `si<width>`.
pub fn si(ctx: &Context, width: u32) -> TypeHandle {
    IntegerType::get(ctx, width, Signedness::Signed).into()
}

/// `ui<width>`.
pub fn ui(ctx: &Context, width: u32) -> TypeHandle {
    IntegerType::get(ctx, width, Signedness::Unsigned).into()
}

/// `i1`, a `bool`.
pub fn boolean(ctx: &Context) -> TypeHandle {
    bool_type(ctx).into()
}

/// `f32`.
pub fn f32t(ctx: &Context) -> TypeHandle {
    FP32Type::get(ctx).into()
}

/// `f64`.
pub fn f64t(ctx: &Context) -> TypeHandle {
    FP64Type::get(ctx).into()
}

/// A generic pointer to `pointee`.
pub fn ptr(ctx: &Context, pointee: TypeHandle) -> TypeHandle {
    PtrType::get_generic(ctx, pointee).into()
}

/// `&[elem]`.
pub fn slice(ctx: &Context, elem: TypeHandle) -> TypeHandle {
    SliceType::get(ctx, elem).into()
}

/// `DisjointSlice<elem>`.
pub fn disjoint(ctx: &Context, elem: TypeHandle) -> TypeHandle {
    DisjointSliceType::get(ctx, elem).into()
}

/// An empty module named `m`.
pub fn module(ctx: &mut Context) -> ModuleOp {
    ModuleOp::new(ctx, ident!("m"))
}

/// A new function appended to `module`, with named parameters; returns it, its entry block and
/// its parameters.
pub fn func(
    ctx: &mut Context,
    module: ModuleOp,
    name: &str,
    params: &[(&str, TypeHandle)],
    results: Vec<TypeHandle>,
    kernel: bool,
) -> (FuncOp, Ptr<BasicBlock>, Vec<Value>) {
    let ty = FunctionType::get(ctx, params.iter().map(|p| p.1).collect(), results);
    let func = FuncOp::new(ctx, name.try_into().unwrap(), ty);
    func.set_kernel(ctx, kernel);
    func.get_operation()
        .insert_at_back(module.get_body(ctx, 0), ctx);
    let entry = func.entry_block(ctx).unwrap();
    let args: Vec<Value> = entry.deref(ctx).arguments().collect();
    for (arg, (name, _)) in args.iter().zip(params) {
        arg.set_name(ctx, Some((*name).try_into().unwrap()));
    }
    (func, entry, args)
}

/// A new block with arguments of `types` at the end of `func`.
pub fn block(
    ctx: &mut Context,
    func: FuncOp,
    label: &str,
    types: Vec<TypeHandle>,
) -> (Ptr<BasicBlock>, Vec<Value>) {
    let block = BasicBlock::new(ctx, Some(label.try_into().unwrap()), types);
    block.insert_at_back(func.get_region(ctx), ctx);
    let args = block.deref(ctx).arguments().collect();
    (block, args)
}

/// Appends ops at the end of a block.
pub struct B<'c> {
    pub ctx: &'c mut Context,
    block: Ptr<BasicBlock>,
}

impl<'c> B<'c> {
    /// A builder appending to `block`.
    pub fn new(ctx: &'c mut Context, block: Ptr<BasicBlock>) -> Self {
        B { ctx, block }
    }

    /// Continue at the end of `block`.
    pub fn at(&mut self, block: Ptr<BasicBlock>) {
        self.block = block;
    }

    /// Append the op that `make` builds.
    pub fn op<O: Op>(&mut self, make: impl FnOnce(&mut Context) -> O) -> O {
        let op = make(self.ctx);
        op.get_operation().insert_at_back(self.block, self.ctx);
        op
    }

    /// Append the op that `make` builds and return its first result.
    pub fn val<O: Op>(&mut self, make: impl FnOnce(&mut Context) -> O) -> Value {
        let op = self.op(make);
        op.get_operation().deref(self.ctx).get_result(0)
    }

    /// An integer constant of type `ty`.
    pub fn int(&mut self, ty: TypeHandle, bits: u128) -> Value {
        let ty = TypedHandle::<IntegerType>::from_handle(ty, self.ctx).unwrap();
        self.val(|ctx| ConstantOp::new_int(ctx, ty, bits))
    }
}

/// Verify `module`, panicking with the error and the module.
pub fn verify(ctx: &Context, module: ModuleOp) {
    if let Err(err) = verify_operation(module.get_operation(), ctx) {
        panic!(
            "{}\n{}",
            err.disp(ctx),
            module.get_operation().deref(ctx).disp(ctx)
        );
    }
}

/// Verify `module`, lower it and return the printed LLVM dialect module.
pub fn lower(ctx: &mut Context, module: ModuleOp) -> String {
    verify(ctx, module);
    if let Err(err) = mir_lower::lower_mir_to_llvm(ctx, module) {
        panic!(
            "lowering failed: {err}\n{}",
            module.get_operation().deref(ctx).disp(ctx)
        );
    }
    verify(ctx, module);
    module.get_operation().deref(ctx).disp(ctx).to_string()
}

/// The textual LLVM IR of a lowered `module`.
pub fn export(ctx: &Context, module: ModuleOp) -> String {
    export_module(ctx, module).unwrap_or_else(|err| {
        panic!(
            "export failed: {err}\n{}",
            module.get_operation().deref(ctx).disp(ctx)
        )
    })
}

/// Link libdevice into `ll` if it calls it, compile it to PTX for sm_90, check that each of
/// `entries` is a `.visible .entry`, and assemble it with `ptxas` when there is one. Returns
/// the PTX.
pub fn check_ptx(ll: &str, entries: &[&str]) -> String {
    let ll = &link_libdevice_if_needed(ll, None, None)
        .unwrap_or_else(|err| panic!("linking libdevice failed: {err}"));
    let ptx = compile_to_ptx(ll, "sm_90", &PtxOptions::default())
        .unwrap_or_else(|err| panic!("llc failed: {err}\n{ll}"));
    for entry in entries {
        assert!(
            ptx.contains(&format!(".visible .entry {entry}(")),
            "no entry {entry} in:\n{ptx}"
        );
    }
    let Some(ptxas) = find_ptxas() else {
        println!("note: ptxas not found, PTX not assembled");
        return ptx;
    };
    if let Err(e) = assemble_with_ptxas(&ptxas, &ptx, "sm_90") {
        panic!("{e}\n{ptx}");
    }
    ptx
}

/// Appends a kernel named after `intrinsic` to `m`: it takes one parameter per operand and,
/// when the intrinsic has a result, a pointer that the result is stored to.
pub fn add_intrinsic_kernel(ctx: &mut Context, m: ModuleOp, intrinsic: &'static Intrinsic) {
    let mut params: Vec<(String, _)> = intrinsic
        .operands
        .iter()
        .enumerate()
        .map(|(i, scalar)| (format!("a{i}"), scalar.mir_type(ctx)))
        .collect();
    if let Some(result) = intrinsic.result {
        let ty = result.mir_type(ctx);
        params.push(("out".into(), ptr(ctx, ty)));
    }
    let named: Vec<(&str, _)> = params.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    let (_, entry, args) = func(ctx, m, intrinsic.name, &named, vec![], true);
    let mut b = B::new(ctx, entry);
    let operands = args[..intrinsic.operands.len()].to_vec();
    let op = b.op(|ctx| IntrinsicOp::new(ctx, intrinsic, operands));
    if let Some(result) = op.result(b.ctx) {
        let out = *args.last().unwrap();
        b.op(|ctx| StoreOp::new(ctx, result, out));
    }
    b.op(|ctx| ReturnOp::new(ctx, None));
}
