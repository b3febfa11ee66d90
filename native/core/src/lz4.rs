//! The LZ4 family as codecs/lz4 (_native.py, block.py, frame.py) decodes it, with liblz4 1.9.4
//! (the release python-lz4 4.4.5 bundles): the raw block decoder python-lz4's
//! `lz4.block.decompress` calls and the LZ4F streaming decoder behind `lz4.frame.decompress_chunk`.

use std::cell::RefCell;

use lz4_sys::{
    LZ4FDecompressOptions, LZ4FDecompressionContext, LZ4F_createDecompressionContext, LZ4F_decompress,
    LZ4F_freeDecompressionContext, LZ4F_isError, LZ4_decompress_safe,
};

use crate::common::{
    frame_sequence, hadoop_decode, hadoop_matches, skip_skippable, starts_at, u32be, u32le, u64le, DErr,
    DRes, Decoded, Frame, Hadoop,
};

pub const FRAME_MAGIC: &[u8] = b"\x04\x22\x4d\x18";
pub const LEGACY_MAGIC: &[u8] = b"\x02\x21\x4c\x18";
pub const LZ4BLOCK_MAGIC: &[u8] = b"LZ4Block";
const LEGACY_BLOCK: u64 = 8 << 20;
const RATIO: u64 = 255;
const LZ4BLOCK_SEED: u32 = 0x9747_b28c;
const INT_MAX: u64 = i32::MAX as u64;

/// `lz4.block.decompress(buf, uncompressed_size=dst)`: LZ4_decompress_safe into `dst` bytes; the
/// output may be shorter (python-lz4 only checks the length when it read the size itself).
pub fn block(buf: &[u8], dst: u64) -> Result<Vec<u8>, DErr> {
    if buf.len() as u64 > INT_MAX || dst > INT_MAX {
        return Err(DErr::Fail);
    }
    let mut out: Vec<u8> = Vec::with_capacity(dst as usize);
    // SAFETY: LZ4_decompress_safe reads at most buf.len() bytes from buf and writes at most
    // `dst` bytes into out's spare capacity (reserved above); the length is set to what it wrote.
    let written = unsafe {
        LZ4_decompress_safe(
            buf.as_ptr() as *const libc::c_char,
            out.as_mut_ptr() as *mut libc::c_char,
            buf.len() as libc::c_int,
            dst as libc::c_int,
        )
    };
    if written < 0 {
        return Err(DErr::Fail);
    }
    // SAFETY: `written` <= dst bytes were initialised by the decoder.
    unsafe { out.set_len(written as usize) };
    Ok(out)
}

const TAIL: &[u8] = b"\x50\x00\x00\x00\x00\x00";

/// _native._capped_block: at most `limit` bytes of a raw block: (output, truncated).
pub fn capped_block(buf: &[u8], limit: u64) -> Result<(Vec<u8>, bool), DErr> {
    let n = buf.len();
    let mut pos = 0usize;
    let mut out: u64 = 0; // output length after the last whole sequence
    let mut seq_end = 0usize; // input offset after the last whole sequence
    let mut offset: u64 = 0; // the last match offset read (the crossing sequence's, when it has one)
    loop {
        if pos >= n {
            return Err(DErr::Fail);
        }
        let token = buf[pos];
        pos += 1;
        let mut ll = (token >> 4) as u64;
        if ll == 15 {
            loop {
                if pos >= n {
                    return Err(DErr::Fail);
                }
                let b = buf[pos];
                pos += 1;
                ll += b as u64;
                if b != 255 {
                    break;
                }
            }
        }
        let lit = pos;
        if pos as u64 + ll > n as u64 {
            return Err(DErr::Fail);
        }
        pos += ll as usize;
        if pos == n {
            // the last sequence: the whole block fits, or its literals cross the limit
            if out + ll <= limit {
                let whole = block(buf, out + ll)?;
                if whole.len() as u64 != out + ll {
                    return Err(DErr::Fail);
                }
                return Ok((whole, false));
            }
            return finish(buf, limit, out, seq_end, lit, ll, offset);
        }
        if n - pos < 2 {
            return Err(DErr::Fail);
        }
        offset = buf[pos] as u64 | (buf[pos + 1] as u64) << 8;
        pos += 2;
        let mut ml = (token & 15) as u64;
        if ml == 15 {
            loop {
                if pos >= n {
                    return Err(DErr::Fail);
                }
                let b = buf[pos];
                pos += 1;
                ml += b as u64;
                if b != 255 {
                    break;
                }
            }
        }
        ml += 4;
        if offset == 0 || offset > out + ll {
            return Err(DErr::Fail); // liblz4 accepts offset 0: the Python side rejects it here
        }
        if out + ll + ml >= limit {
            return finish(buf, limit, out, seq_end, lit, ll, offset);
        }
        out += ll + ml;
        seq_end = pos;
    }
}

