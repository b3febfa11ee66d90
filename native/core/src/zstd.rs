//! zstd frames as codecs/zstd.py decodes them, with libzstd 1.5.7 (the release python zstandard
//! 0.25 bundles), driven with the same calls: a `decompressobj()` (one frame, output in
//! ZSTD_DStreamOutSize() pieces) or a `stream_reader(...).read(n)` over one frame. One
//! decompression context per thread, reset for each frame (as `ensure_dctx` does).

use std::cell::RefCell;

use zstd_sys::{
    ZSTD_DCtx, ZSTD_DCtx_reset, ZSTD_DStreamOutSize, ZSTD_ResetDirective, ZSTD_createDCtx,
    ZSTD_decompressStream, ZSTD_freeDCtx, ZSTD_inBuffer, ZSTD_isError, ZSTD_outBuffer,
};

use crate::common::{frame_sequence, skip_skippable, starts_at, u32le, u64le, DErr, DRes, Decoded, Frame};

pub const MAGIC: &[u8] = b"\x28\xb5\x2f\xfd";
const BLOCK_MAX: u64 = 128 << 10;

/// libzstd's release number (10507 for 1.5.7).
pub fn version() -> i64 {
    // SAFETY: returns a constant.
    unsafe { zstd_sys::ZSTD_versionNumber() as i64 }
}

struct Dctx(*mut ZSTD_DCtx);

impl Drop for Dctx {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createDCtx, freed once.
        unsafe {
            ZSTD_freeDCtx(self.0);
        }
    }
}

thread_local! {
    static DCTX: RefCell<Option<Dctx>> = const { RefCell::new(None) };
}

/// Runs `f` with the thread's context, reset for a new frame (session only, as python
/// zstandard's ensure_dctx).
fn with_dctx<T>(f: impl FnOnce(*mut ZSTD_DCtx) -> Result<T, DErr>) -> Result<T, DErr> {
    DCTX.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            // SAFETY: allocates a context; checked for null.
            let ctx = unsafe { ZSTD_createDCtx() };
            if ctx.is_null() {
                return Err(DErr::HandBack);
            }
            *slot = Some(Dctx(ctx));
        }
        let ctx = slot.as_ref().map(|c| c.0).ok_or(DErr::HandBack)?;
        // SAFETY: a valid context.
        let code = unsafe { ZSTD_DCtx_reset(ctx, ZSTD_ResetDirective::ZSTD_reset_session_only) };
        // SAFETY: reads the code only.
        if unsafe { ZSTD_isError(code) } != 0 {
            return Err(DErr::HandBack);
        }
        f(ctx)
    })
}

/// One ZSTD_decompressStream call: writes into out[pos..pos+room] (spare capacity reserved by
/// the caller) and advances `input_pos`. Err(HandBack) on a libzstd error: a frame it refuses may
/// be one made with a raw-content dictionary (none named in the frame), which the Python side's
/// store may hold, or whose want of one it tells from corruption (zstd.NEEDS_DICTIONARY).
fn stream_call(
    ctx: *mut ZSTD_DCtx,
    out: &mut Vec<u8>,
    room: usize,
    src: &[u8],
    input_pos: &mut usize,
) -> Result<usize, DErr> {
    let start = out.len();
    out.reserve(room);
    let mut output = ZSTD_outBuffer { dst: out.as_mut_ptr().cast(), size: start + room, pos: start };
    let mut input = ZSTD_inBuffer { src: src.as_ptr().cast(), size: src.len(), pos: *input_pos };
    // SAFETY: the output buffer spans out's allocation up to start + room (reserved above), the
    // input buffer spans src; libzstd writes within output.size and reads within input.size.
    let code = unsafe { ZSTD_decompressStream(ctx, &mut output, &mut input) };
    // SAFETY: libzstd initialised out[start..output.pos].
    unsafe { out.set_len(output.pos) };
    *input_pos = input.pos;
    // SAFETY: reads the code only.
    if unsafe { ZSTD_isError(code) } != 0 {
        return Err(DErr::HandBack);
    }
    Ok(code)
}

