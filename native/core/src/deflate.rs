//! gzip and zlib as codecs/deflate.py decodes them, through the zlib CPython's zlib module runs
//! with (libz.rs finds it; configure() checks both report the same version):
//! `zlib.decompressobj(wbits).decompress(data, max_length)` is inflate(Z_SYNC_FLUSH) until the
//! output reaches max_length, the stream ends, or the input runs out.
//!
//! A whole gzip member or zlib stream is first inflated in one call by libdeflate's decompressor
//! (compiled by build.rs, narrowed to refuse what zlib rejects and libdeflate would decode: static
//! Huffman blocks, incomplete codes, more than 286 litlen or 30 offset symbols). Its answer is
//! kept only where zlib's would be the same value: the stream decoded whole, within the budget,
//! checksums and sizes checked, with no member after it; any other outcome (bad data, no room, a
//! preset dictionary, a header CRC, another member, a cut) is zlib's answer, decoded below.

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

/// libdeflate's decompressor (libdeflate.h), one per thread: it holds no stream between calls.
mod fast {
    use std::ffi::{c_int, c_void};

    #[repr(C)]
    pub struct Decompressor {
        _opaque: [u8; 0],
    }

    pub const SUCCESS: c_int = 0;
    pub const INSUFFICIENT_SPACE: c_int = 3;

    pub type DecompressEx = unsafe extern "C" fn(
        d: *mut Decompressor,
        input: *const c_void,
        in_nbytes: usize,
        out: *mut c_void,
        out_nbytes_avail: usize,
        actual_in_nbytes_ret: *mut usize,
        actual_out_nbytes_ret: *mut usize,
    ) -> c_int;

    extern "C" {
        fn libdeflate_alloc_decompressor() -> *mut Decompressor;
        fn libdeflate_free_decompressor(d: *mut Decompressor);
        pub fn libdeflate_gzip_decompress_ex(
            d: *mut Decompressor,
            input: *const c_void,
            in_nbytes: usize,
            out: *mut c_void,
            out_nbytes_avail: usize,
            actual_in_nbytes_ret: *mut usize,
            actual_out_nbytes_ret: *mut usize,
        ) -> c_int;
        pub fn libdeflate_zlib_decompress_ex(
            d: *mut Decompressor,
            input: *const c_void,
            in_nbytes: usize,
            out: *mut c_void,
            out_nbytes_avail: usize,
            actual_in_nbytes_ret: *mut usize,
            actual_out_nbytes_ret: *mut usize,
        ) -> c_int;
    }

    struct Owned(*mut Decompressor);

    impl Drop for Owned {
        fn drop(&mut self) {
            if !self.0.is_null() {
                // SAFETY: allocated by libdeflate_alloc_decompressor, freed once.
                unsafe { libdeflate_free_decompressor(self.0) }
            }
        }
    }

    thread_local! {
        // SAFETY: libdeflate_alloc_decompressor takes nothing and answers a decompressor or null.
        static DECOMPRESSOR: Owned = Owned(unsafe { libdeflate_alloc_decompressor() });
    }

    /// One call of `decompress` into `capacity` bytes: (code, output, input consumed).
    pub fn inflate(
        decompress: DecompressEx,
        data: &[u8],
        capacity: usize,
    ) -> Option<(c_int, Vec<u8>, usize)> {
        DECOMPRESSOR
            .try_with(|owned| {
                if owned.0.is_null() {
                    return None;
                }
                let mut out: Vec<u8> = Vec::with_capacity(capacity);
                let (mut consumed, mut produced) = (0usize, 0usize);
                // SAFETY: the decompressor is this thread's own (no call runs inside another); libdeflate
                // reads `data.len()` bytes of `data`, writes at most `capacity` bytes into out's spare
                // capacity (reserved above) and both counts.
                let code = unsafe {
                    decompress(
                        owned.0,
                        data.as_ptr().cast(),
                        data.len(),
                        out.as_mut_ptr().cast(),
                        capacity,
                        &mut consumed,
                        &mut produced,
                    )
                };
                if code == SUCCESS {
                    if produced > capacity || consumed > data.len() {
                        return None;
                    }
                    // SAFETY: on success libdeflate wrote `produced` bytes (at most `capacity`).
                    unsafe { out.set_len(produced) };
                }
                Some((code, out, consumed))
            })
            .ok()
            .flatten()
    }
}

