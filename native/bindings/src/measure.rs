//! measure_page(MeasureRequest) -> MeasuredPage: COMPRESSION STATS' partial report of a page
//! (core: stats.rs), converted to Python's objects.

use cqlsh_ext_core::stats::{self, CapacityAgg, Cell, ColumnAgg, PlaceIn, Spec};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::arrow::Whole;
use crate::state::configured_now;

/// One place of a page: its values (`source`), or the page's rows and the column's index in
/// them (`column`; the rows a sequence of tuples, or a RowsPage as the server sent them), or an
/// ArrowBinary (the values as Arrow holds them, no `column`); each value's row (`rows`, None: the page's rows in order); a text column;
/// whether the ratios are wanted one by one (the median sketch is exact yet).
#[pyclass(frozen, module = "cqlsh_ext_native")]
pub struct MeasurePlace {
    source: Py<PyAny>,
    column: Option<usize>,
    rows: Option<Vec<usize>>,
    text: bool,
    exact_ratios: bool,
}

#[pymethods]
impl MeasurePlace {
    #[new]
    #[pyo3(signature = (source, *, column = None, rows = None, text = false, exact_ratios = false))]
    fn new(
        source: Py<PyAny>,
        column: Option<usize>,
        rows: Option<Vec<usize>>,
        text: bool,
        exact_ratios: bool,
    ) -> Self {
        MeasurePlace { source, column, rows, text, exact_ratios }
    }
}

/// What measure_page reads: the page's places and the reader's counting spec
/// (payload.measures.MeasureSpec's fields).
#[pyclass(frozen, module = "cqlsh_ext_native")]
pub struct MeasureRequest {
    #[pyo3(get)]
    rows: usize,
    places: Vec<Py<MeasurePlace>>,
    #[pyo3(get)]
    cap: usize,
    from_headers: bool,
    bucket_bounds: Vec<u64>,
    size_bounds: Vec<u64>,
    median_inv_step: f64,
    median_zero: i64,
    write_unit: u64,
    read_unit: u64,
    row_quota: u64,
    near_share: f64,
}

#[pymethods]
impl MeasureRequest {
    /// The page's places.
    #[getter]
    fn places(&self, py: Python<'_>) -> Vec<Py<MeasurePlace>> {
        self.places.iter().map(|p| p.clone_ref(py)).collect()
    }

    #[new]
    #[pyo3(signature = (*, rows, places, cap, from_headers, bucket_bounds, size_bounds, median_inv_step,
                        median_zero, write_unit, read_unit, row_quota, near_share))]
    #[allow(clippy::too_many_arguments)] // the request's fields, by keyword
    fn new(
        rows: usize,
        places: Vec<Py<MeasurePlace>>,
        cap: usize,
        from_headers: bool,
        bucket_bounds: Vec<u64>,
        size_bounds: Vec<u64>,
        median_inv_step: f64,
        median_zero: i64,
        write_unit: u64,
        read_unit: u64,
        row_quota: u64,
        near_share: f64,
    ) -> Self {
        MeasureRequest {
            rows,
            places,
            cap,
            from_headers,
            bucket_bounds,
            size_bounds,
            median_inv_step,
            median_zero,
            write_unit,
            read_unit,
            row_quota,
            near_share,
        }
    }
}

/// One chain's counters in a place: its status and chain (the registry's words), values,
/// stored bytes, decompressed bytes.
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct ChainCount {
    status: Py<PyString>,
    chain: Py<PyString>,
    values: u64,
    stored: u64,
    size: u64,
}

/// Rows counted by size (payload.measures.RowUnits' fields).
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct Units {
    rows: u64,
    wcu: u64,
    rcu: u64,
    near_quota: u64,
    over_quota: u64,
    largest: u64,
}

/// A row holding a value handed back: the sizes of its values measured here (decompressed,
/// stored); the values handed back are to be added.
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct PartialRow {
    row: usize,
    before: u64,
    after: u64,
}

/// A place's counters over one page (payload.measures.PlaceMeasures' fields).
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct MeasuredColumn {
    values: u64,
    nulls: u64,
    stored: u64,
    size: u64,
    inexact: u64,
    from_headers: u64,
    /// In the order first met.
    chains: Vec<Py<ChainCount>>,
    reasons: Vec<(Py<PyString>, u64)>,
    /// Compressed values: (values, stored bytes, decompressed bytes).
    compressed: (u64, u64, u64),
    buckets_before: Vec<u64>,
    buckets_after: Vec<u64>,
    sizes_before: Vec<u64>,
    sizes_after: Vec<u64>,
    /// The compressed values' ratios in order (while the median sketch is exact).
    ratios: Vec<f64>,
    /// Otherwise their bins: (bin, count).
    ratio_bins: Vec<(i64, u64)>,
    handed_back: Vec<usize>,
}

/// measure_page()'s answer: a partial report per place, and the rows' units.
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct MeasuredPage {
    columns: Vec<Py<MeasuredColumn>>,
    /// Over the rows whose values were all measured here: decompressed sizes, then stored sizes.
    before: Py<Units>,
    after: Py<Units>,
    rows_left: Vec<Py<PartialRow>>,
}

fn units(py: Python<'_>, c: &CapacityAgg) -> PyResult<Py<Units>> {
    Py::new(
        py,
        Units {
            rows: c.rows,
            wcu: c.wcu,
            rcu: c.rcu,
            near_quota: c.near_quota,
            over_quota: c.over_quota,
            largest: c.largest,
        },
    )
}

