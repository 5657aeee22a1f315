//! Formatting in kernels: `write!` into a fixed buffer, as `core::fmt` does it on the CPU.
//!
//! Each case of [`cases`] formats values read from device memory (integers in several bases
//! and widths, floats with precisions and exponents, `char`s, strings with padding, derived
//! `Debug` of a struct, an `Option` and an array, a width taken from an argument). Thread `t`
//! runs case `t % cases` on input `t / cases`, and the text must equal the CPU's byte for
//! byte. Code that formats keeps the formatting methods compiled; a panic message then finds
//! its arguments' descriptors in the module's table (`cuda_device::panic`), which the second
//! kernel checks: one thread formats, then panics with arguments, and the host's
//! `Error::KernelPanic` must carry the CPU's message.

use std::fmt::Write as _;
use std::process::ExitCode;

use cuda_host::{Error, LaunchConfig, cuda_module, synchronize};
use example_support::{Gpu, Rng, run_example};

/// Bytes of text each case may write (the first 4 bytes of its output hold the length).
const TEXT_BYTES: usize = 124;
/// Bytes of output per thread.
const OUTPUT_BYTES: usize = TEXT_BYTES + 4;
/// Random inputs per case.
const INPUTS: usize = 128;
/// Words of input per case.
const INPUT_WORDS: usize = 4;

/// The formatting cases, shared by the kernel and the CPU reference.
pub mod cases {
    use core::fmt::{self, Write};

    /// A `fmt::Write` into a fixed buffer that refuses what does not fit.
    pub struct Buffer<'a> {
        bytes: &'a mut [u8],
        len: usize,
    }

    impl<'a> Buffer<'a> {
        pub fn new(bytes: &'a mut [u8]) -> Self {
            Buffer { bytes, len: 0 }
        }

        pub fn written(&self) -> usize {
            self.len
        }
    }

    impl Write for Buffer<'_> {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            let end = self.len + s.len();
            if end > self.bytes.len() {
                return Err(fmt::Error);
            }
            self.bytes[self.len..end].copy_from_slice(s.as_bytes());
            self.len = end;
            Ok(())
        }
    }

    // Its fields are read by `Debug` only.
    #[allow(dead_code)]
    #[derive(Debug)]
    struct Pixel {
        x: u16,
        lit: bool,
        tag: char,
    }

    /// The case names, in [run]'s order.
    pub const NAMES: &[&str] = &[
        "integers",
        "bases",
        "padding",
        "chars_and_strings",
        "float_precision",
        "float_exponent",
        "float_shortest",
        "debug_struct",
        "debug_option_and_array",
        "width_from_argument",
    ];

    /// Formats case `case` of `input` into `out`; returns whether it fitted.
    pub fn run(case: usize, input: &[u32], out: &mut Buffer<'_>) -> bool {
        let [a, b, c, d] = [input[0], input[1], input[2], input[3]];
        let words = ["zero", "one", "two", "three", "four"];
        match case {
            0 => write!(
                out,
                "{} {} {}",
                a,
                a as i32,
                (a as i64) * -((b >> 2) as i64)
            ),
            1 => write!(
                out,
                "{:x} {:#X} {:o} {:#b} {:08x}",
                a,
                b,
                c & 0xFFF,
                d & 0xFF,
                a >> 8
            ),
            2 => write!(
                out,
                "[{:>8}] [{:<6}] [{:^7}] [{:+}] [{:05}]",
                a % 1000,
                b % 99,
                c % 10,
                a as i32 % 50,
                b % 300
            ),
            3 => write!(
                out,
                "{} {:?} {:>7}|{:<7}|{:?}",
                char::from_u32(0x41 + a % 26).unwrap_or('?'),
                char::from_u32(0x3b1 + b % 20).unwrap_or('?'),
                words[c as usize % 5],
                words[d as usize % 5],
                words[(a ^ d) as usize % 5]
            ),
            4 => write!(
                out,
                "{:.2} {:.5} {:8.3}",
                f32::from_bits(a) % 1e6,
                f64::from(b) / 7.0,
                (c as f32) / 1024.0
            ),
            5 => write!(
                out,
                "{:e} {:E} {:.3e}",
                f64::from_bits(((a as u64) << 32) | b as u64),
                c as f32 * 1.5e-20,
                d as f64 * 3.3e100
            ),
            6 => write!(
                out,
                "{} {} {:?}",
                f32::from_bits(a),
                f64::from(b) * 0.1,
                f32::from_bits(c) as f64
            ),
            7 => write!(
                out,
                "{:?}",
                Pixel {
                    x: a as u16,
                    lit: b & 1 == 1,
                    tag: char::from_u32(0x61 + c % 26).unwrap_or('?')
                }
            ),
            8 => write!(
                out,
                "{:?} {:?} {:?}",
                (a & 1 == 1).then_some(b as i16),
                [c as u16, (c >> 16) as u16, d as u16],
                (a as u8, b as i8)
            ),
            _ => write!(
                out,
                "[{:>1$}] [{2:.3$}]",
                a % 10_000,
                (b % 12) as usize,
                d as f64 / 3.0,
                (c % 6) as usize
            ),
        }
        .is_ok()
    }

    /// Formats into a buffer of its own, then panics with arguments: the panic message must
    /// find its descriptors in a module that formats. (A panic message shows values of
    /// compound types as `<T value>`, formatting or not: `cuda_device::panic`.)
    pub fn format_then_panic(input: &[u32]) -> u32 {
        let mut bytes = [0u8; 32];
        let mut out = Buffer::new(&mut bytes);
        let _ = write!(out, "{}", input[0]);
        let len = out.written();
        if input[1] > 10 {
            panic!(
                "formatted {len} bytes, then: value {} of {:?} {:?}, flag {}",
                input[1],
                input[2] as i16,
                char::from_u32(input[3]).unwrap_or('?'),
                input[0] & 1 == 0
            );
        }
        len as u32
    }
}

