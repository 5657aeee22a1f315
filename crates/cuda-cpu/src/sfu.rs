//! The GPU's special function unit on the CPU: its approximations (`rcp.approx`,
//! `ex2.approx`, `lg2.approx`, ...), bit for bit, so that libdevice's functions built on them
//! (`expf`, `tanf`, `powf`, ...) give the GPU's bits here too.
//!
//! The unit's results are not correctly rounded and no formula for them is published, so they
//! come from tables of its outputs measured on an H200 over each operation's reduced domain
//! (`sfu/h200.tables.bin`, written by `scripts/sfu/measure.py`), extended to every input by
//! rules that were measured as well (docs/cpu.md): the reciprocal and the reciprocal square
//! root scale with the exponent; `ex2` truncates its operand's magnitude to 23 fraction bits
//! and has one table per sign; `lg2` is the exponent plus the mantissa's logarithm, truncated;
//! the forms without `.ftz` are the sequences `ptxas` wraps around the unit for subnormal
//! operands and results. The tests check every operation against the GPU's own results on
//! operands of every exponent (`sfu/h200.samples.txt.z`).

use std::sync::OnceLock;

use kernel_abi::SfuOp;

/// The measured tables, as `scripts/sfu/measure.py` writes them: `OXSFU1\n`, then per table
/// its name (a length byte and the text), its value count, whether it falls (a byte), its
/// first value and the length of its steps (`u32`s, little-endian), then the steps: the
/// distance of each value from the one before, LEB128, compressed with zlib.
static TABLE_FILE: &[u8] = include_bytes!("../sfu/h200.tables.bin");

/// The tables, by what they hold.
#[derive(Clone, Copy)]
enum TableId {
    /// `rcp.approx.ftz.f32` of each mantissa with the exponent of 1.0.
    Rcp,
    /// `rsqrt.approx.ftz.f32` of `[1, 4)`: the mantissas of an even exponent, then of an odd.
    Rsqrt,
    /// `ex2.approx.ftz.f32` of `k * 2^-23` for `k < 2^23`.
    Ex2Up,
    /// `ex2.approx.ftz.f32` of `-k * 2^-23` for `k < 2^23`.
    Ex2Down,
    /// `lg2.approx.ftz.f32` of each mantissa with the exponent of 1.0.
    Lg2,
    /// `lg2.approx.ftz.f32` of each mantissa with the exponent of 0.5.
    Lg2Half,
    /// The high word of `rcp.approx.ftz.f64` of each 20-bit high mantissa with the exponent of
    /// 1.0.
    Rcp64,
    /// The high word of `rsqrt.approx.ftz.f64` of `[1, 4)`, as [TableId::Rsqrt].
    Rsqrt64,
}

const TABLE_NAMES: [&str; 8] = [
    "rcp", "rsqrt", "ex2_up", "ex2_down", "lg2", "lg2_half", "rcp64", "rsqrt64",
];

/// Values per block of a [Table].
const BLOCK: usize = 64;

/// One table, in memory: blocks of [BLOCK] values, each its first value and its steps packed
/// at the block's width (a block of small steps takes two bits a value).
struct Table {
    falling: bool,
    blocks: Vec<Block>,
    words: Vec<u64>,
}

struct Block {
    first: u32,
    /// Bits per step.
    width: u8,
    /// The word of [Table::words] where its steps begin.
    at: u32,
}

impl Table {
    /// The value at `index`.
    fn get(&self, index: usize) -> u32 {
        let block = &self.blocks[index / BLOCK];
        let steps = index % BLOCK;
        let at = block.at as usize;
        let word = |i: usize| self.words[at + i];
        let pair = || u128::from(word(0)) | (u128::from(word(1)) << 64);
        let distance: u32 = match (block.width, steps) {
            (_, 0) | (0, _) => 0,
            (1, _) => (word(0) & ((1u64 << steps) - 1)).count_ones(),
            (2, _) => {
                let below = pair() & ((1u128 << (2 * steps)) - 1);
                let ones = (below & 0x5555_5555_5555_5555_5555_5555_5555_5555).count_ones();
                let twos = (below & 0xAAAA_AAAA_AAAA_AAAA_AAAA_AAAA_AAAA_AAAA).count_ones();
                ones + 2 * twos
            }
            (width, _) => {
                let width = usize::from(width);
                let mask = (1u128 << width) - 1;
                (0..steps)
                    .map(|step| {
                        let bit = step * width;
                        let pair = u128::from(self.words[at + bit / 64])
                            | (u128::from(self.words[at + bit / 64 + 1]) << 64);
                        ((pair >> (bit % 64)) & mask) as u32
                    })
                    .sum()
            }
        };
        moved(self.falling, block.first, distance)
    }

