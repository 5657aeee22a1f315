use cuda_host::{CudaSlice, CudaStream, LaunchConfig, cuda_module};

#[cuda_module]
mod kernels {
    use cuda_device::kernel;

    #[kernel]
    pub fn fill(out: &mut [u32], value: u32) {
        let _ = (out, value);
    }
}

fn launch(module: &kernels::Module, stream: &CudaStream, out: &mut CudaSlice<u32>) {
    let _ = module.fill(stream, LaunchConfig::for_num_elems(1), out, 1.5f32);
}

fn main() {}
