//! Warp and block collectives: votes (`all`, `any`, `uni`, `ballot`), matches, `redux.sync`
//! reductions, lane masks, `active_mask` inside a divergent branch, `elect_one`,
//! `syncthreads_count/and/or`, and the clocks. Every lane's result is compared with a CPU
//! model of the same warp or block.

use std::process::ExitCode;

use cuda_host::{LaunchConfig, cuda_module};
use example_support::{Gpu, Rng, check, run_example};

/// Threads per block.
const BLOCK: usize = 256;
/// Threads in all.
const N: usize = BLOCK * 512;
/// How many operations `collective` has.
const OPS: u32 = 24;

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel, sync, thread, time, warp};

    /// Operation `op` of the lane's `value` (see `super::expected` for what each computes).
    #[kernel]
    pub fn collective(op: u32, values: &[u32], mut out: DisjointSlice<u32>) {
        let i = thread::index_1d();
        let v = values[i.get()];
        let pred = v & 1 == 1;
        let lane = warp::lane_id();
        let result = match op {
            0 => warp::all(pred) as u32,
            1 => warp::any(pred) as u32,
            2 => warp::uni(pred) as u32,
            3 => warp::ballot(pred),
            4 => warp::match_any(v % 8),
            5 => warp::match_all(v % 8) as u32,
            6 => warp::reduce_add(v),
            7 => warp::reduce_min(v),
            8 => warp::reduce_max(v),
            9 => warp::reduce_min_i32(v as i32) as u32,
            10 => warp::reduce_max_i32(v as i32) as u32,
            11 => warp::reduce_and(v),
            12 => warp::reduce_or(v),
            13 => warp::reduce_xor(v),
            14 => (warp::ballot(pred) & warp::lanemask_lt()).count_ones(),
            15 => {
                // Inside a branch only lanes that took it run together: the active mask holds
                // this lane and no lane of the other side.
                let taken = warp::ballot(v % 3 == 0);
                if v % 3 == 0 {
                    let mask = warp::active_mask();
                    (mask & !taken == 0 && (mask >> lane) & 1 == 1) as u32
                } else {
                    1
                }
            }
            16 => warp::match_any_u64(u64::from(v % 4) << 40),
            17 => warp::match_all_u64(u64::from(v % 8) << 33) as u32,
            18 => {
                let eq = warp::lanemask_eq();
                let lt = warp::lanemask_lt();
                let ok = eq == 1 << lane
                    && warp::lanemask_le() == lt | eq
                    && warp::lanemask_gt() == !(lt | eq)
                    && warp::lanemask_ge() == !lt
                    && (warp::active_mask() >> lane) & 1 == 1;
                ok as u32
            }
            19 => warp::ballot(warp::elect_one()).count_ones(),
            20 => sync::syncthreads_count(pred),
            21 => sync::syncthreads_and(pred) as u32,
            22 => sync::syncthreads_or(pred) as u32,
            _ => {
                let (t0, c0) = (time::globaltimer(), time::clock64());
                time::nanosleep(200);
                warp::sync();
                let (t1, c1) = (time::globaltimer(), time::clock64());
                let placed =
                    thread::smid() < thread::nsmid() && thread::warpid() < thread::nwarpid();
                (t1 >= t0 && c1 > c0 && placed) as u32
            }
        };
        if let Some(slot) = out.get_mut(i) {
            *slot = result;
        }
    }
}

