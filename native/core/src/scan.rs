//! Byte scans eight bytes at a time (SWAR): the hot loops of the text rule and the JSON
//! reader ask "is there any byte of this kind" far more often than "which one".

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

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

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

/// Whether some byte is a C0 control character or DEL (unwrap._C0_BYTES).
#[inline]
pub fn any_c0(data: &[u8]) -> bool {
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
            let want = (start..end).find(|&i| data[i] == b'"' || data[i] == b'\\' || data[i] < 0x20).unwrap_or(end);
            assert_eq!(string_special(&data, start, end), want, "{data:?} {start}..{end}");
            assert_eq!(swar_string_special(&data, start, end), want);
        }
    }
}
