"""`-S section.key=value` settings of the benchmarks that train or sample, read the way DVC reads
params.yaml (YAML: `1e-4` is a number), so one command line behaves as `dvc exp run -S` would."""

from __future__ import annotations

from kaser.config import load_settings


def overrides(script: str, settings: list[str], sections: tuple[str, ...]) -> dict[str, dict[str, object]]:
    """`settings` as {section: {key: value}}, with every one of `sections` present (maybe empty);
    a setting outside `sections`, or without `.` or `=`, stops `script` with one line naming it."""
    found: dict[str, dict[str, object]] = {section: {} for section in sections}
    for setting in settings:
        key, sep, value = setting.partition("=")
        section, dot, name = key.partition(".")
        if not sep or not dot or not name or section not in found:
            wanted = " or ".join(f"{s}.<key>=<value>" for s in sections)
            raise SystemExit(f"{script}: -S {setting!r}: give {wanted}")
        found[section][name] = load_settings(value)
    return found
