//! Timing GPU work with CUDA events, as benchmarks do: the GPU's own clock between two points
//! of a stream, not the host's.

use cudarc::driver::{CudaEvent, CudaStream, sys};

use crate::driver::CudaContext;
use crate::error::Error;
use crate::module::synchronize;

/// A pair of timing events on one context.
#[derive(Debug)]
pub struct EventTimer {
    start: CudaEvent,
    end: CudaEvent,
}

impl EventTimer {
    /// Two events that record timestamps (cudarc's default events do not).
    pub fn new(ctx: &CudaContext) -> Result<Self, Error> {
        let event = || {
            ctx.new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(Error::from)
        };
        Ok(EventTimer {
            start: event()?,
            end: event()?,
        })
    }

    /// Milliseconds per repetition of `work` (which queues GPU work on `stream`), run `reps`
    /// times back to back between the two events. Waits for the work; an error of `work`
    /// or of the GPU (a fault) is returned as it is.
    pub fn time(
        &self,
        stream: &CudaStream,
        reps: u32,
        mut work: impl FnMut() -> Result<(), Error>,
    ) -> Result<f64, Error> {
        let reps = reps.max(1);
        self.start.record(stream).map_err(Error::from)?;
        for _ in 0..reps {
            work()?;
        }
        self.end.record(stream).map_err(Error::from)?;
        // A fault of `work` surfaces here, attributed to the kernel that caused it.
        synchronize(stream)?;
        let total = self.start.elapsed_ms(&self.end).map_err(Error::from)?;
        Ok(f64::from(total) / f64::from(reps))
    }
}

/// The median of `values` (the mean of the middle two for an even count); `None` when empty.
/// NaNs sort last.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        assert_eq!(median(&[f64::NAN, 1.0, 2.0]), Some(2.0));
    }
}
