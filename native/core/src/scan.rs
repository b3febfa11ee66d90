//! Byte scans many bytes at a time: the hot loops of the text rule and the JSON reader ask "is
//! there any byte of this kind" far more often than "which one". Eight bytes at a time in plain
//! Rust (SWAR); on x86_64 sixteen (SSE2, part of the architecture) and, where the CPU has AVX2
//! (told at run time: one wheel runs everywhere), thirty-two. A JSON string's end is found 64
//! bytes at a time as simdjson finds it: the block's quotes, backslashes and control characters
//! as bit masks, the escaped characters from the runs of backslashes (an odd run escapes the
//! byte after it), the string's end the first quote not escaped; only escapes are looked at one
//! by one.

const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

#[inline(always)]
fn word(data: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&data[at..at + 8]);
    u64::from_le_bytes(b)
}

/// Non-zero when some byte of `x` is below `n` (n <= 128).
#[inline(always)]
fn has_less(x: u64, n: u8) -> u64 {
    x.wrapping_sub(LOW * n as u64) & !x & HIGH
}

/// Non-zero when some byte of `x` equals `b`.
#[inline(always)]
fn has_byte(x: u64, b: u8) -> u64 {
    let y = x ^ (LOW * b as u64);
    y.wrapping_sub(LOW) & !y & HIGH
}

/// The first position from `i` (before `end`) holding a quote, a backslash or a C0 control
/// character (what ends the plain run of a JSON string); `end` when none does.
#[inline]
pub fn string_special(src: &[u8], i: usize, end: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        // SSE2 is part of x86_64: sixteen bytes compared at once, the first hit from the mask
        sse2::string_special(src, i, end)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        swar_string_special(src, i, end)
    }
}

