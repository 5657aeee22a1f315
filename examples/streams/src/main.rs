//! A pipeline over several streams with views: a large input is cut into chunks, and each
//! chunk is copied in, processed and copied out on one of the streams, so that the copies of
//! one chunk overlap the kernels of others. Events order a final kernel, which reads every
//! chunk's result, after all the streams' work, and time the whole on the GPU's clock; the
//! host waits for the end through a future. Results are checked against the CPU, for one
//! stream and for several (the timings of both are printed).
//!
//! Chunks of one buffer are views of it. cudarc's event tracking orders uses of a buffer as a
//! whole, which would make every chunk wait for the previous one whatever its stream: this
//! example turns the tracking off and orders the streams itself, with events, as CUDA
//! programs do.

use std::future::Future;
use std::pin::pin;
use std::process::ExitCode;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

use cuda_host::{CudaStream, Error, Event, LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

/// Elements in all.
const N: usize = 1 << 22;
/// Chunks the input is cut into.
const CHUNKS: usize = 16;
/// Rounds of mixing per element: enough work for the kernels to be worth overlapping with the
/// copies (which dominate: 16 MiB each way).
const ROUNDS: u32 = 256;

/// What the per-chunk kernel computes for one element.
pub fn process(x: u32, rounds: u32) -> u32 {
    let mut h = x;
    let mut r = 0;
    while r < rounds {
        h = (h ^ (h >> 16)).wrapping_mul(0x45d9_f3b5);
        h = h.wrapping_add(r);
        r += 1;
    }
    h
}

/// What the final kernel computes: element `i` combined with its mirror, which another chunk
/// (and stream) produced.
pub fn fold(a: u32, b: u32) -> u32 {
    a.rotate_left(5) ^ b
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    /// `y[i] = process(x[i], rounds)`, on one chunk (views of the whole buffers).
    #[kernel]
    pub fn process_chunk(x: &[u32], rounds: u32, mut y: DisjointSlice<u32>) {
        let i = thread::index_1d();
        if let Some(slot) = y.get_mut(i) {
            *slot = super::process(x[i.get()], rounds);
        }
    }

    /// `z[i] = fold(y[i], y[n - 1 - i])`: reads what every stream wrote.
    #[kernel]
    pub fn fold_mirror(y: &[u32], mut z: DisjointSlice<u32>) {
        let i = thread::index_1d();
        let n = y.len();
        if let Some(slot) = z.get_mut(i) {
            *slot = super::fold(y[i.get()], y[n - 1 - i.get()]);
        }
    }
}

fn main() -> ExitCode {
    run_example("streams", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    // SAFETY: from here on, every buffer is used across streams only after an event that
    // orders its earlier uses (see `pipeline`), and freed after a synchronisation.
    unsafe { gpu.ctx.disable_event_tracking() };
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(5);
    let input = rng.vec(N, |r| r.next_u64() as u32);
    let processed: Vec<u32> = input.iter().map(|&x| process(x, ROUNDS)).collect();
    let folded: Vec<u32> = (0..N)
        .map(|i| fold(processed[i], processed[N - 1 - i]))
        .collect();

    let mut ok = true;
    let mut times = Vec::new();
    for streams in [1, 4] {
        let (y, z, ms) = pipeline(gpu, &module, &input, streams)?;
        ok &= check(
            &format!("{CHUNKS} chunks processed on {streams} stream(s), copied out per chunk"),
            &y,
            &processed,
        );
        ok &= check(
            &format!("the final kernel after {streams} stream(s), ordered by events"),
            &z,
            &folded,
        );
        times.push((streams, ms));
    }
    let [(_, one), (streams, many)] = times[..] else {
        unreachable!("two configurations were timed")
    };
    println!(
        "ok   pipeline of {N} elements in {CHUNKS} chunks: {one:.3} ms on 1 stream, {many:.3} ms \
         on {streams} streams ({:.2}x)",
        one / many
    );
    Ok(ok)
}

/// Runs the pipeline on `streams` streams; the per-chunk results (as copied out chunk by
/// chunk), the final kernel's result, and the milliseconds from the first copy to the last.
fn pipeline(
    gpu: &Gpu,
    module: &kernels::Module,
    input: &[u32],
    streams: usize,
) -> Result<(Vec<u32>, Vec<u32>, f32), Error> {
    let ctx = &gpu.ctx;
    let lanes: Vec<Arc<CudaStream>> = (0..streams)
        .map(|_| ctx.new_stream())
        .collect::<Result<_, _>>()?;
    let first = &lanes[0];
    // Pinned host memory, so that copies are asynchronous and can overlap kernels.
    // SAFETY: the input is written before any copy reads it; the outputs are written by the
    // copies before the host reads them (after the synchronisation below).
    let (mut host_in, mut host_y, mut host_z) = unsafe {
        (
            ctx.alloc_pinned_with_flags::<u32>(N, 0)?,
            ctx.alloc_pinned_with_flags::<u32>(N, 0)?,
            ctx.alloc_pinned_with_flags::<u32>(N, 0)?,
        )
    };
    host_in.as_mut_slice()?.copy_from_slice(input);
    let mut x = first.alloc_zeros::<u32>(N)?;
    let mut y = first.alloc_zeros::<u32>(N)?;
    let mut z = first.alloc_zeros::<u32>(N)?;

    // Every stream starts after the allocations, at the start mark.
    let start = Event::timing(ctx)?;
    start.record(first)?;
    for lane in &lanes[1..] {
        start.wait_in(lane)?;
    }

    let chunk = N / CHUNKS;
    let cfg = LaunchConfig::for_num_elems(chunk as u32);
    let host_in = host_in.as_slice()?;
    let host_y_all = host_y.as_mut_slice()?;
    for (c, host_y) in host_y_all.chunks_mut(chunk).enumerate() {
        let lane = &lanes[c % streams];
        let range = c * chunk..(c + 1) * chunk;
        lane.memcpy_htod(&host_in[range.clone()], &mut x.slice_mut(range.clone()))?;
        module.process_chunk(
            lane,
            cfg,
            &x.slice(range.clone()),
            ROUNDS,
            &mut y.slice_mut(range.clone()),
        )?;
        lane.memcpy_dtoh(&y.slice(range), host_y)?;
    }

    // The final kernel reads every chunk: the first stream waits for all the others.
    let done: Vec<Event> = lanes[1..]
        .iter()
        .map(|lane| {
            let event = Event::new(ctx)?;
            event.record(lane)?;
            Ok(event)
        })
        .collect::<Result<_, Error>>()?;
    for event in &done {
        event.wait_in(first)?;
    }
    module.fold_mirror(first, LaunchConfig::for_num_elems(N as u32), &y, &mut z)?;
    first.memcpy_dtoh(&z, host_z.as_mut_slice()?)?;
    let end = Event::timing(ctx)?;
    end.record(first)?;

    // The host waits for the end through the completion future (as async code would await it).
    block_on(cuda_host::completion(first)?)?;
    let ms = start.elapsed_ms(&end)?;
    for lane in &lanes {
        cuda_host::synchronize(lane)?;
    }
    let y_out = host_y.as_slice()?.to_vec();
    let z_out = host_z.as_slice()?.to_vec();
    Ok((y_out, z_out, ms))
}

/// Polls `future` on this thread until it completes, parking between wake-ups: the smallest
/// executor, enough to show that the completion wakes its task.
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}
