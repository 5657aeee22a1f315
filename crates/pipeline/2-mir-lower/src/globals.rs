//! `mir.global` -> `llvm.global`.
//!
//! A global without pointers is an `[N x i8]` initialised with its bytes. A global holding
//! pointers is a packed struct of byte runs and `ptr`s, built in an initializer region: each
//! pointer is the target's address (`llvm.addressof`), converted to a generic pointer when
//! the target lives in another address space (Rust pointers are generic; PTX writes
//! `generic(name)`), plus the addend as a byte offset. Shared memory has no initializer
//! (`undef`); the dynamic shared memory is an external `[0 x i8]`.

use std::collections::HashMap;

use dialect_mir::{
    attributes::GlobalInitAttr,
    ops::{GlobalContent, GlobalOp},
};
use pliron::{
    builtin::{
        op_interfaces::{SingleBlockRegionInterface, SymbolOpInterface},
        ops::ModuleOp,
    },
    context::Context,
    identifier::Identifier,
    irbuild::{
        inserter::{IRInserter, Inserter},
        listener::DummyListener,
    },
    linked_list::ContainsLinkedList,
    op::Op,
    operation::Operation,
    r#type::TypeHandle,
    value::Value,
};
use pliron_llvm::{
    attributes::{BytesAttr, LinkageAttr, UndefAttr},
    op_interfaces::{AlignableOpInterface, CastOpInterface},
    ops::{
        AddrSpaceCastOp, AddressOfOp, ConstantOp, GepIndex, GetElementPtrOp,
        GlobalOp as LlvmGlobalOp, InsertValueOp, ReturnOp, UndefOp,
    },
    types::{ArrayType, PointerType, StructLayout, StructType},
};

use crate::{error::LoweringError, types::int_type};

/// The address space of every global of a module, by symbol.
pub type GlobalSpaces = HashMap<Identifier, u32>;

/// Replace every `mir.global` of `module` by an `llvm.global`; returns their address spaces.
pub fn lower_globals(ctx: &mut Context, module: ModuleOp) -> Result<GlobalSpaces, LoweringError> {
    let globals: Vec<GlobalOp> = module
        .get_body(ctx, 0)
        .deref(ctx)
        .iter(ctx)
        .filter_map(|op| Operation::get_op::<GlobalOp>(op, ctx))
        .collect();
    let spaces: GlobalSpaces = globals
        .iter()
        .map(|g| (g.get_symbol_name(ctx), g.layout(ctx).address_space))
        .collect();
    for global in globals {
        let lowered = lower_global(ctx, &global, &spaces)?;
        lowered
            .get_operation()
            .insert_before(ctx, global.get_operation());
        Operation::erase(global.get_operation(), ctx);
    }
    Ok(spaces)
}

fn lower_global(
    ctx: &mut Context,
    global: &GlobalOp,
    spaces: &GlobalSpaces,
) -> Result<LlvmGlobalOp, LoweringError> {
    let name = global.get_symbol_name(ctx);
    let layout = global.layout(ctx);
    let bytes_ty = |ctx: &Context, n: u64| ArrayType::get(ctx, int_type(ctx, 8), n).into();
    let content = global.content(ctx);
    let ty = match &content {
        GlobalContent::Init(init) if !init.relocations.is_empty() => {
            struct_type(ctx, &pieces(init))
        }
        _ => bytes_ty(ctx, layout.size),
    };
    let lowered = LlvmGlobalOp::new(ctx, name.clone(), ty);
    lowered.set_address_space(ctx, layout.address_space);
    lowered.set_constant(ctx, !global.is_mutable(ctx));
    lowered.set_alignment(ctx, u32::try_from(layout.align).unwrap_or(u32::MAX));
    match content {
        GlobalContent::Extern => {
            lowered.set_attr_llvm_global_linkage(ctx, LinkageAttr::ExternalLinkage);
        }
        GlobalContent::Uninit => {
            lowered.set_attr_llvm_global_linkage(ctx, LinkageAttr::InternalLinkage);
            lowered.set_initializer_value(ctx, Box::new(UndefAttr(ty)));
        }
        GlobalContent::Init(init) if init.relocations.is_empty() => {
            // The panic record's address is written by the host: it must stay visible (and
            // never be folded to its initial 0).
            let linkage = if name.to_string() == reserved_oxide_symbols::PANIC_RECORD_SYMBOL {
                LinkageAttr::ExternalLinkage
            } else {
                LinkageAttr::InternalLinkage
            };
            lowered.set_attr_llvm_global_linkage(ctx, linkage);
            lowered.set_initializer_value(ctx, Box::new(BytesAttr::new(init.bytes)));
        }
        GlobalContent::Init(init) => {
            lowered.set_attr_llvm_global_linkage(ctx, LinkageAttr::InternalLinkage);
            build_initializer(ctx, &lowered, ty, &init, spaces).map_err(|reason| {
                LoweringError::Global {
                    global: name.to_string(),
                    reason,
                }
            })?;
        }
    }
    Ok(lowered)
}

