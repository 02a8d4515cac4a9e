"""KASER: knowledge-aligned student error simulator for open-ended coding tasks.

A reimplementation of Duan, Fernandez and Lan (arXiv 2601.06633) as a DVC pipeline:
prepare -> annotate -> cluster -> knowledge -> sft -> grpo -> generate -> evaluate -> report.
Run the whole thing with `make repro`; see the README for the stages and their outputs.
"""

__version__ = "0.1.0"


class InputError(ValueError):
    """Bad input a user can fix: names the file, and where known the column and row.

    The CLI prints these as one line (no traceback) and exits with status 2.

    >>> str(InputError("missing column", file="x.csv", column="Score", row=3))
    'x.csv: column Score, row 3: missing column'
    >>> str(InputError("no such folder", file="raw/"))
    'raw/: no such folder'
    """

    def __init__(self, message: str, *, file=None, column=None, row=None):
        self.file, self.column, self.row = file, column, row
        place = ", ".join(p for p in (
            f"column {column}" if column is not None else "",
            f"row {row}" if row is not None else "",
        ) if p)
        prefix = ": ".join(str(p) for p in (file, place) if p not in (None, ""))
        super().__init__(f"{prefix}: {message}" if prefix else message)


def exit_on_error(name: str, call) -> None:
    """Run `call()` as the command `name` (the `kaser` CLI and every stage script go through
    here): a kaser.InputError becomes one line `<name>: error: ...` on stderr and exit status 2,
    Ctrl-C one line and status 130; nothing already written is lost (caches are append-only)."""
    import sys
    try:
        call()
    except InputError as err:
        print(f"{name}: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        print(f"{name}: interrupted; run the same command again to resume (LLM answers received "
              "so far are cached)", file=sys.stderr)
        raise SystemExit(130) from None
