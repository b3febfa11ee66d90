//! cql_columns: a page's ordinary CQL columns laid out as Python lists straight from the page's
//! cells (core: rows.rs split_columns), the values the driver's Cython row parser makes of them,
//! without a tuple a row. The types read here are the fixed-width numbers (int, bigint, double,
//! boolean) and the texts (text/varchar, ascii); a column with a cell whose reading could differ
//! from the driver's (an empty value, a width that is not the type's, bytes its codec refuses) is
//! answered None, and payload/server_rows.py has the driver's parser make that column as before
//! (tests/native/test_cql_columns.py compares every type, nulls and empty values with the driver).

use crate::rows::RowsPage;
use cqlsh_ext_core::rows::CellRef;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyList, PyString};

/// The CQL types read here, by the name the driver's type class gives (`typename`).
#[derive(Clone, Copy)]
enum Kind {
    Int,
    BigInt,
    Double,
    Boolean,
    Text,
    Ascii,
}

impl Kind {
    fn named(name: &str) -> Option<Kind> {
        Some(match name {
            "int" => Kind::Int,
            "bigint" | "counter" => Kind::BigInt,
            "double" => Kind::Double,
            "boolean" => Kind::Boolean,
            "text" | "varchar" => Kind::Text,
            "ascii" => Kind::Ascii,
            _ => return None,
        })
    }

    /// Whether every cell reads as the driver reads it (null, or a value of the type's width and
    /// codec; an empty value is the driver's own `EMPTY` or None: left to it).
    fn reads(self, cell: CellRef<'_>) -> bool {
        let Some(value) = cell else { return true };
        match self {
            Kind::Int => value.len() == 4,
            Kind::BigInt | Kind::Double => value.len() == 8,
            Kind::Boolean => value.len() == 1,
            Kind::Text => std::str::from_utf8(value).is_ok(),
            Kind::Ascii => value.is_ascii(),
        }
    }

    fn value<'py>(self, py: Python<'py>, cell: CellRef<'_>) -> PyResult<Bound<'py, PyAny>> {
        let Some(value) = cell else { return Ok(py.None().into_bound(py)) };
        Ok(match self {
            Kind::Int => i32::from_be_bytes(value.try_into().expect("checked width")).into_pyobject(py)?.into_any(),
            Kind::BigInt => i64::from_be_bytes(value.try_into().expect("checked width")).into_pyobject(py)?.into_any(),
            Kind::Double => {
                PyFloat::new(py, f64::from_be_bytes(value.try_into().expect("checked width"))).into_any()
            }
            Kind::Boolean => PyBool::new(py, value[0] != 0).to_owned().into_any(),
            // (checked UTF-8 and ASCII: valid str)
            Kind::Text | Kind::Ascii => {
                PyString::new(py, std::str::from_utf8(value).expect("checked text")).into_any()
            }
        })
    }
}

/// Each wanted column's values (`kinds[k]` names `wanted[k]`'s CQL type, as the driver's type
/// class spells it), of every row or of the rows `rows` names (in its order): a list of the
/// values the driver's row parser makes, or None for a column this does not read (its type, or
/// a cell whose reading is left to the driver). ValueError (one line) for a malformed page or a
/// row past it.
#[pyfunction]
#[pyo3(signature = (page, wanted, kinds, rows = None))]
pub fn cql_columns<'py>(
    py: Python<'py>,
    page: &Bound<'py, RowsPage>,
    wanted: Vec<usize>,
    kinds: Vec<String>,
    rows: Option<Vec<usize>>,
) -> PyResult<Vec<Option<Bound<'py, PyList>>>> {
    if kinds.len() != wanted.len() {
        return Err(PyValueError::new_err(format!("{} kinds for {} columns", kinds.len(), wanted.len())));
    }
    let page = page.get();
    let body = page.body().bind(py);
    let columns = page.cells(body.as_bytes(), &wanted)?;
    if let Some(rows) = &rows {
        page.within(rows)?;
    }
    columns
        .iter()
        .zip(&kinds)
        .map(|(cells, kind)| {
            let Some(kind) = Kind::named(kind) else { return Ok(None) };
            let picked: Vec<CellRef<'_>> = match &rows {
                None => cells.clone(),
                Some(rows) => rows.iter().map(|&row| cells[row]).collect(),
            };
            if !picked.iter().all(|&cell| kind.reads(cell)) {
                return Ok(None);
            }
            let values = picked.iter().map(|&cell| kind.value(py, cell)).collect::<PyResult<Vec<_>>>()?;
            Ok(Some(PyList::new(py, values)?))
        })
        .collect()
}
