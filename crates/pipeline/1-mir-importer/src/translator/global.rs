//! Device globals: one `mir.global` per allocation that device code refers to.
//!
//! rustc evaluates every constant to an allocation: bytes, and pointers into other allocations
//! (provenance). An allocation is a promoted constant or a `&CONST` (memory), a string or
//! byte-string literal (memory), a `static` item, a vtable, or a function. The
//! [GlobalRegistry] of a module gives each one, recursively through the pointers it holds, its
//! global (or, for a function, its symbol): immutable memory is deduplicated by content, each
//! `static` is its own global (writable if it is a `static mut` or has interior mutability).
//!
//! Shared memory is a `static mut` of `cuda_device::shared::SharedArray` type: a global in
//! address space 3 without initial content, aligned as its `ALIGN` parameter asks. The block's
//! dynamic shared memory is `cuda_device`'s static of type `DynamicSharedMemory`: an external
//! shared array, sized at launch.

use std::collections::HashMap;

use dialect_mir::attributes::{GlobalInitAttr, GlobalLayoutAttr, Relocation};
use dialect_mir::ops::{FuncOp, GlobalContent, GlobalOp, ReturnOp};
use dialect_nvvm::IntrinsicOp;
use pliron::basic_block::BasicBlock;
use pliron::context::{Context, Ptr};
use pliron::identifier::Identifier;
use pliron::op::Op;
use pliron::operation::Operation;
use rustc_public::CrateDef;
use rustc_public::mir::Mutability;
use rustc_public::mir::alloc::{AllocId, GlobalAlloc};
use rustc_public::mir::mono::{Instance, InstanceKind, StaticDef};
use rustc_public::ty::{Allocation, GenericArgKind, RigidTy, Ty, TyKind};

use super::error::{TResult, unsupported};
use super::types::layout;
use crate::intrinsics;

/// NVPTX's global memory, where constants and statics live.
pub const ADDRSPACE_GLOBAL: u32 = 1;
/// NVPTX's shared memory (one instance per thread block).
pub const ADDRSPACE_SHARED: u32 = 3;
/// The alignment of the block's dynamic shared memory, as CUDA guarantees it.
pub const DYNAMIC_SHARED_ALIGN: u64 = 16;

/// What a pointer in a constant points to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// A `mir.global`.
    Global(Identifier),
    /// A device function (its export name).
    Function(Identifier),
    /// No memory: the pointer's address is its offset. A `TypeId` is pointers whose
    /// provenance names the type (for const evaluation) and whose offsets are the bits of the
    /// type's hash, which is all that exists at run time, as rustc's own backends emit it.
    Address,
}

/// What device code gets for the address of a formatting trait's `fmt` method (see
/// [super::fmt_descriptor]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormattingMethods {
    /// The compiled method: without panic messages nothing reads descriptors.
    Compiled,
    /// Its descriptor; the method is not compiled (panic messages, and no code that formats).
    Descriptors,
    /// The compiled method, whose descriptor goes into the module's table of formatting
    /// methods for panic messages to find (panic messages, and code that formats).
    CompiledWithTable,
}

/// The identity of an immutable memory allocation: equal contents share one global.
#[derive(Clone, Hash, PartialEq, Eq)]
struct MemoryKey {
    init: GlobalInitAttr,
    align: u64,
}

/// The globals of one module, shared by every function translated into it.
pub struct GlobalRegistry {
    module_block: Ptr<BasicBlock>,
    /// The last global inserted: globals go before the functions, in creation order.
    last: Option<Ptr<Operation>>,
    memory: HashMap<MemoryKey, Identifier>,
    mutable_memory: HashMap<AllocId, Identifier>,
    statics: HashMap<StaticDef, Identifier>,
    /// The device functions made for GPU intrinsics whose address is taken.
    intrinsic_wrappers: HashMap<&'static str, Identifier>,
    /// The GPU architecture (intrinsics it lacks get no wrapper).
    gpu: dialect_nvvm::Target,
    /// What a formatting method's address is.
    formatting: FormattingMethods,
    /// The compiled formatting methods whose addresses were taken, with their descriptors'
    /// globals ([FormattingMethods::CompiledWithTable]).
    formatting_methods: Vec<(Identifier, Identifier)>,
    /// The symbol of `cuda_device::panic::FORMATTING_METHODS`, once device code refers to it:
    /// its global is written by [Self::finish], when every method is known.
    formatting_table: Option<Identifier>,
    next_id: usize,
}

