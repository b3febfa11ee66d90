//! gzip and zlib as codecs/deflate.py decodes them, through the zlib CPython's zlib module runs
//! with (libz.rs finds it; configure() checks both report the same version):
//! `zlib.decompressobj(wbits).decompress(data, max_length)` is inflate(Z_SYNC_FLUSH) until the
//! output reaches max_length, the stream ends, or the input runs out.

use std::cell::RefCell;
use std::ffi::{c_uint, c_void};

use crate::common::{u32le, DErr, DRes, Decoded};
use crate::libz::{Libz, ZStream, Z_BUF_ERROR, Z_OK, Z_STREAM_END, Z_SYNC_FLUSH};

pub const GZIP_MAGIC: &[u8] = b"\x1f\x8b\x08";

/// The zlib version the module runs with (the configure check compares it with Python's), None
/// where the process has no zlib to load: gzip and zlib are then handed back.
pub fn version() -> Option<String> {
    crate::libz::version()
}

unsafe extern "C" fn zalloc(_opaque: *mut c_void, items: c_uint, size: c_uint) -> *mut c_void {
    // SAFETY: plain C allocation, freed by zfree.
    unsafe { libc::calloc(items as libc::size_t, size as libc::size_t) }
}

unsafe extern "C" fn zfree(_opaque: *mut c_void, address: *mut c_void) {
    // SAFETY: `address` came from zalloc.
    unsafe { libc::free(address) }
}

struct Stream {
    libz: &'static Libz,
    strm: Box<ZStream>,
    wbits: i32,
}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: the stream was initialised by inflateInit2_ of the same zlib.
        unsafe {
            (self.libz.inflate_end)(&mut *self.strm);
        }
    }
}

fn new_stream(wbits: i32) -> Result<Stream, DErr> {
    let libz = crate::libz::get().ok_or(DErr::HandBack)?;
    let mut strm = Box::new(ZStream {
        next_in: std::ptr::null(),
        avail_in: 0,
        total_in: 0,
        next_out: std::ptr::null_mut(),
        avail_out: 0,
        total_out: 0,
        msg: std::ptr::null(),
        state: std::ptr::null_mut(),
        zalloc: Some(zalloc),
        zfree: Some(zfree),
        opaque: std::ptr::null_mut(),
        data_type: 0,
        adler: 0,
        reserved: 0,
    });
    // SAFETY: a zeroed stream with allocators; the version string is zlib's own, the size the
    // struct's (zlib refuses a size that is not its own).
    let size = std::mem::size_of::<ZStream>() as libc::c_int;
    let code = unsafe { (libz.inflate_init2)(&mut *strm, wbits, (libz.version)(), size) };
    if code != Z_OK {
        return Err(DErr::HandBack);
    }
    Ok(Stream { libz, strm, wbits })
}

thread_local! {
    /// One inflate stream per thread and window setting, reset for each decompressobj().
    static STREAMS: RefCell<Vec<Stream>> = const { RefCell::new(Vec::new()) };
}

/// What decompressobj(wbits).decompress(data, max_length) leaves: output, eof, unused_data's
/// offset in `data` (at eof).
struct Inflated {
    out: Vec<u8>,
    eof: bool,
    consumed: usize,
}

fn decompress(data: &[u8], wbits: i32, max_length: usize) -> Result<Inflated, DErr> {
    if data.len() > u32::MAX as usize || max_length == 0 {
        return Err(DErr::HandBack); // CPython feeds >4 GiB in pieces; max_length 0 means no cap
    }
    STREAMS.with(|cell| {
        let mut streams = cell.borrow_mut();
        let at = match streams.iter().position(|s| s.wbits == wbits) {
            Some(at) => {
                let stream = &mut streams[at];
                // SAFETY: an initialised stream.
                if unsafe { (stream.libz.inflate_reset2)(&mut *stream.strm, wbits) } != Z_OK {
                    streams.remove(at);
                    return Err(DErr::HandBack);
                }
                at
            }
            None => {
                streams.push(new_stream(wbits)?);
                streams.len() - 1
            }
        };
        let libz = streams[at].libz;
        let strm = &mut *streams[at].strm;
        strm.next_in = data.as_ptr();
        strm.avail_in = data.len() as c_uint;
        let mut out: Vec<u8> = Vec::new();
        // CPython grows its output in blocks from 32 KiB; where inflate stops for room changes
        // nothing it decodes: here the first block fits a small value.
        let mut block: usize = (data.len() * 4).clamp(1024, 32 << 10);
        let mut err;
        loop {
            if out.len() == max_length {
                // the output reached max_length: CPython stops before inflating again
                err = Z_OK;
                break;
            }
            let room = block.min(max_length - out.len());
            out.reserve(room);
            let start = out.len();
            // SAFETY: next_out points at `room` bytes of out's spare capacity (reserved above).
            strm.next_out = unsafe { out.as_mut_ptr().add(start) };
            strm.avail_out = room as c_uint;
            // SAFETY: an initialised stream whose buffers are set above.
            err = unsafe { (libz.inflate)(strm, Z_SYNC_FLUSH) };
            let produced = room - strm.avail_out as usize;
            // SAFETY: zlib initialised `produced` bytes at start.
            unsafe { out.set_len(start + produced) };
            if err != Z_OK && err != Z_BUF_ERROR && err != Z_STREAM_END {
                strm.next_in = std::ptr::null();
                strm.next_out = std::ptr::null_mut();
                return Err(DErr::Fail);
            }
            if strm.avail_out != 0 {
                break;
            }
            if out.len() == max_length {
                break;
            }
            block = (block * 2).min(8 << 20);
        }
        let consumed = data.len() - strm.avail_in as usize;
        strm.next_in = std::ptr::null();
        strm.next_out = std::ptr::null_mut();
        Ok(Inflated { out, eof: err == Z_STREAM_END, consumed })
    })
}

