//! The zlib the process already runs with, found at run time rather than linked: CPython's zlib
//! module links libz.so.1 on most Pythons (Debian's, the official images', pyenv's, conda's), so
//! by the time the core is configured that library is loaded, and its inflate is the one the
//! Python engine decodes with: the same answers by construction. Linking a zlib instead would tie
//! the module to one (a manylinux wheel may not link the system's libz, and a bundled copy would
//! be another release than CPython's). Where no libz.so.1 is loaded yet (a Python with zlib built
//! in, or the core's own tests), the system's libz.so.1 is loaded; either way the registry's check
//! (registry.rs: `zlib_version` equals `version()`) decides whether gzip and zlib values are read
//! here or handed back to the Python engine.

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void, CStr};
use std::sync::OnceLock;

pub type AllocFn = unsafe extern "C" fn(opaque: *mut c_void, items: c_uint, size: c_uint) -> *mut c_void;
pub type FreeFn = unsafe extern "C" fn(opaque: *mut c_void, address: *mut c_void);

/// zlib.h's `z_stream`, unchanged since zlib 1.0 (inflateInit2_ checks the size it is given).
#[repr(C)]
pub struct ZStream {
    pub next_in: *const u8,
    pub avail_in: c_uint,
    pub total_in: c_ulong,
    pub next_out: *mut u8,
    pub avail_out: c_uint,
    pub total_out: c_ulong,
    pub msg: *const c_char,
    pub state: *mut c_void,
    pub zalloc: Option<AllocFn>,
    pub zfree: Option<FreeFn>,
    pub opaque: *mut c_void,
    pub data_type: c_int,
    pub adler: c_ulong,
    pub reserved: c_ulong,
}

pub const Z_OK: c_int = 0;
pub const Z_STREAM_END: c_int = 1;
pub const Z_BUF_ERROR: c_int = -5;
pub const Z_SYNC_FLUSH: c_int = 2;

/// zlib.h's signatures of the entry points deflate.rs calls.
pub type VersionFn = unsafe extern "C" fn() -> *const c_char;
pub type InflateInit2Fn = unsafe extern "C" fn(*mut ZStream, c_int, *const c_char, c_int) -> c_int;
pub type InflateFn = unsafe extern "C" fn(*mut ZStream, c_int) -> c_int;
pub type InflateReset2Fn = unsafe extern "C" fn(*mut ZStream, c_int) -> c_int;
pub type InflateEndFn = unsafe extern "C" fn(*mut ZStream) -> c_int;

/// The entry points deflate.rs calls.
pub struct Libz {
    pub version: VersionFn,
    pub inflate_init2: InflateInit2Fn,
    pub inflate: InflateFn,
    pub inflate_reset2: InflateReset2Fn,
    pub inflate_end: InflateEndFn,
}

/// The shared library's name, as CPython's zlib module names it (DT_NEEDED).
#[cfg(target_os = "macos")]
const SONAME: &CStr = c"libz.1.dylib";
#[cfg(not(target_os = "macos"))]
const SONAME: &CStr = c"libz.so.1";

static FOUND: OnceLock<Libz> = OnceLock::new();

/// The process's zlib, or None where there is no libz to load. A miss is not kept: a later call
/// (the next configure) looks again.
pub fn get() -> Option<&'static Libz> {
    if let Some(found) = FOUND.get() {
        return Some(found);
    }
    let found = find()?;
    Some(FOUND.get_or_init(|| found))
}

fn find() -> Option<Libz> {
    // SAFETY: dlopen with a NUL-terminated name; RTLD_NOLOAD only hands back a library already
    // loaded. The handle is never closed: the library stays for the process, as CPython's does.
    let handle = unsafe {
        let loaded = libc::dlopen(SONAME.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD);
        if loaded.is_null() {
            libc::dlopen(SONAME.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL)
        } else {
            loaded
        }
    };
    if handle.is_null() {
        return None;
    }
    let symbol = |name: &CStr| {
        // SAFETY: a live handle and a NUL-terminated name.
        let address = unsafe { libc::dlsym(handle, name.as_ptr()) };
        (!address.is_null()).then_some(address)
    };
    // SAFETY: each address is zlib's function of that name, whose C signature zlib.h declares
    // as the field's type.
    unsafe {
        Some(Libz {
            version: std::mem::transmute::<*mut c_void, VersionFn>(symbol(c"zlibVersion")?),
            inflate_init2: std::mem::transmute::<*mut c_void, InflateInit2Fn>(symbol(c"inflateInit2_")?),
            inflate: std::mem::transmute::<*mut c_void, InflateFn>(symbol(c"inflate")?),
            inflate_reset2: std::mem::transmute::<*mut c_void, InflateReset2Fn>(symbol(c"inflateReset2")?),
            inflate_end: std::mem::transmute::<*mut c_void, InflateEndFn>(symbol(c"inflateEnd")?),
        })
    }
}

/// The release of the process's zlib (zlibVersion()), None where none could be loaded.
pub fn version() -> Option<String> {
    let libz = get()?;
    // SAFETY: zlibVersion returns a static NUL-terminated string.
    let text = unsafe { CStr::from_ptr((libz.version)()) };
    Some(text.to_string_lossy().into_owned())
}
