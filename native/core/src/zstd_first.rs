//! codecs/zstd_first.py: the first byte of a zstd frame's content, read from its first block
//! without decoding it (ZstdFrame.first_byte), for COMPRESSION STATS, which sizes a frame from its
//! header and only needs to know whether something recognisable may start its content. A raw
//! block's first byte, an RLE block's, or a compressed block's first literal: raw, one byte
//! repeated, or the first code of its Huffman-coded first stream, read from the literals' table
//! (its weights written directly or FSE-coded, RFC 8878 4.1.1 and 4.2.1) as libzstd's tables read
//! it. Nothing past it is read. A few thousand instructions a frame (most of them decoding the
//! ~124 FSE-coded weights a JSON frame's table carries), where libzstd's decode of a small frame
//! builds a 2,048-entry table first.

/// Huffman weights hold at most this many bits a code (HUF_TABLELOG_MAX).
const HUF_MAX_BITS: u32 = 12;
/// The FSE table of the Huffman weights is at most this large (its accuracy log).
const WEIGHTS_MAX_LOG: u32 = 6;
/// Weights a table holds at the most (the last one is implied).
const MAX_WEIGHTS: usize = 255;

/// The headers are not what a frame libzstd reads would have.
struct Bad;

/// The first literal of a compressed block (its bytes after the block header); None where its
/// literals section does not give it (none, a treeless section, a table it cannot read).
pub fn first_literal(block: &[u8]) -> Option<u8> {
    literal(block).ok().flatten()
}

fn at(bytes: &[u8], i: usize) -> Result<u8, Bad> {
    bytes.get(i).copied().ok_or(Bad)
}

fn literal(block: &[u8]) -> Result<Option<u8>, Bad> {
    let lead = at(block, 0)?;
    let (kind, form) = (lead & 3, (lead >> 2) & 3);
    if kind < 2 {
        // raw, or one byte repeated: the first byte after the section's header
        let (head, size) = match form {
            0 | 2 => (1, (lead >> 3) as usize),
            1 => (2, (lead >> 4) as usize + ((at(block, 1)? as usize) << 4)),
            _ => {
                (3, (lead >> 4) as usize + ((at(block, 1)? as usize) << 4) + ((at(block, 2)? as usize) << 12))
            }
        };
        return if size > 0 { Ok(Some(at(block, head)?)) } else { Ok(None) };
    }
    if kind != 2 {
        return Ok(None); // treeless: the previous block's table (none in a frame's first block)
    }
    let mut four = [0u8; 4];
    for (i, b) in four.iter_mut().enumerate() {
        *b = block.get(i).copied().unwrap_or(0);
    }
    let word = u32::from_le_bytes(four) as usize;
    let (head, size, packed) = match form {
        0 | 1 => (3, (word >> 4) & 0x3FF, (word >> 14) & 0x3FF),
        2 => (4, (word >> 4) & 0x3FFF, word >> 18),
        _ => (5, (word >> 4) & 0x3FFFF, (word >> 22) + ((at(block, 4)? as usize) << 10)),
    };
    let Some(literals) = block.get(head..head + packed) else { return Ok(None) };
    if size == 0 {
        return Ok(None);
    }
    let (weights, count, used) = weights(literals)?;
    let table = Table::of(&weights[..count])?;
    let streams = &literals[used..];
    let stream = if form != 0 {
        // four streams: a jump table of the first three's sizes, the first stream after it
        if streams.len() < 6 {
            return Ok(None);
        }
        let first = streams[0] as usize | (streams[1] as usize) << 8;
        &streams[6..(6 + first).min(streams.len())]
    } else {
        streams
    };
    match stream.last() {
        None | Some(0) => return Ok(None),
        Some(_) => {}
    }
    // read from the stream's end, the highest bit of its last byte marking where: the first code
    // is the table's bits below that mark (zeros past the stream's start)
    let tail = &stream[stream.len().saturating_sub(8)..];
    let mut eight = [0u8; 8];
    eight[..tail.len()].copy_from_slice(tail);
    let value = u64::from_le_bytes(eight) as u128;
    let below = 127 - value.leading_zeros(); // the mark's place
    let index = ((value << table.bits) >> below) as u32 & ((1u32 << table.bits) - 1);
    Ok(table.symbol(index))
}