    /// The table from its entry in [TABLE_FILE]: `count` values from `first`, with `steps`
    /// (compressed) between them.
    fn decode(count: usize, falling: bool, first: u32, steps: &[u8]) -> Table {
        let bytes = miniz_oxide::inflate::decompress_to_vec_zlib(steps)
            .expect("the special function unit's tables are intact (built into this crate)");
        let mut steps = Vec::with_capacity(count);
        let mut value = 0u32;
        let mut shift = 0;
        for byte in bytes {
            value |= u32::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                steps.push(value);
                value = 0;
                shift = 0;
            }
        }
        assert_eq!(
            steps.len() + 1,
            count,
            "a table of the special function unit is whole"
        );
        let mut table = Table {
            falling,
            blocks: Vec::with_capacity(count.div_ceil(BLOCK)),
            words: Vec::new(),
        };
        let mut current = first;
        for start in (0..count).step_by(BLOCK) {
            let inner = &steps[start.min(steps.len())..(start + BLOCK - 1).min(steps.len())];
            let width = inner
                .iter()
                .map(|s| 32 - s.leading_zeros())
                .max()
                .unwrap_or(0) as u8;
            let at = table.words.len();
            let mut words = vec![0u64; (inner.len() * usize::from(width)).div_ceil(64) + 2];
            for (i, &step) in inner.iter().enumerate() {
                let bit = i * usize::from(width);
                words[bit / 64] |= u64::from(step) << (bit % 64);
                if bit % 64 + usize::from(width) > 64 {
                    words[bit / 64 + 1] |= u64::from(step) >> (64 - bit % 64);
                }
            }
            table.words.extend(words);
            table.blocks.push(Block {
                first: current,
                width,
                at: at as u32,
            });
            // The next block's first value: this one's moved by all its 64 steps.
            let to_next = steps[start.min(steps.len())..(start + BLOCK).min(steps.len())]
                .iter()
                .fold(0u32, |sum, &step| sum.wrapping_add(step));
            current = moved(falling, current, to_next);
        }
        table
    }
}

/// A table's entry in [TABLE_FILE].
#[derive(Clone, Copy)]
struct Entry {
    count: usize,
    falling: bool,
    first: u32,
    /// The steps, compressed.
    steps: &'static [u8],
}

/// `from` moved `distance` down a falling table or up a rising one.
fn moved(falling: bool, from: u32, distance: u32) -> u32 {
    if falling {
        from.wrapping_sub(distance)
    } else {
        from.wrapping_add(distance)
    }
}

/// Each table's entry in [TABLE_FILE], in the order of [TableId].
fn entries() -> &'static [Entry] {
    static ENTRIES: OnceLock<Vec<Entry>> = OnceLock::new();
    ENTRIES.get_or_init(|| {
        let file = TABLE_FILE;
        let u32_at = |at: usize| u32::from_le_bytes(file[at..at + 4].try_into().unwrap());
        assert!(
            file.starts_with(b"OXSFU1\n"),
            "the special function unit's table file"
        );
        let mut at = 7;
        let mut entries = vec![None; TABLE_NAMES.len()];
        while at < file.len() {
            let name_len = usize::from(file[at]);
            let name = std::str::from_utf8(&file[at + 1..at + 1 + name_len]).unwrap_or("");
            at += 1 + name_len;
            let len = u32_at(at + 9) as usize;
            let entry = Entry {
                count: u32_at(at) as usize,
                falling: file[at + 4] != 0,
                first: u32_at(at + 5),
                steps: &file[at + 13..at + 13 + len],
            };
            at += 13 + len;
            if let Some(index) = TABLE_NAMES.iter().position(|n| *n == name) {
                entries[index] = Some(entry);
            }
        }
        entries
            .into_iter()
            .zip(TABLE_NAMES)
            .map(|(entry, name)| entry.unwrap_or_else(|| panic!("no table `{name}` in the file")))
            .collect()
    })
}

