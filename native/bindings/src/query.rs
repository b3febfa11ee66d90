//! query_page(QueryRequest) -> QueryPage: a payload query's page answer (core: query.rs), its
//! request read from named types and its answer converted to Python's objects.

use cqlsh_ext_core::engine::Needle as CoreNeedle;
use cqlsh_ext_core::query::{self, AggSpec, Cell, CondSpec, Lit, NumShown, Program, Shown};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyList, PyString, PyTuple};

use cqlsh_ext_core::held;

use crate::arrow::Whole;
use crate::convert::{peeled_py, step_of, to_py};
use crate::held::{ContentRow, HeldColumn, HeldContents, Row as HeldRow};
use crate::state::configured_now;

/// A condition's literal as the core compares it (query.grammar's Literal, encoded by
/// query.evaluate).
#[pyclass(frozen, module = "cqlsh_ext_native")]
pub struct Literal {
    lit: Lit,
}

#[pymethods]
impl Literal {
    /// A string.
    #[staticmethod]
    fn text(value: String) -> Self {
        Literal { lit: Lit::Str(value) }
    }

    /// An integer within 128 bits.
    #[staticmethod]
    fn integer(value: i128) -> Self {
        Literal { lit: Lit::Int(value) }
    }

    /// A decimal: the float nearest it, its floor and ceiling, whether it is an integer.
    #[staticmethod]
    #[pyo3(signature = (*, nearest, floor, ceil, integral))]
    fn decimal(nearest: f64, floor: i128, ceil: i128, integral: bool) -> Self {
        Literal { lit: Lit::Dec { f: nearest, floor, ceil, integral } }
    }

    #[staticmethod]
    fn boolean(value: bool) -> Self {
        Literal { lit: Lit::Bool(value) }
    }

    #[staticmethod]
    fn null() -> Self {
        Literal { lit: Lit::Null }
    }

    fn __repr__(&self) -> String {
        format!("Literal({:?})", self.lit)
    }
}

/// What a condition needs to find in a JSON text, verbatim: any of the strings (=, IN) or all
/// of them (LIKE's literal parts). A text that cannot hold them is not parsed.
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct Needle {
    any: bool,
    strings: Vec<String>,
}

#[pymethods]
impl Needle {
    #[new]
    #[pyo3(signature = (*, any, strings))]
    fn new(any: bool, strings: Vec<String>) -> Self {
        Needle { any, strings }
    }
}

/// A place a query reads: its values (`source`), or the page's rows and the column's index in
/// them (`column`; the rows a sequence of tuples, or a RowsPage as the server sent them, its
/// column a blob column: each cell's bytes read as stored, null as null), or an ArrowBinary (a
/// blob column as Arrow holds it, no `column`, read as a RowsPage's); the paths it reads (tuples of steps); the needles of its conditions.
#[pyclass(frozen, module = "cqlsh_ext_native")]
pub struct QueryPlace {
    source: Py<PyAny>,
    column: Option<usize>,
    paths: Py<PyList>,
    needles: Vec<Py<Needle>>,
}

#[pymethods]
impl QueryPlace {
    #[new]
    #[pyo3(signature = (source, *, column = None, paths, needles = Vec::new()))]
    fn new(
        py: Python<'_>,
        source: Py<PyAny>,
        column: Option<usize>,
        paths: &Bound<'_, PyAny>,
        needles: Vec<Py<Needle>>,
    ) -> PyResult<Self> {
        let paths = PyList::new(py, paths.try_iter()?.collect::<PyResult<Vec<_>>>()?)?.unbind();
        Ok(QueryPlace { source, column, paths, needles })
    }
}

/// A condition: its operator (query.grammar's text: "=", "IN", "LIKE", "IS NULL", "IS
/// UNDECODABLE", ...), the place it is on, its path there (None: the blob itself), literals.
#[pyclass(frozen, module = "cqlsh_ext_native")]
pub struct Condition {
    op: String,
    place: usize,
    path: Option<usize>,
    literals: Vec<Py<Literal>>,
}

