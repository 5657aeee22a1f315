//! The Rust side of every benchmark: one `#[kernel]` each, written the way a user writes it
//! (safe indexing, `DisjointSlice`, iterators), each compiled only with its cargo feature.
//!
//! The CUDA C++ counterparts in `cuda/<name>.cu` implement the same algorithm with the same
//! launch shape, so that the two differ only in the compiler. A kernel's scalar parameters
//! have the counterpart's types (`unsigned int` is `u32`), and slices are indexed with `usize`
//! values made from them, as the C++ indexes with `size_t` (docs/bench.md, "Parameter types").

// Shared-memory tiles are `static mut`s (DESIGN.md, milestone 2); indexing one borrows it.
#![allow(static_mut_refs)]

use cuda_host::cuda_module;

/// The body of the tiled SGEMM kernels (`sgemm` and `sgemm_fmad`), written once: `c = a × b`
/// for `n × n` row-major matrices through 16 × 16 shared tiles.
#[allow(unused_macros)]
macro_rules! sgemm_body {
    ($a:ident, $b:ident, $n:ident, $c:ident) => {{
        use cuda_device::shared::SharedArray;
        const T: u32 = 16;
        static mut AS: SharedArray<f32, 256> = SharedArray::UNINIT;
        static mut BS: SharedArray<f32, 256> = SharedArray::UNINIT;
        let n = $n;
        let tx = thread::threadIdx_x();
        let ty = thread::threadIdx_y();
        let row = thread::blockIdx_y() * T + ty;
        let col = thread::blockIdx_x() * T + tx;
        let tile = (ty * T + tx) as usize;
        let mut acc = 0.0f32;
        let mut k0 = 0;
        while k0 < n {
            let a_val = if row < n && k0 + tx < n {
                $a[row as usize * n as usize + (k0 + tx) as usize]
            } else {
                0.0
            };
            let b_val = if k0 + ty < n && col < n {
                $b[(k0 + ty) as usize * n as usize + col as usize]
            } else {
                0.0
            };
            unsafe {
                AS[tile] = a_val;
                BS[tile] = b_val;
            }
            sync::syncthreads();
            for k in 0..T as usize {
                acc +=
                    unsafe { AS[ty as usize * T as usize + k] * BS[k * T as usize + tx as usize] };
            }
            sync::syncthreads();
            k0 += T;
        }
        if row < n && col < n {
            $c[row as usize * n as usize + col as usize] = acc;
        }
    }};
}

#[cuda_module]
pub mod ours {
    #[allow(unused_imports)]
    use cuda_device::{DisjointSlice, block_dims, kernel, sync, thread, warp};

