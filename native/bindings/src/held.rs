//! A file's held values (core: held.rs): HeldColumn (a path's values of a page's kept rows),
//! HeldContents (a blob column's rows: kind, label, payload), both kept by the core until the
//! file's writer settles the kinds, then laid out as Arrow arrays (`held_array`,
//! `contents_arrays`: HeldArray, `__arrow_c_array__`) with no Python object per value. Rows the
//! core does not hold are the Python side's (a chunk holding one is `pure` no longer: its writer
//! reads it as Python values, `to_pylist`, as it reads any other column).

use std::ffi::{c_void, CStr};
use std::sync::Arc;

use cqlsh_ext_core::columns::{export_data, export_schema, variable_array, Array};
use cqlsh_ext_core::engine::Kind as ViewKind;
use cqlsh_ext_core::held::{self, Content, Held, Kind, Labels, Place, Slot, Unlaid};
use cqlsh_ext_core::page::{self, PageWant};
use cqlsh_ext_core::tree::Node;
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyDict, PyList, PySlice, PyString, PyTuple};

use crate::convert::{node_strict, peeled_py, slices, to_py};
use crate::state::configured_now;

#[repr(transparent)]
struct Sendable<T>(T);

// SAFETY: the struct's pointers are owned by its private data, which nothing else references.
unsafe impl<T> Send for Sendable<T> {}

const SCHEMA: &CStr = c"arrow_schema";
const ARRAY: &CStr = c"arrow_array";

/// One Arrow array the core laid out (`pyarrow.array(it)` imports it without a copy).
#[pyclass(frozen, module = "cqlsh_ext_native")]
pub struct HeldArray {
    array: Array,
}

impl HeldArray {
    /// An array laid out elsewhere in the bindings (cql_columns.rs's `cql_array`).
    pub(crate) fn of(array: Array) -> HeldArray {
        HeldArray { array }
    }
}

#[pymethods]
impl HeldArray {
    #[getter]
    fn format(&self) -> String {
        self.array.field.format.clone()
    }

    fn __len__(&self) -> usize {
        self.array.len()
    }

    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema; // the kind's own type is given
        let schema = Sendable(export_schema(&self.array.field));
        let data = Sendable(export_data(self.array.data.clone()));
        let schema =
            PyCapsule::new_with_value_and_destructor(py, schema, SCHEMA, |mut s, _: *mut c_void| {
                if let Some(release) = s.0.release {
                    // SAFETY: not moved out by a consumer (its release is still set): ours to release
                    unsafe { release(&mut s.0) }
                }
            })?;
        let data = PyCapsule::new_with_value_and_destructor(py, data, ARRAY, |mut a, _: *mut c_void| {
            if let Some(release) = a.0.release {
                // SAFETY: as above
                unsafe { release(&mut a.0) }
            }
        })?;
        PyTuple::new(py, [schema.into_any(), data.into_any()])
    }
}

/// A kind as render/arrow_types.py describes it to the core (`kind_spec`): ("null",), ("bool",),
/// ("int", bits), ("float",), ("dec", scale, digits), ("str",), ("json",), ("list", item),
/// ("struct", ((name, kind), ...)).
fn kind_of(spec: &Bound<'_, PyAny>) -> PyResult<Kind> {
    let tag: String = spec.get_item(0)?.extract()?;
    Ok(match tag.as_str() {
        "null" => Kind::Null,
        "bool" => Kind::Bool,
        "int" => Kind::Int(spec.get_item(1)?.extract()?),
        "float" => Kind::Float,
        "dec" => Kind::Dec { scale: spec.get_item(1)?.extract()?, digits: spec.get_item(2)?.extract()? },
        "str" => Kind::Str,
        "json" => Kind::Json,
        "list" => Kind::List(Box::new(kind_of(&spec.get_item(1)?)?)),
        "struct" => Kind::Struct(
            spec.get_item(1)?
                .try_iter()?
                .map(|field| {
                    let field = field?;
                    Ok((field.get_item(0)?.extract()?, kind_of(&field.get_item(1)?)?))
                })
                .collect::<PyResult<_>>()?,
        ),
        other => return Err(PyValueError::new_err(format!("a kind the core does not lay out: {other:?}"))),
    })
}

/// A sequence's index `i` (negative from the end) among `len` rows: IndexError naming `what` past them.
fn index_at(len: usize, i: isize, what: &str) -> PyResult<usize> {
    let at = if i < 0 { i + len as isize } else { i };
    if at < 0 || at >= len as isize {
        return Err(PyIndexError::new_err(format!("{what} index out of range")));
    }
    Ok(at as usize)
}

fn range_of(len: usize, index: &Bound<'_, PyAny>) -> PyResult<(usize, usize)> {
    let slice = index.cast::<PySlice>()?;
    let found = slice.indices(len as isize)?;
    if found.step != 1 {
        return Err(PyValueError::new_err("a held column is sliced with step 1"));
    }
    let start = found.start.max(0) as usize;
    let stop = (found.stop.max(found.start)).max(0) as usize;
    Ok((start.min(len), stop.min(len)))
}

// ------------------------------------------------------------------------------ a path's values

/// A row of a held path column: the core's value, or a Python object (a value the core hands
/// back, or one the Python side spells).
pub enum Row {
    Core(Held),
    Python(Py<PyAny>),
}

/// A path's values in a page's kept rows, held by the core (a Sequence of the Python values the
/// query would have given).
#[pyclass(frozen, sequence, module = "cqlsh_ext_native")]
pub struct HeldColumn {
    rows: Arc<Vec<Row>>,
    start: usize,
    end: usize,
}

impl HeldColumn {
    pub fn new(rows: Vec<Row>) -> HeldColumn {
        let end = rows.len();
        HeldColumn { rows: Arc::new(rows), start: 0, end }
    }

    fn rows(&self) -> &[Row] {
        &self.rows[self.start..self.end]
    }
}

/// A held value's Python object: its tree's (a text held for its value: its tree built here).
fn place_py<'py>(py: Python<'py>, place: Place<'_>) -> PyResult<Bound<'py, PyAny>> {
    match place.tree() {
        Some((node, src)) => to_py(py, &node, src),
        None => Err(PyValueError::new_err("a held text is not the JSON its check passed")),
    }
}

fn row_py<'py>(py: Python<'py>, row: &Row) -> PyResult<Bound<'py, PyAny>> {
    match row {
        Row::Core(held) => to_py(py, &held.node, &held.src),
        Row::Python(obj) => Ok(obj.bind(py).clone()),
    }
}

