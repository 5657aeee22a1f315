use cuda_device::gpu_printf;

pub fn missing(x: u32) {
    gpu_printf!("{} and {}\n", x);
}

pub fn unused(x: u32, y: u32) {
    gpu_printf!("{}\n", x, y);
}

fn main() {}