impl GlobalRegistry {
    /// An empty registry for the module whose body is `module_block`, built for `gpu`.
    pub fn new(module_block: Ptr<BasicBlock>, gpu: dialect_nvvm::Target) -> Self {
        Self {
            module_block,
            last: None,
            memory: HashMap::new(),
            mutable_memory: HashMap::new(),
            statics: HashMap::new(),
            intrinsic_wrappers: HashMap::new(),
            gpu,
            formatting: FormattingMethods::Compiled,
            formatting_methods: Vec::new(),
            formatting_table: None,
            next_id: 0,
        }
    }

    /// Sets what formatting methods' addresses are: descriptors with panic messages, unless
    /// device code also formats for real (`device_formats`).
    pub fn set_formatting(&mut self, panic_messages: bool, device_formats: bool) {
        self.formatting = match (panic_messages, device_formats) {
            (false, _) => FormattingMethods::Compiled,
            (true, false) => FormattingMethods::Descriptors,
            (true, true) => FormattingMethods::CompiledWithTable,
        };
    }

    /// What the address of the function `instance` is: its symbol ([Target::Function]), or
    /// for a formatting method with [FormattingMethods::Descriptors] its descriptor's global
    /// ([Target::Global]).
    pub fn function_address(&mut self, ctx: &mut Context, instance: &Instance) -> TResult<Target> {
        let descriptor = match self.formatting {
            FormattingMethods::Compiled => None,
            _ => super::fmt_descriptor::descriptor_of_stable(instance),
        };
        let Some(bytes) = descriptor else {
            return self.function(ctx, instance).map(Target::Function);
        };
        if self.formatting == FormattingMethods::Descriptors {
            return Ok(Target::Global(self.bytes(ctx, bytes, 8)));
        }
        let function = self.function(ctx, instance)?;
        if !self.formatting_methods.iter().any(|(f, _)| *f == function) {
            let descriptor = self.bytes(ctx, bytes, 8);
            self.formatting_methods.push((function.clone(), descriptor));
        }
        Ok(Target::Function(function))
    }

    /// Writes what could only be written once every function was translated: the table of
    /// formatting methods, if device code refers to it. Pairs of a method's address and its
    /// descriptor's, then a pair of a null address and what an address not in the table
    /// stands for: itself, a descriptor (null), or an opaque value.
    pub fn finish(&mut self, ctx: &mut Context) {
        let Some(name) = self.formatting_table.take() else {
            return;
        };
        let methods = std::mem::take(&mut self.formatting_methods);
        let not_found = match self.formatting {
            FormattingMethods::CompiledWithTable => {
                Some(self.bytes(ctx, super::fmt_descriptor::unknown_descriptor(), 8))
            }
            _ => None,
        };
        // Word `i` of the table holds its target's address; a word without one is null.
        let words: Vec<Option<Identifier>> = methods
            .into_iter()
            .flat_map(|(function, descriptor)| [Some(function), Some(descriptor)])
            .chain([None, not_found])
            .collect();
        let relocations = words
            .iter()
            .enumerate()
            .filter_map(|(i, target)| {
                target.clone().map(|target| Relocation {
                    offset: 8 * i as u64,
                    target,
                    addend: 0,
                })
            })
            .collect();
        let init = GlobalInitAttr {
            bytes: vec![0; 8 * words.len()],
            relocations,
        };
        let layout = GlobalLayoutAttr {
            size: init.bytes.len() as u64,
            align: 8,
            address_space: ADDRSPACE_GLOBAL,
        };
        self.insert(ctx, &name, layout, false, GlobalContent::Init(init));
    }

