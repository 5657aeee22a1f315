//! The cuda-oxide codegen backend.
//!
//! rustc loads this library with `-Zcodegen-backend=<path>` and calls
//! [`__rustc_codegen_backend`]. The backend wraps rustc's own LLVM backend and delegates every
//! method to it, except that [`CodegenBackend::codegen_crate`] first looks for device code in
//! the crate: when the crate holds `#[kernel]` or `#[device]` functions, the
//! [`collector`] finds everything the GPU needs and [`device_codegen`] hands it to the device
//! pipeline. Host code always goes through LLVM exactly as it would without this backend.
//! The PTX a crate's kernels compile to is [`embed`]ded in the crate's host artifacts by
//! [`CodegenBackend::join_codegen`].

#![feature(rustc_private)]

extern crate rustc_abi;
extern crate rustc_codegen_llvm;
extern crate rustc_codegen_ssa;
extern crate rustc_const_eval;
extern crate rustc_data_structures;
extern crate rustc_driver;
extern crate rustc_hir;
extern crate rustc_index;
extern crate rustc_metadata;
extern crate rustc_middle;
extern crate rustc_public;
extern crate rustc_session;
extern crate rustc_span;
extern crate rustc_target;

pub mod collector;
pub mod config;
pub mod crate_rules;
pub mod device_codegen;
pub mod embed;
pub mod kernel_params;

use std::any::Any;

use rustc_codegen_ssa::traits::CodegenBackend;
use rustc_codegen_ssa::{CompiledModules, CrateInfo, TargetConfig};
use rustc_data_structures::fx::FxIndexMap;
use rustc_metadata::EncodedMetadata;
use rustc_metadata::creader::MetadataLoaderDyn;
use rustc_middle::dep_graph::{WorkProduct, WorkProductId};
use rustc_middle::ty::TyCtxt;
use rustc_middle::util::Providers;
use rustc_session::Session;
use rustc_session::config::{CrateType, OutputFilenames, PrintRequest};
use rustc_span::Symbol;
use rustc_span::def_id::LOCAL_CRATE;

use crate::config::CudaCodegenConfig;
use crate::embed::{EmbeddedPtx, OngoingWithPtx};

/// rustc's LLVM backend, plus the device path for crates with kernels.
pub struct CudaCodegenBackend {
    config: CudaCodegenConfig,
    llvm: Box<dyn CodegenBackend>,
}

impl CodegenBackend for CudaCodegenBackend {
    fn name(&self) -> &'static str {
        "cuda-oxide"
    }

    fn init(&self, sess: &Session) {
        // The generated PTX depends on these variables, and cargo replays a fresh crate's
        // earlier compiler output: declaring them as inputs makes cargo rebuild when they
        // change (a new target, verbosity turned off) instead of serving stale results.
        let mut env_depinfo = sess.env_depinfo.borrow_mut();
        for name in config::VARIABLES {
            let value = std::env::var(name).ok();
            env_depinfo.insert((Symbol::intern(name), value.as_deref().map(Symbol::intern)));
        }
        drop(env_depinfo);
        self.llvm.init(sess)
    }

    fn print(&self, req: &PrintRequest, out: &mut String, sess: &Session) {
        self.llvm.print(req, out, sess)
    }

    fn target_config(&self, sess: &Session) -> TargetConfig {
        self.llvm.target_config(sess)
    }

    fn supported_crate_types(&self, sess: &Session) -> Vec<CrateType> {
        self.llvm.supported_crate_types(sess)
    }

    fn print_passes(&self) {
        self.llvm.print_passes()
    }

    fn print_version(&self) {
        self.llvm.print_version()
    }

    fn replaced_intrinsics(&self) -> Vec<Symbol> {
        self.llvm.replaced_intrinsics()
    }

    fn thin_lto_supported(&self) -> bool {
        self.llvm.thin_lto_supported()
    }

    fn has_zstd(&self) -> bool {
        self.llvm.has_zstd()
    }

    fn has_mnemonic(&self, sess: &Session, mnemonic: &str) -> bool {
        self.llvm.has_mnemonic(sess, mnemonic)
    }

    fn metadata_loader(&self) -> Box<MetadataLoaderDyn> {
        self.llvm.metadata_loader()
    }

    fn provide(&self, providers: &mut Providers) {
        self.llvm.provide(providers)
    }

    fn target_cpu(&self, sess: &Session) -> String {
        self.llvm.target_cpu(sess)
    }

    fn codegen_crate<'tcx>(&self, tcx: TyCtxt<'tcx>) -> Box<dyn Any> {
        let ptx = device_codegen::codegen_device_code(tcx, &self.config);
        let ongoing = self.llvm.codegen_crate(tcx);
        match ptx {
            Some((ptx, cubin, cpu_object)) => Box::new(OngoingWithPtx {
                ongoing,
                ptx: EmbeddedPtx {
                    crate_name: tcx.crate_name(LOCAL_CRATE).to_string(),
                    ptx,
                    cubin,
                    cpu_object,
                },
            }),
            None => ongoing,
        }
    }

    fn join_codegen(
        &self,
        ongoing_codegen: Box<dyn Any>,
        sess: &Session,
        outputs: &OutputFilenames,
        crate_info: &CrateInfo,
    ) -> (CompiledModules, FxIndexMap<WorkProductId, WorkProduct>) {
        let with_ptx = match ongoing_codegen.downcast::<OngoingWithPtx>() {
            Ok(with_ptx) => *with_ptx,
            Err(ongoing) => return self.llvm.join_codegen(ongoing, sess, outputs, crate_info),
        };
        let (mut compiled, work_products) =
            self.llvm
                .join_codegen(with_ptx.ongoing, sess, outputs, crate_info);
        let cpu = with_ptx
            .ptx
            .cpu_object
            .as_ref()
            .map(|object| embed::cpu_module(outputs, object));
        match embed::compiled_module(sess, outputs, &with_ptx.ptx) {
            Ok(module) => compiled.modules.push(module),
            Err(e) => sess.dcx().fatal(format!(
                "cuda-oxide could not embed the PTX of crate `{}`: {e}",
                with_ptx.ptx.crate_name
            )),
        }
        match cpu {
            Some(Ok(module)) => compiled.modules.push(module),
            Some(Err(e)) => sess.dcx().fatal(format!(
                "cuda-oxide could not embed the CPU flavour of crate `{}`: {e}",
                with_ptx.ptx.crate_name
            )),
            None => {}
        }
        (compiled, work_products)
    }

    fn print_pass_timings(&self) {
        self.llvm.print_pass_timings()
    }

    fn print_statistics(&self) {
        self.llvm.print_statistics()
    }

    fn print_statistics_json(&self) -> String {
        self.llvm.print_statistics_json()
    }

    fn link(
        &self,
        sess: &Session,
        compiled_modules: CompiledModules,
        crate_info: CrateInfo,
        metadata: EncodedMetadata,
        outputs: &OutputFilenames,
    ) {
        self.llvm
            .link(sess, compiled_modules, crate_info, metadata, outputs)
    }
}

/// The entry point rustc looks up after loading the backend.
#[unsafe(no_mangle)]
pub fn __rustc_codegen_backend() -> Box<dyn CodegenBackend> {
    Box::new(CudaCodegenBackend {
        config: CudaCodegenConfig::from_env(),
        llvm: rustc_codegen_llvm::LlvmCodegenBackend::new(),
    })
}
