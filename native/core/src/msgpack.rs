//! payload/formats/msgpack.py's reading: msgpack-python 1.2's `unpackb(raw=False,
//! strict_map_key=False, use_list=True, timestamp=3, ext_hook=Tagged, object_pairs_hook=pairs_kept)` with its limits (1,024
//! open containers; maps as dicts; the whole value one object), then `detect`'s tests.

use crate::common::DErr;
use crate::tree::{MapBuilder, Node, Str};

/// msgpack's MSGPACK_EMBED_STACK_SIZE: containers open at once at the most.
const STACK: usize = 1024;

/// The value is no MessagePack (msgpack raises: PayloadError).
pub enum Stop {
    NotMsgpack,
}

struct Reader<'a> {
    src: &'a [u8],
    pos: usize,
    end: usize,
    /// A timestamp was read (a datetime on the Python side, or its error): the value, when it
    /// reads, is handed back.
    doubt: bool,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<usize, Stop> {
        if self.end - self.pos < n {
            return Err(Stop::NotMsgpack); // incomplete input
        }
        let at = self.pos;
        self.pos += n;
        Ok(at)
    }

    fn be(&mut self, n: usize) -> Result<u64, Stop> {
        let at = self.take(n)?;
        let mut v: u64 = 0;
        for &b in &self.src[at..at + n] {
            v = v << 8 | b as u64;
        }
        Ok(v)
    }

    fn string(&mut self, n: usize) -> Result<Node, Stop> {
        let at = self.take(n)?;
        if std::str::from_utf8(&self.src[at..at + n]).is_err() {
            return Err(Stop::NotMsgpack); // UnicodeDecodeError
        }
        Ok(Node::Str(Str::Span(at as u32, n as u32)))
    }

    fn bin(&mut self, n: usize) -> Result<Node, Stop> {
        let at = self.take(n)?;
        Ok(Node::Bytes(at as u32, n as u32))
    }

    fn ext(&mut self, n: usize) -> Result<Node, Stop> {
        let code = self.src[self.take(1)?] as i8;
        self.take(n)?;
        if code == -1 {
            self.doubt = true;
        }
        Ok(Node::Ext)
    }

    fn int(v: i128) -> Node {
        match i64::try_from(v) {
            Ok(small) => Node::Int(small),
            Err(_) => Node::Wide(v),
        }
    }

    /// One object; `open`: containers open around it.
    fn object(&mut self, open: usize) -> Result<Node, Stop> {
        let b = self.src[self.take(1)?];
        Ok(match b {
            0x00..=0x7f => Node::Int(b as i64),
            0x80..=0x8f => return self.map((b & 0x0f) as usize, open),
            0x90..=0x9f => return self.array((b & 0x0f) as usize, open),
            0xa0..=0xbf => return self.string((b & 0x1f) as usize),
            0xc0 => Node::Null,
            0xc1 => return Err(Stop::NotMsgpack),
            0xc2 => Node::Bool(false),
            0xc3 => Node::Bool(true),
            0xc4 => {
                let n = self.be(1)? as usize;
                return self.bin(n);
            }
            0xc5 => {
                let n = self.be(2)? as usize;
                return self.bin(n);
            }
            0xc6 => {
                let n = self.be(4)? as usize;
                return self.bin(n);
            }
            0xc7 => {
                let n = self.be(1)? as usize;
                return self.ext(n);
            }
            0xc8 => {
                let n = self.be(2)? as usize;
                return self.ext(n);
            }
            0xc9 => {
                let n = self.be(4)? as usize;
                return self.ext(n);
            }
            0xca => Node::Float(f32::from_bits(self.be(4)? as u32) as f64),
            0xcb => Node::Float(f64::from_bits(self.be(8)?)),
            0xcc => Node::Int(self.be(1)? as i64),
            0xcd => Node::Int(self.be(2)? as i64),
            0xce => Node::Int(self.be(4)? as i64),
            0xcf => Self::int(self.be(8)? as i128),
            0xd0 => Node::Int(self.be(1)? as u8 as i8 as i64),
            0xd1 => Node::Int(self.be(2)? as u16 as i16 as i64),
            0xd2 => Node::Int(self.be(4)? as u32 as i32 as i64),
            0xd3 => Node::Int(self.be(8)? as i64),
            0xd4 => return self.ext(1),
            0xd5 => return self.ext(2),
            0xd6 => return self.ext(4),
            0xd7 => return self.ext(8),
            0xd8 => return self.ext(16),
            0xd9 => {
                let n = self.be(1)? as usize;
                return self.string(n);
            }
            0xda => {
                let n = self.be(2)? as usize;
                return self.string(n);
            }
            0xdb => {
                let n = self.be(4)? as usize;
                return self.string(n);
            }
            0xdc => {
                let n = self.be(2)? as usize;
                return self.array(n, open);
            }
            0xdd => {
                let n = self.be(4)? as usize;
                return self.array(n, open);
            }
            0xde => {
                let n = self.be(2)? as usize;
                return self.map(n, open);
            }
            0xdf => {
                let n = self.be(4)? as usize;
                return self.map(n, open);
            }
            0xe0..=0xff => Node::Int(b as i8 as i64),
        })
    }

    fn array(&mut self, n: usize, open: usize) -> Result<Node, Stop> {
        if open >= STACK {
            return Err(Stop::NotMsgpack); // StackError
        }
        if n > self.end - self.pos {
            return Err(Stop::NotMsgpack); // more items than bytes: incomplete
        }
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            items.push(self.object(open + 1)?);
        }
        Ok(Node::List(items))
    }

    fn map(&mut self, n: usize, open: usize) -> Result<Node, Stop> {
        if open >= STACK {
            return Err(Stop::NotMsgpack);
        }
        if n > (self.end - self.pos) / 2 {
            return Err(Stop::NotMsgpack);
        }
        let mut map = MapBuilder::with_room(n);
        for _ in 0..n {
            let key = self.object(open + 1)?;
            let value = self.object(open + 1)?;
            if map.insert(key, value, self.src).is_err() {
                return Err(Stop::NotMsgpack); // unhashable key: TypeError
            }
        }
        // keys a dict takes as one, of two types (1 and 1.0): the Python side keeps both
        self.doubt |= map.alike;
        Ok(map.finish())
    }
}

/// msgpack.decode + detect's record test: Ok(Some(tree)) for a record, Ok(None) when the value
/// is not one (PayloadError: detection goes on), Err(HandBack).
pub fn detect(
    payload: &[u8],
    start: usize,
    end: usize,
    nodes: usize,
    printable: &[u8],
) -> Result<Option<Node>, DErr> {
    if end - start > nodes {
        return Err(DErr::HandBack); // count_within and OverBudget: the Python side decides
    }
    let mut reader = Reader { src: payload, pos: start, end, doubt: false };
    let value = match reader.object(0) {
        Ok(value) => value,
        Err(Stop::NotMsgpack) => return Ok(None),
    };
    if reader.pos != end {
        return Ok(None); // ExtraData
    }
    if reader.doubt {
        return Err(DErr::HandBack);
    }
    let container = match &value {
        Node::Map(e) => !e.is_empty(),
        Node::List(i) => !i.is_empty(),
        _ => false,
    };
    if !container {
        return Ok(None);
    }
    match crate::tree::plausible_record(&value, payload, printable) {
        Some(true) => Ok(Some(value)),
        Some(false) => Ok(None),
        None => Err(DErr::HandBack),
    }
}
