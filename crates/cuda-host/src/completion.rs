//! A future that completes when a stream reaches the point it was made at: `.await` GPU work
//! in async code without blocking the executor's thread.
//!
//! ```ignore
//! module.vecadd(&stream, cfg, &a, &b, &mut c)?;
//! cuda_host::completion(&stream)?.await?;      // the kernel has finished
//! let c = stream.clone_dtoh(&c)?;
//! ```
//!
//! It needs no runtime of its own: the driver calls back (`cuStreamAddCallback`, on a thread
//! of its own) when the stream gets there, and the callback wakes the task that awaits. The
//! callback is also made when earlier work failed, so a fault resolves the future with the
//! error rather than leaving it pending.

use std::ffi::c_void;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use cudarc::driver::{CudaStream, sys};

use crate::error::Error;
use crate::failure::{DriverFailure, is_fault};
use crate::fault::{classify, fault};
use crate::graph::error::GraphError;
use crate::graph::recording::recording_on;
use crate::inflight::{self, Point};

/// Where the stream is, as far as the callback has said.
#[derive(Debug)]
enum Progress {
    /// Not there yet; the waker of the task that polled last.
    Pending(Option<Waker>),
    /// There, with the status the driver passed (an error of earlier work, or success).
    Reached(sys::CUresult),
}

#[derive(Debug)]
struct Shared {
    progress: Mutex<Progress>,
    reached: Condvar,
}

