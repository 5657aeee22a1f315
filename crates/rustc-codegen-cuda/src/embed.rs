//! Embedding a crate's PTX in its host artifacts.
//!
//! The PTX of a crate with kernels goes into one extra object file for the host target, with
//! two global read-only symbols named after the crate's tag (see `reserved_oxide_symbols`):
//!
//! - [`ptx_symbol`]: the PTX text followed by a NUL byte;
//! - [`ptx_len_symbol`]: the text's length in bytes, a `u64` in the target's byte order;
//! - [`cubin_symbol`]: the cubin `ptxas` made of that PTX at build time for the build's
//!   `sm_XX` (empty without `ptxas`), which the host loads instead of the PTX on a GPU of that
//!   architecture, so that the driver compiles nothing at load;
//! - [`cubin_len_symbol`]: its length, like the PTX's.
//!
//! The object is added to the crate's compiled modules in `join_codegen`, so rustc links it
//! into executables and archives it into rlibs like any codegen unit: a library with kernels
//! carries its PTX to every binary that uses it. The `load` function `#[cuda_module]`
//! generates refers to both symbols, which also makes the linker pull the object out of an
//! rlib exactly when it is needed.
//!
//! Known limit: a downstream crate built with fat or thin LTO treats the rlib's members that
//! rustc lists as codegen units as LLVM bitcode and cannot read this one; kernels in a library
//! used by an LTO build need a later fix (appending the object to the rlib as a native member).

use std::path::{Path, PathBuf};

use object::write::{Object, Relocation, StandardSection, Symbol, SymbolId, SymbolSection};
use object::{
    Architecture, BinaryFormat, Endianness, RelocationEncoding, RelocationFlags, RelocationKind,
    SectionFlags, SectionKind, SymbolFlags, SymbolKind, SymbolScope, elf,
};
use reserved_oxide_symbols::{
    MODULE_RECORD_SECTION, MODULE_RECORD_VERSION, MODULE_RECORD_WORDS, cpu_image_symbol, crate_tag,
    cubin_len_symbol, cubin_symbol, ptx_len_symbol, ptx_symbol,
};
use rustc_abi::Endian;
use rustc_codegen_ssa::{CompiledModule, ModuleKind};
use rustc_session::Session;
use rustc_session::config::{OutputFilenames, OutputType};
use rustc_target::spec::{Arch, BinaryFormat as RustcBinaryFormat};

/// The PTX of the crate being compiled, from `codegen_crate` to `join_codegen`.
#[derive(Clone, Debug)]
pub struct EmbeddedPtx {
    /// The crate's name as rustc knows it (the tag is derived from it, as the macros do).
    pub crate_name: String,
    /// The PTX text.
    pub ptx: String,
    /// The PTX assembled for the build's architecture, empty when `ptxas` was not found.
    pub cubin: Vec<u8>,
    /// The kernels compiled for the CPU device (a host object defining the image table), when
    /// the build made them.
    pub cpu_object: Option<Vec<u8>>,
}

/// What rustc's LLVM backend returned from `codegen_crate`, plus the PTX to add when joining.
pub struct OngoingWithPtx {
    /// The LLVM backend's ongoing codegen.
    pub ongoing: Box<dyn std::any::Any>,
    /// The PTX to embed.
    pub ptx: EmbeddedPtx,
}

/// The object file format of the host target.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ObjectTarget {
    /// ELF, Mach-O or COFF.
    pub format: BinaryFormat,
    /// The host architecture.
    pub architecture: Architecture,
    /// The host byte order.
    pub endian: Endianness,
}

