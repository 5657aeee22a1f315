//! One use of each crate, as its documentation shows, on input bytes: each function reads
//! `input` and writes its results' bytes to `out`. The same code runs on the CPU and in the
//! kernel; [CASES] names them.

/// Copies as much of `bytes` as fits into `out`, returns how many.
fn put(out: &mut [u8], bytes: &[u8]) -> usize {
    let n = bytes.len().min(out.len());
    out[..n].copy_from_slice(&bytes[..n]);
    n
}

fn u32_at(input: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(input[4 * i..4 * i + 4].try_into().unwrap())
}

fn f32_at(input: &[u8], i: usize) -> f32 {
    (u32_at(input, i) >> 8) as f32 / 16_777_216.0 * 200.0 - 100.0
}

pub fn sha2(input: &[u8], out: &mut [u8]) {
    use sha2::{Digest, Sha256, Sha512};
    let a = Sha256::digest(input);
    let mut h = Sha512::new();
    h.update(&input[..17]);
    h.update(&input[17..]);
    let b = h.finalize();
    let n = put(out, &a);
    put(&mut out[n..], &b);
}

pub fn sha1(input: &[u8], out: &mut [u8]) {
    use sha1::{Digest, Sha1};
    put(out, &Sha1::digest(input));
}

pub fn md5(input: &[u8], out: &mut [u8]) {
    use md5::{Digest, Md5};
    put(out, &Md5::digest(input));
}

pub fn crc32fast(input: &[u8], out: &mut [u8]) {
    let mut h = crc32fast::Hasher::new();
    h.update(input);
    put(out, &h.finalize().to_le_bytes());
}

pub fn crc(input: &[u8], out: &mut [u8]) {
    const CRC16: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_IBM_SDLC);
    const CRC64: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_ECMA_182);
    let n = put(out, &CRC16.checksum(input).to_le_bytes());
    put(&mut out[n..], &CRC64.checksum(input).to_le_bytes());
}

pub fn adler2(input: &[u8], out: &mut [u8]) {
    let mut a = adler2::Adler32::new();
    a.write_slice(input);
    put(out, &a.checksum().to_le_bytes());
}

pub fn siphasher(input: &[u8], out: &mut [u8]) {
    use core::hash::Hasher;
    let mut h = siphasher::sip::SipHasher13::new_with_keys(1, 2);
    h.write(input);
    put(out, &h.finish().to_le_bytes());
}

pub fn fnv(input: &[u8], out: &mut [u8]) {
    use core::hash::Hasher;
    let mut h = fnv::FnvHasher::default();
    h.write(input);
    put(out, &h.finish().to_le_bytes());
}

pub fn xxhash(input: &[u8], out: &mut [u8]) {
    let a = xxhash_rust::xxh3::xxh3_64(input);
    let b = xxhash_rust::xxh32::xxh32(input, 7);
    let c = xxhash_rust::xxh64::xxh64(input, 7);
    let n = put(out, &a.to_le_bytes());
    let n = n + put(&mut out[n..], &b.to_le_bytes());
    put(&mut out[n..], &c.to_le_bytes());
}

pub fn aes(input: &[u8], out: &mut [u8]) {
    use aes::cipher::{BlockEncrypt, KeyInit, generic_array::GenericArray};
    let cipher = aes::Aes128::new(GenericArray::from_slice(&input[..16]));
    let mut block = *GenericArray::from_slice(&input[16..32]);
    cipher.encrypt_block(&mut block);
    put(out, &block);
}

pub fn chacha20(input: &[u8], out: &mut [u8]) {
    use chacha20::cipher::{KeyIvInit, StreamCipher};
    let mut cipher = chacha20::ChaCha20::new(input[..32].into(), input[32..44].into());
    let mut buf = [0u8; 64];
    buf.copy_from_slice(&input[44..108]);
    cipher.apply_keystream(&mut buf);
    put(out, &buf);
}

pub fn fixed(input: &[u8], out: &mut [u8]) {
    use fixed::types::I16F16;
    let a = I16F16::from_bits(u32_at(input, 0) as i32 >> 4);
    let b = I16F16::from_num(3.25);
    let c = a.saturating_mul(b) + I16F16::from_str("1.5").unwrap();
    put(out, &c.to_bits().to_le_bytes());
}

pub fn heapless(input: &[u8], out: &mut [u8]) {
    let mut v: heapless::Vec<u32, 8> = heapless::Vec::new();
    for i in 0..10 {
        if v.push(u32_at(input, i)).is_err() {
            break;
        }
    }
    v.sort_unstable();
    let mut s: heapless::String<32> = heapless::String::new();
    let _ = core::fmt::write(&mut s, format_args!("{}-{}", v[0] % 1000, v.len()));
    let n = put(out, &v[0].to_le_bytes());
    put(&mut out[n..], s.as_bytes());
}

