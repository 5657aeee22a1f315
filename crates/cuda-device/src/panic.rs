//! Panics on the GPU: what the first panicking thread leaves for the host.
//!
//! A panic in device code (`panic!`, `assert!`, `unwrap`, a failed bounds or overflow check)
//! ends in [`record`]: the first thread to get there claims the module's *panic record* (a
//! small buffer of pinned host memory mapped into the GPU's address space, which the host
//! runtime allocates when it loads the module and whose address it writes into [`RECORD`]),
//! fills it with the message, its location and the thread's coordinates, and traps. Host
//! memory stays readable after the trap has broken the CUDA context, so the host reads the
//! record after the failed synchronisation and formats the message itself (`cuda_host`'s
//! `DevicePanic`).
//!
//! The message is copied as `core::fmt::Arguments` holds it: its template (literal pieces
//! and placeholders with their flags, width and precision) and, for each placeholder, the
//! raw bits of the argument with its type. The compiler makes that possible: where
//! `format_args!` (or a `&dyn Debug` vtable) holds `<T as Display>::fmt`, device code holds a
//! pointer to a [`descriptor`] of `T` instead, so a kernel that can panic carries no formatting
//! code. Device code that formats for real (`write!` into a buffer) keeps the methods, and the
//! compiler lists each one's descriptor in [`FORMATTING_METHODS`].
//!
//! The layout of the record ([`layout`]) is shared with the host, which decodes it.

use core::fmt::Arguments;
use core::panic::Location;

use crate::atomic::{AtomicOrdering, SystemAtomicU32};

/// The device address of this module's panic record, written by the host after it loads the
/// module; 0 when no host wrote one (then a panic only traps). Not for direct use.
#[doc(hidden)]
pub static mut RECORD: u64 = 0;

/// The symbol of [`RECORD`] in the PTX, which the host looks up (`cuModuleGetGlobal`).
pub const RECORD_SYMBOL: &str = "cuda_device__panic__RECORD";

/// The panic record's layout: byte offsets of its fields (little-endian), and the encoding of
/// the message stream. The host decodes exactly this.
pub mod layout {
    /// The record's size in bytes.
    pub const RECORD_BYTES: usize = 4096;
    /// `u32`: 0 while free; set to 1 by the thread that claims the record.
    pub const CLAIMED: usize = 0;
    /// `u32`: 1 once the claiming thread has written everything.
    pub const DONE: usize = 4;
    /// `3 × u32`: `blockIdx` x, y, z of the panicking thread.
    pub const BLOCK: usize = 8;
    /// `3 × u32`: `threadIdx` x, y, z of the panicking thread.
    pub const THREAD: usize = 20;
    /// `u32`: the panic's line.
    pub const LINE: usize = 32;
    /// `u32`: the panic's column.
    pub const COLUMN: usize = 36;
    /// `u32`: the number of file-name bytes stored at [`FILE`].
    pub const FILE_LEN: usize = 40;
    /// `u32`: the number of message-stream bytes stored at [`MESSAGE`].
    pub const MESSAGE_LEN: usize = 44;
    /// `u32`: nonzero when the file name or the message did not fit.
    pub const TRUNCATED: usize = 48;
    /// The file name's bytes (UTF-8, cut at [`FILE_CAPACITY`]).
    pub const FILE: usize = 64;
    /// Room for the file name.
    pub const FILE_CAPACITY: usize = 192;
    /// The message stream: a sequence of items, each starting with a tag byte.
    pub const MESSAGE: usize = 256;
    /// Room for the message stream.
    pub const MESSAGE_CAPACITY: usize = RECORD_BYTES - MESSAGE;

