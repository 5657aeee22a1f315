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
    adapt_as(seed, text, Mode::Hash)
}

/// The module text of the Rustlantis program `text` for locating a difference: thread `i`
/// (of the fuzz harness's threads, whose inputs [crate::input] gives) runs the program and
/// returns the hash as it was after the program's `i`-th call of `dump_var` (or at its end,
/// if it dumps fewer values). The threads take turns (a thread waits for the one before it),
/// because the hash is one `static`. The first thread whose output differs between the GPU
/// and the CPU names the first dump that differs; Rustlantis's `--debug` output of the same
/// seed lists the dumps in order, with the function and the variables of each.
pub fn adapt_traced(seed: u64, text: &str) -> Result<String, AdaptError> {
    adapt_as(seed, text, Mode::Trace)
}

/// How the adapted program reports.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `run(0)` returns the hash of every dump; other inputs are returned as they are.
    Hash,
    /// See [adapt_traced].
    Trace,
}

/// The hasher both modes share.
const FNV: &str = "\
/// FNV-1a over the bytes that `Hash` writes.
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// The hash of every value dumped so far.
static mut H: u64 = 0;
";

fn adapt_as(seed: u64, text: &str, mode: Mode) -> Result<String, AdaptError> {
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
    let commit = &COMMIT[..7];
    let mut out = format!(
        "//! A Rustlantis program (cbeuw/rustlantis {commit}) as the fuzz program of seed {seed}, \
         adapted for the GPU by oxide_fuzz::rustlantis:\n"
    );
    match mode {
        Mode::Hash => out.push_str(&format!(
            "//! `dump_var` hashes with FNV-1a, and `run(0)` runs it (every other input is returned).
#![allow(unused_parens, unused_assignments, overflowing_literals, unused_imports)]
use core::intrinsics::mir::*;
use core::hash::{{Hash, Hasher}};

{FNV}
#[inline(never)]
fn dump_var(val0: impl Hash, val1: impl Hash, val2: impl Hash, val3: impl Hash) {{
    let mut h = Fnv(unsafe {{ H }});
    val0.hash(&mut h);
    val1.hash(&mut h);
    val2.hash(&mut h);
    val3.hash(&mut h);
    unsafe {{ H = h.finish() }};
}}

pub fn run(x: u64) -> u64 {{
    if x != 0 {{
        return x;
    }}
    unsafe {{ H = 0xcbf2_9ce4_8422_2325 }};
    {call}
    unsafe {{ H }}
}}

"
        )),
        Mode::Trace => out.push_str(&format!(
            "//! Traced (oxide_fuzz::rustlantis::adapt_traced): thread i returns the hash after the
//! program's i-th dump.
#![allow(unused_parens, unused_assignments, overflowing_literals, unused_imports)]
use core::intrinsics::mir::*;
use core::hash::{{Hash, Hasher}};
use core::sync::atomic::{{AtomicU32, Ordering}};

{FNV}
/// Dumps so far, and the dump after which the hash is kept.
static mut DUMPS: u32 = 0;
static mut STOP: u32 = 0;
static mut KEPT: u64 = 0;
/// The thread whose turn it is.
static TURN: AtomicU32 = AtomicU32::new(0);

#[inline(never)]
fn dump_var(val0: impl Hash, val1: impl Hash, val2: impl Hash, val3: impl Hash) {{
    let mut h = Fnv(unsafe {{ H }});
    val0.hash(&mut h);
    val1.hash(&mut h);
    val2.hash(&mut h);
    val3.hash(&mut h);
    unsafe {{
        H = h.finish();
        DUMPS += 1;
        if DUMPS == STOP {{
            KEPT = H;
        }}
    }}
}}

pub fn run(x: u64) -> u64 {{
    let mut thread = 0;
    while thread < oxide_fuzz::THREADS && oxide_fuzz::input({seed}, thread) != x {{
        thread += 1;
    }}
    while TURN.load(Ordering::Acquire) != thread as u32 {{}}
    unsafe {{
        H = 0xcbf2_9ce4_8422_2325;
        DUMPS = 0;
        STOP = thread as u32;
        KEPT = H;
    }}
    {call}
    let kept = unsafe {{ if DUMPS < STOP {{ H }} else {{ KEPT }} }};
    TURN.store(thread as u32 + 1, Ordering::Release);
    kept
}}

"
        )),
    }
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
        let traced = adapt_traced(7, SAMPLE).unwrap();
        assert!(traced.contains("oxide_fuzz::input(7, thread)"), "{traced}");
        assert!(traced.contains("pub fn fn0(mut _1: char) -> u8 {"));
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
