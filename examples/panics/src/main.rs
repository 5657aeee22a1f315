//! Panics in device code reach the host with their message, formatted arguments,
//! `file:line:column`, and the block and thread that panicked.
//!
//! Each case is a function in [`cases`] that panics in one way (`panic!` with integer, float,
//! `bool`, `char` and `&str` arguments, `assert_eq!`, `assert_ne!`, `unwrap` on `None` and on
//! `Err`, `expect`, an index or a slice range out of bounds, an addition overflow, an index out
//! of bounds after hundreds of checks that pass, a division by zero). The kernel runs it in
//! exactly one thread, block 3 thread 17 of an 8 x 64 launch, with inputs read from device
//! memory; every other thread writes its index. The same function
//! is run on the CPU with the same inputs, and the launch's `Err` must be a
//! `Error::KernelPanic` whose message and location equal the CPU panic's (captured by a panic
//! hook), and whose coordinates are that thread's. A panic breaks the CUDA context, so each
//! case runs in a process of its own (this program again, with `--case NAME`).
//!
//! A release build (`--release`) has no overflow checks, and by default records the messages
//! of explicit panics only (`panic!`, `assert!`, `unwrap`, `expect`, a slice range out of
//! bounds): those cases must report the same message, location and thread as in a dev build,
//! while a failed check (an index out of bounds, a division by zero) must stop the kernel with a
//! fault (a bare trap, or a failed check that faults at the access it guards:
//! `llvm_export::faulting_checks`), and the addition that does not overflow-check on the CPU
//! must not stop it on the GPU either.

use std::process::{Command, ExitCode};
use std::sync::{Arc, Mutex};

use cuda_host::{Error, LaunchConfig, cuda_module, synchronize};
use example_support::{gpu, verdict};

/// The functions that panic, shared by the kernel and the CPU reference. Each takes its inputs
/// from `data`, whose values only the host knows, so nothing is decided at compile time.
pub mod cases {
    /// `panic!` with an integer, a float with a precision, a `bool`, a `char` and a `&str`.
    pub fn panic_args(data: &[u32]) -> u32 {
        let names = ["alpha", "beta", "gamma"];
        let value = data[0] as i32 - 100;
        let x = data[1] as f32 / 4.0;
        let flag = data[2] > 3;
        let c = char::from_u32(data[3]).unwrap_or('?');
        let name = names[data[4] as usize % 3];
        panic!(
            "bad value {value} at x={x:.2}, flag={flag}, c={c:?}, name={name}, hex={:#x}",
            data[5]
        )
    }

    /// `assert_eq!` with a message of its own.
    pub fn assert_eq_msg(data: &[u32]) -> u32 {
        let (a, b) = (data[0] + data[1], data[2]);
        assert_eq!(a, b, "sums differ for row {}", data[3]);
        a
    }

    /// `assert_ne!` of two `i64`s.
    pub fn assert_ne(data: &[u32]) -> u32 {
        let (a, b) = (-(data[0] as i64), -(data[0] as i64));
        assert_ne!(a, b);
        0
    }

    /// `unwrap()` on `None`.
    pub fn unwrap_none(data: &[u32]) -> u32 {
        data.iter().position(|&v| v == 0xFFFF_FFFF).unwrap() as u32
    }

    /// `unwrap()` on an `Err` holding an `i32`.
    pub fn unwrap_err(data: &[u32]) -> u32 {
        let parsed: Result<u32, i32> = if data[0] > 10 {
            Err(-(data[0] as i32))
        } else {
            Ok(data[0])
        };
        parsed.unwrap()
    }

    /// `expect()` on `None`.
    pub fn expect_none(data: &[u32]) -> u32 {
        let found = data.iter().find(|&&v| v == 0xFFFF_FFFF);
        *found.expect("the table has an entry for every thread")
    }

    /// An index past the end.
    pub fn index(data: &[u32]) -> u32 {
        let i = data[0] as usize;
        data[i]
    }

    /// A slice range past the end.
    pub fn slice(data: &[u32]) -> u32 {
        let end = data[1] as usize;
        data[2..end].iter().sum()
    }

    /// `u8` addition that overflows (a debug build checks overflow).
    pub fn add_overflow(data: &[u32]) -> u32 {
        let a = data[0] as u8;
        let b = data[1] as u8;
        (a + b) as u32
    }

    /// Division by zero.
    pub fn divide_by_zero(data: &[u32]) -> u32 {
        data[0] / data[1]
    }