#[pymethods]
impl HeldColumn {
    fn __len__(&self) -> usize {
        self.end - self.start
    }

    fn __getitem__<'py>(&self, py: Python<'py>, index: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let len = self.end - self.start;
        if let Ok(i) = index.extract::<isize>() {
            return row_py(py, &self.rows()[index_at(len, i, "held column")?]);
        }
        let (start, stop) = range_of(len, index)?;
        Ok(Bound::new(
            py,
            HeldColumn { rows: self.rows.clone(), start: self.start + start, end: self.start + stop },
        )?
        .into_any())
    }

    /// Every row the core's (none a Python object): the column is laid out by held_array.
    #[getter]
    fn pure(&self) -> bool {
        self.rows().iter().all(|r| matches!(r, Row::Core(_)))
    }

    /// The indexes of the rows that are Python objects.
    fn python_rows(&self) -> Vec<usize> {
        self.rows().iter().enumerate().filter(|(_, r)| matches!(r, Row::Python(_))).map(|(i, _)| i).collect()
    }

    /// One value of each shape among the first `limit` rows the core holds, with its row's
    /// index and how many rows have that shape, in order (`bounds`: the integer magnitudes kinds
    /// read: 2**53, 2**63, 10**38): the values a sample's kinds are read from (core: held.rs `shape`).
    fn shapes<'py>(
        &self,
        py: Python<'py>,
        limit: usize,
        bounds: [i128; 3],
    ) -> PyResult<Vec<(usize, Bound<'py, PyAny>, usize)>> {
        let rows = &self.rows()[..limit.min(self.end - self.start)];
        let slots: Vec<(usize, Slot<'_>)> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match r {
                Row::Core(held) => Some((i, Some(Place::Node(&held.node, &held.src[..])))),
                Row::Python(_) => None,
            })
            .collect();
        let just: Vec<Slot<'_>> = slots.iter().map(|(_, s)| *s).collect();
        held::one_of_each_shape(&just, &bounds)
            .into_iter()
            .map(|(k, count)| {
                let (i, slot) = slots[k];
                Ok((i, place_py(py, slot.expect("a held row"))?, count))
            })
            .collect()
    }

    /// The values as Python objects (as the query would have given them), the first `limit`.
    #[pyo3(signature = (limit = None))]
    fn to_pylist<'py>(&self, py: Python<'py>, limit: Option<usize>) -> PyResult<Bound<'py, PyList>> {
        let rows = self.rows();
        let rows = &rows[..limit.unwrap_or(rows.len()).min(rows.len())];
        let items: Vec<Bound<'py, PyAny>> = rows.iter().map(|r| row_py(py, r)).collect::<PyResult<_>>()?;
        PyList::new(py, items)
    }

    /// This column's rows in another order, with Python objects among them: `order[i]` a row of
    /// this column (its index), or -1 for the next of `python` (rows the Python side read).
    fn rearranged(&self, py: Python<'_>, order: Vec<isize>, python: Vec<Py<PyAny>>) -> PyResult<HeldColumn> {
        let rows = self.rows();
        let mut others = python.into_iter();
        let mut out = Vec::with_capacity(order.len());
        for at in order {
            if at < 0 {
                let obj = others.next().ok_or_else(|| PyValueError::new_err("rearranged: too few rows"))?;
                out.push(Row::Python(obj));
            } else {
                out.push(match rows.get(at as usize) {
                    Some(Row::Core(held)) => Row::Core(held.clone()),
                    Some(Row::Python(obj)) => Row::Python(obj.clone_ref(py)),
                    None => return Err(PyIndexError::new_err("rearranged: no such row")),
                });
            }
        }
        Ok(HeldColumn::new(out))
    }

    fn __repr__(&self) -> String {
        format!("HeldColumn({} rows)", self.end - self.start)
    }
}

fn chunks_of<'py, T: pyo3::PyClass>(chunks: &Bound<'py, PyAny>) -> PyResult<Vec<Bound<'py, T>>> {
    chunks.try_iter()?.map(|c| Ok(c?.cast_into::<T>()?)).collect()
}

/// Python values given for rows (`filled`: the row's index over the chunks -> its value), as
/// trees (node_strict: ValueError for a value the core does not write).
fn filled_nodes(filled: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(usize, Node)>> {
    let Some(filled) = filled else { return Ok(Vec::new()) };
    let mut out: Vec<(usize, Node)> =
        filled.iter().map(|(k, v)| Ok((k.extract::<usize>()?, node_strict(&v)?))).collect::<PyResult<_>>()?;
    out.sort_by_key(|(at, _)| *at);
    Ok(out)
}

/// The held columns' values (one column, in chunks) as one Arrow array of `kind` named `name`:
/// (the array, []) or (None, the rows whose values do not fit, each (its index over the chunks,
/// its value as a Python object): the writer gives those rows another value in `filled`, null,
/// and asks again). `filled`: the value of each Python row, and of any core row the writer
/// overrides (its index over the chunks), as the writer spells it. Raises ValueError for a kind
/// the core does not lay out, a Python row not filled or filled with what the core does not
/// write, or a column past 32-bit offsets (the Python side then writes the column).
#[pyfunction]
#[pyo3(signature = (chunks, kind, name, filled = None))]
pub fn held_array<'py>(
    py: Python<'py>,
    chunks: &Bound<'py, PyAny>,
    kind: &Bound<'py, PyAny>,
    name: &str,
    filled: Option<&Bound<'py, PyDict>>,
) -> PyResult<(Option<HeldArray>, Misfits<'py>)> {
    let kind = kind_of(kind)?;
    let chunks: Vec<Bound<'py, HeldColumn>> = chunks_of(chunks)?;
    let nodes = filled_nodes(filled)?;
    let mut given = nodes.iter().peekable();
    let mut slots: Vec<Slot<'_>> = Vec::new();
    for chunk in &chunks {
        for row in chunk.get().rows() {
            let at = slots.len();
            match (row, given.next_if(|(i, _)| *i == at)) {
                (_, Some((_, node))) => slots.push(Some(Place::Node(node, &[]))),
                (Row::Core(held), None) => slots.push(Some(Place::Node(&held.node, &held.src))),
                (Row::Python(_), None) => return Err(PyValueError::new_err("a Python row not filled")),
            }
        }
    }
    laid_out(py, &kind, name, &slots)
}

/// The rows whose values do not fit a kind: (the row's index over the chunks, its value).
type Misfits<'py> = Vec<(usize, Bound<'py, PyAny>)>;

