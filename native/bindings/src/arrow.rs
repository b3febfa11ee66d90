//! ArrowBinary: a pyarrow `binary` or `large_binary` array's cells borrowed from its buffers (its
//! validity bitmap, offsets and data, at the array's offset and length; nothing copied): the
//! blob column of an Arrow record batch (Spark's connector hands a task its rows so), read by
//! measure_page, query_page and describe_page as a RowsPage column is read. The buffers are
//! pyarrow Buffers (their address and size): the array is kept alive while the object is.

use std::sync::atomic::{AtomicU64, Ordering};

use cqlsh_ext_core::rows::CellRef;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::rows::RowsPage;

/// Cells the three calls have read from Arrow arrays since the module loaded.
static ARROW_CELLS: AtomicU64 = AtomicU64::new(0);

/// How many cells measure_page, query_page and describe_page have read from ArrowBinary columns
/// since the module loaded (each a row whose blob the core took from Arrow's buffers).
#[pyfunction]
pub fn arrow_cells() -> u64 {
    ARROW_CELLS.load(Ordering::Relaxed)
}

/// A buffer's address and size in bytes (0, 0: absent).
#[derive(Clone, Copy, Default)]
struct Span {
    address: usize,
    size: usize,
}

impl Span {
    fn of(buffer: &Bound<'_, PyAny>, buffer_type: &Bound<'_, PyAny>, what: &str) -> PyResult<Self> {
        if buffer.is_none() {
            return Ok(Span::default());
        }
        if !buffer.is_instance(buffer_type)? {
            return Err(malformed(format!("its {what} is not a pyarrow Buffer")));
        }
        let address: usize = buffer.getattr("address")?.extract()?;
        let size: usize = buffer.getattr("size")?.extract()?;
        if address == 0 && size > 0 {
            return Err(malformed(format!("its {what} has {size} bytes at no address")));
        }
        Ok(Span { address, size })
    }

    /// The buffer's bytes, while the array that owns them lives (`_owner`: the borrow's lifetime).
    fn bytes<'a, T>(&self, _owner: &'a T) -> &'a [u8] {
        if self.size == 0 {
            return &[];
        }
        // SAFETY: a pyarrow Buffer's `address` and `size` describe memory the buffer owns or
        // keeps alive; the array that holds the buffer is held by the ArrowBinary the borrow
        // is tied to, and Arrow's buffers are immutable.
        unsafe { std::slice::from_raw_parts(self.address as *const u8, self.size) }
    }
}

fn malformed(why: String) -> PyErr {
    PyValueError::new_err(format!("a malformed Arrow binary array: {why}"))
}

/// A pyarrow binary (int32 offsets) or large_binary (int64 offsets) array, its cells borrowed.
#[pyclass(frozen, module = "cqlsh_ext_native")]
pub struct ArrowBinary {
    /// The array: its buffers stay alive while it is held.
    #[pyo3(get)]
    array: Py<PyAny>,
    validity: Span,
    offsets: Span,
    data: Span,
    /// 4 (binary) or 8 (large_binary): an offset's width.
    width: usize,
    offset: usize,
    length: usize,
}

#[pymethods]
impl ArrowBinary {
    /// ValueError (one line) for an array of another type or whose buffers do not hold its
    /// cells (a bitmap or offsets too short, offsets decreasing or past the data).
    #[new]
    fn new(array: Bound<'_, PyAny>) -> PyResult<Self> {
        let py = array.py();
        let pyarrow = py.import("pyarrow")?;
        if !array.is_instance(&pyarrow.getattr("Array")?)? {
            return Err(PyValueError::new_err("ArrowBinary: not a pyarrow Array"));
        }
        let kind = array.getattr("type")?;
        let width = if kind.eq(pyarrow.call_method0("binary")?)? {
            4
        } else if kind.eq(pyarrow.call_method0("large_binary")?)? {
            8
        } else {
            return Err(PyValueError::new_err(format!(
                "ArrowBinary: an array of {}, not binary or large_binary",
                kind.str()?
            )));
        };
        let buffers: Vec<Bound<'_, PyAny>> = array.call_method0("buffers")?.extract()?;
        if buffers.len() != 3 {
            return Err(malformed(format!("{} buffers, not 3", buffers.len())));
        }
        let buffer_type = pyarrow.getattr("Buffer")?;
        let made = ArrowBinary {
            validity: Span::of(&buffers[0], &buffer_type, "validity bitmap")?,
            offsets: Span::of(&buffers[1], &buffer_type, "offsets")?,
            data: Span::of(&buffers[2], &buffer_type, "data")?,
            width,
            offset: array.getattr("offset")?.extract()?,
            length: array.len()?,
            array: array.unbind(),
        };
        made.cells()?; // every offset checked once here; cells() checks them again as it reads
        Ok(made)
    }

