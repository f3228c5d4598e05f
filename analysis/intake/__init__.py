"""The core's bottom layer, intake: reading, validating, bounding and naming user input (scenario files and their
models, caps, run limits, user text, errors, the shipped examples by name, API arguments, the field-path grammar).
It imports nothing of the layers above it (run, output)."""