/// The backslashes of a block of sixteen bytes as a bit mask (bit k: `block[k]`).
#[inline]
pub fn backslashes16(block: &[u8; 16]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        sse2::backslashes16(block)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        block.iter().enumerate().fold(0u32, |mask, (k, &b)| mask | (((b == b'\\') as u32) << k))
    }
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_andnot_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_cvtsi128_si64,
        _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_sad_epu8, _mm_set1_epi8,
        _mm_setzero_si128, _mm_sub_epi8, _mm_unpackhi_epi64,
    };

    /// The backslashes of sixteen bytes as a bit mask.
    #[inline]
    pub fn backslashes16(block: &[u8; 16]) -> u32 {
        // SAFETY: SSE2 is always present on x86_64; the load reads the sixteen bytes of `block`.
        unsafe {
            let chunk = _mm_loadu_si128(block.as_ptr().cast::<__m128i>());
            _mm_movemask_epi8(_mm_cmpeq_epi8(chunk, _mm_set1_epi8(b'\\' as i8))) as u32
        }
    }

    /// A block of 64 bytes at `at` as (backslashes, quotes, control characters) bit masks.
    #[inline]
    pub fn classify(src: &[u8], at: usize) -> (u64, u64, u64) {
        assert!(at + 64 <= src.len());
        let (mut backslash, mut quote, mut control) = (0u64, 0u64, 0u64);
        // SAFETY: SSE2 is always present on x86_64; the four loads are inside src (asserted).
        unsafe {
            let q = _mm_set1_epi8(b'"' as i8);
            let b = _mm_set1_epi8(b'\\' as i8);
            let c = _mm_set1_epi8(0x1f);
            for k in 0..4 {
                let chunk = _mm_loadu_si128(src.as_ptr().add(at + 16 * k).cast::<__m128i>());
                let shift = 16 * k as u32;
                backslash |= (_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, b)) as u16 as u64) << shift;
                quote |= (_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, q)) as u16 as u64) << shift;
                control |=
                    (_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(chunk, c), c)) as u16 as u64) << shift;
            }
        }
        (backslash, quote, control)
    }

    /// A block of 64 bytes at `at` as (backslashes, quotes, JSON whitespace) bit masks.
    #[inline]
    pub fn classify_space(src: &[u8], at: usize) -> (u64, u64, u64) {
        assert!(at + 64 <= src.len());
        let (mut backslash, mut quote, mut space) = (0u64, 0u64, 0u64);
        // SAFETY: SSE2 is always present on x86_64; the four loads are inside src (asserted).
        unsafe {
            let q = _mm_set1_epi8(b'"' as i8);
            let b = _mm_set1_epi8(b'\\' as i8);
            let (sp, tab, nl, cr) = (
                _mm_set1_epi8(b' ' as i8),
                _mm_set1_epi8(b'\t' as i8),
                _mm_set1_epi8(b'\n' as i8),
                _mm_set1_epi8(b'\r' as i8),
            );
            for k in 0..4 {
                let chunk = _mm_loadu_si128(src.as_ptr().add(at + 16 * k).cast::<__m128i>());
                let shift = 16 * k as u32;
                backslash |= (_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, b)) as u16 as u64) << shift;
                quote |= (_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, q)) as u16 as u64) << shift;
                let blank = _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(chunk, sp), _mm_cmpeq_epi8(chunk, tab)),
                    _mm_or_si128(_mm_cmpeq_epi8(chunk, nl), _mm_cmpeq_epi8(chunk, cr)),
                );
                space |= (_mm_movemask_epi8(blank) as u16 as u64) << shift;
            }
        }
        (backslash, quote, space)
    }

    /// How many bytes of src[at..at + 16 * steps] are `a`, `b` or `c` (steps <= 255).
    #[inline]
    pub fn count_three(src: &[u8], at: usize, steps: usize, a: u8, b: u8, c: u8) -> usize {
        assert!(steps <= 255 && at + 16 * steps <= src.len());
        // SAFETY: SSE2 is always present on x86_64; every load reads 16 bytes inside src (asserted).
        unsafe {
            let (va, vb, vc) = (_mm_set1_epi8(a as i8), _mm_set1_epi8(b as i8), _mm_set1_epi8(c as i8));
            let mut acc = _mm_setzero_si128();
            for k in 0..steps {
                let chunk = _mm_loadu_si128(src.as_ptr().add(at + 16 * k).cast::<__m128i>());
                let hits = _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(chunk, va), _mm_cmpeq_epi8(chunk, vb)),
                    _mm_cmpeq_epi8(chunk, vc),
                );
                acc = _mm_sub_epi8(acc, hits); // a hit is -1: each lane counts its hits
            }
            let sums = _mm_sad_epu8(acc, _mm_setzero_si128());
            (_mm_cvtsi128_si64(sums) as u64 + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums)) as u64)
                as usize
        }
    }

    /// Whether src[..64 * blocks] holds a byte below 0x20 or DEL (any_c0's test), sixty-four
    /// bytes at a time.
    #[inline]
    pub fn any_c0_blocks(src: &[u8], blocks: usize) -> bool {
        assert!(64 * blocks <= src.len());
        // SAFETY: SSE2 is always present on x86_64; every load reads 16 bytes inside src (asserted).
        unsafe {
            let below = _mm_set1_epi8(0x1f);
            let del = _mm_set1_epi8(0x7f);
            let hit = |chunk: __m128i| {
                // a byte below 0x20: max(byte, 0x1f) == 0x1f (unsigned)
                _mm_or_si128(_mm_cmpeq_epi8(_mm_max_epu8(chunk, below), below), _mm_cmpeq_epi8(chunk, del))
            };
            for k in 0..blocks {
                let at = src.as_ptr().add(64 * k);
                let a = hit(_mm_loadu_si128(at.cast::<__m128i>()));
                let b = hit(_mm_loadu_si128(at.add(16).cast::<__m128i>()));
                let c = hit(_mm_loadu_si128(at.add(32).cast::<__m128i>()));
                let d = hit(_mm_loadu_si128(at.add(48).cast::<__m128i>()));
                if _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d))) != 0 {
                    return true;
                }
            }
        }
        false
    }

    /// How many whole blocks of sixty-four bytes from the start of src hold only printable
    /// ASCII (0x20..=0x7e).
    #[inline]
    pub fn printable_blocks(src: &[u8]) -> usize {
        let blocks = src.len() / 64;
        // SAFETY: SSE2 is always present on x86_64; every load reads 16 bytes inside
        // src[..64 * blocks].
        unsafe {
            let below = _mm_set1_epi8(0x1f);
            let del = _mm_set1_epi8(0x7f);
            // printable: above 0x1f as a signed byte (bytes from 0x80 are negative), not DEL
            let good =
                |chunk: __m128i| _mm_andnot_si128(_mm_cmpeq_epi8(chunk, del), _mm_cmpgt_epi8(chunk, below));
            for k in 0..blocks {
                let at = src.as_ptr().add(64 * k);
                let a = good(_mm_loadu_si128(at.cast::<__m128i>()));
                let b = good(_mm_loadu_si128(at.add(16).cast::<__m128i>()));
                let c = good(_mm_loadu_si128(at.add(32).cast::<__m128i>()));
                let d = good(_mm_loadu_si128(at.add(48).cast::<__m128i>()));
                if _mm_movemask_epi8(_mm_and_si128(_mm_and_si128(a, b), _mm_and_si128(c, d))) != 0xffff {
                    return k;
                }
            }
        }
        blocks
    }

    #[inline]
    pub fn string_special(src: &[u8], mut i: usize, end: usize) -> usize {
        let end = end.min(src.len());
        // SAFETY: SSE2 is always present on x86_64; every load reads 16 bytes inside src[..end].
        unsafe {
            let quote = _mm_set1_epi8(b'"' as i8);
            let backslash = _mm_set1_epi8(b'\\' as i8);
            let space_less_one = _mm_set1_epi8(0x1f);
            while i + 16 <= end {
                let chunk = _mm_loadu_si128(src.as_ptr().add(i).cast::<__m128i>());
                // a byte below 0x20: max(byte, 0x1f) == 0x1f (unsigned)
                let control = _mm_cmpeq_epi8(_mm_max_epu8(chunk, space_less_one), space_less_one);
                let hits = _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)),
                    control,
                );
                let mask = _mm_movemask_epi8(hits) as u32;
                if mask != 0 {
                    return i + mask.trailing_zeros() as usize;
                }
                i += 16;
            }
        }
        super::swar_string_special(src, i, end)
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8, _mm256_movemask_epi8,
        _mm256_set1_epi8,
    };
    use std::sync::atomic::{AtomicU8, Ordering};

    static PRESENT: AtomicU8 = AtomicU8::new(0);

    /// Whether the CPU has AVX2 (told once at run time).
    #[inline]
    pub fn present() -> bool {
        match PRESENT.load(Ordering::Relaxed) {
            0 => {
                let found = std::is_x86_feature_detected!("avx2");
                PRESENT.store(if found { 2 } else { 1 }, Ordering::Relaxed);
                found
            }
            known => known == 2,
        }
    }

    /// classify() thirty-two bytes at a time.
    ///
    /// # Safety
    /// The CPU must have AVX2 (`present()`).
    #[target_feature(enable = "avx2")]
    pub unsafe fn classify(src: &[u8], at: usize) -> (u64, u64, u64) {
        assert!(at + 64 <= src.len());
        let q = _mm256_set1_epi8(b'"' as i8);
        let b = _mm256_set1_epi8(b'\\' as i8);
        let c = _mm256_set1_epi8(0x1f);
        let (mut backslash, mut quote, mut control) = (0u64, 0u64, 0u64);
        for k in 0..2 {
            // SAFETY: inside src (asserted)
            let chunk = unsafe { _mm256_loadu_si256(src.as_ptr().add(at + 32 * k).cast::<__m256i>()) };
            let shift = 32 * k as u32;
            backslash |= (_mm256_movemask_epi8(_mm256_cmpeq_epi8(chunk, b)) as u32 as u64) << shift;
            quote |= (_mm256_movemask_epi8(_mm256_cmpeq_epi8(chunk, q)) as u32 as u64) << shift;
            control |= (_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_max_epu8(chunk, c), c)) as u32 as u64)
                << shift;
        }
        (backslash, quote, control)
    }
}

