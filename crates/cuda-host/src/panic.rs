//! Panics of device code, as the host sees them.
//!
//! Each loaded module that can panic (its PTX has `cuda_device::panic::RECORD`) gets a panic
//! record: [`RECORD_BYTES`](layout::RECORD_BYTES) of pinned host memory mapped into the GPU's
//! address space, whose device address is written into the module's `RECORD`. The first
//! thread that panics fills it and traps (see `cuda_device::panic`). The trap breaks the CUDA
//! context, but host memory stays readable: when a synchronisation (or any later call) reports
//! the fault, [`crate::fault::fault`] looks for a filled record and reports a
//! [`crate::Error::KernelPanic`] with the decoded [`DevicePanic`]: the message formatted here,
//! on the host, from the template and raw argument bits the device copied, the location,
//! and the block and thread.

use std::ffi::CString;
use std::fmt;
use std::sync::{Arc, Mutex};

use cuda_device::panic::layout;
use cudarc::driver::{result, sys};

/// A panic of device code: what the first panicking thread recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevicePanic {
    /// The panic message, formatted as `core` would on the CPU (values of types without
    /// device formatting appear as `<TYPE value>`).
    pub message: String,
    /// The source file of the panic.
    pub file: String,
    /// Its line.
    pub line: u32,
    /// Its column.
    pub column: u32,
    /// `blockIdx` (x, y, z) of the thread that panicked first.
    pub block: (u32, u32, u32),
    /// `threadIdx` (x, y, z) of that thread.
    pub thread: (u32, u32, u32),
    /// Whether the message or file name was cut to fit the record.
    pub truncated: bool,
}

impl fmt::Display for DevicePanic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (bx, by, bz) = self.block;
        let (tx, ty, tz) = self.thread;
        write!(
            f,
            "panicked at {}:{}:{} in block ({bx}, {by}, {bz}), thread ({tx}, {ty}, {tz}):\n{}{}",
            self.file,
            self.line,
            self.column,
            self.message,
            if self.truncated { " [truncated]" } else { "" }
        )
    }
}

/// The pinned, device-mapped buffer of one module's panic record.
#[derive(Debug)]
pub(crate) struct PanicBuffer {
    host: *mut u8,
    ctx: usize,
}

// SAFETY: the buffer is plain pinned host memory, read with volatile loads; it is freed once.
unsafe impl Send for PanicBuffer {}
// SAFETY: as above.
unsafe impl Sync for PanicBuffer {}

impl Drop for PanicBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by `cuMemHostAlloc` in `attach`, freed only here. An error (a
        // context broken by a fault) leaves nothing else to do.
        let _ = unsafe { result::free_host(self.host.cast()) };
    }
}

/// Every live panic record, with its context.
static RECORDS: Mutex<Vec<Arc<PanicBuffer>>> = Mutex::new(Vec::new());

/// Gives `module` (loaded on the bound context `ctx`) a panic record when its PTX has the
/// `RECORD` global; `Ok(None)` when it has none (its kernels cannot panic).
pub(crate) fn attach(
    ctx: usize,
    module: sys::CUmodule,
) -> Result<Option<Arc<PanicBuffer>>, cudarc::driver::DriverError> {
    let name = CString::new(reserved_oxide_symbols::PANIC_RECORD_SYMBOL).expect("no NUL");
    // SAFETY: the module is loaded on the bound context.
    let Ok((global, size)) = (unsafe { result::module::get_global(module, name) }) else {
        return Ok(None);
    };
    if size != 8 {
        return Ok(None);
    }
    let flags = sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE;
    // SAFETY: a plain allocation of pinned memory, zeroed before use.
    let host = unsafe { result::malloc_host(layout::RECORD_BYTES, flags) }?.cast::<u8>();
    let buffer = Arc::new(PanicBuffer { host, ctx });
    // SAFETY: `host` holds RECORD_BYTES bytes.
    unsafe { std::ptr::write_bytes(host, 0, layout::RECORD_BYTES) };
    let mut device: sys::CUdeviceptr = 0;
    // SAFETY: `host` was allocated with DEVICEMAP on this context.
    unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host.cast(), 0) }.result()?;
    // SAFETY: `global` is the module's 8-byte `RECORD`.
    unsafe { result::memcpy_htod_sync(global, &[device]) }?;
    RECORDS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Arc::clone(&buffer));
    Ok(Some(buffer))
}

