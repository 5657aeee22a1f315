//! Bringing an instantiated graph up to date after its state changed: [`Graph::state_mut`]
//! marks it stale, and [`Graph::update`] records the sequence again and asks the driver to
//! update the instance in place (`cuGraphExecUpdate`), or instantiates it anew.

use cudarc::driver::{result, sys};

use crate::error::Error;
use crate::fault::classify;
use crate::graph::recording::destroy_graph;
use crate::graph::state::GraphState;

use super::Graph;

/// How [`Graph::update`] brought the instantiated graph up to date.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Update {
    /// The driver changed the parameters of the instantiated graph in place.
    InPlace,
    /// The driver could not (the reason is its own): the graph was instantiated again.
    Reinstantiated {
        /// Why the driver refused to update in place.
        reason: &'static str,
    },
}

/// `cuGraphExecUpdate_v2`'s result, read as plain integers (a newer driver may return a reason
/// that the bindings' enum does not name).
#[repr(C)]
struct UpdateResultInfo {
    result: u32,
    error_node: sys::CUgraphNode,
    error_from_node: sys::CUgraphNode,
}

fn update_refusal(code: u32) -> &'static str {
    match code {
        2 => "the sequence of launches and copies changed",
        3 => "a launch became a copy, or the reverse",
        4 => "a launch runs a different kernel",
        5 => "a copy or memset changed in a way an update cannot express",
        6 => "the graph holds work the driver cannot update",
        7 => "the kernel changed in a way an update cannot express",
        8 => "a launch's attributes changed",
        _ => "the driver gave no reason",
    }
}

impl<S: GraphState> Graph<'_, S> {
    /// The state, to change parameters or buffers: the next launch records the sequence
    /// again, and the driver updates the graph in place when it can.
    pub fn state_mut(&mut self) -> &mut S {
        self.stale = true;
        &mut self.state
    }

    /// The state, to write new contents into its buffers between replays, keeping the
    /// recording: the graph is not recorded again, so a changed parameter is not seen (use
    /// [`Graph::state_mut`] for that). Replacing a buffer the recording uses makes the next
    /// launch fail.
    pub fn buffers_mut(&mut self) -> &mut S {
        &mut self.state
    }

    /// Records the sequence again (with the state as it is now) and updates the instantiated
    /// graph: in place when the driver allows (only parameters changed), else by
    /// instantiating it anew.
    pub fn update(&mut self) -> Result<Update, Error> {
        let recorded = self.record()?;
        let mut info = UpdateResultInfo {
            result: 0,
            error_node: std::ptr::null_mut(),
            error_from_node: std::ptr::null_mut(),
        };
        // SAFETY: both handles are valid; `info` has the layout of
        // `CUgraphExecUpdateResultInfo` (a 32-bit result, then two node handles).
        let updated =
            unsafe { sys::cuGraphExecUpdate_v2(self.exec, recorded, (&raw mut info).cast()) }
                .result();
        let outcome = match updated {
            Ok(()) => Ok(Update::InPlace),
            Err(cudarc::driver::DriverError(
                sys::CUresult::CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
            )) => {
                // SAFETY: as in `capture`.
                let exec = unsafe {
                    result::graph::instantiate(recorded, sys::CUgraphInstantiate_flags(0))
                }
                .map_err(|e| classify(e, "cuGraphInstantiate"));
                exec.map(|exec| {
                    // SAFETY: the old exec is replaced; in-flight replays of it finish first.
                    let _ = unsafe { result::graph::exec_destroy(self.exec) };
                    self.exec = exec;
                    Update::Reinstantiated {
                        reason: update_refusal(info.result),
                    }
                })
            }
            Err(e) => Err(classify(e, "cuGraphExecUpdate")),
        };
        // SAFETY: the recorded graph is no longer needed.
        unsafe { destroy_graph(recorded) };
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_of_an_update_are_explained() {
        assert_eq!(
            update_refusal(2),
            "the sequence of launches and copies changed"
        );
        assert_eq!(update_refusal(99), "the driver gave no reason");
        assert_eq!(
            size_of::<UpdateResultInfo>(),
            size_of::<sys::CUgraphExecUpdateResultInfo>()
        );
    }
}
