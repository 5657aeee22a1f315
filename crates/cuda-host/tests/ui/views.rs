// Views of device buffers are checked against the kernel's parameter types like whole buffers.
// The first launch is right and must compile; the others are not.
use cuda_host::{CudaSlice, CudaStream, LaunchConfig, cuda_module};

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel};

    #[kernel]
    pub fn vecadd(a: &[f32], b: &[f32], mut c: DisjointSlice<f32>) {
        let _ = (a, b, &mut c);
    }
}

fn launch(
    module: &kernels::Module,
    stream: &CudaStream,
    floats: &mut CudaSlice<f32>,
    ints: &CudaSlice<u32>,
    out: &mut CudaSlice<f32>,
) {
    let cfg = LaunchConfig::for_num_elems(4);
    // Views of parts of buffers, and a buffer passed by a `&mut` variable twice (reborrowed).
    let (low, high) = floats.split_at_mut(4);
    let _ = module.vecadd(stream, cfg, &low, &high.slice(..4), &mut out.slice_mut(4..8));
    let _ = module.vecadd(stream, cfg, &*out, &out.slice(..), &mut low.slice_mut(..));
    let _ = module.vecadd(stream, cfg, &*floats, &*floats, out);
    let _ = module.vecadd(stream, cfg, &*floats, &*floats, out);
    // A view of another element type.
    let _ = module.vecadd(stream, cfg, &ints.slice(..4), &*floats, out);
    // A read-only view where the kernel writes.
    let _ = module.vecadd(stream, cfg, &*floats, &*floats, &mut floats.slice(..4));
    // A view passed by value rather than by reference.
    let _ = module.vecadd(stream, cfg, floats.slice(..4), &*floats, out);
}

fn main() {}
