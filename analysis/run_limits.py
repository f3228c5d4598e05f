"""The bounds of the run arguments every command and ``simulate`` takes (README, "Limits and safety").

Kept apart from :mod:`analysis.bounds` (the model field types, which need pydantic) so that the
command line can state them in ``--help`` without loading anything but click.
"""
MAX_TRIALS = 10**10  # per run (and per point of a report)
MAX_SEED = 2**53  # one range for the command line, the API and report definitions (TOML integers stop at 2**53)
MAX_THREADS = 1024
#: Trials of an Epic command-line run on the pure-Python reference engine when ``--trials`` is not given (the
#: kernel's default of a million would take the reference engine about half an hour).
REFERENCE_DEFAULT_TRIALS = 20_000
