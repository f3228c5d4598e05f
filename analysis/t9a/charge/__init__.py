"""The 9th Age charge (docs/t9a.md §3–§5): the scenario schema and rule tables (``model``), the count layout and
kernel arrays (``layout``), the exact charge-roll tables (``exact``), the reference engine (``reference``) and the
result (``results``).  The system's public face is :mod:`wargame_odds.analysis.t9a`."""