/// The Huffman weights of the literals' table (the last one not written: implied): the weights
/// and how many, and the bytes of the table's description.
fn weights(literals: &[u8]) -> Result<([u8; MAX_WEIGHTS], usize, usize), Bad> {
    let lead = at(literals, 0)? as usize;
    if lead >= 128 {
        // written directly, four bits each
        let count = lead - 127;
        let used = 1 + count.div_ceil(2);
        let packed = literals.get(1..used).ok_or(Bad)?;
        let mut weights = [0u8; MAX_WEIGHTS];
        for (pair, &b) in weights.chunks_exact_mut(2).zip(packed) {
            pair[0] = b >> 4;
            pair[1] = b & 15;
        }
        return Ok((weights, count, used));
    }
    if lead == 0 || 1 + lead > literals.len() {
        return Err(Bad);
    }
    let (weights, count) = fse_weights(&literals[1..1 + lead])?;
    Ok((weights, count, 1 + lead))
}

/// The literals' table as the first code reads it: its bits, its weights (the last implied) and
/// how many symbols have each weight.
struct Table<'a> {
    bits: u32,
    written: &'a [u8],
    last: u8,
    ranks: [u32; HUF_MAX_BITS as usize + 1],
}

impl<'a> Table<'a> {
    /// HUF_readStats' checks, the last weight implied.
    fn of(written: &'a [u8]) -> Result<Table<'a>, Bad> {
        // how many weights have each value (one increment a weight), then checked and summed
        let mut counts = [0u32; 256];
        for &w in written {
            counts[w as usize] += 1;
        }
        if counts[HUF_MAX_BITS as usize + 1..].iter().any(|&c| c != 0) {
            return Err(Bad);
        }
        let mut ranks = [0u32; HUF_MAX_BITS as usize + 1];
        ranks.copy_from_slice(&counts[..=HUF_MAX_BITS as usize]);
        let total = (1..=HUF_MAX_BITS).map(|w| ranks[w as usize] << (w - 1)).sum::<u32>();
        if total == 0 {
            return Err(Bad);
        }
        let bits = 32 - total.leading_zeros();
        if bits > HUF_MAX_BITS {
            return Err(Bad);
        }
        let rest = (1u32 << bits) - total;
        let last = 32 - rest.leading_zeros();
        if last == 0 || 1u32 << (last - 1) != rest {
            return Err(Bad);
        }
        ranks[last as usize] += 1;
        if ranks[1] < 2 || ranks[1] & 1 == 1 {
            return Err(Bad);
        }
        Ok(Table { bits, written, last: last as u8, ranks })
    }

    /// The symbol of a code read as `bits` bits: codes laid out by weight, then by symbol
    /// (HUF_readDTableX1), each weight w taking 2**(w-1) places: the weight's range found from
    /// the counts of each weight, then the symbol among those of that weight.
    fn symbol(&self, index: u32) -> Option<u8> {
        let mut start = 0u32;
        for w in 1..=self.bits {
            let span = 1u32 << (w - 1);
            let end = start + self.ranks[w as usize] * span;
            if index < end {
                let mut nth = (index - start) >> (w - 1);
                for (s, &sw) in self.written.iter().enumerate() {
                    if sw as u32 == w {
                        if nth == 0 {
                            return u8::try_from(s).ok();
                        }
                        nth -= 1;
                    }
                }
                let last = nth == 0 && self.last as u32 == w;
                return if last { u8::try_from(self.written.len()).ok() } else { None };
            }
            start = end;
        }
        None
    }
}

/// The bytes of the weights' table description (at most 127), copied between zeros so that every
/// read of its bits, forward (the normalized counts) or backward (the weights' bitstream, whose
/// bytes before its start are zeroed), is one unaligned 64-bit load: no branch on the bounds, no
/// byte-at-a-time edge (BIT_DStream's container, in effect).
struct Padded {
    bytes: [u8; PAD + MAX_DESCRIPTION + PAD],
}

/// The zeros each side of the description: more than any read reaches past either end (a read
/// of at most 16 bits, at most 24 bits below the start: the backward stream's overflow).
const PAD: usize = 8;
/// The weights' FSE description is at most this long (its length is written below 128).
const MAX_DESCRIPTION: usize = 127;

impl Padded {
    fn of(data: &[u8]) -> Option<Padded> {
        let mut bytes = [0u8; PAD + MAX_DESCRIPTION + PAD];
        bytes.get_mut(PAD..PAD + data.len())?.copy_from_slice(data);
        Some(Padded { bytes })
    }

