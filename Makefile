# Shortcuts; scripts/ holds the real commands so a machine without make
# needs nothing more than Go.
.PHONY: serve test ui bench bench-postprocess generate

serve:
	scripts/serve.sh

test:
	scripts/test.sh

ui:
	cd frontend && npm ci && npm run build

generate:
	go generate ./graph

# Benchmarks reported in the closing notes. bench-postprocess builds ~200 MB
# raw kernels; CASCADE_BENCH_LARGE=1 adds the 2 GB ones.
bench:
	go test ./scanner -run '^$$' -bench . -benchtime 200x
	go test ./traceproc -run '^$$' -bench . -benchtime 1x -timeout 60m