/// Forgets `buffer` (its module is being unloaded).
pub(crate) fn detach(buffer: &Arc<PanicBuffer>) {
    RECORDS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|b| !Arc::ptr_eq(b, buffer));
}

/// The panic recorded on context `ctx` (on any when `None`), if a kernel panicked there.
pub(crate) fn recorded(ctx: Option<usize>) -> Option<DevicePanic> {
    let records = RECORDS.lock().unwrap_or_else(|e| e.into_inner());
    records
        .iter()
        .filter(|b| ctx.is_none_or(|c| c == b.ctx))
        .find_map(|buffer| {
            let mut bytes = vec![0u8; layout::RECORD_BYTES];
            for (i, byte) in bytes.iter_mut().enumerate() {
                // SAFETY: the record has RECORD_BYTES bytes; the device may have written it.
                *byte = unsafe { std::ptr::read_volatile(buffer.host.add(i)) };
            }
            decode(&bytes)
        })
}

fn u32_at(bytes: &[u8], offset: usize) -> u32 {
    u32::from_le_bytes(bytes[offset..offset + 4].try_into().expect("four bytes"))
}

/// The panic in the record `bytes`, if the device finished writing one.
pub fn decode(bytes: &[u8]) -> Option<DevicePanic> {
    if bytes.len() < layout::RECORD_BYTES || u32_at(bytes, layout::DONE) != 1 {
        return None;
    }
    let file_len = (u32_at(bytes, layout::FILE_LEN) as usize).min(layout::FILE_CAPACITY);
    let file = String::from_utf8_lossy(&bytes[layout::FILE..layout::FILE + file_len]).into_owned();
    let message_len = (u32_at(bytes, layout::MESSAGE_LEN) as usize).min(layout::MESSAGE_CAPACITY);
    let stream = &bytes[layout::MESSAGE..layout::MESSAGE + message_len];
    let (message, damaged) = format_stream(stream);
    let triple = |at: usize| {
        (
            u32_at(bytes, at),
            u32_at(bytes, at + 4),
            u32_at(bytes, at + 8),
        )
    };
    Some(DevicePanic {
        message,
        file,
        line: u32_at(bytes, layout::LINE),
        column: u32_at(bytes, layout::COLUMN),
        block: triple(layout::BLOCK),
        thread: triple(layout::THREAD),
        truncated: u32_at(bytes, layout::TRUNCATED) != 0 || damaged,
    })
}

/// The flags of `core::fmt::FormattingOptions`.
const SIGN_PLUS: u32 = 1 << 21;
const SIGN_MINUS: u32 = 1 << 22;
const ALTERNATE: u32 = 1 << 23;
const ZERO_PAD: u32 = 1 << 24;
const DEBUG_LOWER_HEX: u32 = 1 << 25;
const DEBUG_UPPER_HEX: u32 = 1 << 26;
const WIDTH: u32 = 1 << 27;
const PRECISION: u32 = 1 << 28;
const ALIGN_SHIFT: u32 = 29;

/// One placeholder's options.
#[derive(Clone, Copy, Debug)]
struct Spec {
    flags: u32,
    width: Option<usize>,
    precision: Option<usize>,
}

