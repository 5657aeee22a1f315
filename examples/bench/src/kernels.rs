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

/// The body of the naive SGEMM kernels (`sgemm_naive` and `sgemm_naive_fmad`).
#[allow(unused_macros)]
macro_rules! sgemm_naive_body {
    ($a:ident, $b:ident, $c:ident, $m:ident, $n:ident, $k:ident) => {{
        let row = (thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y()) as usize;
        let col = (thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x()) as usize;
        let (m, n, k) = ($m as usize, $n as usize, $k as usize);
        if row < m && col < n {
            let mut sum = 0.0f32;
            for i in 0..k {
                sum += $a[row * k + i] * $b[i * n + col];
            }
            $c[row * n + col] = sum;
        }
    }};
}

/// PolyBench/GPU's problem sizes (its standard dataset) and constants, shared by the kernels
/// and the host.
pub mod polybench {
    pub const GEMM: usize = 512;
    pub const MM2: usize = 2048;
    pub const MM3: usize = 512;
    pub const ATAX: usize = 4096;
    pub const BICG: usize = 4096;
    pub const MVT: usize = 4096;
    pub const GESUMMV: usize = 4096;
    pub const SYRK: usize = 1024;
    pub const SYR2K: usize = 2048;
    pub const CONV2D: usize = 4096;
    pub const CONV3D: usize = 256;
    pub const COVAR: usize = 2048;
    pub const FDTD: usize = 2048;
    pub const FDTD_STEPS: usize = 500;
    pub const GRAMSCHMIDT: usize = 512;
    pub const ALPHA: f32 = 32412.0;
    pub const BETA: f32 = 2123.0;
    pub const GESUMMV_ALPHA: f32 = 43532.0;
    pub const GESUMMV_BETA: f32 = 12313.0;
    pub const SYRK_ALPHA: f32 = 12435.0;
    pub const SYRK_BETA: f32 = 4546.0;
    pub const FLOAT_N: f32 = 3214212.01;
    pub const EPS: f32 = 0.005;

    /// The convolutions' coefficients.
    pub mod conv {
        pub const C11: f32 = 0.2;
        pub const C21: f32 = 0.5;
        pub const C31: f32 = -0.8;
        pub const C12: f32 = -0.3;
        pub const C22: f32 = 0.6;
        pub const C32: f32 = -0.9;
        pub const C13: f32 = 0.4;
        pub const C23: f32 = 0.7;
        pub const C33: f32 = 0.10;
    }
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

