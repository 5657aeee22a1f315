//! The attributes of the `mir` dialect.

use pliron::{
    builtin::attributes::IntegerAttr,
    combine::{Parser, between, many, parser::char::hex_digit, token},
    common_traits::Verify,
    context::Context,
    derive::pliron_attr,
    identifier::Identifier,
    irfmt::{
        parsers::{delimited_list_parser, int_parser, spaced},
        printers::list_with_sep,
    },
    parsable::{Parsable, ParseResult, StateStream},
    printable::{self, ListSeparator, Printable},
    result::Result,
    verify_err_noloc,
};
use thiserror::Error;

/// A small non-negative index held by an op: a field index, a variant index.
///
/// Printed as the bare number inside the ops that use it.
#[pliron_attr(name = "mir.index", format = "$0", verifier = "succ")]
#[derive(PartialEq, Eq, Clone, Copy, Debug, Hash)]
pub struct IndexAttr(pub u32);

impl IndexAttr {
    /// The index as a `usize`.
    pub fn index(&self) -> usize {
        self.0 as usize
    }
}

/// An alignment in bytes (a power of two) that an access may assume.
///
/// Printed as the bare number inside the ops that use it.
#[pliron_attr(name = "mir.align", format = "$0", verifier = "succ")]
#[derive(PartialEq, Eq, Clone, Copy, Debug, Hash)]
pub struct AlignAttr(pub u64);

/// The case values of a `mir.switch_int`, one [IntegerAttr] of the switched type per case, in
/// the order of the case successors.
///
/// Printed as `[value, ...]`.
#[pliron_attr(name = "mir.case_values", format = "`[` vec($0, CharSpace(`,`)) `]`")]
#[derive(PartialEq, Eq, Clone, Debug, Hash)]
pub struct CaseValuesAttr(pub Vec<IntegerAttr>);

/// Errors of [CaseValuesAttr].
#[derive(Debug, Error)]
pub enum CaseValuesAttrVerifyErr {
    #[error("switch case values must all have the same type")]
    MixedTypes,
    #[error("switch case value {0} appears twice")]
    Duplicate(String),
}

impl Verify for CaseValuesAttr {
    fn verify(&self, ctx: &Context) -> Result<()> {
        for (idx, value) in self.0.iter().enumerate() {
            value.verify(ctx)?;
            if value.get_type() != self.0[0].get_type() {
                return verify_err_noloc!(CaseValuesAttrVerifyErr::MixedTypes);
            }
            if self.0[..idx].contains(value) {
                return verify_err_noloc!(CaseValuesAttrVerifyErr::Duplicate(
                    value.value().to_string_unsigned_decimal()
                ));
            }
        }
        Ok(())
    }
}

/// One pointer stored in the initial bytes of a `mir.global`: at byte `offset`, the address of
/// the symbol `target` (another `mir.global` or a `mir.func`) plus `addend` bytes. This is
/// rustc's provenance: `&[&str]`, vtables and function-pointer tables are globals whose bytes
/// hold such pointers.
///
/// Printed as `offset: @target + addend`.
#[derive(Clone, Hash, PartialEq, Eq, Debug)]
pub struct Relocation {
    /// The byte offset of the pointer in the global.
    pub offset: u64,
    /// The global or function pointed to.
    pub target: Identifier,
    /// The byte offset into `target`.
    pub addend: u64,
}

impl Printable for Relocation {
    fn fmt(
        &self,
        _ctx: &Context,
        _state: &printable::State,
        f: &mut core::fmt::Formatter<'_>,
    ) -> core::fmt::Result {
        write!(f, "{}: @{} + {}", self.offset, self.target, self.addend)
    }
}

impl Parsable for Relocation {
    type Arg = ();
    type Parsed = Self;

    fn parse<'a>(
        state_stream: &mut StateStream<'a>,
        _arg: Self::Arg,
    ) -> ParseResult<'a, Self::Parsed> {
        (
            spaced(int_parser::<u64>()).skip(spaced(token(':'))),
            spaced(token('@').with(Identifier::parser(()))),
            spaced(token('+')).with(spaced(int_parser::<u64>())),
        )
            .map(|(offset, target, addend)| Relocation {
                offset,
                target,
                addend,
            })
            .parse_stream(state_stream)
            .into()
    }
}

