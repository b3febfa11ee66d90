//! cql_columns: a page's ordinary CQL columns laid out as Python lists straight from the page's
//! cells (core: rows.rs split_columns), the values the driver's Cython row parser makes of them,
//! without a tuple a row. The types read here are the fixed-width numbers (int, bigint, double,
//! boolean) and the texts (text/varchar, ascii); a column with a cell whose reading could differ
//! from the driver's (an empty value, a width that is not the type's, bytes its codec refuses) is
//! answered None, and payload/server_rows.py has the driver's parser make that column as before
//! (tests/native/test_cql_columns.py compares every type, nulls and empty values with the driver).

use crate::held::HeldArray;
use crate::rows::RowsPage;
use cqlsh_ext_core::columns::{bool_array, fixed_array, float64_array, int64_array, variable_array};
use cqlsh_ext_core::rows::CellRef;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyList, PyString};

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
            Kind::Int => {
                i32::from_be_bytes(value.try_into().expect("checked width")).into_pyobject(py)?.into_any()
            }
            Kind::BigInt => {
                i64::from_be_bytes(value.try_into().expect("checked width")).into_pyobject(py)?.into_any()
            }
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
            let mut values: Vec<Bound<'py, PyAny>> = Vec::with_capacity(picked.len());
            // A text cell equal to the one before it (a partition key, over its partition's
            // rows) is that cell's str again: one object for the run, not one a row (a str is
            // immutable: only `is` could tell, as it tells two equal strs the driver makes).
            let mut last: Option<(&[u8], Bound<'py, PyAny>)> = None;
            for &cell in &picked {
                let value = match (kind, cell, &last) {
                    (Kind::Text | Kind::Ascii, Some(bytes), Some((before, made))) if *before == bytes => {
                        made.clone()
                    }
                    (Kind::Text | Kind::Ascii, Some(bytes), _) => {
                        let made = kind.value(py, cell)?;
                        last = Some((bytes, made.clone()));
                        made
                    }
                    _ => kind.value(py, cell)?,
                };
                values.push(value);
            }
            Ok(Some(PyList::new(py, values)?))
        })
        .collect()
}

/// A column of Python values (`values`: what cql_columns laid out, or what an export's column
/// holds) as one Arrow array of the C data interface's `format`, int32 ("i"), int64 ("l"),
/// float64 ("g"), bool ("b") or utf8 ("u"), named `name`: what `pyarrow.array(values, type)`
/// makes of them, without pyarrow's walk of the list (which imports pandas where it is installed).
/// None where a value is not exactly the type's Python type (an int subclass, a float in an int
/// column, an int past the type's bits, a str that is not UTF-8, ...) or the format is another:
/// the caller asks pyarrow, as before.
#[pyfunction]
pub fn cql_array(values: &Bound<'_, PyList>, format: &str, name: &str) -> PyResult<Option<HeldArray>> {
    let n = values.len();
    let mut valid: Vec<bool> = Vec::with_capacity(n);
    let array = match format {
        "i" => {
            let mut data: Vec<u8> = Vec::with_capacity(n * 4);
            for value in values.iter() {
                let v = if value.is_none() {
                    0
                } else if value.is_exact_instance_of::<PyInt>() {
                    match value.extract::<i32>() {
                        Ok(v) => v,
                        Err(_) => return Ok(None),
                    }
                } else {
                    return Ok(None);
                };
                valid.push(!value.is_none());
                data.extend_from_slice(&v.to_le_bytes());
            }
            fixed_array("i", name, &data, &valid)
        }
        "l" => {
            let mut out: Vec<Option<i64>> = Vec::with_capacity(n);
            for value in values.iter() {
                if value.is_none() {
                    out.push(None);
                } else if value.is_exact_instance_of::<PyInt>() {
                    match value.extract::<i64>() {
                        Ok(v) => out.push(Some(v)),
                        Err(_) => return Ok(None),
                    }
                } else {
                    return Ok(None);
                }
            }
            int64_array(name, out)
        }
        "g" => {
            let mut out: Vec<Option<f64>> = Vec::with_capacity(n);
            for value in values.iter() {
                if value.is_none() {
                    out.push(None);
                } else if let Ok(v) = value.cast_exact::<PyFloat>() {
                    out.push(Some(v.value()));
                } else {
                    return Ok(None);
                }
            }
            float64_array(name, out)
        }
        "b" => {
            let mut out: Vec<Option<bool>> = Vec::with_capacity(n);
            for value in values.iter() {
                if value.is_none() {
                    out.push(None);
                } else if let Ok(v) = value.cast_exact::<PyBool>() {
                    out.push(Some(v.is_true()));
                } else {
                    return Ok(None);
                }
            }
            bool_array(name, out)
        }
        "u" => {
            let mut offsets: Vec<i32> = Vec::with_capacity(n + 1);
            offsets.push(0);
            let mut data: Vec<u8> = Vec::new();
            for value in values.iter() {
                if value.is_none() {
                    valid.push(false);
                } else if let Ok(text) = value.cast_exact::<PyString>() {
                    let Ok(text) = text.to_str() else { return Ok(None) };
                    data.extend_from_slice(text.as_bytes());
                    valid.push(true);
                } else {
                    return Ok(None);
                }
                let Ok(end) = i32::try_from(data.len()) else { return Ok(None) };
                offsets.push(end);
            }
            variable_array("u", name, &offsets, &data, &valid)
        }
        _ => return Ok(None),
    };
    Ok(Some(HeldArray::of(array)))
}
