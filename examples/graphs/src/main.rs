//! CUDA graphs of typed launches: a chain of small kernels recorded once and replayed with one
//! driver call, checked against the CPU and timed against the same launches made one by one
//! (CUDA events, median of several rounds). Also: a parameter change that the driver applies
//! to the instantiated graph in place, a change of the sequence that needs a new instantiation,
//! copies from and to pinned host memory inside a graph with new inputs between replays, and
//! the refusal of a recording that uses a buffer the graph does not own.

use std::process::ExitCode;

use cuda_host::timing::{EventTimer, median};
use cuda_host::{
    Capture, CudaSlice, Error, Graph, GraphError, LaunchConfig, PinnedHostSlice, Update,
    cuda_module,
};
use example_support::{Gpu, Rng, check, run_example};

/// Elements per kernel: small, so that launching costs more than running, which is what
/// graphs save.
const N: usize = 4096;
/// Launches per replay.
const STEPS: u32 = 20;
/// Replays (or rounds of plain launches) per timed sample.
const REPS: u32 = 50;
/// Timed samples of each; the median is printed.
const ROUNDS: usize = 7;

/// One step of the chain: mixes the element with the step's parameter.
pub fn mix(x: u32, k: u32) -> u32 {
    let x = (x ^ (x >> 15)).wrapping_mul(0x2c1b_3c6d);
    (x ^ (x >> 12)).wrapping_add(k)
}

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, thread};

    /// `dst[i] = mix(src[i], k)`.
    #[kernel]
    pub fn step(src: &[u32], k: u32, mut dst: DisjointSlice<u32>) {
        let i = thread::index_1d();
        if let Some(slot) = dst.get_mut(i) {
            *slot = super::mix(src[i.get()], k);
        }
    }
}

/// The chain on the CPU: `steps` steps with parameters `seed`, `seed + 1`, ..., `rounds` times.
fn chain(data: &mut [u32], seed: u32, steps: u32, rounds: u32) {
    for _ in 0..rounds {
        for j in 0..steps {
            let k = seed.wrapping_add(j);
            data.iter_mut().for_each(|x| *x = mix(*x, k));
        }
    }
}

/// The state of the chain's graph: two buffers it ping-pongs between, the first step's
/// parameter, and the number of steps (even: the result ends in the first buffer).
type Chain = (CudaSlice<u32>, CudaSlice<u32>, u32, u32);

