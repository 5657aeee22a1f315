use cuda_host::{CudaSlice, CudaStream, LaunchConfig, cuda_module};

#[cuda_module]
mod kernels {
    use cuda_device::{DisjointSlice, kernel};

    #[kernel]
    pub fn map<F: Fn(f32) -> f32 + Copy>(x: &[f32], y: DisjointSlice<f32>, f: F) {
        let _ = (x, y, f);
    }

    #[kernel]
    pub fn fill<T: Copy>(value: T, out: DisjointSlice<u32>) {
        let _ = (value, out);
    }
}

fn launch(module: &kernels::Module, stream: &CudaStream, x: &CudaSlice<f32>, y: &mut CudaSlice<f32>) {
    let cfg = LaunchConfig::for_num_elems(1);
    let table = vec![1.0f32; 4];
    let _ = module.map(stream, cfg, x, y, move |v| v * table[0]);
    let boxed = Box::new(2.0f32);
    let _ = module.map(stream, cfg, x, y, move |v| v * *boxed);
    let name = String::from("n");
    let name_ref = &name;
    let _ = module.map(stream, cfg, x, y, move |v| v * name_ref.len() as f32);
}

fn launch_fill(module: &kernels::Module, stream: &CudaStream, out: &mut CudaSlice<u32>) {
    let cfg = LaunchConfig::for_num_elems(1);
    let _ = module.fill::<String>(stream, cfg, String::new(), out);
}

fn main() {}