    /// Item: literal text, `u16` length then the bytes.
    pub const ITEM_TEXT: u8 = 1;
    /// Item: a formatted value: `u8` trait ([`TRAIT_DISPLAY`]...), `u8` kind ([`KIND_UINT`]...),
    /// `u8` size in bytes, `u32` flags (as `core::fmt::FormattingOptions` has them: fill, sign,
    /// alternate, zero pad, width and precision present, alignment), `u16` width, `u16`
    /// precision, then the payload: 16 bytes of value for numbers, `bool` and `char` (the
    /// value's `size` bytes, zero-extended); `u16` length and the bytes for a string, or for the
    /// type name of a value without device formatting ([`KIND_OPAQUE`]).
    pub const ITEM_VALUE: u8 = 2;

    /// `{}`
    pub const TRAIT_DISPLAY: u8 = 1;
    /// `{:?}`
    pub const TRAIT_DEBUG: u8 = 2;
    /// `{:x}`
    pub const TRAIT_LOWER_HEX: u8 = 3;
    /// `{:X}`
    pub const TRAIT_UPPER_HEX: u8 = 4;
    /// `{:o}`
    pub const TRAIT_OCTAL: u8 = 5;
    /// `{:b}`
    pub const TRAIT_BINARY: u8 = 6;
    /// `{:e}`
    pub const TRAIT_LOWER_EXP: u8 = 7;
    /// `{:E}`
    pub const TRAIT_UPPER_EXP: u8 = 8;
    /// `{:p}`
    pub const TRAIT_POINTER: u8 = 9;

    /// An unsigned integer (`size` bytes).
    pub const KIND_UINT: u8 = 1;
    /// A signed integer (`size` bytes).
    pub const KIND_SINT: u8 = 2;
    /// An `f32` (`size` 4) or `f64` (`size` 8).
    pub const KIND_FLOAT: u8 = 3;
    /// A `bool`.
    pub const KIND_BOOL: u8 = 4;
    /// A `char`.
    pub const KIND_CHAR: u8 = 5;
    /// A `&str`: the value is the reference.
    pub const KIND_STR: u8 = 6;
    /// A `&dyn Display`/`&dyn Debug`...: the value is the reference; the vtable's method slot
    /// holds the concrete type's descriptor. Never in the record (the device resolves it).
    pub const KIND_DYN: u8 = 7;
    /// A nested `core::fmt::Arguments`. Never in the record (the device inlines its items).
    pub const KIND_ARGUMENTS: u8 = 8;
    /// A value the device cannot format: the payload is its type's name.
    pub const KIND_OPAQUE: u8 = 9;
    /// A raw pointer or reference formatted with `{:p}`: the address (`size` 8).
    pub const KIND_POINTER: u8 = 10;
}

/// The compiler's descriptor of a formatted type (what a formatting trait's method pointer
/// is in device code): byte offsets. `u8` trait, `u8` kind, `u8` size, `u8` derefs (how many
/// references to follow from the argument to the value of that kind), `u32` length of the type
/// name, then the name. The compiler writes these (`mir_importer::translator::fmt_descriptor`).
pub mod descriptor {
    /// `u8`: the formatting trait ([`super::layout::TRAIT_DISPLAY`]...).
    pub const TRAIT: usize = 0;
    /// `u8`: the kind of value ([`super::layout::KIND_UINT`]...).
    pub const KIND: usize = 1;
    /// `u8`: the value's size in bytes.
    pub const SIZE: usize = 2;
    /// `u8`: references between the argument and the value.
    pub const DEREFS: usize = 3;
    /// `u32`: the length of the type's name.
    pub const NAME_LEN: usize = 4;
    /// The type's name.
    pub const NAME: usize = 8;
    /// The vtable slot of a formatting trait's `fmt` (after drop, size, align).
    pub const VTABLE_FMT_SLOT: usize = 3;
}

/// A module's formatting methods with their descriptors: pairs of a method's address and its
/// descriptor's, then a pair of a null address and what an address not in the table stands
/// for (null: the address is a descriptor itself). The compiler writes the table of each
/// module (`mir_importer`'s `GlobalRegistry::finish`); here it is empty. Not for direct use.
#[doc(hidden)]
#[repr(C)]
pub struct FormattingMethodTable([*const u8; 2]);

