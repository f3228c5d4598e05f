"""Numba kernels: arrays in, counts out.  No pandas, no I/O (see DEVELOPERS.md)."""
