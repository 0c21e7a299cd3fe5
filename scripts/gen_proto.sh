#!/usr/bin/env bash
# Regenerates the Go bindings (gen/beam_agents/v1 from protos/, and the example agents'
# examples/support/supportpb, examples/quickstart/quickstartpb and examples/devices/devicespb) with the generator versions
# pinned in tools/go.mod (tool directives for buf and protoc-gen-go), so nothing has to be
# preinstalled.
#
#   scripts/gen_proto.sh                    regenerate the bindings in place
#   scripts/gen_proto.sh --check            regenerate into a temporary directory and fail with
#                                           the diff when the committed bindings are stale
#   scripts/gen_proto.sh --breaking         fail when protos/ breaks the wire (WIRE_JSON rules)
#                                           against the committed baseline image
#   scripts/gen_proto.sh --accept-baseline  after a passing --breaking, make the current protos
#                                           the new baseline (only ever moves forward additively)
set -euo pipefail

if [ ! -f go.mod ] || ! grep -q '^module github.com/beamagents/beamagents$' go.mod || [ ! -f buf.gen.yaml ]; then
  echo "gen_proto.sh: run me from the repository root (where go.mod and buf.gen.yaml are)" >&2
  exit 2
fi

baseline=protos/breaking_baseline.binpb
generated=(gen/beam_agents examples/support/supportpb examples/quickstart/quickstartpb examples/devices/devicespb)
# The generators are pinned in tools/go.mod, outside the library's module graph.
buf() { go tool -modfile=tools/go.mod buf "$@"; }

breaking() {
  if [ ! -f "$baseline" ]; then
    echo "gen_proto.sh: missing $baseline" >&2
    exit 1
  fi
  buf breaking protos --against "$baseline"
}

case "${1:-}" in
  "")
    find "${generated[@]}" -name '*.pb.go' -delete 2>/dev/null || true
    buf generate
    ;;
  --check)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    buf generate -o "$tmp"
    stale=0
    for d in "${generated[@]}"; do
      diff -ru -x '*_test.go' -x '*.md' "$d" "$tmp/$d" || stale=1
    done
    if [ "$stale" = 1 ]; then
      echo "gen_proto.sh: generated bindings are stale; run scripts/gen_proto.sh and commit the result" >&2
      exit 1
    fi
    echo "gen_proto.sh: generated bindings are up to date"
    ;;
  --breaking)
    breaking
    echo "gen_proto.sh: no breaking change against $baseline"
    ;;
  --accept-baseline)
    if [ -f "$baseline" ]; then breaking; fi
    buf build protos --exclude-source-info -o "$baseline"
    echo "gen_proto.sh: wrote $baseline"
    ;;
  *)
    echo "usage: scripts/gen_proto.sh [--check | --breaking | --accept-baseline]" >&2
    exit 2
    ;;
esac
