#!/bin/sh
# Run the Python test suite; pytest's exit 5 ("no tests collected") is a failure here,
# because a suite that collects nothing is a broken suite, not a passing one.
PY="$1"; shift
"$PY" -m pytest "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: treating as failure" >&2
  exit 1
fi
exit "$rc"
