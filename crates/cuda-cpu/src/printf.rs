//! `vprintf` of device code on the CPU: CUDA's argument buffer (every argument of
//! `gpu_printf!` in an 8-byte slot) formatted by the C library, one conversion at a time, and
//! written to standard output whole, so that lines of concurrent threads do not mix.

use std::ffi::{CStr, c_char, c_int};
use std::io::Write as _;

unsafe extern "C" {
    fn snprintf(buffer: *mut c_char, size: usize, format: *const c_char, ...) -> c_int;
}

/// Formats `format` with the slots at `args` and prints the text; the number of bytes.
///
/// # Safety
/// `format` must be a NUL-terminated C format string and `args` hold one 8-byte slot per
/// conversion, as `gpu_printf!` builds them.
pub(crate) unsafe fn vprintf(format: *const c_char, args: *const u64) -> c_int {
    // SAFETY: as the caller guarantees.
    let format = unsafe { CStr::from_ptr(format) }.to_bytes();
    let mut out = Vec::new();
    let mut slot = 0;
    let mut i = 0;
    while i < format.len() {
        if format[i] != b'%' {
            out.push(format[i]);
            i += 1;
            continue;
        }
        if format.get(i + 1) == Some(&b'%') {
            out.push(b'%');
            i += 2;
            continue;
        }
        // One conversion: flags, width, precision, length, then the conversion character.
        let start = i;
        i += 1;
        while i < format.len() && !format[i].is_ascii_alphabetic() {
            i += 1;
        }
        while i < format.len() && matches!(format[i], b'l' | b'h' | b'z' | b'j' | b't' | b'L') {
            i += 1;
        }
        let Some(&conversion) = format.get(i) else {
            out.extend_from_slice(&format[start..]);
            break;
        };
        i += 1;
        let mut spec = format[start..i].to_vec();
        spec.push(0);
        // SAFETY: one slot per conversion, as the caller guarantees.
        let value = unsafe { args.add(slot).read_unaligned() };
        slot += 1;
        let mut buffer = vec![0u8; 512];
        let spec = spec.as_ptr().cast::<c_char>();
        let buf = buffer.as_mut_ptr().cast::<c_char>();
        // SAFETY: each conversion gets an argument of the type its character reads.
        let written = unsafe {
            match conversion {
                b'd' | b'i' => snprintf(buf, buffer.len(), spec, value as i64),
                b'u' | b'x' | b'X' | b'o' | b'c' => snprintf(buf, buffer.len(), spec, value),
                b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A' => {
                    snprintf(buf, buffer.len(), spec, f64::from_bits(value))
                }
                b'p' | b's' => snprintf(buf, buffer.len(), spec, value as *const c_char),
                _ => -1,
            }
        };
        if written < 0 {
            continue;
        }
        let written = (written as usize).min(buffer.len() - 1);
        out.extend_from_slice(&buffer[..written]);
    }
    let _ = std::io::stdout().lock().write_all(&out);
    out.len() as c_int
}
