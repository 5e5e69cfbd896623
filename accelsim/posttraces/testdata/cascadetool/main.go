// Command cascadetool runs the post-processor and the trace generator the
// way the cascade binary will, for manual runs: go run ./accelsim/posttraces/testdata/cascadetool.
package main

import (
	"context"
	"os"
	"runtime/pprof"

	"github.com/cascade-sim/cascade/accelsim/posttraces"
	"github.com/cascade-sim/cascade/tracegen"
)

func main() {
	if p := os.Getenv("CASCADETOOL_CPUPROFILE"); p != "" {
		f, _ := os.Create(p)
		pprof.StartCPUProfile(f)
		code := run()
		pprof.StopCPUProfile()
		os.Exit(code)
	}
	os.Exit(run())
}

func run() int {
	switch os.Args[1] {
	case "gentrace":
		return tracegen.Main(context.Background(), os.Args[2:], os.Stdout, os.Stderr)
	case "postprocess":
		return posttraces.Main(context.Background(), os.Args[2:], os.Stdout, os.Stderr)
	}
	return 2
}