    /// Two hundred steps of one index and one checked addition each.
    macro_rules! two_hundred_steps {
        ($acc:ident, $data:ident) => {
            two_hundred_steps!(@ten @ten $acc, $data; $acc = ($acc + $data[($acc % 4) as usize]) / 2 + 1;)
        };
        (@ten @ten $acc:ident, $data:ident; $($step:tt)*) => {
            two_hundred_steps!(@ten $acc, $data; $($step)* $($step)* $($step)* $($step)* $($step)*
                $($step)* $($step)* $($step)* $($step)* $($step)*)
        };
        (@ten $acc:ident, $data:ident; $($step:tt)*) => {
            $($step)* $($step)* $($step)* $($step)* $($step)* $($step)* $($step)* $($step)*
            $($step)* $($step)* $($step)* $($step)* $($step)* $($step)* $($step)* $($step)*
            $($step)* $($step)* $($step)* $($step)*
        };
    }

    /// An index past the end after hundreds of checks that pass: a function with more than
    /// 256 checks shares one failure block per panic function (mir-importer's `panic.rs`),
    /// and the failure must still name this line.
    pub fn many_checks(data: &[u32]) -> u32 {
        let mut acc = data[1];
        two_hundred_steps!(acc, data);
        acc + data[data[0] as usize]
    }

    /// Every case, by number: the kernel's `case` argument.
    pub fn run(case: u32, data: &[u32]) -> u32 {
        match case {
            0 => panic_args(data),
            1 => assert_eq_msg(data),
            2 => assert_ne(data),
            3 => unwrap_none(data),
            4 => unwrap_err(data),
            5 => expect_none(data),
            6 => index(data),
            7 => slice(data),
            8 => add_overflow(data),
            9 => many_checks(data),
            _ => divide_by_zero(data),
        }
    }
}

/// The cases: name, and the inputs that make it panic.
const CASES: &[(&str, &[u32])] = &[
    ("panic_args", &[142, 6, 7, 'Q' as u32, 4, 0xBEEF]),
    ("assert_eq", &[20, 22, 41, 9]),
    ("assert_ne", &[123_456_789]),
    ("unwrap_none", &[1, 2, 3]),
    ("unwrap_err", &[17, 2]),
    ("expect_none", &[4, 5, 6]),
    ("index", &[9, 1, 2, 3]),
    ("slice", &[0, 12, 5, 6]),
    ("add_overflow", &[200, 100]),
    ("many_checks", &[9, 3, 5, 7]),
    ("divide_by_zero", &[7, 0]),
];

/// The cases that panic through a failed check (`Assert` in MIR) rather than an explicit
/// panic: in a release build only these stop the kernel without a message.
const CHECKS: &[&str] = &["index", "many_checks", "divide_by_zero", "add_overflow"];

/// The block and thread that run the case.
const PANIC_BLOCK: u32 = 3;
const PANIC_THREAD: u32 = 17;
const BLOCKS: u32 = 8;
const THREADS: u32 = 64;

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    /// Block `block`, thread `lane` runs case `case` on `data`; every other thread writes its
    /// global index.
    #[kernel]
    pub fn run_case(case: u32, block: u32, lane: u32, data: &[u32], mut out: DisjointSlice<u32>) {
        let i = thread::index_1d();
        let value = if thread::blockIdx_x() == block && thread::threadIdx_x() == lane {
            crate::cases::run(case, data)
        } else {
            i.get() as u32
        };
        if let Some(slot) = out.get_mut(i) {
            *slot = value;
        }
    }
}

/// The argument that makes this program run one case.
const CASE: &str = "--case";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some(CASE) {
        let name = args.get(2).cloned().unwrap_or_default();
        return run_one(&name);
    }
    if args.get(1).map(String::as_str) == Some("--cpu") {
        // What each case says on the CPU (what the GPU runs are compared with).
        for (case, (name, data)) in CASES.iter().enumerate() {
            match cpu_panic(case as u32, data) {
                Some((message, file, line, column)) => {
                    println!("{name}: panicked at {file}:{line}:{column}:\n{message}")
                }
                None => println!("{name}: no panic"),
            }
        }
        return ExitCode::SUCCESS;
    }
    // Fail early, with the usual message, when there is no GPU.
    if let Err(code) = gpu("panics") {
        return code;
    }
    let mut all_ok = true;
    for (name, _) in CASES {
        let child =
            std::env::current_exe().and_then(|exe| Command::new(exe).args([CASE, name]).output());
        match child {
            Ok(output) => {
                print!("{}", String::from_utf8_lossy(&output.stdout));
                eprint!("{}", String::from_utf8_lossy(&output.stderr));
                all_ok &= output.status.success();
            }
            Err(error) => {
                println!("FAIL {name}: could not start its process: {error}");
                all_ok = false;
            }
        }
    }
    verdict("panics", all_ok)
}