/// string_special eight bytes at a time (SWAR), then byte by byte.
#[inline]
fn swar_string_special(src: &[u8], mut i: usize, end: usize) -> usize {
    while i + 8 <= end {
        let x = word(src, i);
        let hits = has_less(x, 0x20) | has_byte(x, b'"') | has_byte(x, b'\\');
        if hits != 0 {
            // the lowest flagged byte is the first (a borrow only carries into higher bytes)
            return i + (hits.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < end {
        let b = src[i];
        if b == b'"' || b == b'\\' || b < 0x20 {
            return i;
        }
        i += 1;
    }
    end
}

// ------------------------------------------------------------------------------ a JSON string's end

/// Why a JSON string is no string json.loads reads: a control character in it, an escape it
/// does not know, no closing quote.
#[derive(Debug, PartialEq, Eq)]
pub struct NotAString;

/// A JSON string's end, from `start` (just past its opening quote) within `src[..end]`: (the
/// closing quote's position, whether it has escapes, whether one of them is a lone surrogate),
/// as json.loads' strict scanner reads the string.
pub fn json_string_end(src: &[u8], start: usize, end: usize) -> Result<(usize, bool, bool), NotAString> {
    #[cfg(target_arch = "x86_64")]
    let wide = avx2::present();
    #[cfg(not(target_arch = "x86_64"))]
    let wide = false;
    string_end(src, start, end, wide)
}

/// json_string_end, its blocks read thirty-two bytes at a time (`wide`: AVX2) or sixteen.
#[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
fn string_end(src: &[u8], start: usize, end: usize, wide: bool) -> Result<(usize, bool, bool), NotAString> {
    let end = end.min(src.len());
    let mut state = Escapes::default();
    let mut i = start;
    #[cfg(target_arch = "x86_64")]
    {
        // a short string: its end in the first sixteen bytes, no escape before it
        if i + 16 <= end {
            let at = sse2::string_special(src, i, i + 16);
            if at < i + 16 && src[at] == b'"' {
                return Ok((at, false, false));
            }
        }
        while i + 64 <= end {
            let (backslash, quote, control) = if wide {
                // SAFETY: the CPU has AVX2 (checked); the block is inside src[..end]
                unsafe { avx2::classify(src, i) }
            } else {
                sse2::classify(src, i)
            };
            if let Some(found) = state.block(src, i, end, backslash, quote, control)? {
                return Ok(found);
            }
            i += 64;
        }
    }
    state.tail(src, i, end)
}

/// What the block scan carries from one block to the next.
#[derive(Default)]
struct Escapes {
    /// The block's first byte is escaped (the last block ended in an odd run of backslashes).
    carry: u64,
    escaped: bool,
    lone: bool,
    /// The `u` of a low surrogate's escape already read as the second half of a pair.
    paired: Option<usize>,
}

const EVEN: u64 = 0x5555_5555_5555_5555;

/// simdjson's escaped characters of a 64-byte block: each byte after an odd run of backslashes
/// (`carry` 1: the block's first byte is escaped, the last block ended in an odd run); the next
/// block's carry.
#[inline(always)]
fn escaped_bytes(backslash: u64, carry: u64) -> (u64, u64) {
    let starts = backslash & !carry;
    let follows = (starts << 1) | carry;
    let odd_starts = starts & !EVEN & !follows;
    let (even_runs, next) = odd_starts.overflowing_add(starts);
    ((EVEN ^ (even_runs << 1)) & follows, next as u64)
}

/// Each bit set from a set bit up to the next one (excluded): a block's bytes inside strings
/// from its unescaped quotes (the opening quote in, the closing one out).
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// Where a minifying scan of a JSON text stopped: `at` the first byte not scanned, `run` the
/// first byte kept and not yet copied, `inside` a string at `at`, `escaped` the byte at `at` is
/// escaped (a backslash before it, inside a string).
pub struct Minifying {
    pub at: usize,
    pub run: usize,
    pub inside: bool,
    pub escaped: bool,
}

/// The first part of minifying `text` (held.rs minified_into: the whitespace between tokens
/// dropped, strings kept as written), 64 bytes at a time on x86_64: each block's quotes,
/// backslashes and whitespace as bit masks, the escaped bytes from the backslashes' runs, the
/// bytes inside strings from the unescaped quotes, the whitespace outside them dropped (the runs
/// between copied whole onto `out`); the last partial block is read from a copy padded with zero
/// bytes (none of them special). It stops before a block with a backslash outside a string (no
/// JSON text has one: there the byte loop, which reads a backslash outside a string as a plain
/// byte, goes on from the state given).
pub fn minify_blocks(text: &str, out: &mut String) -> Minifying {
    let mut state = Minifying { at: 0, run: 0, inside: false, escaped: false };
    #[cfg(target_arch = "x86_64")]
    {
        let bytes = text.as_bytes();
        let mut carry = 0u64;
        while state.at < bytes.len() {
            let at = state.at;
            let (backslash, quote, space) = if at + 64 <= bytes.len() {
                sse2::classify_space(bytes, at)
            } else {
                let mut padded = [0u8; 64];
                padded[..bytes.len() - at].copy_from_slice(&bytes[at..]);
                sse2::classify_space(&padded, 0)
            };
            let (escaped, next) = escaped_bytes(backslash, carry);
            let inside = if state.inside { !0 } else { 0 };
            let strings = prefix_xor(quote & !escaped) ^ inside;
            if backslash & !strings != 0 {
                break;
            }
            let mut drop = space & !strings;
            while drop != 0 {
                let p = at + drop.trailing_zeros() as usize;
                drop &= drop - 1;
                // p holds an ASCII byte, so both ends are character boundaries
                out.push_str(&text[state.run..p]);
                state.run = p + 1;
            }
            carry = next;
            state.at = (at + 64).min(bytes.len());
            state.inside = (strings as i64) < 0;
            state.escaped = carry != 0 && state.at < bytes.len();
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (text, out);
    state
}

impl Escapes {
    /// One block of 64 bytes at `at`, given its masks: the string's end when it is in the block.
    #[inline]
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    fn block(
        &mut self,
        src: &[u8],
        at: usize,
        end: usize,
        backslash: u64,
        quote: u64,
        control: u64,
    ) -> Result<Option<(usize, bool, bool)>, NotAString> {
        let (escaped, carry) = escaped_bytes(backslash, self.carry);
        let quotes = quote & !escaped;
        let before = if quotes != 0 { (quotes & quotes.wrapping_neg()) - 1 } else { !0 };
        if control & before != 0 {
            return Err(NotAString);
        }
        let escapes = escaped & before;
        // an escaped quote or backslash is always an escape json.loads knows, and no surrogate's
        // half: only the other escapes (`\n`, `\u`, a bad one) are read one by one
        self.escaped |= escapes != 0;
        let mut escapes = escapes & !(quote | backslash);
        while escapes != 0 {
            let p = at + escapes.trailing_zeros() as usize;
            escapes &= escapes - 1;
            self.escape(src, p, end)?;
        }
        if quotes != 0 {
            return Ok(Some((at + quotes.trailing_zeros() as usize, self.escaped, self.lone)));
        }
        self.carry = carry;
        Ok(None)
    }

    /// The escape whose character is at `p` (a backslash before it): one json.loads knows, a
    /// lone surrogate noted.
    #[inline]
    fn escape(&mut self, src: &[u8], p: usize, end: usize) -> Result<(), NotAString> {
        self.escaped = true;
        match src[p] {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Ok(()),
            b'u' => {
                let c = hex4(src, p + 1, end).ok_or(NotAString)?;
                if self.paired == Some(p) {
                    return Ok(()); // the low half of a pair read with its high half
                }
                if (0xd800..=0xdbff).contains(&c) {
                    let low = p + 5;
                    if low + 6 <= end && src[low] == b'\\' && src[low + 1] == b'u' {
                        let c2 = hex4(src, low + 2, end).ok_or(NotAString)?;
                        if (0xdc00..=0xdfff).contains(&c2) {
                            self.paired = Some(low + 1);
                            return Ok(());
                        }
                    }
                    self.lone = true;
                } else if (0xdc00..=0xdfff).contains(&c) {
                    self.lone = true;
                }
                Ok(())
            }
            _ => Err(NotAString),
        }
    }

    /// The rest of the string from `i`, a byte at a time (its first byte escaped with `carry`).
    fn tail(mut self, src: &[u8], mut i: usize, end: usize) -> Result<(usize, bool, bool), NotAString> {
        if self.carry != 0 {
            i -= 1; // the backslash before it: the escape is read whole below
        }
        if let Some(u) = self.paired {
            if u + 5 > i && u >= i {
                i = u + 5; // the pair's low half, read already
            }
        }
        while i < end {
            i = string_special(src, i, end);
            if i >= end {
                break;
            }
            let b = src[i];
            if b == b'"' {
                return Ok((i, self.escaped, self.lone));
            }
            if b < 0x20 {
                return Err(NotAString);
            }
            if i + 1 >= end {
                return Err(NotAString);
            }
            self.escape(src, i + 1, end)?;
            i += if src[i + 1] == b'u' {
                match self.paired {
                    Some(u) if u == i + 7 => 12,
                    _ => 6,
                }
            } else {
                2
            };
        }
        Err(NotAString)
    }
}

/// Whether more than `limit` bytes of `data` are `a`, `b` or `c` (the JSON budget's count of
/// commas and opening brackets): counted sixteen bytes at a time on x86_64 (SSE2), a block at a
/// time elsewhere, stopping once past the limit.
pub fn more_of_three(data: &[u8], a: u8, b: u8, c: u8, limit: usize) -> bool {
    let mut count = 0usize;
    let mut i = 0usize;
    #[cfg(target_arch = "x86_64")]
    {
        // up to 255 sixteen-byte steps per round: each lane counts to 255 at the most
        while i + 16 <= data.len() {
            let steps = ((data.len() - i) / 16).min(255);
            count += sse2::count_three(data, i, steps, a, b, c);
            i += steps * 16;
            if count > limit {
                return true;
            }
        }
    }
    for block in data[i..].chunks(4096) {
        count += block.iter().filter(|&&x| x == a || x == b || x == c).count();
        if count > limit {
            return true;
        }
    }
    false
}

/// Four hex digits at `at` (within `end`) as a number.
#[inline]
pub fn hex4(src: &[u8], at: usize, end: usize) -> Option<u32> {
    if at + 4 > end {
        return None;
    }
    let mut v: u32 = 0;
    for &b in &src[at..at + 4] {
        let d = (b as char).to_digit(16)?;
        v = v << 4 | d;
    }
    Some(v)
}

/// The length of a prefix of `data` that is printable ASCII (0x20..=0x7e) only: whole blocks of
/// sixty-four bytes on x86_64 (SSE2), none elsewhere. The text rules check only the rest for
/// UTF-8 and control characters (an ASCII prefix ends on a character's boundary).
#[inline]
pub fn printable_prefix(data: &[u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        64 * sse2::printable_blocks(data)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = data;
        0
    }
}

/// Whether some byte is a C0 control character or DEL (unwrap._C0_BYTES).
#[inline]
pub fn any_c0(data: &[u8]) -> bool {
    // sixty-four bytes at a time on x86_64 (SSE2), the rest as below
    #[cfg(target_arch = "x86_64")]
    let mut i = {
        let blocks = data.len() / 64;
        if sse2::any_c0_blocks(data, blocks) {
            return true;
        }
        64 * blocks
    };
    #[cfg(not(target_arch = "x86_64"))]
    let mut i = 0;
    while i + 8 <= data.len() {
        let x = word(data, i);
        if has_less(x, 0x20) | has_byte(x, 0x7f) != 0 {
            return true;
        }
        i += 8;
    }
    data[i..].iter().any(|&b| b < 0x20 || b == 0x7f)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_string_end_is_wide() -> bool {
        #[cfg(target_arch = "x86_64")]
        return avx2::present();
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// json_string_end a byte at a time, as json.rs read strings before the block scan: the
    /// reference (json.loads' strict string scanner).
    fn string_end_bytewise(src: &[u8], start: usize, end: usize) -> Result<(usize, bool, bool), NotAString> {
        let mut i = start;
        let (mut escaped, mut lone) = (false, false);
        while i < end {
            let b = src[i];
            if b == b'"' {
                return Ok((i, escaped, lone));
            }
            if b < 0x20 {
                return Err(NotAString);
            }
            if b != b'\\' {
                i += 1;
                continue;
            }
            escaped = true;
            if i + 1 >= end {
                return Err(NotAString);
            }
            let e = src[i + 1];
            i += 2;
            match e {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                b'u' => {
                    let c = hex4(src, i, end).ok_or(NotAString)?;
                    i += 4;
                    if (0xd800..=0xdbff).contains(&c) {
                        if i + 6 <= end && src[i] == b'\\' && src[i + 1] == b'u' {
                            let c2 = hex4(src, i + 2, end).ok_or(NotAString)?;
                            if (0xdc00..=0xdfff).contains(&c2) {
                                i += 6;
                            } else {
                                lone = true;
                            }
                        } else {
                            lone = true;
                        }
                    } else if (0xdc00..=0xdfff).contains(&c) {
                        lone = true;
                    }
                }
                _ => return Err(NotAString),
            }
        }
        Err(NotAString)
    }

    #[test]
    fn a_string_s_end_found_by_blocks_is_the_byte_loop_s() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let pieces: [&[u8]; 14] = [
            b"\\",
            b"\\\"",
            b"\\\\",
            b"\\n",
            b"\\u00e9",
            b"\\ud83d\\ude00",
            b"\\ud83d",
            b"\\ude00",
            b"\\u12",
            b"\\x",
            b"\"",
            b"\x01",
            b"ab",
            b"\xc3\xa9",
        ];
        for round in 0..40_000 {
            let mut data: Vec<u8> = Vec::new();
            let len = (next() % 300) as usize;
            while data.len() < len {
                if next() % 3 == 0 {
                    data.extend_from_slice(pieces[(next() % pieces.len() as u64) as usize]);
                } else {
                    data.push(b'a' + (next() % 26) as u8);
                }
            }
            if round % 2 == 0 {
                data.push(b'"');
            }
            let start = if data.is_empty() { 0 } else { (next() as usize) % (data.len().min(70) + 1) };
            let start = start.min(data.len());
            let end = data.len() - (next() as usize % 3).min(data.len() - start);
            let want = string_end_bytewise(&data, start, end);
            for wide in [false, cfg!(target_arch = "x86_64") && json_string_end_is_wide()] {
                assert_eq!(
                    string_end(&data, start, end, wide),
                    want,
                    "{:?} {start}..{end}",
                    String::from_utf8_lossy(&data)
                );
            }
        }
    }

    #[test]
    fn the_budget_s_count_is_a_byte_loop_s() {
        let mut state = 0x1234_5678_9abc_def1u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for round in 0..3_000 {
            // lengths across the 16-byte steps and the 255-step rounds (4,080 bytes)
            let len = (next() % if round % 10 == 0 { 20_000 } else { 300 }) as usize;
            let data: Vec<u8> = (0..len)
                .map(|_| match next() % 8 {
                    0 => b',',
                    1 => b'[',
                    2 => b'{',
                    3 => 0x80 | (next() % 0x80) as u8,
                    _ => b'a' + (next() % 26) as u8,
                })
                .collect();
            let count = data.iter().filter(|&&b| b == b',' || b == b'[' || b == b'{').count();
            for limit in [0, count.saturating_sub(1), count, count + 1, (next() as usize) % (len + 1)] {
                assert_eq!(more_of_three(&data, b',', b'[', b'{', limit), count > limit, "{len} {limit}");
            }
        }
    }

    #[test]
    fn string_special_finds_the_first_special_byte_as_a_byte_loop_does() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let len = (next() % 70) as usize;
            let data: Vec<u8> = (0..len)
                .map(|_| match next() % 40 {
                    0 => b'"',
                    1 => b'\\',
                    2 => (next() % 0x20) as u8,
                    3 => 0x80 | (next() % 0x80) as u8,
                    _ => b'a' + (next() % 26) as u8,
                })
                .collect();
            let start = if len > 0 { (next() as usize) % len } else { 0 };
            let end = if len > start { start + (next() as usize) % (len - start + 1) } else { start };
            let want =
                (start..end).find(|&i| data[i] == b'"' || data[i] == b'\\' || data[i] < 0x20).unwrap_or(end);
            assert_eq!(string_special(&data, start, end), want, "{data:?} {start}..{end}");
            assert_eq!(swar_string_special(&data, start, end), want);
        }
    }

    #[test]
    fn any_c0_is_a_byte_loop_s_answer() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let len = (next() % 300) as usize;
            let rare = 1 + next() % 400;
            let data: Vec<u8> = (0..len)
                .map(|_| match next() % rare {
                    0 => (next() % 0x20) as u8,
                    1 => 0x7f,
                    _ => [0x20, 0x7e, 0x80, 0x9f, 0xff, b'a'][(next() % 6) as usize],
                })
                .collect();
            let want = data.iter().any(|&b| b < 0x20 || b == 0x7f);
            assert_eq!(any_c0(&data), want, "{data:?}");
            let prefix = printable_prefix(&data);
            assert!(prefix <= data.len() && data[..prefix].iter().all(|&b| (0x20..0x7f).contains(&b)));
            if cfg!(target_arch = "x86_64") {
                let bad = data.iter().position(|&b| !(0x20..0x7f).contains(&b)).unwrap_or(data.len());
                assert_eq!(prefix, bad / 64 * 64, "{data:?}");
            }
        }
    }
}
