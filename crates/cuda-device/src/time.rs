//! Clocks and sleeping.

use crate::intrinsic::stubs;

stubs! { "time";
    /// The SM's 32-bit cycle counter (`clock()`, PTX `%clock`). Intrinsic.
    pub fn clock() -> u32;
    /// The SM's 64-bit cycle counter (`clock64()`, PTX `%clock64`). Intrinsic.
    pub fn clock64() -> u64;
    /// A nanosecond timer shared by the whole GPU (PTX `%globaltimer`). Intrinsic.
    pub fn globaltimer() -> u64;
    /// Suspends the thread for about `ns` nanoseconds, at most a millisecond
    /// (`__nanosleep(ns)`, PTX `nanosleep.u32`; sm_70). Intrinsic.
    pub fn nanosleep(ns: u32);
}