    /// The symbol of the device function whose address is `instance`'s: its own, or for a
    /// GPU intrinsic stub (which has no body on the device) a wrapper function that performs
    /// the intrinsic, made once per module, so that it can be called through a pointer.
    pub fn function(&mut self, ctx: &mut Context, instance: &Instance) -> TResult<Identifier> {
        let path = instance.name();
        let Some(intrinsic) = intrinsics::lookup(&path) else {
            return function_symbol(instance);
        };
        if let Some(name) = self.intrinsic_wrappers.get(intrinsic.name) {
            return Ok(name.clone());
        }
        self.gpu
            .check(intrinsic)
            .map_err(|err| super::TranslationError::unsupported(err.to_string()))?;
        let name = Identifier::try_from(format!("__oxide_intrinsic_{}", intrinsic.name))
            .expect("intrinsic names are identifiers");
        let params: Vec<_> = intrinsic.operands.iter().map(|s| s.mir_type(ctx)).collect();
        let results: Vec<_> = intrinsic.result.iter().map(|s| s.mir_type(ctx)).collect();
        let fn_ty = pliron::builtin::types::FunctionType::get(ctx, params, results);
        let func = FuncOp::new(ctx, name.clone(), fn_ty);
        func.get_operation().insert_at_back(self.module_block, ctx);
        let entry = func
            .entry_block(ctx)
            .expect("a new function has an entry block");
        let args: Vec<_> = (0..intrinsic.operands.len())
            .map(|i| entry.deref(ctx).get_argument(i))
            .collect();
        let call = IntrinsicOp::new(ctx, intrinsic, args);
        call.get_operation().insert_at_back(entry, ctx);
        let result = call.result(ctx);
        let ret = ReturnOp::new(ctx, result);
        ret.get_operation().insert_at_back(entry, ctx);
        self.intrinsic_wrappers.insert(intrinsic.name, name.clone());
        Ok(name)
    }

    /// What `alloc_id` is, as a pointer target: its global (created with everything it points
    /// to) or the function it names.
    pub fn target(&mut self, ctx: &mut Context, alloc_id: AllocId) -> TResult<Target> {
        match GlobalAlloc::from(alloc_id) {
            GlobalAlloc::Memory(alloc) => {
                self.memory(ctx, &alloc, Some(alloc_id)).map(Target::Global)
            }
            GlobalAlloc::Static(def) => self.static_item(ctx, def).map(Target::Global),
            vtable @ GlobalAlloc::VTable(..) => {
                let Some(memory) = vtable.vtable_allocation() else {
                    unsupported!("a vtable that rustc could not build")
                };
                self.target(ctx, memory)
            }
            GlobalAlloc::Function(instance) => self.function_address(ctx, &instance),
            GlobalAlloc::TypeId { .. } => Ok(Target::Address),
        }
    }

    /// The global of the vtable of `ty` as the trait object type `dyn_ty`.
    pub fn vtable(&mut self, ctx: &mut Context, ty: Ty, dyn_ty: Ty) -> TResult<Identifier> {
        let vtable = GlobalAlloc::VTable(ty, dyn_ty.kind().trait_principal());
        let Some(alloc_id) = vtable.vtable_allocation() else {
            unsupported!("the vtable of `{ty}` as `{dyn_ty}`")
        };
        match self.target(ctx, alloc_id)? {
            Target::Global(name) => Ok(name),
            Target::Function(name) => unsupported!("a vtable that is the function `{name}`"),
            Target::Address => unsupported!("a vtable that is an integer address"),
        }
    }

    /// The global holding `alloc`, a constant's own memory (a `&str` value, a `&[T]` value...),
    /// which the translator reads pointers out of.
    pub fn constant(&mut self, ctx: &mut Context, alloc: &Allocation) -> TResult<Identifier> {
        self.memory(ctx, alloc, None)
    }

    /// An immutable global holding `bytes` (shared by content), aligned to `align`: a
    /// formatting descriptor (see [super::fmt_descriptor]).
    pub fn bytes(&mut self, ctx: &mut Context, bytes: Vec<u8>, align: u64) -> Identifier {
        let init = GlobalInitAttr {
            bytes,
            relocations: vec![],
        };
        let key = MemoryKey {
            init: init.clone(),
            align,
        };
        if let Some(name) = self.memory.get(&key) {
            return name.clone();
        }
        let name = self.fresh_name("const");
        let layout = GlobalLayoutAttr {
            size: init.bytes.len() as u64,
            align,
            address_space: ADDRSPACE_GLOBAL,
        };
        self.insert(ctx, &name, layout, false, GlobalContent::Init(init));
        self.memory.insert(key, name.clone());
        name
    }