/// The end of _capped_block: the whole sequences natively, the crossing one by hand.
fn finish(
    buf: &[u8],
    limit: u64,
    out: u64,
    seq_end: usize,
    lit: usize,
    ll: u64,
    offset: u64,
) -> Result<(Vec<u8>, bool), DErr> {
    let mut res: Vec<u8> = if seq_end > 0 {
        let mut head_in = buf[..seq_end].to_vec();
        head_in.extend_from_slice(TAIL);
        let head = block(&head_in, out + 64)?;
        if head.len() as u64 != out + 5 {
            return Err(DErr::Fail);
        }
        head[..out as usize].to_vec()
    } else {
        Vec::new()
    };
    let take = ll.min(limit - out) as usize;
    res.extend_from_slice(&buf[lit..lit + take]);
    if limit > res.len() as u64 {
        let mut need = (limit - res.len() as u64) as usize;
        if offset == 0 || offset > res.len() as u64 {
            return Err(DErr::Fail);
        }
        // an overlapping copy repeats the last `offset` bytes
        let pattern = res[res.len() - offset as usize..].to_vec();
        res.reserve(need);
        while need > 0 {
            let t = need.min(pattern.len());
            res.extend_from_slice(&pattern[..t]);
            need -= t;
        }
    }
    res.truncate(limit as usize);
    Ok((res, true))
}

// ------------------------------------------------------------------------------ LZ4F context

struct Dctx(LZ4FDecompressionContext);

impl Drop for Dctx {
    fn drop(&mut self) {
        // SAFETY: the context was created by LZ4F_createDecompressionContext and is freed once.
        unsafe {
            LZ4F_freeDecompressionContext(self.0);
        }
    }
}

thread_local! {
    /// One LZ4F context per thread, replaced after a frame that stopped mid-way (as the Python
    /// side's `_abandon` does: LZ4F's reset leaves a content-size counter behind).
    static DCTX: RefCell<Option<Dctx>> = const { RefCell::new(None) };
}

const LZ4F_VERSION: libc::c_uint = 100;

/// liblz4's release number (10904 for 1.9.4).
pub fn version() -> i64 {
    // SAFETY: returns a constant.
    unsafe { lz4_sys::LZ4_versionNumber() as i64 }
}

fn new_dctx() -> Result<Dctx, DErr> {
    let mut ctx = LZ4FDecompressionContext(std::ptr::null_mut());
    // SAFETY: creates a context into `ctx`; checked for an error code below.
    let code = unsafe { LZ4F_createDecompressionContext(&mut ctx, LZ4F_VERSION) };
    // SAFETY: LZ4F_isError reads the code only.
    if unsafe { LZ4F_isError(code) } != 0 || ctx.0.is_null() {
        return Err(DErr::HandBack);
    }
    Ok(Dctx(ctx))
}

/// Drops the thread's context (the next frame gets a new one).
pub fn abandon() {
    DCTX.with(|cell| {
        cell.borrow_mut().take();
    });
}

