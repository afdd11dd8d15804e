"""Scripts run by rocketmq-python-client's own venv (``vectorgen.python_client``), never imported
by the package."""
