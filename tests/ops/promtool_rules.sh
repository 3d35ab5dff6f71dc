#!/usr/bin/env bash
# CTest ops_promtool_rules: the alerting rules pass `promtool check rules` and their unit tests
# (`promtool test rules`), the example scrape configuration passes `promtool check config`, and
# every Hotline metric the rules read is one the code registers.
#   promtool_rules.sh SOURCE_DIR
set -euo pipefail
src="$1"
command -v promtool >/dev/null ||
  { echo "promtool is missing: run scripts/setup (Debian package prometheus)" >&2; exit 1; }
cd "$src/deploy/prometheus"
promtool check rules hotline-alerts.yml
promtool test rules hotline-alerts_test.yml
promtool check config prometheus.yml
missing=0
for name in $(grep -v '^\s*#' hotline-alerts.yml | grep -oP '(?<![:a-z_])hotline_[a-z0-9_]+(?![a-z0-9_:])' | sort -u); do
  base="${name%_bucket}"
  base="${base%_count}"
  if ! grep -rqF "\"$base\"" "$src/src"; then
    echo "hotline-alerts.yml reads $name, but no code registers $base" >&2
    missing=1
  fi
done
exit $missing