/// `lz4.frame.decompress_chunk(ctx, src, max_length)`: (output, bytes read, end of frame).
fn chunk(src: &[u8], max_length: usize) -> Result<(Vec<u8>, usize, bool), DErr> {
    DCTX.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(new_dctx()?);
        }
        let ctx = slot.as_ref().map(|c| c.0).ok_or(DErr::HandBack)?;
        let mut out: Vec<u8> = Vec::with_capacity(max_length);
        let options = LZ4FDecompressOptions { stable_dst: 0, reserved: [0; 3] };
        let mut written = 0usize;
        let mut read = 0usize;
        let eof = loop {
            let mut dst_size = max_length - written;
            let mut src_size = src.len() - read;
            // SAFETY: the decoder writes at most dst_size bytes at out's spare capacity (reserved:
            // max_length in all) and reads at most src_size bytes from src at `read`.
            let result = unsafe {
                LZ4F_decompress(
                    ctx,
                    out.as_mut_ptr().add(written),
                    &mut dst_size,
                    src.as_ptr().add(read),
                    &mut src_size,
                    &options,
                )
            };
            // SAFETY: LZ4F_isError reads the code only.
            if unsafe { LZ4F_isError(result) } != 0 {
                return Err(DErr::Fail);
            }
            written += dst_size;
            read += src_size;
            // the end of the frame, of the input, or of the room (decompress_chunk's loop)
            if result == 0 || read == src.len() || written == max_length {
                break result == 0;
            }
        };
        // SAFETY: `written` bytes were initialised by the decoder.
        unsafe { out.set_len(written) };
        Ok((out, read, eof))
    })
}

/// frame._frame_header: (FLG, content size or None, dictionary ID or None).
fn frame_header(data: &[u8], pos: usize) -> Result<(u8, Option<u64>, Option<u32>), DErr> {
    let n = data.len();
    if n - pos < 7 {
        return Err(DErr::Fail);
    }
    let flg = data[pos + 4];
    if flg >> 6 != 1 {
        return Err(DErr::Fail);
    }
    let mut p = pos + 6;
    let mut csize = None;
    if flg & 0x08 != 0 {
        if n - p < 8 {
            return Err(DErr::Fail);
        }
        let c = u64le(data, p);
        csize = if c == 0 { None } else { Some(c) };
        p += 8;
    }
    let mut dict_id = None;
    if flg & 0x01 != 0 {
        if n - p < 4 {
            return Err(DErr::Fail);
        }
        dict_id = Some(u32le(data, p));
        p += 4;
    }
    if p >= n {
        return Err(DErr::Fail);
    }
    Ok((flg, csize, dict_id))
}

fn legacy(data: &[u8], pos: usize, left: usize) -> Result<Frame, DErr> {
    let n = data.len();
    let mut pos = pos + 4;
    let max_block = LEGACY_BLOCK + LEGACY_BLOCK / 255 + 16;
    let mut out: Vec<u8> = Vec::new();
    let mut left = left as u64;
    while pos < n {
        if n - pos < 4 {
            return Err(DErr::Fail);
        }
        let csize = u32le(data, pos);
        if csize == 0x184D_2204 || csize == 0x184C_2102 || (csize & 0xFFFF_FFF0) == 0x184D_2A50 {
            break;
        }
        if csize as u64 > max_block {
            return Err(DErr::Fail);
        }
        pos += 4;
        let csize = csize as usize;
        if n - pos < csize {
            return Err(DErr::Fail);
        }
        let buf = &data[pos..pos + csize];
        pos += csize;
        if left == 0 {
            return Ok(Frame { out, end: pos, truncated: true });
        }
        let (piece, cut) = match block(buf, left.min(LEGACY_BLOCK).min(csize as u64 * RATIO + 16)) {
            Ok(piece) => (piece, false),
            Err(_) => capped_block(buf, left)?,
        };
        left -= piece.len() as u64;
        out.extend_from_slice(&piece);
        if cut {
            return Ok(Frame { out, end: pos, truncated: true });
        }
    }
    Ok(Frame { out, end: pos, truncated: false })
}

