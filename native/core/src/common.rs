//! What every container shares: a decode's answer, its errors, and the helpers of
//! `codecs/_common.py` (skippable frames, frame sequences, Hadoop block streams).

/// One layer's output: at most the cap asked for; `truncated` when the cap stopped it.
pub struct Decoded {
    pub data: Vec<u8>,
    pub truncated: bool,
}

impl Decoded {
    pub fn whole(data: Vec<u8>) -> Self {
        Decoded { data, truncated: false }
    }
}

/// Why a decode gave no output. `Fail` is the Python side's DecodeError (or any library error it
/// wraps into one), `Undecodable` its subclass for a recognised format that cannot be decoded
/// here; `HandBack` means the native side cannot tell what Python would do: the value goes back
/// to the Python engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DErr {
    Fail,
    Undecodable,
    HandBack,
}

pub type DRes = Result<Decoded, DErr>;

#[inline]
pub fn u32le(data: &[u8], pos: usize) -> u32 {
    u32::from_le_bytes([data[pos], data[pos + 1], data[pos + 2], data[pos + 3]])
}

#[inline]
pub fn u32be(data: &[u8], pos: usize) -> u32 {
    u32::from_be_bytes([data[pos], data[pos + 1], data[pos + 2], data[pos + 3]])
}

#[inline]
pub fn u64le(data: &[u8], pos: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&data[pos..pos + 8]);
    u64::from_le_bytes(b)
}

/// `data[pos:].startswith(magic)` without panicking past the end.
#[inline]
pub fn starts_at(data: &[u8], pos: usize, magic: &[u8]) -> bool {
    pos <= data.len() && data[pos..].starts_with(magic)
}

pub const SKIPPABLE_BYTES: &[u8] = b"\x2a\x4d\x18";

#[inline]
fn skippable_at(data: &[u8], pos: usize) -> bool {
    pos < data.len() && (0x50..=0x5f).contains(&data[pos]) && starts_at(data, pos + 1, SKIPPABLE_BYTES)
}

/// _common.skip_skippable: the offset after the skippable frames at `pos`; -1 when one is cut.
pub fn skip_skippable(data: &[u8], pos: usize) -> i64 {
    let n = data.len();
    let mut pos = pos;
    while n >= pos + 4 && skippable_at(data, pos) {
        if n - pos < 8 {
            return -1;
        }
        let next = pos as u64 + 8 + u32le(data, pos + 4) as u64;
        if next > n as u64 {
            return -1;
        }
        pos = next as usize;
    }
    pos as i64
}

/// A frame decoder's answer at a position: (output, position after the frame, cap reached).
/// (The declared size the Python side also returns feeds only `declared_size`, unused here.)
pub struct Frame {
    pub out: Vec<u8>,
    pub end: usize,
    pub truncated: bool,
}

/// A frame format's decoder at a position: (data, position, output left) -> the frame there, or
/// None when no frame of the kind starts there.
pub type FrameAt = fn(&[u8], usize, usize) -> Result<Option<Frame>, DErr>;

/// _common.frame_sequence: frames one after another, skippable frames stepped over.
pub fn frame_sequence(data: &[u8], cap: usize, skippable_alone_is_empty: bool, frame_at: FrameAt) -> DRes {
    let n = data.len();
    let mut pos = 0usize;
    let mut left = cap;
    let mut out: Vec<u8> = Vec::new();
    let mut truncated = false;
    let mut frames = 0usize;
    while pos < n {
        if skippable_at(data, pos) {
            let next = skip_skippable(data, pos);
            if next < 0 {
                return Err(DErr::Fail);
            }
            pos = next as usize;
            if skippable_alone_is_empty {
                frames += 1;
            }
            continue;
        }
        match frame_at(data, pos, left)? {
            None => {
                if frames == 0 {
                    return Err(DErr::Fail);
                }
                return Ok(Decoded { data: out, truncated });
            }
            Some(frame) => {
                left -= frame.out.len();
                if out.is_empty() {
                    out = frame.out;
                } else {
                    out.extend_from_slice(&frame.out);
                }
                pos = frame.end;
                truncated = frame.truncated;
                frames += 1;
                if truncated {
                    break;
                }
            }
        }
    }
    if frames == 0 {
        return Err(DErr::Fail);
    }
    Ok(Decoded { data: out, truncated })
}

