"""Foundations of optaccept: validation, stable arithmetic, sampling, statistics, display,
limits and the lazy loading of heavy sub-packages.  Private: imported by every package,
importing none of them."""