#[cuda_module]
mod kernels {
    use cuda_device::{kernel, thread};

    use crate::cases::{self, Buffer};
    use crate::{INPUT_WORDS, OUTPUT_BYTES};

    /// Thread `t` formats case `t % cases` of input `t / cases`: a `u32` length, then the text.
    #[kernel]
    pub fn format(inputs: &[u32], out: &mut [u8]) {
        let t = thread::index_1d().get();
        let n = cases::NAMES.len();
        let start = (t / n) * INPUT_WORDS;
        if start + INPUT_WORDS <= inputs.len() && (t + 1) * OUTPUT_BYTES <= out.len() {
            let output = &mut out[t * OUTPUT_BYTES..(t + 1) * OUTPUT_BYTES];
            let (length, text) = output.split_at_mut(4);
            let mut buffer = Buffer::new(text);
            let fitted = cases::run(t % n, &inputs[start..start + INPUT_WORDS], &mut buffer);
            let len = if fitted {
                buffer.written() as u32
            } else {
                u32::MAX
            };
            length.copy_from_slice(&len.to_le_bytes());
        }
    }

    /// Thread 0 runs [cases::format_then_panic] on `input`.
    #[kernel]
    pub fn panic_after_formatting(input: &[u32], out: &mut [u32]) {
        if thread::index_1d().get() == 0 {
            out[0] = cases::format_then_panic(input);
        }
    }
}

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some("--panic") {
        return run_example("formatting", panic_case);
    }
    let code = run_example("formatting", format_cases);
    if code != ExitCode::SUCCESS {
        return code;
    }
    // A panic breaks the CUDA context: the panic case runs in a process of its own.
    match std::env::current_exe()
        .and_then(|exe| std::process::Command::new(exe).arg("--panic").status())
    {
        Ok(status) if status.success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(error) => {
            println!("FAIL panic after formatting: could not start its process: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Random inputs, with the values formatting treats apart among them (zero, extremes,
/// float bits of infinities, NaN and subnormals).
fn inputs() -> Vec<u32> {
    let mut rng = Rng::new(61);
    let special = [
        0,
        1,
        u32::MAX,
        i32::MIN as u32,
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0x0000_0001,
        0x3f80_0000,
    ];
    let mut words = rng.vec(INPUTS * INPUT_WORDS, |r| r.next_u64() as u32);
    for (i, word) in words
        .iter_mut()
        .enumerate()
        .take(special.len() * INPUT_WORDS)
    {
        *word = special[(i / INPUT_WORDS + i) % special.len()];
    }
    words
}

fn format_cases(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    // `core::fmt` calls through `dyn Write` and recurses: `ptxas` cannot bound the stack.
    gpu.ctx.set_stack_size(16 * 1024)?;
    let module = kernels::load(&gpu.ctx)?;
    let stream = &gpu.stream;
    let inputs = inputs();
    let n = cases::NAMES.len();
    let threads = INPUTS * n;
    let inputs_dev = stream.clone_htod(&inputs)?;
    let mut out_dev = stream.alloc_zeros::<u8>(threads * OUTPUT_BYTES)?;
    let cfg = LaunchConfig {
        grid_dim: ((threads as u32).div_ceil(64), 1, 1),
        block_dim: (64, 1, 1),
        shared_mem_bytes: 0,
    };
    module.format(stream, cfg, &inputs_dev, &mut out_dev)?;
    synchronize(stream)?;
    let got = stream.clone_dtoh(&out_dev)?;
    let text = |output: &[u8]| -> String {
        let len = u32::from_le_bytes(output[..4].try_into().unwrap());
        match output.get(4..4 + len as usize) {
            Some(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            None => format!("<did not fit: {len}>"),
        }
    };
    let mut ok = true;
    for (case, name) in cases::NAMES.iter().enumerate() {
        let mut first_difference = None;
        for input in 0..INPUTS {
            let mut expected = [0u8; OUTPUT_BYTES];
            let (length, body) = expected.split_at_mut(4);
            let mut buffer = cases::Buffer::new(body);
            let fitted = cases::run(
                case,
                &inputs[input * INPUT_WORDS..][..INPUT_WORDS],
                &mut buffer,
            );
            let len = if fitted {
                buffer.written() as u32
            } else {
                u32::MAX
            };
            length.copy_from_slice(&len.to_le_bytes());
            let t = input * n + case;
            let gpu_text = text(&got[t * OUTPUT_BYTES..][..OUTPUT_BYTES]);
            let cpu_text = text(&expected);
            if gpu_text != cpu_text && first_difference.is_none() {
                first_difference = Some((input, gpu_text, cpu_text));
            }
        }
        let example = {
            let mut bytes = [0u8; TEXT_BYTES];
            let mut buffer = cases::Buffer::new(&mut bytes);
            cases::run(
                case,
                &inputs[INPUT_WORDS * 10..][..INPUT_WORDS],
                &mut buffer,
            );
            let len = buffer.written();
            String::from_utf8_lossy(&bytes[..len]).into_owned()
        };
        match first_difference {
            None => {
                println!("ok   {name}: {INPUTS} inputs as the CPU formats them (e.g. `{example}`)")
            }
            Some((input, gpu_text, cpu_text)) => {
                println!("FAIL {name}: input {input}: GPU `{gpu_text}`, CPU `{cpu_text}`");
                ok = false;
            }
        }
    }
    Ok(ok)
}

fn panic_case(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    gpu.ctx.set_stack_size(16 * 1024)?;
    let module = kernels::load(&gpu.ctx)?;
    let input = [1_234_567u32, 42, (-7i16) as u16 as u32, 'λ' as u32];
    let expected = {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let caught = std::panic::catch_unwind(|| cases::format_then_panic(&input));
        std::panic::set_hook(previous);
        match caught {
            Err(payload) => payload
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default(),
            Ok(_) => return Err("the panic case does not panic on the CPU".into()),
        }
    };
    let input_dev = gpu.stream.clone_htod(&input)?;
    let mut out = gpu.stream.alloc_zeros::<u32>(1)?;
    let one_warp = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    let outcome = module
        .panic_after_formatting(&gpu.stream, one_warp, &input_dev, &mut out)
        .and_then(|()| synchronize(&gpu.stream));
    let mut message = String::new();
    let ok = match &outcome {
        Err(Error::KernelPanic { panic, .. }) => {
            let _ = write!(message, "{}", panic.message);
            panic.message == expected
        }
        _ => false,
    };
    if ok {
        println!("ok   panic after formatting: the message is the CPU's (`{message}`)");
    } else {
        println!("FAIL panic after formatting: expected `{expected}`, got {outcome:?}");
    }
    Ok(ok)
}