/// The fast path of gzip_decode: the first member whole, where it is the value (no member after
/// it) and its declared size (ISIZE, plausible for the stored bytes) is within the budget; None
/// where zlib decides.
fn gzip_fast(data: &[u8], cap: usize) -> Option<Decoded> {
    // FHCRC: zlib checks the header's CRC, libdeflate skips it.
    if data[3] & 0x02 != 0 || data.len() > u32::MAX as usize || crate::libz::get().is_none() {
        return None;
    }
    // a first block of static codes (small values): libdeflate as narrowed refuses it
    if data[3] == 0 && (data[10] >> 1) & 3 == 1 {
        return None;
    }
    let size = usize::try_from(gzip_declared_size(data)?).ok()?;
    if size > cap {
        return None;
    }
    let (code, out, consumed) = fast::inflate(fast::libdeflate_gzip_decompress_ex, data, size)?;
    if code != fast::SUCCESS || out.len() != size || data[consumed..].starts_with(GZIP_MAGIC) {
        return None;
    }
    Some(Decoded { data: out, truncated: false })
}

/// The fast path of zlib_decode (no preset dictionary, a 32 KiB window): room for 8 times the
/// stored bytes, then 4 times more up to the budget; None where zlib decides (a stream longer
/// than the budget is zlib's cut).
fn zlib_fast(data: &[u8], cap: usize) -> Option<Decoded> {
    if data[0] >> 4 != 7 || data.len() > u32::MAX as usize || crate::libz::get().is_none() {
        return None;
    }
    if data.get(2).is_some_and(|first| (first >> 1) & 3 == 1) {
        return None; // a first block of static codes, as in gzip_fast
    }
    let mut capacity = data.len().saturating_mul(8).max(4096).min(cap);
    loop {
        let (code, out, _) = fast::inflate(fast::libdeflate_zlib_decompress_ex, data, capacity)?;
        if code == fast::SUCCESS {
            return Some(Decoded { data: out, truncated: false });
        }
        if code != fast::INSUFFICIENT_SPACE || capacity == cap {
            return None;
        }
        capacity = capacity.saturating_mul(4).min(cap);
    }
}

pub fn gzip_matches(data: &[u8]) -> bool {
    data.len() >= 18 && data.starts_with(GZIP_MAGIC) && data[3] & 0xE0 == 0
}

/// Gzip.decode (members may follow each other; zero padding or other bytes may trail).
pub fn gzip_decode(data: &[u8], cap: usize) -> DRes {
    gzip_decode_with(data, cap, true)
}