fn laid_out<'py>(
    py: Python<'py>,
    kind: &Kind,
    name: &str,
    slots: &[Slot<'_>],
) -> PyResult<(Option<HeldArray>, Misfits<'py>)> {
    match held::array(kind, name, slots) {
        Ok(array) => Ok((Some(HeldArray { array }), Vec::new())),
        Err(Unlaid::Misfits(rows)) => {
            let mut values = Vec::with_capacity(rows.len());
            for at in rows {
                values.push((
                    at,
                    match slots[at] {
                        Some(place) => place_py(py, place)?,
                        None => py.None().into_bound(py),
                    },
                ));
            }
            Ok((None, values))
        }
        Err(Unlaid::TooLarge) => Err(PyValueError::new_err("a column past 32-bit offsets")),
    }
}

// ------------------------------------------------------------------------------ a blob's rows

/// Three per-row columns of Python objects (kind, label, payload or text) and the rows that are
/// the Python side's.
type Columns3<'py> = (Bound<'py, PyList>, Bound<'py, PyList>, Bound<'py, PyList>, Vec<usize>);

/// A blob's arrays (payload, label, kind, note, stored, confidence), or None and the rows whose
/// payloads misfit.
type LaidOut<'py> = (Option<Vec<HeldArray>>, Misfits<'py>);

/// A Python row's label, kind, note, stored value and confidence (None where absent).
type Parts<'py> = [Option<Bound<'py, PyAny>>; 5];

/// A blob column's row: the core's reading of it and its stored value (the Python object).
pub struct ContentRow {
    pub content: Content,
    pub stored: Py<PyAny>,
    /// The value's size under its last container where the core read it whole (hold_page), else 0.
    pub decoded: usize,
    /// A row the core handed back with its containers peeled (hold_page): (chain, sizes,
    /// payload), for the Python engine to read the payload from; else None.
    pub peeled: Option<Py<PyTuple>>,
}

/// A blob column's rows (kept rows of a page, or a page the file decodes), read by the core: per
/// row its kind, label and payload (core: held.rs Content), the Python side's where the core
/// holds none (`pure` says whether any).
#[pyclass(frozen, sequence, module = "cqlsh_ext_native")]
pub struct HeldContents {
    rows: Arc<Vec<ContentRow>>,
    start: usize,
    end: usize,
}

impl HeldContents {
    pub fn new(rows: Vec<ContentRow>) -> HeldContents {
        let end = rows.len();
        HeldContents { rows: Arc::new(rows), start: 0, end }
    }

    fn rows(&self) -> &[ContentRow] {
        &self.rows[self.start..self.end]
    }
}

fn view_kind(kind: ViewKind) -> &'static str {
    page::KIND_NAMES.get(kind as usize).copied().unwrap_or("unknown")
}

#[pymethods]
impl HeldContents {
    fn __len__(&self) -> usize {
        self.end - self.start
    }

