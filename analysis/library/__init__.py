"""The NetEA unit library (Tournament Pack data, ISC licence): units, weapons, army lists and formations."""

PREFIX = "netea:"  # how a scenario names a library unit, formation or army list
