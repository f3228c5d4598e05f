"""The core's bottom layer, intake: reading, validating, bounding and naming user input (scenario files and their
models, caps, run limits, user text, errors, the shipped examples by name, API arguments, the field-path grammar,
and the registry of rule systems a scenario names, :mod:`.systems`, with the ``System`` protocol each implements).
It imports nothing of the layers above it (run, output); the registry imports a system's package by its name, on
first use."""
