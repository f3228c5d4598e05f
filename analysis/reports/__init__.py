"""Batch reports: ``reports/NAME.toml`` → ``reports/out/NAME/index.html`` with CSV and Parquet tables.

``load_report(path)`` validates a definition, ``build(path, out=None, executor=None)`` computes
(resuming from stored cells) and writes the report; executors in :mod:`.executor` run the cells
here or on a Dask cluster with identical numbers.
"""
from .build import build
from .definition import cell_key, load_report
from ..run.executor import DaskExecutor, LocalExecutor, make_executor

__all__ = ["build", "load_report", "cell_key", "LocalExecutor", "DaskExecutor", "make_executor"]
