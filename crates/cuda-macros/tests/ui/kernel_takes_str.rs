#[cuda_macros::cuda_module]
mod kernels {
    use cuda_device::kernel;

    #[kernel]
    pub fn greet(name: &str, times: u32) {
        let _ = (name, times);
    }
}

fn main() {}