    /// Bits `at`..`at + n` of the description read as a little-endian number (n at most 24),
    /// zeros outside it: the eight bytes from the one holding bit `at` (none past the buffer:
    /// all zeros there).
    fn bits(&self, at: i64, n: u32) -> u32 {
        let mask = (1u64 << n) - 1;
        let word = usize::try_from((at >> 3) + PAD as i64)
            .ok()
            .and_then(|i| self.bytes.get(i..i + 8))
            .map_or(0, |eight| u64::from_le_bytes(eight.try_into().unwrap_or([0; 8])));
        ((word >> (at & 7)) & mask) as u32
    }
}

/// A bitstream read from its end (libzstd's BIT_DStream): the bits below the last byte's highest
/// set bit, most significant first; zeros past its start, which overflow it. It is the
/// description's bytes from `start` on, those before `start` zeroed.
struct BackBits<'a> {
    padded: &'a Padded,
    /// The stream's first bit in the description.
    start: i64,
    /// The description's bits below the mark not yet read (below `start`: read past the start).
    left: i64,
}

impl<'a> BackBits<'a> {
    fn new(padded: &'a mut Padded, start: usize, end: usize) -> Option<BackBits<'a>> {
        let last = *padded.bytes.get(PAD + end.checked_sub(1)?)?;
        if last == 0 || start >= end {
            return None;
        }
        padded.bytes.get_mut(PAD..PAD + start)?.fill(0);
        let mark = 7 - last.leading_zeros() as i64;
        Some(BackBits { padded, start: 8 * start as i64, left: 8 * (end as i64 - 1) + mark })
    }

    /// The `n` bits (at most 24) below `self.left`, most significant first; zeros below the start.
    fn read(&mut self, n: u32) -> u32 {
        self.left -= n as i64;
        self.padded.bits(self.left, n)
    }

    fn overflowed(&self) -> bool {
        self.left < self.start
    }
}

/// The FSE table of the weights: per state (its symbol, the bits its next state reads, that
/// state's base).
type FseTable = [(u8, u8, u16); 1 << WEIGHTS_MAX_LOG];

/// FSE-coded Huffman weights (FSE_decompress_wksp with an accuracy log of at most 6): the table's
/// normalized counts, then two interleaved states read from the end of the rest. The weights
/// decoded (the last one implied) and how many.
fn fse_weights(data: &[u8]) -> Result<([u8; MAX_WEIGHTS], usize), Bad> {
    let mut padded = Padded::of(data).ok_or(Bad)?;
    let NCount { counts, symbols, log, used } = normalized_counts(&padded, data.len())?;
    let table = fse_table(&counts[..symbols], log)?;
    let mut reader = BackBits::new(&mut padded, used, data.len()).ok_or(Bad)?;
    let mask = (1usize << WEIGHTS_MAX_LOG) - 1; // (each state is below the table's size)
    let mut state = reader.read(log) as usize & mask;
    let mut other = reader.read(log) as usize & mask;
    let mut out = [0u8; MAX_WEIGHTS];
    let mut n = 0;
    // the two states take turns: each decodes its weight, reads its next state, and hands over
    loop {
        if n > MAX_WEIGHTS - 2 {
            return Err(Bad);
        }
        let (symbol, bits, base) = table[state];
        out[n] = symbol;
        n += 1;
        state = (base as usize + reader.read(bits as u32) as usize) & mask;
        if reader.overflowed() {
            out[n] = table[other].0;
            return Ok((out, n + 1));
        }
        std::mem::swap(&mut state, &mut other);
    }
}

/// The weights' FSE table description's header (FSE_readNCount).
struct NCount {
    /// The normalized counts (-1: a probability below one) of the first `symbols` symbols.
    counts: [i16; MAX_WEIGHTS + 1],
    symbols: usize,
    /// The accuracy log.
    log: u32,
    /// The header's bytes.
    used: usize,
}

/// FSE_readNCount: the normalized counts and how many, the accuracy log, the header's bytes (bits read little-endian, zeros past the end, which is then an error).
/// An accuracy log above the weights' (6) is refused here: FSE_decompress_wksp refuses it next.
fn normalized_counts(padded: &Padded, len: usize) -> Result<NCount, Bad> {
    let mut pos = 0i64;
    let log = padded.bits(pos, 4) + 5;
    if log > WEIGHTS_MAX_LOG {
        return Err(Bad);
    }
    pos += 4;
    let (mut remaining, mut threshold, mut width) = ((1i32 << log) + 1, 1i32 << log, log + 1);
    let (mut counts, mut n) = ([0i16; MAX_WEIGHTS + 1], 0usize);
    let mut previous_zero = false;
    loop {
        if previous_zero {
            let mut repeat = padded.bits(pos, 2);
            pos += 2;
            let mut zeros = repeat as usize;
            while repeat == 3 {
                repeat = padded.bits(pos, 2);
                pos += 2;
                zeros += repeat as usize;
            }
            n += zeros; // (the counts start at zero)
            if n > MAX_WEIGHTS {
                break;
            }
        }
        let most = 2 * threshold - 1 - remaining;
        let read = padded.bits(pos, width) as i32;
        let mut count;
        if read & (threshold - 1) < most {
            count = read & (threshold - 1);
            pos += width as i64 - 1;
        } else {
            count = read & (2 * threshold - 1);
            if count >= threshold {
                count -= most;
            }
            pos += width as i64;
        }
        count -= 1;
        remaining -= count.abs();
        if let Some(place) = counts.get_mut(n) {
            *place = count as i16;
        }
        n += 1;
        previous_zero = count == 0;
        if remaining < threshold {
            if remaining <= 1 {
                break;
            }
            width = 32 - (remaining as u32).leading_zeros();
            threshold = 1 << (width - 1);
        }
        if n > MAX_WEIGHTS {
            break;
        }
    }
    let used = (pos as usize).div_ceil(8);
    if remaining != 1 || n > MAX_WEIGHTS + 1 || used > len {
        return Err(Bad);
    }
    Ok(NCount { counts, symbols: n, log, used })
}

/// FSE_buildDTable: per state (its symbol, the bits its next state reads, that state's base).
fn fse_table(counts: &[i16], log: u32) -> Result<FseTable, Bad> {
    let size = 1usize << log;
    let mut symbols = [0u8; 1 << WEIGHTS_MAX_LOG];
    // (the last place not yet given to a probability below one; -1 when all are)
    let mut high = size as isize - 1;
    let mut following = [0u32; MAX_WEIGHTS + 1];
    for (s, &count) in counts.iter().enumerate() {
        if count == -1 {
            *symbols.get_mut(usize::try_from(high).map_err(|_| Bad)?).ok_or(Bad)? = s as u8;
            high -= 1;
            following[s] = 1;
        } else {
            following[s] = count.max(0) as u32;
        }
    }
    let step = (size >> 1) + (size >> 3) + 3;
    let mut position = 0usize;
    for (s, &count) in counts.iter().enumerate() {
        for _ in 0..count.max(0) {
            symbols[position] = s as u8;
            position = (position + step) & (size - 1);
            while position as isize > high {
                position = (position + step) & (size - 1);
            }
        }
    }
    if position != 0 {
        return Err(Bad);
    }
    let mut table: FseTable = [(0, 0, 0); 1 << WEIGHTS_MAX_LOG];
    for (entry, &s) in table.iter_mut().zip(&symbols[..size]) {
        let state = following[s as usize];
        following[s as usize] += 1;
        if state == 0 {
            return Err(Bad);
        }
        let bits = log - (31 - state.leading_zeros());
        *entry = (s, bits as u8, ((state << bits) as usize - size) as u16);
    }
    Ok(table)
}
