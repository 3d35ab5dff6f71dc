#!/usr/bin/env bash
# CTest ops_package: the Debian package CPack builds (cmake/package.cmake) carries the binary,
# the shipped model and knowledge base, /etc/hotline/hotline.yaml as a conffile, the systemd unit
# and the maintainer scripts that create the `hotline` user; unpacked into a scratch root,
# its `hotline version` and `hotline config check` of its own configuration succeed, and its
# `hotline serve` on that configuration becomes ready.
#   package_test.sh BUILD_DIR
set -euo pipefail
build="$1"
work="$(mktemp -d /tmp/hotline-package-XXXXXX)"
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill -INT "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
(cd "$build" && cpack -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) ||
  { cat "$work/cpack.log" >&2; exit 1; }
deb="$(ls "$work"/out/hotline_*.deb)"
echo "built $(basename "$deb") ($(du -h "$deb" | cut -f1))"

fail() { echo "FAIL: $*" >&2; exit 1; }
dpkg-deb -f "$deb" Package | grep -qx hotline || fail "package name"
depends="$(dpkg-deb -f "$deb" Depends)"
for dep in pocketsphinx-en-us adduser libc6; do
  [[ "$depends" == *"$dep"* ]] || fail "Depends lacks $dep: $depends"
done
mkdir "$work/control"
dpkg-deb -e "$deb" "$work/control"
grep -qx /etc/hotline/hotline.yaml "$work/control/conffiles" || fail "hotline.yaml is not a conffile"
for s in postinst prerm postrm; do
  [ -x "$work/control/$s" ] || fail "no executable $s"
  sh -n "$work/control/$s" || fail "$s is not valid sh"
done
grep -q 'adduser --system' "$work/control/postinst" || fail "postinst creates no system user"

root="$work/root"
dpkg -x "$deb" "$root"
for f in usr/bin/hotline usr/share/hotline/models/demo-agent.q8_0.gguf \
  usr/share/hotline/kb/bitext_kb.csv etc/hotline/hotline.yaml lib/systemd/system/hotline.service \
  usr/share/hotline/prometheus/hotline-alerts.yml usr/share/doc/hotline/copyright; do
  [ -s "$root/$f" ] || fail "the package lacks /$f"
done
unit="$root/lib/systemd/system/hotline.service"
for opt in User=hotline NoNewPrivileges=yes ProtectSystem=strict PrivateTmp=yes \
  'ExecStart=/usr/bin/hotline serve --config /etc/hotline/hotline.yaml'; do
  grep -q "^$opt" "$unit" || fail "hotline.service lacks $opt"
done
if command -v systemd-analyze >/dev/null; then
  # The unit as systemd reads it, with ExecStart pointing into the scratch root.
  mkdir "$work/unit"
  sed "s#/usr/bin/hotline#$root/usr/bin/hotline#" "$unit" >"$work/unit/hotline.service"
  systemd-analyze verify --man=no "$work/unit/hotline.service" || fail "systemd-analyze verify"
fi

"$root/usr/bin/hotline" version | grep -q '^hotline [0-9]' || fail "hotline version"
# Its own configuration, with the packaged paths moved into the scratch root.
sed "s#/usr/share/hotline#$root/usr/share/hotline#g" "$root/etc/hotline/hotline.yaml" \
  >"$work/hotline.yaml"
"$root/usr/bin/hotline" config check --config "$work/hotline.yaml" | grep -qx ok ||
  fail "hotline config check"
"$root/usr/bin/hotline" serve --config "$work/hotline.yaml" --port 0 \
  --kb "$root/usr/share/hotline/kb/bitext_kb.csv" --set log_level=warn 2>"$work/serve.log" &
pid=$!
for _ in $(seq 1 600); do
  url="$(grep -o 'http://127\.0\.0\.1:[0-9]*/metrics' "$work/serve.log" | head -n 1 || true)"
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$work/serve.log" >&2; fail "packaged hotline serve exited"; }
  sleep 0.2
done
[ -n "$url" ] || fail "packaged hotline serve did not start"
curl -sf "${url%/metrics}/readyz" | grep -q ready || fail "packaged hotline serve is not ready"
echo "the package installs and runs: $(dpkg-deb -f "$deb" Version), Depends: $depends"
