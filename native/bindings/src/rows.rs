//! RowsPage: a RESULT page's rows section as the server sent it (the driver handler of
//! cqlsh_ext/scanning/pages_in.py keeps it whole), and split_page, its wanted columns' cells
//! (core: rows.rs).

use cqlsh_ext_core::rows::{select_rows, split_columns, CellRef};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

/// A page's rows: `body` (the bytes after the row count), `rows` (the row count the server
/// sent), `columns` (the metadata's column count).
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct RowsPage {
    body: Py<PyBytes>,
    rows: usize,
    columns: usize,
}

#[pymethods]
impl RowsPage {
    #[new]
    fn new(body: Py<PyBytes>, rows: usize, columns: usize) -> Self {
        RowsPage { body, rows, columns }
    }
}

impl RowsPage {
    /// The `wanted` columns' cells, borrowed from `body`; ValueError (one line) for a malformed page.
    pub fn cells<'a>(&self, body: &'a [u8], wanted: &[usize]) -> PyResult<Vec<Vec<CellRef<'a>>>> {
        split_columns(body, self.rows, self.columns, wanted)
            .map_err(|why| PyValueError::new_err(format!("a malformed page of rows: {why}")))
    }

    pub fn body(&self) -> &Py<PyBytes> {
        &self.body
    }

    /// The row count the server sent.
    pub fn row_count(&self) -> usize {
        self.rows
    }
}

/// Each wanted column's cells (bytes, or None for null), in `wanted`'s order: of every row, or of
/// the rows `rows` names, in its order (the others' cells never made Python objects).
#[pyfunction]
#[pyo3(signature = (page, wanted, rows = None))]
pub fn split_page<'py>(
    py: Python<'py>,
    page: &Bound<'py, RowsPage>,
    wanted: Vec<usize>,
    rows: Option<Vec<usize>>,
) -> PyResult<Vec<Bound<'py, PyList>>> {
    let page = page.get();
    let body = page.body.bind(py);
    let columns = page.cells(body.as_bytes(), &wanted)?;
    if let Some(rows) = &rows {
        if let Some(&bad) = rows.iter().find(|&&row| row >= page.rows) {
            return Err(PyValueError::new_err(format!("row {bad} asked of a page of {} rows", page.rows)));
        }
    }
    columns
        .iter()
        .map(|cells| {
            let made = |cell: &CellRef<'_>| cell.map(|value| PyBytes::new(py, value));
            match &rows {
                None => PyList::new(py, cells.iter().map(made)),
                Some(rows) => PyList::new(py, rows.iter().map(|&row| made(&cells[row]))),
            }
        })
        .collect()
}

/// The bytes of the rows `rows` names, in its order, each row's cells as the server sent them (a
/// rows section of those rows alone, for the driver's own row parser); ValueError (one line) for
/// a malformed page or a row past it.
#[pyfunction]
pub fn page_rows<'py>(
    py: Python<'py>,
    page: &Bound<'py, RowsPage>,
    rows: Vec<usize>,
) -> PyResult<Bound<'py, PyBytes>> {
    let page = page.get();
    let body = page.body.bind(py);
    let out = select_rows(body.as_bytes(), page.rows, page.columns, &rows)
        .map_err(|why| PyValueError::new_err(format!("a malformed page of rows: {why}")))?;
    Ok(PyBytes::new(py, &out))
}
