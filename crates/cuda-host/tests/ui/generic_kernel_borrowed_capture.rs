use cuda_host::{CudaSlice, CudaStream, LaunchConfig, cuda_module};

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel};

    #[kernel]
    pub fn map<F: Fn(f32) -> f32>(x: &[f32], y: DisjointSlice<f32>, f: F) {
        let _ = (x, y, f);
    }
}

fn launch(module: &kernels::Module, stream: &CudaStream, x: &CudaSlice<f32>, y: &mut CudaSlice<f32>) {
    let cfg = LaunchConfig::for_num_elems(1);
    let name = String::from("n");
    let name_ref = &name;
    let _ = module.map(stream, cfg, x, y, move |v| v * name_ref.len() as f32);
}

fn main() {}
