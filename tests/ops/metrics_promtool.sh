#!/usr/bin/env bash
# CTest ops_metrics_promtool: the /metrics of a real `hotline serve` (after a real call, so that
# the latency histograms and per-tier counters have samples) passes `promtool check metrics`.
#   metrics_promtool.sh HOTLINE_BINARY
set -euo pipefail
bin="$1"
command -v promtool >/dev/null ||
  { echo "promtool is missing: run scripts/setup (Debian package prometheus)" >&2; exit 1; }
work="$(mktemp -d /tmp/hotline-metrics-XXXXXX)"
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill -INT "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
"$bin" serve --port 0 --set log_level=warn 2>"$work/serve.log" &
pid=$!
url=""
for _ in $(seq 1 600); do
  url="$(grep -o 'ws://127\.0\.0\.1:[0-9]*/twilio' "$work/serve.log" | head -n 1 || true)"
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/serve.log" >&2; exit 1; }
  sleep 0.2
done
[ -n "$url" ] || { echo "hotline serve did not start" >&2; cat "$work/serve.log" >&2; exit 1; }
http="${url/ws:/http:}"
http="${http%/twilio}"
"$bin" bench calls --url "$url" --concurrency 1 --duration 4 --ramp 0 --json >"$work/bench.json"
curl -sf "$http/metrics" >"$work/metrics.txt"
grep -q '^hotline_pipeline_voice_to_voice_seconds_count [1-9]' "$work/metrics.txt" ||
  { echo "no turn was timed: the call did not reach the server" >&2; exit 1; }
# promtool prints each problem and exits non-zero on any.
promtool check metrics <"$work/metrics.txt"
echo "promtool check metrics: $(grep -c '^# TYPE' "$work/metrics.txt") metric families, no problem"
