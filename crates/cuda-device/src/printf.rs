//! What [`gpu_printf!`](crate::gpu_printf) expands to: CUDA's device-side `vprintf`, the
//! traits that say which arguments it can print and how, and the compile-time translation of
//! a Rust format string into a C one.
//!
//! `vprintf(format, args)` takes a C format string in device memory and a buffer of the
//! arguments. Every argument here takes one 8-byte, 8-aligned slot: integers widened to 64
//! bits (printed with `%lld`, `%llu`, `%llx`, ...), floats as `f64` (C promotes `float` to
//! `double` for variadic arguments, and `vprintf` reads them so), pointers and strings as
//! 64-bit addresses. The host prints the lines at the next synchronisation.

/// How an argument travels to `vprintf`: which family of C conversions prints it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// A signed integer, sign-extended to 64 bits.
    Signed,
    /// An unsigned integer, zero-extended to 64 bits.
    Unsigned,
    /// `f32` or `f64`, as a `double`.
    Float,
    /// A raw pointer.
    Pointer,
    /// The address of a NUL-terminated string.
    Str,
}

/// A value `gpu_printf!` can print.
#[diagnostic::on_unimplemented(
    message = "gpu_printf! cannot print `{Self}`",
    label = "not an integer, float, bool, raw pointer or string literal",
    note = "gpu_printf! prints integers, `f32`/`f64`, `bool`, raw pointers (`{{:p}}`) and \
            string literals; a `&str` that is not a literal has no NUL terminator for C's `%s`"
)]
pub trait PrintfArg: Copy {
    /// Which C conversions print it.
    const KIND: ArgKind;

    /// The 8 bytes of its `vprintf` slot. `bits` asks for the value's bits zero-extended from
    /// its own width (what `{:x}` of a negative `i32` prints, as Rust does) instead of its
    /// value sign-extended.
    fn slot(self, bits: bool) -> u64;
}

/// Arguments of `{}` (and `{:?}`): integers, floats, `bool`, strings.
#[diagnostic::on_unimplemented(
    message = "gpu_printf!: `{{}}` cannot print `{Self}`",
    note = "`{{}}` prints integers, floats, `bool` and string literals (a `&str` that is not a \
            literal has no NUL terminator for C's `%s`); print a raw pointer with `{{:p}}`"
)]
pub trait FormatDisplay: PrintfArg {}

/// Arguments of `{:x}`, `{:X}` and `{:o}`: integers.
#[diagnostic::on_unimplemented(
    message = "gpu_printf!: `{{:x}}`, `{{:X}}` and `{{:o}}` print integers, not `{Self}`"
)]
pub trait FormatRadix: PrintfArg {}

/// Arguments of `{:e}` and `{:E}`: floats.
#[diagnostic::on_unimplemented(
    message = "gpu_printf!: `{{:e}}` and `{{:E}}` print floats, not `{Self}`"
)]
pub trait FormatExp: PrintfArg {}

/// Arguments of `{:p}`: raw pointers.
#[diagnostic::on_unimplemented(message = "gpu_printf!: `{{:p}}` prints raw pointers, not `{Self}`")]
pub trait FormatPointer: PrintfArg {}

/// Arguments with a precision (`{:.3}`): floats (a string literal's precision is applied by
/// the macro itself).
#[diagnostic::on_unimplemented(
    message = "gpu_printf!: a precision (`{{:.N}}`) applies to floats, not `{Self}`"
)]
pub trait FormatPrecision: PrintfArg {}

macro_rules! integers {
    ($kind:ident, $wide:ty: $($t:ty),*) => {$(
        impl PrintfArg for $t {
            const KIND: ArgKind = ArgKind::$kind;

            #[inline]
            fn slot(self, bits: bool) -> u64 {
                const WIDTH: u32 = <$t>::BITS;
                let value = self as $wide as u64;
                if bits && WIDTH < 64 {
                    value & ((1u64 << WIDTH) - 1)
                } else {
                    value
                }
            }
        }
        impl FormatDisplay for $t {}
        impl FormatRadix for $t {}
    )*};
}