/// `dctx.decompressobj().decompress(src)`: (output, eof, bytes consumed).
fn decompressobj(src: &[u8]) -> Result<(Vec<u8>, bool, usize), DErr> {
    if src.is_empty() {
        return Ok((Vec::new(), false, 0));
    }
    with_dctx(|ctx| {
        // python zstandard offers ZSTD_DStreamOutSize() bytes of room per call; the room changes
        // when libzstd returns, not what it decodes: here it starts small and doubles (a value of
        // a few hundred bytes needs no 128 KiB buffer).
        // SAFETY: a constant of the library.
        let most = unsafe { ZSTD_DStreamOutSize() };
        let mut piece = most.min(4096.max(src.len() * 4));
        let mut out: Vec<u8> = Vec::new();
        let mut pos = 0usize;
        loop {
            let before = out.len();
            let code = stream_call(ctx, &mut out, piece, src, &mut pos)?;
            piece = (piece * 2).min(most);
            let produced = out.len() - before;
            if code == 0 {
                return Ok((out, true, pos));
            }
            if pos == src.len() && produced == 0 {
                return Ok((out, false, pos));
            }
        }
    })
}

/// `dctx.stream_reader(frame)` read as _frame_at reads it: read(left - got) until `left`
/// bytes or an empty read, then one read(1) when `left` was reached. (output, more after).
fn stream_reader(frame: &[u8], left: usize) -> Result<(Vec<u8>, bool), DErr> {
    with_dctx(|ctx| {
        let mut reader = Reader { ctx, src: frame, pos: 0, started: false, finished_input: false };
        let mut out: Vec<u8> = Vec::new();
        while out.len() < left {
            let want = left - out.len();
            let got = reader.read(&mut out, want)?;
            if got == 0 {
                break;
            }
        }
        if out.len() >= left {
            let mut probe: Vec<u8> = Vec::new();
            let more = reader.read(&mut probe, 1)? > 0;
            return Ok((out, more));
        }
        Ok((out, false))
    })
}

/// python zstandard's ZstdDecompressionReader over a buffer: its read(size) loop.
struct Reader<'a> {
    ctx: *mut ZSTD_DCtx,
    src: &'a [u8],
    pos: usize,
    started: bool,
    finished_input: bool,
}

impl Reader<'_> {
    fn read(&mut self, out: &mut Vec<u8>, size: usize) -> Result<usize, DErr> {
        let start = out.len();
        out.reserve(size);
        loop {
            // decompress_input: only with input left
            if self.started && self.pos < self.src.len() {
                let done = out.len() - start;
                let code = stream_call(self.ctx, out, size - done, self.src, &mut self.pos)?;
                if self.pos == self.src.len() {
                    self.finished_input = true;
                }
                let done = out.len() - start;
                if done > 0 && done == size {
                    return Ok(done);
                }
                if done > 0 && code == 0 {
                    return Ok(done);
                }
            }
            // read_decompressor_input: the buffer is handed over once
            if !self.finished_input && !self.started {
                self.started = true;
            }
            if self.started && !self.finished_input && self.pos < self.src.len() {
                continue;
            }
            return Ok(out.len() - start);
        }
    }
}

struct Header {
    length: usize,
    window: u64,
    dict_id: u64,
    content_size: Option<u64>,
    checksum: bool,
}

fn header(data: &[u8], pos: usize) -> Result<Header, DErr> {
    let n = data.len();
    if n - pos < 6 {
        return Err(DErr::Fail);
    }
    let fhd = data[pos + 4];
    if fhd & 0x08 != 0 {
        return Err(DErr::Fail);
    }
    let fcs_flag = fhd >> 6;
    let single = fhd & 0x20 != 0;
    let mut p = pos + 5;
    let mut window: u64 = 0;
    if !single {
        let wd = data[p];
        let exp = (wd >> 3) as u32 + 10;
        window = (1u64 << exp) + ((1u64 << exp) >> 3) * (wd & 7) as u64;
        p += 1;
    }
    let did_size = [0usize, 1, 2, 4][(fhd & 3) as usize];
    let fcs_size = [if single { 1usize } else { 0 }, 2, 4, 8][fcs_flag as usize];
    if n - p < did_size + fcs_size {
        return Err(DErr::Fail);
    }
    let mut dict_id: u64 = 0;
    for i in 0..did_size {
        dict_id |= (data[p + i] as u64) << (8 * i);
    }
    p += did_size;
    let mut content_size = None;
    if fcs_size > 0 {
        let mut fcs: u64 = 0;
        for i in 0..fcs_size {
            fcs |= (data[p + i] as u64) << (8 * i);
        }
        if fcs_size == 2 {
            fcs += 256;
        }
        content_size = Some(fcs);
        p += fcs_size;
    }
    Ok(Header {
        length: p - pos,
        window: if single { content_size.unwrap_or(0) } else { window },
        dict_id,
        content_size,
        checksum: fhd & 0x04 != 0,
    })
}