/// A page's values measured with the GIL released; its partial report.
#[pyfunction]
pub fn measure_page<'py>(py: Python<'py>, request: &Bound<'py, MeasureRequest>) -> PyResult<MeasuredPage> {
    let configured = configured_now()?;
    let r = request.get();
    let spec = Spec::new(
        r.bucket_bounds.clone(),
        r.size_bounds.clone(),
        r.median_inv_step,
        r.median_zero,
        (r.write_unit, r.read_unit),
        r.row_quota,
        r.near_share,
    )
    .map_err(|why| PyValueError::new_err(format!("measure_page: {why}")))?;
    // The Python objects the cells borrow from stay alive (and the GIL held) while they are read.
    let places: Vec<&MeasurePlace> = r.places.iter().map(|p| p.get()).collect();
    let mut kept: Vec<Vec<Bound<'py, PyAny>>> = Vec::with_capacity(places.len());
    // A place whose rows are a RowsPage, or whose values an ArrowBinary: its cells borrowed.
    let mut wholes: Vec<Option<Whole<'py>>> = Vec::with_capacity(places.len());
    for place in &places {
        let source = place.source.bind(py);
        if let Some(whole) = Whole::of(source, place.column)? {
            wholes.push(Some(whole));
            kept.push(Vec::new());
            continue;
        }
        wholes.push(None);
        let items: Vec<Bound<'py, PyAny>> = match place.column {
            None => source.try_iter()?.collect::<PyResult<_>>()?,
            Some(i) => {
                source.try_iter()?.map(|row| row.and_then(|row| row.get_item(i))).collect::<PyResult<_>>()?
            }
        };
        kept.push(items);
    }
    let mut inputs: Vec<PlaceIn<'_>> = Vec::with_capacity(places.len());
    for ((place, items), whole) in places.iter().zip(&kept).zip(&wholes) {
        let cells: Vec<Cell<'_>> = if let Some(whole) = whole {
            // Stored bytes, as the driver hands them: a text column's valid UTF-8 is text, any
            // other is handed back (the driver's own decoding answers it).
            let column = whole.cells()?;
            column
                .into_iter()
                .map(|cell| match cell {
                    None => Cell::Null,
                    Some(value) if place.text => {
                        if std::str::from_utf8(value).is_ok() {
                            Cell::Text(value.len())
                        } else {
                            Cell::Other
                        }
                    }
                    Some(value) => Cell::Blob(value),
                })
                .collect()
        } else {
            items
                .iter()
                .map(|item| {
                    if item.is_none() {
                        Cell::Null
                    } else if let Ok(b) = item.cast::<PyBytes>() {
                        Cell::Blob(b.as_bytes())
                    } else if let (true, Ok(s)) = (place.text, item.cast::<PyString>()) {
                        s.to_str().map(|t| Cell::Text(t.len())).unwrap_or(Cell::Other)
                    } else {
                        Cell::Other
                    }
                })
                .collect()
        };
        if let Some(rows_of) = &place.rows {
            if rows_of.len() != cells.len() || rows_of.iter().any(|&row| row >= r.rows) {
                return Err(PyValueError::new_err("measure_page: a place's rows do not match its values"));
            }
        } else if cells.len() != r.rows {
            return Err(PyValueError::new_err("measure_page: a place has not one value a row"));
        }
        inputs.push(PlaceIn {
            cells,
            rows: place.rows.clone(),
            agg: ColumnAgg::new(&spec, place.exact_ratios),
        });
    }
    let (cfg, stats_cfg, words) = (&configured.config, &configured.stats, &configured.words);
    let (rows, cap, from_headers) = (r.rows, r.cap, r.from_headers);
    let agg =
        py.detach(|| stats::measure_places(cfg, stats_cfg, &spec, &mut inputs, rows, cap, from_headers));
    let status_words: Vec<Bound<'py, PyString>> =
        words.statuses.iter().map(|w| PyString::new(py, w)).collect();
    let reason_words: Vec<Bound<'py, PyString>> =
        words.reasons.iter().map(|w| PyString::new(py, w)).collect();
    let mut columns = Vec::with_capacity(inputs.len());
    for place in inputs {
        let a = place.agg;
        let chains = a
            .chains
            .iter()
            .map(|c| {
                Py::new(
                    py,
                    ChainCount {
                        status: status_words[c.status as usize].clone().unbind(),
                        chain: PyString::new(py, &c.label.spell()).unbind(),
                        values: c.values,
                        stored: c.stored,
                        size: c.size,
                    },
                )
            })
            .collect::<PyResult<_>>()?;
        let column = MeasuredColumn {
            values: a.values,
            nulls: a.nulls,
            stored: a.stored,
            size: a.size,
            inexact: a.inexact,
            from_headers: a.from_headers,
            chains,
            reasons: a
                .reasons
                .iter()
                .map(|(why, n)| (reason_words[*why as usize].clone().unbind(), *n))
                .collect(),
            compressed: (a.compressed[0], a.compressed[1], a.compressed[2]),
            buckets_before: a.buckets_before,
            buckets_after: a.buckets_after,
            sizes_before: a.sizes_before,
            sizes_after: a.sizes_after,
            ratios: a.ratios,
            ratio_bins: a.ratio_bins,
            handed_back: a.handed_back,
        };
        columns.push(Py::new(py, column)?);
    }
    let rows_left = agg
        .left
        .iter()
        .map(|&(row, before, after)| Py::new(py, PartialRow { row, before, after }))
        .collect::<PyResult<_>>()?;
    Ok(MeasuredPage { columns, before: units(py, &agg.before)?, after: units(py, &agg.after)?, rows_left })
}