#[pymethods]
impl Condition {
    #[new]
    #[pyo3(signature = (*, op, place, path = None, literals = Vec::new()))]
    fn new(op: String, place: usize, path: Option<usize>, literals: Vec<Py<Literal>>) -> Self {
        Condition { op, place, path, literals }
    }
}

/// An aggregate (query.groups.AggSpec): its function, count(*), its input's (place, path).
#[pyclass(frozen, module = "cqlsh_ext_native")]
pub struct Aggregate {
    func: String,
    star: bool,
    input: Option<(usize, usize)>,
}

#[pymethods]
impl Aggregate {
    #[new]
    #[pyo3(signature = (*, func, star, input = None))]
    fn new(func: String, star: bool, input: Option<(usize, usize)>) -> Self {
        Aggregate { func, star, input }
    }
}

/// A payload query's page (query.evaluate.CoreProgram compiles the plan into it): its rows'
/// count, places, conditions, the projected and ORDER BY paths ((place, path) or None), the
/// GROUP BY keys, the aggregates, whether it groups, the cap, and the object an undecodable
/// value's group key is.
#[pyclass(frozen, module = "cqlsh_ext_native")]
pub struct QueryRequest {
    #[pyo3(get)]
    rows: usize,
    places: Vec<Py<QueryPlace>>,
    conditions: Vec<Py<Condition>>,
    outputs: Vec<Option<(usize, usize)>>,
    order: Vec<Option<(usize, usize)>>,
    keys: Vec<(usize, usize)>,
    aggregates: Vec<Py<Aggregate>>,
    grouped: bool,
    cap: usize,
    undecodable_group: Py<PyAny>,
    /// The projected paths' values held by the core (QueryPage.held) instead of Python lists.
    held: bool,
    /// Places whose kept rows' contents a file writes (QueryPage.contents): their trees built.
    contents: Vec<usize>,
    /// With `contents`: a text's JSON tree built too (Parquet); false: a file of text (JSON Lines,
    /// CSV) writes a text from its text, its label saying whether it is a JSON container.
    text_trees: bool,
    /// Without `text_trees`: a JSON text's whitespace runs noted, JSON Lines writing it minified
    /// from them (the core's Want.gaps); false: not noted (CSV).
    text_gaps: bool,
}

#[pymethods]
impl QueryRequest {
    /// The page's places.
    #[getter]
    fn places(&self, py: Python<'_>) -> Vec<Py<QueryPlace>> {
        self.places.iter().map(|p| p.clone_ref(py)).collect()
    }

    #[new]
    #[pyo3(signature = (*, rows, places, conditions, outputs, order, keys, aggregates, grouped, cap, undecodable_group,
                        held = false, contents = Vec::new(), text_trees = true, text_gaps = false))]
    #[allow(clippy::too_many_arguments)] // the request's fields, by keyword
    fn new(
        rows: usize,
        places: Vec<Py<QueryPlace>>,
        conditions: Vec<Py<Condition>>,
        outputs: Vec<Option<(usize, usize)>>,
        order: Vec<Option<(usize, usize)>>,
        keys: Vec<(usize, usize)>,
        aggregates: Vec<Py<Aggregate>>,
        grouped: bool,
        cap: usize,
        undecodable_group: Py<PyAny>,
        held: bool,
        contents: Vec<usize>,
        text_trees: bool,
        text_gaps: bool,
    ) -> Self {
        QueryRequest {
            held,
            contents,
            text_trees,
            text_gaps,
            rows,
            places,
            conditions,
            outputs,
            order,
            keys,
            aggregates,
            grouped,
            cap,
            undecodable_group,
        }
    }
}

/// An aggregate's state over a page's group (query.groups.Accumulator's fields): the float
/// sum as little-endian two's complement bytes over 2**FLOAT_SUM_SHIFT (None: no float).
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct AccumulatorState {
    count: u64,
    int_sum: i128,
    float_sum: Option<Py<PyBytes>>,
    floats: bool,
    num_min: Py<PyAny>,
    num_max: Py<PyAny>,
    str_min: Option<String>,
    str_max: Option<String>,
    skipped: u64,
}