/// The table `id`, decoded when first used.
fn table(id: TableId) -> &'static Table {
    static TABLES: [OnceLock<Table>; 8] = [const { OnceLock::new() }; 8];
    TABLES[id as usize].get_or_init(|| {
        let entry = entries()[id as usize];
        Table::decode(entry.count, entry.falling, entry.first, entry.steps)
    })
}

/// The result of `op` on the operands' bits (`f32` operands in the low half).
pub(crate) fn evaluate(op: SfuOp, a: u64, b: u64) -> u64 {
    let (x, y) = (a as u32, b as u32);
    let result32 = |bits: u32| {
        // The GPU's NaN is 0x7fffffff, whatever the operands.
        if f32::from_bits(bits).is_nan() {
            u64::from(CANONICAL_NAN32)
        } else {
            u64::from(bits)
        }
    };
    match op {
        SfuOp::RcpF32 => result32(rcp(x, false)),
        SfuOp::RcpFtzF32 => result32(rcp(x, true)),
        SfuOp::RsqrtF32 => result32(rsqrt(x, false)),
        SfuOp::RsqrtFtzF32 => result32(rsqrt(x, true)),
        SfuOp::Ex2F32 => result32(ex2(x)),
        SfuOp::Ex2FtzF32 => result32(ex2_ftz(x)),
        SfuOp::Lg2F32 => result32(lg2(x)),
        SfuOp::Lg2FtzF32 => result32(lg2_ftz(x)),
        SfuOp::DivF32 => result32(div(x, y)),
        SfuOp::DivFtzF32 => result32(div_ftz(x, y)),
        SfuOp::RcpFtzF64 => rcp64_ftz(a),
        SfuOp::RsqrtF64 => rsqrt64(a),
        SfuOp::RsqrtFtzF64 => rsqrt64_ftz(a),
    }
}

const CANONICAL_NAN32: u32 = 0x7fff_ffff;
const INF32: u32 = 0x7f80_0000;
const SIGN32: u32 = 0x8000_0000;
const MANTISSA32: u32 = 0x007f_ffff;
/// The NaN of the unit's `f64` operations: its high word is the `f32` one.
const NAN64_HIGH: u64 = 0x7fff_ffff_0000_0000;
const INF64: u64 = 0x7ff0_0000_0000_0000;
const SIGN64: u64 = 1 << 63;

/// An `f32`'s sign bit, biased exponent and mantissa; a subnormal one normalized (its
/// exponent then below 1) unless `ftz`.
fn unpack(bits: u32, ftz: bool) -> (u32, i32, u32) {
    let sign = bits & SIGN32;
    let exponent = ((bits >> 23) & 0xff) as i32;
    let mantissa = bits & MANTISSA32;
    if exponent == 0 && mantissa != 0 && !ftz {
        let shift = mantissa.leading_zeros() as i32 - 8;
        return (sign, 1 - shift, (mantissa << shift) & MANTISSA32);
    }
    (sign, exponent, mantissa)
}

/// `sign` with the mantissa of the table value `value` and the biased exponent `exponent`:
/// infinite above the range; below it zero if `ftz`, else subnormal, rounded to nearest.
fn pack(sign: u32, exponent: i32, value: u32, ftz: bool) -> u32 {
    if exponent >= 255 {
        return sign | INF32;
    }
    if exponent > 0 {
        return sign | ((exponent as u32) << 23) | (value & MANTISSA32);
    }
    if ftz {
        return sign;
    }
    let significand = f64::from(f32::from_bits((127 << 23) | (value & MANTISSA32)));
    sign | ((significand * 2f64.powi(exponent - 127)) as f32).to_bits()
}

/// The biased exponent field of the `f32` with bits `bits`.
fn exponent_of(bits: u32) -> i32 {
    ((bits >> 23) & 0xff) as i32
}

