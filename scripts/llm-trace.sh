#!/bin/sh
# scripts/llm-trace.sh OUT_DIR [LAUNCHES] [SOURCE_TRACE]
# Writes an LLM-like raw trace (a prefill step then decode steps, four
# layers of six kernels a step) built from the real vecAdd kernel of
# ../shared/traces, and post-processes it to .traceg for Accel-Sim 1.x.
set -eu
out=${1:?usage: scripts/llm-trace.sh OUT_DIR [LAUNCHES] [SOURCE_TRACE]}
launches=${2:-300}
src=${3:-$(dirname "$0")/../../shared/traces/vecadd-sm61}
go run ./cmd/cascade gentrace -llm -from "$src" -launches "$launches" "$out"
go run ./cmd/cascade postprocess "$out/traces" --text
