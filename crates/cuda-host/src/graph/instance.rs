//! Instantiating and replaying a graph: [`Graph::capture`] records the sequence and
//! instantiates it, and every replay first checks that the state still holds all the memory
//! the recording touches, ordering the replay around the buffers' other uses.

use std::marker::PhantomData;
use std::sync::Arc;

use cudarc::driver::{CudaStream, result, sys};

use crate::error::Error;
use crate::failure::{DriverFailure, is_fault};
use crate::fault::{classify, fault};
use crate::graph::error::GraphError;
use crate::graph::recording::{Access, Capture, Op, destroy_graph, record_on};
use crate::graph::state::{GraphState, StateVisitor};
use crate::inflight;

use super::Graph;

impl<'a, S: GraphState> Graph<'a, S> {
    /// Records the work `record` queues on [`Capture::stream`] (launches through the generated
    /// launchers, copies through the `Capture`) into a graph, and instantiates it for replays
    /// on `stream`. `state` holds every buffer the work uses; `record` gets it mutably, and is
    /// kept to record again after [`Graph::state_mut`].
    ///
    /// Nothing runs while recording: the first [`Graph::launch`] runs the work.
    pub fn capture<F>(stream: &Arc<CudaStream>, state: S, record: F) -> Result<Self, Error>
    where
        F: FnMut(&Capture<'_>, &mut S) -> Result<(), Error> + 'a,
    {
        if stream.cu_stream().is_null() {
            return Err(GraphError::DefaultStream.into());
        }
        let side = stream
            .context()
            .new_stream()
            .map_err(|e| classify(e, "creating the graph's bookkeeping stream"))?;
        let mut graph = Graph {
            stream: Arc::clone(stream),
            side,
            state,
            recorder: Box::new(record),
            exec: std::ptr::null_mut(),
            ops: Vec::new(),
            kernels: Vec::new(),
            stale: false,
            _not_sync: PhantomData,
        };
        let recorded = graph.record()?;
        // SAFETY: `recorded` is a graph the driver just made, used nowhere else.
        let exec =
            unsafe { result::graph::instantiate(recorded, sys::CUgraphInstantiate_flags(0)) };
        // SAFETY: an instantiated graph does not need its source graph.
        unsafe { destroy_graph(recorded) };
        graph.exec = exec.map_err(|e| classify(e, "cuGraphInstantiate"))?;
        // SAFETY: the exec was just instantiated on the stream's context.
        unsafe { result::graph::upload(graph.exec, graph.stream.cu_stream()) }
            .map_err(|e| classify(e, "cuGraphUpload"))?;
        Ok(graph)
    }

    /// Runs the recording closure in a capture; the recorded graph, checked against the state.
    pub(super) fn record(&mut self) -> Result<sys::CUgraph, Error> {
        let (graph, ops) = record_on(&self.stream, &self.side, |capture| {
            (self.recorder)(capture, &mut self.state)
        })?;
        let checked = if ops.is_empty() || graph.is_null() {
            Err(GraphError::Empty.into())
        } else {
            let side = Arc::clone(&self.side);
            let held = self.held(&side);
            check_ops(&ops, &held, "")
        };
        if let Err(error) = checked {
            // SAFETY: the graph was just made and is not used.
            unsafe { destroy_graph(graph) };
            return Err(error);
        }
        self.kernels = distinct_kernels(&ops);
        self.ops = ops;
        self.stale = false;
        Ok(graph)
    }

    /// The memory the state holds, located for `stream` (waiting there for earlier uses and
    /// recording a use of every buffer).
    fn held(&mut self, stream: &CudaStream) -> Vec<Access> {
        let mut visitor = StateVisitor::new(stream);
        self.state.visit(&mut visitor);
        visitor.into_held()
    }

    /// Queues one replay of the graph on the stream it was captured on. Returns once it is
    /// queued; a fault of one of its kernels surfaces at the next synchronisation.
    pub fn launch(&mut self) -> Result<(), Error> {
        let stream = Arc::clone(&self.stream);
        self.launch_on(&stream)
    }

    /// Queues one replay on `stream` (any stream of the graph's context).
    pub fn launch_on(&mut self, stream: &CudaStream) -> Result<(), Error> {
        if stream.context().cu_ctx() != self.stream.context().cu_ctx() {
            return Err(Error::Driver {
                call: "cuGraphLaunch (the stream belongs to another context than the graph)",
                source: DriverFailure(sys::CUresult::CUDA_ERROR_INVALID_CONTEXT),
            });
        }
        if self.stale {
            self.update()?;
        }
        stream
            .context()
            .bind_to_thread()
            .map_err(|e| classify(e, "binding the context to this thread"))?;
        // Waits for earlier uses of the state's buffers, and checks that they still hold all
        // the memory the recording touches (interior mutability could have replaced one).
        let held = self.held(stream);
        check_ops(
            &self.ops,
            &held,
            " since the graph was recorded; after replacing a buffer of the state, record \
             again with `update()`",
        )?;
        // SAFETY: the exec belongs to the stream's context (checked above), which is bound.
        let launched = unsafe { result::graph::launch(self.exec, stream.cu_stream()) };
        // Records the replay's use of every buffer, after it.
        self.held(stream);
        match launched {
            Ok(()) => {
                inflight::launched(stream, &self.kernels);
                Ok(())
            }
            Err(e) => {
                let source = DriverFailure::from(e);
                Err(if is_fault(&source) {
                    fault(source, Some(inflight::context_of(stream)))
                } else {
                    Error::Driver {
                        call: "cuGraphLaunch",
                        source,
                    }
                })
            }
        }
    }

    pub(super) fn destroy_exec(&mut self) {
        if !self.exec.is_null() && self.stream.context().bind_to_thread().is_ok() {
            // SAFETY: the exec is owned by this graph; in-flight replays finish first.
            let _ = unsafe { result::graph::exec_destroy(self.exec) };
        }
        self.exec = std::ptr::null_mut();
    }
}

fn distinct_kernels(ops: &[Op]) -> Vec<&'static str> {
    let mut kernels = Vec::new();
    for kernel in ops.iter().filter_map(Op::kernel) {
        if !kernels.contains(&kernel) {
            kernels.push(kernel);
        }
    }
    kernels
}