    /// The global of a memory allocation; immutable ones are shared by content.
    fn memory(
        &mut self,
        ctx: &mut Context,
        alloc: &Allocation,
        id: Option<AllocId>,
    ) -> TResult<Identifier> {
        let mutable = alloc.mutability == Mutability::Mut;
        if mutable && let Some(name) = id.and_then(|id| self.mutable_memory.get(&id)) {
            return Ok(name.clone());
        }
        let init = self.init(ctx, alloc)?;
        let key = MemoryKey {
            init: init.clone(),
            align: alloc.align,
        };
        if !mutable && let Some(name) = self.memory.get(&key) {
            return Ok(name.clone());
        }
        let name = self.fresh_name("const");
        let layout = GlobalLayoutAttr {
            size: alloc.bytes.len() as u64,
            align: alloc.align.max(1),
            address_space: ADDRSPACE_GLOBAL,
        };
        self.insert(ctx, &name, layout, mutable, GlobalContent::Init(init));
        match id.filter(|_| mutable) {
            Some(id) => self.mutable_memory.insert(id, name.clone()),
            None => self.memory.insert(key, name.clone()),
        };
        Ok(name)
    }

    /// The global of a `static` item (shared memory and the dynamic shared memory included).
    fn static_item(&mut self, ctx: &mut Context, def: StaticDef) -> TResult<Identifier> {
        if let Some(name) = self.statics.get(&def) {
            return Ok(name.clone());
        }
        let name = Identifier::try_from(crate::naming::static_symbol(def)).map_err(|_| {
            super::TranslationError::unsupported(format!(
                "the static `{}` (its symbol is not a valid identifier)",
                def.name()
            ))
        })?;
        // Registered before its initializer is walked: statics may point to each other.
        self.statics.insert(def, name.clone());
        if is_nested_static(def) {
            // Memory that a static's initializer creates and that stays writable (`&mut [..]`
            // in a `static mut`, a cell): rustc makes it a static of its own, without a type.
            let alloc = match def.eval_initializer() {
                Ok(alloc) => alloc,
                Err(e) => unsupported!("memory of a static (rustc could not evaluate it: {e})"),
            };
            let init = self.init(ctx, &alloc)?;
            let layout = GlobalLayoutAttr {
                size: alloc.bytes.len() as u64,
                align: alloc.align.max(1),
                address_space: ADDRSPACE_GLOBAL,
            };
            self.insert(ctx, &name, layout, true, GlobalContent::Init(init));
            return Ok(name);
        }
        let ty = def.ty();
        if is_formatting_method_table(ty) {
            self.formatting_table = Some(name.clone());
            return Ok(name);
        }
        let shape = layout(ty)?;
        match shared_memory_kind(ty) {
            Some(SharedKind::Dynamic) => {
                let layout = GlobalLayoutAttr {
                    size: 0,
                    align: DYNAMIC_SHARED_ALIGN,
                    address_space: ADDRSPACE_SHARED,
                };
                self.insert(ctx, &name, layout, true, GlobalContent::Extern);
                return Ok(name);
            }
            Some(SharedKind::Array { align }) => {
                let Ok(init) = def.eval_initializer() else {
                    unsupported!("the static `{}` (rustc could not evaluate it)", def.name())
                };
                if init.mutability != Mutability::Mut {
                    unsupported!(
                        "the `SharedArray` `{}` declared as a plain `static`: shared memory is \
                         declared `static mut NAME: SharedArray<T, N> = SharedArray::UNINIT;`",
                        def.name()
                    );
                }
                let layout = GlobalLayoutAttr {
                    size: shape.size.bytes() as u64,
                    align: align.max(shape.abi_align).max(1),
                    address_space: ADDRSPACE_SHARED,
                };
                self.insert(ctx, &name, layout, true, GlobalContent::Uninit);
                return Ok(name);
            }
            None => {}
        }
        let alloc = match def.eval_initializer() {
            Ok(alloc) => alloc,
            Err(e) => unsupported!(
                "the static `{}` (rustc could not evaluate it: {e})",
                def.name()
            ),
        };
        let init = self.init(ctx, &alloc)?;
        let layout = GlobalLayoutAttr {
            size: alloc.bytes.len() as u64,
            align: alloc.align.max(shape.abi_align).max(1),
            address_space: ADDRSPACE_GLOBAL,
        };
        let mutable = alloc.mutability == Mutability::Mut;
        self.insert(ctx, &name, layout, mutable, GlobalContent::Init(init));
        Ok(name)
    }

