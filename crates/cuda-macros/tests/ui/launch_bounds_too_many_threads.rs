use cuda_device::{kernel, launch_bounds};

#[launch_bounds(2048, 1)]
#[kernel]
pub fn huge(a: &[f32]) {
    let _ = a;
}

fn main() {}
