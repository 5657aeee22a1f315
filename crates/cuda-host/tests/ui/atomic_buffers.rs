// A `&[A]` kernel parameter of atomic cells is a buffer of their plain type that the kernel
// writes: its launcher takes `&mut CudaSlice<plain>`. The first launch of each kernel is right
// and must compile; the others are not.
use core::sync::atomic::{AtomicBool, AtomicU32};

use cuda_device::atomic::{BlockAtomicF64, DeviceAtomicI64, DeviceAtomicU32};
use cuda_host::{CudaSlice, CudaStream, LaunchConfig, cuda_module};

#[cuda_module]
mod kernels {
    use super::*;
    use cuda_device::kernel;

    #[kernel]
    pub fn scoped(bins: &[DeviceAtomicU32], big: &[DeviceAtomicI64], sums: &[BlockAtomicF64]) {
        let _ = (bins, big, sums);
    }

    #[kernel]
    pub fn core_atomics(counts: &[AtomicU32], flags: &[AtomicBool]) {
        let _ = (counts, flags);
    }
}

fn launch(
    module: &kernels::Module,
    stream: &CudaStream,
    words: &mut CudaSlice<u32>,
    longs: &mut CudaSlice<i64>,
    doubles: &mut CudaSlice<f64>,
    flags: &mut CudaSlice<bool>,
) {
    let cfg = LaunchConfig::for_num_elems(4);
    let _ = module.scoped(stream, cfg, words, longs, doubles);
    let _ = module.core_atomics(stream, cfg, words, flags);
    // The kernel writes through atomics: a shared borrow is not enough.
    let _ = module.core_atomics(stream, cfg, &*words, flags);
    // A buffer of another plain type.
    let _ = module.scoped(stream, cfg, longs, longs, doubles);
}

fn main() {}