    /// The initial content of `alloc`, with a global (or function) for every pointer in it.
    fn init(&mut self, ctx: &mut Context, alloc: &Allocation) -> TResult<GlobalInitAttr> {
        let bytes: Vec<u8> = alloc.bytes.iter().map(|b| b.unwrap_or(0)).collect();
        let mut relocations = Vec::with_capacity(alloc.provenance.ptrs.len());
        for (offset, prov) in &alloc.provenance.ptrs {
            let addend = read_u64(&bytes, *offset)?;
            let target = match self.target(ctx, prov.0)? {
                Target::Global(name) | Target::Function(name) => name,
                // The bytes already hold the address.
                Target::Address => continue,
            };
            relocations.push(Relocation {
                offset: *offset as u64,
                target,
                addend,
            });
        }
        relocations.sort_by_key(|r| r.offset);
        Ok(GlobalInitAttr { bytes, relocations })
    }

    fn fresh_name(&mut self, prefix: &str) -> Identifier {
        let name = format!("__oxide_{prefix}_{}", self.next_id);
        self.next_id += 1;
        Identifier::try_from(name).expect("a valid identifier")
    }

    /// A new `mir.global`, after the globals already there and before the functions.
    fn insert(
        &mut self,
        ctx: &mut Context,
        name: &Identifier,
        layout: GlobalLayoutAttr,
        mutable: bool,
        content: GlobalContent,
    ) {
        let global = GlobalOp::new(ctx, name.clone(), layout, mutable, content);
        let op = global.get_operation();
        match self.last {
            Some(last) => op.insert_after(ctx, last),
            None => op.insert_at_front(self.module_block, ctx),
        }
        self.last = Some(op);
    }
}

/// Whether `def` is a nested static: an allocation created by another static's initializer,
/// which rustc gives a definition (but no type) of its own.
fn is_nested_static(def: StaticDef) -> bool {
    rustc_middle::ty::tls::with(|tcx| {
        let def_id = rustc_public::rustc_internal::internal(tcx, def.def_id());
        matches!(
            tcx.def_kind(def_id),
            rustc_hir::def::DefKind::Static { nested: true, .. }
        )
    })
}

/// The symbol of a function whose address device code takes.
pub(crate) fn function_symbol(instance: &Instance) -> TResult<Identifier> {
    let path = instance.name();
    if instance.kind == InstanceKind::Intrinsic {
        unsupported!("the address of the compiler intrinsic `{path}`")
    }
    if intrinsics::is_intrinsic(&path) {
        unsupported!(
            "the address of the generic atomic intrinsic `{path}` (call it directly, or through a \
             closure)"
        )
    }
    let name = crate::naming::export_name(instance, false);
    Identifier::try_from(name.as_str()).map_err(|_| {
        super::TranslationError::unsupported(format!(
            "the address of `{path}` (its symbol `{name}` is not a valid identifier)"
        ))
    })
}

/// The pointer-sized little-endian value at `offset` of `bytes`.
fn read_u64(bytes: &[u8], offset: usize) -> TResult<u64> {
    match bytes.get(offset..offset + 8) {
        Some(b) => Ok(u64::from_le_bytes(b.try_into().expect("eight bytes"))),
        None => unsupported!("a pointer that does not fit in its allocation"),
    }
}

/// What kind of shared memory a static of type `ty` is, if any.
enum SharedKind {
    /// A `SharedArray` aligned to at least `align`.
    Array { align: u64 },
    /// The block's dynamic shared memory.
    Dynamic,
}

/// Whether `ty` is `cuda_device::panic::FormattingMethodTable`, whose one static the compiler
/// fills ([GlobalRegistry::finish]).
fn is_formatting_method_table(ty: Ty) -> bool {
    matches!(ty.kind(), TyKind::RigidTy(RigidTy::Adt(def, _))
        if def.krate().name == "cuda_device" && def.trimmed_name() == "FormattingMethodTable")
}

fn shared_memory_kind(ty: Ty) -> Option<SharedKind> {
    let TyKind::RigidTy(RigidTy::Adt(def, args)) = ty.kind() else {
        return None;
    };
    if def.krate().name != "cuda_device" {
        return None;
    }
    match def.trimmed_name().as_str() {
        "DynamicSharedMemory" => Some(SharedKind::Dynamic),
        "SharedArray" => {
            let align = match args.0.get(2) {
                Some(GenericArgKind::Const(c)) => c.eval_target_usize().unwrap_or(0),
                _ => 0,
            };
            Some(SharedKind::Array { align })
        }
        _ => None,
    }
}
