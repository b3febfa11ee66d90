//! cqlsh_ext_native: the Python module of cqlsh-ext's native core. It only converts: each call
//! takes a named request (a pyclass built by cqlsh_ext/payload/native.py and the readers),
//! reads the Python objects it names, runs the core crate (native/core, cqlsh-ext-core) with the
//! GIL released, and converts the core's answer into named answer types. The types are declared
//! for mypy in native/cqlsh_ext_native.pyi.

mod arrow;
mod columns;
mod convert;
mod cql_columns;
mod decode;
mod describe;
mod held;
mod measure;
mod query;
mod rows;
mod state;

use cqlsh_ext_core::{deflate, lz4, panics, zstd};
use pyo3::prelude::*;

/// The manifest of the Python pieces the core was written against, one fingerprint per piece
/// (tests/native compares it with the sources: a core built before a change is known).
const MIRROR_MANIFEST: &str = include_str!("../../mirror.manifest");

/// How many values panicked since the module loaded (each was handed back).
#[pyfunction(name = "panics")]
fn panic_count() -> u64 {
    panics::panics()
}

#[pymodule]
fn cqlsh_ext_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    panics::quiet_panics();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MIRROR_MANIFEST", MIRROR_MANIFEST)?;
    // The core inflates with the libz.so.1 CPython's zlib module loads (core/src/libz.rs): it is
    // imported first, so the core finds that library rather than loading one before it.
    m.py().import("zlib")?;
    m.add("ZLIB_VERSION", deflate::version())?;
    m.add("LZ4_VERSION", lz4::version())?;
    m.add("ZSTD_VERSION", zstd::version())?;
    m.add("KINDS", ("text", "record", "binary", "none", "failed", "handed_back"))?;
    m.add("FLOAT_SUM_SHIFT", cqlsh_ext_core::query::FLOAT_SUM_SHIFT)?;
    m.add_function(wrap_pyfunction!(state::configure, m)?)?;
    m.add_function(wrap_pyfunction!(state::configured, m)?)?;
    m.add_function(wrap_pyfunction!(state::known_containers, m)?)?;
    m.add_function(wrap_pyfunction!(panic_count, m)?)?;
    m.add_class::<state::Configured>()?;
    m.add_class::<decode::DecodeRequest>()?;
    m.add_class::<decode::DecodedPage>()?;
    m.add_class::<decode::PathColumn>()?;
    m.add_class::<decode::PathMiss>()?;
    m.add_function(wrap_pyfunction!(decode::decode_page, m)?)?;
    m.add_class::<columns::PageColumns>()?;
    m.add_class::<columns::Column>()?;
    m.add_function(wrap_pyfunction!(columns::page_columns, m)?)?;
    m.add_class::<held::HeldArray>()?;
    m.add_class::<held::HeldColumn>()?;
    m.add_class::<held::HeldContents>()?;
    m.add_function(wrap_pyfunction!(held::held_array, m)?)?;
    m.add_function(wrap_pyfunction!(held::json_lines, m)?)?;
    m.add_function(wrap_pyfunction!(held::answer_rows, m)?)?;
    m.add_function(wrap_pyfunction!(held::json_text_escaped, m)?)?;
    m.add_function(wrap_pyfunction!(held::contents_arrays, m)?)?;
    m.add_function(wrap_pyfunction!(held::hold_page, m)?)?;
    m.add_class::<measure::MeasurePlace>()?;
    m.add_class::<measure::MeasureRequest>()?;
    m.add_class::<measure::MeasuredPage>()?;
    m.add_class::<measure::MeasuredColumn>()?;
    m.add_class::<measure::ChainCount>()?;
    m.add_class::<measure::Units>()?;
    m.add_class::<measure::PartialRow>()?;
    m.add_function(wrap_pyfunction!(measure::measure_page, m)?)?;
    m.add_class::<rows::RowsPage>()?;
    m.add_function(wrap_pyfunction!(rows::split_page, m)?)?;
    m.add_function(wrap_pyfunction!(rows::select_rows, m)?)?;
    m.add_function(wrap_pyfunction!(cql_columns::cql_columns, m)?)?;
    m.add_class::<arrow::ArrowBinary>()?;
    m.add_function(wrap_pyfunction!(arrow::arrow_cells, m)?)?;
    m.add_function(wrap_pyfunction!(cql_columns::cql_array, m)?)?;
    m.add_class::<query::Literal>()?;
    m.add_class::<query::Needle>()?;
    m.add_class::<query::QueryPlace>()?;
    m.add_class::<query::Condition>()?;
    m.add_class::<query::Aggregate>()?;
    m.add_class::<query::QueryRequest>()?;
    m.add_class::<query::QueryPage>()?;
    m.add_class::<query::GroupPartial>()?;
    m.add_class::<query::AccumulatorState>()?;
    m.add_class::<query::PathSeen>()?;
    m.add_function(wrap_pyfunction!(query::query_page, m)?)?;
    m.add_class::<describe::DescribeRequest>()?;
    m.add_class::<describe::DescribedPage>()?;
    m.add_class::<describe::Encoding>()?;
    m.add_class::<describe::Lengths>()?;
    m.add_class::<describe::SketchPartial>()?;
    m.add_class::<describe::NodePartial>()?;
    m.add_class::<describe::StructurePartial>()?;
    m.add_function(wrap_pyfunction!(describe::describe_page, m)?)?;
    Ok(())
}
