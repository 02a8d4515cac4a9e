"""Strict checks of a raw release file before it is read: what no table can show afterwards.

    header = check_csv(Path("raw/cw/Data/MainTable.csv"))    # kaser.InputError, else the header
    (kaser.data.ingest calls it on every CSV of a CodeWorkout or FalconCode release before polars
    reads it; a reader of another release format can do the same)

One streaming pass with Python's csv module (strict quoting) stops at the first of:
- bytes that are not UTF-8 (polars would replace them silently);
- a NUL byte in a cell;
- a cell longer than MAX_CELL_CHARS (kaser.data.contracts);
- a header that names a column twice (polars would rename the second one);
- a record with more or fewer cells than the header (polars fills short ones with nulls);
- a quote that is never closed, or text after a closing quote (unbalanced quotes);
- a record that ends in a lone CR (old Mac line ends): Python's csv module ends a record there,
  polars does not (it read such a file as a header and no rows), so the file is refused, not
  read two ways. A lone CR inside a quoted cell (CodeWorkout code holds them) is fine.
Each is a kaser.InputError naming the file, the column where there is one, and the row, counted
as kaser.data.ingest counts them: from 1 at the first data row, one per record (a blank line is an
empty record, as polars reads it). Parser errors also give the line of the file where the record
starts, since quoted code spans lines.
"""

from __future__ import annotations

import codecs
import csv
import re
from collections.abc import Sequence
from pathlib import Path

from kaser import InputError
from kaser.data.contracts import MAX_CELL_CHARS

# Python's csv module refuses a cell longer than its field limit; we set it this many times the
# cap, so a cell somewhat over the cap is named with its column, and a huge one (where only the
# row is known) is never held in memory whole.
PARSER_LIMIT_FACTOR = 16
_NOT_UTF8 = re.compile("[\udc80-\udcff]")   # how errors="surrogateescape" decodes a bad byte
_LONE_CR = re.compile(rb"\r(?!\n)")
_QUOTE_OR_LINE_END = re.compile(rb'"|\r\n|\r|\n')


def clean_header(names: Sequence[str]) -> list[str]:
    """Column names as ingestion uses them: spaces and a byte-order mark stripped."""
    return [str(name).strip().lstrip("\ufeff") for name in names]


def check_header(names: Sequence[str], file) -> None:
    """InputError for a column name that appears twice.

    >>> check_header(["id", "code", "id"], "x.csv")
    Traceback (most recent call last):
    kaser.InputError: x.csv: column id: appears twice in the header (columns 1 and 3)
    """
    first: dict[str, int] = {}
    for position, name in enumerate(names, start=1):
        if name in first:
            raise InputError(f"appears twice in the header (columns {first[name]} and {position})",
                             file=file, column=name if name else '""')
        first[name] = position


def check_cells(cells: Sequence[str], names: Sequence[str], file, row: int | None,
                max_cell_chars: int = MAX_CELL_CHARS) -> None:
    """InputError for the first cell with bytes that are not UTF-8, a NUL byte, or more than
    `max_cell_chars` characters; `row` None means the header.

    >>> check_cells(["7", "int f() {\\x00}"], ["id", "Code"], "x.csv", 4)
    Traceback (most recent call last):
    kaser.InputError: x.csv: column Code, row 4: NUL byte at character 10 of the cell
    """
    joined = "".join(cells)
    if len(joined) <= max_cell_chars and "\x00" not in joined and not _NOT_UTF8.search(joined):
        return   # the common case, checked once per record
    where = "" if row is not None else " of the header"
    for position, (name, cell) in enumerate(zip(names, cells), start=1):
        column = name if row is not None else f"#{position}"
        bad = _NOT_UTF8.search(cell)
        if bad:
            raise InputError(f"not UTF-8: byte 0x{ord(bad.group()) - 0xDC00:02x} at character "
                             f"{bad.start() + 1} of the cell{where}; save the file as UTF-8",
                             file=file, column=column, row=row)
        if "\x00" in cell:
            raise InputError(f"NUL byte at character {cell.index(chr(0)) + 1} of the cell{where}",
                             file=file, column=column, row=row)
        if len(cell) > max_cell_chars:
            raise InputError(f"cell of {len(cell):,} characters{where} is over the cap of "
                             f"{max_cell_chars:,} (kaser.data.contracts.MAX_CELL_CHARS); remove "
                             "the row or raise the cap", file=file, column=column, row=row)