    /// A row's stored value (int index), or the rows of a slice (a HeldContents).
    fn __getitem__<'py>(&self, py: Python<'py>, index: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let len = self.end - self.start;
        if let Ok(i) = index.extract::<isize>() {
            return Ok(self.rows()[index_at(len, i, "held contents")?].stored.bind(py).clone());
        }
        let (start, stop) = range_of(len, index)?;
        Ok(Bound::new(
            py,
            HeldContents { rows: self.rows.clone(), start: self.start + start, end: self.start + stop },
        )?
        .into_any())
    }

    #[getter]
    fn pure(&self) -> bool {
        self.rows().iter().all(|r| !matches!(r.content, Content::Python))
    }

    /// The indexes of the rows that are the Python side's.
    fn python_rows(&self) -> Vec<usize> {
        self.rows()
            .iter()
            .enumerate()
            .filter(|(_, r)| matches!(r.content, Content::Python))
            .map(|(i, _)| i)
            .collect()
    }

    /// The rows the core handed back with their containers peeled, by index: (chain, sizes,
    /// payload).
    fn peeled<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (i, row) in self.rows().iter().enumerate() {
            if let Some(found) = &row.peeled {
                out.set_item(i, found.bind(py))?;
            }
        }
        Ok(out)
    }

    /// One payload of each shape among the first `limit` rows the core reads, with its row's
    /// index and how many rows have that shape, in order (HeldColumn.shapes; a null blob's
    /// payload is None).
    fn shapes<'py>(
        &self,
        py: Python<'py>,
        limit: usize,
        bounds: [i128; 3],
    ) -> PyResult<Vec<(usize, Bound<'py, PyAny>, usize)>> {
        let rows = &self.rows()[..limit.min(self.end - self.start)];
        let slots: Vec<(usize, Slot<'_>)> = rows
            .iter()
            .enumerate()
            .filter_map(|(i, r)| match &r.content {
                Content::Read { .. } => Some((i, r.content.place())),
                Content::Null => Some((i, None)),
                Content::Python => None,
            })
            .collect();
        let just: Vec<Slot<'_>> = slots.iter().map(|(_, s)| *s).collect();
        held::one_of_each_shape(&just, &bounds)
            .into_iter()
            .map(|(k, count)| {
                let (i, slot) = slots[k];
                Ok((
                    i,
                    match slot {
                        Some(place) => place_py(py, place)?,
                        None => py.None().into_bound(py),
                    },
                    count,
                ))
            })
            .collect()
    }

    /// The rows' stored values (bytes, or None).
    fn stored<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.rows().iter().map(|r| r.stored.bind(py)))
    }

    /// The rows' stored sizes (0 for a value that is no bytes).
    fn sizes(&self, py: Python<'_>) -> Vec<usize> {
        self.rows()
            .iter()
            .map(|r| r.stored.bind(py).cast::<PyBytes>().map_or(0, |b| b.as_bytes().len()))
            .collect()
    }

    /// The rows' decoded sizes (under their last container) where the core read them whole
    /// (hold_page), else 0: what a reading bounds its batches' memory by.
    fn decoded_sizes(&self) -> Vec<usize> {
        self.rows().iter().map(|r| r.decoded).collect()
    }

    /// Per row the view's kind the core read (None for a null blob and for a row that is the
    /// Python side's), and the rows that are the Python side's: what a reading counts of a page
    /// without making its payloads.
    fn kinds(&self) -> (Vec<Option<&'static str>>, Vec<usize>) {
        let mut python = Vec::new();
        let kinds = self
            .rows()
            .iter()
            .enumerate()
            .map(|(i, row)| match &row.content {
                Content::Read { kind, .. } => Some(view_kind(*kind)),
                Content::Python => {
                    python.push(i);
                    None
                }
                Content::Null => None,
            })
            .collect();
        (kinds, python)
    }

    /// Per row (kind, label, payload) as Python objects (None, None, None for a null blob), and
    /// the rows that are the Python side's (their indexes: read from their stored values); the
    /// first `limit` rows.
    #[pyo3(signature = (limit = None))]
    fn parts<'py>(&self, py: Python<'py>, limit: Option<usize>) -> PyResult<Columns3<'py>> {
        let rows = self.rows();
        let rows = &rows[..limit.unwrap_or(rows.len()).min(rows.len())];
        let (mut kinds, mut labels, mut payloads, mut python) = (
            Vec::with_capacity(rows.len()),
            Vec::with_capacity(rows.len()),
            Vec::with_capacity(rows.len()),
            Vec::new(),
        );
        for (i, row) in rows.iter().enumerate() {
            match &row.content {
                Content::Read { kind, label, .. } => {
                    kinds.push(PyString::new(py, view_kind(*kind)).into_any());
                    labels.push(match label {
                        Some(text) => PyString::new(py, text).into_any(),
                        None => py.None().into_bound(py),
                    });
                    let place = row.content.place().expect("a read row's payload");
                    payloads.push(place_py(py, place)?);
                }
                other => {
                    if matches!(other, Content::Python) {
                        python.push(i);
                    }
                    kinds.push(py.None().into_bound(py));
                    labels.push(py.None().into_bound(py));
                    payloads.push(py.None().into_bound(py));
                }
            }
        }
        Ok((PyList::new(py, kinds)?, PyList::new(py, labels)?, PyList::new(py, payloads)?, python))
    }

    /// Per row (kind, label, the payload as the file spells it: JSON Lines with `json`, else CSV;
    /// output/spellings.py) for the rows the core read (kind, label and text None for a null
    /// blob, text None for no known format), and the rows that are the Python side's.
    fn texts<'py>(&self, py: Python<'py>, json: bool) -> PyResult<Columns3<'py>> {
        let rows = self.rows();
        let none = || py.None().into_bound(py);
        let (mut kinds, mut labels, mut texts, mut python) = (
            Vec::with_capacity(rows.len()),
            Vec::with_capacity(rows.len()),
            Vec::with_capacity(rows.len()),
            Vec::new(),
        );
        let spelt: Vec<Option<String>> =
            py.detach(|| rows.iter().map(|r| held::payload_text(&r.content, json)).collect());
        for (i, (row, text)) in rows.iter().zip(spelt).enumerate() {
            match &row.content {
                Content::Read { kind, label, .. } => {
                    kinds.push(PyString::new(py, view_kind(*kind)).into_any());
                    labels.push(label.as_deref().map_or_else(none, |l| PyString::new(py, l).into_any()));
                    texts.push(text.as_deref().map_or_else(none, |t| PyString::new(py, t).into_any()));
                }
                other => {
                    if matches!(other, Content::Python) {
                        python.push(i);
                    }
                    kinds.push(none());
                    labels.push(none());
                    texts.push(none());
                }
            }
        }
        Ok((PyList::new(py, kinds)?, PyList::new(py, labels)?, PyList::new(py, texts)?, python))
    }

    /// This column's rows in another order, with the Python side's among them: `order[i]` a row
    /// of this column (its index), or -1 for the next of `python` (stored values the Python
    /// engine reads: rows the core handed back).
    fn rearranged(
        &self,
        py: Python<'_>,
        order: Vec<isize>,
        python: Vec<Py<PyAny>>,
    ) -> PyResult<HeldContents> {
        let rows = self.rows();
        let mut others = python.into_iter();
        let mut out = Vec::with_capacity(order.len());
        for at in order {
            if at < 0 {
                let obj = others.next().ok_or_else(|| PyValueError::new_err("rearranged: too few rows"))?;
                let content = if obj.is_none(py) { Content::Null } else { Content::Python };
                out.push(ContentRow { content, stored: obj, decoded: 0, peeled: None });
            } else {
                let row =
                    rows.get(at as usize).ok_or_else(|| PyIndexError::new_err("rearranged: no such row"))?;
                out.push(ContentRow {
                    content: row.content.clone(),
                    stored: row.stored.clone_ref(py),
                    decoded: row.decoded,
                    peeled: row.peeled.as_ref().map(|p| p.clone_ref(py)),
                });
            }
        }
        Ok(HeldContents::new(out))
    }

    fn __repr__(&self) -> String {
        format!("HeldContents({} rows)", self.end - self.start)
    }
}

