//! Panics at a value's boundary: the value is handed back and the panic counted (a bug, which
//! the tests assert never happens), never printed in the middle of the shell's output.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

static PANICS: AtomicU64 = AtomicU64::new(0);
static HOOK: Once = Once::new();

/// Counts panics instead of printing them (once per process).
pub fn quiet_panics() {
    HOOK.call_once(|| {
        std::panic::set_hook(Box::new(|_| {
            PANICS.fetch_add(1, Ordering::Relaxed);
        }));
    });
}

/// How many values panicked since the process started (each was handed back).
pub fn panics() -> u64 {
    PANICS.load(Ordering::Relaxed)
}

/// `read` at a value's boundary: None when it panicked (the LZ4 context it may have left
/// mid-frame is replaced).
pub fn guarded<T>(read: impl FnOnce() -> T) -> Option<T> {
    match catch_unwind(AssertUnwindSafe(read)) {
        Ok(answer) => Some(answer),
        Err(_) => {
            crate::lz4::abandon();
            None
        }
    }
}
