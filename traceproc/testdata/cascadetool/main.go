// Command cascadetool runs the post-processor and the trace generator the
// way the cascade binary will, for manual runs: go run ./traceproc/testdata/cascadetool.
package main

import (
	"context"
	"os"

	"github.com/cascade-sim/cascade/tracegen"
	"github.com/cascade-sim/cascade/traceproc"
)

func main() {
	switch os.Args[1] {
	case "gentrace":
		os.Exit(tracegen.Main(context.Background(), os.Args[2:], os.Stdout, os.Stderr))
	case "postprocess":
		os.Exit(traceproc.Main(context.Background(), os.Args[2:], os.Stdout, os.Stderr))
	}
}
