"""Import published benchmark reports (markdown) into the tidy table.

Recognised table formats (the five seed reports use all of them):
  diff-table     | Size | Metric | <libzmq> | <zlink> | Diff (%) |, per pattern/transport,
                 under per-configuration or per-IO-thread sections; "(inv)" latency diffs.
  results-block  fixed-width blocks in code fences:
                 Transport | Message Size | Message Count | Time | Throughput | Bandwidth
  analysis       | Test Case | <candidate> | libzmq | Winner | Improvement |
  mean-std       | Pattern | libzmq (msg/s) | zlink (msg/s) | Difference | libzmq (us) | ... |
                 with "mean +/- std" cells, under "### <N>-byte Messages"
  cv             | Pattern | Size | Library | Throughput CV | Latency CV |
Summary tables (win counts, categories) hold claims, not measurements: they are
recognised and listed in ImportResult.skipped, never silently dropped.

Every row keeps its provenance: file, section path, table kind. Published figures are
one number per cell (a median or mean of n runs), so repetition is 0, n_summarized is n,
and `spread` holds the std where the report gives one.

Rounded figures: "0.06 M/s" has one significant digit, but the Diff column beside it has
four. The candidate's `value_precise` is rebuilt from the reference figure and the
published Diff, so comparisons between configurations keep the report's precision.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from testbed.bench.patterns import PATTERNS, TRANSPORTS
from testbed.records import schema

MIB_TO_MB = (1 << 20) / 1e6  # the fixed-width blocks' "MB/s" is 2^20 bytes: 64 B x msg/s proves it

# Reports spell patterns freely ("Router-Router", "DEALER/ROUTER"): letters only, upper case.
_PATTERNS = {re.sub(r"[^A-Z]", "", p): p for p in PATTERNS}
_TRANSPORTS = TRANSPORTS
_MULT = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9}
_NUM = r"[-+]?\d[\d,]*(?:\.\d+)?|[-+]?\.\d+"


class ImportError_(ValueError):
    pass


@dataclass
class ImportResult:
    frame: pd.DataFrame
    notes: list[str] = field(default_factory=list)     # facts about how the data was produced
    skipped: list[str] = field(default_factory=list)   # tables recognised as claims, not data


def norm_pattern(text: str) -> str | None:
    key = re.sub(r"[^A-Z]", "", text.upper())
    return _PATTERNS.get(key)


def norm_library(text: str) -> str:
    t = re.sub(r"\(.*?\)", "", text).strip().strip("*").strip()
    low = t.lower()
    if "libzmq" in low:
        return "libzmq-4.3.5"
    if low.startswith("zlink"):
        return "zlink"
    return t


def parse_size(text: str) -> int | None:
    m = re.search(r"(\d+)\s*-?\s*(KB|KiB|K|MB|MiB|B|bytes?|byte)\b", text, re.I)
    if not m:
        return None
    n, unit = int(m.group(1)), m.group(2).lower()
    return n * (1024 if unit in ("kb", "kib", "k") else 1 << 20 if unit in ("mb", "mib") else 1)


def parse_quantity(text: str) -> tuple[float, str] | None:
    """'5.65 M/s' -> (5.65e6, 'msg/s'); '853K msg/s' -> (853e3, 'msg/s'); '0.20 us' ->
    (0.2, 'us'); '305.42 MB/s' -> (305.42, 'MB/s'); '+11.62%' -> (11.62, '%')."""
    m = re.search(rf"({_NUM})\s*(?:(MB/s)|([KMG]?)\s*(msg/s|/s|us|μs|µs|ms|%)?)", text.replace("**", ""))
    if not m:
        return None
    value = float(m.group(1).replace(",", ""))
    if m.group(2):
        return value, "MB/s"
    mult, unit = m.group(3) or "", m.group(4) or ""
    if unit in ("msg/s", "/s"):
        return value * _MULT[mult], "msg/s"
    if unit in ("us", "μs", "µs"):
        return value, "us"
    if unit == "%":
        return value, "%"
    return value * _MULT[mult], unit


def parse_mean_std(text: str) -> tuple[float, float] | None:
    m = re.search(rf"({_NUM})\s*±\s*({_NUM})", text)
    if not m:
        return None
    return float(m.group(1).replace(",", "")), float(m.group(2).replace(",", ""))


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _runs(text: str) -> int:
    found = [int(x) for x in re.findall(r"runs=(\d+)", text)]
    found += [int(x) for x in re.findall(r"Iterations:\*\*\s*(\d+)", text)]
    for m in re.finditer(r"Testing \w+ \| \d+B: ((?:\d+ )+)Done", text):
        found.append(len(m.group(1).split()))
    return max(found) if found else 1


class _Reader:
    """Walks the markdown once, tracking the section context each table sits in."""

    def __init__(self, path: Path):
        self.path = path
        self.text = path.read_text(encoding="utf-8")
        self.lines = self.text.splitlines()
        self.n_runs = _runs(self.text)
        self.rows: list[dict] = []
        self.notes: list[str] = []
        self.skipped: list[str] = []
        self.file_params: dict[str, str] = {}
        self.file_io: int | None = None
        self.h2 = self.h3 = ""
        self.pattern = None
        self.transport = None
        self.config = "default"
        self.config_params: dict[str, str] = {}
        self.io_threads: int | None = None
        self.block_library = None
        self.heading_size = None

    # -- context ----------------------------------------------------------------------
    def heading(self, line: str) -> None:
        level = len(line) - len(line.lstrip("#"))
        title = line.lstrip("#").strip()
        if level <= 2:
            self.h2, self.h3 = title, ""
            self.transport = None
            if m := re.match(r"PATTERN:\s*(\S+)", title):
                self.pattern = norm_pattern(m.group(1)) or m.group(1)
                self.config, self.config_params = self._base_config()
            elif m := re.match(r"IO_THREADS=(\d+)", title):
                self.io_threads = int(m.group(1))
                self.config, self.config_params = f"io_threads={self.io_threads}", {}
            elif m := re.match(r"(.+?) Pattern Comparison", title):
                self.pattern = norm_pattern(m.group(1))
            elif norm_pattern(title):
                self.pattern = norm_pattern(title)
                self.config, self.config_params = "default", {}
            return
        self.h3 = title
        if m := re.match(r"Transport:\s*(\w+)", title):
            self.transport = m.group(1).lower()
        elif title.lower().startswith("baseline"):
            self.config, self.config_params = "baseline", {}
        elif assigns := re.findall(r"`([A-Z][A-Z0-9_]+)=([^`\s]+)`", title):
            self.config_params = dict(assigns)
            batch = [int(v) for k, v in assigns if "BATCH" in k and v.isdigit()]
            self.config = schema.kib(batch[0]) if batch else title.split("(")[0].strip()
        elif m := re.match(r"(\d+)-byte Messages", title):
            self.heading_size = int(m.group(1))
        elif m := re.match(r"(.+?)\s+(\S+)\s+Results$", title):
            self.block_library = norm_library(m.group(1))

    def _base_config(self):
        if self.io_threads is not None:
            return f"io_threads={self.io_threads}", {}
        return "default", {}

    def setup_line(self, line: str) -> None:
        for key, value in re.findall(r"\b([A-Z][A-Z0-9_]+)=([\w.,]+)", line):
            if key == "BENCH_IO_THREADS" and value.isdigit():
                self.file_io = int(value)
            elif key.startswith("ZMQ_"):
                self.file_params[key] = value

    def section(self) -> str:
        parts = [p for p in (self.h2, self.h3) if p]
        return " / ".join(parts)

    # -- rows -------------------------------------------------------------------------
    def add(self, table: str, library: str, pattern, transport, size, metric, value, unit,
            spread=np.nan, value_precise=np.nan, config=None, params=None, n=None, section=None):
        config = self.config if config is None else config
        params = {**self.file_params, **(self.config_params if params is None else params)}
        io = self.io_threads if self.io_threads is not None else self.file_io
        ident = f"{self.path.name}|{table}|{pattern}|{transport}|{size}|{config}|{io}|{library}"
        row = {"run_id": self.path.stem, "experiment": "published",
               "cell_id": hashlib.sha256(ident.encode()).hexdigest()[:16], "repetition": 0,
               "library": library, "pattern": pattern or "", "transport": transport or "",
               "msg_size": size, "io_threads": io, "config": config, "placement": "", "process_model": "",
               "link": "", "stop_reason": "", "status": "ok",
               "metric": metric, "value": value, "unit": unit, "source": f"published:{self.path.name}",
               "provenance": f"{self.path.name} §{section or self.section()}", "table": table,
               "spread": spread, "n_summarized": self.n_runs if n is None else n,
               "value_precise": value_precise}
        row.update({schema.PARAM_PREFIX + k: v for k, v in params.items()})
        self.rows.append(row)

    # -- tables -----------------------------------------------------------------------
    def table(self, rows: list[list[str]], start: int) -> None:
        header = [h.lower() for h in rows[0]]
        body = [r for r in rows[1:] if not all(set(c) <= set("-: ") for c in r)]
        if header[:2] == ["size", "metric"]:
            self.diff_table(rows[0], body)
        elif header[0] == "test case" and "improvement" in header:
            self.analysis_table(rows[0], body)
        elif header[0] == "pattern" and any("±" in c for r in body for c in r):
            self.mean_std_table(rows[0], body)
        elif header[:3] == ["pattern", "size", "library"]:
            self.cv_table(body)
        else:
            self.skipped.append(f"line {start + 1}: table '{' | '.join(rows[0])}' "
                                f"(summary claims, not per-cell measurements)")

    def diff_table(self, header, body):
        ref, cand = norm_library(header[2]), norm_library(header[3])
        if self.pattern is None or self.transport is None and not self.h3:
            raise ImportError_(f"{self.path.name}: diff table outside a pattern section ({self.section()!r})")
        transport = self.transport or self._transport_from_setup()
        size = None
        for r in body:
            if len(r) < 5:
                continue
            size = parse_size(r[0]) if r[0] else size
            kind = r[1].lower()
            a, b, d = parse_quantity(r[2]), parse_quantity(r[3]), parse_quantity(r[4])
            if size is None or not (a and b):
                raise ImportError_(
                    f"{self.path.name}: cannot read row {' | '.join(r)!r} in {self.section()!r}"
                )
            if kind.startswith("throughput"):
                metric, precise = "throughput_msgs", a[0] * (1 + d[0] / 100) if d else np.nan
            elif kind.startswith("latency"):
                inv = "(inv)" in r[4]
                metric = "lat_mean_us"
                precise = (a[0] * (1 - d[0] / 100) if inv else a[0] * (1 + d[0] / 100)) if d else np.nan
            else:
                raise ImportError_(
                    f"{self.path.name}: unknown metric {r[1]!r}; expected Throughput or Latency"
                )
            self.add("diff-table", ref, self.pattern, transport, size, metric, a[0], a[1])
            self.add(
                "diff-table", cand, self.pattern, transport, size, metric, b[0], b[1], value_precise=precise
            )

    def _transport_from_setup(self):
        m = re.search(r"BENCH_TRANSPORTS=(\w+)", self.text) or re.search(
            r"\*\*Transport:\*\*\s*(\w+)", self.text
        )
        return m.group(1).lower() if m else ""

    def analysis_table(self, header, body):
        cand, ref = norm_library(header[1]), norm_library(header[2])
        for r in body:
            case = r[0].replace("*", "")
            m = re.match(r"(\w+)\s+(\d+\s*\w+)", case)
            if not m:
                raise ImportError_(f"{self.path.name}: cannot read test case {r[0]!r}")
            transport, size = m.group(1).lower(), parse_size(m.group(2))
            c, f, imp = parse_quantity(r[1]), parse_quantity(r[2]), parse_quantity(r[4])
            precise = f[0] * (1 + imp[0] / 100) if imp else np.nan
            self.add("analysis", ref, self.pattern, transport, size, "throughput_msgs", f[0], f[1], n=1)
            self.add("analysis", cand, self.pattern, transport, size, "throughput_msgs", c[0], c[1],
                     value_precise=precise, n=1)

    def mean_std_table(self, header, body):
        # Pattern | libA (msg/s) | libB (msg/s) | Difference | libA (us) | libB (us) | Difference
        libs = [(i, norm_library(h)) for i, h in enumerate(header) if "(" in h]
        transport = self._transport_from_setup() or "tcp"
        for r in body:
            pattern = norm_pattern(r[0].replace("*", ""))
            for i, lib in libs:
                ms = parse_mean_std(r[i])
                if ms is None:
                    raise ImportError_(f"{self.path.name}: expected 'mean ± std' in {r[i]!r}")
                unit_is_time = re.search(r"\((μs|µs|us)\)", header[i])
                metric, unit = ("lat_mean_us", "us") if unit_is_time else ("throughput_msgs", "msg/s")
                self.add("mean-std", lib, pattern, transport, self.heading_size, metric, ms[0], unit,
                         spread=ms[1])

    def cv_table(self, body):
        transport = self._transport_from_setup() or "tcp"
        for r in body:
            pattern, size, lib = norm_pattern(r[0]), int(r[1]), norm_library(r[2])
            for metric, cell in (("cv_throughput_pct", r[3]), ("cv_latency_pct", r[4])):
                q = parse_quantity(cell)
                self.add(
                    "cv", lib, pattern, transport, size, metric, q[0], "%", section=self.h2 + " / " + self.h3
                )

    def block(self, lines: list[str], start: int) -> None:
        """A fixed-width results block; the library comes from the heading above it."""
        lib = self.block_library
        for line in lines:
            parts = [p.strip() for p in line.split("|")]
            if len(parts) < 6 or not parse_size(parts[1]) or "msgs" not in parts[2]:
                continue
            words = parts[0].split()
            transport = words[-1].lower()
            if transport not in _TRANSPORTS:
                raise ImportError_(f"{self.path.name}:{start}: unknown transport {words[-1]!r}")
            size = parse_size(parts[1])
            thr, bw = parse_quantity(parts[4]), parse_quantity(parts[5])
            self.add(
                "results-block", lib, self.pattern, transport, size, "throughput_msgs", thr[0], "msg/s", n=1
            )
            self.add("results-block", lib, self.pattern, transport, size, "throughput_mbps",
                     bw[0] * MIB_TO_MB, "MB/s", n=1)

    # -- driver -----------------------------------------------------------------------
    def read(self) -> ImportResult:
        i, n = 0, len(self.lines)
        while i < n:
            line = self.lines[i]
            if line.startswith("#"):
                self.heading(line)
            elif line.startswith("```"):
                j = i + 1
                while j < n and not self.lines[j].startswith("```"):
                    j += 1
                body = self.lines[i + 1:j]
                if any("Message Size" in b and "Throughput" in b for b in body):
                    self.block(body, i + 1)
                i = j
            elif line.startswith("|"):
                j = i
                while j < n and self.lines[j].startswith("|"):
                    j += 1
                self.table([_cells(line) for line in self.lines[i:j]], i)
                i = j - 1
            elif self.h2.lower() in ("setup", "test configuration"):
                self.setup_line(line)
            i += 1
        self.observe()
        if not self.rows:
            raise ImportError_(f"{self.path.name}: no recognised result table")
        return ImportResult(schema.conform(pd.DataFrame(self.rows)), self.notes, self.skipped)

    def observe(self) -> None:
        """Facts about the data that a reader must know before trusting a comparison."""
        if "Using cached baseline" in self.text:
            self.notes.append(
                "libzmq was not re-measured: the report says 'Using cached baseline', so its "
                "figures come from an earlier run, possibly of a different build or machine state."
            )
        if self.n_runs > 1:
            self.notes.append(
                f"Each figure summarises {self.n_runs} runs; the individual runs are not published."
            )
        else:
            self.notes.append("Each figure is a single run, as far as the report says.")


def import_report(path: Path) -> ImportResult:
    path = Path(path)
    if not path.is_file():
        raise ImportError_(f"{path}: no such published report")
    return _Reader(path).read()
