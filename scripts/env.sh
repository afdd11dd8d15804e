# Sourced by every script: one environment for building, testing and regenerating outputs, so the
# stored notebook outputs that nbval compares are produced exactly as CI checks them.
export TZ=UTC
export LC_ALL=C.UTF-8
export PYTHONHASHSEED=0
export ROCKETLB_STATIC_VEGA=1          # charts rely on the book's vega bundle (rocketlb_core.viz.render)
export SPARK_LOCAL_IP=127.0.0.1
export PYDEVD_DISABLE_FILE_VALIDATION=1 # keeps a debugger warning out of kernel stderr
export JUPYTER_PLATFORM_DIRS=1
export MPLBACKEND=Agg
export PATH="$PWD/.venv/bin:$PATH"