integers!(Signed, i64: i8, i16, i32, i64, isize);
integers!(Unsigned, u64: u8, u16, u32, u64, usize);

impl PrintfArg for f32 {
    const KIND: ArgKind = ArgKind::Float;

    #[inline]
    fn slot(self, _: bool) -> u64 {
        f64::from(self).to_bits()
    }
}

impl PrintfArg for f64 {
    const KIND: ArgKind = ArgKind::Float;

    #[inline]
    fn slot(self, _: bool) -> u64 {
        self.to_bits()
    }
}

impl FormatDisplay for f32 {}
impl FormatDisplay for f64 {}
impl FormatExp for f32 {}
impl FormatExp for f64 {}
impl FormatPrecision for f32 {}
impl FormatPrecision for f64 {}

/// `true` or `false`, printed with `%s`.
impl PrintfArg for bool {
    const KIND: ArgKind = ArgKind::Str;

    #[inline]
    fn slot(self, _: bool) -> u64 {
        let text: &'static [u8] = if self { b"true\0" } else { b"false\0" };
        text.as_ptr() as u64
    }
}

impl FormatDisplay for bool {}

impl<T> PrintfArg for *const T {
    const KIND: ArgKind = ArgKind::Pointer;

    #[inline]
    fn slot(self, _: bool) -> u64 {
        self as usize as u64
    }
}

impl<T> PrintfArg for *mut T {
    const KIND: ArgKind = ArgKind::Pointer;

    #[inline]
    fn slot(self, _: bool) -> u64 {
        self as usize as u64
    }
}

impl<T> FormatPointer for *const T {}
impl<T> FormatPointer for *mut T {}

/// A string literal argument, which the macro NUL-terminates: its address.
#[doc(hidden)]
#[derive(Copy, Clone, Debug)]
pub struct CStrLiteral(pub &'static [u8]);

impl PrintfArg for CStrLiteral {
    const KIND: ArgKind = ArgKind::Str;

    #[inline]
    fn slot(self, _: bool) -> u64 {
        self.0.as_ptr() as u64
    }
}

impl FormatDisplay for CStrLiteral {}

/// The conversion a placeholder asks for (`{}`, `{:x}`, ...).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Style {
    /// `{}` and `{:?}`.
    Display,
    /// `{:x}`.
    LowerHex,
    /// `{:X}`.
    UpperHex,
    /// `{:o}`.
    Octal,
    /// `{:e}`.
    LowerExp,
    /// `{:E}`.
    UpperExp,
    /// `{:p}`.
    Pointer,
}

impl Style {
    /// Whether an integer is printed as its bits (zero-extended from its width) rather than
    /// its value.
    pub const fn prints_bits(self) -> bool {
        matches!(self, Style::LowerHex | Style::UpperHex | Style::Octal)
    }
}

/// Where a padded value sits in its width.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Align {
    /// `<`.
    Left,
    /// `>`.
    Right,
}

/// One placeholder, as the macro parsed it.
#[derive(Copy, Clone, Debug)]
pub struct Spec {
    /// The conversion.
    pub style: Style,
    /// `<` or `>`; Rust's default is right for numbers, left for strings.
    pub align: Option<Align>,
    /// `+`: always print the sign.
    pub plus: bool,
    /// `#`: `0x` before hexadecimal.
    pub alternate: bool,
    /// `0`: pad with zeros after the sign.
    pub zero: bool,
    /// Minimum width (0: none).
    pub width: u32,
    /// Digits after the point (floats), or characters (strings).
    pub precision: Option<u32>,
}

