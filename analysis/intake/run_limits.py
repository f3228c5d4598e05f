"""The bounds of the run arguments every command and ``simulate`` takes (README, "Limits and safety").

Kept apart from :mod:`wargame_odds.analysis.intake.bounds` (the model field types, which need pydantic) so that the
command line can state them in ``--help`` without loading anything but click.
"""
MAX_TRIALS = 10**10  # per run (and per point of a report)
#: One range for the command line, the API, report definitions and the app: 0 to 2⁵³ − 1, the largest whole number
#: that TOML, JSON and a browser's numbers all hold exactly.
MAX_SEED = 2**53 - 1
SEED_RANGE = "0 to 2⁵³ − 1 (9,007,199,254,740,991)"
MAX_THREADS = 1024
#: Trials of an Epic command-line run on the pure-Python reference engine when ``--trials`` is not given (the
#: kernel's default of a million would take the reference engine about half an hour).
REFERENCE_DEFAULT_TRIALS = 20_000
