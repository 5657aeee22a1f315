//! Device versions of the few functions of `core` that `core` ships without MIR (they are
//! neither generic nor `#[inline]`, so only their machine code for the host exists), which
//! device code therefore cannot compile from `core` itself. The compiler calls these instead
//! wherever `core` calls the originals (the table is `mir_importer::core_shims`); they are not
//! meant to be called directly.

/// `core::slice::memchr::memchr_aligned`: the first index of `x` in `text` (what
/// `<[u8]>::contains` and `str::find(char)` reach for long inputs).
pub fn memchr_aligned(x: u8, text: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < text.len() {
        if text[i] == x {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// `core::slice::memchr::memrchr`: the last index of `x` in `text`.
pub fn memrchr(x: u8, text: &[u8]) -> Option<usize> {
    let mut i = text.len();
    while i > 0 {
        i -= 1;
        if text[i] == x {
            return Some(i);
        }
    }
    None
}
