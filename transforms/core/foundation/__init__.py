"""What every mechanism stands on: keyed noise (``noise``), privacy accounting (``accounting``), valid error
bounds (``bounds``), the versioned state format (``state``), the entry registry and its tick batches
(``entries``, ``aggregates``) and the results a mechanism returns (``outputs``)."""