    /// `saxpy` written once for every element type, launched as `axpy::<f32>`: a generic
    /// kernel at the speed of its concrete twin.
    #[cfg(feature = "saxpy_generic")]
    #[kernel]
    pub fn axpy<T: Copy + core::ops::Mul<Output = T> + core::ops::Add<Output = T>>(
        alpha: T,
        x: &[T],
        y: &[T],
        mut out: DisjointSlice<T>,
    ) {
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

    /// The naive SGEMM a user writes first: one output per thread, the inner product over
    /// plain indexing (`c = a × b`, `a` is `m × k`, `b` is `k × n`).
    #[cfg(feature = "sgemm_naive")]
    #[kernel]
    pub fn sgemm_naive(a: &[f32], b: &[f32], c: &mut [f32], m: u32, n: u32, k: u32) {
        sgemm_naive_body!(a, b, c, m, n, k);
    }

    /// `sgemm_naive` with `#[kernel(fmad)]`.
    #[cfg(feature = "sgemm_naive_fmad")]
    #[kernel(fmad)]
    pub fn sgemm_naive_fmad(a: &[f32], b: &[f32], c: &mut [f32], m: u32, n: u32, k: u32) {
        sgemm_naive_body!(a, b, c, m, n, k);
    }

    // PolyBench/GPU (Grauer-Gray et al.): each kernel as the suite writes it, sizes and
    // constants included (`super::polybench`), in safe Rust.

    /// gemm: `c = alpha * a × b + beta * c`, one element per thread.
    #[cfg(feature = "pb_gemm")]
    #[kernel]
    pub fn pb_gemm(a: &[f32], b: &[f32], c: &mut [f32]) {
        use super::polybench::{ALPHA, BETA, GEMM as N};
        let j = (thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x()) as usize;
        let i = (thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y()) as usize;
        if i < N && j < N {
            c[i * N + j] *= BETA;
            for k in 0..N {
                c[i * N + j] += ALPHA * a[i * N + k] * b[k * N + j];
            }
        }
    }

    /// 2mm, step 1: `tmp = alpha * a × b`.
    #[cfg(feature = "pb_2mm")]
    #[kernel]
    pub fn pb_2mm(a: &[f32], b: &[f32], tmp: &mut [f32]) {
        use super::polybench::{ALPHA, MM2 as N};
        let j = (thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x()) as usize;
        let i = (thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y()) as usize;
        if i < N && j < N {
            tmp[i * N + j] = 0.0;
            for k in 0..N {
                tmp[i * N + j] += ALPHA * a[i * N + k] * b[k * N + j];
            }
        }
    }

    /// 2mm, step 2: `d = beta * d + tmp × c`.
    #[cfg(feature = "pb_2mm")]
    #[kernel]
    pub fn pb_2mm_2(tmp: &[f32], c: &[f32], d: &mut [f32]) {
        use super::polybench::{BETA, MM2 as N};
        let j = (thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x()) as usize;
        let i = (thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y()) as usize;
        if i < N && j < N {
            d[i * N + j] *= BETA;
            for k in 0..N {
                d[i * N + j] += tmp[i * N + k] * c[k * N + j];
            }
        }
    }

    /// 3mm, each of its three products: `e = a × b`.
    #[cfg(feature = "pb_3mm")]
    #[kernel]
    pub fn pb_3mm(a: &[f32], b: &[f32], e: &mut [f32]) {
        use super::polybench::MM3 as N;
        let j = (thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x()) as usize;
        let i = (thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y()) as usize;
        if i < N && j < N {
            e[i * N + j] = 0.0;
            for k in 0..N {
                e[i * N + j] += a[i * N + k] * b[k * N + j];
            }
        }
    }

    /// atax, step 1: `tmp = a × x`.
    #[cfg(feature = "pb_atax")]
    #[kernel]
    pub fn pb_atax(a: &[f32], x: &[f32], tmp: &mut [f32]) {
        use super::polybench::ATAX as N;
        let i = thread::index_1d().get();
        if i < N {
            for j in 0..N {
                tmp[i] += a[i * N + j] * x[j];
            }
        }
    }

    /// atax, step 2: `y = aᵀ × tmp`.
    #[cfg(feature = "pb_atax")]
    #[kernel]
    pub fn pb_atax_2(a: &[f32], tmp: &[f32], y: &mut [f32]) {
        use super::polybench::ATAX as N;
        let j = thread::index_1d().get();
        if j < N {
            for i in 0..N {
                y[j] += a[i * N + j] * tmp[i];
            }
        }
    }

    /// bicg, step 1: `s = rᵀ × a`.
    #[cfg(feature = "pb_bicg")]
    #[kernel]
    pub fn pb_bicg(a: &[f32], r: &[f32], s: &mut [f32]) {
        use super::polybench::BICG as N;
        let j = thread::index_1d().get();
        if j < N {
            s[j] = 0.0;
            for i in 0..N {
                s[j] += r[i] * a[i * N + j];
            }
        }
    }

    /// bicg, step 2: `q = a × p`.
    #[cfg(feature = "pb_bicg")]
    #[kernel]
    pub fn pb_bicg_2(a: &[f32], p: &[f32], q: &mut [f32]) {
        use super::polybench::BICG as N;
        let i = thread::index_1d().get();
        if i < N {
            q[i] = 0.0;
            for j in 0..N {
                q[i] += a[i * N + j] * p[j];
            }
        }
    }

    /// mvt, step 1: `x1 += a × y1`.
    #[cfg(feature = "pb_mvt")]
    #[kernel]
    pub fn pb_mvt(a: &[f32], x1: &mut [f32], y1: &[f32]) {
        use super::polybench::MVT as N;
        let i = thread::index_1d().get();
        if i < N {
            for j in 0..N {
                x1[i] += a[i * N + j] * y1[j];
            }
        }
    }

    /// mvt, step 2: `x2 += aᵀ × y2`.
    #[cfg(feature = "pb_mvt")]
    #[kernel]
    pub fn pb_mvt_2(a: &[f32], x2: &mut [f32], y2: &[f32]) {
        use super::polybench::MVT as N;
        let i = thread::index_1d().get();
        if i < N {
            for j in 0..N {
                x2[i] += a[j * N + i] * y2[j];
            }
        }
    }

    /// gesummv: `y = alpha * a × x + beta * b × x`.
    #[cfg(feature = "pb_gesummv")]
    #[kernel]
    pub fn pb_gesummv(a: &[f32], b: &[f32], x: &[f32], y: &mut [f32], tmp: &mut [f32]) {
        use super::polybench::{GESUMMV as N, GESUMMV_ALPHA, GESUMMV_BETA};
        let i = thread::index_1d().get();
        if i < N {
            for j in 0..N {
                tmp[i] += a[i * N + j] * x[j];
                y[i] += b[i * N + j] * x[j];
            }
            y[i] = GESUMMV_ALPHA * tmp[i] + GESUMMV_BETA * y[i];
        }
    }

    /// syrk: `c = alpha * a × aᵀ + beta * c`.
    #[cfg(feature = "pb_syrk")]
    #[kernel]
    pub fn pb_syrk(a: &[f32], c: &mut [f32]) {
        use super::polybench::{SYRK as N, SYRK_ALPHA, SYRK_BETA};
        let j = (thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x()) as usize;
        let i = (thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y()) as usize;
        if i < N && j < N {
            c[i * N + j] *= SYRK_BETA;
            for k in 0..N {
                c[i * N + j] += SYRK_ALPHA * a[i * N + k] * a[j * N + k];
            }
        }
    }

    /// syr2k: `c = alpha * a × bᵀ + alpha * b × aᵀ + beta * c`.
    #[cfg(feature = "pb_syr2k")]
    #[kernel]
    pub fn pb_syr2k(a: &[f32], b: &[f32], c: &mut [f32]) {
        use super::polybench::{SYR2K as N, SYRK_ALPHA, SYRK_BETA};
        let j = (thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x()) as usize;
        let i = (thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y()) as usize;
        if i < N && j < N {
            c[i * N + j] *= SYRK_BETA;
            for k in 0..N {
                c[i * N + j] += SYRK_ALPHA * a[i * N + k] * b[j * N + k]
                    + SYRK_ALPHA * b[i * N + k] * a[j * N + k];
            }
        }
    }

    /// 2-D convolution: a 3 × 3 stencil over the interior.
    #[cfg(feature = "pb_conv2d")]
    #[kernel]
    pub fn pb_conv2d(a: &[f32], b: &mut [f32]) {
        use super::polybench::{CONV2D as N, conv::*};
        let j = (thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x()) as usize;
        let i = (thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y()) as usize;
        if i > 0 && i < N - 1 && j > 0 && j < N - 1 {
            b[i * N + j] = C11 * a[(i - 1) * N + (j - 1)]
                + C21 * a[(i - 1) * N + j]
                + C31 * a[(i - 1) * N + (j + 1)]
                + C12 * a[i * N + (j - 1)]
                + C22 * a[i * N + j]
                + C32 * a[i * N + (j + 1)]
                + C13 * a[(i + 1) * N + (j - 1)]
                + C23 * a[(i + 1) * N + j]
                + C33 * a[(i + 1) * N + (j + 1)];
        }
    }

    /// 3-D convolution of plane `i` (the host launches one per plane).
    #[cfg(feature = "pb_conv3d")]
    #[kernel]
    pub fn pb_conv3d(a: &[f32], b: &mut [f32], i: u32) {
        use super::polybench::{CONV3D as N, conv::*};
        let i = i as usize;
        let k = (thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x()) as usize;
        let j = (thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y()) as usize;
        let at = |i: usize, j: usize, k: usize| i * N * N + j * N + k;
        if i > 0 && i < N - 1 && j > 0 && j < N - 1 && k > 0 && k < N - 1 {
            b[at(i, j, k)] = C11 * a[at(i - 1, j - 1, k - 1)]
                + C13 * a[at(i + 1, j - 1, k - 1)]
                + C21 * a[at(i - 1, j - 1, k - 1)]
                + C23 * a[at(i + 1, j - 1, k - 1)]
                + C31 * a[at(i - 1, j - 1, k - 1)]
                + C33 * a[at(i + 1, j - 1, k - 1)]
                + C12 * a[at(i, j - 1, k)]
                + C22 * a[at(i, j, k)]
                + C32 * a[at(i, j + 1, k)]
                + C11 * a[at(i - 1, j - 1, k + 1)]
                + C13 * a[at(i + 1, j - 1, k + 1)]
                + C21 * a[at(i - 1, j, k + 1)]
                + C23 * a[at(i + 1, j, k + 1)]
                + C31 * a[at(i - 1, j + 1, k + 1)]
                + C33 * a[at(i + 1, j + 1, k + 1)];
        }
    }

    /// covariance and correlation, step 1: the mean of each column.
    #[cfg(any(feature = "pb_covariance", feature = "pb_correlation"))]
    #[kernel]
    pub fn pb_mean(data: &[f32], mean: &mut [f32]) {
        use super::polybench::{COVAR as N, FLOAT_N};
        let j = thread::index_1d().get();
        if j < N {
            mean[j] = 0.0;
            for i in 0..N {
                mean[j] += data[i * N + j];
            }
            mean[j] /= FLOAT_N;
        }
    }

    /// covariance, step 2: each column centred on its mean.
    #[cfg(feature = "pb_covariance")]
    #[kernel]
    pub fn pb_center(mean: &[f32], data: &mut [f32]) {
        use super::polybench::COVAR as N;
        let j = (thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x()) as usize;
        let i = (thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y()) as usize;
        if i < N && j < N {
            data[i * N + j] -= mean[j];
        }
    }

    /// covariance, step 3: the upper triangle of `dataᵀ × data`, mirrored.
    #[cfg(feature = "pb_covariance")]
    #[kernel]
    pub fn pb_covariance(data: &[f32], symmat: &mut [f32]) {
        use super::polybench::COVAR as N;
        let j1 = thread::index_1d().get();
        if j1 < N {
            for j2 in j1..N {
                symmat[j1 * N + j2] = 0.0;
                for i in 0..N {
                    symmat[j1 * N + j2] += data[i * N + j1] * data[i * N + j2];
                }
                symmat[j2 * N + j1] = symmat[j1 * N + j2];
            }
        }
    }

    /// correlation, step 2: each column's standard deviation (1 where it is tiny).
    #[cfg(feature = "pb_correlation")]
    #[kernel]
    pub fn pb_std(data: &[f32], mean: &[f32], std: &mut [f32]) {
        use super::polybench::{COVAR as N, EPS, FLOAT_N};
        let j = thread::index_1d().get();
        if j < N {
            std[j] = 0.0;
            for i in 0..N {
                std[j] += (data[i * N + j] - mean[j]) * (data[i * N + j] - mean[j]);
            }
            std[j] /= FLOAT_N;
            std[j] = std[j].sqrt();
            if std[j] <= EPS {
                std[j] = 1.0;
            }
        }
    }

    /// correlation, step 3: each column centred and scaled.
    #[cfg(feature = "pb_correlation")]
    #[kernel]
    pub fn pb_normalize(mean: &[f32], std: &[f32], data: &mut [f32]) {
        use super::polybench::{COVAR as N, FLOAT_N};
        let j = (thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x()) as usize;
        let i = (thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y()) as usize;
        if i < N && j < N {
            data[i * N + j] -= mean[j];
            data[i * N + j] /= FLOAT_N.sqrt() * std[j];
        }
    }

    /// correlation, step 4: the correlation matrix, upper triangle mirrored.
    #[cfg(feature = "pb_correlation")]
    #[kernel]
    pub fn pb_correlation(data: &[f32], symmat: &mut [f32]) {
        use super::polybench::COVAR as N;
        let j1 = thread::index_1d().get();
        if j1 < N - 1 {
            symmat[j1 * N + j1] = 1.0;
            for j2 in j1 + 1..N {
                symmat[j1 * N + j2] = 0.0;
                for i in 0..N {
                    symmat[j1 * N + j2] += data[i * N + j1] * data[i * N + j2];
                }
                symmat[j2 * N + j1] = symmat[j1 * N + j2];
            }
        }
    }

    /// fdtd-2d, step 1 of time step `t`: `ey` from `hz` (row 0 from the source `fict`).
    #[cfg(feature = "pb_fdtd2d")]
    #[kernel]
    pub fn pb_fdtd2d(fict: &[f32], ey: &mut [f32], hz: &[f32], t: u32) {
        use super::polybench::FDTD as N;
        let j = (thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x()) as usize;
        let i = (thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y()) as usize;
        if i < N && j < N {
            if i == 0 {
                ey[j] = fict[t as usize];
            } else {
                ey[i * N + j] -= 0.5 * (hz[i * N + j] - hz[(i - 1) * N + j]);
            }
        }
    }

    /// fdtd-2d, step 2: `ex` from `hz`.
    #[cfg(feature = "pb_fdtd2d")]
    #[kernel]
    pub fn pb_fdtd2d_2(ex: &mut [f32], hz: &[f32]) {
        use super::polybench::FDTD as N;
        let j = (thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x()) as usize;
        let i = (thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y()) as usize;
        if i < N && j < N && j > 0 {
            ex[i * (N + 1) + j] -= 0.5 * (hz[i * N + j] - hz[i * N + (j - 1)]);
        }
    }

    /// fdtd-2d, step 3: `hz` from `ex` and `ey`.
    #[cfg(feature = "pb_fdtd2d")]
    #[kernel]
    pub fn pb_fdtd2d_3(ex: &[f32], ey: &[f32], hz: &mut [f32]) {
        use super::polybench::FDTD as N;
        let j = (thread::blockIdx_x() * thread::blockDim_x() + thread::threadIdx_x()) as usize;
        let i = (thread::blockIdx_y() * thread::blockDim_y() + thread::threadIdx_y()) as usize;
        if i < N && j < N {
            hz[i * N + j] -= 0.7
                * (ex[i * (N + 1) + (j + 1)] - ex[i * (N + 1) + j] + ey[(i + 1) * N + j]
                    - ey[i * N + j]);
        }
    }

    /// gramschmidt, step 1 of column `k` (one thread): `r[k][k]`, the column's norm.
    #[cfg(feature = "pb_gramschmidt")]
    #[kernel]
    pub fn pb_gramschmidt(a: &[f32], r: &mut [f32], k: u32) {
        use super::polybench::GRAMSCHMIDT as N;
        let k = k as usize;
        if thread::index_1d().get() == 0 {
            let mut nrm = 0.0f32;
            for i in 0..N {
                nrm += a[i * N + k] * a[i * N + k];
            }
            r[k * N + k] = nrm.sqrt();
        }
    }

    /// gramschmidt, step 2: column `k` of `q`, the column of `a` normalised.
    #[cfg(feature = "pb_gramschmidt")]
    #[kernel]
    pub fn pb_gramschmidt_2(a: &[f32], r: &[f32], q: &mut [f32], k: u32) {
        use super::polybench::GRAMSCHMIDT as N;
        let k = k as usize;
        let i = thread::index_1d().get();
        if i < N {
            q[i * N + k] = a[i * N + k] / r[k * N + k];
        }
    }

    /// gramschmidt, step 3: row `k` of `r` and the columns of `a` right of `k` updated.
    #[cfg(feature = "pb_gramschmidt")]
    #[kernel]
    pub fn pb_gramschmidt_3(a: &mut [f32], r: &mut [f32], q: &[f32], k: u32) {
        use super::polybench::GRAMSCHMIDT as N;
        let k = k as usize;
        let j = thread::index_1d().get();
        if j > k && j < N {
            r[k * N + j] = 0.0;
            for i in 0..N {
                r[k * N + j] += q[i * N + k] * a[i * N + j];
            }
            for i in 0..N {
                a[i * N + j] -= q[i * N + k] * r[k * N + j];
            }
        }
    }
}