    /// `c[i] = a[i] + b[i]`.
    #[cfg(feature = "vecadd")]
    #[kernel]
    pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
        let i = thread::index_1d();
        if let Some(c) = c.get_mut(i) {
            *c = a[i.get()] + b[i.get()];
        }
    }

    /// `out[i] = alpha * x[i] + y[i]`: a multiply and an add, never fused (Rust semantics).
    #[cfg(feature = "saxpy")]
    #[kernel]
    pub fn saxpy(alpha: f32, x: &[f32], y: &[f32], mut out: DisjointSlice<f32>) {
        let i = thread::index_1d();
        if let Some(out) = out.get_mut(i) {
            *out = alpha * x[i.get()] + y[i.get()];
        }
    }

    /// `saxpy` with `#[kernel(fmad)]`: the multiply and the add may be fused into one `fma`,
    /// as nvcc does by default (`--fmad=true`).
    #[cfg(feature = "saxpy_fmad")]
    #[kernel(fmad)]
    pub fn saxpy_fmad(alpha: f32, x: &[f32], y: &[f32], mut out: DisjointSlice<f32>) {
        let i = thread::index_1d();
        if let Some(out) = out.get_mut(i) {
            *out = alpha * x[i.get()] + y[i.get()];
        }
    }

    /// One thread per row of a row-major matrix: `sums[r] = m[r][0] + m[r][1] + ...`, in order.
    #[cfg(feature = "rowsum")]
    #[kernel]
    pub fn rowsum(m: &[f32], cols: u32, mut sums: DisjointSlice<f32>) {
        let row = thread::index_1d();
        if let Some(sum) = sums.get_mut(row) {
            let start = row.get() * cols as usize;
            let mut acc = 0.0f32;
            for j in 0..cols {
                acc += m[start + j as usize];
            }
            *sum = acc;
        }
    }

    /// The number of Collatz steps from `first + i` down to 1: integer work, divergent loops.
    #[cfg(feature = "collatz")]
    #[kernel]
    pub fn collatz(first: u64, mut steps: DisjointSlice<u32>) {
        let i = thread::index_1d();
        if let Some(steps) = steps.get_mut(i) {
            let mut n = first + i.get() as u64;
            let mut count = 0u32;
            while n != 1 {
                n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
                count += 1;
            }
            *steps = count;
        }
    }

    /// A dot product per thread through an iterator chain: row `i` of `x` (as long as `w`)
    /// zipped with `w`, multiplied, negative products dropped, summed.
    #[cfg(feature = "iter_chain")]
    #[kernel]
    pub fn iter_chain(x: &[f32], w: &[f32], mut out: DisjointSlice<f32>) {
        let i = thread::index_1d();
        if let Some(out) = out.get_mut(i) {
            let k = w.len();
            let row = &x[i.get() * k..(i.get() + 1) * k];
            *out = row
                .iter()
                .zip(w)
                .map(|(a, b)| a * b)
                .filter(|p| *p > 0.0)
                .sum();
        }
    }

    /// Each block of 256 threads sums its 256 elements: a tree in shared memory down to one
    /// warp, then warp shuffles. Thread 0 writes the block's sum.
    #[cfg(feature = "reduce")]
    #[kernel]
    #[block_dims(256)]
    pub fn reduce(x: &[f32], partial: &mut [f32]) {
        use cuda_device::shared::SharedArray;
        static mut TILE: SharedArray<f32, 256> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let i = thread::index_1d().get();
        unsafe { TILE[t] = if i < x.len() { x[i] } else { 0.0 } };
        sync::syncthreads();
        let mut stride = 128;
        while stride >= 32 {
            if t < stride {
                let other = unsafe { TILE[t + stride] };
                unsafe { TILE[t] += other };
            }
            sync::syncthreads();
            stride /= 2;
        }
        if t < 32 {
            let mut v = unsafe { TILE[t] };
            let mut offset = 16;
            while offset > 0 {
                v += warp::shuffle_down(v, offset);
                offset /= 2;
            }
            if t == 0 {
                partial[thread::blockIdx_x() as usize] = v;
            }
        }
    }

    /// A 256-bin histogram of `x % 256`: each block counts into its own shared-memory bins
    /// (block-scoped atomics), then adds them to the global bins (device-scoped atomics).
    /// Blocks of 256 threads walk the input with a grid-sized stride.
    #[cfg(feature = "histogram")]
    #[kernel]
    #[block_dims(256)]
    pub fn histogram(x: &[u32], bins: &[cuda_device::atomic::DeviceAtomicU32]) {
        use cuda_device::atomic::{AtomicOrdering, BlockAtomicU32};
        use cuda_device::shared::SharedArray;
        static mut LOCAL: SharedArray<BlockAtomicU32, 256> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        unsafe { LOCAL[t].store(0, AtomicOrdering::Relaxed) };
        sync::syncthreads();
        let stride = (thread::blockDim_x() * thread::gridDim_x()) as usize;
        let mut i = thread::index_1d().get();
        while i < x.len() {
            unsafe { LOCAL[(x[i] % 256) as usize].fetch_add(1, AtomicOrdering::Relaxed) };
            i += stride;
        }
        sync::syncthreads();
        let count = unsafe { LOCAL[t].load(AtomicOrdering::Relaxed) };
        if count != 0 {
            bins[t].fetch_add(count, AtomicOrdering::Relaxed);
        }
    }

    /// Inclusive prefix sum (wrapping `u32`) within each block of 1024 threads: warp scans
    /// with `shuffle_up`, then a scan of the 32 warp totals in shared memory.
    #[cfg(feature = "scan")]
    #[kernel]
    #[block_dims(1024)]
    pub fn scan(x: &[u32], mut out: DisjointSlice<u32>) {
        use cuda_device::shared::SharedArray;
        static mut WARP_SUMS: SharedArray<u32, 32> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let lane = t % 32;
        let warp_id = t / 32;
        let i = thread::index_1d();
        let mut v = if i.get() < x.len() { x[i.get()] } else { 0 };
        let mut d = 1;
        while d < 32 {
            let below = warp::shuffle_up(v, d as u32);
            if lane >= d {
                v = v.wrapping_add(below);
            }
            d *= 2;
        }
        if lane == 31 {
            unsafe { WARP_SUMS[warp_id] = v };
        }
        sync::syncthreads();
        if warp_id == 0 {
            let mut s = unsafe { WARP_SUMS[lane] };
            let mut d = 1;
            while d < 32 {
                let below = warp::shuffle_up(s, d as u32);
                if lane >= d {
                    s = s.wrapping_add(below);
                }
                d *= 2;
            }
            unsafe { WARP_SUMS[lane] = s };
        }
        sync::syncthreads();
        if warp_id > 0 {
            v = v.wrapping_add(unsafe { WARP_SUMS[warp_id - 1] });
        }
        if let Some(out) = out.get_mut(i) {
            *out = v;
        }
    }

    /// `out = inputᵀ` for a `height × width` row-major matrix, through a 32 × 33 shared tile
    /// (the padding column avoids bank conflicts). Blocks of 32 × 8 threads, 2-D grid.
    #[cfg(feature = "transpose")]
    #[kernel]
    #[block_dims(32, 8)]
    pub fn transpose(input: &[f32], width: u32, height: u32, out: &mut [f32]) {
        use cuda_device::shared::SharedArray;
        const TILE: usize = 32;
        const ROWS: usize = 8;
        static mut T: SharedArray<f32, { 32 * 33 }> = SharedArray::UNINIT;
        let bx = thread::blockIdx_x() * TILE as u32;
        let by = thread::blockIdx_y() * TILE as u32;
        let tx = thread::threadIdx_x();
        let ty = thread::threadIdx_y();
        let mut j = 0;
        while j < TILE as u32 {
            let (x, y) = (bx + tx, by + ty + j);
            if x < width && y < height {
                unsafe {
                    T[(ty + j) as usize * (TILE + 1) + tx as usize] =
                        input[y as usize * width as usize + x as usize]
                };
            }
            j += ROWS as u32;
        }
        sync::syncthreads();
        j = 0;
        while j < TILE as u32 {
            let (x, y) = (by + tx, bx + ty + j);
            if x < height && y < width {
                out[y as usize * height as usize + x as usize] =
                    unsafe { T[tx as usize * (TILE + 1) + (ty + j) as usize] };
            }
            j += ROWS as u32;
        }
    }

    /// Row softmax of a `rows × cols` matrix, one block of 256 threads per row: block max,
    /// block sum of `exp(x - max)` (tree reductions in shared memory), then the quotients.
    #[cfg(feature = "softmax")]
    #[kernel]
    #[block_dims(256)]
    pub fn softmax(x: &[f32], cols: u32, out: &mut [f32]) {
        use cuda_device::shared::SharedArray;
        static mut RED: SharedArray<f32, 256> = SharedArray::UNINIT;
        let t = thread::threadIdx_x();
        let threads = thread::blockDim_x();
        let base = thread::blockIdx_x() as usize * cols as usize;

        let mut m = f32::NEG_INFINITY;
        let mut j = t;
        while j < cols {
            m = m.max(x[base + j as usize]);
            j += threads;
        }
        unsafe { RED[t as usize] = m };
        sync::syncthreads();
        let mut stride = threads / 2;
        while stride > 0 {
            if t < stride {
                let other = unsafe { RED[(t + stride) as usize] };
                unsafe { RED[t as usize] = RED[t as usize].max(other) };
            }
            sync::syncthreads();
            stride /= 2;
        }
        let m = unsafe { RED[0] };
        sync::syncthreads();

        let mut s = 0.0f32;
        j = t;
        while j < cols {
            s += (x[base + j as usize] - m).exp();
            j += threads;
        }
        unsafe { RED[t as usize] = s };
        sync::syncthreads();
        stride = threads / 2;
        while stride > 0 {
            if t < stride {
                let other = unsafe { RED[(t + stride) as usize] };
                unsafe { RED[t as usize] += other };
            }
            sync::syncthreads();
            stride /= 2;
        }
        let s = unsafe { RED[0] };

        j = t;
        while j < cols {
            out[base + j as usize] = (x[base + j as usize] - m).exp() / s;
            j += threads;
        }
    }

    /// `c = a × b` for `n × n` row-major matrices, 16 × 16 tiles of `a` and `b` in shared
    /// memory, one output element per thread, 2-D grid of 16 × 16 blocks.
    #[cfg(feature = "sgemm")]
    #[kernel]
    #[block_dims(16, 16)]
    pub fn sgemm(a: &[f32], b: &[f32], n: u32, c: &mut [f32]) {
        sgemm_body!(a, b, n, c);
    }

    /// `sgemm` with `#[kernel(fmad)]`: `acc += a * b` may become one `fma`, as nvcc does by
    /// default (`--fmad=true`). The body is the same text as `sgemm`'s (the option applies to
    /// the arithmetic written in the kernel itself).
    #[cfg(feature = "sgemm_fmad")]
    #[kernel(fmad)]
    #[block_dims(16, 16)]
    pub fn sgemm_fmad(a: &[f32], b: &[f32], n: u32, c: &mut [f32]) {
        sgemm_body!(a, b, n, c);
    }

    /// A 7-point 1-D stencil, `out[i] = Σ w[k] · x[i + k - 3]` (zero outside `x`), each block
    /// of 256 threads staging its 256 inputs and a 3-element halo on each side in shared
    /// memory.
    #[cfg(feature = "stencil")]
    #[kernel]
    #[block_dims(256)]
    pub fn stencil(x: &[f32], w: &[f32], mut out: DisjointSlice<f32>) {
        use cuda_device::shared::SharedArray;
        const R: usize = 3;
        const B: usize = 256;
        static mut TILE: SharedArray<f32, { 256 + 2 * 3 }> = SharedArray::UNINIT;
        let t = thread::threadIdx_x() as usize;
        let i = thread::index_1d();
        let g = i.get();
        let n = x.len();
        unsafe { TILE[t + R] = if g < n { x[g] } else { 0.0 } };
        if t < R {
            let left = if g >= R && g - R < n { x[g - R] } else { 0.0 };
            let right = if g + B < n { x[g + B] } else { 0.0 };
            unsafe {
                TILE[t] = left;
                TILE[t + B + R] = right;
            }
        }
        sync::syncthreads();
        if let Some(out) = out.get_mut(i) {
            let mut acc = 0.0f32;
            for k in 0..2 * R + 1 {
                acc += w[k] * unsafe { TILE[t + k] };
            }
            *out = acc;
        }
    }
}
