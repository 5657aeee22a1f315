use cuda_host::{CudaStream, LaunchConfig, cuda_module};

#[cuda_module]
mod kernels {
    use cuda_device::kernel;

    #[kernel]
    pub fn raw(p: *mut f32, n: usize) {
        let _ = (p, n);
    }
}

fn launch(module: &kernels::Module, stream: &CudaStream) {
    let _ = module.raw(stream, LaunchConfig::for_num_elems(1), std::ptr::null_mut(), 0);
}

fn main() {}