/// `rcp.approx[.ftz].f32`.
fn rcp(bits: u32, ftz: bool) -> u32 {
    let (sign, exponent, mantissa) = unpack(bits, ftz);
    if exponent == 0xff {
        return if mantissa != 0 { CANONICAL_NAN32 } else { sign };
    }
    if bits & !SIGN32 == 0 || (ftz && exponent == 0) {
        return sign | INF32;
    }
    let value = table(TableId::Rcp).get(mantissa as usize);
    pack(sign, exponent_of(value) - (exponent - 127), value, ftz)
}

/// `rsqrt.approx[.ftz].f32`.
fn rsqrt(bits: u32, ftz: bool) -> u32 {
    let (sign, exponent, mantissa) = unpack(bits, ftz);
    if exponent == 0xff {
        return if mantissa != 0 || sign != 0 {
            CANONICAL_NAN32
        } else {
            0
        };
    }
    if bits & !SIGN32 == 0 || (ftz && exponent == 0) {
        return sign | INF32;
    }
    if sign != 0 {
        return CANONICAL_NAN32;
    }
    let power = exponent - 127;
    let odd = power & 1;
    let value = table(TableId::Rsqrt).get(((odd as usize) << 23) | mantissa as usize);
    pack(0, exponent_of(value) - (power - odd) / 2, value, ftz)
}

/// `ex2.approx.ftz.f32`: the operand's magnitude truncated to 23 fraction bits; the table of
/// its sign gives the fraction's power, the integer part scales it.
fn ex2_ftz(bits: u32) -> u32 {
    let (sign, exponent, mantissa) = unpack(bits, true);
    if exponent == 0xff {
        return match (mantissa != 0, sign != 0) {
            (true, _) => CANONICAL_NAN32,
            (false, true) => 0,
            (false, false) => INF32,
        };
    }
    let magnitude = if exponent == 0 {
        0.0
    } else {
        f64::from(f32::from_bits(bits & !SIGN32))
    };
    // Past 2^9 every result is infinite or zero: keep the fixed-point value small.
    let fixed = (magnitude.min(512.0) * 2f64.powi(23)) as i64;
    let (whole, fraction) = ((fixed >> 23) as i32, (fixed & 0x7f_ffff) as usize);
    let (value, scale) = if sign == 0 {
        (table(TableId::Ex2Up).get(fraction), whole)
    } else {
        (table(TableId::Ex2Down).get(fraction), -whole)
    };
    pack(0, exponent_of(value) + scale, value, true)
}

/// `ex2.approx.f32`: below -126, `ptxas` squares the unit's result for half the operand.
fn ex2(bits: u32) -> u32 {
    let x = f32::from_bits(bits);
    if x < -126.0 {
        let half = f32::from_bits(ex2_ftz((x * 0.5).to_bits()));
        return (half * half).to_bits();
    }
    ex2_ftz(bits)
}

/// `lg2.approx.ftz.f32`: the exponent plus the logarithm of the mantissa (the tables for the
/// exponents of 1.0 and 0.5), truncated toward zero to an `f32`.
fn lg2_ftz(bits: u32) -> u32 {
    let (sign, exponent, mantissa) = unpack(bits, true);
    if exponent == 0 {
        return SIGN32 | INF32;
    }
    if exponent == 0xff {
        return if mantissa != 0 || sign != 0 {
            CANONICAL_NAN32
        } else {
            INF32
        };
    }
    if sign != 0 {
        return CANONICAL_NAN32;
    }
    let power = exponent - 127;
    // In fixed point with 64 fraction bits: every table value is a multiple of 2^-64.
    let fixed = |value: u32| (f64::from(f32::from_bits(value)) * 2f64.powi(64)) as i128;
    match power {
        0 => table(TableId::Lg2).get(mantissa as usize),
        -1 => table(TableId::Lg2Half).get(mantissa as usize),
        p if p > 0 => {
            truncated_f32((i128::from(p) << 64) + fixed(table(TableId::Lg2).get(mantissa as usize)))
        }
        p => {
            // p + log2(m) = -((-p - 1) + (1 - log2(m))), and the table for 0.5 holds
            // -(1 - log2(m)) truncated toward zero.
            let below_one = -fixed(table(TableId::Lg2Half).get(mantissa as usize));
            truncated_f32(-((i128::from(-p - 1) << 64) + below_one))
        }
    }
}

