//! The snappy family as codecs/snappy (_raw.py, framed.py, streams.py) decodes it, with the
//! decoder the Python side's cramjam wraps (snap 1.1.1).

use std::io::Read;

use crate::common::{hadoop_decode, hadoop_matches, starts_at, u32be, DErr, DRes, Decoded, Hadoop};

/// _raw._bound: most output `payload` input bytes can yield.
#[inline]
pub fn bound(payload: u64) -> u64 {
    (payload * 64).div_ceil(3)
}

/// _raw._varint: the preamble at `pos` (at most 5 bytes, < 2**32): (length, position after).
pub fn varint(data: &[u8], pos: usize) -> Result<(u64, usize), DErr> {
    let mut result: u64 = 0;
    let mut shift = 0u32;
    let end = data.len().min(pos + 5);
    let mut pos = pos;
    while pos < end {
        let b = data[pos];
        pos += 1;
        result |= ((b & 0x7f) as u64) << shift;
        if b < 0x80 {
            if result >= 1 << 32 {
                break;
            }
            return Ok((result, pos));
        }
        shift += 7;
    }
    Err(DErr::Fail)
}

fn raw(block: &[u8]) -> Result<Vec<u8>, DErr> {
    snap::raw::Decoder::new().decompress_vec(block).map_err(|_| DErr::Fail)
}

fn framed(data: &[u8]) -> Result<Vec<u8>, DErr> {
    let mut out = Vec::new();
    snap::read::FrameDecoder::new(data).read_to_end(&mut out).map_err(|_| DErr::Fail)?;
    Ok(out)
}

/// _raw._tag_step, for _encoder_like.
fn tag_step(tag: u8) -> i64 {
    let kind = tag & 3;
    if kind == 0 {
        let ln = (tag >> 2) as i64;
        return if ln < 60 { ln + 2 } else { 59 - ln };
    }
    if kind == 1 {
        return 2;
    }
    if kind == 2 && tag >= 12 {
        3
    } else {
        0
    }
}

/// `int.from_bytes(data[a:b], "little")` with Python's slicing (a short slice reads fewer bytes).
fn le_slice(data: &[u8], a: usize, b: usize) -> u64 {
    let a = a.min(data.len());
    let b = b.min(data.len());
    let mut v: u64 = 0;
    if a < b {
        for (i, &byte) in data[a..b].iter().enumerate() {
            v |= (byte as u64) << (8 * i);
        }
    }
    v
}

/// _raw._encoder_like: tags as a real encoder writes them.
fn encoder_like(data: &[u8], pos: usize) -> bool {
    let n = data.len() as u64;
    let mut pos = pos as u64;
    let mut prev_literal = false;
    while pos < n {
        let tag = data[pos as usize];
        let step = tag_step(tag);
        if tag & 3 != 0 {
            if step == 0 {
                return false;
            }
            prev_literal = false;
            pos += step as u64;
            continue;
        }
        if prev_literal {
            return false;
        }
        prev_literal = true;
        if step > 0 {
            pos += step as u64;
        } else {
            let p = pos as usize;
            let k = (-step) as usize;
            pos += le_slice(data, p + 1, p + 1 + k) + 2 + k as u64;
        }
    }
    pos == n
}

