"""The core's output layer: results, estimates with their intervals, labels, plots, the shared parts of headlines
and atomic file writes."""
