use cuda_device::cluster_dims;

#[cluster_dims(2)]
pub fn helper(a: &[f32]) {
    let _ = a;
}

fn main() {}