/// A run of plain bytes or one pointer of an initialised global, in memory order.
enum Piece<'a> {
    Bytes(&'a [u8]),
    Pointer { target: &'a Identifier, addend: u64 },
}

/// The pieces of `init`: byte runs between its relocations, and the relocations.
fn pieces(init: &GlobalInitAttr) -> Vec<Piece<'_>> {
    let mut pieces = vec![];
    let mut at = 0;
    for relocation in &init.relocations {
        let offset = relocation.offset as usize;
        if offset > at {
            pieces.push(Piece::Bytes(&init.bytes[at..offset]));
        }
        pieces.push(Piece::Pointer {
            target: &relocation.target,
            addend: relocation.addend,
        });
        at = offset + dialect_mir::types::POINTER_SIZE as usize;
    }
    if at < init.bytes.len() {
        pieces.push(Piece::Bytes(&init.bytes[at..]));
    }
    pieces
}

/// The packed struct of `pieces`.
fn struct_type(ctx: &Context, pieces: &[Piece]) -> TypeHandle {
    let fields = pieces
        .iter()
        .map(|piece| match piece {
            Piece::Bytes(bytes) => ArrayType::get(ctx, int_type(ctx, 8), bytes.len() as u64).into(),
            Piece::Pointer { .. } => PointerType::get(ctx, 0).into(),
        })
        .collect();
    StructType::get_unnamed(ctx, (fields, StructLayout::Packed)).into()
}

/// The initializer region of `lowered`: its pieces inserted one by one into an `undef` of the
/// packed struct `ty`.
fn build_initializer(
    ctx: &mut Context,
    lowered: &LlvmGlobalOp,
    ty: TypeHandle,
    init: &GlobalInitAttr,
    spaces: &GlobalSpaces,
) -> Result<(), String> {
    lowered.add_initializer_region(ctx);
    let block = lowered
        .get_initializer_block(ctx)
        .expect("the region was just added");
    let mut inserter = IRInserter::<DummyListener>::new_at_block_end(block);
    let mut value = |ctx: &mut Context, op: &dyn Op| -> Value {
        inserter.append_operation(ctx, op.get_operation());
        op.get_operation().deref(ctx).get_result(0)
    };
    let undef = UndefOp::new(ctx, ty);
    let mut aggregate = value(ctx, &undef);
    for (index, piece) in pieces(init).into_iter().enumerate() {
        let element = match piece {
            Piece::Bytes(bytes) => {
                let constant = ConstantOp::new(ctx, Box::new(BytesAttr::new(bytes.to_vec())));
                value(ctx, &constant)
            }
            Piece::Pointer { target, addend } => {
                let space = spaces.get(target).copied().unwrap_or(0);
                let address = AddressOfOp::new(ctx, target.clone(), space);
                let mut pointer = value(ctx, &address);
                if space != 0 {
                    let generic = PointerType::get(ctx, 0).into();
                    let cast = AddrSpaceCastOp::new(ctx, pointer, generic);
                    pointer = value(ctx, &cast);
                }
                if addend != 0 {
                    let offset = u32::try_from(addend)
                        .map_err(|_| format!("a pointer {addend} bytes into `{target}`"))?;
                    let gep = GetElementPtrOp::new(
                        ctx,
                        pointer,
                        vec![GepIndex::Constant(offset)],
                        int_type(ctx, 8),
                    );
                    pointer = value(ctx, &gep);
                }
                pointer
            }
        };
        let insert = InsertValueOp::new(ctx, aggregate, element, vec![index as u32]);
        aggregate = value(ctx, &insert);
    }
    let ret = ReturnOp::new(ctx, Some(aggregate));
    inserter.append_operation(ctx, ret.get_operation());
    Ok(())
}