/// The initial content of a `mir.global`: its bytes (rustc's evaluated allocation, where
/// uninitialised bytes read as 0) and the pointers stored in them, sorted by offset. The bytes
/// under a relocation are not used: they hold rustc's own copy of the addend.
///
/// Printed as `x"<hex bytes>" [relocation, ...]`.
#[pliron_attr(name = "mir.global_init")]
#[derive(Clone, Hash, PartialEq, Eq, Debug)]
pub struct GlobalInitAttr {
    /// The bytes, as many as the global's size.
    pub bytes: Vec<u8>,
    /// The pointers in the bytes, by increasing offset.
    pub relocations: Vec<Relocation>,
}

/// Errors of [GlobalInitAttr].
#[derive(Debug, Error)]
pub enum GlobalInitAttrVerifyErr {
    #[error("relocation at offset {0} does not follow the previous one by a pointer size")]
    Overlap(u64),
    #[error("relocation at offset {0} does not fit in {1} bytes")]
    OutOfBounds(u64, usize),
}

impl Verify for GlobalInitAttr {
    fn verify(&self, _ctx: &Context) -> Result<()> {
        let mut end = 0;
        for relocation in &self.relocations {
            if relocation.offset < end {
                return verify_err_noloc!(GlobalInitAttrVerifyErr::Overlap(relocation.offset));
            }
            end = relocation.offset + crate::types::POINTER_SIZE;
            if end > self.bytes.len() as u64 {
                return verify_err_noloc!(GlobalInitAttrVerifyErr::OutOfBounds(
                    relocation.offset,
                    self.bytes.len()
                ));
            }
        }
        Ok(())
    }
}

impl Printable for GlobalInitAttr {
    fn fmt(
        &self,
        ctx: &Context,
        state: &printable::State,
        f: &mut core::fmt::Formatter<'_>,
    ) -> core::fmt::Result {
        write!(f, "x\"")?;
        for byte in &self.bytes {
            write!(f, "{byte:02x}")?;
        }
        write!(
            f,
            "\" [{}]",
            list_with_sep(&self.relocations, ListSeparator::CharSpace(',')).print(ctx, state)
        )
    }
}

/// A hex digit pair is not a byte.
#[derive(Debug, Error)]
#[error("`{0}` is not a string of hex byte pairs")]
pub struct BadHexBytes(String);

impl Parsable for GlobalInitAttr {
    type Arg = ();
    type Parsed = Self;

    fn parse<'a>(
        state_stream: &mut StateStream<'a>,
        _arg: Self::Arg,
    ) -> ParseResult<'a, Self::Parsed> {
        let hex = token('x').with(between(
            token('"'),
            token('"'),
            many::<String, _, _>(hex_digit()),
        ));
        (
            spaced(hex),
            spaced(delimited_list_parser('[', ']', ',', Relocation::parser(()))),
        )
            .and_then(|(digits, relocations)| {
                let bytes = (0..digits.len())
                    .step_by(2)
                    .map(|i| {
                        digits
                            .get(i..i + 2)
                            .and_then(|pair| u8::from_str_radix(pair, 16).ok())
                    })
                    .collect::<Option<Vec<u8>>>()
                    .ok_or_else(|| BadHexBytes(digits.clone()))?;
                Ok::<_, BadHexBytes>(GlobalInitAttr { bytes, relocations })
            })
            .parse_stream(state_stream)
            .into()
    }
}

/// Where a `mir.global` lives and how much room it takes: `size` and `align` in bytes, and the
/// NVPTX address space (1 = global memory, 3 = shared memory).
///
/// Printed as `<size S, align A, addrspace N>`.
#[pliron_attr(
    name = "mir.global_layout",
    format = "`<size ` $size `, align ` $align `, addrspace ` $address_space `>`"
)]
#[derive(Clone, Copy, Hash, PartialEq, Eq, Debug)]
pub struct GlobalLayoutAttr {
    /// The size in bytes.
    pub size: u64,
    /// The alignment in bytes (a power of two).
    pub align: u64,
    /// The NVPTX address space.
    pub address_space: u32,
}

/// The alignment of a [GlobalLayoutAttr] is not a power of two.
#[derive(Debug, Error)]
#[error("global alignment {0} is not a power of two")]
pub struct BadGlobalAlign(u64);

impl Verify for GlobalLayoutAttr {
    fn verify(&self, _ctx: &Context) -> Result<()> {
        if !self.align.is_power_of_two() {
            return verify_err_noloc!(BadGlobalAlign(self.align));
        }
        Ok(())
    }
}