// SAFETY: immutable, and what it points to is immutable.
unsafe impl Sync for FormattingMethodTable {}

/// This module's formatting methods (see [`FormattingMethodTable`]). Not for direct use.
#[doc(hidden)]
pub static FORMATTING_METHODS: FormattingMethodTable =
    FormattingMethodTable([core::ptr::null(); 2]);

/// The descriptor of the formatter `formatter` of an argument or a vtable: the formatting
/// method's descriptor from [`FORMATTING_METHODS`], or `formatter` itself when it is one.
#[inline(never)]
fn descriptor_of(formatter: *const u8) -> *const u8 {
    let mut entry = (&raw const FORMATTING_METHODS).cast::<[*const u8; 2]>();
    loop {
        // SAFETY: the compiler's table ends with a pair whose address is null.
        let [method, descriptor] = unsafe { entry.read() };
        if method.is_null() {
            return if descriptor.is_null() {
                formatter
            } else {
                descriptor
            };
        }
        if method == formatter {
            return descriptor;
        }
        // SAFETY: not past the final pair.
        entry = unsafe { entry.add(1) };
    }
}

/// Which word of a `core::fmt::rt::Argument` holds the value's address (the other holds the
/// formatter, in device code a descriptor). Checked on the host by this crate's tests.
pub const ARGUMENT_VALUE_WORD: usize = 0;
/// Which word of a `core::fmt::rt::Argument` holds the formatter.
pub const ARGUMENT_FORMATTER_WORD: usize = 1;

/// How deep nested `Arguments` (`{args}` inside an assertion message) are followed.
const MAX_DEPTH: u32 = 3;

/// Iterations a thread that lost the race waits for the winner to finish writing before it
/// traps too (a trap stops the whole grid, the writer included).
const WAIT_FOR_WRITER: u32 = 1 << 20;

/// Records the panic `message` at `location` for the host (when this thread is the first to
/// panic) and traps. What every panic of device code ends in. Not for direct use.
#[doc(hidden)]
#[cold]
#[inline(never)]
pub fn record(message: &Arguments<'_>, location: &Location<'_>) -> ! {
    record_parts(&[message], location)
}

