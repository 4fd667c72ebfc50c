#!/usr/bin/env bash
# The browser test as a newcomer meets it, several times in a row:
#   a fresh clone of this repository, a fresh virtual environment (the README's install step),
#   and for every run an empty home folder, a cold numba cache and BUSY processes that keep the
#   cores busy while JupyterLab starts, the kernel compiles and the test clicks.
#
#   tests/browser_stress.sh [RUNS] [BUSY]      defaults: 5 runs, 4 busy processes
#
# Exits 0 only if every run passed. Logs and the failing runs' screenshots stay in the printed
# work folder. Needs Debian's chromium (/usr/bin/chromium), git, make and python3.
set -euo pipefail
runs=${1:-5}
busy=${2:-4}
src=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
work=$(mktemp -d -t fpx-browser-stress.XXXXXX)
echo "work folder: $work"
git clone -q "$src" "$work/repo"
cd "$work/repo"
# the README's install step, with an empty home folder (no pip cache, no Jupyter settings)
HOME="$work/install-home" make .venv/.installed-dev >"$work/install.log" 2>&1 || {
  tail -n 30 "$work/install.log"
  exit 1
}
hogs=()
stop_hogs() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  hogs=()
}
trap stop_hogs EXIT
passed=0
for run in $(seq 1 "$runs"); do
  # cold: no kernel compiled yet (numba caches beside the sources, in __pycache__)
  find fpexplore -name '*.nbi' -delete -o -name '*.nbc' -delete
  home="$work/home-$run"
  mkdir -p "$home"
  for _ in $(seq 1 "$busy"); do
    python3 -c 'while True: pass' &
    hogs+=($!)
  done
  start=$(date +%s)
  if HOME="$home" .venv/bin/python -m pytest tests/test_browser.py -q -p no:cacheprovider \
    --basetemp="$work/tmp-$run" >"$work/run-$run.log" 2>&1; then
    result=passed
    passed=$((passed + 1))
  else
    result=FAILED
  fi
  stop_hogs
  echo "run $run: $result in $(($(date +%s) - start)) s (log: $work/run-$run.log)"
  if [ "$result" = FAILED ]; then
    tail -n 40 "$work/run-$run.log"
    break
  fi
done
echo "$passed of $runs runs passed"
[ "$passed" -eq "$runs" ]