fn frame(data: &[u8], pos: usize, left: usize) -> Result<Frame, DErr> {
    let n = data.len();
    let (_flg, csize, dict_id) = frame_header(data, pos)?;
    if matches!(dict_id, Some(id) if id != 0) {
        return Err(DErr::Undecodable);
    }
    let room = (n - pos) as u64 * RATIO + 64;
    if let Some(c) = csize {
        if c > room {
            return Err(DErr::Fail);
        }
    }
    if left == 0 {
        return Ok(Frame { out: Vec::new(), end: pos, truncated: true });
    }
    let max_len = (left as u64).min(csize.unwrap_or(room)) as usize;
    let (out, read, eof) = match chunk(&data[pos..], max_len) {
        Ok(found) => found,
        Err(err) => {
            abandon();
            return Err(err);
        }
    };
    if !eof {
        abandon();
        if out.len() == max_len && max_len == left && csize.is_none_or(|c| c > max_len as u64) {
            return Ok(Frame { out, end: pos + read, truncated: true });
        }
        return Err(DErr::Fail);
    }
    Ok(Frame { out, end: pos + read, truncated: false })
}

fn frame_at(data: &[u8], pos: usize, left: usize) -> Result<Option<Frame>, DErr> {
    if starts_at(data, pos, FRAME_MAGIC) {
        return frame(data, pos, left).map(Some);
    }
    if starts_at(data, pos, LEGACY_MAGIC) {
        return legacy(data, pos, left).map(Some);
    }
    Ok(None)
}

fn frames(data: &[u8], cap: usize) -> DRes {
    frame_sequence(data, cap, false, frame_at)
}

pub fn frame_matches(data: &[u8]) -> bool {
    if data.starts_with(FRAME_MAGIC) {
        return true;
    }
    let pos = skip_skippable(data, 0);
    0 < pos && starts_at(data, pos as usize, FRAME_MAGIC)
}

pub fn legacy_matches(data: &[u8]) -> bool {
    if data.starts_with(LEGACY_MAGIC) {
        return true;
    }
    let pos = skip_skippable(data, 0);
    0 < pos && starts_at(data, pos as usize, LEGACY_MAGIC)
}

/// Lz4Frame.decode.
pub fn frame_decode(data: &[u8], cap: usize) -> DRes {
    if data.len() > 15 && data[4] & 0xC9 == 0x48 && data.starts_with(FRAME_MAGIC) {
        let csize = u64le(data, 6);
        if 0 < csize && csize <= cap as u64 && csize <= data.len() as u64 * RATIO + 64 {
            let (out, read, eof) = match chunk(data, csize as usize) {
                Ok(found) => found,
                Err(err) => {
                    abandon();
                    return Err(err);
                }
            };
            if eof && read == data.len() {
                return Ok(Decoded::whole(out));
            }
            if !eof {
                abandon();
            }
        }
    }
    frames(data, cap)
}

/// Lz4Legacy.decode.
pub fn legacy_decode(data: &[u8], cap: usize) -> DRes {
    frames(data, cap)
}

// ------------------------------------------------------------------------------ LZ4Block