/// [`record`] of a message made of `parts`, one after the other: a message that embeds
/// another (`assert_eq!`'s own message inside the assertion's) is recorded this way rather
/// than as nested `Arguments`, which the recorder would walk one call level deeper (the
/// device stack is small). Not for direct use.
#[doc(hidden)]
#[cold]
#[inline(never)]
pub fn record_parts(parts: &[&Arguments<'_>], location: &Location<'_>) -> ! {
    // SAFETY: the host writes RECORD before any launch; device code only reads it. An atomic
    // load, not a volatile one: a kernel that may read volatile memory loses `noalias` on its
    // `&[T]` parameters (see mir-lower's `volatile_readers`), and every kernel may panic.
    let record = unsafe { core::sync::atomic::AtomicU64::from_ptr(&raw mut RECORD) };
    let base = record.load(core::sync::atomic::Ordering::Relaxed) as *mut u8;
    if !base.is_null() {
        // SAFETY: the host allocated `layout::RECORD_BYTES` bytes at `base`, mapped for the device.
        unsafe { fill(base, parts, location) };
    }
    crate::trap()
}

/// Claims the record at `base` and writes it, or waits for the thread that claimed it.
///
/// # Safety
/// `base` points to a panic record of `layout::RECORD_BYTES` bytes.
#[inline(never)]
unsafe fn fill(base: *mut u8, parts: &[&Arguments<'_>], location: &Location<'_>) {
    // SAFETY: CLAIMED and DONE are aligned `u32`s of the record.
    let claimed = unsafe { SystemAtomicU32::from_ptr(base.add(layout::CLAIMED).cast()) };
    let done = unsafe { SystemAtomicU32::from_ptr(base.add(layout::DONE).cast()) };
    if claimed
        .compare_exchange(0, 1, AtomicOrdering::AcqRel, AtomicOrdering::Relaxed)
        .is_err()
    {
        let mut waited: u32 = 0;
        while done.load(AtomicOrdering::Acquire) == 0 && waited < WAIT_FOR_WRITER {
            waited = waited.wrapping_add(1);
        }
        return;
    }
    use crate::thread::*;
    let mut out = Writer {
        base,
        pos: 0,
        truncated: false,
    };
    // SAFETY: every offset is inside the record (see `layout`).
    unsafe {
        put_u32(base, layout::BLOCK, blockIdx_x());
        put_u32(base, const { layout::BLOCK + 4 }, blockIdx_y());
        put_u32(base, const { layout::BLOCK + 8 }, blockIdx_z());
        put_u32(base, layout::THREAD, threadIdx_x());
        put_u32(base, const { layout::THREAD + 4 }, threadIdx_y());
        put_u32(base, const { layout::THREAD + 8 }, threadIdx_z());
        put_u32(base, layout::LINE, location.line());
        put_u32(base, layout::COLUMN, location.column());
        let file = location.file().as_bytes();
        let file_len = if file.len() < layout::FILE_CAPACITY {
            file.len()
        } else {
            out.truncated = true;
            layout::FILE_CAPACITY
        };
        copy(file.as_ptr(), base.add(layout::FILE), file_len);
        put_u32(base, layout::FILE_LEN, file_len as u32);
        let mut part = parts.as_ptr();
        let end = part.add(parts.len());
        while part != end {
            out.arguments(*part, 0);
            part = part.add(1);
        }
        put_u32(base, layout::MESSAGE_LEN, out.pos as u32);
        put_u32(base, layout::TRUNCATED, out.truncated as u32);
    }
    crate::sync::threadfence_system();
    done.store(1, AtomicOrdering::Release);
    crate::sync::threadfence_system();
}

/// Writes `value` at `base + offset`.
///
/// # Safety
/// The four bytes are inside the record.
#[inline(never)]
unsafe fn put_u32(base: *mut u8, offset: usize, value: u32) {
    let bytes = value.to_le_bytes();
    // SAFETY: the caller's promise.
    unsafe { copy(bytes.as_ptr(), base.add(offset), 4) };
}

/// Copies `len` bytes, one at a time (the destination is host memory, of any alignment).
///
/// # Safety
/// Both ranges are valid.
#[inline(never)]
unsafe fn copy(from: *const u8, to: *mut u8, len: usize) {
    let mut i: usize = 0;
    while i < len {
        // SAFETY: the caller's promise.
        unsafe { core::ptr::write_volatile(to.add(i), from.add(i).read()) };
        i = i.wrapping_add(1);
    }
}

/// Reads a little-endian `u16` at `p`.
///
/// # Safety
/// Two readable bytes.
unsafe fn read_u16(p: *const u8) -> u16 {
    // SAFETY: the caller's promise.
    unsafe { u16::from_le_bytes([p.read(), p.add(1).read()]) }
}

/// Reads a little-endian `u32` at `p`.
///
/// # Safety
/// Four readable bytes.
unsafe fn read_u32(p: *const u8) -> u32 {
    // SAFETY: the caller's promise.
    unsafe { u32::from_le_bytes([p.read(), p.add(1).read(), p.add(2).read(), p.add(3).read()]) }
}

/// Where the walk over a template is.
struct Cursor {
    /// The next byte of the template.
    template: *const u8,
    /// The arguments.
    args: *const [usize; 2],
    /// The argument of the next placeholder without an explicit index.
    next: usize,
}

/// The message stream being written.
struct Writer {
    base: *mut u8,
    /// Bytes of the stream written so far.
    pos: usize,
    truncated: bool,
}

/// The flags of a placeholder without options (`{}`): fill `' '`, alignment unknown.
const DEFAULT_FLAGS: u32 = ' ' as u32 | (3 << 29);
/// The flags' bits saying a width and a precision are present.
const WIDTH_FLAG: u32 = 1 << 27;
const PRECISION_FLAG: u32 = 1 << 28;

impl Writer {
    /// Whether `n` more bytes fit; if not, the stream is marked truncated.
    #[inline(never)]
    fn room(&mut self, n: usize) -> bool {
        if self.pos.wrapping_add(n) <= layout::MESSAGE_CAPACITY {
            true
        } else {
            self.truncated = true;
            false
        }
    }

    #[inline(never)]
    fn byte(&mut self, b: u8) {
        // SAFETY: callers checked `room`.
        unsafe { core::ptr::write_volatile(self.base.add(layout::MESSAGE).add(self.pos), b) };
        self.pos = self.pos.wrapping_add(1);
    }

    #[inline(never)]
    fn bytes(&mut self, from: *const u8, len: usize) {
        // SAFETY: callers checked `room`; `from` holds `len` bytes.
        unsafe { copy(from, self.base.add(layout::MESSAGE).add(self.pos), len) };
        self.pos = self.pos.wrapping_add(len);
    }

    #[inline(never)]
    fn u16(&mut self, v: u16) {
        for b in v.to_le_bytes() {
            self.byte(b);
        }
    }

    #[inline(never)]
    fn u32(&mut self, v: u32) {
        for b in v.to_le_bytes() {
            self.byte(b);
        }
    }

    /// A literal piece, cut to what fits.
    #[inline(never)]
    fn text(&mut self, from: *const u8, len: usize) {
        if self.pos.wrapping_add(3) > layout::MESSAGE_CAPACITY {
            self.truncated = true;
            return;
        }
        let fits = layout::MESSAGE_CAPACITY
            .wrapping_sub(self.pos)
            .wrapping_sub(3);
        let len = if len > fits {
            self.truncated = true;
            fits
        } else {
            len
        };
        self.byte(layout::ITEM_TEXT);
        self.u16(len as u16);
        self.bytes(from, len);
    }

    /// Every piece and placeholder of `args`.
    #[inline(never)]
    fn arguments(&mut self, args: &Arguments<'_>, depth: u32) {
        // SAFETY: `Arguments` is two words, template then args (checked by this crate's tests).
        let [template, argv]: [usize; 2] = unsafe { core::mem::transmute_copy(args) };
        if argv & 1 == 1 {
            // A plain string: `args` holds its length.
            self.text(template as *const u8, argv >> 1);
            return;
        }
        let mut cursor = Cursor {
            template: template as *const u8,
            args: argv as *const [usize; 2],
            next: 0,
        };
        // SAFETY: the template is valid (format_args! wrote it) and ends with a 0 byte.
        while unsafe { self.element(&mut cursor, depth) } {}
    }

    /// The template element at the cursor (a piece or a placeholder), moving past it;
    /// `false` at the end. Kept apart from [`Self::placeholder`] so that each function needs
    /// few registers (a kernel is given as many as the hungriest function it may call).
    ///
    /// # Safety
    /// The cursor is inside a valid template.
    #[inline(never)]
    unsafe fn element(&mut self, cursor: &mut Cursor, depth: u32) -> bool {
        // SAFETY: the caller's promise.
        unsafe {
            let t = cursor.template;
            let n = t.read();
            if n == 0 {
                return false;
            }
            if n < 0x80 {
                self.text(t.add(1), n as usize);
                cursor.template = t.add(1).add(n as usize);
            } else if n == 0x80 {
                let len = read_u16(t.add(1)) as usize;
                self.text(t.add(3), len);
                cursor.template = t.add(3).add(len);
            } else {
                cursor.template = t.add(1);
                self.placeholder(cursor, n, depth);
            }
            true
        }
    }

    /// A placeholder whose first byte is `n`; the cursor is just after that byte.
    ///
    /// # Safety
    /// The cursor is inside a valid template whose arguments are at `cursor.args`.
    #[inline(never)]
    unsafe fn placeholder(&mut self, cursor: &mut Cursor, n: u8, depth: u32) {
        // SAFETY: the caller's promise.
        unsafe {
            let mut t = cursor.template;
            let mut flags = DEFAULT_FLAGS;
            let mut width = 0;
            let mut prec = 0;
            let mut index = cursor.next;
            if n & 1 != 0 {
                flags = read_u32(t);
                t = t.add(4);
            }
            if n & 2 != 0 {
                width = read_u16(t);
                t = t.add(2);
            }
            if n & 4 != 0 {
                prec = read_u16(t);
                t = t.add(2);
            }
            if n & 8 != 0 {
                index = read_u16(t) as usize;
                t = t.add(2);
            }
            cursor.template = t;
            cursor.next = index.wrapping_add(1);
            // A width or precision taken from an argument (`{:1$}`, `{:.*}`) is not
            // followed: the value is written without it.
            if n & 16 != 0 {
                flags &= !WIDTH_FLAG;
            }
            if n & 32 != 0 {
                flags &= !PRECISION_FLAG;
            }
            let [first, second] = cursor.args.add(index).read();
            let (value, desc) = if ARGUMENT_VALUE_WORD == 0 {
                (first as *const u8, second as *const u8)
            } else {
                (second as *const u8, first as *const u8)
            };
            let spec = Spec { flags, width, prec };
            self.value(value, descriptor_of(desc), &spec, depth);
        }
    }

    /// One placeholder's value: `value` points to a value of the type `desc` describes.
    ///
    /// # Safety
    /// `desc` is a descriptor the compiler wrote and `value` points to a value of its type.
    #[inline(never)]
    unsafe fn value(&mut self, value: *const u8, desc: *const u8, spec: &Spec, depth: u32) {
        // SAFETY: the caller's promise.
        unsafe {
            let kind = desc.add(descriptor::KIND).read();
            let derefs = desc.add(descriptor::DEREFS).read();
            let mut p = value;
            let mut i: u8 = 0;
            while i < derefs {
                p = p.cast::<*const u8>().read();
                i = i.wrapping_add(1);
            }
            match kind {
                layout::KIND_STR => self.string(p, desc, spec),
                layout::KIND_DYN => {
                    let data = p.cast::<*const u8>().read();
                    let vtable = p.cast::<*const *const u8>().add(1).read();
                    let inner = descriptor_of(vtable.add(descriptor::VTABLE_FMT_SLOT).read());
                    if depth < MAX_DEPTH {
                        self.value(data, inner, spec, depth.wrapping_add(1));
                    }
                }
                layout::KIND_ARGUMENTS => {
                    if depth < MAX_DEPTH {
                        self.arguments(&*p.cast::<Arguments<'_>>(), depth.wrapping_add(1));
                    }
                }
                layout::KIND_OPAQUE => self.opaque(desc, spec),
                _ => self.scalar(p, desc, spec),
            }
        }
    }

    /// A value item's header: the descriptor's trait, `kind` and `size`, and the options.
    ///
    /// # Safety
    /// `desc` is a descriptor.
    #[inline(never)]
    unsafe fn value_header(&mut self, desc: *const u8, kind: u8, size: u8, spec: &Spec) {
        self.byte(layout::ITEM_VALUE);
        // SAFETY: the caller's promise.
        self.byte(unsafe { desc.add(descriptor::TRAIT).read() });
        self.byte(kind);
        self.byte(size);
        self.u32(spec.flags);
        self.u16(spec.width);
        self.u16(spec.prec);
    }

    /// A `&str` value: `p` points to the reference.
    ///
    /// # Safety
    /// `p` points to a `&str`, `desc` is its descriptor.
    #[inline(never)]
    unsafe fn string(&mut self, p: *const u8, desc: *const u8, spec: &Spec) {
        // SAFETY: the caller's promise.
        unsafe {
            let data = p.cast::<*const u8>().read();
            let len = p.cast::<usize>().add(1).read();
            let len = if len > u16::MAX as usize {
                u16::MAX as usize
            } else {
                len
            };
            if self.room(len.wrapping_add(14)) {
                self.value_header(desc, layout::KIND_STR, 16, spec);
                self.u16(len as u16);
                self.bytes(data, len);
            }
        }
    }

    /// A value without device formatting: its type's name.
    ///
    /// # Safety
    /// `desc` is a descriptor.
    #[inline(never)]
    unsafe fn opaque(&mut self, desc: *const u8, spec: &Spec) {
        // SAFETY: the caller's promise.
        unsafe {
            let len = read_u32(desc.add(descriptor::NAME_LEN)) as usize;
            let len = if len > 1024 { 1024 } else { len };
            if self.room(len.wrapping_add(14)) {
                self.value_header(desc, layout::KIND_OPAQUE, 0, spec);
                self.u16(len as u16);
                self.bytes(desc.add(descriptor::NAME), len);
            }
        }
    }

    /// A number, `bool`, `char` or pointer: 16 bytes of bits, zero-extended.
    ///
    /// # Safety
    /// `p` points to a value of the type `desc` describes (or is the pointer itself, for
    /// `KIND_POINTER`).
    #[inline(never)]
    unsafe fn scalar(&mut self, p: *const u8, desc: *const u8, spec: &Spec) {
        if !self.room(28) {
            return;
        }
        // SAFETY: the caller's promise.
        unsafe {
            let kind = desc.add(descriptor::KIND).read();
            if kind == layout::KIND_POINTER {
                self.value_header(desc, kind, 8, spec);
                let bits = (p as usize as u64).to_le_bytes();
                self.bytes(bits.as_ptr(), 8);
                self.zeros(8);
            } else {
                let size = desc.add(descriptor::SIZE).read();
                let size = if size > 16 { 16 } else { size };
                self.value_header(desc, kind, size, spec);
                self.bytes(p, size as usize);
                self.zeros(16usize.wrapping_sub(size as usize));
            }
        }
    }

    /// `n` zero bytes.
    #[inline(never)]
    fn zeros(&mut self, n: usize) {
        let mut i: usize = 0;
        while i < n {
            self.byte(0);
            i = i.wrapping_add(1);
        }
    }
}

/// A placeholder's options, as `core::fmt::FormattingOptions` holds them.
struct Spec {
    flags: u32,
    width: u16,
    prec: u16,
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    fn words(args: core::fmt::Arguments<'_>, x: &u64) {
        let [template, argv]: [usize; 2] = unsafe { core::mem::transmute_copy(&args) };
        assert_eq!(argv & 1, 0, "a placeholder representation");
        // The template of "a{}" is: piece of length 1, 'a', a default placeholder, end.
        let t = template as *const u8;
        assert_eq!(
            unsafe { [t.read(), t.add(1).read(), t.add(2).read()] },
            [1, b'a', 0xC0]
        );
        let arg = unsafe { (argv as *const [usize; 2]).read() };
        assert_eq!(arg[ARGUMENT_VALUE_WORD], x as *const u64 as usize);
        assert_ne!(arg[ARGUMENT_FORMATTER_WORD], x as *const u64 as usize);
    }

    #[test]
    fn arguments_are_a_template_and_argument_words() {
        let x = std::hint::black_box(7u64);
        words(format_args!("a{}", x), &x);
        let s = format_args!("plain");
        let [template, len]: [usize; 2] = unsafe { core::mem::transmute_copy(&s) };
        assert_eq!(len, ("plain".len() << 1) | 1);
        assert_eq!(template, "plain".as_ptr() as usize);
    }

    #[test]
    fn the_record_layout_fits() {
        const { assert!(layout::FILE + layout::FILE_CAPACITY <= layout::MESSAGE) };
        const { assert!(layout::TRUNCATED + 4 <= layout::FILE) };
        assert_eq!(RECORD_SYMBOL, "cuda_device__panic__RECORD");
    }
}
