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
pub fn string_special(src: &[u8], mut i: usize, end: usize) -> usize {
    while i + 8 <= end {
        let x = word(src, i);
        if has_less(x, 0x20) | has_byte(x, b'"') | has_byte(x, b'\\') != 0 {
            break;
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
