//! Programs of Rustlantis (cbeuw/rustlantis, the MIR fuzzer), adapted to the fuzz harness.
//!
//! Rustlantis writes a crate: custom-MIR functions `fn0..fnN`, the types they use, a
//! `dump_var` that hashes values into a `static` hasher, and a `main` that calls `fn0` with
//! literal arguments through `std::hint::black_box`. [`adapt`] turns that text into a module
//! of a fuzz batch (`pub fn run(x: u64) -> u64`): the functions and types verbatim, a `dump_var`
//! that hashes the same values with a hasher both the CPU and the GPU can run (FNV-1a over the
//! bytes `Hash` writes), and a `run` that calls `fn0` with the same arguments, still through
//! `black_box` so that no compiler folds them, and returns the hash.
//!
//! A Rustlantis program is defined for its own arguments only (the generator follows one
//! execution), and its hasher is one `static`: so `run` executes the program on the input `0`
//! alone (thread 0 of the harness, whose input is `0`) and returns any other input unchanged.

/// The commit of Rustlantis the harness was written against (`scripts/rustlantis.sh` builds it).
pub const COMMIT: &str = "2be7c5a6763831dc0f908f0e05723ebbbc2a62cc";

/// Rustlantis reads its generation parameters from `config.toml` in its working directory:
/// these are the values of its `config.toml.example` (no backends: the harness is the
/// difftest).
pub const CONFIG: &str = "\
bb_max_len = 32
max_switch_targets = 8
max_bb_count = 50
max_bb_count_hard = 100
max_fn_count = 20
max_args_count = 12
var_dump_chance = 0.5
tuple_max_len = 4
array_max_len = 8
struct_max_fields = 8
adt_max_variants = 4
composite_count = 64
adt_count = 8

[backends]
";

/// Why a text is not a Rustlantis program the adapter knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AdaptError {
    /// The text has no custom-MIR function.
    NoFunctions,
    /// The text has no `pub fn main() {` calling the first function.
    NoMain,
}

impl std::fmt::Display for AdaptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AdaptError::NoFunctions => {
                f.write_str("no `#[custom_mir(...)]` function: not a Rustlantis program")
            }
            AdaptError::NoMain => f.write_str(
                "no `pub fn main() { fn0(...); ... }`: not a Rustlantis program of the hashing kind \
                 (generated without `--debug`)",
            ),
        }
    }
}

impl std::error::Error for AdaptError {}

/// Whether `text` is a program as Rustlantis writes it (not yet adapted).
pub fn is_generated(text: &str) -> bool {
    text.contains("#[custom_mir(") && text.contains("pub fn main() {")
}

/// The module text of the Rustlantis program `text` (the generator's output for `seed`).
pub fn adapt(seed: u64, text: &str) -> Result<String, AdaptError> {
    let functions = text.find("#[custom_mir(").ok_or(AdaptError::NoFunctions)?;
    let main = text.find("pub fn main() {").ok_or(AdaptError::NoMain)?;
    if main < functions {
        return Err(AdaptError::NoMain);
    }
    let main_end = closing_brace(text, main + "pub fn main() ".len()).ok_or(AdaptError::NoMain)?;
    let call = text[main..main_end]
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("fn") && l.ends_with(");"))
        .ok_or(AdaptError::NoMain)?;
    let mut out = format!(
        "//! A Rustlantis program (cbeuw/rustlantis {commit}) as the fuzz program of seed {seed}, \
         adapted for the GPU by oxide_fuzz::rustlantis:\n\
         //! `dump_var` hashes with FNV-1a, and `run(0)` runs it (every other input is returned).\n\
         #![allow(unused_parens, unused_assignments, overflowing_literals, unused_imports)]\n\
         use core::intrinsics::mir::*;\n\
         use core::hash::{{Hash, Hasher}};\n\
         \n\
         /// The hash of every value dumped so far.\n\
         static mut H: u64 = 0;\n\
         \n\
         /// FNV-1a over the bytes that `Hash` writes.\n\
         struct Fnv(u64);\n\
         \n\
         impl Hasher for Fnv {{\n    \
             fn finish(&self) -> u64 {{\n        self.0\n    }}\n\n    \
             fn write(&mut self, bytes: &[u8]) {{\n        \
                 for &b in bytes {{\n            \
                     self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);\n        \
                 }}\n    \
             }}\n\
         }}\n\
         \n\
         #[inline(never)]\n\
         fn dump_var(val0: impl Hash, val1: impl Hash, val2: impl Hash, val3: impl Hash) {{\n    \
             let mut h = Fnv(unsafe {{ H }});\n    \
             val0.hash(&mut h);\n    \
             val1.hash(&mut h);\n    \
             val2.hash(&mut h);\n    \
             val3.hash(&mut h);\n    \
             unsafe {{ H = h.finish() }};\n\
         }}\n\
         \n\
         pub fn run(x: u64) -> u64 {{\n    \
             if x != 0 {{\n        return x;\n    }}\n    \
             unsafe {{ H = 0xcbf2_9ce4_8422_2325 }};\n    \
             {call}\n    \
             unsafe {{ H }}\n\
         }}\n\n",
        commit = &COMMIT[..7],
    );
    out.push_str(&text[functions..main]);
    out.push_str(&text[main_end..]);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// The MIR statements (and terminators) of the custom-MIR functions in `text`, all of them and