/// gzip_decode, with or without the fast path (the tests compare both).
fn gzip_decode_with(data: &[u8], cap: usize, fast: bool) -> DRes {
    if data.len() < 18 {
        return Err(DErr::Fail);
    }
    if cap == 0 {
        return Ok(Decoded { data: Vec::new(), truncated: true });
    }
    if let Some(decoded) = fast.then(|| gzip_fast(data, cap)).flatten() {
        return Ok(decoded);
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
    zlib_decode_with(data, cap, true)
}

/// zlib_decode, with or without the fast path (the tests compare both).
fn zlib_decode_with(data: &[u8], cap: usize, fast: bool) -> DRes {
    if !zlib_header_ok(data) {
        return Err(DErr::Fail);
    }
    if data[1] & 0x20 != 0 {
        return Err(DErr::HandBack);
    }
    if cap == 0 {
        return Ok(Decoded { data: Vec::new(), truncated: true });
    }
    if let Some(decoded) = fast.then(|| zlib_fast(data, cap)).flatten() {
        return Ok(decoded);
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

#[cfg(test)]
mod tests {
    //! The fast path against zlib alone: on real streams and on many mutated ones, both must give
    //! the same answer (output, cut, or error), and the fast path must answer the real ones.
    use super::*;
    use std::ffi::{c_int, c_ulong};

    type Compress2 = unsafe extern "C" fn(*mut u8, *mut c_ulong, *const u8, c_ulong, c_int) -> c_int;
    type Crc32 = unsafe extern "C" fn(c_ulong, *const u8, c_uint) -> c_ulong;

    fn libz_fn(name: &std::ffi::CStr) -> *mut c_void {
        // SAFETY: dlopen/dlsym with NUL-terminated names; the handle stays open.
        unsafe {
            let handle = libc::dlopen(c"libz.so.1".as_ptr(), libc::RTLD_NOW);
            assert!(!handle.is_null(), "libz.so.1");
            let address = libc::dlsym(handle, name.as_ptr());
            assert!(!address.is_null());
            address
        }
    }

    /// A zlib stream of `text` (zlib's compress2 at `level`).
    fn zlib_of(text: &[u8], level: c_int) -> Vec<u8> {
        // SAFETY: compress2's C signature (zlib.h).
        let compress2: Compress2 = unsafe { std::mem::transmute(libz_fn(c"compress2")) };
        let mut out = vec![0u8; text.len() + text.len() / 100 + 64];
        let mut n = out.len() as c_ulong;
        // SAFETY: out has n bytes of room.
        let code =
            unsafe { compress2(out.as_mut_ptr(), &mut n, text.as_ptr(), text.len() as c_ulong, level) };
        assert_eq!(code, Z_OK);
        out.truncate(n as usize);
        out
    }

    /// A gzip member of `text`: the raw deflate of zlib_of between gzip's header and trailer.
    fn gzip_of(text: &[u8], level: c_int) -> Vec<u8> {
        // SAFETY: crc32's C signature (zlib.h).
        let crc32: Crc32 = unsafe { std::mem::transmute(libz_fn(c"crc32")) };
        let z = zlib_of(text, level);
        let mut out = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03".to_vec();
        out.extend_from_slice(&z[2..z.len() - 4]);
        // SAFETY: text.len() bytes at text.
        let crc = unsafe { crc32(0, text.as_ptr(), text.len() as c_uint) } as u32;
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out
    }

    fn text(n: usize, seed: u64) -> Vec<u8> {
        let mut state = seed;
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let word = ["{\"id\": ", "\"name\": \"", "order", "\", ", "[1, 2, 3]", "}, ", "\n"];
            out.extend_from_slice(word[(state >> 33) as usize % word.len()].as_bytes());
            out.extend_from_slice((state >> 50).to_string().as_bytes());
        }
        out.truncate(n);
        out
    }

    fn same(a: &DRes, b: &DRes) -> bool {
        match (a, b) {
            (Ok(x), Ok(y)) => x.data == y.data && x.truncated == y.truncated,
            (Err(x), Err(y)) => x == y,
            _ => false,
        }
    }

    fn check(data: &[u8], cap: usize, what: &str) {
        let (fast, slow) = if data.starts_with(GZIP_MAGIC) {
            (gzip_decode_with(data, cap, true), gzip_decode_with(data, cap, false))
        } else {
            (zlib_decode_with(data, cap, true), zlib_decode_with(data, cap, false))
        };
        assert!(
            same(&fast, &slow),
            "{what}: fast {:?} zlib {:?}",
            fast.as_ref().map(|d| d.data.len()),
            slow.as_ref().map(|d| d.data.len())
        );
    }

    /// A raw deflate bit stream, LSB first (RFC 1951's order; Huffman codes given MSB first).
    struct Bits(Vec<u8>, u32);
    impl Bits {
        fn put(&mut self, value: u32, n: u32) {
            for i in 0..n {
                if self.1 % 8 == 0 {
                    self.0.push(0);
                }
                let last = self.0.len() - 1;
                self.0[last] |= (((value >> i) & 1) as u8) << (self.1 % 8);
                self.1 += 1;
            }
        }
        fn code(&mut self, code: u32, n: u32) {
            for i in (0..n).rev() {
                self.put((code >> i) & 1, 1);
            }
        }
    }

    fn zlib_wrap(raw: &[u8], adler: u32) -> Vec<u8> {
        let mut out = b"\x78\x9c".to_vec();
        out.extend_from_slice(raw);
        out.extend_from_slice(&adler.to_be_bytes());
        out
    }

    #[test]
    fn fast_path_answers_real_streams_as_zlib_does() {
        for (i, n) in [0usize, 1, 300, 5000, 40_000, 200_000].into_iter().enumerate() {
            let plain = text(n, i as u64);
            for level in [1, 6, 9] {
                let gz = gzip_of(&plain, level);
                let z = zlib_of(&plain, level);
                for data in [&gz, &z] {
                    let dec = if data.starts_with(GZIP_MAGIC) {
                        gzip_decode(data, 1 << 20)
                    } else {
                        zlib_decode(data, 1 << 20)
                    };
                    assert_eq!(dec.as_ref().map(|d| &d.data), Ok(&plain));
                    for cap in [1, n.max(1) - 1, n, n + 1, 1 << 20] {
                        check(data, cap.max(1), "real");
                    }
                }
                if n >= 5000 {
                    // the values the fast path is for: libdeflate answers them
                    assert!(
                        gzip_fast(&gz, 1 << 20).is_some() && zlib_fast(&z, 1 << 20).is_some(),
                        "{n} {level}"
                    );
                }
            }
        }
    }

    #[test]
    fn fast_path_and_zlib_agree_on_mutated_streams() {
        let mut state = 7u64;
        let mut next = |bound: usize| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) as usize % bound.max(1)
        };
        let mut cases = 0;
        for (i, n) in [200usize, 6000, 30_000].into_iter().enumerate() {
            let plain = text(n, 100 + i as u64);
            let gz = gzip_of(&plain, 6);
            let bases = [gz.clone(), zlib_of(&plain, 6), gzip_of(&plain, 1), zlib_of(&plain, 9)];
            for base in &bases {
                for _ in 0..400 {
                    let mut data = base.clone();
                    match next(8) {
                        0 | 1 | 2 => {
                            // bit flips, mostly in the first block's header and codes
                            for _ in 0..1 + next(3) {
                                let at =
                                    if next(2) == 0 { next(data.len().min(40)) } else { next(data.len()) };
                                data[at] ^= 1 << next(8);
                            }
                        }
                        3 => data.truncate(next(data.len())),
                        4 => {
                            // trailer bytes swapped or changed
                            let n = data.len();
                            data.swap(n - 1 - next(8), n - 1 - next(8));
                            data[n - 1 - next(8)] ^= 1 << next(8);
                        }
                        5 => data.extend_from_slice(
                            [&b"\0\0\0"[..], b"junk", &gz[..], &gz[..gz.len() / 2]][next(4)],
                        ),
                        6 if data.starts_with(GZIP_MAGIC) => {
                            data[3] |= [0x02, 0x04, 0x08, 0x10, 0x20][next(5)]
                        }
                        _ => {
                            // the first dynamic block's HLIT/HDIST at 29-31
                            let at = if data.starts_with(GZIP_MAGIC) { 10 } else { 2 };
                            data[at] = (data[at] & 0x07) | ((29 + next(3) as u8) << 3);
                            data[at + 1] = (data[at + 1] & 0xE0) | (29 + next(3) as u8);
                        }
                    }
                    if data.len() < 18 && data.starts_with(GZIP_MAGIC) {
                        continue;
                    }
                    for cap in [n, 1 << 20] {
                        check(&data, cap, "mutated");
                        cases += 1;
                    }
                }
            }
        }
        assert!(cases > 4000);
    }

    #[test]
    fn fast_path_refuses_what_zlib_rejects() {
        // A static block using the litlen symbol 286 (8 bits: 11000110) and the offset symbol 30
        // (5 bits: 11110): zlib rejects both, libdeflate as released decodes them.
        // (adler32 of n bytes 'a': what libdeflate as released decodes these to)
        let adler_of = |n: usize| {
            let (mut a, mut b) = (1u32, 0u32);
            for _ in 0..n {
                a = (a + u32::from(b'a')) % 65521;
                b = (b + a) % 65521;
            }
            b << 16 | a
        };
        // 'a', `copies` matches of length 258 at offset 1 (285: 11000101, offset 0: 00000), then
        // the symbol under test, the offset symbol with `extra` zero bits, the end of the block
        let fixed = |litlen: (u32, u32), offset: u32, extra: u32, copies: usize, n: usize| {
            let mut bits = Bits(Vec::new(), 0);
            bits.put(1, 1); // BFINAL
            bits.put(1, 2); // static
            bits.code(0x30 + u32::from(b'a'), 8); // 'a'
            for _ in 0..copies {
                bits.code(0b1100_0101, 8);
                bits.code(0, 5);
            }
            bits.code(litlen.0, litlen.1);
            bits.code(offset, 5);
            bits.put(0, extra);
            bits.code(0, 7); // end of block
            zlib_wrap(&bits.0, adler_of(n))
        };
        // the control: length 3 (257: 0000001), offset 1 (0): "aaaa", a static block zlib decodes
        let control = fixed((0b000_0001, 7), 0, 0, 0, 4);
        assert_eq!(zlib_decode(&control, 1 << 20).map(|d| d.data), Ok(b"aaaa".to_vec()));
        // 286 as length 258 (259 bytes); offset symbol 30 as 24,577 after 25,027 bytes (25,030)
        let symbols =
            [fixed((0b1100_0110, 8), 0, 0, 0, 259), fixed((0b000_0001, 7), 0b11110, 13, 97, 25_030)];
        for data in symbols {
            assert_eq!(zlib_decode(&data, 1 << 20).err(), Some(DErr::Fail));
            assert!(zlib_fast(&data, 1 << 20).is_none());
            check(&data, 1 << 20, "static");
        }
        // A dynamic block whose offset code is one codeword of length 1 ('0'), then a match using
        // the unused codeword '1': zlib's "invalid distance code"; libdeflate decodes it.
        let mut bits = Bits(Vec::new(), 0);
        bits.put(1, 1);
        bits.put(2, 2); // dynamic
        bits.put(1, 5); // HLIT: 258
        bits.put(0, 5); // HDIST: 1
        bits.put(15, 4); // HCLEN: 19 precode lengths
                         // precode: symbols 1, 2 and 18 (repeat zero) at 2 bits, 0 at 2 bits: codes 0:00 1:01 2:10 18:11
        let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
        for sym in order {
            bits.put(if [0, 1, 2, 18].contains(&sym) { 2 } else { 0 }, 3);
        }
        // litlen lengths: 'a' (97) 2 bits, 256 2 bits, 257 1 bit; the rest 0
        let mut lens = vec![0u32; 258];
        lens[97] = 2;
        lens[256] = 2;
        lens[257] = 1;
        lens.push(1); // the one offset codeword
        let mut i = 0;
        while i < lens.len() {
            let run = lens[i..].iter().take_while(|&&l| l == 0).count();
            if run >= 11 {
                let run = run.min(138);
                bits.code(0b11, 2);
                bits.put(run as u32 - 11, 7);
                i += run;
            } else {
                bits.code(lens[i], 2);
                i += 1;
            }
        }
        // litlen code: 257 '0', 97 '10', 256 '11'; offset: '0' only
        bits.code(0b10, 2); // 'a'
        bits.code(0b0, 1); // length 3
        let mut used = Bits(bits.0.clone(), bits.1);
        used.code(0b0, 1); // the offset codeword: the control, "aaaa"
        used.code(0b11, 2); // end of block
        let control = zlib_wrap(&used.0, adler_of(4));
        assert_eq!(zlib_decode(&control, 1 << 20).map(|d| d.data), Ok(b"aaaa".to_vec()));
        bits.code(0b1, 1); // the offset codeword the code leaves unused
        bits.code(0b11, 2); // end of block
        let data = zlib_wrap(&bits.0, adler_of(4));
        assert_eq!(zlib_decode(&data, 1 << 20).err(), Some(DErr::Fail));
        assert!(zlib_fast(&data, 1 << 20).is_none());
        check(&data, 1 << 20, "incomplete");
    }
}
