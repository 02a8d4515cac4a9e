"""Raw CSV files for the ingestion tests: `write_csv` writes a header and rows as the csv module
quotes them (multi-line and quoted cells included), making the folders on the way."""

import csv
from pathlib import Path


def write_csv(path: Path, header, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(rows)
    return path
