//! One case per function of the x86-64 baseline in `core::arch::x86_64` (SSE and SSE2): each
//! reads its arguments from a block of input bytes and writes its result, then the scratch
//! memory that pointer arguments point to. The same code runs on the CPU and in the kernel.
//!
//! `crates/cargo-oxide/tests/x86_baseline.rs` checks that every SSE and SSE2 function of the
//! toolchain's `core` has a case here (the functions of the MXCSR register excepted: the GPU
//! has no such register, and device code calling them does not build).

use core::arch::x86_64::*;

/// The bytes a case reads its arguments from.
pub const INPUT_BYTES: usize = 320;
/// The bytes a case writes: its result, then the scratch memory.
pub const OUTPUT_BYTES: usize = 160;
/// The bytes of scratch memory that pointer arguments point to, filled from the input first.
const SCRATCH_BYTES: usize = 64;

/// Memory for pointer arguments, aligned as the aligned loads and stores need.
#[repr(C, align(16))]
pub struct Scratch([u8; SCRATCH_BYTES]);

/// Reads arguments from input bytes.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    scratch: Scratch,
}

impl<'a> Reader<'a> {
    /// A reader of `bytes`, whose first bytes fill the scratch memory.
    pub fn new(bytes: &'a [u8]) -> Self {
        let mut scratch = Scratch([0; SCRATCH_BYTES]);
        scratch.0.copy_from_slice(&bytes[..SCRATCH_BYTES]);
        Reader {
            bytes,
            at: SCRATCH_BYTES,
            scratch,
        }
    }

    /// The next argument.
    pub fn take<T: Arg>(&mut self) -> T {
        T::take(self)
    }

    fn array<const N: usize>(&mut self) -> [u8; N] {
        let bytes = self.bytes[self.at..self.at + N].try_into().unwrap();
        self.at += N;
        bytes
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.array())
    }

    fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.array())
    }
}

/// A float from 32 random bits: special values, small halves (ties for rounding), or values of
/// every magnitude from 2^-28 to 2^36 with a random mantissa.
fn f32_from(bits: u32) -> f32 {
    const SPECIAL: [f32; 10] = [
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        3.0e9,
        -3.0e9,
        1.0e-40,
        f32::MAX,
        f32::MIN_POSITIVE,
    ];
    match bits % 8 {
        0 => SPECIAL[(bits >> 3) as usize % SPECIAL.len()],
        1 => ((bits >> 8) % 128) as f32 * 0.5 - 32.0,
        _ => {
            let mantissa = ((bits >> 8) as f32) / 16_777_216.0 - 0.5;
            let scale = f32::from_bits((127 - 28 + ((bits >> 3) % 64)) << 23);
            mantissa * scale
        }
    }
}

/// A double from 64 random bits, as [f32_from], with magnitudes from 2^-60 to 2^68.
fn f64_from(bits: u64) -> f64 {
    const SPECIAL: [f64; 10] = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        3.0e9,
        -1.0e19,
        1.0e-310,
        f64::MAX,
        f64::MIN_POSITIVE,
    ];
    match bits % 8 {
        0 => SPECIAL[(bits >> 3) as usize % SPECIAL.len()],
        1 => ((bits >> 8) % 128) as f64 * 0.5 - 32.0,
        _ => {
            let mantissa = ((bits >> 11) as f64) / 9_007_199_254_740_992.0 - 0.5;
            let scale = f64::from_bits((1023 - 60 + ((bits >> 3) % 128)) << 52);
            mantissa * scale
        }
    }
}

/// A value an intrinsic takes, made from input bytes.
pub trait Arg {
    fn take(r: &mut Reader) -> Self;
}

impl Arg for __m128 {
    fn take(r: &mut Reader) -> Self {
        let lanes = [r.u32(), r.u32(), r.u32(), r.u32()].map(f32_from);
        unsafe { _mm_setr_ps(lanes[0], lanes[1], lanes[2], lanes[3]) }
    }
}

impl Arg for __m128d {
    fn take(r: &mut Reader) -> Self {
        let (low, high) = (f64_from(r.u64()), f64_from(r.u64()));
        unsafe { _mm_setr_pd(low, high) }
    }
}

impl Arg for __m128i {
    /// Random bytes; one time in four a shift count below 70 instead (the low 64 bits), so
    /// that the shifts by a vector shift by every amount.
    fn take(r: &mut Reader) -> Self {
        let bytes: [u8; 16] = r.array();
        let bits = if bytes[0].is_multiple_of(4) {
            u128::from(bytes[1] % 70)
        } else {
            u128::from_le_bytes(bytes)
        };
        unsafe { core::mem::transmute::<u128, __m128i>(bits) }
    }
}