pub fn arrayvec(input: &[u8], out: &mut [u8]) {
    let mut v = arrayvec::ArrayVec::<u16, 6>::new();
    for i in 0..8 {
        if let Err(e) = v.try_push(input[i] as u16 * 3) {
            let _ = e.element();
            break;
        }
    }
    v.reverse();
    let sum: u16 = v.iter().sum();
    put(out, &sum.to_le_bytes());
}

pub fn itoa(input: &[u8], out: &mut [u8]) {
    let mut buffer = itoa::Buffer::new();
    let s = buffer.format(u32_at(input, 0) as i64 - 2_000_000_000);
    put(out, s.as_bytes());
}

pub fn ryu(input: &[u8], out: &mut [u8]) {
    let mut buffer = ryu::Buffer::new();
    let s = buffer.format(f32_at(input, 0) as f64 * 1.0e-3);
    put(out, s.as_bytes());
}

pub fn rand(input: &[u8], out: &mut [u8]) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(u32_at(input, 0) as u64);
    let a: u32 = rng.random();
    let b = rng.random_range(10..20u32);
    let c: f64 = rng.random();
    let n = put(out, &a.to_le_bytes());
    let n = n + put(&mut out[n..], &b.to_le_bytes());
    put(&mut out[n..], &c.to_le_bytes());
}

pub fn rand_distr(input: &[u8], out: &mut [u8]) {
    use rand::SeedableRng;
    use rand_distr::{Distribution, Normal};
    let mut rng = rand::rngs::SmallRng::seed_from_u64(u32_at(input, 1) as u64);
    let normal = Normal::new(2.0f64, 3.0).unwrap();
    let x = normal.sample(&mut rng);
    put(out, &x.to_le_bytes());
}

pub fn wide(input: &[u8], out: &mut [u8]) {
    let a = wide::f32x4::from([f32_at(input, 0), f32_at(input, 1), f32_at(input, 2), 1.0]);
    let b = wide::i32x4::from([u32_at(input, 3) as i32, 2, 3, 4]);
    let c = (a * a + a).sqrt();
    let d: wide::i32x4 = b << 3;
    let n = put(out, bytemuck::bytes_of(&c.to_array()));
    put(&mut out[n..], bytemuck::bytes_of(&d.to_array()));
}

pub fn fixedbitset(input: &[u8], out: &mut [u8]) {
    let mut set = fixedbitset::FixedBitSet::with_capacity(256);
    for &b in &input[..32] {
        set.insert(b as usize);
    }
    let count = set.count_ones(..) as u32;
    let first = set.ones().next().unwrap_or(0) as u32;
    let n = put(out, &count.to_le_bytes());
    put(&mut out[n..], &first.to_le_bytes());
}

pub fn half(input: &[u8], out: &mut [u8]) {
    let a = half::f16::from_f32(f32_at(input, 0));
    let b = half::bf16::from_f32(f32_at(input, 1));
    let n = put(out, &a.to_bits().to_le_bytes());
    put(&mut out[n..], &(a.to_f32() + b.to_f32()).to_le_bytes());
}

pub fn micromath(input: &[u8], out: &mut [u8]) {
    use micromath::F32Ext;
    let x = f32_at(input, 0);
    let y = F32Ext::sqrt(F32Ext::abs(x)) + F32Ext::sin(x) + F32Ext::atan2(x, 2.0);
    put(out, &y.to_le_bytes());
}

pub fn base64(input: &[u8], out: &mut [u8]) {
    use base64::Engine;
    let mut buf = [0u8; 64];
    let n = base64::engine::general_purpose::STANDARD
        .encode_slice(&input[..30], &mut buf)
        .unwrap();
    put(out, &buf[..n]);
}

pub fn hex(input: &[u8], out: &mut [u8]) {
    let mut buf = [0u8; 40];
    hex::encode_to_slice(&input[..20], &mut buf).unwrap();
    put(out, &buf);
}

pub fn bytemuck(input: &[u8], out: &mut [u8]) {
    let words: [u32; 4] = bytemuck::pod_read_unaligned(&input[1..17]);
    let sum = words.iter().fold(0u32, |a, &w| a.wrapping_add(w));
    put(out, &sum.to_le_bytes());
}

