//! The scalar types of generated programs, and their literals.

use crate::rng::Rng;

/// A scalar type: the values every generated expression has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ty {
    Bool,
    U8,
    U16,
    U32,
    U64,
    U128,
    Usize,
    I8,
    I16,
    I32,
    I64,
    I128,
    Isize,
    F32,
    F64,
}

impl Ty {
    /// Every type.
    pub const ALL: [Ty; 15] = [
        Ty::Bool,
        Ty::U8,
        Ty::U16,
        Ty::U32,
        Ty::U64,
        Ty::U128,
        Ty::Usize,
        Ty::I8,
        Ty::I16,
        Ty::I32,
        Ty::I64,
        Ty::I128,
        Ty::Isize,
        Ty::F32,
        Ty::F64,
    ];

    /// Every integer type.
    pub const INTS: [Ty; 12] = [
        Ty::U8,
        Ty::U16,
        Ty::U32,
        Ty::U64,
        Ty::U128,
        Ty::Usize,
        Ty::I8,
        Ty::I16,
        Ty::I32,
        Ty::I64,
        Ty::I128,
        Ty::Isize,
    ];

    /// The Rust name.
    pub fn name(self) -> &'static str {
        match self {
            Ty::Bool => "bool",
            Ty::U8 => "u8",
            Ty::U16 => "u16",
            Ty::U32 => "u32",
            Ty::U64 => "u64",
            Ty::U128 => "u128",
            Ty::Usize => "usize",
            Ty::I8 => "i8",
            Ty::I16 => "i16",
            Ty::I32 => "i32",
            Ty::I64 => "i64",
            Ty::I128 => "i128",
            Ty::Isize => "isize",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
        }
    }

    pub fn is_int(self) -> bool {
        !matches!(self, Ty::Bool | Ty::F32 | Ty::F64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F64)
    }

    pub fn is_signed(self) -> bool {
        matches!(
            self,
            Ty::I8 | Ty::I16 | Ty::I32 | Ty::I64 | Ty::I128 | Ty::Isize
        )
    }

    /// Width in bits (`usize`/`isize`: 64, as on both the host and the GPU).
    pub fn bits(self) -> u32 {
        match self {
            Ty::Bool => 1,
            Ty::U8 | Ty::I8 => 8,
            Ty::U16 | Ty::I16 => 16,
            Ty::U32 | Ty::I32 | Ty::F32 => 32,
            Ty::U64 | Ty::I64 | Ty::Usize | Ty::Isize | Ty::F64 => 64,
            Ty::U128 | Ty::I128 => 128,
        }
    }

    /// `bits` truncated to this type's width.
    pub fn truncate(self, bits: u128) -> u128 {
        match self.bits() {
            128 => bits,
            1 => bits & 1,
            n => bits & ((1u128 << n) - 1),
        }
    }

    /// The literal of this type with the bit pattern `bits` (truncated to the width).
    pub fn literal(self, bits: u128) -> String {
        let bits = self.truncate(bits);
        let name = self.name();
        match self {
            Ty::Bool => if bits == 1 { "true" } else { "false" }.to_owned(),
            Ty::F32 => float_literal(f64::from(f32::from_bits(bits as u32)), name),
            Ty::F64 => float_literal(f64::from_bits(bits as u64), name),
            _ if self.is_signed() => {
                let width = self.bits();
                let value = ((bits << (128 - width)) as i128) >> (128 - width);
                let min = if width == 128 {
                    i128::MIN
                } else {
                    -(1i128 << (width - 1))
                };
                if value == min {
                    format!("{name}::MIN")
                } else if value < 0 {
                    format!("(-{}{name})", value.unsigned_abs())
                } else {
                    format!("{value}{name}")
                }
            }
            _ => format!("{bits}{name}"),
        }
    }

    /// An interesting bit pattern for a literal: edge values, small numbers, powers of two, or
    /// random bits.
    pub fn random_bits(self, rng: &mut Rng) -> u128 {
        match self {
            Ty::Bool => u128::from(rng.chance(50)),
            Ty::F32 => u128::from(pick_f32(rng).to_bits()),
            Ty::F64 => u128::from(pick_f64(rng).to_bits()),
            _ => {
                let width = self.bits();
                let raw = match rng.below(8) {
                    0 => 0,
                    1 => 1,
                    2 => u128::MAX,
                    3 => 1u128 << (width - 1),
                    4 => (1u128 << (width - 1)) - 1,
                    5 => rng.below(16) as u128,
                    6 => 1u128 << rng.below(width as usize),
                    _ => (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64()),
                };
                self.truncate(raw)
            }
        }
    }

    /// The literal `value` of an integer type (must fit), or of a float type.
    pub fn small(self, value: i8) -> String {
        match self {
            Ty::Bool => (value != 0).to_string(),
            Ty::F32 => float_literal(f64::from(value), "f32"),
            Ty::F64 => float_literal(f64::from(value), "f64"),
            _ => self.literal(value as i128 as u128),
        }
    }
}

fn float_literal(value: f64, name: &str) -> String {
    if value.is_nan() {
        format!("{name}::NAN")
    } else if value.is_infinite() {
        if value > 0.0 {
            format!("{name}::INFINITY")
        } else {
            format!("{name}::NEG_INFINITY")
        }
    } else {
        let text = if name == "f32" {
            format!("{:?}", value as f32)
        } else {
            format!("{value:?}")
        };
        match text.strip_prefix('-') {
            Some(positive) => format!("(-{positive}{name})"),
            None => format!("{text}{name}"),
        }
    }
}

fn pick_f32(rng: &mut Rng) -> f32 {
    const VALUES: [f32; 16] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.5,
        -3.75,
        0.1,
        1e10,
        -1e-10,
        1e-40,
        f32::MAX,
        f32::MIN_POSITIVE,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ];
    if rng.chance(20) {
        f32::from_bits(rng.next_u64() as u32)
    } else {
        rng.pick(&VALUES)
    }
}

fn pick_f64(rng: &mut Rng) -> f64 {
    const VALUES: [f64; 16] = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.5,
        -3.75,
        0.1,
        1e300,
        -1e-300,
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    if rng.chance(20) {
        f64::from_bits(rng.next_u64())
    } else {
        rng.pick(&VALUES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(Ty::I8.literal(0x80), "i8::MIN");
        assert_eq!(Ty::I8.literal(0xff), "(-1i8)");
        assert_eq!(Ty::I8.literal(0x17f), "127i8");
        assert_eq!(Ty::U16.literal(0x1_0005), "5u16");
        assert_eq!(Ty::I128.literal(1u128 << 127), "i128::MIN");
        assert_eq!(Ty::Bool.literal(1), "true");
        assert_eq!(
            Ty::F32.literal(u128::from((-0.0f32).to_bits())),
            "(-0.0f32)"
        );
        assert_eq!(Ty::F32.literal(u128::from(1e-40f32.to_bits())), "1e-40f32");
        assert_eq!(Ty::F64.literal(u128::from(f64::NAN.to_bits())), "f64::NAN");
        assert_eq!(Ty::F64.literal(u128::from(2.5f64.to_bits())), "2.5f64");
        assert_eq!(Ty::Isize.small(-3), "(-3isize)");
        assert_eq!(Ty::F32.small(2), "2.0f32");
    }
}