/// A panic seen on the CPU: message, file, line, column.
type CpuPanic = (String, String, u32, u32);

/// What the CPU says when case `case` panics.
fn cpu_panic(case: u32, data: &[u32]) -> Option<CpuPanic> {
    let seen: Arc<Mutex<Option<CpuPanic>>> = Arc::default();
    let hook_seen = Arc::clone(&seen);
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info.payload_as_str().map(str::to_owned).unwrap_or_default();
        let location = info
            .location()
            .map(|l| (l.file().to_owned(), l.line(), l.column()));
        if let Some((file, line, column)) = location {
            *hook_seen.lock().unwrap() = Some((message, file, line, column));
        }
    }));
    let result = std::panic::catch_unwind(|| cases::run(case, data));
    std::panic::set_hook(previous);
    let seen = seen.lock().unwrap().clone();
    result.is_err().then_some(seen).flatten()
}

/// Runs case `name` on the GPU and compares its panic with the CPU's.
fn run_one(name: &str) -> ExitCode {
    let Some(case) = CASES.iter().position(|(n, _)| *n == name) else {
        println!("FAIL unknown case `{name}`");
        return ExitCode::FAILURE;
    };
    let data = CASES[case].1;
    let cpu = cpu_panic(case as u32, data);
    if cpu.is_none() && cfg!(debug_assertions) {
        println!("FAIL {name}: the case does not panic on the CPU");
        return ExitCode::FAILURE;
    }
    let gpu = match gpu("panics") {
        Ok(gpu) => gpu,
        Err(code) => return code,
    };
    let outcome = (|| -> Result<(), Error> {
        let module = kernels::load(&gpu.ctx)?;
        let input = gpu.stream.clone_htod(data)?;
        let n = (BLOCKS * THREADS) as usize;
        let mut out = gpu.stream.alloc_zeros::<u32>(n)?;
        let cfg = LaunchConfig {
            grid_dim: (BLOCKS, 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        module.run_case(
            &gpu.stream,
            cfg,
            case as u32,
            PANIC_BLOCK,
            PANIC_THREAD,
            &input,
            &mut out,
        )?;
        synchronize(&gpu.stream)
    })();
    // Panic messages are the dev profile's default and off by default with `--release`.
    let ok = match (&outcome, cpu) {
        (Ok(()), None) => {
            println!("ok   {name}: no panic on the CPU in this profile, none on the GPU");
            true
        }
        (Err(Error::KernelFault { kernel, .. }), Some(_))
            if !cfg!(debug_assertions) && CHECKS.contains(&name) =>
        {
            let ok = *kernel == "run_case";
            println!(
                "{} {name}: the kernel stopped with a fault (a release build: no panic messages)",
                if ok { "ok  " } else { "FAIL" }
            );
            ok
        }
        (_, None) => {
            println!("FAIL {name}: no panic on the CPU, but on the GPU: {outcome:?}");
            false
        }
        (
            Err(
                error @ Error::KernelPanic {
                    kernel,
                    in_flight,
                    panic,
                    ..
                },
            ),
            Some((message, file, line, column)),
        ) => {
            let text = error.to_string();
            let location = format!("{file}:{line}:{column}");
            let coordinates = format!("block ({PANIC_BLOCK}, 0, 0), thread ({PANIC_THREAD}, 0, 0)");
            let checks = [
                ("kernel", *kernel == "run_case" && in_flight.is_empty()),
                (
                    "message",
                    panic.message == message && text.contains(&message),
                ),
                (
                    "location",
                    (panic.file.as_str(), panic.line, panic.column)
                        == (file.as_str(), line, column)
                        && text.contains(&location),
                ),
                (
                    "thread",
                    panic.block == (PANIC_BLOCK, 0, 0)
                        && panic.thread == (PANIC_THREAD, 0, 0)
                        && text.contains(&coordinates),
                ),
            ];
            let failed: Vec<&str> = checks
                .iter()
                .filter(|(_, ok)| !ok)
                .map(|(what, _)| *what)
                .collect();
            if failed.is_empty() {
                println!(
                    "ok   {name}: {}",
                    text.lines().take(2).collect::<Vec<_>>().join(" | ")
                );
                true
            } else {
                println!(
                    "FAIL {name}: wrong {}\n     GPU: {text}\n     CPU: panicked at {location}:\n{message}",
                    failed.join(", ")
                );
                false
            }
        }
        (Err(other), _) => {
            println!("FAIL {name}: expected a panic of `run_case`, got: {other}");
            false
        }
        (Ok(()), Some(_)) => {
            println!("FAIL {name}: the launch reported success");
            false
        }
    };
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
