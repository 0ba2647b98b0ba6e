"""The continual-release mechanisms over update streams: Qiu-Yi's private partitioning and fully-dynamic
mechanism (``partition``, ``segmented``, ``fully_dynamic``), the baselines and the continual count
(``baselines``), the signed release (``net_change``), the per-query-set choice (``auto``) and the histogram
consistency post-processing (``consistency``)."""
