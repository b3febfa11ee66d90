//! The containers auto-detection knows, by the label the Python registry gives them: what each
//! one's matches / decode / trial / ruled_out / early do here (the mirror of the Container
//! methods), and which the native side only recognises (their values are handed back).

use crate::common::{DErr, DRes, Decoded};
use crate::{deflate, lz4, snappy, zstd};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fmt {
    Zstd,
    Lz4Frame,
    Lz4Legacy,
    Lz4Java,
    SnappyFramed,
    S2Framed,
    SnappyXerial,
    Gzip,
    Bzip2,
    Xz,
    Zlib,
    SnappyRaw,
    Lz4BlockLE,
    Lz4BlockBE,
    SnappyHadoop,
    Lz4Hadoop,
    LzmaAlone,
    Dcz,
    Dcb,
}

/// Every container the mirror knows, with the label and grade the Python registry must give it.
pub const KNOWN: &[(Fmt, &str, char)] = &[
    (Fmt::Zstd, "zstd", 'A'),
    (Fmt::Lz4Frame, "lz4/frame", 'A'),
    (Fmt::Lz4Legacy, "lz4/legacy", 'A'),
    (Fmt::Lz4Java, "lz4/LZ4Block", 'A'),
    (Fmt::SnappyFramed, "snappy/framed", 'A'),
    (Fmt::S2Framed, "snappy/s2", 'A'),
    (Fmt::SnappyXerial, "snappy/xerial", 'A'),
    (Fmt::Gzip, "gzip", 'A'),
    (Fmt::Bzip2, "bzip2", 'A'),
    (Fmt::Xz, "xz", 'A'),
    (Fmt::Zlib, "zlib", 'B'),
    (Fmt::SnappyRaw, "snappy", 'C'),
    (Fmt::Lz4BlockLE, "lz4/block", 'C'),
    (Fmt::Lz4BlockBE, "lz4/block-be", 'C'),
    (Fmt::SnappyHadoop, "snappy/hadoop", 'C'),
    (Fmt::Lz4Hadoop, "lz4/hadoop", 'C'),
    (Fmt::LzmaAlone, "xz/lzma", 'C'),
    (Fmt::Dcz, "dcz", 'A'),
    (Fmt::Dcb, "dcb", 'A'),
];

impl Fmt {
    pub fn by_label(label: &str) -> Option<(Fmt, char)> {
        KNOWN.iter().find(|(_, l, _)| *l == label).map(|(f, _, g)| (*f, *g))
    }

    pub fn label(self) -> &'static str {
        KNOWN.iter().find(|(f, _, _)| *f == self).map(|(_, l, _)| *l).unwrap_or("?")
    }
}

/// Per-call settings the containers read (data from the Python side).
pub struct Env {
    /// Lz4JavaBlock verifies its checksums (the Python side has xxhash).
    pub lz4block_checksums: bool,
    /// The process's zlib (libz.rs) is the release CPython's zlib module runs with.
    pub deflate_ok: bool,
    /// liblz4 and libzstd here are the releases python-lz4 and python zstandard bundle.
    pub lz4_ok: bool,
    pub zstd_ok: bool,
    /// str.isprintable of each character of the Basic Multilingual Plane (1 or 0), as the
    /// Python side's Unicode tables say.
    pub printable: Vec<u8>,
}

/// Container.matches (never fails).
pub fn matches(fmt: Fmt, data: &[u8]) -> bool {
    match fmt {
        Fmt::Zstd => zstd::matches(data),
        Fmt::Lz4Frame => lz4::frame_matches(data),
        Fmt::Lz4Legacy => lz4::legacy_matches(data),
        Fmt::Lz4Java => data.starts_with(lz4::LZ4BLOCK_MAGIC),
        Fmt::SnappyFramed => data.starts_with(snappy::STREAM_ID),
        Fmt::S2Framed => data.starts_with(b"\xff\x06\x00\x00S2sTwO"),
        Fmt::SnappyXerial => snappy::xerial_matches(data),
        Fmt::Gzip => deflate::gzip_matches(data),
        Fmt::Bzip2 => {
            data.len() >= 10
                && data.starts_with(b"BZh")
                && (0x31..=0x39).contains(&data[3])
                && (data[4..].starts_with(b"\x31\x41\x59\x26\x53\x59")
                    || data[4..].starts_with(b"\x17\x72\x45\x38\x50\x90"))
        }
        Fmt::Xz => {
            data.len() >= 12 && data.starts_with(b"\xfd7zXZ\x00") && data[6] == 0 && data[7] & 0xF0 == 0
        }
        Fmt::Zlib => deflate::zlib_matches(data),
        Fmt::SnappyRaw | Fmt::Lz4BlockLE | Fmt::Lz4BlockBE | Fmt::SnappyHadoop | Fmt::Lz4Hadoop => false,
        Fmt::LzmaAlone => lzma_alone_matches(data),
        // dictionary_compressed.Dcz/Dcb.matches: dcz's header and its SHA-256 whole (a bare header
        // is a dcz value that fails, never zstd's empty stream), dcb's then its stream
        Fmt::Dcz => data.len() >= 40 && data.starts_with(b"\x5e\x2a\x4d\x18\x20\x00\x00\x00"),
        Fmt::Dcb => data.len() > 36 && data.starts_with(b"\xff\x44\x43\x42"),
    }
}