/// Lz4JavaBlock.decode (`checksums`: whether the Python side verifies them: xxhash installed).
pub fn java_decode(data: &[u8], cap: usize, checksums: bool) -> DRes {
    let n = data.len();
    let mut pos = 0usize;
    let mut left = cap as u64;
    let mut out: Vec<u8> = Vec::new();
    let mut truncated = false;
    let mut index = 0usize;
    while pos < n {
        if !starts_at(data, pos, LZ4BLOCK_MAGIC) {
            if index == 0 {
                return Err(DErr::Fail);
            }
            break;
        }
        if n - pos < 21 {
            return Err(DErr::Fail);
        }
        let token = data[pos + 8];
        let clen = u32le(data, pos + 9) as i32 as i64;
        let dlen = u32le(data, pos + 13) as i32 as i64;
        let check = u32le(data, pos + 17) as i32 as i64;
        let method = token & 0xF0;
        if (method != 0x10 && method != 0x20)
            || dlen < 0
            || clen < 0
            || dlen > 1i64 << (10 + (token & 0x0F))
            || (dlen == 0) != (clen == 0)
            || (method == 0x10 && clen != dlen)
            || dlen > clen * RATIO as i64 + 16
        {
            return Err(DErr::Fail);
        }
        pos += 21;
        let clen = clen as usize;
        let dlen = dlen as u64;
        if n - pos < clen {
            return Err(DErr::Fail);
        }
        if dlen > 0 {
            if left == 0 {
                truncated = true;
                break;
            }
            let buf = &data[pos..pos + clen];
            let (piece, cut) = if method == 0x10 {
                (buf[..buf.len().min(left as usize)].to_vec(), dlen > left)
            } else if dlen <= left {
                let piece = block(buf, dlen)?;
                if piece.len() as u64 != dlen {
                    return Err(DErr::Fail);
                }
                (piece, false)
            } else {
                capped_block(buf, left)?
            };
            if checksums && !cut {
                let sum = xxhash_rust::xxh32::xxh32(&piece, LZ4BLOCK_SEED) & 0x0FFF_FFFF;
                if sum as i64 != check {
                    return Err(DErr::Fail);
                }
            }
            left -= piece.len() as u64;
            out.extend_from_slice(&piece);
            if cut {
                truncated = true;
                break;
            }
        }
        pos += clen;
        index += 1;
    }
    Ok(Decoded { data: out, truncated })
}

// ------------------------------------------------------------------------------ sized blocks

fn sized_declared(data: &[u8], little_endian: bool) -> u64 {
    (if little_endian { u32le(data, 0) } else { u32be(data, 0) }) as u64
}

/// Lz4SizedLE.early: a size prefix below 16 MiB ends in a zero byte.
pub fn le_early(data: &[u8]) -> bool {
    data.len() > 4 && data[3] == 0
}

/// _Lz4Sized.ruled_out.
pub fn sized_ruled_out(data: &[u8], little_endian: bool) -> bool {
    let n = data.len();
    if n < 5 {
        return true;
    }
    let size = sized_declared(data, little_endian);
    let payload = n as u64 - 4;
    size * 2 + 16 < payload || size > payload * RATIO + 16 || (data[4] < 0x10 && size > 0)
}

/// _Lz4Sized.trial (both byte orders; python-lz4 reads the LE prefix itself, the BE one is
/// passed as the size: both must decode to exactly the declared size).
pub fn sized_trial(data: &[u8], cap: usize, little_endian: bool) -> Result<Option<Decoded>, DErr> {
    if sized_ruled_out(data, little_endian) {
        return Ok(None);
    }
    let size = sized_declared(data, little_endian);
    if size <= cap as u64 {
        return Ok(match block(&data[4..], size) {
            Ok(out) if out.len() as u64 == size => Some(Decoded::whole(out)),
            _ => None,
        });
    }
    Ok(capped_block(&data[4..], cap as u64).ok().map(|(out, truncated)| Decoded { data: out, truncated }))
}

// ------------------------------------------------------------------------------ hadoop

fn hadoop_chunk(buf: &[u8], expected: u64, left: usize) -> Result<(Vec<u8>, bool), DErr> {
    if expected <= left as u64 {
        return Ok((block(buf, expected)?, false));
    }
    capped_block(buf, left as u64)
}

pub fn hadoop_ruled_out(data: &[u8]) -> bool {
    !hadoop_matches(data, data.len() as u64 * RATIO)
}

/// Lz4Hadoop.trial.
pub fn hadoop_trial(data: &[u8], cap: usize) -> Result<Option<Decoded>, DErr> {
    if hadoop_ruled_out(data) {
        return Ok(None);
    }
    match hadoop_decode(data, cap, hadoop_chunk, RATIO)? {
        Hadoop::Stream(dec) => Ok(Some(dec)),
        Hadoop::NotAStream => Ok(None),
    }
}
