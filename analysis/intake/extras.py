"""Optional dependencies: Dask (``--workers``, ``--scheduler``) and pyarrow (a report's Parquet tables) are extras of
the package (``pip install 'wargame-odds[dask]'``, ``[parquet]``).  A command that needs one that is missing stops with
one line naming the extra, before anything runs."""
from __future__ import annotations

import importlib

from .errors import UserError

#: extra -> (the module it provides, what needs it)
EXTRAS = {"dask": ("distributed", "to run cells on a Dask cluster (--workers, --scheduler)"),
          "parquet": ("pyarrow", "to write a report's Parquet tables")}


def require(extra: str, source: str) -> None:
    """Import the module of ``extra`` or raise one :class:`UserError` (``source``: what asked for it) saying
    how to install it."""
    module, what = EXTRAS[extra]
    try:
        importlib.import_module(module)
    except ImportError:
        raise UserError(source, None, f"{what}, install the {extra} extra: pip install 'wargame-odds[{extra}]' "
                                      f"({module} is not installed)") from None
