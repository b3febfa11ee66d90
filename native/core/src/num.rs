//! Numbers as Python compares them, shared by the query's conditions and groups and DESCRIBE's
//! ranges.

use std::cmp::Ordering;

/// Exact order of an integer and a (non-NaN) float, as Python compares them.
pub fn cmp_int_float(i: i128, f: f64) -> Ordering {
    if f.is_infinite() {
        return if f > 0.0 { Ordering::Less } else { Ordering::Greater };
    }
    const LIMIT: f64 = 1.7e38; // within i128
    if f >= LIMIT {
        return Ordering::Less;
    }
    if f <= -LIMIT {
        return Ordering::Greater;
    }
    let t = f.trunc();
    let ti = t as i128;
    match i.cmp(&ti) {
        Ordering::Equal => {
            let frac = f - t;
            if frac > 0.0 {
                Ordering::Less
            } else if frac < 0.0 {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        }
        other => other,
    }
}

/// Two floats in the number rule's total order (payload/numbers.py's _cmp_float, PostgreSQL's):
/// NaN above every number and equal to NaN.
pub fn total_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap_or(Ordering::Equal),
    }
}