/// _common.capped_step: (output, stopped by the cap, unused_data offset); a stream that ends
/// early is a DecodeError.
fn capped_step(data: &[u8], wbits: i32, left: usize) -> Result<(Vec<u8>, bool, usize), DErr> {
    let inflated = decompress(data, wbits, left)?;
    if inflated.eof {
        return Ok((inflated.out, false, inflated.consumed));
    }
    if inflated.out.len() >= left {
        return Ok((inflated.out, true, inflated.consumed));
    }
    Err(DErr::Fail)
}

pub fn gzip_matches(data: &[u8]) -> bool {
    data.len() >= 18 && data.starts_with(GZIP_MAGIC) && data[3] & 0xE0 == 0
}

/// Gzip.decode (members may follow each other; zero padding or other bytes may trail).
pub fn gzip_decode(data: &[u8], cap: usize) -> DRes {
    if data.len() < 18 {
        return Err(DErr::Fail);
    }
    if cap == 0 {
        return Ok(Decoded { data: Vec::new(), truncated: true });
    }
    let (mut out, cut, consumed) = capped_step(data, 31, cap)?;
    let mut rest = if cut { &data[data.len()..] } else { &data[consumed..] };
    if cut || rest.is_empty() {
        return Ok(Decoded { data: out, truncated: cut });
    }
    let mut left = cap - out.len();
    let mut truncated = false;
    while !rest.is_empty() {
        if !rest.starts_with(GZIP_MAGIC) {
            // zero padding, or trailing bytes: the members read so far are the value
            return Ok(Decoded { data: out, truncated: false });
        }
        if left == 0 {
            truncated = true;
            break;
        }
        let (piece, cut, consumed) = capped_step(rest, 31, left)?;
        left -= piece.len();
        out.extend_from_slice(&piece);
        truncated = cut;
        if cut {
            break;
        }
        rest = &rest[consumed..];
    }
    Ok(Decoded { data: out, truncated })
}

fn zlib_header_ok(data: &[u8]) -> bool {
    if data.len() < 2 {
        return false;
    }
    let (cmf, flg) = (data[0] as u32, data[1] as u32);
    cmf & 0x0F == 8 && cmf >> 4 <= 7 && (cmf << 8 | flg) % 31 == 0
}

pub fn zlib_matches(data: &[u8]) -> bool {
    zlib_header_ok(data)
}

/// Zlib.decode. A stream with a preset dictionary (FDICT) is handed back: the Python side's
/// answer (Undecodable or DecodeError) depends on a trial against a dummy dictionary.
pub fn zlib_decode(data: &[u8], cap: usize) -> DRes {
    if !zlib_header_ok(data) {
        return Err(DErr::Fail);
    }
    if data[1] & 0x20 != 0 {
        return Err(DErr::HandBack);
    }
    if cap == 0 {
        return Ok(Decoded { data: Vec::new(), truncated: true });
    }
    let (out, cut, _) = capped_step(data, 15, cap)?;
    Ok(Decoded { data: out, truncated: cut })
}

/// Zlib.trial (the base trial: the decode, None on a DecodeError).
pub fn zlib_trial(data: &[u8], cap: usize) -> Result<Option<Decoded>, DErr> {
    match zlib_decode(data, cap) {
        Ok(dec) => Ok(Some(dec)),
        Err(DErr::Fail) => Ok(None),
        Err(other) => Err(other),
    }
}

/// Gzip.declared_size: ISIZE, trusted only where deflate could have made the stored bytes from
/// it (at most 5 bytes of expansion per 16 KiB stored block, at most 1032:1 compression).
pub fn gzip_declared_size(data: &[u8]) -> Option<u64> {
    let n = data.len();
    if n < 18 || data[3] & 0xE0 != 0 {
        return None;
    }
    let isize = u32le(data, n - 4) as u64;
    let body = (n - 18) as u64;
    if isize + 5 * (isize / 16384 + 1) < body || isize > 1032 * body {
        return None;
    }
    Some(isize)
}

/// Gzip.peek: `decompressobj(31).decompress(data, n)`; Ok(None) where zlib raises.
pub fn gzip_peek(data: &[u8], n: usize) -> Result<Option<Vec<u8>>, DErr> {
    match decompress(data, 31, n) {
        Ok(inflated) => Ok(Some(inflated.out)),
        Err(DErr::Fail) | Err(DErr::Undecodable) => Ok(None),
        Err(DErr::HandBack) => Err(DErr::HandBack),
    }
}
