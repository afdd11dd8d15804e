"""Live drivers run by rocketmq-python-client's own venv (``live.cluster``), never imported by
the package."""
