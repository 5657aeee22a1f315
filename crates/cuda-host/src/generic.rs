//! Generic kernels: each instantiation is its own PTX entry, found by name on its first launch.
//!
//! The launcher of a generic kernel names the instantiation by the kernel's function item type
//! (`axpy::<f32>`); [`entry_name`] turns that type into the entry's name exactly as the
//! backend does (`reserved_oxide_symbols::generic_kernel_entry`), and [`GenericKernels`] keeps
//! the kernels found so far, so a launch looks its entry up once. An instantiation that another
//! crate made is in that crate's module, found through the program's module records
//! ([crate::registry]).

use std::any::{TypeId, type_name};
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::{Error, Kernel, PtxModule};

/// The PTX entry of the generic kernel `base_name` instantiated as the function item type `F`.
pub fn entry_name<F: 'static>(base_name: &str) -> String {
    reserved_oxide_symbols::generic_kernel_entry(base_name, type_name::<F>(), type_id_bits::<F>())
}

/// The 64 bits of `TypeId::of::<F>()` that its `Hash` writes: the high half of rustc's
/// `type_id_hash`, which the backend reads from the compiler itself.
fn type_id_bits<F: 'static>() -> u64 {
    /// Keeps the one integer that `TypeId`'s `Hash` writes.
    struct Written(u64);
    impl Hasher for Written {
        fn finish(&self) -> u64 {
            self.0
        }
        fn write(&mut self, bytes: &[u8]) {
            for chunk in bytes.chunks(8) {
                let mut word = [0u8; 8];
                word[..chunk.len()].copy_from_slice(chunk);
                self.0 = self.0.rotate_left(8) ^ u64::from_ne_bytes(word);
            }
        }
        fn write_u64(&mut self, value: u64) {
            self.0 = value;
        }
    }
    let mut written = Written(0);
    TypeId::of::<F>().hash(&mut written);
    written.0
}

/// Entry names live as long as the program, as the names of non-generic kernels do; each
/// distinct name is stored once.
fn intern(name: String) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(known) = names.get(name.as_str()) {
        return known;
    }
    let name: &'static str = Box::leak(name.into_boxed_str());
    names.insert(name);
    name
}

/// The instantiations of a module's generic kernels launched so far.
#[derive(Clone, Debug)]
pub struct GenericKernels {
    module: PtxModule,
    found: Arc<Mutex<HashMap<TypeId, Kernel>>>,
    /// The other crates' embedded modules, loaded on this module's context when an
    /// instantiation is first missing from it.
    others: Arc<OnceLock<Vec<PtxModule>>>,
}

impl GenericKernels {
    /// No instantiation found yet in `module`.
    pub fn new(module: &PtxModule) -> Self {
        GenericKernels {
            module: module.clone(),
            found: Arc::default(),
            others: Arc::default(),
        }
    }

    /// The instantiation `kernel` (the function item, `axpy::<f32>`) of the generic kernel
    /// `base_name` (`axpy`): in this crate's module, else in the module of the crate that
    /// instantiated it (a crate that launches another crate's generic kernel compiles the
    /// instantiation into its own module).
    pub fn get<F: 'static>(&self, kernel: F, base_name: &'static str) -> Result<Kernel, Error> {
        let _ = kernel;
        let key = TypeId::of::<F>();
        let mut found = self.found.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(kernel) = found.get(&key) {
            return Ok(kernel.clone());
        }
        let entry = intern(entry_name::<F>(base_name));
        let kernel = match self.module.kernel(entry) {
            Err(Error::MissingKernel { crate_name, .. }) => self
                .other_modules()
                .iter()
                .find_map(|module| module.kernel(entry).ok())
                .ok_or_else(|| Error::MissingInstantiation {
                    crate_name,
                    instantiation: instantiation_name::<F>(base_name),
                    entry,
                })?,
            other => other?,
        };
        let kernel = kernel.called(intern(instantiation_name::<F>(base_name)));
        found.insert(key, kernel.clone());
        Ok(kernel)
    }

    /// Every other crate's embedded module that loads on this module's context, loaded once.
    /// One that does not load (built for another GPU, say) cannot hold the instantiation this
    /// launch can run, and is passed over.
    fn other_modules(&self) -> &[PtxModule] {
        self.others.get_or_init(|| {
            let ctx = self.module.context();
            let own = self.module.crate_name();
            crate::registry::embedded_modules()
                .into_iter()
                .filter(|embedded| embedded.crate_name != own)
                .filter_map(|embedded| {
                    PtxModule::load_embedded_or_cpu(
                        &ctx,
                        embedded.crate_name,
                        embedded.ptx,
                        embedded.cubin,
                        embedded.cpu_image,
                    )
                    .ok()
                })
                .collect()
        })
    }
}

/// `axpy::<f32>`: the instantiation as the user would write it.
fn instantiation_name<F>(base_name: &str) -> String {
    let name = type_name::<F>();
    let args = name.find('<').map_or("", |start| &name[start..]);
    format!("{base_name}::{args}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stands for a kernel's function item type, which prints with its generic arguments.
    struct Kernel<T>(T);

    fn entry_of<F: 'static>(_: &F) -> String {
        entry_name::<F>("map")
    }

    #[test]
    fn instantiations_have_their_own_entries() {
        let f32_entry = entry_name::<Kernel<f32>>("k");
        assert!(f32_entry.starts_with("k_f32_"), "{f32_entry}");
        assert_eq!(f32_entry.len(), "k_f32_".len() + 16);
        assert_ne!(f32_entry, entry_name::<Kernel<f64>>("k"));
        assert_eq!(instantiation_name::<Kernel<u8>>("k"), "k::<u8>");
        // Two closures of one function print alike; the type id tells them apart.
        let a = |x: f32| x + 1.0;
        let b = |x: f32| x + 2.0;
        assert_ne!(entry_of(&a), entry_of(&b));
        assert!(entry_of(&a).starts_with("map_"), "{}", entry_of(&a));
    }

    #[test]
    fn the_hasher_keeps_what_type_id_writes() {
        assert_eq!(type_id_bits::<u32>(), type_id_bits::<u32>());
        assert_ne!(type_id_bits::<u32>(), type_id_bits::<i32>());
    }
}