def _plain_utf8(path: Path) -> bool:
    """Whether the whole file is UTF-8 without a NUL byte (one fast binary pass; then the
    records need only their lengths checked)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 22):
            if b"\x00" in chunk:
                return False
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError:
                return False
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _has_lone_cr(path: Path) -> bool:
    """Whether the file holds a CR not followed by LF anywhere (one fast binary pass)."""
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 22):
            if chunk.endswith(b"\r"):
                chunk += handle.read(1)   # is the next byte its LF?
            if _LONE_CR.search(chunk):
                return True
    return False


def _first_lone_cr_line_end(path: Path) -> tuple[int | None, int] | None:
    """(row, line) of the first record that ends in a lone CR outside quotes, row None for the
    header; None when there is none. Quotes toggle a quoted cell (a doubled quote toggles twice)."""
    if not _has_lone_cr(path):
        return None
    quoted, row, line = False, 0, 1
    for match in _QUOTE_OR_LINE_END.finditer(path.read_bytes()):
        token = match.group()
        if token == b'"':
            quoted = not quoted
            continue
        if not quoted:
            if token == b"\r":
                return row or None, line
            row += 1
        line += 1
    return None


def _parser_message(error: csv.Error, max_cell_chars: int, line: int) -> str:
    text = str(error)
    if "unexpected end of data" in text:
        what = "a quoted cell is never closed (it runs to the end of the file)"
    elif "expected after" in text:
        what = ("unbalanced quotes: text follows a closing quote (a quote inside a quoted cell "
                "must be doubled)")
    elif "field larger than field limit" in text:
        what = (f"a cell longer than {PARSER_LIMIT_FACTOR * max_cell_chars:,} characters, far "
                f"over the cap of {max_cell_chars:,} (kaser.data.contracts.MAX_CELL_CHARS)")
    else:
        what = f"cannot parse as CSV: {text}"
    return f"{what}; the record starts on line {line} of the file"


def check_csv(path, max_cell_chars: int = MAX_CELL_CHARS) -> list[str]:
    """The cleaned header of a CSV file that passes every check above; else InputError."""
    path = Path(path)
    if not path.is_file():
        raise InputError("not found", file=path)
    previous_limit = csv.field_size_limit()
    csv.field_size_limit(PARSER_LIMIT_FACTOR * max_cell_chars)
    row, line = None, 1   # the record being read (None: the header) and its first line
    try:
        lone_cr = _first_lone_cr_line_end(path)
        if lone_cr is not None:
            row, line = lone_cr
            raise InputError(f"line {line} of the file ends in a lone CR (old Mac line ends), which "
                             "the table reader does not take for a line end; save the file with LF "
                             "or CRLF line ends", file=path, row=row)
        suspect = not _plain_utf8(path)   # else only cell lengths can be wrong
        with path.open(encoding="utf-8", errors="surrogateescape", newline="") as handle:
            records = csv.reader(handle, strict=True)
            header = next(records, None)
            if not header:
                raise InputError("no header on the first line", file=path)
            header = clean_header(header)
            check_cells(header, header, path, None, max_cell_chars)
            check_header(header, path)
            row, line = 1, records.line_num + 1
            for cells in records:
                if cells and len(cells) != len(header):
                    raise InputError(f"{len(cells)} cells, but the header has {len(header)} "
                                     f"columns; the record starts on line {line} of the file",
                                     file=path, row=row)
                if suspect or sum(map(len, cells)) > max_cell_chars:
                    check_cells(cells, header, path, row, max_cell_chars)
                row, line = row + 1, records.line_num + 1
    except csv.Error as error:
        raise InputError(_parser_message(error, max_cell_chars, line), file=path,
                         row=row) from None
    except OSError as error:
        raise InputError(f"cannot read: {error.strerror or error}", file=path) from None
    finally:
        csv.field_size_limit(previous_limit)
    return header
