"""The trace format: what a recorded run holds and how it is read and written
(``data/README.md``). ``schema`` and ``cluster`` are pure Python (core); ``read``, ``write``,
``layout``, ``record`` and ``generate`` need pyarrow (the ``[replay]`` extra)."""