/// zstd._walk: (frame end, most output the blocks can produce).
fn walk(data: &[u8], p: usize, hdr: &Header) -> Result<(usize, u64), DErr> {
    let n = data.len() as u64;
    let block_max = if hdr.window == 0 { BLOCK_MAX } else { hdr.window.min(BLOCK_MAX) };
    let mut bound: u64 = 0;
    let mut p = p as u64;
    loop {
        if n - p < 3 {
            return Err(DErr::Fail);
        }
        let i = p as usize;
        let h = data[i] as u64 | (data[i + 1] as u64) << 8 | (data[i + 2] as u64) << 16;
        let btype = (h >> 1) & 3;
        let size = h >> 3;
        match btype {
            0 => {
                p += 3 + size;
                bound += size;
            }
            1 => {
                p += 4;
                bound += size;
            }
            2 => {
                p += 3 + size;
                bound += block_max;
            }
            _ => return Err(DErr::Fail),
        }
        if p > n {
            return Err(DErr::Fail);
        }
        if h & 1 != 0 {
            break;
        }
    }
    if hdr.checksum {
        p += 4;
        if p > n {
            return Err(DErr::Fail);
        }
    }
    Ok((p as usize, bound))
}

/// zstd._single_frame_bound.
fn single_frame_bound(data: &[u8], p: usize, wd: u8) -> u64 {
    let exp = (wd >> 3) as u32 + 10;
    let block_max = ((1u64 << exp) + ((1u64 << exp) >> 3) * (wd & 7) as u64).min(BLOCK_MAX);
    let n = data.len();
    let mut bound: u64 = 0;
    let mut p = p as u64;
    while p + 3 <= n as u64 {
        let i = p as usize;
        let h = data[i] as u64 | (data[i + 1] as u64) << 8 | (data[i + 2] as u64) << 16;
        let btype = h & 6;
        if btype == 2 {
            p += 4;
            bound += h >> 3;
        } else {
            p += 3 + (h >> 3);
            bound += if btype == 0 { h >> 3 } else { block_max };
        }
        if h & 1 != 0 {
            if data[4] & 4 != 0 {
                p += 4;
            }
            return if p == n as u64 { bound } else { 1 << 62 };
        }
    }
    1 << 62
}

fn whole(src: &[u8]) -> Result<(Vec<u8>, usize), DErr> {
    let (out, eof, used) = decompressobj(src)?;
    if !eof {
        return Err(DErr::Fail);
    }
    Ok((out, used))
}

fn frame_at(data: &[u8], pos: usize, left: usize) -> Result<Option<Frame>, DErr> {
    if !starts_at(data, pos, MAGIC) {
        return Ok(None);
    }
    let hdr = header(data, pos)?;
    if hdr.dict_id != 0 {
        // The Python side holds the dictionary store: it reads the frame (a frame read with a
        // dictionary and no checksum is unverified there: `unchecked`), or names the missing ID.
        return Err(DErr::HandBack);
    }
    let fcs = hdr.content_size;
    if left == 0 {
        return Ok(Some(Frame { out: Vec::new(), end: pos, truncated: true }));
    }
    if let Some(c) = fcs {
        if c <= left as u64 {
            let (out, used) = whole(&data[pos..])?;
            return Ok(Some(Frame { out, end: pos + used, truncated: false }));
        }
    }
    let (end, bound) = walk(data, pos + hdr.length, &hdr)?;
    if let Some(c) = fcs {
        if c > bound {
            return Err(DErr::Fail);
        }
    }
    if bound <= left as u64 {
        let (out, _used) = whole(&data[pos..])?;
        return Ok(Some(Frame { out, end, truncated: false }));
    }
    let (out, more) = stream_reader(&data[pos..end], left)?;
    if out.len() >= left && more {
        return Ok(Some(Frame { out, end, truncated: true }));
    }
    if let Some(c) = fcs {
        if out.len() as u64 != c {
            return Err(DErr::Fail);
        }
    }
    Ok(Some(Frame { out, end, truncated: false }))
}

