"""A real RocketMQ on this machine (issue 14): upstream's released jars through Maven
(``jars``), a local cluster of a name server and brokers (``cluster``), and the command line
``python -m rocketlb_core.live up|down|status|admin``. Not part of the core: it starts JVMs and
waits for them in real time.
"""
