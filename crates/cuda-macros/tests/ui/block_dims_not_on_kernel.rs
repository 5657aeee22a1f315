use cuda_device::block_dims;

#[block_dims(32, 8)]
pub fn helper(a: &[f32]) {
    let _ = a;
}

fn main() {}
