//! Views as kernel arguments, CUDA graphs of typed launches, events and the completion future,
//! end to end. On a machine without a GPU only the error paths that need none run.

#[macro_use]
mod common;

use common::kernels::{self, Affine};
use cuda_host::{ByValue, Error, Event, Graph, GraphError, LaunchConfig, Update};

embed_handwritten_ptx!(
    "cuda_oxide_ptx_5b2f6726 (the kernels of this crate were not compiled: build it with `cargo oxide build` or `cargo oxide run`, not plain cargo)",
    "cuda_oxide_ptx_len_5b2f6726 (the kernels of this crate were not compiled: build it with `cargo oxide build` or `cargo oxide run`, not plain cargo)",
    "cuda_oxide_cubin_5b2f6726 (the kernels of this crate were not compiled: build it with `cargo oxide build` or `cargo oxide run`, not plain cargo)",
    "cuda_oxide_cubin_len_5b2f6726 (the kernels of this crate were not compiled: build it with `cargo oxide build` or `cargo oxide run`, not plain cargo)",
    "cuda_oxide_cpu_5b2f6726 (the kernels of this crate were not compiled: build it with `cargo oxide build` or `cargo oxide run`, not plain cargo)"
);

#[test]
fn views_are_launched_as_slices_of_their_own_length() -> Result<(), Box<dyn std::error::Error>> {
    let Some(ctx) = common::gpu() else {
        return Ok(());
    };
    let stream = ctx.default_stream();
    let module = kernels::load(&ctx)?;
    let a_host: Vec<f32> = (0..1000).map(|i| i as f32).collect();
    let a = stream.clone_htod(&a_host)?;
    let mut c = stream.alloc_zeros::<f32>(1000)?;
    // c[100..300] = a[0..200] + a[500..700]; the kernel sees slices of 200 elements.
    module.vecadd(
        &stream,
        LaunchConfig::for_num_elems(256),
        &a.slice(0..200),
        &a.slice(500..700),
        &mut c.slice_mut(100..300),
    )?;
    let got = stream.clone_dtoh(&c)?;
    for (i, value) in got.iter().enumerate() {
        let expected = if (100..300).contains(&i) {
            a_host[i - 100] + a_host[i + 400]
        } else {
            0.0
        };
        assert_eq!(*value, expected, "c[{i}]");
    }
    Ok(())
}

#[test]
fn graphs_replay_update_and_refuse_foreign_buffers() -> Result<(), Box<dyn std::error::Error>> {
    let Some(ctx) = common::gpu() else {
        return Ok(());
    };
    let module = kernels::load(&ctx)?;
    let default = ctx.default_stream();
    let refused = Graph::capture(&default, (), |_, _| Ok(()));
    assert!(matches!(
        refused,
        Err(Error::Graph(GraphError::DefaultStream))
    ));

    let stream = ctx.new_stream()?;
    let n = 1000;
    let cfg = LaunchConfig::for_num_elems(n as u32);
    let ones = stream.clone_htod(&vec![1.0f32; n])?;
    let state = (
        stream.alloc_zeros::<f32>(n)?,
        ByValue(Affine {
            scale: 2.0,
            shift: 0.0,
        }),
    );
    let mut graph = Graph::capture(&stream, state, |capture, (data, p)| {
        module.affine(capture.stream(), cfg, data, p.0)?;
        capture.zero(&mut data.slice_mut(0..1))
    })?;
    assert_eq!(graph.kernels(), ["affine"]);
    assert_eq!(graph.len(), 2);

    let empty = Graph::capture(&stream, (), |_, _| Ok(()));
    assert!(matches!(empty, Err(Error::Graph(GraphError::Empty))));
    let foreign = Graph::capture(
        &stream,
        (stream.alloc_zeros::<f32>(n)?,),
        |capture, (out,)| module.vecadd(capture.stream(), cfg, &ones, &ones, out),
    );
    assert!(
        matches!(foreign, Err(Error::Graph(GraphError::NotInState { .. }))),
        "{foreign:?}"
    );

    // data = 2 * data + 0, then data[0] = 0: a fixed point at 0; start from ones.
    stream.memcpy_htod(&vec![1.0f32; n], &mut graph.buffers_mut().0)?;
    graph.launch()?;
    graph.launch()?;
    let got = stream.clone_dtoh(&graph.state().0)?;
    assert_eq!(got[0], 0.0);
    assert!(got[1..].iter().all(|&x| x == 4.0), "{:?}", &got[..4]);

    graph.state_mut().1 = ByValue(Affine {
        scale: 1.0,
        shift: 3.0,
    });
    assert_eq!(graph.update()?, Update::InPlace);
    graph.launch()?;
    let got = stream.clone_dtoh(&graph.state().0)?;
    assert!(got[1..].iter().all(|&x| x == 7.0), "{:?}", &got[..4]);

    // Events order a second stream after the graph; the completion future resolves.
    let other = ctx.new_stream()?;
    let replayed = Event::new(&ctx)?;
    graph.launch()?;
    replayed.record(&stream)?;
    replayed.wait_in(&other)?;
    let mut copy = other.alloc_zeros::<f32>(n)?;
    other.memcpy_dtod(&graph.state().0, &mut copy)?;
    cuda_host::completion(&other)?.wait()?;
    assert!(other.clone_dtoh(&copy)?[1..].iter().all(|&x| x == 10.0));
    let state = graph.into_state();
    assert_eq!(state.1.0.shift, 3.0);
    Ok(())
}
