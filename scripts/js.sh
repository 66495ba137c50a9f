#!/usr/bin/env bash
# The front end's build, test and freshness check (js/ → src/citelab/static/).
#   scripts/js.sh install        npm ci, only when package-lock.json changed since the last one
#   scripts/js.sh build [DIR]    bundle into DIR (default src/citelab/static)
#   scripts/js.sh test [ARGS]    vitest run (jsdom)
#   scripts/js.sh check          rebuild into a temp dir; fail unless it equals the committed bundle
# Needs Node 20+ and npm (and the npm registry for install). Installing the Python package
# does not: the built bundle is committed.
set -euo pipefail
here=${BASH_SOURCE[0]%/*}
[ "$here" = "${BASH_SOURCE[0]}" ] && here=.
cd "$here/.."

STATIC=src/citelab/static
ENTRIES=(widget_chat widget_sources widget_message page report)
STAMP=node_modules/.installed

die() {
  echo "js.sh: $*" >&2
  exit 1
}

require_node() {
  command -v node >/dev/null 2>&1 ||
    die "node is not installed: the front end needs Node 20+ and npm (e.g. apt-get install nodejs npm)"
  command -v npm >/dev/null 2>&1 || die "npm is not installed: the front end needs Node 20+ and npm"
  local major
  major=$(node -p 'process.versions.node.split(".")[0]')
  [ "$major" -ge 20 ] || die "node $(node --version) is too old: the front end needs Node 20+"
}

install() {
  require_node
  local want
  want=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && [ -x node_modules/.bin/esbuild ]; then
    return
  fi
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" >"$STAMP"
}

build() {
  local out=${1:-$STATIC}
  install
  mkdir -p "$out"
  for entry in "${ENTRIES[@]}"; do
    node_modules/.bin/esbuild "js/$entry.js" --bundle --minify --format=esm --target=es2022 \
      --legal-comments=eof --log-level=warning --outfile="$out/$entry.js"
  done
  node_modules/.bin/esbuild js/citelab.css --bundle --minify --log-level=warning \
    --outfile="$out/citelab.css"
}

run_tests() {
  install
  node_modules/.bin/vitest run --config js/vitest.config.js "$@"
}

check() {
  local stale=0 name
  FRESH=$(mktemp -d)
  trap 'rm -rf "$FRESH"' EXIT
  local fresh=$FRESH
  build "$fresh"
  for name in "${ENTRIES[@]/%/.js}" citelab.css; do
    if [ ! -f "$STATIC/$name" ]; then
      echo "js.sh check: $STATIC/$name is missing" >&2
      stale=1
    elif [ "$(sha256sum <"$STATIC/$name")" != "$(sha256sum <"$fresh/$name")" ]; then
      echo "js.sh check: $STATIC/$name differs from a fresh build of js/" >&2
      stale=1
    fi
  done
  [ "$stale" -eq 0 ] || die "the committed bundle is stale: run 'scripts/js.sh build' and commit $STATIC"
  echo "js.sh check: $STATIC matches a fresh build of js/"
}

case "${1:-}" in
  install) install ;;
  build) build "${2:-}" ;;
  test) shift && run_tests "$@" ;;
  check) check ;;
  *) die "usage: scripts/js.sh install|build [DIR]|test [VITEST ARGS]|check" ;;
esac