pub fn nalgebra(input: &[u8], out: &mut [u8]) {
    use nalgebra::{Matrix3, Vector3};
    let m = Matrix3::from_fn(|i, j| f32_at(input, 3 * i + j) as f64);
    let v = Vector3::new(1.0, 2.0, 3.0);
    let r = m * v + m.transpose() * v;
    let det = m.determinant();
    let inv = m.try_inverse().map(|i| i[(0, 0)]).unwrap_or(0.0);
    let n = put(out, &r[0].to_le_bytes());
    let n = n + put(&mut out[n..], &det.to_le_bytes());
    put(&mut out[n..], &inv.to_le_bytes());
}

pub fn num_rational(input: &[u8], out: &mut [u8]) {
    use num_rational::Ratio;
    let a = Ratio::new(u32_at(input, 0) as i64 % 1000, 7 + input[4] as i64);
    let b = Ratio::new(3i64, 4);
    let c = a * b + b;
    let n = put(out, &c.numer().to_le_bytes());
    put(&mut out[n..], &c.denom().to_le_bytes());
}

pub fn num_integer(input: &[u8], out: &mut [u8]) {
    use num_integer::Integer;
    let a = u32_at(input, 0) as u64;
    let b = u32_at(input, 1) as u64 | 1;
    let n = put(out, &a.gcd(&b).to_le_bytes());
    put(&mut out[n..], &num_integer::sqrt(a).to_le_bytes());
}

pub fn byteorder(input: &[u8], out: &mut [u8]) {
    use byteorder::{BigEndian, ByteOrder};
    let x = BigEndian::read_u32(&input[..4]);
    let mut buf = [0u8; 8];
    BigEndian::write_u64(&mut buf, x as u64 * 3);
    put(out, &buf);
}

/// Functions that the toolchain's `core` ships without MIR, as crates reach them: UTF-8
/// validation, integer and float formatting, and `TypeId` comparisons.
pub fn core(input: &[u8], out: &mut [u8]) {
    let text = match core::str::from_utf8(&input[..24]) {
        Ok(s) => s.chars().count() as u32,
        Err(e) => 1000 + e.valid_up_to() as u32,
    };
    let mut s: heapless::String<64> = heapless::String::new();
    let _ = core::fmt::write(
        &mut s,
        format_args!(
            "{} {} {:x}",
            u32_at(input, 0) as usize,
            u32_at(input, 1) as i64 - 9,
            input[8]
        ),
    );
    fn is_f64<T: 'static>() -> bool {
        core::any::TypeId::of::<T>() == core::any::TypeId::of::<f64>()
    }
    let types = (is_f64::<f64>() as u32) * 2 + is_f64::<f32>() as u32;
    let n = put(out, &text.to_le_bytes());
    let n = n + put(&mut out[n..], &types.to_le_bytes());
    put(&mut out[n..], s.as_bytes());
}

/// The crate each use shows, in [run]'s order.
pub const CASES: &[&str] = &[
    "sha2",
    "sha1",
    "md-5",
    "crc32fast",
    "crc",
    "adler2",
    "siphasher",
    "fnv",
    "xxhash-rust",
    "aes",
    "chacha20",
    "fixed",
    "heapless",
    "arrayvec",
    "itoa",
    "ryu",
    "rand",
    "rand-distr",
    "wide",
    "fixedbitset",
    "half",
    "micromath",
    "base64",
    "hex",
    "bytemuck",
    "nalgebra",
    "num-rational",
    "num-integer",
    "byteorder",
    "core",
];

/// Runs use `case` (an index into [CASES]).
pub fn run(case: usize, input: &[u8], out: &mut [u8]) {
    match case {
        0 => sha2(input, out),
        1 => sha1(input, out),
        2 => md5(input, out),
        3 => crc32fast(input, out),
        4 => crc(input, out),
        5 => adler2(input, out),
        6 => siphasher(input, out),
        7 => fnv(input, out),
        8 => xxhash(input, out),
        9 => aes(input, out),
        10 => chacha20(input, out),
        11 => fixed(input, out),
        12 => heapless(input, out),
        13 => arrayvec(input, out),
        14 => itoa(input, out),
        15 => ryu(input, out),
        16 => rand(input, out),
        17 => rand_distr(input, out),
        18 => wide(input, out),
        19 => fixedbitset(input, out),
        20 => half(input, out),
        21 => micromath(input, out),
        22 => base64(input, out),
        23 => hex(input, out),
        24 => bytemuck(input, out),
        25 => nalgebra(input, out),
        26 => num_rational(input, out),
        27 => num_integer(input, out),
        28 => byteorder(input, out),
        29 => core(input, out),
        _ => {}
    }
}