fn uvarint_bytes(mut value: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(5);
    while value >= 0x80 {
        out.push((value & 0x7f) as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
    out
}

/// _raw._prefix: walk tags from `pos` until `limit` output bytes are covered.
fn prefix(data: &[u8], pos: usize, limit: u64) -> Result<(usize, u64), DErr> {
    let n = data.len() as u64;
    let mut pos = pos as u64;
    let mut out: u64 = 0;
    while pos < n && out < limit {
        let tag = data[pos as usize];
        let kind = tag & 3;
        if kind == 0 {
            let mut ln = (tag >> 2) as u64;
            if ln < 60 {
                pos += 1;
            } else {
                let k = ln - 59;
                let p = pos as usize;
                ln = le_slice(data, p + 1, p + 1 + k as usize);
                pos += 1 + k;
            }
            ln += 1;
            pos += ln;
            out += ln;
        } else if kind == 1 {
            out += ((tag >> 2) & 7) as u64 + 4;
            pos += 2;
        } else if kind == 2 {
            out += (tag >> 2) as u64 + 1;
            pos += 3;
        } else {
            out += (tag >> 2) as u64 + 1;
            pos += 5;
        }
    }
    if pos > n {
        return Err(DErr::Fail);
    }
    Ok((pos as usize, out))
}

/// _raw.raw_capped: one raw block to at most `left` bytes: (output, truncated).
pub fn raw_capped(buf: &[u8], left: usize) -> Result<(Vec<u8>, bool, u64), DErr> {
    let (size, p) = varint(buf, 0)?;
    if size > bound((buf.len() - p) as u64) {
        return Err(DErr::Fail);
    }
    if size <= left as u64 {
        return Ok((raw(buf)?, false, size));
    }
    let (cut, out_len) = prefix(buf, p, left as u64)?;
    let mut block = uvarint_bytes(out_len);
    block.extend_from_slice(&buf[p..cut]);
    let mut out = raw(&block)?;
    out.truncate(left);
    Ok((out, true, size))
}

// ------------------------------------------------------------------------------ raw block

/// SnappyRaw.ruled_out.
pub fn raw_ruled_out(data: &[u8]) -> bool {
    let Ok((size, p)) = varint(data, 0) else { return true };
    let payload = (data.len() - p) as u64;
    size * 2 + 16 < payload || size > bound(payload) || payload == 0
}

/// SnappyRaw.trial. `Ok(None)`: not a raw block.
pub fn raw_trial(data: &[u8], cap: usize, printable: &[u8]) -> Result<Option<Decoded>, DErr> {
    let (size, p) = if data.is_empty() {
        return Ok(None);
    } else if data[0] < 0x80 {
        (data[0] as u64, 1)
    } else if data.len() < 2 {
        return Ok(None);
    } else if data[1] < 0x80 {
        ((data[0] & 0x7f) as u64 | (data[1] as u64) << 7, 2)
    } else {
        match varint(data, 0) {
            Ok(found) => found,
            Err(_) => return Ok(None),
        }
    };
    let payload = (data.len() - p) as u64;
    if size * 2 + 16 < payload || size > bound(payload) || payload == 0 {
        return Ok(None);
    }
    if size >= 1 && payload == size + 1 && data[p] as u64 == (size - 1) << 2 && size <= 60 {
        // One short literal: only text counts (str.isprintable after dropping tab, CR, LF).
        let out = &data[p + 1..];
        let Ok(text) = std::str::from_utf8(out) else { return Ok(None) };
        let kept: String = text.chars().filter(|c| !matches!(c, '\t' | '\n' | '\r')).collect();
        match crate::tree::printable(&kept, printable) {
            crate::tree::Printable::Yes => {}
            crate::tree::Printable::No => return Ok(None),
            crate::tree::Printable::Unsure => return Err(DErr::HandBack),
        }
        let mut out = out.to_vec();
        let truncated = size > cap as u64;
        out.truncate(cap);
        return Ok(Some(Decoded { data: out, truncated }));
    }
    if payload <= 512 && !encoder_like(data, p) {
        return Ok(None);
    }
    if size <= cap as u64 {
        return Ok(raw(data).ok().map(Decoded::whole));
    }
    Ok(raw_capped(data, cap).ok().map(|(out, truncated, _)| Decoded { data: out, truncated }))
}

// ------------------------------------------------------------------------------ framing format

pub const STREAM_ID: &[u8] = b"\xff\x06\x00\x00sNaPpY";
const CHUNK_MAX: u64 = 65536;

fn check_chunks(data: &[u8]) -> Result<(), DErr> {
    let n = data.len();
    let mut pos = 10usize;
    while n >= pos + 4 {
        let ln = data[pos + 1] as usize | (data[pos + 2] as usize) << 8 | (data[pos + 3] as usize) << 16;
        if data[pos] == 0 && ln >= 5 && pos + 4 + ln <= n {
            let b = data[pos + 8];
            if b >= 0x80 {
                let Ok((size, _)) = varint(data, pos + 8) else { return Ok(()) };
                if size > CHUNK_MAX || size > bound(ln as u64 - 4) {
                    return Err(DErr::Fail);
                }
            }
        }
        pos += 4 + ln;
    }
    Ok(())
}

fn chunk_output(data: &[u8], pos: usize, typ: u8, ln: usize) -> Result<u64, DErr> {
    match typ {
        0x00 => {
            if ln < 5 {
                return Err(DErr::Fail);
            }
            Ok(varint(data, pos + 8)?.0)
        }
        0x01 => Ok(ln.saturating_sub(4) as u64),
        _ => Ok(0),
    }
}

/// SnappyFramed.decode.
pub fn framed_decode(data: &[u8], cap: usize) -> DRes {
    check_chunks(data)?;
    if data.len() as u64 * 22 <= cap as u64 {
        return Ok(Decoded::whole(framed(data)?));
    }
    let n = data.len();
    let mut total: u64 = 0;
    let mut end = n;
    let mut pos = 0usize;
    while pos < n {
        // _chunks: a cut header or chunk raises once the walk reaches it.
        if n - pos < 4 {
            return Err(DErr::Fail);
        }
        let typ = data[pos];
        let ln = data[pos + 1] as usize | (data[pos + 2] as usize) << 8 | (data[pos + 3] as usize) << 16;
        if pos + 4 + ln > n {
            return Err(DErr::Fail);
        }
        if total >= cap as u64 {
            end = pos;
            break;
        }
        total += chunk_output(data, pos, typ, ln)?;
        pos += 4 + ln;
    }
    let mut out = framed(&data[..end])?;
    let truncated = end < n || out.len() > cap;
    out.truncate(cap);
    Ok(Decoded { data: out, truncated })
}

// ------------------------------------------------------------------------------ xerial

const XERIAL: &[u8] = b"\x82SNAPPY\x00";

pub fn xerial_matches(data: &[u8]) -> bool {
    data.len() >= 16 && data.starts_with(XERIAL)
}

/// SnappyXerial.decode.
pub fn xerial_decode(data: &[u8], cap: usize) -> DRes {
    let n = data.len();
    if n < 16 {
        return Err(DErr::Fail);
    }
    let mut pos = 16usize;
    let mut left = cap;
    let mut out: Vec<u8> = Vec::new();
    let mut truncated = false;
    while pos < n {
        if starts_at(data, pos, XERIAL) {
            pos += 16;
            continue;
        }
        if n - pos < 4 {
            return Err(DErr::Fail);
        }
        let ln = u32be(data, pos) as usize;
        pos += 4;
        if ln > n - pos {
            return Err(DErr::Fail);
        }
        let (piece, cut, _) = raw_capped(&data[pos..pos + ln], left)?;
        pos += ln;
        left -= piece.len();
        out.extend_from_slice(&piece);
        if cut || (left == 0 && pos < n) {
            truncated = true;
            break;
        }
    }
    Ok(Decoded { data: out, truncated })
}

// ------------------------------------------------------------------------------ hadoop

fn hadoop_chunk(buf: &[u8], expected: u64, left: usize) -> Result<(Vec<u8>, bool), DErr> {
    let (size, _) = varint(buf, 0)?;
    if size > expected {
        return Err(DErr::Fail);
    }
    let (out, truncated, _) = raw_capped(buf, left)?;
    Ok((out, truncated))
}

const HADOOP_MAX_RATIO: u64 = 22;

pub fn hadoop_ruled_out(data: &[u8]) -> bool {
    !hadoop_matches(data, bound(data.len() as u64))
}

/// SnappyHadoop.trial.
pub fn hadoop_trial(data: &[u8], cap: usize) -> Result<Option<Decoded>, DErr> {
    if hadoop_ruled_out(data) {
        return Ok(None);
    }
    match hadoop_decode(data, cap, hadoop_chunk, HADOOP_MAX_RATIO)? {
        Hadoop::Stream(dec) => Ok(Some(dec)),
        Hadoop::NotAStream => Ok(None),
    }
}