/// The held blob rows (one column, in chunks, all pure) as a Parquet export's six columns
/// (render/parquet_columns.py): the payload laid out as `kind` (named `name`), the label, the
/// view's kind, the note (none: a row with something to say is the Python side's), the stored
/// bytes (for no known format, and every row with `raw`) and the confidence (`confidence`, the
/// Python side's function of a label and a kind, called once per pair): ([six arrays], []) or
/// (None, the rows whose payloads do not fit `kind`, as held_array gives them). `filled`: the six
/// parts of each Python row and of any core row the writer overrides. Raises ValueError as
/// held_array does.
#[pyfunction]
#[pyo3(signature = (chunks, kind, name, raw, confidence, filled = None))]
pub fn contents_arrays<'py>(
    py: Python<'py>,
    chunks: &Bound<'py, PyAny>,
    kind: &Bound<'py, PyAny>,
    name: &str,
    raw: bool,
    confidence: &Bound<'py, PyAny>,
    filled: Option<&Bound<'py, PyDict>>,
) -> PyResult<LaidOut<'py>> {
    let kind = kind_of(kind)?;
    let chunks: Vec<Bound<'py, HeldContents>> = chunks_of(chunks)?;
    // the Python rows' six parts: (payload, label, kind, note, stored, confidence)
    let mut given: Vec<(usize, Node, Parts<'py>)> = Vec::new();
    if let Some(filled) = filled {
        for (k, v) in filled.iter() {
            let parts = v.cast_into::<PyTuple>()?;
            if parts.len() != 6 {
                return Err(PyValueError::new_err(
                    "a filled row is (payload, label, kind, note, stored, confidence)",
                ));
            }
            let part = |i: usize| -> PyResult<Option<Bound<'py, PyAny>>> {
                let item = parts.get_item(i)?;
                Ok(if item.is_none() { None } else { Some(item) })
            };
            given.push((
                k.extract()?,
                node_strict(&parts.get_item(0)?)?,
                [part(1)?, part(2)?, part(3)?, part(4)?, part(5)?],
            ));
        }
        given.sort_by_key(|(at, _, _)| *at);
    }
    let mut payloads: Vec<Slot<'_>> = Vec::new();
    let mut others: Vec<Option<&Parts<'py>>> = Vec::new();
    let mut next = given.iter().peekable();
    for chunk in &chunks {
        for row in chunk.get().rows() {
            let at = payloads.len();
            match (&row.content, next.next_if(|(i, _, _)| *i == at)) {
                (_, Some((_, node, parts))) => {
                    payloads.push(Some(Place::Node(node, &[])));
                    others.push(Some(parts));
                }
                (content @ Content::Read { .. }, None) => {
                    payloads.push(content.place());
                    others.push(None);
                }
                (Content::Null, None) => {
                    payloads.push(None);
                    others.push(None);
                }
                (Content::Python, None) => return Err(PyValueError::new_err("a Python row not filled")),
            }
        }
    }
    let (payload, misfits) = laid_out(py, &kind, name, &payloads)?;
    let Some(payload) = payload else { return Ok((None, misfits)) };
    let n = payloads.len();
    let mut label = Utf8::new(n);
    let mut kinds = Utf8::new(n);
    let mut note = Utf8::new(n);
    let mut stored = Utf8::new(n);
    let mut sure = Utf8::new(n);
    // the confidence of each (label, kind) the core's rows have, asked of the Python side once
    let mut sure_of: Vec<(Option<Arc<str>>, ViewKind, Option<String>)> = Vec::new();
    let text_of = |part: &Option<Bound<'py, PyAny>>| -> PyResult<Option<String>> {
        match part {
            None => Ok(None),
            Some(obj) => Ok(Some(obj.cast_exact::<PyString>()?.to_str()?.to_owned())),
        }
    };
    let mut at = 0usize;
    for chunk in &chunks {
        for row in chunk.get().rows() {
            match (&row.content, others[at]) {
                (_, Some([text, view, why, bytes, level])) => {
                    label.push(text_of(text)?.as_deref().map(str::as_bytes))?;
                    kinds.push(text_of(view)?.as_deref().map(str::as_bytes))?;
                    note.push(text_of(why)?.as_deref().map(str::as_bytes))?;
                    match bytes {
                        None => stored.push(None)?,
                        Some(obj) => stored.push(Some(obj.cast_exact::<PyBytes>()?.as_bytes()))?,
                    }
                    sure.push(text_of(level)?.as_deref().map(str::as_bytes))?;
                }
                (Content::Read { kind: view, label: text, .. }, None) => {
                    label.push(text.as_deref().map(str::as_bytes))?;
                    kinds.push(Some(view_kind(*view).as_bytes()))?;
                    note.push(None)?;
                    let keep = raw || *view == ViewKind::NoFormat;
                    let bytes = row.stored.bind(py).cast::<PyBytes>().ok();
                    stored.push(if keep { bytes.map(|b| b.as_bytes()) } else { None })?;
                    let known = sure_of.iter().position(|(l, k, _)| l == text && k == view);
                    let at_known = match known {
                        Some(i) => i,
                        None => {
                            let answer = confidence.call1((text.as_deref(), view_kind(*view)))?;
                            let level = if answer.is_none() { None } else { text_of(&Some(answer))? };
                            sure_of.push((text.clone(), *view, level));
                            sure_of.len() - 1
                        }
                    };
                    sure.push(sure_of[at_known].2.as_deref().map(str::as_bytes))?;
                }
                _ => {
                    label.push(None)?;
                    kinds.push(None)?;
                    note.push(None)?;
                    stored.push(None)?;
                    sure.push(None)?;
                }
            }
            at += 1;
        }
    }
    let (label_name, kind_name, note_name, stored_name) =
        (format!("{name}:label"), format!("{name}:kind"), format!("{name}:note"), format!("{name}:stored"));
    let sure_name = format!("{name}:confidence");
    Ok((
        Some(vec![
            payload,
            HeldArray { array: label.array("u", &label_name) },
            HeldArray { array: kinds.array("u", &kind_name) },
            HeldArray { array: note.array("u", &note_name) },
            HeldArray { array: stored.array("z", &stored_name) },
            HeldArray { array: sure.array("u", &sure_name) },
        ]),
        Vec::new(),
    ))
}

struct Utf8 {
    offsets: Vec<i32>,
    data: Vec<u8>,
    valid: Vec<bool>,
}

impl Utf8 {
    fn new(n: usize) -> Utf8 {
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        Utf8 { offsets, data: Vec::new(), valid: Vec::with_capacity(n) }
    }

    fn push(&mut self, bytes: Option<&[u8]>) -> PyResult<()> {
        if let Some(bytes) = bytes {
            self.data.extend_from_slice(bytes);
        }
        self.valid.push(bytes.is_some());
        let end = i32::try_from(self.data.len())
            .map_err(|_| PyValueError::new_err("a column past 32-bit offsets"))?;
        self.offsets.push(end);
        Ok(())
    }

    fn array(self, format: &str, name: &str) -> Array {
        variable_array(format, name, &self.offsets, &self.data, &self.valid)
    }
}

/// A page of one blob column's values decoded for a file (as decode_page decodes them, their
/// trees built, the GIL released): HeldContents. A value that is no bytes, or empty, is the
/// Python side's unless None (a null blob). `text_trees` false: a file of text, which writes a
/// text's payload from its text, so a JSON text's tree is not built (its label's reading says it
/// is JSON); `text_gaps`: then its whitespace runs are noted, for JSON Lines to write it minified
/// (query_page's own switches: PageRequest).
#[pyfunction]
#[pyo3(signature = (values, cap, text_trees = true, text_gaps = false))]
pub fn hold_page<'py>(
    py: Python<'py>,
    values: &Bound<'py, PyAny>,
    cap: usize,
    text_trees: bool,
    text_gaps: bool,
) -> PyResult<HeldContents> {
    let configured = configured_now()?;
    let items: Vec<Bound<'py, PyAny>> = values.try_iter()?.collect::<PyResult<_>>()?;
    let raw = slices(&items);
    let config = &configured.config;
    // a typed file's JSON text is held for its value, its columns laid out from the text
    // (text_values: its tree built where asked, Content::place); a file of text keeps its text
    let want = PageWant {
        paths: &[],
        text: true,
        tree: true,
        text_tree: false,
        gaps: text_gaps && !text_trees,
        text_values: text_trees,
        measure: false,
        json: true,
    };
    let answer = py.detach(|| page::decode_page(config, &raw, cap, &want));
    let nodes = config.nodes_for(cap);
    let mut labels = Labels::default();
    let mut rows = Vec::with_capacity(items.len());
    let mut peeled = answer.peeled.iter().peekable();
    for (i, ((item, value), outcome)) in items.iter().zip(&raw).zip(answer.outcomes).enumerate() {
        let decoded = outcome.as_ref().map_or(0, |o| o.decoded);
        let content = match (value, outcome) {
            _ if item.is_none() => Content::Null,
            (Some(bytes), Some(outcome)) => held::content(outcome, bytes, nodes, &mut labels),
            _ => Content::Python,
        };
        let row_peeled = match peeled.next_if(|(at, _)| *at == i) {
            Some((_, outcome)) => Some(peeled_py(py, outcome)?.unbind()),
            None => None,
        };
        rows.push(ContentRow { content, stored: item.clone().unbind(), decoded, peeled: row_peeled });
    }
    Ok(HeldContents::new(rows))
}

