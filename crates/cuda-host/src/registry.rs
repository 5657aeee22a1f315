//! The modules embedded in the whole program: every crate whose kernels the codegen backend
//! compiled leaves a record in one ELF section (`reserved_oxide_symbols::MODULE_RECORD_SECTION`),
//! read here between the linker's `__start_` and `__stop_` symbols of that section.
//!
//! A generic kernel instantiated by another crate than its own is compiled into that crate's
//! module; its launcher, whose own module lacks the entry, looks for it in the others
//! ([crate::generic]).

use std::ffi::{CStr, c_void};

use reserved_oxide_symbols::{MODULE_RECORD_VERSION, MODULE_RECORD_WORDS};

/// A crate's embedded module, as its record describes it.
#[derive(Clone, Copy, Debug)]
pub struct EmbeddedModule {
    /// The crate's name.
    pub crate_name: &'static str,
    /// Its PTX.
    pub ptx: &'static CStr,
    /// Its cubin, or cubin set (may be empty).
    pub cubin: &'static [u8],
    /// Its CPU image table.
    pub cpu_image: *const c_void,
}

/// One record: [`MODULE_RECORD_WORDS`] words.
type Record = [usize; MODULE_RECORD_WORDS];

/// A placeholder record of this crate (version 0, skipped), so that the section, and its
/// `__start_`/`__stop_` symbols, exist in every program that links `cuda-host`.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
#[used]
#[unsafe(link_section = "cuda_oxide_modules")]
static PLACEHOLDER: Record = [0; MODULE_RECORD_WORDS];

#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
unsafe extern "C" {
    static __start_cuda_oxide_modules: Record;
    static __stop_cuda_oxide_modules: Record;
}

/// Every module embedded in this program (none where records are not kept: outside Linux).
pub fn embedded_modules() -> Vec<EmbeddedModule> {
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    {
        let start = &raw const __start_cuda_oxide_modules;
        let stop = &raw const __stop_cuda_oxide_modules;
        let count = (stop as usize - start as usize) / size_of::<Record>();
        // SAFETY: the linker gathers the section's records, each `MODULE_RECORD_WORDS` words
        // aligned to 8, between the two symbols.
        let records = unsafe { std::slice::from_raw_parts(start, count) };
        records.iter().filter_map(decode).collect()
    }
    #[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
    {
        Vec::new()
    }
}

/// The module a record describes; `None` for a placeholder or a record of another layout.
fn decode(record: &Record) -> Option<EmbeddedModule> {
    if record[0] as u64 != MODULE_RECORD_VERSION {
        return None;
    }
    // SAFETY: the backend's records point at read-only data of the program, which lives as
    // long as it: the crate's name (`record[2]` bytes), its PTX and a NUL (`record[4]` + 1
    // bytes), its cubin (`record[6]` bytes, or one byte when there is none).
    unsafe {
        let name = std::slice::from_raw_parts(record[1] as *const u8, record[2]);
        let ptx = std::slice::from_raw_parts(record[3] as *const u8, record[4] + 1);
        let cubin = std::slice::from_raw_parts(record[5] as *const u8, record[6]);
        Some(EmbeddedModule {
            crate_name: std::str::from_utf8(name).ok()?,
            ptx: CStr::from_bytes_with_nul(ptx).ok()?,
            cubin,
            cpu_image: record[7] as *const c_void,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_skipped_and_records_read() {
        assert!(decode(&[0; MODULE_RECORD_WORDS]).is_none());
        static NAME: &[u8] = b"app";
        static PTX: &[u8] = b".version 8.0\0";
        static CUBIN: &[u8] = b"\x7fELF";
        let record: Record = [
            MODULE_RECORD_VERSION as usize,
            NAME.as_ptr() as usize,
            3,
            PTX.as_ptr() as usize,
            PTX.len() - 1,
            CUBIN.as_ptr() as usize,
            4,
            0,
        ];
        let module = decode(&record).unwrap();
        assert_eq!(module.crate_name, "app");
        assert_eq!(module.ptx.to_bytes(), b".version 8.0");
        assert_eq!(module.cubin, b"\x7fELF");
        // This test binary links no embedded module: only the placeholder is there.
        assert!(embedded_modules().is_empty());
        // The section named in the attributes above is the backend's.
        assert_eq!(
            reserved_oxide_symbols::MODULE_RECORD_SECTION,
            "cuda_oxide_modules"
        );
    }
}