pub fn matches(data: &[u8]) -> bool {
    if data.starts_with(MAGIC) {
        return true;
    }
    let pos = skip_skippable(data, 0);
    0 < pos && (pos as usize == data.len() || starts_at(data, pos as usize, MAGIC))
}

/// ZstdFrame.decode.
pub fn decode(data: &[u8], cap: usize) -> DRes {
    let fhd = if data.len() > 14 { data[4] } else { 0x08 };
    if fhd & 0x0B == 0 && data.starts_with(MAGIC) {
        let fcs_flag = fhd >> 6;
        let p = if fhd & 0x20 != 0 { 5 } else { 6 };
        let fcs: Option<u64> = match fcs_flag {
            0 => {
                if fhd & 0x20 != 0 {
                    Some(data[p] as u64)
                } else {
                    None
                }
            }
            1 => Some((data[p] as u64 | (data[p + 1] as u64) << 8) + 256),
            2 => Some(u32le(data, p) as u64),
            _ => Some(u64le(data, p)),
        };
        let fits = match fcs {
            None => single_frame_bound(data, 6, data[5]) <= cap as u64,
            Some(c) => c <= cap as u64,
        };
        if fits {
            let (out, eof, used) = decompressobj(data)?;
            if eof && used == data.len() {
                return Ok(Decoded::whole(out));
            }
        }
    }
    frame_sequence(data, cap, true, frame_at)
}

/// ZstdFrame.declared_size: the frame's content size, trusted only when its blocks can produce
/// it and the frame ends the value (None otherwise, or for a frame naming a dictionary).
pub fn declared_size(data: &[u8]) -> Option<u64> {
    let hdr = header(data, 0).ok()?;
    if hdr.dict_id != 0 {
        return None;
    }
    let size = hdr.content_size?;
    let (end, bound) = walk(data, hdr.length, &hdr).ok()?;
    (end == data.len() && size <= bound).then_some(size)
}

/// ZstdFrame.first_byte: the content's first byte from the first block's header and first
/// literal (zstd_first.rs); None for a frame naming a dictionary, carrying a content checksum, or
/// whose first block does not tell. (Python asks libzstd first where the literals are
/// Huffman-coded, being slower at reading the table: the same byte wherever libzstd decodes the
/// block, and zstd_first.py's reading, this one, where it does not.)
pub fn first_byte(data: &[u8]) -> Option<u8> {
    if !data.starts_with(MAGIC) {
        return None;
    }
    let hdr = header(data, 0).ok()?;
    let p = hdr.length;
    if hdr.dict_id != 0 || hdr.checksum || data.len() - p < 4 {
        return None;
    }
    let h = data[p] as usize | (data[p + 1] as usize) << 8 | (data[p + 2] as usize) << 16;
    let (kind, size) = ((h >> 1) & 3, h >> 3);
    match kind {
        2 => crate::zstd_first::first_literal(data.get(p + 3..p + 3 + size)?),
        0 | 1 if size > 0 => Some(data[p + 3]),
        _ => None,
    }
}

/// ZstdFrame.peek: `dctx.stream_reader(data).read(n)` (the first block decoded); Ok(None)
/// where the library raises.
pub fn peek(data: &[u8], n: usize) -> Result<Option<Vec<u8>>, DErr> {
    if data.starts_with(MAGIC) && header(data, 0).map(|h| h.dict_id != 0).unwrap_or(false) {
        return Err(DErr::HandBack); // a frame naming a dictionary: the Python side's store
    }
    with_dctx(|ctx| {
        let mut reader = Reader { ctx, src: data, pos: 0, started: false, finished_input: false };
        let mut out: Vec<u8> = Vec::new();
        match reader.read(&mut out, n) {
            Ok(_) => Ok(Some(out)),
            Err(DErr::Fail) | Err(DErr::Undecodable) => Ok(None),
            Err(DErr::HandBack) => Err(DErr::HandBack),
        }
    })
}