/// One piece of a JSON Lines batch's layout (json_lines): the same text every row, a text a row,
/// or a blob column's rows the core read.
enum Piece<'a> {
    Same(&'a str),
    Each(Vec<&'a str>),
    Blob(Vec<BlobRow<'a>>),
    Found(Vec<Found<'a>>),
}

/// A row of a path's column the core read (payload/native.py's HeldFound): a scalar the core
/// spells as found_column does, or the Python side's text.
#[derive(Clone, Copy)]
enum Found<'a> {
    Node(&'a Node, &'a [u8]),
    Text(&'a str),
}

/// A path's column's part of json_lines' layout: its HeldColumn held, the Python side's texts of
/// the rows the core does not spell (`spell` of each such row's value), by index.
struct FoundParts<'py> {
    column: Bound<'py, HeldColumn>,
    spelt: Vec<Option<Bound<'py, PyString>>>,
}

impl<'py> FoundParts<'py> {
    /// `answer`: an MCP answer's rows (json_lines' `cut`), whose lists and objects the core
    /// spells too.
    fn of(py: Python<'py>, item: &Bound<'py, PyAny>, rows: usize, answer: bool) -> PyResult<FoundParts<'py>> {
        let column = item.get_item(0)?.cast_into::<HeldColumn>()?;
        let spell = item.get_item(1)?;
        let held = column.get();
        if held.end - held.start != rows {
            return Err(PyValueError::new_err(format!(
                "a batch's columns differ in length: {} and {rows} rows",
                held.end - held.start
            )));
        }
        let mut spelt = Vec::with_capacity(rows);
        for row in held.rows() {
            spelt.push(match row {
                Row::Core(value)
                    if held::found_by_core(&value.node)
                        || (answer && matches!(value.node, Node::List(_) | Node::Map(_))) =>
                {
                    None
                }
                other => Some(spell.call1((row_py(py, other)?,))?.cast_into::<PyString>()?),
            });
        }
        Ok(FoundParts { column, spelt })
    }

    fn rows(&self) -> PyResult<Vec<Found<'_>>> {
        let held: &HeldColumn = self.column.get();
        held.rows()
            .iter()
            .zip(&self.spelt)
            .map(|(row, spelt)| match (row, spelt) {
                (_, Some(text)) => Ok(Found::Text(text.to_str()?)),
                (Row::Core(value), None) => Ok(Found::Node(&value.node, &value.src[..])),
                (Row::Python(_), None) => Err(PyValueError::new_err("a Python row not spelt")),
            })
            .collect()
    }
}

/// A blob row as its JSON Lines value: the text before its body, the body, the text after it,
/// then (raw) the stored bytes' hex and the text ending the object.
struct BlobRow<'a> {
    head: &'a str,
    body: Body<'a>,
    tail: &'a str,
    raw: Option<(&'a [u8], &'a str)>,
}

/// A blob row's body: the core's payload text, a text of the Python side's, or the stored hex.
#[derive(Clone, Copy)]
enum Body<'a> {
    Payload(&'a Content),
    Text(&'a str),
    Hex(&'a [u8]),
}

fn push_hex(bytes: &[u8], out: &mut String) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    out.reserve(bytes.len() * 2);
    for &b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
}

/// A JSON Lines batch as one UTF-8 buffer (export/json_csv.py writes it as it is): `rows` lines,
/// each the `layout`'s pieces one after the other: a str (the same every row), a list of str (one
/// a row), or a blob column (payload/native.py's HeldJson: the HeldContents, `head(label, kind)`
/// the text before a read payload, the texts (after it, raw's before and after the hex, no known
/// format's before and after the hex, a null blob's), raw, and the Python rows' whole texts by
/// index), or a path's column (payload/native.py's HeldFound: the HeldColumn and the Python side's
/// spelling of a value, called here for each row whose value the core does not spell: held.rs
/// found_by_core).
/// Every other text is the Python side's spelling; the core lays the payloads' texts
/// (payload_text), the stored bytes' hex and the path's scalars (found_text_into) between them. Raises
/// ValueError for a list or a column of another length, or a row neither read nor spelt.
///
/// `cut` (chars, items): the lines are an MCP answer's rows (mcp_server/answers.py), compact: a
/// payload and a path's list or object spelt from its tree or its place (held::answer_text_at,
/// json.dumps' compact spelling of the value the Python side would build), a stored hex as it
/// is; a row holding a value the answer's cut changes, or one the core does not spell so, gets
/// a NUL (which no JSON text holds) for the Python side to spell it.
#[pyfunction]
#[pyo3(signature = (layout, rows, cut=None))]
pub fn json_lines<'py>(
    py: Python<'py>,
    layout: &Bound<'py, PyList>,
    rows: usize,
    cut: Option<(usize, usize)>,
) -> PyResult<Bound<'py, PyBytes>> {
    let text = lines_text(py, layout, rows, cut, None)?;
    Ok(PyBytes::new(py, text.as_bytes()))
}

