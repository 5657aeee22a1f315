//! The state shared by everything written into one module: its types, symbols, the
//! intrinsics it calls and its debug metadata. Functions, globals and ops all write through
//! it, so it stands below them.

use std::collections::HashMap;

use pliron::r#type::TypeHandle;

use crate::{
    cpu_image::CpuGlue,
    debug_info::DebugInfo,
    error::ExportError,
    symbols::{SymbolKind, Symbols},
    types::TypeWriter,
};

/// State shared by everything written into one module.
#[derive(Default)]
pub(crate) struct ModuleState {
    pub(crate) types: TypeWriter,
    pub(crate) symbols: Symbols,
    /// The intrinsics called, in the order first called: [crate::module] declares them last.
    pub(crate) intrinsics: Vec<(String, TypeHandle)>,
    intrinsic_types: HashMap<String, TypeHandle>,
    /// The debug metadata, when it is written.
    pub(crate) debug: Option<DebugInfo>,
    /// What the CPU flavour collects, when the module is written for the CPU.
    pub(crate) cpu: Option<CpuGlue>,
}

impl ModuleState {
    /// Note a call of intrinsic `name` with function type `ty`, to be declared at the end.
    pub(crate) fn use_intrinsic(&mut self, name: &str, ty: TypeHandle) -> Result<(), ExportError> {
        let clash = || ExportError::SymbolClash {
            symbol: name.to_string(),
        };
        if self.symbols.has_llvm_name(name) {
            return match self.symbols.function_by_llvm_name(name) {
                Some(declared) if declared == ty => Ok(()),
                _ => Err(clash()),
            };
        }
        match self.intrinsic_types.get(name) {
            Some(known) if *known == ty => Ok(()),
            Some(_) => Err(clash()),
            None => {
                self.intrinsic_types.insert(name.to_string(), ty);
                self.intrinsics.push((name.to_string(), ty));
                Ok(())
            }
        }
    }
}

/// The symbol kind of a callee, for call checking.
pub(crate) fn callee_function(state: &ModuleState, symbol: &str) -> Option<(String, TypeHandle)> {
    state.symbols.get(symbol).and_then(|s| match s.kind {
        SymbolKind::Function(ty) => Some((s.llvm_name.clone(), ty)),
        SymbolKind::Global => None,
    })
}
