//! payload/formats/cbor.py's reading, as cbor2 6.3 decodes: integers, floats (half, single,
//! double), byte and text strings, arrays and maps (definite or not), false, true, null, and the
//! bignum tags 2 and 3; nesting up to the budget's depth (64 frames: a non-empty definite
//! container, any indefinite one, a tag); the whole value one item. What the Python side builds
//! objects for that this reader does not (other tags, undefined, simple values, indefinite
//! strings, container or bignum map keys) is read for its structure only: a value holding one
//! is handed back when it decodes, and is no CBOR when it does not (a structural error is one on
//! both sides whatever the tags stand for).

use crate::common::DErr;
use crate::tree::{MapBuilder, Node, Str};

pub const SELF_DESCRIBE: &[u8] = b"\xd9\xd9\xf7";

/// The value is no CBOR (cbor2 raises).
enum Stop {
    NotCbor,
}

/// What one item read gave: a value, or the break code (only an indefinite container's end).
enum Item {
    Value(Node),
    Break,
}

struct Reader<'a> {
    src: &'a [u8],
    pos: usize,
    end: usize,
    max_depth: usize,
    /// Something the Python side builds another object for was read (see the module doc).
    doubt: bool,
}

impl Reader<'_> {
    fn take(&mut self, n: u64) -> Result<usize, Stop> {
        if ((self.end - self.pos) as u64) < n {
            return Err(Stop::NotCbor); // premature end of stream
        }
        let at = self.pos;
        self.pos += n as usize;
        Ok(at)
    }

    fn be(&mut self, n: usize) -> Result<u64, Stop> {
        let at = self.take(n as u64)?;
        let mut v: u64 = 0;
        for &b in &self.src[at..at + n] {
            v = v << 8 | b as u64;
        }
        Ok(v)
    }

    /// The length or value after the initial byte; None for indefinite (info 31).
    fn argument(&mut self, info: u8) -> Result<Option<u64>, Stop> {
        Ok(Some(match info {
            0..=23 => info as u64,
            24 => self.be(1)?,
            25 => self.be(2)?,
            26 => self.be(4)?,
            27 => self.be(8)?,
            31 => return Ok(None),
            _ => return Err(Stop::NotCbor),
        }))
    }

    fn item(&mut self, frames: usize) -> Result<Item, Stop> {
        let initial = self.src[self.take(1)?];
        let major = initial >> 5;
        let info = initial & 0x1f;
        match major {
            0 => {
                let v = self.argument(info)?.ok_or(Stop::NotCbor)?;
                Ok(Item::Value(int(v as i128)))
            }
            1 => {
                let v = self.argument(info)?.ok_or(Stop::NotCbor)?;
                Ok(Item::Value(int(-(v as i128) - 1)))
            }
            2 => match self.argument(info)? {
                None => {
                    self.chunks(2)?;
                    self.doubt = true;
                    Ok(Item::Value(Node::Ext))
                }
                Some(n) => {
                    let at = self.take(n)?;
                    Ok(Item::Value(Node::Bytes(at as u32, n as u32)))
                }
            },
            3 => match self.argument(info)? {
                None => {
                    self.chunks(3)?;
                    self.doubt = true;
                    Ok(Item::Value(Node::Ext))
                }
                Some(n) => {
                    let at = self.take(n)?;
                    if std::str::from_utf8(&self.src[at..at + n as usize]).is_err() {
                        return Err(Stop::NotCbor);
                    }
                    Ok(Item::Value(Node::Str(Str::Span(at as u32, n as u32))))
                }
            },
            4 => {
                let length = self.argument(info)?;
                if length == Some(0) {
                    return Ok(Item::Value(Node::List(Vec::new())));
                }
                if frames >= self.max_depth {
                    return Err(Stop::NotCbor);
                }
                let mut items = Vec::new();
                match length {
                    Some(n) => {
                        if n > (self.end - self.pos) as u64 {
                            return Err(Stop::NotCbor);
                        }
                        for _ in 0..n {
                            match self.item(frames + 1)? {
                                Item::Value(v) => items.push(v),
                                Item::Break => return Err(Stop::NotCbor),
                            }
                        }
                    }
                    None => {
                        while let Item::Value(v) = self.item(frames + 1)? {
                            items.push(v);
                        }
                    }
                }
                Ok(Item::Value(Node::List(items)))
            }
            5 => {
                let length = self.argument(info)?;
                if length == Some(0) {
                    return Ok(Item::Value(Node::Map(Vec::new())));
                }
                if frames >= self.max_depth {
                    return Err(Stop::NotCbor);
                }
                let mut map =
                    MapBuilder::with_room(length.map_or(0, |n| n.min(u64::from(u32::MAX)) as usize));
                match length {
                    Some(n) => {
                        if n > (self.end - self.pos) as u64 / 2 {
                            return Err(Stop::NotCbor);
                        }
                        for _ in 0..n {
                            let key = match self.item(frames + 1)? {
                                Item::Value(v) => v,
                                Item::Break => return Err(Stop::NotCbor),
                            };
                            let value = match self.item(frames + 1)? {
                                Item::Value(v) => v,
                                Item::Break => return Err(Stop::NotCbor),
                            };
                            self.insert(&mut map, key, value);
                        }
                    }
                    None => {
                        while let Item::Value(key) = self.item(frames + 1)? {
                            let value = match self.item(frames + 1)? {
                                Item::Value(v) => v,
                                Item::Break => return Err(Stop::NotCbor),
                            };
                            self.insert(&mut map, key, value);
                        }
                    }
                }
                Ok(Item::Value(map.finish()))
            }
            6 => {
                if frames >= self.max_depth {
                    return Err(Stop::NotCbor);
                }
                let tag = self.argument(info)?.ok_or(Stop::NotCbor)?;
                let tagged = match self.item(frames + 1)? {
                    Item::Value(v) => v,
                    Item::Break => return Err(Stop::NotCbor),
                };
                if tag == 2 || tag == 3 {
                    // a bignum: its item must be a byte string (int.from_bytes, big-endian)
                    return match tagged {
                        Node::Bytes(at, n) => Ok(Item::Value(Node::BigBytes(at, n, tag == 3))),
                        Node::Ext if self.doubt => Ok(Item::Value(Node::Ext)),
                        _ => Err(Stop::NotCbor),
                    };
                }
                self.doubt = true;
                Ok(Item::Value(Node::Ext))
            }
            _ => match info {
                20 => Ok(Item::Value(Node::Bool(false))),
                21 => Ok(Item::Value(Node::Bool(true))),
                22 => Ok(Item::Value(Node::Null)),
                25 => {
                    let h = self.be(2)? as u16;
                    Ok(Item::Value(Node::Float(half(h))))
                }
                26 => Ok(Item::Value(Node::Float(f32::from_bits(self.be(4)? as u32) as f64))),
                27 => Ok(Item::Value(Node::Float(f64::from_bits(self.be(8)?)))),
                31 => Ok(Item::Break),
                28..=30 => Err(Stop::NotCbor),
                24 => {
                    // a one-byte simple value: below 32 is invalid, the others are objects
                    if self.be(1)? < 32 {
                        return Err(Stop::NotCbor);
                    }
                    self.doubt = true;
                    Ok(Item::Value(Node::Ext))
                }
                _ => {
                    // simple values 0-19, undefined
                    self.doubt = true;
                    Ok(Item::Value(Node::Ext))
                }
            },
        }
    }

    /// `dict[key] = value`: a key cbor2 makes another object of (a tuple, a frozendict, a
    /// bignum, a tagged value) leaves the value in doubt.
    fn insert(&mut self, map: &mut MapBuilder, key: Node, value: Node) {
        if matches!(key, Node::List(_) | Node::Map(_) | Node::BigBytes(..) | Node::Ext) {
            self.doubt = true;
            return;
        }
        if map.insert(key, value, self.src).is_err() {
            self.doubt = true;
        }
    }

    /// An indefinite string's chunks, up to its break: definite strings of its own major type.
    fn chunks(&mut self, major: u8) -> Result<(), Stop> {
        loop {
            let initial = self.src[self.take(1)?];
            if initial == 0xff {
                return Ok(());
            }
            if initial >> 5 != major {
                return Err(Stop::NotCbor);
            }
            let n = self.argument(initial & 0x1f)?.ok_or(Stop::NotCbor)?;
            let at = self.take(n)?;
            if major == 3 && std::str::from_utf8(&self.src[at..at + n as usize]).is_err() {
                return Err(Stop::NotCbor);
            }
        }
    }
}