/// json_lines' lines of an MCP answer (`cut`), a row at a time: each row's compact JSON without
/// its newline, or None where the row holds a NUL (the Python side spells it); and each row's
/// quotes and backslashes (what escaping it inside a JSON string adds: mcp_server/sizing.py's
/// row_cost), 0 for a None.
#[pyfunction]
pub fn answer_rows<'py>(
    py: Python<'py>,
    layout: &Bound<'py, PyList>,
    rows: usize,
    cut: (usize, usize),
) -> PyResult<(Vec<Option<Bound<'py, PyBytes>>>, Vec<usize>)> {
    let mut ends = Vec::with_capacity(rows);
    let text = lines_text(py, layout, rows, Some(cut), Some(&mut ends))?;
    let bytes = text.as_bytes();
    let (mut lines, mut escapes) = (Vec::with_capacity(rows), Vec::with_capacity(rows));
    let mut start = 0;
    for end in ends {
        let line = &bytes[start..end];
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        start = end;
        if line.contains(&0) {
            lines.push(None);
            escapes.push(0);
        } else {
            lines.push(Some(PyBytes::new(py, line)));
            escapes.push(escapes_in(line));
        }
    }
    Ok((lines, escapes))
}

/// The quotes and backslashes of a text: what escaping it inside a JSON string adds (counted a
/// byte-wide sum at a time, which the compiler makes a vector loop).
fn escapes_in(text: &[u8]) -> usize {
    text.chunks(255)
        .map(|chunk| {
            chunk.iter().fold(0u8, |n, &b| n + (u8::from(b == b'"') | u8::from(b == b'\\'))) as usize
        })
        .sum()
}

/// A JSON text (UTF-8, as an MCP answer's rows spell it) as the inside of a JSON string: its
/// quotes and backslashes escaped, a backslash each; a JSON text holds no raw control character,
/// the one other thing a JSON string escapes (mcp_server/transport.py's SpeltWriter writes an
/// answer's text block so, as the MCP SDK's serializer would).
#[pyfunction]
pub fn json_text_escaped<'py>(py: Python<'py>, text: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    PyBytes::new_with(py, text.len() + escapes_in(text), |out| {
        let mut at = 0;
        for &b in text {
            if b == b'"' || b == b'\\' {
                out[at] = b'\\';
                at += 1;
            }
            out[at] = b;
            at += 1;
        }
        Ok(())
    })
}

/// json_lines' text; `ends`: where each row's line ends in it, pushed as it is written.
fn lines_text<'py>(
    py: Python<'py>,
    layout: &Bound<'py, PyList>,
    rows: usize,
    cut: Option<(usize, usize)>,
    mut ends: Option<&mut Vec<usize>>,
) -> PyResult<String> {
    let cut = cut.map(|(chars, items)| held::AnswerCut { chars, items });
    // the Python objects the pieces borrow from, kept alive for the call
    let items: Vec<Bound<'py, PyAny>> = layout.iter().collect();
    let mut strings: Vec<Vec<Bound<'py, PyString>>> = Vec::with_capacity(items.len());
    let mut blobs: Vec<Option<BlobParts<'py>>> = Vec::with_capacity(items.len());
    let mut founds: Vec<Option<FoundParts<'py>>> = Vec::with_capacity(items.len());
    for item in &items {
        let (mut texts, mut blob, mut found) = (Vec::new(), None, None);
        if item.is_instance_of::<PyString>() {
            texts.push(item.clone().cast_into::<PyString>()?);
        } else if let Ok(list) = item.cast::<PyList>() {
            if list.len() != rows {
                return Err(PyValueError::new_err(format!(
                    "a batch's columns differ in length: {} and {rows} rows",
                    list.len()
                )));
            }
            texts = list.iter().map(|t| Ok(t.cast_into::<PyString>()?)).collect::<PyResult<_>>()?;
        } else if item.get_item(0)?.is_instance_of::<HeldColumn>() {
            found = Some(FoundParts::of(py, item, rows, cut.is_some())?);
        } else {
            blob = Some(BlobParts::of(py, item, rows)?);
        }
        strings.push(texts);
        blobs.push(blob);
        founds.push(found);
    }
    let mut pieces: Vec<Piece<'_>> = Vec::with_capacity(items.len());
    for (item, ((texts, blob), found)) in items.iter().zip(strings.iter().zip(&blobs).zip(&founds)) {
        pieces.push(match (blob, found) {
            (Some(blob), _) => Piece::Blob(blob.rows(py)?),
            (_, Some(found)) => Piece::Found(found.rows()?),
            _ if item.is_instance_of::<PyString>() => Piece::Same(texts[0].to_str()?),
            _ => Piece::Each(texts.iter().map(|t| t.to_str()).collect::<PyResult<_>>()?),
        });
    }
    let text = py.detach(|| {
        let mut out = String::with_capacity(lines_size(&pieces, rows));
        for row in 0..rows {
            for piece in &pieces {
                match piece {
                    Piece::Same(text) => out.push_str(text),
                    Piece::Each(texts) => out.push_str(texts[row]),
                    Piece::Found(values) => match (values[row], cut) {
                        (Found::Node(node, src), Some(cut)) => {
                            if !held::answer_text_at(Place::Node(node, src), cut, &mut out) {
                                out.push('\0');
                            }
                        }
                        (Found::Node(node, src), None) => held::found_text_into(node, src, &mut out),
                        (Found::Text(text), _) => out.push_str(text),
                    },
                    Piece::Blob(values) => {
                        let value = &values[row];
                        out.push_str(value.head);
                        match (value.body, cut) {
                            (Body::Payload(content), Some(cut)) => {
                                if !answer_payload(content, cut, &mut out) {
                                    out.push('\0');
                                }
                            }
                            (Body::Payload(content), None) => {
                                if !held::payload_text_into(content, true, &mut out) {
                                    return Err("a read row without a payload text");
                                }
                            }
                            (Body::Text(text), _) => out.push_str(text),
                            (Body::Hex(bytes), _) => push_answer_hex(bytes, cut, &mut out),
                        }
                        out.push_str(value.tail);
                        if let Some((bytes, end)) = value.raw {
                            push_answer_hex(bytes, cut, &mut out);
                            out.push_str(end);
                        }
                    }
                }
            }
            if let Some(ends) = ends.as_deref_mut() {
                ends.push(out.len());
            }
        }
        Ok(out)
    });
    text.map_err(PyValueError::new_err)
}

/// A stored value's hex; in an answer (`cut`), a NUL after it where the answer cuts it (its
/// text, "0x" and two digits a byte, is one string).
fn push_answer_hex(bytes: &[u8], cut: Option<held::AnswerCut>, out: &mut String) {
    push_hex(bytes, out);
    if cut.is_some_and(|cut| 2 + bytes.len() * 2 > cut.chars) {
        out.push('\0');
    }
}