/// What `collective(op)` leaves in every lane, from the values of its warp (and block).
fn expected(op: u32, values: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(values.len());
    for block in values.chunks(BLOCK) {
        let preds = |slice: &[u32]| slice.iter().filter(|v| *v & 1 == 1).count() as u32;
        let block_count = preds(block);
        for warp in block.chunks(32) {
            let ballot = warp
                .iter()
                .enumerate()
                .fold(0u32, |m, (l, v)| m | (((v & 1) as u32) << l));
            let all_same = |f: &dyn Fn(u32) -> u64| warp.iter().all(|&v| f(v) == f(warp[0]));
            let match_mask = |f: &dyn Fn(u32) -> u64, mine: u32| {
                warp.iter()
                    .enumerate()
                    .filter(|&(_, &v)| f(v) == f(mine))
                    .fold(0u32, |m, (l, _)| m | 1 << l)
            };
            for (lane, &v) in warp.iter().enumerate() {
                let r = match op {
                    0 => (ballot == u32::MAX) as u32,
                    1 => (ballot != 0) as u32,
                    2 => (ballot == 0 || ballot == u32::MAX) as u32,
                    3 => ballot,
                    4 => match_mask(&|x| u64::from(x % 8), v),
                    5 => all_same(&|x| u64::from(x % 8)) as u32,
                    6 => warp.iter().fold(0u32, |a, x| a.wrapping_add(*x)),
                    7 => *warp.iter().min().unwrap(),
                    8 => *warp.iter().max().unwrap(),
                    9 => warp.iter().map(|&x| x as i32).min().unwrap() as u32,
                    10 => warp.iter().map(|&x| x as i32).max().unwrap() as u32,
                    11 => warp.iter().fold(u32::MAX, |a, x| a & x),
                    12 => warp.iter().fold(0, |a, x| a | x),
                    13 => warp.iter().fold(0, |a, x| a ^ x),
                    14 => (ballot & ((1u32 << lane) - 1)).count_ones(),
                    15 | 18 | 19 => 1,
                    16 => match_mask(&|x| u64::from(x % 4) << 40, v),
                    17 => all_same(&|x| u64::from(x % 8) << 33) as u32,
                    20 => block_count,
                    21 => (block_count == block.len() as u32) as u32,
                    22 => (block_count > 0) as u32,
                    _ => 1,
                };
                out.push(r);
            }
        }
    }
    out
}

fn main() -> ExitCode {
    run_example("warp_vote", run)
}

/// Random values; every fourth warp holds one value in all lanes, every fourth block only odd
/// values and the next one only even values, so that votes and matches meet both outcomes.
fn inputs(rng: &mut Rng) -> Vec<u32> {
    let mut values: Vec<u32> = rng.vec(N, |r| r.next_u64() as u32);
    for (w, warp) in values.chunks_mut(32).enumerate() {
        if w % 4 == 0 {
            let first = warp[0];
            warp.fill(first);
        }
    }
    for (b, block) in values.chunks_mut(BLOCK).enumerate() {
        match b % 4 {
            1 => block.iter_mut().for_each(|v| *v |= 1),
            2 => block.iter_mut().for_each(|v| *v &= !1),
            _ => {}
        }
    }
    values
}

fn run(gpu: &Gpu) -> Result<bool, Box<dyn std::error::Error>> {
    let module = kernels::load(&gpu.ctx)?;
    let mut rng = Rng::new(77);
    let values = inputs(&mut rng);
    let values_dev = gpu.stream.clone_htod(&values)?;
    let mut out = gpu.stream.alloc_zeros::<u32>(N)?;
    let cfg = LaunchConfig {
        grid_dim: ((N / BLOCK) as u32, 1, 1),
        block_dim: (BLOCK as u32, 1, 1),
        shared_mem_bytes: 0,
    };
    let names = [
        "all",
        "any",
        "uni",
        "ballot",
        "match_any",
        "match_all",
        "reduce_add",
        "reduce_min",
        "reduce_max",
        "reduce_min_i32",
        "reduce_max_i32",
        "reduce_and",
        "reduce_or",
        "reduce_xor",
        "ballot rank",
        "active_mask in a branch",
        "match_any_u64",
        "match_all_u64",
        "lane masks",
        "elect_one",
        "syncthreads_count",
        "syncthreads_and",
        "syncthreads_or",
        "clocks, nanosleep, syncwarp, smid, warpid",
    ];
    let mut ok = true;
    for op in 0..OPS {
        module.collective(&gpu.stream, cfg, op, &values_dev, &mut out)?;
        ok &= check(
            names[op as usize],
            &gpu.stream.clone_dtoh(&out)?,
            &expected(op, &values),
        );
    }
    Ok(ok)
}
