#[cuda_macros::cuda_module]
mod kernels {
    use cuda_device::kernel;

    #[kernel]
    pub fn fill<T: Copy>(a: &[T]) {
        let _ = a;
    }
}

fn main() {}