/// A read payload in an MCP answer (json_lines' `cut`): a JSON text as its value's compact JSON,
/// a plain text as a JSON string; false for a record (the Python side's spelling) and a value
/// the cut changes.
fn answer_payload(content: &Content, cut: held::AnswerCut, out: &mut String) -> bool {
    match content {
        Content::Read { kind: ViewKind::Text, json: true, .. } => {
            content.place().is_some_and(|place| held::answer_text_at(place, cut, out))
        }
        Content::Read { kind: ViewKind::Text, .. } => {
            let mut text = String::new();
            held::payload_text_into(content, false, &mut text)
                && cut.keeps(&text)
                && held::payload_text_into(content, true, out)
        }
        _ => false,
    }
}

/// About the size of json_lines' buffer (its capacity: the batch written without growing it,
/// mostly): the texts' lengths, a payload's text at its decoded length (minified, no longer), a
/// record's at twice it, a hex at twice its bytes, a path's scalar at 24 bytes.
fn lines_size(pieces: &[Piece<'_>], rows: usize) -> usize {
    let mut size = 0usize;
    for piece in pieces {
        size = size.saturating_add(match piece {
            Piece::Same(text) => text.len().saturating_mul(rows),
            Piece::Each(texts) => texts.iter().map(|t| t.len()).sum(),
            Piece::Found(values) => values.len() * 24,
            Piece::Blob(values) => values
                .iter()
                .map(|value| {
                    let body = match value.body {
                        Body::Payload(Content::Read { kind: ViewKind::Text, text_len, .. }) => *text_len,
                        Body::Payload(Content::Read { payload, .. }) => payload.src.len().saturating_mul(2),
                        Body::Payload(_) => 0,
                        Body::Text(text) => text.len(),
                        Body::Hex(bytes) => bytes.len() * 2,
                    };
                    let raw = value.raw.map_or(0, |(bytes, end)| bytes.len() * 2 + end.len());
                    value.head.len() + body + value.tail.len() + raw
                })
                .fold(0usize, |a, b| a.saturating_add(b)),
        });
    }
    size
}

/// A blob column's part of json_lines' layout, its Python objects held.
struct BlobParts<'py> {
    contents: Bound<'py, HeldContents>,
    /// (label, kind) -> the text before the payload
    heads: Vec<(Option<Arc<str>>, ViewKind, Bound<'py, PyString>)>,
    /// after a payload; raw's before the hex and after it; no known format's before and after; null
    texts: [Bound<'py, PyString>; 6],
    raw: bool,
    spelt: Vec<Option<Bound<'py, PyString>>>,
}

impl<'py> BlobParts<'py> {
    fn of(py: Python<'py>, item: &Bound<'py, PyAny>, rows: usize) -> PyResult<BlobParts<'py>> {
        let contents = item.get_item(0)?.cast_into::<HeldContents>()?;
        let held = contents.get();
        if held.end - held.start != rows {
            return Err(PyValueError::new_err(format!(
                "a batch's columns differ in length: {} and {rows} rows",
                held.end - held.start
            )));
        }
        let head = item.get_item(1)?;
        let given = item.get_item(2)?;
        let text =
            |i: usize| -> PyResult<Bound<'py, PyString>> { Ok(given.get_item(i)?.cast_into::<PyString>()?) };
        let texts = [text(0)?, text(1)?, text(2)?, text(3)?, text(4)?, text(5)?];
        let raw: bool = item.get_item(3)?.extract()?;
        let mut spelt: Vec<Option<Bound<'py, PyString>>> = (0..rows).map(|_| None).collect();
        for (k, v) in item.get_item(4)?.cast_into::<PyDict>()?.iter() {
            let at: usize = k.extract()?;
            *spelt.get_mut(at).ok_or_else(|| PyIndexError::new_err("a spelt row past the column"))? =
                Some(v.cast_into::<PyString>()?);
        }
        let mut heads: Vec<(Option<Arc<str>>, ViewKind, Bound<'py, PyString>)> = Vec::new();
        for row in held.rows() {
            if let Content::Read { kind, label, .. } = &row.content {
                if *kind != ViewKind::NoFormat && !heads.iter().any(|(l, k, _)| l == label && k == kind) {
                    let spelt = head.call1((label.as_deref(), view_kind(*kind)))?.cast_into::<PyString>()?;
                    heads.push((label.clone(), *kind, spelt));
                }
            }
        }
        let _ = py;
        Ok(BlobParts { contents, heads, texts, raw, spelt })
    }

    fn rows<'a>(&'a self, py: Python<'py>) -> PyResult<Vec<BlobRow<'a>>> {
        let [after, raw_head, raw_tail, hex_head, hex_tail, null] = &self.texts;
        let (after, raw_head, raw_tail) = (after.to_str()?, raw_head.to_str()?, raw_tail.to_str()?);
        let (hex_head, hex_tail, null) = (hex_head.to_str()?, hex_tail.to_str()?, null.to_str()?);
        let held: &'a HeldContents = self.contents.get();
        let mut out = Vec::with_capacity(held.end - held.start);
        for (row, spelt) in held.rows().iter().zip(&self.spelt) {
            let stored = || -> PyResult<&'a [u8]> {
                Ok(row
                    .stored
                    .bind(py)
                    .cast::<PyBytes>()
                    .map_err(|_| PyValueError::new_err("a read row's stored value is no bytes"))?
                    .as_bytes())
            };
            out.push(match (&row.content, spelt) {
                (_, Some(text)) => {
                    BlobRow { head: "", body: Body::Text(text.to_str()?), tail: "", raw: None }
                }
                (Content::Null, None) => BlobRow { head: "", body: Body::Text(null), tail: "", raw: None },
                (Content::Read { kind: ViewKind::NoFormat, .. }, None) => {
                    BlobRow { head: hex_head, body: Body::Hex(stored()?), tail: hex_tail, raw: None }
                }
                (Content::Read { kind, label, .. }, None) => {
                    let head = self
                        .heads
                        .iter()
                        .find(|(l, k, _)| l == label && k == kind)
                        .map(|(_, _, h)| h.to_str())
                        .transpose()?
                        .unwrap_or("");
                    let body = Body::Payload(&row.content);
                    if self.raw {
                        BlobRow { head, body, tail: raw_head, raw: Some((stored()?, raw_tail)) }
                    } else {
                        BlobRow { head, body, tail: after, raw: None }
                    }
                }
                (Content::Python, None) => return Err(PyValueError::new_err("a Python row not spelt")),
            });
        }
        Ok(out)
    }
}