/// The message of a record's stream, and whether the stream ended inside an item.
fn format_stream(mut s: &[u8]) -> (String, bool) {
    let mut out = String::new();
    while let Some((&tag, rest)) = s.split_first() {
        s = rest;
        match tag {
            layout::ITEM_TEXT => {
                let Some((text, rest)) = take_sized(s) else {
                    return (out, true);
                };
                out.push_str(&String::from_utf8_lossy(text));
                s = rest;
            }
            layout::ITEM_VALUE => {
                if s.len() < 11 {
                    return (out, true);
                }
                let (tr, kind, size) = (s[0], s[1], s[2]);
                let flags = u32::from_le_bytes(s[3..7].try_into().expect("four bytes"));
                let width = u16::from_le_bytes([s[7], s[8]]) as usize;
                let precision = u16::from_le_bytes([s[9], s[10]]) as usize;
                s = &s[11..];
                let spec = Spec {
                    flags,
                    width: (flags & WIDTH != 0).then_some(width),
                    precision: (flags & PRECISION != 0).then_some(precision),
                };
                let text = match kind {
                    layout::KIND_STR | layout::KIND_OPAQUE => {
                        let Some((bytes, rest)) = take_sized(s) else {
                            return (out, true);
                        };
                        s = rest;
                        let text = String::from_utf8_lossy(bytes).into_owned();
                        if kind == layout::KIND_OPAQUE {
                            format!("<{text} value>")
                        } else if tr == layout::TRAIT_DEBUG {
                            format!("{text:?}")
                        } else {
                            truncate_chars(&text, spec.precision)
                        }
                    }
                    _ => {
                        if s.len() < 16 {
                            return (out, true);
                        }
                        let bits = u128::from_le_bytes(s[..16].try_into().expect("16 bytes"));
                        s = &s[16..];
                        format_scalar(tr, kind, size, bits, spec)
                    }
                };
                pad(&mut out, &text, spec, kind);
            }
            _ => return (out, true),
        }
    }
    (out, false)
}

/// A `u16`-length-prefixed byte string, and what follows it.
fn take_sized(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let len = u16::from_le_bytes([*s.first()?, *s.get(1)?]) as usize;
    let rest = &s[2..];
    (rest.len() >= len).then(|| rest.split_at(len))
}

fn truncate_chars(text: &str, precision: Option<usize>) -> String {
    match precision {
        Some(p) => text.chars().take(p).collect(),
        None => text.to_owned(),
    }
}

/// A number, `bool` or `char` of `size` bytes with the bits `bits`, as trait `tr` formats it.
fn format_scalar(tr: u8, kind: u8, size: u8, bits: u128, spec: Spec) -> String {
    let size = usize::from(size.clamp(1, 16));
    let mask = if size == 16 {
        u128::MAX
    } else {
        (1u128 << (size * 8)) - 1
    };
    let unsigned = bits & mask;
    let signed = {
        let shift = 128 - size * 8;
        ((unsigned << shift) as i128) >> shift
    };
    let alternate = spec.flags & ALTERNATE != 0;
    let plus = spec.flags & SIGN_PLUS != 0;
    let debug_hex = spec.flags & (DEBUG_LOWER_HEX | DEBUG_UPPER_HEX);
    let radix = match (tr, debug_hex) {
        (layout::TRAIT_LOWER_HEX, _) | (layout::TRAIT_DEBUG, DEBUG_LOWER_HEX) => Some((16, false)),
        (layout::TRAIT_UPPER_HEX, _) | (layout::TRAIT_DEBUG, DEBUG_UPPER_HEX) => Some((16, true)),
        (layout::TRAIT_OCTAL, _) => Some((8, false)),
        (layout::TRAIT_BINARY, _) => Some((2, false)),
        _ => None,
    };
    match kind {
        layout::KIND_UINT | layout::KIND_SINT | layout::KIND_POINTER => {
            if kind == layout::KIND_POINTER || tr == layout::TRAIT_POINTER {
                return format!("{unsigned:#x}");
            }
            if let Some((radix, upper)) = radix {
                // Hex, octal and binary show the two's complement bits.
                let digits = match radix {
                    16 if upper => format!("{unsigned:X}"),
                    16 => format!("{unsigned:x}"),
                    8 => format!("{unsigned:o}"),
                    _ => format!("{unsigned:b}"),
                };
                let prefix = match radix {
                    16 => "0x",
                    8 => "0o",
                    _ => "0b",
                };
                return if alternate {
                    format!("{prefix}{digits}")
                } else {
                    digits
                };
            }
            let text = match (kind, tr) {
                (layout::KIND_SINT, layout::TRAIT_LOWER_EXP) => format!("{signed:e}"),
                (layout::KIND_SINT, layout::TRAIT_UPPER_EXP) => format!("{signed:E}"),
                (_, layout::TRAIT_LOWER_EXP) => format!("{unsigned:e}"),
                (_, layout::TRAIT_UPPER_EXP) => format!("{unsigned:E}"),
                (layout::KIND_SINT, _) => signed.to_string(),
                _ => unsigned.to_string(),
            };
            with_plus(text, plus)
        }
        layout::KIND_FLOAT => {
            let value = if size == 4 {
                f64::from(f32::from_bits(unsigned as u32))
            } else {
                f64::from_bits(unsigned as u64)
            };
            let text = if size == 4 {
                let v = f32::from_bits(unsigned as u32);
                float_text(tr, spec.precision, v)
            } else {
                float_text(tr, spec.precision, value)
            };
            with_plus(text, plus && value.is_sign_positive())
        }
        layout::KIND_BOOL => (unsigned != 0).to_string(),
        layout::KIND_CHAR => match char::from_u32(unsigned as u32) {
            Some(c) if tr == layout::TRAIT_DEBUG => format!("{c:?}"),
            Some(c) => c.to_string(),
            None => format!("<invalid char {unsigned:#x}>"),
        },
        _ => format!("<value of unknown kind {kind}>"),
    }
}

