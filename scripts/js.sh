#!/usr/bin/env bash
# The front end's build, test, type check and freshness check (js/ → src/citelab/static/).
#   scripts/js.sh install        npm ci, only when package-lock.json changed since the last one
#   scripts/js.sh build [DIR]    bundle each file of js/entries/ into DIR (default src/citelab/static)
#   scripts/js.sh test [ARGS]    vitest run (jsdom)
#   scripts/js.sh types          TypeScript checks the JSDoc types of js/ (tsc, js/tsconfig.json)
#   scripts/js.sh check          rebuild into a temp dir; fail unless it equals the committed bundle
# Needs Node 20+ and npm (and the npm registry for install). Installing the Python package
# does not: the built bundle is committed.
set -euo pipefail
here=${BASH_SOURCE[0]%/*}
[ "$here" = "${BASH_SOURCE[0]}" ] && here=.
cd "$here/.."

STATIC=src/citelab/static
# The bundle entries are the files of js/entries/: each becomes src/citelab/static/<name>.
ENTRIES=(js/entries/*.js js/entries/*.css)
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
  local entry
  for entry in "${ENTRIES[@]}"; do
    case "$entry" in
      *.js)
        node_modules/.bin/esbuild "$entry" --bundle --minify --format=esm --target=es2022 \
          --legal-comments=eof --log-level=warning --outfile="$out/${entry##*/}"
        ;;
      *.css)
        node_modules/.bin/esbuild "$entry" --bundle --minify --log-level=warning \
          --outfile="$out/${entry##*/}"
        ;;
    esac
  done
}

run_tests() {
  install
  node_modules/.bin/vitest run --config js/vitest.config.js "$@"
}

types() {
  install
  node_modules/.bin/tsc --project js/tsconfig.json
  echo "js.sh types: no type errors in js/"
}

check() {
  local stale=0 name
  FRESH=$(mktemp -d)
  trap 'rm -rf "$FRESH"' EXIT
  local fresh=$FRESH
  build "$fresh"
  for name in "${ENTRIES[@]##*/}"; do
    if [ ! -f "$STATIC/$name" ]; then
      echo "js.sh check: $STATIC/$name is missing" >&2
      stale=1
    elif [ "$(sha256sum <"$STATIC/$name")" != "$(sha256sum <"$fresh/$name")" ]; then
      echo "js.sh check: $STATIC/$name differs from a fresh build of js/" >&2
      stale=1
    fi
  done
  # A bundle whose entry is gone (renamed or removed) must go too.
  for name in "$STATIC"/*; do
    [ -f "$fresh/${name##*/}" ] && continue
    echo "js.sh check: $name has no entry in js/entries/" >&2
    stale=1
  done
  [ "$stale" -eq 0 ] || die "the committed bundle is stale: run 'scripts/js.sh build' and commit $STATIC"
  echo "js.sh check: $STATIC matches a fresh build of js/"
}

case "${1:-}" in
  install) install ;;
  build) build "${2:-}" ;;
  test) shift && run_tests "$@" ;;
  types) types ;;
  check) check ;;
  *) die "usage: scripts/js.sh install|build [DIR]|test [VITEST ARGS]|types|check" ;;
esac