/// Why the PTX could not be embedded.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The host target has an object format or architecture this module does not write.
    #[error(
        "cuda-oxide embeds PTX only in x86_64 and aarch64 host binaries (ELF, Mach-O or COFF), \
         not for `{arch}` with {format} objects"
    )]
    UnsupportedTarget {
        /// The target's architecture.
        arch: String,
        /// The target's object format.
        format: String,
    },
    /// `object` could not write the file.
    #[error("writing the PTX object failed: {0}")]
    Write(#[from] object::write::Error),
    /// The object could not be saved.
    #[error("could not write `{}`: {source}", path.display())]
    Io {
        /// Where it was to go.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// The symbols a module record points at.
struct ModuleSymbols {
    crate_name: SymbolId,
    ptx: (SymbolId, usize),
    cubin: (SymbolId, usize),
    cpu_image: SymbolId,
}

/// The crate's record in the ELF section [`MODULE_RECORD_SECTION`]: kept by the linker
/// (`SHF_GNU_RETAIN`) even though nothing refers to it by name, writable because its addresses
/// are relocated at load in position-independent executables.
fn add_module_record(
    obj: &mut Object<'_>,
    module: &ModuleSymbols,
    crate_name_len: usize,
    endian: Endianness,
) -> Result<(), EmbedError> {
    let records = obj.add_section(
        Vec::new(),
        MODULE_RECORD_SECTION.as_bytes().to_vec(),
        SectionKind::Data,
    );
    obj.section_mut(records).flags = SectionFlags::Elf {
        sh_type: elf::SHT_PROGBITS,
        sh_flags: elf::SectionFlags(elf::SHF_ALLOC.0 | elf::SHF_WRITE.0 | elf::SHF_GNU_RETAIN.0),
    };
    let word = |value: u64| match endian {
        Endianness::Little => value.to_le_bytes(),
        Endianness::Big => value.to_be_bytes(),
    };
    // Addresses are filled in by relocations; versions and lengths are plain words.
    let words: [u64; MODULE_RECORD_WORDS] = [
        MODULE_RECORD_VERSION,
        0,
        crate_name_len as u64,
        0,
        module.ptx.1 as u64,
        0,
        module.cubin.1 as u64,
        0,
    ];
    let bytes: Vec<u8> = words.iter().flat_map(|&w| word(w)).collect();
    let start = obj.append_section_data(records, &bytes, 8);
    let addresses = [
        (1, module.crate_name),
        (3, module.ptx.0),
        (5, module.cubin.0),
        (7, module.cpu_image),
    ];
    for (index, symbol) in addresses {
        obj.add_relocation(
            records,
            Relocation {
                offset: start + 8 * index,
                symbol,
                addend: 0,
                flags: RelocationFlags::Generic {
                    kind: RelocationKind::Absolute,
                    encoding: RelocationEncoding::Generic,
                    size: 64,
                },
            },
        )?;
    }
    Ok(())
}

/// An object file for `target` that defines the embedded-PTX (and cubin) symbols of the crate
/// `crate_name`, tagged `tag`, and (on ELF) its module record.
pub fn ptx_object(
    target: &ObjectTarget,
    crate_name: &str,
    tag: &str,
    ptx: &str,
    cubin: &[u8],
    cpu_image: bool,
) -> Result<Vec<u8>, EmbedError> {
    let mut obj = Object::new(target.format, target.architecture, target.endian);
    // Its own section on ELF (`.rodata.cuda_oxide_ptx`), so that `--gc-sections` drops it from
    // binaries that never load the module; the standard read-only section elsewhere.
    let section = obj.add_subsection(StandardSection::ReadOnlyData, b"cuda_oxide_ptx");

    let mut text = Vec::with_capacity(ptx.len() + 1);
    text.extend_from_slice(ptx.as_bytes());
    text.push(0);
    let length = |len: usize| match target.endian {
        Endianness::Little => (len as u64).to_le_bytes(),
        Endianness::Big => (len as u64).to_be_bytes(),
    };
    let len = length(ptx.len());
    let symbol = |name: String| Symbol {
        name: name.into_bytes(),
        value: 0,
        size: 0,
        kind: SymbolKind::Data,
        // Global, but hidden from the dynamic symbol table of shared libraries.
        scope: SymbolScope::Linkage,
        weak: false,
        section: SymbolSection::Undefined,
        flags: SymbolFlags::None,
    };
    let len_symbol = obj.add_symbol(symbol(ptx_len_symbol(tag)));
    obj.add_symbol_data(len_symbol, section, &len, 8);
    let text_symbol = obj.add_symbol(symbol(ptx_symbol(tag)));
    obj.add_symbol_data(text_symbol, section, &text, 16);
    let cubin_len = obj.add_symbol(symbol(cubin_len_symbol(tag)));
    obj.add_symbol_data(cubin_len, section, &length(cubin.len()), 8);
    // The symbol needs a byte to point at even when there is no cubin.
    let image: &[u8] = if cubin.is_empty() { &[0] } else { cubin };
    let cubin_symbol = obj.add_symbol(symbol(cubin_symbol(tag)));
    obj.add_symbol_data(cubin_symbol, section, image, 16);
    let table = obj.add_symbol(symbol(cpu_image_symbol(tag)));
    if !cpu_image {
        // No CPU flavour: an image table whose version (0) says so.
        obj.add_symbol_data(table, section, &[0; 8], 8);
    }

    if target.format == BinaryFormat::Elf {
        let module = ModuleSymbols {
            crate_name: obj.add_symbol(Symbol {
                scope: SymbolScope::Compilation,
                ..symbol(format!("cuda_oxide_crate_name_{tag}"))
            }),
            ptx: (text_symbol, ptx.len()),
            cubin: (cubin_symbol, cubin.len()),
            cpu_image: table,
        };
        obj.add_symbol_data(module.crate_name, section, crate_name.as_bytes(), 1);
        add_module_record(&mut obj, &module, crate_name.len(), target.endian)?;
    }

    if target.format == BinaryFormat::Elf {
        // Without this note, GNU ld assumes the object needs an executable stack and gives the
        // whole binary one (LLVM's objects all carry it).
        obj.add_section(Vec::new(), b".note.GNU-stack".to_vec(), SectionKind::Other);
    }
    Ok(obj.write()?)
}

/// The host target's object format, from rustc's target spec.
pub fn object_target(sess: &Session) -> Result<ObjectTarget, EmbedError> {
    let target = &sess.target;
    let unsupported = || EmbedError::UnsupportedTarget {
        arch: target.arch.desc().to_owned(),
        format: target.binary_format.desc().to_owned(),
    };
    let format = match target.binary_format {
        RustcBinaryFormat::Elf => BinaryFormat::Elf,
        RustcBinaryFormat::MachO => BinaryFormat::MachO,
        RustcBinaryFormat::Coff => BinaryFormat::Coff,
        _ => return Err(unsupported()),
    };
    let architecture = match (&target.arch, target.pointer_width) {
        (Arch::X86_64, 64) => Architecture::X86_64,
        (Arch::AArch64, 64) => Architecture::Aarch64,
        _ => return Err(unsupported()),
    };
    let endian = match target.endian {
        Endian::Little => Endianness::Little,
        Endian::Big => Endianness::Big,
    };
    Ok(ObjectTarget {
        format,
        architecture,
        endian,
    })
}

/// Writes the PTX object next to the crate's other codegen units and describes it as one more
/// compiled module, for rustc to link and archive.
pub fn compiled_module(
    sess: &Session,
    outputs: &OutputFilenames,
    ptx: &EmbeddedPtx,
) -> Result<CompiledModule, EmbedError> {
    let target = object_target(sess)?;
    let bytes = ptx_object(
        &target,
        &ptx.crate_name,
        &crate_tag(&ptx.crate_name),
        &ptx.ptx,
        &ptx.cubin,
        ptx.cpu_object.is_some(),
    )?;
    object_module(outputs, "cuda-oxide-ptx", &bytes)
}

/// Writes the CPU flavour's object next to the crate's other codegen units, as one more
/// compiled module (it defines the image table the `#[cuda_module]` code refers to).
pub fn cpu_module(outputs: &OutputFilenames, object: &[u8]) -> Result<CompiledModule, EmbedError> {
    object_module(outputs, "cuda-oxide-cpu", object)
}

/// `bytes` written as the object of a codegen unit named `name`.
fn object_module(
    outputs: &OutputFilenames,
    name: &str,
    bytes: &[u8],
) -> Result<CompiledModule, EmbedError> {
    let path = outputs.temp_path_for_cgu(OutputType::Object, name);
    write(&path, bytes)?;
    Ok(CompiledModule {
        name: name.to_owned(),
        kind: ModuleKind::Regular,
        object: Some(path),
        dwarf_object: None,
        bytecode: None,
        assembly: None,
        llvm_ir: None,
        links_from_incr_cache: Vec::new(),
    })
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), EmbedError> {
    std::fs::write(path, bytes).map_err(|source| EmbedError::Io {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use object::{Object as _, ObjectSection as _, ObjectSymbol as _};

    use super::*;

    const PTX: &str = ".version 8.0\n.target sm_90\n.address_size 64\n";

    fn host_elf() -> ObjectTarget {
        ObjectTarget {
            format: BinaryFormat::Elf,
            architecture: Architecture::X86_64,
            endian: Endianness::Little,
        }
    }

    /// `len` bytes at a symbol in a parsed object (only ELF symbols have a size of their own).
    fn symbol_bytes<'a>(file: &'a object::File<'a>, name: &str, len: usize) -> &'a [u8] {
        let symbol = file
            .symbols()
            .find(|s| s.name() == Ok(name))
            .unwrap_or_else(|| panic!("no symbol {name}"));
        assert!(symbol.is_global(), "{name} must be global");
        assert!(symbol.is_definition(), "{name} must be defined");
        let section = file
            .section_by_index(symbol.section_index().expect("in a section"))
            .unwrap();
        let data = section.data().unwrap();
        let start = (symbol.address() - section.address()) as usize;
        if file.format() == BinaryFormat::Elf {
            assert_eq!(symbol.size() as usize, len, "size of {name}");
        }
        &data[start..start + len]
    }

    #[test]
    fn elf_object_holds_the_ptx_and_its_length() {
        let tag = crate_tag("vecadd");
        let bytes = ptx_object(&host_elf(), "vecadd", &tag, PTX, b"\x7fELF cubin", false).unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        assert_eq!(file.format(), BinaryFormat::Elf);
        assert_eq!(
            symbol_bytes(&file, &cubin_symbol(&tag), 10),
            b"\x7fELF cubin"
        );
        assert_eq!(
            symbol_bytes(&file, &cubin_len_symbol(&tag), 8),
            10u64.to_le_bytes()
        );
        assert_eq!(file.architecture(), Architecture::X86_64);
        assert_eq!(file.kind(), object::ObjectKind::Relocatable);

        let text = symbol_bytes(&file, &ptx_symbol(&tag), PTX.len() + 1);
        assert_eq!(text, format!("{PTX}\0").as_bytes());
        let len = symbol_bytes(&file, &ptx_len_symbol(&tag), 8);
        assert_eq!(len, (PTX.len() as u64).to_le_bytes());

        let section = file.section_by_name(".rodata.cuda_oxide_ptx").unwrap();
        assert_eq!(section.kind(), SectionKind::ReadOnlyData);
        assert!(file.section_by_name(".note.GNU-stack").is_some());
    }

    #[test]
    fn other_formats_and_byte_orders() {
        for (format, architecture) in [
            (BinaryFormat::MachO, Architecture::Aarch64),
            (BinaryFormat::Coff, Architecture::X86_64),
            (BinaryFormat::Elf, Architecture::Aarch64),
        ] {
            let target = ObjectTarget {
                format,
                architecture,
                endian: Endianness::Little,
            };
            let bytes = ptx_object(&target, "app", "0badf00d", PTX, &[], false).unwrap();
            let file = object::File::parse(&*bytes).unwrap();
            assert_eq!(file.format(), format);
            // Mach-O adds the C prefix `_`; the symbol is what C code calls `cuda_oxide_ptx_...`.
            let prefix = if format == BinaryFormat::MachO {
                "_"
            } else {
                ""
            };
            let name = format!("{prefix}{}", ptx_symbol("0badf00d"));
            assert_eq!(
                symbol_bytes(&file, &name, PTX.len() + 1),
                format!("{PTX}\0").as_bytes(),
                "{format:?}"
            );
        }
        let big = ObjectTarget {
            endian: Endianness::Big,
            ..host_elf()
        };
        let bytes = ptx_object(&big, "app", "0badf00d", PTX, &[], false).unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        let len = symbol_bytes(&file, &ptx_len_symbol("0badf00d"), 8);
        assert_eq!(len, (PTX.len() as u64).to_be_bytes());
        // No cubin: length 0, and a byte for the symbol to point at.
        let len = symbol_bytes(&file, &cubin_len_symbol("0badf00d"), 8);
        assert_eq!(len, 0u64.to_be_bytes());
    }

    /// Links the object into a real program that reads the PTX through the same `extern`
    /// declarations `#[cuda_module]` generates, and runs it.
    #[test]
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    fn a_program_linked_with_the_object_reads_the_ptx() {
        let dir = std::env::temp_dir().join(format!("cuda-oxide-embed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let tag = crate_tag("linked_demo");
        let object_path = dir.join("ptx.o");
        std::fs::write(
            &object_path,
            ptx_object(&host_elf(), "linked_demo", &tag, PTX, &[], false).unwrap(),
        )
        .unwrap();
        let source = format!(
            r#"
unsafe extern "C" {{
    #[link_name = "{data}"]
    static PTX: u8;
    #[link_name = "{len}"]
    static PTX_LEN: u64;
}}
unsafe extern "C" {{
    static __start_{section}: [u64; {words}];
    static __stop_{section}: [u64; {words}];
}}
fn main() {{
    let len = unsafe {{ PTX_LEN }} as usize;
    let bytes = unsafe {{ std::slice::from_raw_parts(&raw const PTX, len + 1) }};
    let text = std::ffi::CStr::from_bytes_with_nul(bytes).expect("NUL-terminated");
    print!("{{}}", text.to_str().unwrap());
    // The module record, kept although nothing names it, its addresses relocated.
    let start = &raw const __start_{section};
    let count = (&raw const __stop_{section} as usize - start as usize) / (8 * {words});
    let record = unsafe {{ &*start }};
    let name = unsafe {{ std::slice::from_raw_parts(record[1] as *const u8, record[2] as usize) }};
    assert_eq!(record[3] as *const u8, &raw const PTX);
    eprint!("{{count}} record(s), version {{}}, crate {{}}", record[0], std::str::from_utf8(name).unwrap());
}}
"#,
            section = MODULE_RECORD_SECTION,
            words = MODULE_RECORD_WORDS,
            data = ptx_symbol(&tag),
            len = ptx_len_symbol(&tag),
        );
        let main = dir.join("main.rs");
        std::fs::write(&main, source).unwrap();
        let exe = dir.join("linked_demo");
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let built = Command::new(&rustc)
            .args(["--edition", "2024", "-O", "-o"])
            .arg(&exe)
            .arg(&main)
            .arg(format!("-Clink-arg={}", object_path.display()))
            .output()
            .expect("rustc runs");
        assert!(
            built.status.success(),
            "{}",
            String::from_utf8_lossy(&built.stderr)
        );
        let warnings = String::from_utf8_lossy(&built.stderr);
        assert!(!warnings.contains("executable stack"), "{warnings}");
        let ran = Command::new(&exe).output().expect("the program runs");
        assert!(ran.status.success());
        assert_eq!(String::from_utf8_lossy(&ran.stdout), PTX);
        assert_eq!(
            String::from_utf8_lossy(&ran.stderr),
            format!("1 record(s), version {MODULE_RECORD_VERSION}, crate linked_demo")
        );

        // Without the object the link fails, naming the symbol that says how to fix it.
        let unlinked = Command::new(&rustc)
            .args(["--edition", "2024", "-o"])
            .arg(dir.join("unlinked"))
            .arg(&main)
            .output()
            .expect("rustc runs");
        assert!(!unlinked.status.success());
        let error = String::from_utf8_lossy(&unlinked.stderr);
        assert!(
            error.contains("were not compiled: build it with `cargo oxide build`"),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