/// xz._alone_header and LzmaAlone.matches.
fn lzma_alone_matches(data: &[u8]) -> bool {
    if data.len() < 14 {
        return false;
    }
    if data[0] >= 225 {
        return false;
    }
    let dict_size = crate::common::u32le(data, 1) as u64;
    if !(4096..=(1 << 30)).contains(&dict_size) {
        return false;
    }
    let top = 63 - dict_size.leading_zeros() as u64;
    if dict_size != 1 << top && dict_size != (1 << top) | (1 << (top - 1)) {
        return false;
    }
    let size = crate::common::u64le(data, 5);
    size == u64::MAX || size as u128 <= data.len() as u128 * 8000
}

/// Container.decode, at most `cap` bytes.
pub fn decode(fmt: Fmt, data: &[u8], cap: usize, env: &Env) -> DRes {
    match fmt {
        Fmt::Zstd if env.zstd_ok => zstd::decode(data, cap),
        Fmt::Lz4Frame if env.lz4_ok => lz4::frame_decode(data, cap),
        Fmt::Lz4Legacy if env.lz4_ok => lz4::legacy_decode(data, cap),
        Fmt::Lz4Java if env.lz4_ok => lz4::java_decode(data, cap, env.lz4block_checksums),
        Fmt::SnappyFramed => snappy::framed_decode(data, cap),
        Fmt::S2Framed => Err(DErr::Undecodable),
        Fmt::SnappyXerial => snappy::xerial_decode(data, cap),
        Fmt::Gzip if env.deflate_ok => deflate::gzip_decode(data, cap),
        Fmt::Zlib if env.deflate_ok => deflate::zlib_decode(data, cap),
        // bzip2, xz, dcz and dcb, the signature-less ones (decoded here only through their trials) and
        // deflate with another zlib: the Python side decodes them
        _ => Err(DErr::HandBack),
    }
}

/// Whether the core decodes the format itself; the others are recognised and their values handed
/// back (bzip2, xz, LZMA alone; a library of another release than the Python side's).
pub fn reads(fmt: Fmt, env: &Env) -> bool {
    match fmt {
        Fmt::Zstd => env.zstd_ok,
        Fmt::Lz4Frame
        | Fmt::Lz4Legacy
        | Fmt::Lz4Java
        | Fmt::Lz4BlockLE
        | Fmt::Lz4BlockBE
        | Fmt::Lz4Hadoop => env.lz4_ok,
        Fmt::Gzip | Fmt::Zlib => env.deflate_ok,
        Fmt::SnappyFramed | Fmt::S2Framed | Fmt::SnappyXerial | Fmt::SnappyRaw | Fmt::SnappyHadoop => true,
        // dcz and dcb name their dictionary by its hash: the Python side's store
        Fmt::Bzip2 | Fmt::Xz | Fmt::LzmaAlone | Fmt::Dcz | Fmt::Dcb => false,
    }
}

/// Container.trial: Ok(None) when the value is not of the format.
pub fn trial(fmt: Fmt, data: &[u8], cap: usize, env: &Env) -> Result<Option<Decoded>, DErr> {
    match fmt {
        Fmt::SnappyRaw => snappy::raw_trial(data, cap, &env.printable),
        Fmt::Lz4BlockLE | Fmt::Lz4BlockBE | Fmt::Lz4Hadoop if !env.lz4_ok => Err(DErr::HandBack),
        Fmt::Lz4BlockLE => lz4::sized_trial(data, cap, true),
        Fmt::Lz4BlockBE => lz4::sized_trial(data, cap, false),
        Fmt::SnappyHadoop => snappy::hadoop_trial(data, cap),
        Fmt::Lz4Hadoop => lz4::hadoop_trial(data, cap),
        Fmt::LzmaAlone => {
            if lzma_alone_matches(data) {
                Err(DErr::HandBack)
            } else {
                Ok(None)
            }
        }
        Fmt::Zlib if env.deflate_ok => deflate::zlib_trial(data, cap),
        // the base trial: the decode, None on a DecodeError (Undecodable propagates)
        _ => match decode(fmt, data, cap, env) {
            Ok(dec) => Ok(Some(dec)),
            Err(DErr::Fail) => Ok(None),
            Err(other) => Err(other),
        },
    }
}

/// Container.ruled_out (signature-less formats; the others never are).
pub fn ruled_out(fmt: Fmt, data: &[u8]) -> bool {
    match fmt {
        Fmt::SnappyRaw => snappy::raw_ruled_out(data),
        Fmt::Lz4BlockLE => lz4::sized_ruled_out(data, true),
        Fmt::Lz4BlockBE => lz4::sized_ruled_out(data, false),
        Fmt::SnappyHadoop => snappy::hadoop_ruled_out(data),
        Fmt::Lz4Hadoop => lz4::hadoop_ruled_out(data),
        Fmt::LzmaAlone => !lzma_alone_matches(data),
        _ => false,
    }
}

/// Container.early.
pub fn early(fmt: Fmt, data: &[u8]) -> bool {
    match fmt {
        Fmt::Lz4BlockLE => lz4::le_early(data),
        _ => false,
    }
}
