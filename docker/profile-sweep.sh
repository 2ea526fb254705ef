#!/usr/bin/env bash
# The image's default command: the bundled MBIRJAX sweep (examples/mbirjax_sweep.py) under
# `fpgaprof run`, then the trace exported for XProf/TensorBoard. Everything lands in $OUTPUT_DIR
# (default /output, the image's volume):
#   fpgaprof_run/   trace.fpgaprof, report.html, summary.json (the FPGA answer per operation and
#                   size: regions "<op>/<n>"), timeline.json, hlo/ (fpgaprof run)
#   mbirjax_sweep/  the sweep's own summary.json (timings, compilations), scaling.txt/.csv,
#                   report.html (no per-operation sections: the run's trace holds them)
#   xprof/          the trace as an XProf profile (plugins/profile/<run>/), for the tensorboard service
#   hlo_dumps_xla/  XLA's own dumps (the image's XLA_FLAGS; fpgaprof reads the HLO from there)
# Settings (environment): SWEEP_SIZES (default "32 64 128 256"), SWEEP_RUNS (3), SWEEP_ARGS (more
# arguments for the sweep, e.g. "--operations parallel_forward_project --no-aot"), FPGAPROF_ARGS
# (more arguments for `fpgaprof run`, e.g. "--target alveo-u280"; with "--counters" also set
# XLA_PYTHON_CLIENT_PREALLOCATE=false: docs/install.md).
# SIGTERM, SIGINT and SIGHUP (docker stop, Ctrl-C) reach `fpgaprof run` as SIGTERM, which it
# passes on to the sweep: the trace is saved and the reports written before the container ends.
set -uo pipefail
OUT=${OUTPUT_DIR:-/output}
SRC=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
# Said before the long run, not after: counting under JAX's preallocated pool (the image's
# XLA_PYTHON_CLIENT_PREALLOCATE=true, which `fpgaprof run --counters` keeps as a value set on
# purpose) takes seconds per kernel, so a counted sweep of every size would hardly end.
case " ${FPGAPROF_ARGS:-} " in
  *" --counters "*)
    case "${XLA_PYTHON_CLIENT_PREALLOCATE:-}" in
      false|False|0) ;;
      *) echo "profile-sweep: WARNING: --counters with XLA_PYTHON_CLIENT_PREALLOCATE=${XLA_PYTHON_CLIENT_PREALLOCATE:-unset} (JAX's pool): kernel replay takes seconds per kernel; run with XLA_PYTHON_CLIENT_PREALLOCATE=false (docker run -e, or in the shell for docker compose)" >&2 ;;
    esac ;;
esac

# shellcheck disable=SC2086
fpgaprof run -o "$OUT/fpgaprof_run" ${FPGAPROF_ARGS:-} -- \
  python "$SRC/examples/mbirjax_sweep.py" --sizes ${SWEEP_SIZES:-32 64 128 256} \
  --runs "${SWEEP_RUNS:-3}" --output "$OUT/mbirjax_sweep" ${SWEEP_ARGS:-} &
pid=$!
# A command started with & by a non-interactive shell ignores SIGINT, so Ctrl-C is passed on
# as SIGTERM, which `fpgaprof run` handles the same way (trace saved, reports written).
trap 'kill -TERM "$pid" 2>/dev/null' TERM INT HUP
status=0
# wait returns early (above 128) when a trapped signal arrives: wait again until it has ended.
while :; do
  wait "$pid"; status=$?
  kill -0 "$pid" 2>/dev/null || break
done
trap - TERM INT HUP

trace="$OUT/fpgaprof_run/trace.fpgaprof"
if [ -f "$trace" ]; then
  rm -rf "$OUT/xprof"
  if fpgaprof export "$trace" --format xprof -o "$OUT/xprof"; then
    echo "profile-sweep: XProf profile in $OUT/xprof (docker compose up tensorboard: http://localhost:6006, Profile tab)"
  else
    echo "profile-sweep: the XProf export failed; the fpgaprof reports in $OUT/fpgaprof_run are complete" >&2
  fi
fi
echo "profile-sweep: results in $OUT: fpgaprof_run/report.html and summary.json (the FPGA answer), mbirjax_sweep/report.html and scaling.txt (timings)"
exit "$status"
