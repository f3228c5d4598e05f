"""The core's run layer: the runner (chunked, parallel, reproducible Monte Carlo), its count layouts, the executors
of report cells, Numba's cache guard and the collector's start-up pause."""