    fn __len__(&self) -> usize {
        self.length
    }
}

impl ArrowBinary {
    /// The array's length: one cell a row.
    pub fn row_count(&self) -> usize {
        self.length
    }

    /// The cells (None for null), borrowed from the data buffer; ValueError (one line) where
    /// the buffers do not hold them.
    pub fn cells(&self) -> PyResult<Vec<CellRef<'_>>> {
        let (offset, length, width) = (self.offset, self.length, self.width);
        if length == 0 {
            return Ok(Vec::new());
        }
        let end = offset.checked_add(length).ok_or_else(|| malformed("an offset past memory".to_owned()))?;
        let validity = self.validity.bytes(self);
        if self.validity.size > 0 && validity.len() < end.div_ceil(8) {
            return Err(malformed(format!("a validity bitmap of {} bytes for {end} slots", validity.len())));
        }
        let offsets = self.offsets.bytes(self);
        let needed =
            (end + 1).checked_mul(width).ok_or_else(|| malformed("offsets past memory".to_owned()))?;
        if offsets.len() < needed {
            return Err(malformed(format!("{} bytes of offsets for {} slots", offsets.len(), end)));
        }
        let data = self.data.bytes(self);
        let at = |slot: usize| -> Result<usize, PyErr> {
            let raw = &offsets[slot * width..(slot + 1) * width];
            let value = if width == 4 {
                i64::from(i32::from_ne_bytes([raw[0], raw[1], raw[2], raw[3]]))
            } else {
                i64::from_ne_bytes([raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7]])
            };
            usize::try_from(value).map_err(|_| malformed(format!("offset {slot} is negative ({value})")))
        };
        let mut cells = Vec::with_capacity(length);
        let mut start = at(offset)?;
        for slot in offset..end {
            let stop = at(slot + 1)?;
            if stop < start {
                return Err(malformed(format!(
                    "offset {} ({stop}) is below offset {slot} ({start})",
                    slot + 1
                )));
            }
            if stop > data.len() {
                return Err(malformed(format!(
                    "offset {} ({stop}) is past the data's {} bytes",
                    slot + 1,
                    data.len()
                )));
            }
            let valid = self.validity.size == 0 || validity[slot / 8] >> (slot % 8) & 1 == 1;
            cells.push(if valid { Some(&data[start..stop]) } else { None });
            start = stop;
        }
        Ok(cells)
    }

    /// cells(), counted as read by one of the three calls (arrow_cells()).
    pub fn read(&self) -> PyResult<Vec<CellRef<'_>>> {
        let cells = self.cells()?;
        ARROW_CELLS.fetch_add(cells.len() as u64, Ordering::Relaxed);
        Ok(cells)
    }
}

/// A place's column whose cells the core reads from whole bytes, no Python value made: a
/// RowsPage's column (its body kept alive here), or an ArrowBinary.
pub enum Whole<'py> {
    Page(Bound<'py, RowsPage>, usize, Bound<'py, PyBytes>),
    Arrow(Bound<'py, ArrowBinary>),
}

impl<'py> Whole<'py> {
    /// A place's source and column read whole: a RowsPage with a column, an ArrowBinary with
    /// none (it is the column); None for values, or rows a sequence of tuples.
    pub fn of(source: &Bound<'py, PyAny>, column: Option<usize>) -> PyResult<Option<Self>> {
        if let Ok(arrow) = source.cast::<ArrowBinary>() {
            if column.is_some() {
                return Err(PyValueError::new_err(
                    "an ArrowBinary is the place's column: name no column of it",
                ));
            }
            return Ok(Some(Whole::Arrow(arrow.clone())));
        }
        match (column, source.cast::<RowsPage>()) {
            (Some(i), Ok(page)) => {
                let body = page.get().body().bind(source.py()).clone();
                Ok(Some(Whole::Page(page.clone(), i, body)))
            }
            _ => Ok(None),
        }
    }

    /// The rows the source holds.
    pub fn row_count(&self) -> usize {
        match self {
            Whole::Page(page, _, _) => page.get().row_count(),
            Whole::Arrow(arrow) => arrow.get().row_count(),
        }
    }

    /// The column's cells, one a row, borrowed; ValueError (one line) for a malformed source.
    pub fn cells(&self) -> PyResult<Vec<CellRef<'_>>> {
        match self {
            Whole::Page(page, i, body) => {
                Ok(page.get().cells(body.as_bytes(), &[*i])?.pop().unwrap_or_default())
            }
            Whole::Arrow(arrow) => arrow.get().read(),
        }
    }
}
