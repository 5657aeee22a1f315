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
    floats: &CudaSlice<f32>,
    ints: &CudaSlice<u32>,
    out: &mut CudaSlice<f32>,
) {
    let cfg = LaunchConfig::for_num_elems(4);
    // An input of the wrong element type.
    let _ = module.vecadd(stream, cfg, ints, floats, out);
    // The output must be borrowed mutably.
    let _ = module.vecadd(stream, cfg, floats, floats, floats);
    // One argument short.
    let _ = module.vecadd(stream, cfg, floats, out);
}

fn main() {}