/// `lg2.approx.f32`: a subnormal operand is scaled by 2^24 first and 24 subtracted after.
fn lg2(bits: u32) -> u32 {
    let x = f32::from_bits(bits);
    if bits & !SIGN32 != 0 && x.abs() < f32::MIN_POSITIVE {
        let scaled = f32::from_bits(lg2_ftz((x * 16_777_216.0).to_bits()));
        return (scaled - 24.0).to_bits();
    }
    lg2_ftz(bits)
}

/// The `f32` nearest `fixed * 2^-64` toward zero (a non-zero value, at most 2^63).
fn truncated_f32(fixed: i128) -> u32 {
    let sign = if fixed < 0 { SIGN32 } else { 0 };
    let magnitude = fixed.unsigned_abs();
    let length = 128 - magnitude.leading_zeros() as i32;
    let shift = length - 24;
    let significand = if shift > 0 {
        magnitude >> shift
    } else {
        magnitude << -shift
    };
    sign | ((significand as f64 * 2f64.powi(shift - 64)) as f32).to_bits()
}

/// A subnormal `f32` as a zero of its sign.
fn flushed(x: f32) -> f32 {
    if x != 0.0 && x.abs() < f32::MIN_POSITIVE {
        0.0f32.copysign(x)
    } else {
        x
    }
}

/// `div.approx.ftz.f32`: the dividend times the unit's reciprocal of the divisor.
fn div_ftz(a: u32, b: u32) -> u32 {
    let product = flushed(f32::from_bits(a)) * f32::from_bits(rcp(b, true));
    flushed(product).to_bits()
}

/// `div.approx.f32`: zero for a divisor past 2^126; a subnormal divisor is scaled by 2^24
/// for the reciprocal and the quotient by 2^24 after.
fn div(a: u32, b: u32) -> u32 {
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    let magnitude = y.abs();
    if magnitude > 2f32.powi(126) && magnitude.is_finite() {
        return (x * 0.0f32.copysign(y)).to_bits();
    }
    if magnitude != 0.0 && magnitude < f32::MIN_POSITIVE {
        let scaled = f32::from_bits(rcp((y * 16_777_216.0).to_bits(), false));
        return ((x * scaled) * 16_777_216.0).to_bits();
    }
    (x * f32::from_bits(rcp(b, false))).to_bits()
}

/// `rcp.approx.ftz.f64` (the unit's `RCP64H`): the high word of the operand in, the high word
/// of the result out, its low word zero.
fn rcp64_ftz(bits: u64) -> u64 {
    let sign = bits & SIGN64;
    let exponent = ((bits >> 52) & 0x7ff) as i64;
    if exponent == 0x7ff {
        return if bits & ((1 << 52) - 1) != 0 {
            NAN64_HIGH
        } else {
            sign
        };
    }
    if exponent == 0 {
        return sign | INF64;
    }
    let value = table(TableId::Rcp64).get(((bits >> 32) & 0xf_ffff) as usize);
    let result = i64::from((value >> 20) & 0x7ff) - (exponent - 1023);
    pack64(sign, result, value)
}

/// `rsqrt.approx.ftz.f64` (the unit's `RSQ64H`), as [rcp64_ftz].
fn rsqrt64_ftz(bits: u64) -> u64 {
    let sign = bits & SIGN64;
    let exponent = ((bits >> 52) & 0x7ff) as i64;
    if exponent == 0x7ff {
        return if bits & ((1 << 52) - 1) != 0 || sign != 0 {
            NAN64_HIGH
        } else {
            0
        };
    }
    if exponent == 0 {
        return sign | INF64;
    }
    if sign != 0 {
        return NAN64_HIGH;
    }
    let power = exponent - 1023;
    let odd = power & 1;
    let index = ((odd as usize) << 20) | ((bits >> 32) & 0xf_ffff) as usize;
    let value = table(TableId::Rsqrt64).get(index);
    let result = i64::from((value >> 20) & 0x7ff) - (power - odd) / 2;
    pack64(0, result, value)
}