/// those of the largest function: the lines inside each `mir! { ... }` that are neither
/// declarations (`let`, `type RET`) nor braces or block labels. `(0, 0)` for other programs.
pub fn statement_counts(text: &str) -> (usize, usize) {
    let (mut total, mut largest, mut current) = (0, 0, 0);
    // The brace depth inside the current `mir!`, 0 outside.
    let mut depth = 0i64;
    for line in text.lines() {
        let line = line.trim();
        if depth == 0 {
            if line == "mir! {" {
                depth = 1;
                current = 0;
            }
            continue;
        }
        let statement = !(line.is_empty()
            || line.starts_with("let ")
            || line.starts_with("type RET")
            || line == "{"
            || line == "}"
            || line.ends_with("= {"));
        if statement {
            current += 1;
            total += 1;
            largest = largest.max(current);
        }
        depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
        depth = depth.max(0);
    }
    (total, largest)
}

/// The index just past the `}` that closes the `{` at or after `open`.
fn closing_brace(text: &str, open: usize) -> Option<usize> {
    let start = open + text[open..].find('{')?;
    let mut depth = 0usize;
    for (i, c) in text[start..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(start + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of the generator's output (its header, dumper, one function, main, a type).
    const SAMPLE: &str = r#"#![recursion_limit = "1024"]
    #![feature(custom_mir, core_intrinsics, lazy_get)]
    extern crate core;
    use core::intrinsics::mir::*;
    static mut H: LazyLock<DefaultHasher> = LazyLock::new(|| DefaultHasher::new());
    #[inline(never)]
    fn dump_var(val0: impl Hash, val1: impl Hash, val2: impl Hash, val3: impl Hash) {}
    #[custom_mir(dialect = "runtime", phase = "initial")]
pub fn fn0(mut _1: char) -> u8 {
mir! {
type RET = u8;
{
RET = 1_u8;
Return()
}
}
}
pub fn main() {
                fn0(std::hint::black_box('\u{c5ea3}'));
                
                unsafe {
                    println!("hash: {}", H.finish());
                }
            
            }
#[derive(Debug)]
pub struct Adt1 { fld0: u8 }
"#;

    #[test]
    fn adapts_the_generators_output() {
        let module = adapt(7, SAMPLE).unwrap();
        assert!(module.contains("pub fn fn0(mut _1: char) -> u8 {"));
        assert!(module.contains("pub struct Adt1 { fld0: u8 }"));
        assert!(module.contains("    fn0(std::hint::black_box('\\u{c5ea3}'));\n    unsafe { H }"));
        assert!(!module.contains("LazyLock"), "{module}");
        assert!(!module.contains("pub fn main"), "{module}");
        assert!(!module.contains("#![feature"), "{module}");
        assert!(is_generated(SAMPLE) && !is_generated(&module));
        assert_eq!(statement_counts(SAMPLE), (2, 2));
        assert_eq!(statement_counts(&module), (2, 2));
        assert_eq!(statement_counts("pub fn run(x: u64) -> u64 { x }"), (0, 0));
    }

    /// The programs CI builds (tests/rustlantis) are Rustlantis's output that adapts.
    #[test]
    fn the_checked_in_programs_adapt() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/rustlantis");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(is_generated(&text), "{}", path.display());
            let module = adapt(0, &text).unwrap();
            assert!(statement_counts(&module).0 > 1000, "{}", path.display());
            seen += 1;
        }
        assert!(seen >= 2, "no programs in {}", dir.display());
    }

    #[test]
    fn refuses_other_text() {
        assert_eq!(adapt(0, "fn main() {}"), Err(AdaptError::NoFunctions));
        let no_main = SAMPLE.replace("pub fn main()", "fn other()");
        assert_eq!(adapt(0, &no_main), Err(AdaptError::NoMain));
    }
}