fn int(v: i128) -> Node {
    match i64::try_from(v) {
        Ok(small) => Node::Int(small),
        Err(_) => Node::Wide(v),
    }
}

/// IEEE 754 half precision, exactly.
fn half(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let frac = (h & 0x3ff) as f64;
    let magnitude = if exp == 0 {
        frac * 2f64.powi(-24)
    } else if exp == 31 {
        if frac == 0.0 {
            f64::INFINITY
        } else {
            f64::NAN
        }
    } else {
        (1.0 + frac / 1024.0) * 2f64.powi(exp - 15)
    };
    sign * magnitude
}

/// cbor.decode + detect: Ok(Some(tree)) for a record (or, behind the self-describe tag, any
/// item), Ok(None) when the value is not CBOR (PayloadError), Err(HandBack).
pub fn detect(
    payload: &[u8],
    start: usize,
    end: usize,
    nodes: usize,
    max_depth: usize,
    printable: &[u8],
) -> Result<Option<Node>, DErr> {
    let described = payload[start..end].starts_with(SELF_DESCRIBE);
    let body = if described { start + SELF_DESCRIBE.len() } else { start };
    if end - body > nodes {
        return Err(DErr::HandBack); // count_within and OverBudget: the Python side decides
    }
    let mut reader = Reader { src: payload, pos: body, end, max_depth, doubt: false };
    let value = match reader.item(0) {
        Ok(Item::Value(value)) => value,
        Ok(Item::Break) => return Ok(None),
        Err(Stop::NotCbor) => return Ok(None),
    };
    if reader.pos != end {
        return Ok(None); // bytes after the value
    }
    if reader.doubt {
        return Err(DErr::HandBack);
    }
    if described {
        return Ok(Some(value));
    }
    if !matches!(value, Node::Map(_) | Node::List(_)) {
        return Ok(None);
    }
    match crate::tree::plausible_record(&value, payload, printable) {
        Some(true) => Ok(Some(value)),
        Some(false) => Ok(None),
        None => Err(DErr::HandBack),
    }
}
