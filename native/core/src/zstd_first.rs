//! codecs/zstd_first.py: the first byte of a zstd frame's content, read from its first block
//! without decoding it (ZstdFrame.first_byte), for COMPRESSION STATS, which sizes a frame from its
//! header and only needs to know whether something recognisable may start its content. A raw
//! block's first byte, an RLE block's, or a compressed block's first literal: raw, one byte
//! repeated, or the first code of its Huffman-coded first stream, read from the literals' table
//! (its weights written directly or FSE-coded, RFC 8878 4.1.1 and 4.2.1) as libzstd's tables read
//! it. Nothing past it is read. A few hundred operations a frame, where libzstd's decode of a
//! small frame builds a 2,048-entry table first.

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
    let (weights, used) = weights(literals)?;
    let table = Table::of(&weights)?;
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

/// The Huffman weights of the literals' table (the last one not written: implied), and the bytes
/// of the table's description.
fn weights(literals: &[u8]) -> Result<(Vec<u8>, usize), Bad> {
    let lead = at(literals, 0)? as usize;
    if lead >= 128 {
        // written directly, four bits each
        let count = lead - 127;
        let used = 1 + count.div_ceil(2);
        if used > literals.len() {
            return Err(Bad);
        }
        let weights =
            (0..count).map(|i| (literals[1 + i / 2] >> if i % 2 == 1 { 0 } else { 4 }) & 15).collect();
        return Ok((weights, used));
    }
    if lead == 0 || 1 + lead > literals.len() {
        return Err(Bad);
    }
    Ok((fse_weights(&literals[1..1 + lead])?, 1 + lead))
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
        let mut ranks = [0u32; HUF_MAX_BITS as usize + 1];
        let mut total = 0u32;
        for &w in written {
            if w as u32 > HUF_MAX_BITS {
                return Err(Bad);
            }
            ranks[w as usize] += 1;
            total += (1u32 << w) >> 1;
        }
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
                let nth = ((index - start) >> (w - 1)) as usize;
                let weights = self.written.iter().chain(std::iter::once(&self.last));
                let s = weights.enumerate().filter(|(_, &sw)| sw as u32 == w).nth(nth)?.0;
                return u8::try_from(s).ok();
            }
            start = end;
        }
        None
    }
}

/// A bitstream read from its end (libzstd's BIT_DStream): the bits below the last byte's highest
/// set bit, most significant first; zeros past its start, which overflow it.
struct BackBits<'a> {
    stream: &'a [u8],
    /// Bits below the mark not yet read (negative: read past the start).
    left: i64,
}

