"""The Epic Armageddon kernel, in layers (kernels/README.md draws them and maps each rule clause to its function).

- layout: :mod:`.layout`, :mod:`.turn_layout` (the tables' columns and the lanes' state rows);
- lane primitives: :mod:`.access`, :mod:`.dice`, :mod:`.units`, :mod:`.saves`, :mod:`.damage`,
  :mod:`.allocation`, :mod:`.breaks`;
- rule steps: :mod:`.assault`, :mod:`.result`, :mod:`.consequences`, :mod:`.end_phase`, :mod:`.shooting`,
  :mod:`.turn`;
- driver: :mod:`.block` (blocks, RNG streams, the round loop) and :mod:`.record` (counts).

Each module imports only those before it in this list: no import cycle.
"""