/// Checks that every access of `ops` lies inside memory `held` by the state.
fn check_ops(ops: &[Op], held: &[Access], since: &'static str) -> Result<(), Error> {
    for op in ops {
        for access in &op.accesses {
            if access.bytes == 0 || held.iter().any(|h| access.within(h)) {
                continue;
            }
            let hint = if !since.is_empty() {
                since
            } else if access.writes
                && held.iter().any(|h| {
                    Access {
                        writes: false,
                        ..*access
                    }
                    .within(h)
                })
            {
                "the state holds this buffer only for reading (`&CudaSlice`); hold it as \
                 `CudaSlice` or `&mut CudaSlice`"
            } else {
                "put every buffer the graph uses in its state (the value given to \
                 `Graph::capture`), and use it through the closure's second argument"
            };
            return Err(GraphError::NotInState {
                op: op.describe(),
                writes: access.writes,
                host: access.host,
                start: access.start,
                bytes: access.bytes,
                hint,
            }
            .into());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::recording::OpKind;

    fn op(kernel: &'static str, accesses: Vec<Access>) -> Op {
        Op {
            kind: OpKind::Kernel(kernel),
            accesses,
        }
    }

    #[test]
    fn work_must_lie_inside_the_states_buffers() {
        let held = [
            Access::device(0x1000, 4096, true),
            Access::device(0x9000, 256, false),
            Access::host(0x7000 as *const u8, 64, true),
        ];
        let inside = op(
            "step",
            vec![
                Access::device(0x1000, 4096, true),
                Access::device(0x1100, 16, false),
                Access::device(0x9000, 256, false),
                Access::host(0x7010 as *const u8, 16, false),
                // An empty buffer touches nothing, wherever it points.
                Access::device(0, 0, true),
            ],
        );
        assert!(check_ops(&[inside], &held, "").is_ok());

        let past_the_end = op("step", vec![Access::device(0x1f00, 512, false)]);
        let error = check_ops(&[past_the_end], &held, "")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with(
                "kernel `step` in the graph reads 512 bytes of device memory at 0x1f00"
            ),
            "{error}"
        );
        assert!(
            error.contains("put every buffer the graph uses in its state"),
            "{error}"
        );

        let writes_read_only = op("step", vec![Access::device(0x9000, 4, true)]);
        let error = check_ops(&[writes_read_only], &held, "")
            .unwrap_err()
            .to_string();
        assert!(error.contains("writes 4 bytes"), "{error}");
        assert!(error.contains("only for reading"), "{error}");

        // Host and device addresses are different spaces.
        let host_as_device = op("step", vec![Access::device(0x7000, 8, false)]);
        assert!(check_ops(&[host_as_device], &held, "").is_err());

        let copy = Op {
            kind: OpKind::Copy("a host-to-device copy"),
            accesses: vec![Access::host(0x100 as *const u8, 8, false)],
        };
        let error = check_ops(&[copy], &held, " since").unwrap_err().to_string();
        assert!(
            error.starts_with(
                "a host-to-device copy in the graph reads 8 bytes of pinned host memory"
            ),
            "{error}"
        );
    }

    #[test]
    fn an_access_that_wraps_around_is_outside() {
        let held = [Access::device(0x1000, 4096, true)];
        let wraps = op("k", vec![Access::device(u64::MAX - 4, 16, false)]);
        assert!(check_ops(&[wraps], &held, "").is_err());
    }

    #[test]
    fn kernels_are_listed_once_for_fault_reports() {
        let ops = [
            op("a", vec![]),
            Op {
                kind: OpKind::Copy("a memset to zero"),
                accesses: vec![],
            },
            op("b", vec![]),
            op("a", vec![]),
        ];
        assert_eq!(distinct_kernels(&ops), vec!["a", "b"]);
    }
}