/// One group of a page: its key (the first key met, as shown) and its aggregates' states.
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct GroupPartial {
    key: Py<PyTuple>,
    accumulators: Vec<Py<AccumulatorState>>,
}

/// A path of a place over the page: whether a value had it; the deepest miss before the
/// first that had it ((depth, the keys there) or None).
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct PathSeen {
    found: bool,
    miss: Option<(usize, Vec<String>)>,
}

/// query_page()'s answer (cqlsh_ext/payload/native.py describes each field).
#[pyclass(frozen, get_all, module = "cqlsh_ext_native")]
pub struct QueryPage {
    kept: Vec<usize>,
    handed_rows: Vec<usize>,
    /// Per projected path, its value in each kept row (None: missing, cut, undecodable).
    outputs: Vec<Py<PyList>>,
    order: Vec<Py<PyList>>,
    undecodable: u64,
    cut: u64,
    /// Undecodable values by the engine's kind code: (code, count).
    kinds: Vec<(u8, u64)>,
    /// Per place, per path.
    paths: Vec<Vec<Py<PathSeen>>>,
    groups: Vec<Py<GroupPartial>>,
    /// A sum past 128 bits: Python reads the page.
    overflow: bool,
    /// With `held`: per projected item, its path's values held by the core (None: not a path).
    held: Vec<Option<Py<HeldColumn>>>,
    /// Per place of `contents`, its kept rows' contents.
    contents: Vec<Py<HeldContents>>,
    /// Per place, its values handed back with their containers peeled: (stored value, chain,
    /// sizes, payload), for the place's Python engine to read the payloads from.
    peeled: Vec<Py<PyList>>,
}

fn shown_py<'py>(
    py: Python<'py>,
    shown: &Shown,
    undecodable: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    Ok(match shown {
        Shown::Null => py.None().into_bound(py),
        Shown::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Shown::Int(i) => i.into_pyobject(py)?.into_any(),
        Shown::Float(f) => PyFloat::new(py, *f).into_any(),
        Shown::Str(s) => PyString::new(py, s).into_any(),
        Shown::Bytes(b) => PyBytes::new(py, b).into_any(),
        Shown::Undecodable => undecodable.clone(),
    })
}

fn num_py(py: Python<'_>, n: &Option<NumShown>) -> PyResult<Py<PyAny>> {
    Ok(match n {
        None => py.None(),
        Some(NumShown::Int(i)) => i.into_pyobject(py)?.into_any().unbind(),
        Some(NumShown::Float(f)) => PyFloat::new(py, *f).into_any().unbind(),
    })
}

fn invalid(why: String) -> PyErr {
    PyValueError::new_err(format!("query_page: {why}"))
}