/// A piece of a format string.
#[derive(Copy, Clone, Debug)]
pub enum Piece {
    /// Text printed as it is (a `%` in it is escaped).
    Text(&'static str),
    /// A placeholder and the kind of its argument.
    Arg(Spec, ArgKind),
}

/// The most bytes one placeholder takes in the C format string (`%-+#0`, width, precision,
/// `ll` and the conversion).
pub const MAX_CONVERSION_BYTES: usize = 32;

/// The C format string of `pieces`, NUL-terminated and NUL-padded to `N` bytes (the macro
/// chooses `N` large enough: twice the text, plus [`MAX_CONVERSION_BYTES`] per placeholder,
/// plus one).
pub const fn c_format<const N: usize>(pieces: &[Piece]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut at = 0;
    let mut p = 0;
    while p < pieces.len() {
        match pieces[p] {
            Piece::Text(text) => {
                let bytes = text.as_bytes();
                let mut i = 0;
                while i < bytes.len() {
                    if bytes[i] == b'%' {
                        at = push(&mut out, at, b'%');
                    }
                    at = push(&mut out, at, bytes[i]);
                    i += 1;
                }
            }
            Piece::Arg(spec, kind) => at = conversion(&mut out, at, spec, kind),
        }
        p += 1;
    }
    assert!(
        at < N,
        "gpu_printf!: the C format string does not fit (a cuda-oxide bug)"
    );
    out
}

const fn push<const N: usize>(out: &mut [u8; N], at: usize, byte: u8) -> usize {
    assert!(
        at < N,
        "gpu_printf!: the C format string does not fit (a cuda-oxide bug)"
    );
    out[at] = byte;
    at + 1
}

const fn push_number<const N: usize>(out: &mut [u8; N], mut at: usize, value: u32) -> usize {
    let mut digits = [0u8; 10];
    let mut n = 0;
    let mut v = value;
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    while n > 0 {
        n -= 1;
        at = push(out, at, digits[n]);
    }
    at
}

/// Writes one C conversion. The macro's trait bounds have already refused the combinations of
/// style and argument that have none, so the asserts here are never reached from it.
const fn conversion<const N: usize>(
    out: &mut [u8; N],
    mut at: usize,
    spec: Spec,
    kind: ArgKind,
) -> usize {
    // Rust's `{:#x}` always writes `0x`, and counts it in a zero-padded width; C's `%#x`
    // writes nothing for 0. So the prefix is text, unless the value is padded with spaces
    // (`{:#8x}`), where only C's flag puts `0x` after the padding.
    let mut width = spec.width;
    let mut alternate = spec.alternate;
    if alternate && (spec.zero || width == 0) {
        at = push(out, at, b'0');
        at = push(out, at, b'x');
        width = width.saturating_sub(2);
        alternate = false;
    }
    at = push(out, at, b'%');
    let left = match spec.align {
        Some(Align::Left) => true,
        Some(Align::Right) => false,
        // Rust pads strings on the right, numbers on the left; C pads everything on the left.
        None => matches!(kind, ArgKind::Str),
    };
    if left && width > 0 {
        at = push(out, at, b'-');
    }
    if spec.plus {
        at = push(out, at, b'+');
    }
    if alternate {
        at = push(out, at, b'#');
    }
    if spec.zero && width > 0 {
        at = push(out, at, b'0');
    }
    if width > 0 {
        at = push_number(out, at, width);
    }
    if let Some(precision) = spec.precision {
        at = push(out, at, b'.');
        at = push_number(out, at, precision);
    }
    let integer = matches!(kind, ArgKind::Signed | ArgKind::Unsigned);
    if integer {
        at = push(out, at, b'l');
        at = push(out, at, b'l');
    }
    let letter = match (spec.style, kind) {
        (Style::Display, ArgKind::Signed) => b'd',
        (Style::Display, ArgKind::Unsigned) => b'u',
        // `{}` of a float is C's shortest general form; with a precision, fixed decimals
        // (Rust's `{:.3}`).
        (Style::Display, ArgKind::Float) if spec.precision.is_none() => b'g',
        (Style::Display, ArgKind::Float) => b'f',
        (Style::Display, ArgKind::Str) => b's',
        (Style::LowerHex, _) if integer => b'x',
        (Style::UpperHex, _) if integer => b'X',
        (Style::Octal, _) if integer => b'o',
        (Style::LowerExp, ArgKind::Float) => b'e',
        (Style::UpperExp, ArgKind::Float) => b'E',
        (Style::Pointer, ArgKind::Pointer) => b'p',
        _ => panic!("gpu_printf!: no C conversion prints this argument this way"),
    };
    push(out, at, letter)
}

#[crate::device]
unsafe extern "C" {
    /// CUDA's device-side `printf`: prints the C format string `format` with the arguments
    /// packed in the buffer `args` (each in an 8-byte-aligned slot), into the buffer the host
    /// prints at its next synchronisation. Returns the number of arguments, or a negative
    /// value on error. A PTX system call; `gpu_printf!` is the safe way to use it.
    pub fn vprintf(format: *const u8, args: *const u8) -> i32;
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAIN: Spec = Spec {
        style: Style::Display,
        align: None,
        plus: false,
        alternate: false,
        zero: false,
        width: 0,
        precision: None,
    };

    fn text(bytes: &[u8]) -> &str {
        let end = bytes.iter().position(|&b| b == 0).unwrap();
        core::str::from_utf8(&bytes[..end]).unwrap()
    }

    #[test]
    fn formats_translate_to_c() {
        const F: [u8; 128] = c_format(&[
            Piece::Text("i = "),
            Piece::Arg(PLAIN, ArgKind::Signed),
            Piece::Text(" x = "),
            Piece::Arg(
                Spec {
                    precision: Some(3),
                    ..PLAIN
                },
                ArgKind::Float,
            ),
            Piece::Text(" 100% ["),
            Piece::Arg(Spec { width: 8, ..PLAIN }, ArgKind::Str),
            Piece::Text("] "),
            Piece::Arg(
                Spec {
                    style: Style::LowerHex,
                    alternate: true,
                    zero: true,
                    width: 10,
                    ..PLAIN
                },
                ArgKind::Unsigned,
            ),
            Piece::Arg(
                Spec {
                    align: Some(Align::Left),
                    plus: true,
                    width: 5,
                    ..PLAIN
                },
                ArgKind::Signed,
            ),
            Piece::Arg(PLAIN, ArgKind::Float),
            Piece::Arg(
                Spec {
                    style: Style::UpperExp,
                    ..PLAIN
                },
                ArgKind::Float,
            ),
            Piece::Arg(
                Spec {
                    style: Style::Pointer,
                    ..PLAIN
                },
                ArgKind::Pointer,
            ),
        ]);
        assert_eq!(
            text(&F),
            "i = %lld x = %.3f 100%% [%-8s] 0x%08llx%-+5lld%g%E%p"
        );
    }

    #[test]
    fn hex_prefixes_follow_rust() {
        let hex = |width, zero| {
            let spec = Spec {
                style: Style::LowerHex,
                alternate: true,
                zero,
                width,
                ..PLAIN
            };
            c_format::<32>(&[Piece::Arg(spec, ArgKind::Unsigned)])
        };
        assert_eq!(text(&hex(0, false)), "0x%llx");
        assert_eq!(text(&hex(6, true)), "0x%04llx");
        assert_eq!(text(&hex(8, false)), "%#8llx");
        let bool_text = c_format::<16>(&[Piece::Arg(PLAIN, ArgKind::Str)]);
        assert_eq!(text(&bool_text), "%s");
    }

    #[test]
    fn slots_hold_values_or_bits() {
        assert_eq!((-1i32).slot(false), u64::MAX);
        assert_eq!((-1i32).slot(true), 0xffff_ffff);
        assert_eq!((-2i8).slot(true), 0xfe);
        assert_eq!(u64::MAX.slot(true), u64::MAX);
        assert_eq!(1.5f32.slot(false), 1.5f64.to_bits());
        assert!(Style::Octal.prints_bits() && !Style::Display.prints_bits());
        assert_eq!(<bool as PrintfArg>::KIND, ArgKind::Str);
    }
}
