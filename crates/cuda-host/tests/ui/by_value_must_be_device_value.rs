use cuda_host::{CudaStream, LaunchConfig, cuda_module};

#[cuda_module]
mod kernels {
    use cuda_device::kernel;

    pub struct Config {
        pub name: String,
    }

    #[kernel]
    pub fn configured(config: Config) {
        let _ = config;
    }
}

fn launch(module: &kernels::Module, stream: &CudaStream) {
    let config = kernels::Config { name: String::new() };
    let _ = module.configured(stream, LaunchConfig::for_num_elems(1), config);
}

fn main() {}
