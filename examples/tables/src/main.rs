//! Constants and statics in device memory: `const` and `static` lookup tables used by reference,
//! byte strings, string literals, nested references (`&[&[u32]]`), an enum compared with a
//! constant, and a `static mut` counter that survives from one launch to the next.

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

/// The primes below 100.
pub const PRIMES: [u32; 25] = [
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97,
];

/// Squares, as a `static` (one copy in device memory).
pub static SQUARES: [u16; 16] = [
    0, 1, 4, 9, 16, 25, 36, 49, 64, 81, 100, 121, 144, 169, 196, 225,
];

/// String literals.
pub const WORDS: [&str; 6] = ["zero", "one", "two", "three", "four", "five"];

/// A static slice of string literals.
pub static GREEK: &[&str] = &["alpha", "beta", "gamma", "delta", "épsilon", "zeta", "eta"];

/// A byte string.
pub const DIGITS: &[u8] = b"0123456789abcdef";

/// Nested references.
pub static NESTED: &[&[u32]] = &[&[1, 2, 3], &[], &[10, 20], &[7], &[5, 5, 5, 5, 5]];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Color {
    Red,
    Green,
    Blue,
    Custom(u8),
}

/// The colour the tests look for.
pub const FAVOURITE: Color = Color::Custom(7);

/// A table of enum values.
pub static PALETTE: [Color; 5] = [
    Color::Red,
    Color::Green,
    Color::Blue,
    Color::Custom(7),
    Color::Custom(9),
];

/// Table lookup `op` for the input `x`.
pub fn lookup(op: u32, x: u32) -> u32 {
    let i = x as usize;
    match op {
        0 => PRIMES[i % PRIMES.len()],
        1 => {
            let prime = &PRIMES[i % 25];
            *prime * 2 + 1
        }
        2 => {
            let mut below = 0;
            for &p in PRIMES.iter() {
                if p < x % 100 {
                    below += 1;
                }
            }
            below
        }
        3 => {
            let mut total = 0u32;
            for s in SQUARES.iter() {
                total += *s as u32;
            }
            total + SQUARES[i % SQUARES.len()] as u32
        }
        4 => WORDS[i % WORDS.len()].len() as u32,
        5 => {
            let word = GREEK[i % GREEK.len()];
            let mut count = 0;
            for &b in word.as_bytes() {
                if b == b'a' || b >= 0x80 {
                    count += 1;
                }
            }
            count * 16 + word.len() as u32
        }
        6 => DIGITS[i % DIGITS.len()] as u32,
        7 => {
            let row = NESTED[i % NESTED.len()];
            let mut total = row.len() as u32 * 1000;
            for v in row {
                total += v;
            }
            total
        }
        8 => {
            let color = PALETTE[i % PALETTE.len()];
            (color == FAVOURITE) as u32 + 2 * (color == Color::Blue) as u32
        }
        9 => b"hello, world"[i % 12] as u32,
        _ => {
            let text = "the quick brown fox";
            text.as_bytes()[i % text.len()] as u32 + text.len() as u32
        }
    }
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    #[kernel]
    pub fn lookups(op: u32, x: &[u32], mut out: DisjointSlice<u32>) {
        let i = thread::index_1d();
        if let Some(slot) = out.get_mut(i) {
            *slot = super::lookup(op, x[i.get()]);
        }
    }

    /// Thread 0 adds `by` to a counter that lives in device memory between launches, and
    /// reports its new value.
    #[kernel]
    pub fn bump(by: u32, mut out: DisjointSlice<u32>) {
        static mut COUNTER: u32 = 100;
        let i = thread::index_1d();
        if i.get() == 0
            && let Some(slot) = out.get_mut(i)
        {
            unsafe {
                COUNTER += by;
                *slot = COUNTER;
            }
        }
    }
}

const OPS: u32 = 11;

fn main() -> ExitCode {
    run_example("tables", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    const N: usize = 1 << 16;
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(7);
    let cfg = LaunchConfig::for_num_elems(N as u32);
    let mut ok = true;

    let x: Vec<u32> = rng.vec(N, |r| r.next_u64() as u32);
    let x_dev = gpu.stream.clone_htod(&x)?;
    let mut out = gpu.stream.alloc_zeros::<u32>(N)?;
    for op in 0..OPS {
        module.lookups(&gpu.stream, cfg, op, &x_dev, &mut out)?;
        let expected: Vec<u32> = x.iter().map(|&v| lookup(op, v)).collect();
        ok &= check(
            &format!("lookup {op}"),
            &gpu.stream.clone_dtoh(&out)?,
            &expected,
        );
    }

    let mut counter = gpu.stream.alloc_zeros::<u32>(1)?;
    let mut expected = 100;
    for by in [1, 20, 300] {
        module.bump(
            &gpu.stream,
            LaunchConfig::for_num_elems(1),
            by,
            &mut counter,
        )?;
        expected += by;
        ok &= check(
            &format!("static mut counter after adding {by}"),
            &gpu.stream.clone_dtoh(&counter)?,
            &[expected],
        );
    }
    Ok(ok)
}