impl Shared {
    fn progress(&self) -> MutexGuard<'_, Progress> {
        self.progress
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// What the callback does: note the status, wake whoever waits.
    fn reach(&self, status: sys::CUresult) {
        let waker = match std::mem::replace(&mut *self.progress(), Progress::Reached(status)) {
            Progress::Pending(waker) => waker,
            Progress::Reached(_) => None,
        };
        self.reached.notify_all();
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// Completes when the stream has finished the work queued before [`completion`] was called:
/// `Ok(())`, or the error of that work (a kernel fault, attributed as
/// [`crate::synchronize`] would). Also [`Completion::wait`] blocks the thread for it.
#[derive(Debug)]
#[must_use = "a completion does nothing unless awaited or waited for"]
pub struct Completion {
    shared: Arc<Shared>,
    point: Point,
    ctx: usize,
}

/// A future for the work queued on `stream` so far. Not available while the stream is being
/// captured into a graph (a graph's replays have their own completion: call this after
/// [`crate::Graph::launch`]).
pub fn completion(stream: &CudaStream) -> Result<Completion, Error> {
    if recording_on(stream).is_some() {
        return Err(GraphError::Capture {
            during: "asking for a completion".into(),
            source: DriverFailure(sys::CUresult::CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED),
        }
        .into());
    }
    stream
        .context()
        .bind_to_thread()
        .map_err(|e| classify(e, "binding the context to this thread"))?;
    let shared = Arc::new(Shared {
        progress: Mutex::new(Progress::Pending(None)),
        reached: Condvar::new(),
    });
    let point = inflight::point(stream);
    let data = Arc::into_raw(Arc::clone(&shared))
        .cast_mut()
        .cast::<c_void>();
    // SAFETY: `reached` matches `CUstreamCallback`; `data` is an `Arc<Shared>` reference that
    // the callback takes back exactly once. Flags must be 0.
    let added =
        unsafe { sys::cuStreamAddCallback(stream.cu_stream(), Some(reached), data, 0) }.result();
    if let Err(e) = added {
        // SAFETY: the driver refused the callback, so it will never run: take the reference back.
        drop(unsafe { Arc::from_raw(data.cast::<Shared>().cast_const()) });
        return Err(classify(e, "cuStreamAddCallback"));
    }
    Ok(Completion {
        shared,
        point,
        ctx: inflight::context_of(stream),
    })
}

/// The driver's callback: runs on a driver thread once the stream gets to it. Makes no CUDA
/// call (the driver forbids that here).
unsafe extern "C" fn reached(_stream: sys::CUstream, status: sys::CUresult, data: *mut c_void) {
    // SAFETY: `data` came from `Arc::into_raw` in `completion`, and the driver calls this once.
    let shared = unsafe { Arc::from_raw(data.cast::<Shared>().cast_const()) };
    shared.reach(status);
}

impl Completion {
    fn outcome(&self, status: sys::CUresult) -> Result<(), Error> {
        if status == sys::CUresult::CUDA_SUCCESS {
            inflight::finished(self.point);
            return Ok(());
        }
        let source = DriverFailure(status);
        Err(if is_fault(&source) {
            fault(source, Some(self.ctx))
        } else {
            Error::Driver {
                call: "the stream's work before the completion",
                source,
            }
        })
    }

    /// Whether the stream has got there, without waiting.
    pub fn is_complete(&self) -> bool {
        matches!(*self.shared.progress(), Progress::Reached(_))
    }

    /// Blocks the thread until the stream gets there.
    pub fn wait(self) -> Result<(), Error> {
        let mut progress = self.shared.progress();
        loop {
            if let Progress::Reached(status) = *progress {
                drop(progress);
                return self.outcome(status);
            }
            progress = self
                .shared
                .reached
                .wait(progress)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }
}

impl Future for Completion {
    type Output = Result<(), Error>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut progress = self.shared.progress();
        match &mut *progress {
            Progress::Reached(status) => {
                let status = *status;
                drop(progress);
                Poll::Ready(self.outcome(status))
            }
            Progress::Pending(waker) => {
                match waker {
                    Some(waker) if waker.will_wake(cx.waker()) => {}
                    _ => *waker = Some(cx.waker().clone()),
                }
                Poll::Pending
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    use super::*;

    struct CountingWaker(AtomicUsize);

    impl Wake for CountingWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A completion on context `ctx` whose callback the test calls itself (no GPU here). Each
    /// test uses its own context, as the in-flight ledger is shared.
    fn pending(ctx: usize) -> (Completion, *mut c_void) {
        let shared = Arc::new(Shared {
            progress: Mutex::new(Progress::Pending(None)),
            reached: Condvar::new(),
        });
        let data = Arc::into_raw(Arc::clone(&shared))
            .cast_mut()
            .cast::<c_void>();
        let completion = Completion {
            shared,
            point: inflight::tests::point_for_test(ctx, 10),
            ctx,
        };
        (completion, data)
    }

    #[test]
    fn the_callback_wakes_the_task_and_resolves_the_future() {
        let (mut completion, data) = pending(101);
        let counter = Arc::new(CountingWaker(AtomicUsize::new(0)));
        let waker = Waker::from(Arc::clone(&counter));
        let mut cx = Context::from_waker(&waker);
        assert!(Pin::new(&mut completion).poll(&mut cx).is_pending());
        assert!(Pin::new(&mut completion).poll(&mut cx).is_pending());
        assert!(!completion.is_complete());
        // SAFETY: `data` is the reference `pending` made for the callback, used once.
        unsafe { reached(std::ptr::null_mut(), sys::CUresult::CUDA_SUCCESS, data) };
        assert_eq!(counter.0.load(Ordering::SeqCst), 1);
        assert!(completion.is_complete());
        assert!(matches!(
            Pin::new(&mut completion).poll(&mut cx),
            Poll::Ready(Ok(()))
        ));
    }

    #[test]
    fn a_fault_before_the_point_resolves_it_with_the_error() {
        let _serial = inflight::tests::SERIAL
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        inflight::tests::reset();
        inflight::tests::noted(1, 10, &["trapping"]);
        let (completion, data) = pending(1);
        let waiter = std::thread::spawn(move || completion.wait());
        // SAFETY: as above, from another thread like the driver's.
        unsafe {
            reached(
                std::ptr::null_mut(),
                sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
                data,
            )
        };
        let error = waiter.join().unwrap().unwrap_err();
        assert!(
            matches!(
                error,
                Error::KernelFault {
                    kernel: "trapping",
                    ..
                }
            ),
            "{error:?}"
        );
        inflight::tests::reset();
    }

    #[test]
    fn a_callback_before_the_first_poll_is_not_lost() {
        let (mut completion, data) = pending(102);
        // SAFETY: as above.
        unsafe { reached(std::ptr::null_mut(), sys::CUresult::CUDA_SUCCESS, data) };
        let waker = Waker::from(Arc::new(CountingWaker(AtomicUsize::new(0))));
        let mut cx = Context::from_waker(&waker);
        assert!(matches!(
            Pin::new(&mut completion).poll(&mut cx),
            Poll::Ready(Ok(()))
        ));
    }
}