/// `sign` with the high mantissa of the table value `value` and the biased exponent
/// `exponent`, flushed to zero or infinity outside the range.
fn pack64(sign: u64, exponent: i64, value: u32) -> u64 {
    if exponent >= 0x7ff {
        return sign | INF64;
    }
    if exponent <= 0 {
        return sign;
    }
    sign | ((exponent as u64) << 52) | (u64::from(value & 0xf_ffff) << 32)
}

/// `rsqrt.approx.f64`: `ptxas` refines the unit's `RSQ64H` with one step of a cubic
/// correction; a subnormal operand is scaled by 2^54 and its result by 2^27.
fn rsqrt64(bits: u64) -> u64 {
    let refine = |x: f64| {
        let y = f64::from_bits(rsqrt64_ftz(x.to_bits()));
        let error = x.mul_add(-(y * y), 1.0);
        let correction = error.mul_add(0.375, 0.5);
        correction.mul_add(error * y, y)
    };
    let high = (bits >> 32) as u32;
    let x = f64::from_bits(bits);
    if high.wrapping_sub(0x0010_0000) < 0x7fe0_0000 {
        return refine(x).to_bits();
    }
    if x == 0.0 {
        return (bits & SIGN64) | INF64;
    }
    if x.is_nan() {
        return (x + x).to_bits();
    }
    if bits & SIGN64 != 0 {
        return 0xfff8_0000_0000_0000;
    }
    if x.is_infinite() {
        return 0;
    }
    (refine(x * 2f64.powi(54)) * 2f64.powi(27)).to_bits()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GPU's results (`sfu/h200.samples.txt.z`): `op a b result` per line, in hex.
    fn samples() -> Vec<(SfuOp, u64, u64, u64)> {
        let file = include_bytes!("../sfu/h200.samples.txt.z");
        let text = miniz_oxide::inflate::decompress_to_vec_zlib(file).expect("samples inflate");
        let text = String::from_utf8(text).expect("samples are text");
        text.lines()
            .map(|line| {
                let words: Vec<&str> = line.split(' ').collect();
                let hex = |w: &str| u64::from_str_radix(w, 16).unwrap_or(0);
                let op = SfuOp::from_ptx(words[0]).unwrap_or_else(|| panic!("op in `{line}`"));
                (op, hex(words[1]), hex(words[2]), hex(words[3]))
            })
            .collect()
    }

    #[test]
    fn every_operation_gives_the_gpus_bits() {
        let samples = samples();
        let mut wrong = Vec::new();
        for (op, _) in SfuOp::ALL {
            let of_op: Vec<_> = samples.iter().filter(|s| s.0 == op).collect();
            assert!(of_op.len() > 1000, "{} has samples", op.ptx());
            for &&(op, a, b, gpu) in &of_op {
                let ours = evaluate(op, a, b);
                if ours != gpu {
                    wrong.push(format!(
                        "{} {a:x} {b:x}: GPU {gpu:x}, CPU {ours:x}",
                        op.ptx()
                    ));
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "{} of {} differ, first: {:#?}",
            wrong.len(),
            samples.len(),
            &wrong[..wrong.len().min(12)]
        );
    }

    #[test]
    fn tables_decode_to_their_ends() {
        // The reciprocal of the largest mantissa lies just above 0.5; of 1.0 it is 1.0.
        assert_eq!(table(TableId::Rcp).get(0), 1.0f32.to_bits());
        let last = f32::from_bits(table(TableId::Rcp).get((1 << 23) - 1));
        assert!((0.5..0.5000001).contains(&last), "{last}");
        assert_eq!(table(TableId::Ex2Up).get(0), 1.0f32.to_bits());
        assert_eq!(table(TableId::Lg2).get(0), 0);
    }

    #[test]
    fn op_codes_round_trip() {
        for (index, (op, ptx)) in SfuOp::ALL.iter().enumerate() {
            assert_eq!(*op as usize, index);
            assert_eq!(SfuOp::from_code(index as u32), Some(*op));
            assert_eq!(SfuOp::from_ptx(ptx), Some(*op));
        }
    }
}
