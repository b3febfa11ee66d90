//! RowsPage: a RESULT page's rows section as the server sent it (the driver handler of
//! cqlsh_ext/scanning/pages_in.py keeps it whole), and split_page, its wanted columns' cells
//! (core: rows.rs).

use cqlsh_ext_core::rows::{select_rows as whole_rows, split_columns, CellRef};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

/// A page's rows: `body[start:]` (the bytes after the row count: `body` may be the whole RESULT
/// message, which the driver's BytesIO shares, so the section is not copied out of it), `rows`
/// (the row count the server sent), `columns` (the metadata's column count).
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct RowsPage {
    body: Py<PyBytes>,
    rows: usize,
    columns: usize,
    start: usize,
}

#[pymethods]
impl RowsPage {
    #[new]
    #[pyo3(signature = (body, rows, columns, start = 0))]
    fn new(py: Python<'_>, body: Py<PyBytes>, rows: usize, columns: usize, start: usize) -> PyResult<Self> {
        if start > body.bind(py).as_bytes().len() {
            return Err(PyValueError::new_err("a malformed page of rows: its start is past its bytes"));
        }
        Ok(RowsPage { body, rows, columns, start })
    }
}

impl RowsPage {
    /// The rows section of `body` (the page's own bytes, bound): from `start` on.
    fn section<'a>(&self, body: &'a [u8]) -> &'a [u8] {
        body.get(self.start..).unwrap_or_default()
    }

    /// The `wanted` columns' cells, borrowed from `body` (the page's own bytes); ValueError (one
    /// line) for a malformed page.
    pub fn cells<'a>(&self, body: &'a [u8], wanted: &[usize]) -> PyResult<Vec<Vec<CellRef<'a>>>> {
        split_columns(self.section(body), self.rows, self.columns, wanted)
            .map_err(|why| PyValueError::new_err(format!("a malformed page of rows: {why}")))
    }

    /// ValueError (one line) for a row asked past the page.
    pub fn within(&self, rows: &[usize]) -> PyResult<()> {
        match rows.iter().find(|&&row| row >= self.rows) {
            Some(&bad) => {
                Err(PyValueError::new_err(format!("row {bad} asked of a page of {} rows", self.rows)))
            }
            None => Ok(()),
        }
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
        page.within(rows)?;
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

/// The rows section of the `wanted` columns (in its order) of the rows `rows` names (every row
/// when None; in its order), as a server would send it: the row count (int32), then each row's
/// cells, an int32 length (-1 for null) and the bytes. What the driver's own row parser reads
/// (payload/server_rows.py: the rows or columns a reader makes, made by the driver's Cython).
#[pyfunction]
#[pyo3(signature = (page, wanted, rows = None))]
pub fn select_rows<'py>(
    py: Python<'py>,
    page: &Bound<'py, RowsPage>,
    wanted: Vec<usize>,
    rows: Option<Vec<usize>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let page = page.get();
    let body = page.body.bind(py);
    if wanted.iter().copied().eq(0..page.columns) {
        // Whole rows (a reader's kept rows, every column): each row's bytes copied as one span.
        let picked: Vec<usize> = rows.unwrap_or_else(|| (0..page.rows).collect());
        let count =
            i32::try_from(picked.len()).map_err(|_| PyValueError::new_err("too many rows for a page"))?;
        let section = whole_rows(page.section(body.as_bytes()), page.rows, page.columns, &picked)
            .map_err(|why| PyValueError::new_err(format!("a malformed page of rows: {why}")))?;
        let mut out = Vec::with_capacity(4 + section.len());
        out.extend_from_slice(&count.to_be_bytes());
        out.extend_from_slice(&section);
        return Ok(PyBytes::new(py, &out));
    }
    let columns = page.cells(body.as_bytes(), &wanted)?;
    let picked: Vec<usize> = match rows {
        None => (0..page.rows).collect(),
        Some(rows) => {
            page.within(&rows)?;
            rows
        }
    };
    let count = i32::try_from(picked.len()).map_err(|_| PyValueError::new_err("too many rows for a page"))?;
    let mut size = 4;
    for &row in &picked {
        for cells in &columns {
            size += 4 + cells[row].map_or(0, <[u8]>::len);
        }
    }
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&count.to_be_bytes());
    for &row in &picked {
        for cells in &columns {
            match cells[row] {
                // (a cell's length was read from an int32: it fits one)
                Some(value) => {
                    out.extend_from_slice(&(value.len() as i32).to_be_bytes());
                    out.extend_from_slice(value);
                }
                None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            }
        }
    }
    Ok(PyBytes::new(py, &out))
}
