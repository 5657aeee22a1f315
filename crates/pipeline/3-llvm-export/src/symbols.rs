//! The module's symbol table: pliron symbol names of functions and globals, and the LLVM names
//! they are written under.

use std::collections::{HashMap, HashSet};

use pliron::{builtin::op_interfaces::SymbolOpInterface, context::Context, r#type::TypeHandle};
use pliron_llvm::{
    op_interfaces::LlvmSymbolName,
    ops::{FuncOp, GlobalOp},
};

use crate::error::ExportError;

/// What a symbol names.
#[derive(Clone, Copy)]
pub(crate) enum SymbolKind {
    /// A function, with its `llvm.func` type.
    Function(TypeHandle),
    /// A global variable.
    Global,
}

/// One module-level symbol.
#[derive(Clone)]
pub(crate) struct Symbol {
    pub(crate) llvm_name: String,
    pub(crate) kind: SymbolKind,
}

/// Symbols of the module being exported.
#[derive(Default)]
pub(crate) struct Symbols {
    by_symbol: HashMap<String, Symbol>,
    llvm_names: HashSet<String>,
}

impl Symbols {
    /// Record `func`; its LLVM name is its `llvm_symbol_name` if set, else its symbol name.
    pub(crate) fn add_function(&mut self, ctx: &Context, func: &FuncOp) -> Result<(), ExportError> {
        let symbol = String::from(func.get_symbol_name(ctx));
        let llvm_name = func.llvm_symbol_name(ctx).unwrap_or_else(|| symbol.clone());
        let ty = func.get_type(ctx).into();
        self.add(symbol, llvm_name, SymbolKind::Function(ty))
    }

    /// Record `global`, named like functions are.
    pub(crate) fn add_global(
        &mut self,
        ctx: &Context,
        global: &GlobalOp,
    ) -> Result<(), ExportError> {
        let symbol = String::from(global.get_symbol_name(ctx));
        let llvm_name = global
            .llvm_symbol_name(ctx)
            .unwrap_or_else(|| symbol.clone());
        self.add(symbol, llvm_name, SymbolKind::Global)
    }

    fn add(
        &mut self,
        symbol: String,
        llvm_name: String,
        kind: SymbolKind,
    ) -> Result<(), ExportError> {
        if self.by_symbol.contains_key(&symbol) || !self.llvm_names.insert(llvm_name.clone()) {
            return Err(ExportError::SymbolClash { symbol: llvm_name });
        }
        self.by_symbol.insert(symbol, Symbol { llvm_name, kind });
        Ok(())
    }

    /// The symbol named `symbol` in pliron.
    pub(crate) fn get(&self, symbol: &str) -> Option<&Symbol> {
        self.by_symbol.get(symbol)
    }

    /// The function whose LLVM name is `llvm_name`, if any, with its type.
    pub(crate) fn function_by_llvm_name(&self, llvm_name: &str) -> Option<TypeHandle> {
        self.by_symbol.values().find_map(|s| match s.kind {
            SymbolKind::Function(ty) if s.llvm_name == llvm_name => Some(ty),
            _ => None,
        })
    }

    /// Whether some function or global is written as `llvm_name`.
    pub(crate) fn has_llvm_name(&self, llvm_name: &str) -> bool {
        self.llvm_names.contains(llvm_name)
    }
}