impl<'a> BackBits<'a> {
    fn new(stream: &'a [u8]) -> Option<BackBits<'a>> {
        let last = *stream.last()?;
        if last == 0 {
            return None;
        }
        let mark = 7 - last.leading_zeros() as i64;
        Some(BackBits { stream, left: 8 * (stream.len() as i64 - 1) + mark })
    }

    /// The `n` bits (at most 24) below `self.left`, most significant first; zeros below bit 0.
    fn read(&mut self, n: u32) -> u32 {
        self.left -= n as i64;
        bits_at(self.stream, self.left, n)
    }

    fn overflowed(&self) -> bool {
        self.left < 0
    }
}

/// Bits `at`..`at + n` of `bytes` read as a little-endian number (n at most 24), zeros outside it.
fn bits_at(bytes: &[u8], at: i64, n: u32) -> u32 {
    let mask = (1u64 << n) - 1;
    if at >= 0 {
        // one unaligned load where eight bytes follow the one holding bit `at` (most reads)
        let i = (at >> 3) as usize;
        if let Some(eight) = bytes.get(i..i + 8) {
            let word = u64::from_le_bytes(eight.try_into().unwrap_or([0; 8]));
            return ((word >> (at & 7)) & mask) as u32;
        }
    }
    // the five bytes from the one holding bit `at` (zeros below the start and past the end)
    let first = at.div_euclid(8);
    let mut word = 0u64;
    for k in 0..5i64 {
        let i = first + k;
        if i >= 0 {
            if let Some(&b) = bytes.get(i as usize) {
                word |= (b as u64) << (8 * k);
            }
        }
    }
    ((word >> at.rem_euclid(8)) & mask) as u32
}

/// FSE-coded Huffman weights (FSE_decompress_wksp with an accuracy log of at most 6): the table's
/// normalized counts, then two interleaved states read from the end of the rest.
fn fse_weights(data: &[u8]) -> Result<Vec<u8>, Bad> {
    let (counts, log, used) = normalized_counts(data)?;
    if log > WEIGHTS_MAX_LOG {
        return Err(Bad);
    }
    let table = fse_table(&counts, log)?;
    let mut reader = BackBits::new(&data[used..]).ok_or(Bad)?;
    let mut states = [reader.read(log) as usize, reader.read(log) as usize];
    let mut out = Vec::with_capacity(64);
    let mut turn = 0;
    loop {
        if out.len() > MAX_WEIGHTS - 2 {
            return Err(Bad);
        }
        let (symbol, bits, base) = table[states[turn]];
        out.push(symbol);
        states[turn] = base as usize + reader.read(bits as u32) as usize;
        if reader.overflowed() {
            out.push(table[states[1 - turn]].0);
            return Ok(out);
        }
        turn = 1 - turn;
    }
}

/// FSE_readNCount: the normalized counts (-1: a probability below one), the accuracy log, the
/// header's bytes (bits read little-endian, zeros past the end, which is then an error).
fn normalized_counts(data: &[u8]) -> Result<(Vec<i32>, u32, usize), Bad> {
    let mut pos = 0usize;
    let bits = |pos: usize, n: u32| bits_at(data, pos as i64, n);
    let log = bits(pos, 4) + 5;
    if log > 15 {
        return Err(Bad);
    }
    pos += 4;
    let (mut remaining, mut threshold, mut width) = ((1i32 << log) + 1, 1i32 << log, log + 1);
    let mut counts: Vec<i32> = Vec::with_capacity(64);
    let mut previous_zero = false;
    loop {
        if previous_zero {
            let mut repeat = bits(pos, 2);
            pos += 2;
            let mut zeros = repeat as usize;
            while repeat == 3 {
                repeat = bits(pos, 2);
                pos += 2;
                zeros += repeat as usize;
            }
            counts.resize(counts.len() + zeros, 0);
            if counts.len() > MAX_WEIGHTS {
                break;
            }
        }
        let most = 2 * threshold - 1 - remaining;
        let read = bits(pos, width) as i32;
        let mut count;
        if read & (threshold - 1) < most {
            count = read & (threshold - 1);
            pos += width as usize - 1;
        } else {
            count = read & (2 * threshold - 1);
            if count >= threshold {
                count -= most;
            }
            pos += width as usize;
        }
        count -= 1;
        remaining -= count.abs();
        counts.push(count);
        previous_zero = count == 0;
        if remaining < threshold {
            if remaining <= 1 {
                break;
            }
            width = 32 - (remaining as u32).leading_zeros();
            threshold = 1 << (width - 1);
        }
        if counts.len() > MAX_WEIGHTS {
            break;
        }
    }
    let used = pos.div_ceil(8);
    if remaining != 1 || counts.len() > MAX_WEIGHTS + 1 || used > data.len() {
        return Err(Bad);
    }
    Ok((counts, log, used))
}

/// FSE_buildDTable: per state (its symbol, the bits its next state reads, that state's base).
fn fse_table(counts: &[i32], log: u32) -> Result<Vec<(u8, u8, u16)>, Bad> {
    let size = 1usize << log;
    let mut symbols = vec![0u8; size];
    // (the last place not yet given to a probability below one; -1 when all are)
    let mut high = size as isize - 1;
    let mut following: Vec<u32> = Vec::with_capacity(counts.len());
    for (s, &count) in counts.iter().enumerate() {
        if count == -1 {
            *symbols.get_mut(usize::try_from(high).map_err(|_| Bad)?).ok_or(Bad)? = s as u8;
            high -= 1;
            following.push(1);
        } else {
            following.push(count.max(0) as u32);
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
    let mut table = Vec::with_capacity(size);
    for &s in &symbols {
        let state = following[s as usize];
        following[s as usize] += 1;
        if state == 0 {
            return Err(Bad);
        }
        let bits = log - (31 - state.leading_zeros());
        table.push((s, bits as u8, ((state << bits) as usize - size) as u16));
    }
    Ok(table)
}
