"""The 9th Age close combat after the charge (docs/t9a.md, "Close combat"): the ``[combat]`` schema and rule
tables (``model``), the reference engine (``reference``), the exact Markov chain (``exact``), the kernel's count
slots and arrays (``layout``) and the ``melee`` part of a result (``results``)."""