/// A query's page decoded and answered with the GIL released.
#[pyfunction]
pub fn query_page<'py>(py: Python<'py>, request: &Bound<'py, QueryRequest>) -> PyResult<QueryPage> {
    let configured = configured_now()?;
    let r = request.get();
    let mut items: Vec<Vec<Bound<'py, PyAny>>> = Vec::with_capacity(r.places.len());
    let mut paths = Vec::with_capacity(r.places.len());
    let mut needles = Vec::with_capacity(r.places.len());
    let mut bodies: Vec<Option<Whole<'py>>> = Vec::with_capacity(r.places.len());
    for place in &r.places {
        let place = place.get();
        needles.push(
            place
                .needles
                .iter()
                .map(|n| {
                    let n = n.get();
                    CoreNeedle {
                        any: n.any,
                        strings: n.strings.iter().map(|s| s.as_bytes().to_vec()).collect(),
                    }
                })
                .collect::<Vec<_>>(),
        );
        let source = place.source.bind(py);
        if let Some(whole) = Whole::of(source, place.column)? {
            // The server's page (its bytes kept alive here) or an Arrow column: the cells borrowed.
            if whole.row_count() != r.rows {
                return Err(invalid("a place has not one value a row".to_owned()));
            }
            bodies.push(Some(whole));
            items.push(Vec::new());
        } else {
            let values: Vec<Bound<'py, PyAny>> = match place.column {
                None => source.try_iter()?.collect::<PyResult<_>>()?,
                Some(i) => source
                    .try_iter()?
                    .map(|row| row.and_then(|row| row.get_item(i)))
                    .collect::<PyResult<_>>()?,
            };
            if values.len() != r.rows {
                return Err(invalid("a place has not one value a row".to_owned()));
            }
            bodies.push(None);
            items.push(values);
        }
        let mut steps = Vec::new();
        for path in place.paths.bind(py).iter() {
            steps.push(path.try_iter()?.map(|s| step_of(&s?)).collect::<PyResult<Vec<_>>>()?);
        }
        paths.push(steps);
    }
    let conds = r
        .conditions
        .iter()
        .map(|c| {
            let c = c.get();
            CondSpec {
                op: c.op.clone(),
                place: c.place,
                path: c.path,
                lits: c.literals.iter().map(|l| l.get().lit.clone()).collect(),
            }
        })
        .collect();
    let aggs = r
        .aggregates
        .iter()
        .map(|a| a.get())
        .map(|a| AggSpec { func: a.func.clone(), star: a.star, input: a.input })
        .collect();
    let projected: Vec<(usize, usize)> = r.outputs.iter().chain(r.order.iter()).flatten().copied().collect();
    let mut program =
        Program::new(paths, needles, conds, &projected, r.keys.clone(), aggs, r.grouped).map_err(invalid)?;
    program.text_trees = r.text_trees;
    program.gaps = r.text_gaps;
    for &place in &r.contents {
        match program.trees.get_mut(place) {
            Some(tree) => *tree = true,
            None => return Err(invalid("contents of no place".to_owned())),
        }
    }
    // the values: bytes, None (a null blob) or anything else (not a blob); a text column's str
    // is read as its UTF-8 bytes by the Python evaluator alone: the page is refused
    let mut cells: Vec<Vec<Cell<'_>>> = Vec::with_capacity(items.len());
    for (values, body) in items.iter().zip(&bodies) {
        if let Some(whole) = body {
            let column = whole.cells()?;
            cells.push(column.into_iter().map(|cell| cell.map_or(Cell::Null, Cell::Blob)).collect());
            continue;
        }
        let mut place = Vec::with_capacity(values.len());
        for v in values {
            place.push(if v.is_none() {
                Cell::Null
            } else if let Ok(b) = v.cast::<PyBytes>() {
                Cell::Blob(b.as_bytes())
            } else if v.is_instance_of::<PyString>() {
                return Err(invalid("a text column's value: the Python evaluator reads the page".to_owned()));
            } else {
                Cell::Other
            });
        }
        cells.push(place);
    }
    let config = &configured.config;
    let (rows, cap) = (r.rows, r.cap);
    let (mut slots, result, peeled_rows) =
        py.detach(|| query::query_page(config, &program, &cells, rows, cap));
    let mut peeled = Vec::with_capacity(peeled_rows.len());
    for (place, handed) in peeled_rows.iter().enumerate() {
        let mut found = Vec::with_capacity(handed.len());
        for (row, outcome) in handed {
            let stored = PyBytes::new(py, cells[place][*row].stored()).into_any();
            let parts = peeled_py(py, outcome)?;
            found.push(PyTuple::new(
                py,
                [stored, parts.get_item(0)?, parts.get_item(1)?, parts.get_item(2)?],
            )?);
        }
        peeled.push(PyList::new(py, found)?.unbind());
    }
    let column_of = |refs: &Vec<Option<(usize, usize)>>| -> PyResult<Vec<Py<PyList>>> {
        let mut out = Vec::with_capacity(refs.len());
        for reference in refs {
            let mut values: Vec<Bound<'py, PyAny>> = Vec::with_capacity(result.kept.len());
            for &row in &result.kept {
                values.push(match reference {
                    Some((place, path)) => {
                        match query::projected(&slots[*place][row], *path, &cells[*place][row]) {
                            Some((node, src)) => to_py(py, node, src)?,
                            None => py.None().into_bound(py),
                        }
                    }
                    None => py.None().into_bound(py),
                });
            }
            out.push(PyList::new(py, values)?.unbind());
        }
        Ok(out)
    };
    let nodes = config.nodes_for(cap);
    let (outputs, held) = if r.held {
        let mut held = Vec::with_capacity(r.outputs.len());
        for reference in &r.outputs {
            held.push(match reference {
                Some((place, path)) => {
                    let mut rows = Vec::with_capacity(result.kept.len());
                    for &row in &result.kept {
                        rows.push(match query::projected(&slots[*place][row], *path, &cells[*place][row]) {
                            Some((node, src)) => match held::held_value(node, src, nodes) {
                                Some(value) => HeldRow::Core(value),
                                None => HeldRow::Python(to_py(py, node, src)?.unbind()),
                            },
                            None => HeldRow::Core(held::Held::none()),
                        });
                    }
                    Some(Py::new(py, HeldColumn::new(rows))?)
                }
                None => None,
            });
        }
        (r.outputs.iter().map(|_| PyList::empty(py).unbind()).collect(), held)
    } else {
        (column_of(&r.outputs)?, Vec::new())
    };
    let order = column_of(&r.order)?;
    let mut labels = held::Labels::default();
    let mut contents = Vec::with_capacity(r.contents.len());
    for &place in &r.contents {
        let mut rows = Vec::with_capacity(result.kept.len());
        for &row in &result.kept {
            let slot = std::mem::replace(&mut slots[place][row], query::Slot::HandBack);
            let stored = match cells[place][row] {
                Cell::Blob(bytes) => bytes,
                _ => &[],
            };
            // The row's stored value as the file writes it: the driver's value, or, of the
            // server's page or an Arrow column (no values made), its cell as bytes (None: null).
            let value = match (&bodies[place], &cells[place][row]) {
                (None, _) => items[place][row].clone().unbind(),
                (Some(_), Cell::Blob(bytes)) => PyBytes::new(py, bytes).into_any().unbind(),
                (Some(_), _) => py.None(),
            };
            let content = held::slot_content(slot, stored, nodes, &mut labels);
            rows.push(ContentRow { content, stored: value, decoded: 0, peeled: None });
        }
        contents.push(Py::new(py, HeldContents::new(rows))?);
    }
    let undecodable_group = r.undecodable_group.bind(py);
    let mut groups = Vec::with_capacity(result.groups.len());
    for group in &result.groups {
        let key: Vec<Bound<'py, PyAny>> =
            group.key.iter().map(|s| shown_py(py, s, undecodable_group)).collect::<PyResult<_>>()?;
        let mut accumulators = Vec::with_capacity(group.accs.len());
        for acc in &group.accs {
            let state = AccumulatorState {
                count: acc.count,
                int_sum: acc.int_sum,
                float_sum: acc.float_sum_bytes().map(|b| PyBytes::new(py, &b).unbind()),
                floats: acc.floats,
                num_min: num_py(py, &acc.num_min)?,
                num_max: num_py(py, &acc.num_max)?,
                str_min: acc.str_min.as_deref().map(str::to_owned),
                str_max: acc.str_max.as_deref().map(str::to_owned),
                skipped: acc.skipped,
            };
            accumulators.push(Py::new(py, state)?);
        }
        groups.push(Py::new(py, GroupPartial { key: PyTuple::new(py, key)?.unbind(), accumulators })?);
    }
    let mut seen = Vec::with_capacity(result.seen.len());
    for place in &result.seen {
        seen.push(
            place
                .iter()
                .map(|s| Py::new(py, PathSeen { found: s.found, miss: s.miss.clone() }))
                .collect::<PyResult<Vec<_>>>()?,
        );
    }
    Ok(QueryPage {
        kept: result.kept.clone(),
        handed_rows: result.handed_rows.clone(),
        outputs,
        order,
        undecodable: result.undecodable,
        cut: result.cut,
        kinds: result.kinds.iter().enumerate().filter(|(_, n)| **n > 0).map(|(k, n)| (k as u8, *n)).collect(),
        paths: seen,
        groups,
        overflow: result.overflow,
        held,
        contents,
        peeled,
    })
}
