//! Stream capture and CUDA graphs on the CPU: while a stream captures, the work queued on it
//! is recorded (a launch with a copy of its parameters' bytes) instead of run; a graph is the
//! recorded work, and launching an instance of it runs that work in order.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Mutex;

use crate::image::Kernel;

/// One piece of recorded work.
#[derive(Clone)]
pub(crate) enum Work {
    Launch {
        kernel: *const Kernel,
        grid: [u32; 3],
        block: [u32; 3],
        /// The bytes of each parameter, copied when the launch was queued.
        params: Vec<Vec<u8>>,
    },
    Copy {
        dst: usize,
        src: usize,
        bytes: usize,
    },
    Fill8 {
        dst: usize,
        value: u8,
        count: usize,
    },
    Fill32 {
        dst: usize,
        value: u32,
        count: usize,
    },
    Host {
        function: unsafe extern "C" fn(*mut c_void),
        data: usize,
    },
}

// SAFETY: the pointers are kernels of modules loaded for good and device or host addresses
// the program gave; work is run on the thread that launches the graph.
unsafe impl Send for Work {}

/// A graph, and an instance of one: the work, in order.
#[derive(Clone, Default)]
pub(crate) struct Graph {
    pub(crate) work: Vec<Work>,
}

impl Graph {
    /// Whether `other` has this graph's shape: the same work in the same order, launches of
    /// the same kernels (what `cuGraphExecUpdate` can update in place: parameters, sizes and
    /// addresses may differ).
    pub(crate) fn same_shape(&self, other: &Graph) -> bool {
        self.work.len() == other.work.len()
            && self.work.iter().zip(&other.work).all(|pair| match pair {
                (Work::Launch { kernel: a, .. }, Work::Launch { kernel: b, .. }) => a == b,
                (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
            })
    }
}

/// The streams capturing now (by handle), with what they recorded.
static CAPTURING: Mutex<Option<HashMap<usize, Graph>>> = Mutex::new(None);

fn capturing<R>(f: impl FnOnce(&mut HashMap<usize, Graph>) -> R) -> R {
    f(CAPTURING
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new))
}

/// Starts recording `stream`'s work; false when it already records.
pub(crate) fn begin(stream: usize) -> bool {
    capturing(|streams| {
        if streams.contains_key(&stream) {
            return false;
        }
        streams.insert(stream, Graph::default());
        true
    })
}

/// Stops recording `stream`: what it recorded, or `None` when it was not capturing.
pub(crate) fn end(stream: usize) -> Option<Graph> {
    capturing(|streams| streams.remove(&stream))
}

/// Whether `stream` records its work now.
pub(crate) fn is_capturing(stream: usize) -> bool {
    capturing(|streams| streams.contains_key(&stream))
}

/// Records `work` when `stream` captures (then true), else leaves it to be run (false).
pub(crate) fn record(stream: usize, work: impl FnOnce() -> Work) -> bool {
    capturing(|streams| match streams.get_mut(&stream) {
        Some(graph) => {
            graph.work.push(work());
            true
        }
        None => false,
    })
}
