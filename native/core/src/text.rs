//! The text rules of payload/unwrap.py: `stored_text` (a value that matched no format) and
//! `as_text` (a decoded payload), on bytes, with the same decisions.

use crate::common::DErr;

/// A text reading: the number of bytes of the payload that are the text (as_text may drop a
/// character the cap cut).
pub struct TextFound {
    pub len: usize,
}

/// unwrap._NOT_UTF8_LEADS: bytes no UTF-8 text starts with.
#[inline]
fn not_utf8_lead(b: u8) -> bool {
    (0x80..0xC2).contains(&b) || b >= 0xF5
}

/// _CONTROL_RE: control characters other than tab, LF and CR (as bytes: in UTF-8 they are
/// only these single bytes).
#[inline]
fn control(b: u8) -> bool {
    b <= 0x08 || b == 0x0b || b == 0x0c || (0x0e..=0x1f).contains(&b) || b == 0x7f
}

/// unwrap.stored_text. Err(HandBack): UTF-16 text (its rule reads Unicode categories), and a short
/// non-ASCII text, or one shorter than min_text_length, that starts as JSON (unwrap._short_json reads it).
pub fn stored_text(
    value: &[u8],
    min_text_length: usize,
    short_text: usize,
) -> Result<Option<TextFound>, DErr> {
    if value.len() < min_text_length {
        // unwrap._short_json_value: a short value that may be a JSON object or array is Python's to read
        let first = value.iter().find(|b| !b.is_ascii_whitespace());
        return if matches!(first, Some(b'{') | Some(b'[')) { Err(DErr::HandBack) } else { Ok(None) };
    }
    if value.starts_with(b"\xff\xfe") || value.starts_with(b"\xfe\xff") {
        return Err(DErr::HandBack);
    }
    if not_utf8_lead(value[0]) {
        return Ok(None);
    }
    // a printable ASCII prefix is UTF-8 with no control character: only the rest is checked
    let rest = &value[crate::scan::printable_prefix(value)..];
    if std::str::from_utf8(rest).is_err() {
        return Ok(None);
    }
    if crate::scan::any_c0(rest) && rest.iter().any(|&b| control(b)) {
        return Ok(None);
    }
    if !rest.is_ascii() {
        if has_c1(value) {
            return Ok(None);
        }
        if value.len() < short_text {
            // unwrap._short_json: a short text that may be a JSON object or array is Python's to read
            let first = value.iter().find(|b| !b.is_ascii_whitespace());
            return if matches!(first, Some(b'{') | Some(b'[')) { Err(DErr::HandBack) } else { Ok(None) };
        }
    }
    Ok(Some(TextFound { len: value.len() }))
}

/// _C1_RE on valid UTF-8: U+0080..U+009F are C2 80..C2 9F.
fn has_c1(data: &[u8]) -> bool {
    data.windows(2).any(|w| w[0] == 0xC2 && (0x80..=0x9F).contains(&w[1]))
}

/// The `clean` of as_text and stored_text: no C0 control character at all (tab, LF and CR
/// included) and no C1 control or NBSP (all encode as C2 xx): cqlsh's escaping would change
/// nothing but backslashes.
pub fn clean(text: &[u8]) -> bool {
    !crate::scan::any_c0(text) && memchr::memchr(0xC2, text).is_none()
}

/// unwrap.as_text: Some(the text's byte length) when `data` reads as text.
pub fn as_text(data: &[u8], cut: bool) -> Option<TextFound> {
    if !data.is_empty() && not_utf8_lead(data[0]) && !(cut && data.len() <= 3) {
        return None;
    }
    // a printable ASCII prefix is UTF-8 with no control character: only the rest is checked
    let skip = crate::scan::printable_prefix(data);
    let text: &[u8] = match std::str::from_utf8(&data[skip..]) {
        Ok(_) => data,
        Err(err) => {
            let start = skip + err.valid_up_to();
            if !(cut && start + 3 >= data.len()) {
                return None;
            }
            &data[..start]
        }
    };
    if !crate::scan::any_c0(&text[skip..]) {
        return Some(TextFound { len: text.len() });
    }
    // At most 1 % control characters (other than tab, LF, CR), counted in characters.
    let chars = text.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
    let allowed = chars / 100;
    let mut count = 0usize;
    for &b in text {
        if control(b) {
            count += 1;
            if count > allowed {
                return None;
            }
        }
    }
    Some(TextFound { len: text.len() })
}