/// Queues the chain on `stream`: the same launches, recorded into a graph or made one by one.
fn queue_chain(
    module: &kernels::Module,
    stream: &cuda_host::CudaStream,
    (a, b, seed, steps): &mut Chain,
) -> Result<(), Error> {
    let cfg = LaunchConfig::for_num_elems(a.len() as u32);
    for j in 0..*steps {
        let k = seed.wrapping_add(j);
        if j % 2 == 0 {
            module.step(stream, cfg, &*a, k, b)?;
        } else {
            module.step(stream, cfg, &*b, k, a)?;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    run_example("graphs", run)
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    // The legacy default stream cannot be captured.
    let stream = gpu.ctx.new_stream()?;
    let mut rng = Rng::new(11);
    let mut ok = true;

    let input = rng.vec(N, |r| r.next_u64() as u32);
    let seed = 0x1234_5678;
    let chain_state = |stream: &std::sync::Arc<cuda_host::CudaStream>| -> Result<Chain, Error> {
        Ok((
            stream.clone_htod(&input)?,
            stream.alloc_zeros(N)?,
            seed,
            STEPS,
        ))
    };

    // Record once; nothing runs until the first replay.
    let mut graph = Graph::capture(
        &stream,
        chain_state(&stream)?,
        |capture: &Capture<'_>, state| queue_chain(&module, capture.stream(), state),
    )?;
    println!(
        "ok   recorded {} launches of {:?} into one graph",
        graph.len(),
        graph.kernels().first()
    );
    graph.launch()?;
    let mut expected = input.clone();
    chain(&mut expected, seed, STEPS, 1);
    ok &= check(
        "one replay runs the 20 recorded launches",
        &stream.clone_dtoh(&graph.state().0)?,
        &expected,
    );

    // The same launches one by one, on buffers of their own.
    let mut plain = chain_state(&stream)?;
    queue_chain(&module, &stream, &mut plain)?;

    // Timing: replays against plain launches, interleaved, median of the rounds.
    let timer = EventTimer::new(&gpu.ctx)?;
    let (mut replay_ms, mut plain_ms) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        replay_ms.push(timer.time(&stream, REPS, || graph.launch())?);
        plain_ms.push(timer.time(&stream, REPS, || queue_chain(&module, &stream, &mut plain))?);
    }
    let per_launch_us = |ms: &[f64]| median(ms).unwrap_or(f64::NAN) * 1000.0 / f64::from(STEPS);
    let (replay_us, plain_us) = (per_launch_us(&replay_ms), per_launch_us(&plain_ms));
    println!(
        "ok   per launch of `step` ({N} elements, {STEPS} per replay, median of {ROUNDS} \
         rounds of {REPS}): graph replay {replay_us:.2} us, plain launches {plain_us:.2} us \
         ({:.1}x)",
        plain_us / replay_us
    );
    let runs = 1 + ROUNDS as u32 * REPS;
    let mut expected = input.clone();
    chain(&mut expected, seed, STEPS, runs);
    ok &= check(
        "after all replays, the graph's result is the CPU's",
        &stream.clone_dtoh(&graph.state().0)?,
        &expected,
    );
    ok &= check(
        "after all rounds, the plain launches' result is the CPU's",
        &stream.clone_dtoh(&plain.0)?,
        &expected,
    );

    // A new parameter: the driver updates the instantiated graph in place.
    let seed2 = 0xdead_0000;
    graph.state_mut().2 = seed2;
    let update = graph.update()?;
    ok &= report(
        "a changed kernel parameter updates the graph in place",
        update == Update::InPlace,
        &format!("{update:?}"),
    );
    graph.launch()?;
    chain(&mut expected, seed2, STEPS, 1);
    ok &= check(
        "a replay after the update uses the new parameter",
        &stream.clone_dtoh(&graph.state().0)?,
        &expected,
    );

    // Two more launches: a new sequence, which the graph is instantiated anew for.
    graph.state_mut().3 = STEPS + 2;
    let update = graph.update()?;
    ok &= report(
        "a longer sequence is instantiated anew",
        matches!(update, Update::Reinstantiated { .. }),
        &format!("{update:?}"),
    );
    graph.launch()?;
    chain(&mut expected, seed2, STEPS + 2, 1);
    ok &= check(
        "a replay after re-instantiation runs the longer sequence",
        &stream.clone_dtoh(&graph.state().0)?,
        &expected,
    );

    ok &= copies_in_a_graph(gpu, &module, &stream, &mut rng)?;
    ok &= foreign_buffers_are_refused(&module, &stream)?;

    // The first graph still replays after the refused recording.
    graph.launch()?;
    chain(&mut expected, seed2, STEPS + 2, 1);
    ok &= check(
        "the stream and graph work after the refusal",
        &stream.clone_dtoh(&graph.state().0)?,
        &expected,
    );
    Ok(ok)
}

/// Copies from pinned host memory in, a kernel, copies out: new inputs written between
/// replays without recording again.
fn copies_in_a_graph(
    gpu: &Gpu,
    module: &kernels::Module,
    stream: &std::sync::Arc<cuda_host::CudaStream>,
    rng: &mut Rng,
) -> Result<bool, Box<dyn std::error::Error>> {
    let k = 77;
    // SAFETY: both pinned buffers are written (the input by the host, the output by the
    // graph's copy) before they are read.
    let (host_in, host_out): (PinnedHostSlice<u32>, PinnedHostSlice<u32>) = unsafe {
        (
            gpu.ctx.alloc_pinned_with_flags(N, 0)?,
            gpu.ctx.alloc_pinned_with_flags(N, 0)?,
        )
    };
    let state = (
        host_in,
        stream.alloc_zeros::<u32>(N)?,
        stream.alloc_zeros::<u32>(N)?,
        host_out,
        k,
    );
    let cfg = LaunchConfig::for_num_elems(N as u32);
    let mut graph = Graph::capture(stream, state, |capture, (host_in, x, y, host_out, k)| {
        capture.copy_from_host(host_in, x)?;
        module.step(capture.stream(), cfg, &*x, *k, y)?;
        capture.copy_to_host(&*y, host_out)
    })?;
    let mut ok = true;
    for round in 0..3 {
        let input = rng.vec(N, |r| r.next_u64() as u32);
        graph
            .buffers_mut()
            .0
            .as_mut_slice()
            .map_err(Error::from)?
            .copy_from_slice(&input);
        graph.launch()?;
        let mut expected = input;
        chain(&mut expected, k, 1, 1);
        let got = graph.state().3.as_slice().map_err(Error::from)?.to_vec();
        ok &= check(
            &format!("graph with copies in and out, input {round} written between replays"),
            &got,
            &expected,
        );
    }
    Ok(ok)
}

/// A recording that reads a buffer outside the graph's state is refused: the graph could
/// outlive it.
fn foreign_buffers_are_refused(
    module: &kernels::Module,
    stream: &std::sync::Arc<cuda_host::CudaStream>,
) -> Result<bool, Box<dyn std::error::Error>> {
    let outside = stream.alloc_zeros::<u32>(N)?;
    let cfg = LaunchConfig::for_num_elems(N as u32);
    let refused = Graph::capture(stream, (stream.alloc_zeros::<u32>(N)?,), |capture, (y,)| {
        module.step(capture.stream(), cfg, &outside, 1, y)
    });
    Ok(match refused {
        Err(error @ Error::Graph(GraphError::NotInState { .. })) => {
            println!("ok   a recording that reads a buffer outside the graph's state: {error}");
            true
        }
        Err(other) => {
            println!("FAIL expected a refusal of the foreign buffer, got: {other}");
            false
        }
        Ok(_) => {
            println!("FAIL a recording that reads a buffer outside its state was accepted");
            false
        }
    })
}

/// Prints one verdict line.
fn report(what: &str, passed: bool, detail: &str) -> bool {
    if passed {
        println!("ok   {what} ({detail})");
    } else {
        println!("FAIL {what}: got {detail}");
    }
    passed
}