impl Arg for f32 {
    fn take(r: &mut Reader) -> Self {
        f32_from(r.u32())
    }
}

impl Arg for f64 {
    fn take(r: &mut Reader) -> Self {
        f64_from(r.u64())
    }
}

macro_rules! int_args {
    ($($t:ty),*) => {$(
        impl Arg for $t {
            fn take(r: &mut Reader) -> Self {
                <$t>::from_le_bytes(r.array())
            }
        }
    )*};
}
int_args!(i8, i16, i32, i64, u32);

impl<T> Arg for *const T {
    fn take(r: &mut Reader) -> Self {
        r.scratch.0.as_ptr().cast()
    }
}

impl<T> Arg for *mut T {
    fn take(r: &mut Reader) -> Self {
        r.scratch.0.as_mut_ptr().cast()
    }
}

/// Writes results as bytes.
pub struct Writer<'a> {
    out: &'a mut [u8],
    at: usize,
}

impl<'a> Writer<'a> {
    /// A writer into `out`, zeroing it first.
    pub fn new(out: &'a mut [u8]) -> Self {
        out.fill(0);
        Writer { out, at: 0 }
    }

    fn bytes(&mut self, bytes: &[u8]) {
        self.out[self.at..self.at + bytes.len()].copy_from_slice(bytes);
        self.at += bytes.len();
    }
}

/// A result written as bytes. Float lanes that are NaN are written as one pattern: x86 and the
/// GPU make NaNs with different payloads, which Rust leaves unspecified.
pub trait Out {
    fn put(self, w: &mut Writer);
}

impl Out for () {
    fn put(self, _: &mut Writer) {}
}

impl Out for f32 {
    fn put(self, w: &mut Writer) {
        let bits = if self.is_nan() {
            0x7fc0_0000
        } else {
            self.to_bits()
        };
        w.bytes(&bits.to_le_bytes());
    }
}

impl Out for f64 {
    fn put(self, w: &mut Writer) {
        let bits = if self.is_nan() {
            0x7ff8_0000_0000_0000
        } else {
            self.to_bits()
        };
        w.bytes(&bits.to_le_bytes());
    }
}

impl Out for __m128 {
    fn put(self, w: &mut Writer) {
        for lane in unsafe { core::mem::transmute::<__m128, [f32; 4]>(self) } {
            lane.put(w);
        }
    }
}

impl Out for __m128d {
    fn put(self, w: &mut Writer) {
        for lane in unsafe { core::mem::transmute::<__m128d, [f64; 2]>(self) } {
            lane.put(w);
        }
    }
}

impl Out for __m128i {
    fn put(self, w: &mut Writer) {
        w.bytes(&unsafe { core::mem::transmute::<__m128i, u128>(self) }.to_le_bytes());
    }
}

macro_rules! int_outs {
    ($($t:ty),*) => {$(
        impl Out for $t {
            fn put(self, w: &mut Writer) {
                w.bytes(&self.to_le_bytes());
            }
        }
    )*};
}
int_outs!(i32, i64, u32);

impl<T: Out, const N: usize> Out for [T; N] {
    fn put(self, w: &mut Writer) {
        for x in self {
            x.put(w);
        }
    }
}

/// `_MM_TRANSPOSE4_PS` on four rows, which it transposes in place.
fn transpose4(mut a: __m128, mut b: __m128, mut c: __m128, mut d: __m128) -> [__m128; 4] {
    unsafe { _MM_TRANSPOSE4_PS(&mut a, &mut b, &mut c, &mut d) };
    [a, b, c, d]
}

/// Declares the cases: `function => call` (a function may have several cases, one per
/// immediate), [CASES] and [run].
macro_rules! cases {
    ($r:ident; $($name:ident => $call:expr,)*) => {
        /// Each case's function and call, in case order.
        pub const CASES: &[(&str, &str)] = &[$((stringify!($name), stringify!($call))),*];

        /// Runs case `case` on arguments read from `input`, writing its result and the scratch
        /// memory to `out` ([OUTPUT_BYTES]).
        #[allow(unused_unsafe)]
        pub fn run(case: usize, input: &[u8], out: &mut [u8]) {
            let mut $r = Reader::new(input);
            let mut w = Writer::new(out);
            let mut index = 0;
            $(
                if case == index {
                    let result = unsafe { $call };
                    result.put(&mut w);
                    w.at = OUTPUT_BYTES - SCRATCH_BYTES;
                    w.bytes(&$r.scratch.0);
                    return;
                }
                index += 1;
            )*
            let _ = index;
        }
    };
}