/// A float as `{}`, `{:?}`, `{:e}`, `{:E}` with an optional precision.
fn float_text<F: fmt::Display + fmt::Debug + fmt::LowerExp + fmt::UpperExp>(
    tr: u8,
    precision: Option<usize>,
    v: F,
) -> String {
    match (tr, precision) {
        (layout::TRAIT_LOWER_EXP, Some(p)) => format!("{v:.p$e}"),
        (layout::TRAIT_LOWER_EXP, None) => format!("{v:e}"),
        (layout::TRAIT_UPPER_EXP, Some(p)) => format!("{v:.p$E}"),
        (layout::TRAIT_UPPER_EXP, None) => format!("{v:E}"),
        (layout::TRAIT_DEBUG, Some(p)) => format!("{v:.p$?}"),
        (layout::TRAIT_DEBUG, None) => format!("{v:?}"),
        (_, Some(p)) => format!("{v:.p$}"),
        (_, None) => format!("{v}"),
    }
}

fn with_plus(text: String, plus: bool) -> String {
    if plus && !text.starts_with('-') {
        format!("+{text}")
    } else {
        text
    }
}

/// Appends `text` padded to the spec's width: with the fill and alignment, or with zeros after
/// the sign and prefix for `{:0N}` on numbers.
fn pad(out: &mut String, text: &str, spec: Spec, kind: u8) {
    let _ = SIGN_MINUS;
    let len = text.chars().count();
    let Some(width) = spec.width.filter(|&w| w > len) else {
        out.push_str(text);
        return;
    };
    let missing = width - len;
    let numeric = matches!(
        kind,
        layout::KIND_UINT | layout::KIND_SINT | layout::KIND_FLOAT | layout::KIND_POINTER
    );
    if spec.flags & ZERO_PAD != 0 && numeric {
        let sign_len = text
            .find(|c: char| c != '+' && c != '-')
            .unwrap_or(text.len());
        let (sign, rest) = text.split_at(sign_len);
        let prefix_len =
            if rest.starts_with("0x") || rest.starts_with("0o") || rest.starts_with("0b") {
                2
            } else {
                0
            };
        let (prefix, digits) = rest.split_at(prefix_len);
        out.push_str(sign);
        out.push_str(prefix);
        out.extend(std::iter::repeat_n('0', missing));
        out.push_str(digits);
        return;
    }
    let fill = char::from_u32(spec.flags & 0x1F_FFFF).unwrap_or(' ');
    // Alignment: 0 left, 1 right, 2 center, 3 unknown (numbers right, the rest left).
    let align = match (spec.flags >> ALIGN_SHIFT) & 3 {
        3 if numeric => 1,
        3 => 0,
        a => a,
    };
    let (before, after) = match align {
        0 => (0, missing),
        1 => (missing, 0),
        _ => (missing / 2, missing - missing / 2),
    };
    out.extend(std::iter::repeat_n(fill, before));
    out.push_str(text);
    out.extend(std::iter::repeat_n(fill, after));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record as the device writes it, built item by item.
    struct Record(Vec<u8>, usize);

    const DEFAULT: u32 = ' ' as u32 | (3 << ALIGN_SHIFT);

    impl Record {
        fn new() -> Self {
            let mut bytes = vec![0u8; layout::RECORD_BYTES];
            let put = |b: &mut Vec<u8>, at: usize, v: u32| {
                b[at..at + 4].copy_from_slice(&v.to_le_bytes())
            };
            put(&mut bytes, layout::CLAIMED, 1);
            put(&mut bytes, layout::DONE, 1);
            for (i, v) in [3, 0, 0, 17, 0, 0].into_iter().enumerate() {
                put(&mut bytes, layout::BLOCK + 4 * i, v);
            }
            put(&mut bytes, layout::LINE, 42);
            put(&mut bytes, layout::COLUMN, 9);
            let file = b"src/main.rs";
            bytes[layout::FILE..layout::FILE + file.len()].copy_from_slice(file);
            put(&mut bytes, layout::FILE_LEN, file.len() as u32);
            Record(bytes, 0)
        }
        fn push(&mut self, b: &[u8]) {
            let at = layout::MESSAGE + self.1;
            self.0[at..at + b.len()].copy_from_slice(b);
            self.1 += b.len();
            let len = (self.1 as u32).to_le_bytes();
            self.0[layout::MESSAGE_LEN..layout::MESSAGE_LEN + 4].copy_from_slice(&len);
        }
        fn text(mut self, t: &str) -> Self {
            self.push(&[layout::ITEM_TEXT]);
            self.push(&(t.len() as u16).to_le_bytes());
            self.push(t.as_bytes());
            self
        }
        /// One value item: trait, kind, size, flags, width, precision, bits.
        #[allow(clippy::too_many_arguments)]
        fn value(
            mut self,
            tr: u8,
            kind: u8,
            size: u8,
            flags: u32,
            w: u16,
            p: u16,
            bits: u128,
        ) -> Self {
            self.push(&[layout::ITEM_VALUE, tr, kind, size]);
            self.push(&flags.to_le_bytes());
            self.push(&w.to_le_bytes());
            self.push(&p.to_le_bytes());
            self.push(&bits.to_le_bytes());
            self
        }
        fn string(mut self, tr: u8, kind: u8, s: &str) -> Self {
            self.push(&[layout::ITEM_VALUE, tr, kind, 16]);
            self.push(&DEFAULT.to_le_bytes());
            self.push(&[0, 0, 0, 0]);
            self.push(&(s.len() as u16).to_le_bytes());
            self.push(s.as_bytes());
            self
        }
    }

    #[test]
    fn a_record_decodes_to_message_location_and_thread() {
        use layout::*;
        let r = Record::new()
            .text("bad value ")
            .value(
                TRAIT_DISPLAY,
                KIND_SINT,
                4,
                DEFAULT,
                0,
                0,
                (-7i32) as u32 as u128,
            )
            .text(" x=")
            .value(
                TRAIT_DISPLAY,
                KIND_FLOAT,
                4,
                DEFAULT | PRECISION,
                0,
                2,
                1.5f32.to_bits() as u128,
            )
            .text(" ")
            .value(TRAIT_DISPLAY, KIND_BOOL, 1, DEFAULT, 0, 0, 1)
            .text(" ")
            .value(TRAIT_DEBUG, KIND_CHAR, 4, DEFAULT, 0, 0, 'q' as u128)
            .text(" ")
            .string(TRAIT_DISPLAY, KIND_STR, "name")
            .text(" ")
            .string(TRAIT_DEBUG, KIND_STR, "q\"s")
            .text(" ")
            .string(TRAIT_DEBUG, KIND_OPAQUE, "app::Point");
        let panic = decode(&r.0).expect("a finished record");
        assert_eq!(
            panic.message,
            "bad value -7 x=1.50 true 'q' name \"q\\\"s\" <app::Point value>"
        );
        assert_eq!(
            (panic.file.as_str(), panic.line, panic.column),
            ("src/main.rs", 42, 9)
        );
        assert_eq!((panic.block, panic.thread), ((3, 0, 0), (17, 0, 0)));
        assert!(!panic.truncated);
        assert_eq!(
            panic.to_string(),
            "panicked at src/main.rs:42:9 in block (3, 0, 0), thread (17, 0, 0):\n\
             bad value -7 x=1.50 true 'q' name \"q\\\"s\" <app::Point value>"
        );
    }

    #[test]
    fn numbers_follow_their_trait_and_options() {
        use layout::*;
        let f = |tr, kind, size, flags, w, p, bits| {
            let r = Record::new().value(tr, kind, size, flags, w, p, bits);
            decode(&r.0).unwrap().message
        };
        assert_eq!(
            f(TRAIT_DISPLAY, KIND_UINT, 8, DEFAULT, 0, 0, u64::MAX as u128),
            "18446744073709551615"
        );
        assert_eq!(f(TRAIT_DISPLAY, KIND_SINT, 1, DEFAULT, 0, 0, 0x80), "-128");
        assert_eq!(
            f(
                TRAIT_DISPLAY,
                KIND_SINT,
                16,
                DEFAULT,
                0,
                0,
                (-5i128) as u128
            ),
            "-5"
        );
        assert_eq!(
            f(
                TRAIT_LOWER_HEX,
                KIND_UINT,
                4,
                DEFAULT | ALTERNATE,
                0,
                0,
                255
            ),
            "0xff"
        );
        assert_eq!(f(TRAIT_UPPER_HEX, KIND_SINT, 1, DEFAULT, 0, 0, 0xff), "FF");
        assert_eq!(f(TRAIT_BINARY, KIND_UINT, 1, DEFAULT, 0, 0, 5), "101");
        assert_eq!(
            f(TRAIT_DISPLAY, KIND_UINT, 4, DEFAULT | WIDTH, 5, 0, 42),
            "   42"
        );
        assert_eq!(
            f(
                TRAIT_DISPLAY,
                KIND_SINT,
                4,
                DEFAULT | WIDTH | ZERO_PAD,
                5,
                0,
                (-42i32) as u32 as u128
            ),
            "-0042"
        );
        let left = ('*' as u32) | WIDTH; // fill '*', left aligned
        assert_eq!(f(TRAIT_DISPLAY, KIND_UINT, 4, left, 4, 0, 7), "7***");
        assert_eq!(
            f(
                TRAIT_DEBUG,
                KIND_FLOAT,
                8,
                DEFAULT,
                0,
                0,
                1.0f64.to_bits() as u128
            ),
            "1.0"
        );
        assert_eq!(
            f(
                TRAIT_DISPLAY,
                KIND_FLOAT,
                8,
                DEFAULT,
                0,
                0,
                1.0f64.to_bits() as u128
            ),
            "1"
        );
        assert_eq!(
            f(
                TRAIT_DISPLAY,
                KIND_FLOAT,
                4,
                DEFAULT | SIGN_PLUS,
                0,
                0,
                0.25f32.to_bits() as u128
            ),
            "+0.25"
        );
        assert_eq!(
            f(
                TRAIT_LOWER_EXP,
                KIND_FLOAT,
                8,
                DEFAULT,
                0,
                0,
                1500f64.to_bits() as u128
            ),
            "1.5e3"
        );
    }

    #[test]
    fn unfinished_or_cut_records() {
        let mut r = Record::new().text("partial");
        r.0[layout::DONE] = 0;
        assert_eq!(
            decode(&r.0),
            None,
            "a record still being written is not a panic"
        );
        let mut r = Record::new().text("abc");
        // Claim a longer stream than the items hold: the last item is cut.
        r.0[layout::MESSAGE_LEN] = 5;
        let panic = decode(&r.0).unwrap();
        assert!(panic.truncated);
    }

    #[test]
    fn the_record_symbol_is_the_one_the_device_lowering_exports() {
        assert_eq!(
            cuda_device::panic::RECORD_SYMBOL,
            reserved_oxide_symbols::PANIC_RECORD_SYMBOL
        );
    }
}
