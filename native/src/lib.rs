//! cqlsh_ext_native: the common road of cqlsh-ext's value engine in Rust.
//!
//! `configure(config)` takes what the Python registry holds as data (detection order, dispatch
//! table, thresholds, budgets); `decode_page(values, cap, paths, want_text, want_tree)` decodes
//! a page of one column's values with the GIL released and answers in columns. Every value it
//! cannot answer exactly as the Python engine would is handed back (its index is listed).
//! cqlsh_ext/payload/native.py is the adapter; its docstring describes the answer's shape.

mod cbor;
mod common;
mod deflate;
mod describe;
mod engine;
mod formats;
mod json;
mod lz4;
mod msgpack;
mod page;
mod query;
mod scan;
mod snappy;
mod stats;
mod text;
mod tree;
mod zstd;

use pyo3::prelude::*;

/// The manifest of the Python pieces this mirror was written against, one fingerprint per piece
/// (tests/native compares it with the sources: a core built before a change is known).
const MIRROR_MANIFEST: &str = include_str!("../mirror.manifest");

#[pymodule]
fn cqlsh_ext_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    page::quiet_panics();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MIRROR_MANIFEST", MIRROR_MANIFEST)?;
    m.add("ZLIB_VERSION", deflate::version())?;
    m.add("LZ4_VERSION", lz4::version())?;
    m.add("ZSTD_VERSION", zstd::version())?;
    m.add("KINDS", ("text", "record", "binary", "none", "failed", "handed_back"))?;
    m.add_function(wrap_pyfunction!(page::configure, m)?)?;
    m.add_function(wrap_pyfunction!(page::configured, m)?)?;
    m.add_function(wrap_pyfunction!(page::decode_page, m)?)?;
    m.add_class::<page::DecodedPage>()?;
    m.add_function(wrap_pyfunction!(page::measure_page, m)?)?;
    m.add_function(wrap_pyfunction!(page::query_page, m)?)?;
    m.add_function(wrap_pyfunction!(page::describe_page, m)?)?;
    m.add_class::<describe::DescribedPage>()?;
    m.add("FLOAT_SUM_SHIFT", query::FLOAT_SUM_SHIFT)?;
    m.add_class::<query::QueryPage>()?;
    m.add_class::<stats::MeasuredPage>()?;
    m.add_class::<stats::MeasuredColumn>()?;
    m.add_function(wrap_pyfunction!(page::known_containers, m)?)?;
    m.add_function(wrap_pyfunction!(page::panics, m)?)?;
    Ok(())
}
