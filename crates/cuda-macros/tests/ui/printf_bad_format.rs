use cuda_device::gpu_printf;

pub fn f(x: f32) {
    gpu_printf!("x = {:^8}\n", x);
}

fn main() {}
