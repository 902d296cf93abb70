# The two commands of the README: `make demo` and `make test`.
# Each creates or refreshes the local virtualenv (.venv) from pyproject.toml by itself.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.bucketkit-installed

.PHONY: demo test test-fast bench clean javacheck jar

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "bucketkit needs Python 3.11 or newer; found " + sys.version.split()[0])'
	@echo "setting up $(VENV) from pyproject.toml (first run downloads pyspark, ~0.5 GB) ..."
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@# compat: a plain path in a .pth, so Spark's scan for pyspark_* data source modules finds ours
	@$(PY) -m pip install -q --disable-pip-version-check -e '.[test]' --config-settings editable_mode=compat
	@touch $(STAMP)

# Java first, with the system Python (javacheck needs only the standard library): a machine
# without Java hears so in one line before downloading anything.
javacheck:
	@PYTHONPATH=. $(PYTHON) -m bucketkit.javacheck

# bucketkit's Spark catalog: jvm/src compiled with javac against pyspark's jars (rebuilt when a
# source changed; see bucketkit/jvmbuild.py).
jar: javacheck $(STAMP)
	@$(PY) -m bucketkit.jvmbuild

demo: jar
	@$(PY) -m bucketkit.demo

test: jar
	@$(PY) -m pytest $(PYTEST_ARGS)

test-fast: $(STAMP)
	@$(PY) -m pytest -m 'not spark' $(PYTEST_ARGS)

bench: jar
	@$(PY) -m benchmarks.run $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info bucketkit/jars
