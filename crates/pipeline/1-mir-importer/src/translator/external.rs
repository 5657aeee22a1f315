//! Calls of functions defined outside Rust. `#[device] extern` declarations (CUDA's `vprintf`,
//! ...) are provided by the GPU's linker: each is declared once in the module (a `mir.func`
//! without body, named after the declared function) so that its calls verify, and the
//! lowering keeps it an external declaration. Any other foreign function exists only as host
//! machine code (the collector's host-only functions): it is defined once, as a function that
//! traps.

use dialect_mir::ops::{FuncOp, TrapOp};
use pliron::builtin::op_interfaces::SymbolOpInterface;
use pliron::builtin::types::FunctionType;
use pliron::identifier::Identifier;
use pliron::linked_list::ContainsLinkedList;
use pliron::op::Op;
use pliron::operation::Operation;
use pliron::r#type::{TypeHandle, Typed};
use pliron::value::Value;

use super::body::FnTranslator;
use super::error::{TResult, unsupported};

impl FnTranslator<'_> {
    /// Declares the external function `name`, called with `args` and returning `result`, in
    /// the module, unless it already is.
    pub(crate) fn declare_external(
        &mut self,
        name: &str,
        args: &[Value],
        result: Option<TypeHandle>,
    ) -> TResult<()> {
        self.module_function(name, args, result, false)
    }

    /// Defines `name`, a foreign function that exists only as host machine code, with the
    /// signature of this call, as a function that traps (once per module).
    pub(crate) fn define_host_only(
        &mut self,
        name: &str,
        args: &[Value],
        result: Option<TypeHandle>,
    ) -> TResult<()> {
        self.module_function(name, args, result, true)
    }

    /// Declares `name` in the module with the signature of a call passing `args` and
    /// returning `result`, or, when `trapping`, defines it with a body that traps; nothing
    /// when the module has it with that signature already.
    fn module_function(
        &mut self,
        name: &str,
        args: &[Value],
        result: Option<TypeHandle>,
        trapping: bool,
    ) -> TResult<()> {
        let arg_types = args.iter().map(|v| v.get_type(self.ctx)).collect();
        let ty = FunctionType::get(self.ctx, arg_types, result.into_iter().collect());
        let Ok(symbol) = Identifier::try_from(name) else {
            unsupported!("an extern function named `{name}` (not a valid symbol name)")
        };
        let module_block = self
            .current_function()
            .get_operation()
            .deref(self.ctx)
            .get_parent_block()
            .expect("a function being translated is in the module");
        let existing = module_block
            .deref(self.ctx)
            .iter(self.ctx)
            .filter_map(|op| Operation::get_op::<FuncOp>(op, self.ctx))
            .find(|func| func.get_symbol_name(self.ctx) == symbol);
        match existing {
            Some(func) if func.func_type(self.ctx) == ty => Ok(()),
            Some(_) => unsupported!(
                "`{name}` declared by an extern block and also defined or declared with \
                 another signature"
            ),
            None if trapping => {
                let func = FuncOp::new(self.ctx, symbol, ty);
                func.get_operation().insert_at_front(module_block, self.ctx);
                let entry = func
                    .entry_block(self.ctx)
                    .expect("a new function has an entry block");
                TrapOp::new(self.ctx)
                    .get_operation()
                    .insert_at_back(entry, self.ctx);
                Ok(())
            }
            None => {
                let decl = FuncOp::new_declaration(self.ctx, symbol, ty);
                decl.get_operation().insert_at_front(module_block, self.ctx);
                Ok(())
            }
        }
    }
}
