// A graph's state holds buffers and parameters; a parameter struct goes in as `ByValue`.
use std::sync::Arc;

use cuda_host::{ByValue, CudaSlice, CudaStream, Graph};

#[derive(Clone, Copy)]
struct Params {
    scale: f32,
}

fn record(stream: &Arc<CudaStream>, data: CudaSlice<f32>, data2: CudaSlice<f32>) {
    let params = Params { scale: 2.0 };
    let _ = Graph::capture(stream, (data, ByValue(params)), |_, (_, p)| {
        let _ = p.0.scale;
        Ok(())
    });
    // A struct that is not a `GraphState`.
    let _ = Graph::capture(stream, (data2, params), |_, _| Ok(()));
}

fn main() {}
