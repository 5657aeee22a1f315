use cuda_device::{kernel, launch_bounds};

#[kernel]
#[launch_bounds(0)]
pub fn none(a: &[f32]) {
    let _ = a;
}

fn main() {}
