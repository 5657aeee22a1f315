use cuda_device::gpu_printf;

pub fn hex_of_a_float(x: f32) {
    gpu_printf!("{:x}\n", x);
}

pub fn a_str_that_is_not_a_literal(name: &str) {
    gpu_printf!("{}\n", name);
}

pub fn a_pointer_with_display(p: *const u32) {
    gpu_printf!("{}\n", p);
}

pub fn precision_of_an_integer(n: u32) {
    gpu_printf!("{:.2}\n", n);
}

fn main() {}
