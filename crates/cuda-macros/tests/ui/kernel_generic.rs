use cuda_device::kernel;

#[kernel]
pub fn fill<T: Copy>(a: &[T]) {
    let _ = a;
}

fn main() {}