cases! { r;
    _mm_add_ss => _mm_add_ss(r.take(), r.take()),
    _mm_add_ps => _mm_add_ps(r.take(), r.take()),
    _mm_sub_ss => _mm_sub_ss(r.take(), r.take()),
    _mm_sub_ps => _mm_sub_ps(r.take(), r.take()),
    _mm_mul_ss => _mm_mul_ss(r.take(), r.take()),
    _mm_mul_ps => _mm_mul_ps(r.take(), r.take()),
    _mm_div_ss => _mm_div_ss(r.take(), r.take()),
    _mm_div_ps => _mm_div_ps(r.take(), r.take()),
    _mm_sqrt_ss => _mm_sqrt_ss(r.take()),
    _mm_sqrt_ps => _mm_sqrt_ps(r.take()),
    _mm_rcp_ss => _mm_rcp_ss(r.take()),
    _mm_rcp_ps => _mm_rcp_ps(r.take()),
    _mm_rsqrt_ss => _mm_rsqrt_ss(r.take()),
    _mm_rsqrt_ps => _mm_rsqrt_ps(r.take()),
    _mm_min_ss => _mm_min_ss(r.take(), r.take()),
    _mm_min_ps => _mm_min_ps(r.take(), r.take()),
    _mm_max_ss => _mm_max_ss(r.take(), r.take()),
    _mm_max_ps => _mm_max_ps(r.take(), r.take()),
    _mm_and_ps => _mm_and_ps(r.take(), r.take()),
    _mm_andnot_ps => _mm_andnot_ps(r.take(), r.take()),
    _mm_or_ps => _mm_or_ps(r.take(), r.take()),
    _mm_xor_ps => _mm_xor_ps(r.take(), r.take()),
    _mm_cmpeq_ss => _mm_cmpeq_ss(r.take(), r.take()),
    _mm_cmplt_ss => _mm_cmplt_ss(r.take(), r.take()),
    _mm_cmple_ss => _mm_cmple_ss(r.take(), r.take()),
    _mm_cmpgt_ss => _mm_cmpgt_ss(r.take(), r.take()),
    _mm_cmpge_ss => _mm_cmpge_ss(r.take(), r.take()),
    _mm_cmpneq_ss => _mm_cmpneq_ss(r.take(), r.take()),
    _mm_cmpnlt_ss => _mm_cmpnlt_ss(r.take(), r.take()),
    _mm_cmpnle_ss => _mm_cmpnle_ss(r.take(), r.take()),
    _mm_cmpngt_ss => _mm_cmpngt_ss(r.take(), r.take()),
    _mm_cmpnge_ss => _mm_cmpnge_ss(r.take(), r.take()),
    _mm_cmpord_ss => _mm_cmpord_ss(r.take(), r.take()),
    _mm_cmpunord_ss => _mm_cmpunord_ss(r.take(), r.take()),
    _mm_cmpeq_ps => _mm_cmpeq_ps(r.take(), r.take()),
    _mm_cmplt_ps => _mm_cmplt_ps(r.take(), r.take()),
    _mm_cmple_ps => _mm_cmple_ps(r.take(), r.take()),
    _mm_cmpgt_ps => _mm_cmpgt_ps(r.take(), r.take()),
    _mm_cmpge_ps => _mm_cmpge_ps(r.take(), r.take()),
    _mm_cmpneq_ps => _mm_cmpneq_ps(r.take(), r.take()),
    _mm_cmpnlt_ps => _mm_cmpnlt_ps(r.take(), r.take()),
    _mm_cmpnle_ps => _mm_cmpnle_ps(r.take(), r.take()),
    _mm_cmpngt_ps => _mm_cmpngt_ps(r.take(), r.take()),
    _mm_cmpnge_ps => _mm_cmpnge_ps(r.take(), r.take()),
    _mm_cmpord_ps => _mm_cmpord_ps(r.take(), r.take()),
    _mm_cmpunord_ps => _mm_cmpunord_ps(r.take(), r.take()),
    _mm_comieq_ss => _mm_comieq_ss(r.take(), r.take()),
    _mm_comilt_ss => _mm_comilt_ss(r.take(), r.take()),
    _mm_comile_ss => _mm_comile_ss(r.take(), r.take()),
    _mm_comigt_ss => _mm_comigt_ss(r.take(), r.take()),
    _mm_comige_ss => _mm_comige_ss(r.take(), r.take()),
    _mm_comineq_ss => _mm_comineq_ss(r.take(), r.take()),
    _mm_ucomieq_ss => _mm_ucomieq_ss(r.take(), r.take()),
    _mm_ucomilt_ss => _mm_ucomilt_ss(r.take(), r.take()),
    _mm_ucomile_ss => _mm_ucomile_ss(r.take(), r.take()),
    _mm_ucomigt_ss => _mm_ucomigt_ss(r.take(), r.take()),
    _mm_ucomige_ss => _mm_ucomige_ss(r.take(), r.take()),
    _mm_ucomineq_ss => _mm_ucomineq_ss(r.take(), r.take()),
    _mm_cvtss_si32 => _mm_cvtss_si32(r.take()),
    _mm_cvt_ss2si => _mm_cvt_ss2si(r.take()),
    _mm_cvttss_si32 => _mm_cvttss_si32(r.take()),
    _mm_cvtt_ss2si => _mm_cvtt_ss2si(r.take()),
    _mm_cvtss_f32 => _mm_cvtss_f32(r.take()),
    _mm_cvtsi32_ss => _mm_cvtsi32_ss(r.take(), r.take()),
    _mm_cvt_si2ss => _mm_cvt_si2ss(r.take(), r.take()),
    _mm_set_ss => _mm_set_ss(r.take()),
    _mm_set1_ps => _mm_set1_ps(r.take()),
    _mm_set_ps1 => _mm_set_ps1(r.take()),
    _mm_set_ps => _mm_set_ps(r.take(), r.take(), r.take(), r.take()),
    _mm_setr_ps => _mm_setr_ps(r.take(), r.take(), r.take(), r.take()),
    _mm_setzero_ps => _mm_setzero_ps(),
    _MM_SHUFFLE => _MM_SHUFFLE(r.take(), r.take(), r.take(), r.take()),
    _mm_shuffle_ps => _mm_shuffle_ps::<0x1B>(r.take(), r.take()),
    _mm_unpackhi_ps => _mm_unpackhi_ps(r.take(), r.take()),
    _mm_unpacklo_ps => _mm_unpacklo_ps(r.take(), r.take()),
    _mm_movehl_ps => _mm_movehl_ps(r.take(), r.take()),
    _mm_movelh_ps => _mm_movelh_ps(r.take(), r.take()),
    _mm_movemask_ps => _mm_movemask_ps(r.take()),
    _mm_load_ss => _mm_load_ss(r.take()),
    _mm_load1_ps => _mm_load1_ps(r.take()),
    _mm_load_ps1 => _mm_load_ps1(r.take()),
    _mm_load_ps => _mm_load_ps(r.take()),
    _mm_loadu_ps => _mm_loadu_ps(r.take()),
    _mm_loadr_ps => _mm_loadr_ps(r.take()),
    _mm_store_ss => _mm_store_ss(r.take(), r.take()),
    _mm_store1_ps => _mm_store1_ps(r.take(), r.take()),
    _mm_store_ps1 => _mm_store_ps1(r.take(), r.take()),
    _mm_store_ps => _mm_store_ps(r.take(), r.take()),
    _mm_storeu_ps => _mm_storeu_ps(r.take(), r.take()),
    _mm_storer_ps => _mm_storer_ps(r.take(), r.take()),
    _mm_move_ss => _mm_move_ss(r.take(), r.take()),
    _mm_sfence => _mm_sfence(),
    _mm_prefetch => _mm_prefetch::<_MM_HINT_T0>(r.take()),
    _mm_undefined_ps => _mm_undefined_ps(),
    _MM_TRANSPOSE4_PS => transpose4(r.take(), r.take(), r.take(), r.take()),
    _mm_stream_ps => _mm_stream_ps(r.take(), r.take()),
    _mm_pause => _mm_pause(),
    _mm_clflush => _mm_clflush(r.take()),
    _mm_lfence => _mm_lfence(),
    _mm_mfence => _mm_mfence(),
    _mm_add_epi8 => _mm_add_epi8(r.take(), r.take()),
    _mm_add_epi16 => _mm_add_epi16(r.take(), r.take()),
    _mm_add_epi32 => _mm_add_epi32(r.take(), r.take()),
    _mm_add_epi64 => _mm_add_epi64(r.take(), r.take()),
    _mm_adds_epi8 => _mm_adds_epi8(r.take(), r.take()),
    _mm_adds_epi16 => _mm_adds_epi16(r.take(), r.take()),
    _mm_adds_epu8 => _mm_adds_epu8(r.take(), r.take()),
    _mm_adds_epu16 => _mm_adds_epu16(r.take(), r.take()),
    _mm_avg_epu8 => _mm_avg_epu8(r.take(), r.take()),
    _mm_avg_epu16 => _mm_avg_epu16(r.take(), r.take()),
    _mm_madd_epi16 => _mm_madd_epi16(r.take(), r.take()),
    _mm_max_epi16 => _mm_max_epi16(r.take(), r.take()),
    _mm_max_epu8 => _mm_max_epu8(r.take(), r.take()),
    _mm_min_epi16 => _mm_min_epi16(r.take(), r.take()),
    _mm_min_epu8 => _mm_min_epu8(r.take(), r.take()),
    _mm_mulhi_epi16 => _mm_mulhi_epi16(r.take(), r.take()),
    _mm_mulhi_epu16 => _mm_mulhi_epu16(r.take(), r.take()),
    _mm_mullo_epi16 => _mm_mullo_epi16(r.take(), r.take()),
    _mm_mul_epu32 => _mm_mul_epu32(r.take(), r.take()),
    _mm_sad_epu8 => _mm_sad_epu8(r.take(), r.take()),
    _mm_sub_epi8 => _mm_sub_epi8(r.take(), r.take()),
    _mm_sub_epi16 => _mm_sub_epi16(r.take(), r.take()),
    _mm_sub_epi32 => _mm_sub_epi32(r.take(), r.take()),
    _mm_sub_epi64 => _mm_sub_epi64(r.take(), r.take()),
    _mm_subs_epi8 => _mm_subs_epi8(r.take(), r.take()),
    _mm_subs_epi16 => _mm_subs_epi16(r.take(), r.take()),
    _mm_subs_epu8 => _mm_subs_epu8(r.take(), r.take()),
    _mm_subs_epu16 => _mm_subs_epu16(r.take(), r.take()),
    _mm_slli_si128 => _mm_slli_si128::<3>(r.take()),
    _mm_slli_si128 => _mm_slli_si128::<20>(r.take()),
    _mm_bslli_si128 => _mm_bslli_si128::<5>(r.take()),
    _mm_bsrli_si128 => _mm_bsrli_si128::<7>(r.take()),
    _mm_slli_epi16 => _mm_slli_epi16::<5>(r.take()),
    _mm_slli_epi16 => _mm_slli_epi16::<20>(r.take()),
    _mm_sll_epi16 => _mm_sll_epi16(r.take(), r.take()),
    _mm_slli_epi32 => _mm_slli_epi32::<5>(r.take()),
    _mm_slli_epi32 => _mm_slli_epi32::<40>(r.take()),
    _mm_sll_epi32 => _mm_sll_epi32(r.take(), r.take()),
    _mm_slli_epi64 => _mm_slli_epi64::<5>(r.take()),
    _mm_slli_epi64 => _mm_slli_epi64::<70>(r.take()),
    _mm_sll_epi64 => _mm_sll_epi64(r.take(), r.take()),
    _mm_srai_epi16 => _mm_srai_epi16::<5>(r.take()),
    _mm_srai_epi16 => _mm_srai_epi16::<20>(r.take()),
    _mm_sra_epi16 => _mm_sra_epi16(r.take(), r.take()),
    _mm_srai_epi32 => _mm_srai_epi32::<5>(r.take()),
    _mm_srai_epi32 => _mm_srai_epi32::<40>(r.take()),
    _mm_sra_epi32 => _mm_sra_epi32(r.take(), r.take()),
    _mm_srli_si128 => _mm_srli_si128::<3>(r.take()),
    _mm_srli_si128 => _mm_srli_si128::<20>(r.take()),
    _mm_srli_epi16 => _mm_srli_epi16::<5>(r.take()),
    _mm_srli_epi16 => _mm_srli_epi16::<20>(r.take()),
    _mm_srl_epi16 => _mm_srl_epi16(r.take(), r.take()),
    _mm_srli_epi32 => _mm_srli_epi32::<5>(r.take()),
    _mm_srli_epi32 => _mm_srli_epi32::<40>(r.take()),
    _mm_srl_epi32 => _mm_srl_epi32(r.take(), r.take()),
    _mm_srli_epi64 => _mm_srli_epi64::<5>(r.take()),
    _mm_srli_epi64 => _mm_srli_epi64::<70>(r.take()),
    _mm_srl_epi64 => _mm_srl_epi64(r.take(), r.take()),
    _mm_and_si128 => _mm_and_si128(r.take(), r.take()),
    _mm_andnot_si128 => _mm_andnot_si128(r.take(), r.take()),
    _mm_or_si128 => _mm_or_si128(r.take(), r.take()),
    _mm_xor_si128 => _mm_xor_si128(r.take(), r.take()),
    _mm_cmpeq_epi8 => _mm_cmpeq_epi8(r.take(), r.take()),
    _mm_cmpeq_epi16 => _mm_cmpeq_epi16(r.take(), r.take()),
    _mm_cmpeq_epi32 => _mm_cmpeq_epi32(r.take(), r.take()),
    _mm_cmpgt_epi8 => _mm_cmpgt_epi8(r.take(), r.take()),
    _mm_cmpgt_epi16 => _mm_cmpgt_epi16(r.take(), r.take()),
    _mm_cmpgt_epi32 => _mm_cmpgt_epi32(r.take(), r.take()),
    _mm_cmplt_epi8 => _mm_cmplt_epi8(r.take(), r.take()),
    _mm_cmplt_epi16 => _mm_cmplt_epi16(r.take(), r.take()),
    _mm_cmplt_epi32 => _mm_cmplt_epi32(r.take(), r.take()),
    _mm_cvtepi32_pd => _mm_cvtepi32_pd(r.take()),
    _mm_cvtsi32_sd => _mm_cvtsi32_sd(r.take(), r.take()),
    _mm_cvtepi32_ps => _mm_cvtepi32_ps(r.take()),
    _mm_cvtps_epi32 => _mm_cvtps_epi32(r.take()),
    _mm_cvtsi32_si128 => _mm_cvtsi32_si128(r.take()),
    _mm_cvtsi128_si32 => _mm_cvtsi128_si32(r.take()),
    _mm_set_epi64x => _mm_set_epi64x(r.take(), r.take()),
    _mm_set_epi32 => _mm_set_epi32(r.take(), r.take(), r.take(), r.take()),
    _mm_set_epi16 => _mm_set_epi16(r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take()),
    _mm_set_epi8 => _mm_set_epi8(r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take()),
    _mm_set1_epi64x => _mm_set1_epi64x(r.take()),
    _mm_set1_epi32 => _mm_set1_epi32(r.take()),
    _mm_set1_epi16 => _mm_set1_epi16(r.take()),
    _mm_set1_epi8 => _mm_set1_epi8(r.take()),
    _mm_setr_epi32 => _mm_setr_epi32(r.take(), r.take(), r.take(), r.take()),
    _mm_setr_epi16 => _mm_setr_epi16(r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take()),
    _mm_setr_epi8 => _mm_setr_epi8(r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take(), r.take()),
    _mm_setzero_si128 => _mm_setzero_si128(),
    _mm_loadl_epi64 => _mm_loadl_epi64(r.take()),
    _mm_load_si128 => _mm_load_si128(r.take()),
    _mm_loadu_si128 => _mm_loadu_si128(r.take()),
    _mm_maskmoveu_si128 => _mm_maskmoveu_si128(r.take(), r.take(), r.take()),
    _mm_store_si128 => _mm_store_si128(r.take(), r.take()),
    _mm_storeu_si128 => _mm_storeu_si128(r.take(), r.take()),
    _mm_storel_epi64 => _mm_storel_epi64(r.take(), r.take()),
    _mm_stream_si128 => _mm_stream_si128(r.take(), r.take()),
    _mm_stream_si32 => _mm_stream_si32(r.take(), r.take()),
    _mm_move_epi64 => _mm_move_epi64(r.take()),
    _mm_packs_epi16 => _mm_packs_epi16(r.take(), r.take()),
    _mm_packs_epi32 => _mm_packs_epi32(r.take(), r.take()),
    _mm_packus_epi16 => _mm_packus_epi16(r.take(), r.take()),
    _mm_extract_epi16 => _mm_extract_epi16::<5>(r.take()),
    _mm_insert_epi16 => _mm_insert_epi16::<3>(r.take(), r.take()),
    _mm_movemask_epi8 => _mm_movemask_epi8(r.take()),
    _mm_shuffle_epi32 => _mm_shuffle_epi32::<0x4E>(r.take()),
    _mm_shufflehi_epi16 => _mm_shufflehi_epi16::<0x1B>(r.take()),
    _mm_shufflelo_epi16 => _mm_shufflelo_epi16::<0x93>(r.take()),
    _mm_unpackhi_epi8 => _mm_unpackhi_epi8(r.take(), r.take()),
    _mm_unpackhi_epi16 => _mm_unpackhi_epi16(r.take(), r.take()),
    _mm_unpackhi_epi32 => _mm_unpackhi_epi32(r.take(), r.take()),
    _mm_unpackhi_epi64 => _mm_unpackhi_epi64(r.take(), r.take()),
    _mm_unpacklo_epi8 => _mm_unpacklo_epi8(r.take(), r.take()),
    _mm_unpacklo_epi16 => _mm_unpacklo_epi16(r.take(), r.take()),
    _mm_unpacklo_epi32 => _mm_unpacklo_epi32(r.take(), r.take()),
    _mm_unpacklo_epi64 => _mm_unpacklo_epi64(r.take(), r.take()),
    _mm_add_sd => _mm_add_sd(r.take(), r.take()),
    _mm_add_pd => _mm_add_pd(r.take(), r.take()),
    _mm_div_sd => _mm_div_sd(r.take(), r.take()),
    _mm_div_pd => _mm_div_pd(r.take(), r.take()),
    _mm_max_sd => _mm_max_sd(r.take(), r.take()),
    _mm_max_pd => _mm_max_pd(r.take(), r.take()),
    _mm_min_sd => _mm_min_sd(r.take(), r.take()),
    _mm_min_pd => _mm_min_pd(r.take(), r.take()),
    _mm_mul_sd => _mm_mul_sd(r.take(), r.take()),
    _mm_mul_pd => _mm_mul_pd(r.take(), r.take()),
    _mm_sqrt_sd => _mm_sqrt_sd(r.take(), r.take()),
    _mm_sqrt_pd => _mm_sqrt_pd(r.take()),
    _mm_sub_sd => _mm_sub_sd(r.take(), r.take()),
    _mm_sub_pd => _mm_sub_pd(r.take(), r.take()),
    _mm_and_pd => _mm_and_pd(r.take(), r.take()),
    _mm_andnot_pd => _mm_andnot_pd(r.take(), r.take()),
    _mm_or_pd => _mm_or_pd(r.take(), r.take()),
    _mm_xor_pd => _mm_xor_pd(r.take(), r.take()),
    _mm_cmpeq_sd => _mm_cmpeq_sd(r.take(), r.take()),
    _mm_cmplt_sd => _mm_cmplt_sd(r.take(), r.take()),
    _mm_cmple_sd => _mm_cmple_sd(r.take(), r.take()),
    _mm_cmpgt_sd => _mm_cmpgt_sd(r.take(), r.take()),
    _mm_cmpge_sd => _mm_cmpge_sd(r.take(), r.take()),
    _mm_cmpord_sd => _mm_cmpord_sd(r.take(), r.take()),
    _mm_cmpunord_sd => _mm_cmpunord_sd(r.take(), r.take()),
    _mm_cmpneq_sd => _mm_cmpneq_sd(r.take(), r.take()),
    _mm_cmpnlt_sd => _mm_cmpnlt_sd(r.take(), r.take()),
    _mm_cmpnle_sd => _mm_cmpnle_sd(r.take(), r.take()),
    _mm_cmpngt_sd => _mm_cmpngt_sd(r.take(), r.take()),
    _mm_cmpnge_sd => _mm_cmpnge_sd(r.take(), r.take()),
    _mm_cmpeq_pd => _mm_cmpeq_pd(r.take(), r.take()),
    _mm_cmplt_pd => _mm_cmplt_pd(r.take(), r.take()),
    _mm_cmple_pd => _mm_cmple_pd(r.take(), r.take()),
    _mm_cmpgt_pd => _mm_cmpgt_pd(r.take(), r.take()),
    _mm_cmpge_pd => _mm_cmpge_pd(r.take(), r.take()),
    _mm_cmpord_pd => _mm_cmpord_pd(r.take(), r.take()),
    _mm_cmpunord_pd => _mm_cmpunord_pd(r.take(), r.take()),
    _mm_cmpneq_pd => _mm_cmpneq_pd(r.take(), r.take()),
    _mm_cmpnlt_pd => _mm_cmpnlt_pd(r.take(), r.take()),
    _mm_cmpnle_pd => _mm_cmpnle_pd(r.take(), r.take()),
    _mm_cmpngt_pd => _mm_cmpngt_pd(r.take(), r.take()),
    _mm_cmpnge_pd => _mm_cmpnge_pd(r.take(), r.take()),
    _mm_comieq_sd => _mm_comieq_sd(r.take(), r.take()),
    _mm_comilt_sd => _mm_comilt_sd(r.take(), r.take()),
    _mm_comile_sd => _mm_comile_sd(r.take(), r.take()),
    _mm_comigt_sd => _mm_comigt_sd(r.take(), r.take()),
    _mm_comige_sd => _mm_comige_sd(r.take(), r.take()),
    _mm_comineq_sd => _mm_comineq_sd(r.take(), r.take()),
    _mm_ucomieq_sd => _mm_ucomieq_sd(r.take(), r.take()),
    _mm_ucomilt_sd => _mm_ucomilt_sd(r.take(), r.take()),
    _mm_ucomile_sd => _mm_ucomile_sd(r.take(), r.take()),
    _mm_ucomigt_sd => _mm_ucomigt_sd(r.take(), r.take()),
    _mm_ucomige_sd => _mm_ucomige_sd(r.take(), r.take()),
    _mm_ucomineq_sd => _mm_ucomineq_sd(r.take(), r.take()),
    _mm_cvtpd_ps => _mm_cvtpd_ps(r.take()),
    _mm_cvtps_pd => _mm_cvtps_pd(r.take()),
    _mm_cvtpd_epi32 => _mm_cvtpd_epi32(r.take()),
    _mm_cvtsd_si32 => _mm_cvtsd_si32(r.take()),
    _mm_cvtsd_ss => _mm_cvtsd_ss(r.take(), r.take()),
    _mm_cvtsd_f64 => _mm_cvtsd_f64(r.take()),
    _mm_cvtss_sd => _mm_cvtss_sd(r.take(), r.take()),
    _mm_cvttpd_epi32 => _mm_cvttpd_epi32(r.take()),
    _mm_cvttsd_si32 => _mm_cvttsd_si32(r.take()),
    _mm_cvttps_epi32 => _mm_cvttps_epi32(r.take()),
    _mm_set_sd => _mm_set_sd(r.take()),
    _mm_set1_pd => _mm_set1_pd(r.take()),
    _mm_set_pd1 => _mm_set_pd1(r.take()),
    _mm_set_pd => _mm_set_pd(r.take(), r.take()),
    _mm_setr_pd => _mm_setr_pd(r.take(), r.take()),
    _mm_setzero_pd => _mm_setzero_pd(),
    _mm_movemask_pd => _mm_movemask_pd(r.take()),
    _mm_load_pd => _mm_load_pd(r.take()),
    _mm_load_sd => _mm_load_sd(r.take()),
    _mm_loadh_pd => _mm_loadh_pd(r.take(), r.take()),
    _mm_loadl_pd => _mm_loadl_pd(r.take(), r.take()),
    _mm_stream_pd => _mm_stream_pd(r.take(), r.take()),
    _mm_store_sd => _mm_store_sd(r.take(), r.take()),
    _mm_store_pd => _mm_store_pd(r.take(), r.take()),
    _mm_storeu_pd => _mm_storeu_pd(r.take(), r.take()),
    _mm_storeu_si16 => _mm_storeu_si16(r.take(), r.take()),
    _mm_storeu_si32 => _mm_storeu_si32(r.take(), r.take()),
    _mm_storeu_si64 => _mm_storeu_si64(r.take(), r.take()),
    _mm_store1_pd => _mm_store1_pd(r.take(), r.take()),
    _mm_store_pd1 => _mm_store_pd1(r.take(), r.take()),
    _mm_storer_pd => _mm_storer_pd(r.take(), r.take()),
    _mm_storeh_pd => _mm_storeh_pd(r.take(), r.take()),
    _mm_storel_pd => _mm_storel_pd(r.take(), r.take()),
    _mm_load1_pd => _mm_load1_pd(r.take()),
    _mm_load_pd1 => _mm_load_pd1(r.take()),
    _mm_loadr_pd => _mm_loadr_pd(r.take()),
    _mm_loadu_pd => _mm_loadu_pd(r.take()),
    _mm_loadu_si16 => _mm_loadu_si16(r.take()),
    _mm_loadu_si32 => _mm_loadu_si32(r.take()),
    _mm_loadu_si64 => _mm_loadu_si64(r.take()),
    _mm_shuffle_pd => _mm_shuffle_pd::<1>(r.take(), r.take()),
    _mm_move_sd => _mm_move_sd(r.take(), r.take()),
    _mm_castpd_ps => _mm_castpd_ps(r.take()),
    _mm_castpd_si128 => _mm_castpd_si128(r.take()),
    _mm_castps_pd => _mm_castps_pd(r.take()),
    _mm_castps_si128 => _mm_castps_si128(r.take()),
    _mm_castsi128_pd => _mm_castsi128_pd(r.take()),
    _mm_castsi128_ps => _mm_castsi128_ps(r.take()),
    _mm_undefined_pd => _mm_undefined_pd(),
    _mm_undefined_si128 => _mm_undefined_si128(),
    _mm_unpackhi_pd => _mm_unpackhi_pd(r.take(), r.take()),
    _mm_unpacklo_pd => _mm_unpacklo_pd(r.take(), r.take()),
    _mm_cvtss_si64 => _mm_cvtss_si64(r.take()),
    _mm_cvttss_si64 => _mm_cvttss_si64(r.take()),
    _mm_cvtsi64_ss => _mm_cvtsi64_ss(r.take(), r.take()),
    _mm_cvtsd_si64 => _mm_cvtsd_si64(r.take()),
    _mm_cvtsd_si64x => _mm_cvtsd_si64x(r.take()),
    _mm_cvttsd_si64 => _mm_cvttsd_si64(r.take()),
    _mm_cvttsd_si64x => _mm_cvttsd_si64x(r.take()),
    _mm_stream_si64 => _mm_stream_si64(r.take(), r.take()),
    _mm_cvtsi64_si128 => _mm_cvtsi64_si128(r.take()),
    _mm_cvtsi64x_si128 => _mm_cvtsi64x_si128(r.take()),
    _mm_cvtsi128_si64 => _mm_cvtsi128_si64(r.take()),
    _mm_cvtsi128_si64x => _mm_cvtsi128_si64x(r.take()),
    _mm_cvtsi64_sd => _mm_cvtsi64_sd(r.take(), r.take()),
    _mm_cvtsi64x_sd => _mm_cvtsi64x_sd(r.take(), r.take()),
}