/// A Hadoop block stream's chunk decoder: (buffer, raw bytes still owed by the block, output
/// left) -> (output, cut by the cap). `Err(Fail)` is the Python side's DecodeError.
pub type HadoopChunk = fn(&[u8], u64, usize) -> Result<(Vec<u8>, bool), DErr>;

/// What hadoop_decode answers: a stream, or a reason string (here: NotAStream).
pub enum Hadoop {
    Stream(Decoded),
    NotAStream,
}

/// _common.hadoop_decode: [u32 BE raw length]([u32 BE length][chunk])+ ...
pub fn hadoop_decode(data: &[u8], cap: usize, chunk: HadoopChunk, max_ratio: u64) -> Result<Hadoop, DErr> {
    let n = data.len();
    if n < 8 {
        return Ok(Hadoop::NotAStream);
    }
    let mut pos = 0usize;
    let mut left = cap;
    let mut out: Vec<u8> = Vec::new();
    let mut truncated = false;
    while pos < n {
        if n - pos < 4 {
            return Ok(Hadoop::NotAStream);
        }
        let raw_len = u32be(data, pos) as u64;
        pos += 4;
        if raw_len > (n - pos) as u64 * max_ratio {
            return Ok(Hadoop::NotAStream);
        }
        let mut got: u64 = 0;
        if raw_len == 0 && n - pos >= 4 {
            let clen = u32be(data, pos) as usize;
            if 0 < clen && clen <= n - pos - 4 {
                let empty = match chunk(&data[pos + 4..pos + 4 + clen], 0, left) {
                    Ok((piece, _)) => piece.is_empty(),
                    Err(DErr::HandBack) => return Err(DErr::HandBack),
                    Err(_) => false,
                };
                if empty {
                    pos += 4 + clen;
                }
            }
        }
        while got < raw_len {
            if n - pos < 4 {
                return Ok(Hadoop::NotAStream);
            }
            let clen = u32be(data, pos) as usize;
            pos += 4;
            if clen == 0 || clen > n - pos {
                return Ok(Hadoop::NotAStream);
            }
            if left == 0 {
                truncated = true;
                break;
            }
            let (piece, cut) = match chunk(&data[pos..pos + clen], raw_len - got, left) {
                Ok(found) => found,
                Err(DErr::HandBack) => return Err(DErr::HandBack),
                Err(_) => return Ok(Hadoop::NotAStream),
            };
            pos += clen;
            got += piece.len() as u64;
            left -= piece.len();
            out.extend_from_slice(&piece);
            if cut {
                truncated = true;
                break;
            }
            if got > raw_len {
                return Ok(Hadoop::NotAStream);
            }
        }
        if truncated {
            break;
        }
    }
    Ok(Hadoop::Stream(Decoded { data: out, truncated }))
}

/// HadoopStream.matches: the two lengths are plausible.
pub fn hadoop_matches(data: &[u8], raw_bound: u64) -> bool {
    if data.len() < 9 {
        return false;
    }
    let raw_len = u32be(data, 0) as u64;
    let clen = u32be(data, 4) as usize;
    0 < clen && clen <= data.len() - 8 && raw_len <= raw_bound
}

/// registry._clip: a trial's output cut to the caller's cap.
pub fn clip(mut dec: Decoded, cap: usize) -> Decoded {
    if dec.data.len() <= cap {
        return dec;
    }
    dec.data.truncate(cap);
    dec.truncated = true;
    dec
}
