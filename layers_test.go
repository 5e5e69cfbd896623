package cascade_test

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/cascade-sim/cascade"

// layers orders the module's packages from the bottom up: a package may
// import the root, its own layer's packages, and any lower layer, never a
// higher one. A package is in the layer of the longest prefix that names
// it or one of its parents. testkit/ (test harnesses) is apart: only test
// files and other harnesses import it. README.md's layout table and the
// root package's doc (doc.go) say the same.
var layers = [][]string{
	{""}, // the root: the vocabulary every layer shares
	{"internal"},
	// Leaves: Accel-Sim's formats, a trace directory's files, the Slurm
	// client, the S3 endpoint, ..., and sampling's pure planning and
	// projection.
	{"accelsim", "tracedir", "slurm", "s3gw", "disk", "events", "metrics", "samples", "tracegen", "upload", "sampling"},
	{"db"},
	// A trace's states: which event moves a trace from which state to
	// which, the scanner and the post-processor reporting to it.
	{"tracestate"},
	// The services: a trace's upload and post-processing, runs' lifecycle
	// and its executors, a trace's sampling plans.
	{"scanner", "postproc", "runs", "sampling/plans"},
	{"results"},          // the read side: what runs gave back
	{"sampling/sampled"}, // sampled runs, driving runs and read by results
	{"graph"},
	{"resolvers"},
	{"app"},
	{"cmd"},
	// The full tier's tests that start a server, apart from the packages
	// they test so that -short links the server into few test binaries.
	{"servertests"},
}

// rules are the narrower promises of the design: who may import what
// beyond the layer order.
var rules = []struct {
	pkg    string   // a package and those under it
	exact  bool     // pkg alone, not those under it
	only   []string // when set, the module packages it may import (and those under them)
	forbid []string // module packages it must not import (and those under them)
}{
	{pkg: "graph", only: []string{"", "graph"}},
	{pkg: "tracestate", only: []string{""}}, // the rules of a trace's states, and who is told of a move
	{pkg: "scanner", forbid: []string{"db", "events", "postproc"}},
	{pkg: "postproc", forbid: []string{"scanner"}}, // they meet in tracestate
	{pkg: "postproc", forbid: []string{"db", "events"}},
	{pkg: "runs", forbid: []string{"db", "events"}},
	{pkg: "runs", exact: true, forbid: []string{"runs/local", "runs/slurmexec"}}, // only the wiring picks an executor
	{pkg: "sampling", exact: true, only: []string{""}},                           // pure
	{pkg: "accelsim/hwprofile", only: []string{""}},                              // a profiler's text in, launches and the counter table out
	{pkg: "sampling/plans", forbid: []string{"db", "events"}},
	{pkg: "sampling/sampled", forbid: []string{"db", "events", "runs/local", "runs/slurmexec"}},
	{pkg: "results", forbid: []string{"db", "events", "runs/local", "runs/slurmexec"}},
	{pkg: "resolvers", forbid: []string{"internal/proc"}},
}

func under(pkg, prefix string) bool {
	return prefix == "" && pkg == "" || prefix != "" && (pkg == prefix || strings.HasPrefix(pkg, prefix+"/"))
}

func layerOf(pkg string) int {
	if pkg == "" {
		return 0
	}
	layer, longest := -1, -1
	for i, l := range layers[1:] {
		for _, p := range l {
			if under(pkg, p) && len(p) > longest {
				layer, longest = i+1, len(p)
			}
		}
	}
	return layer
}

// moduleImports maps each package directory of the module (relative, ""
// for the root) to the module packages its non-test files import. It
// parses import blocks only: no go command, no build.
func moduleImports(t *testing.T) (prod, tests map[string][]string) {
	t.Helper()
	prod, tests = map[string][]string{}, map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != "." && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "testdata" || n == "frontend" || n == "bin" || strings.HasPrefix(n, "cascade-data")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		if dir == "." {
			dir = ""
		}
		m := prod
		if strings.HasSuffix(p, "_test.go") {
			m = tests
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if ip == module {
				ip = ""
			} else if rel, ok := strings.CutPrefix(ip, module+"/"); ok {
				ip = rel
			} else {
				continue
			}
			if ip != dir && !slices.Contains(m[dir], ip) {
				m[dir] = append(m[dir], ip)
			}
		}
		if _, ok := m[dir]; !ok {
			m[dir] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return prod, tests
}

// TestLayers: no package imports a higher layer, only tests and harnesses
// import test harnesses, and the design's narrower rules hold. A failure names
// the import to remove.
func TestLayers(t *testing.T) {
	if _, err := os.Stat("go.mod"); err != nil {
		t.Skip("not at the module root")
	}
	prod, tests := moduleImports(t)
	var bad []string
	for pkg, imps := range prod {
		from := layerOf(pkg)
		if harness(pkg) {
			continue
		}
		if from < 0 {
			bad = append(bad, fmt.Sprintf("%s: not in any layer of layers_test.go: add it where it belongs", show(pkg)))
			continue
		}
		for _, imp := range imps {
			switch to := layerOf(imp); {
			case harness(imp):
				bad = append(bad, fmt.Sprintf("%s imports %s: only tests import test harnesses", show(pkg), show(imp)))
			case to > from:
				bad = append(bad, fmt.Sprintf("%s (layer %d) imports %s (layer %d): a lower layer imports a higher one", show(pkg), from, show(imp), to))
			}
		}
		for _, r := range rules {
			if !under(pkg, r.pkg) || r.exact && pkg != r.pkg {
				continue
			}
			for _, imp := range imps {
				if r.only != nil && !slices.ContainsFunc(r.only, func(p string) bool { return under(imp, p) }) {
					bad = append(bad, fmt.Sprintf("%s imports %s: it may import only %s", show(pkg), show(imp), showAll(r.only)))
				}
				if slices.ContainsFunc(r.forbid, func(p string) bool { return under(imp, p) }) {
					bad = append(bad, fmt.Sprintf("%s imports %s, which it must not", show(pkg), show(imp)))
				}
			}
		}
	}
	// Only the command's and servertests' tests link the server: they
	// alone import a harness that starts one. A test binary is linked on
	// every go test -short, even when -short skips every test in it, and
	// one that links the server costs about 2 CPU-s: a test that starts a
	// server goes to servertests/ (app's own are servertests/app).
	for pkg, imps := range tests {
		if under(pkg, "cmd") || under(pkg, "servertests") {
			continue
		}
		for _, h := range []string{"testkit/servertest", "testkit/s3test", "testkit/quickstart"} {
			if slices.Contains(imps, h) {
				bad = append(bad, fmt.Sprintf("%s's tests import %s, which links the server into its test binary: put tests that start a server in servertests/", show(pkg), h))
			}
		}
	}
	// The S3 server (s3gw's library) is most of the server's
	// dependencies: app takes it from its caller (Config.S3Server, set to
	// app/s3serve by cmd/cascade), and servertest leaves it to
	// testkit/s3test, so that only what serves S3 and the tests that speak
	// it link it.
	for _, pkg := range []string{"app", "testkit/servertest"} {
		for _, imp := range prod[pkg] {
			if under(imp, "s3gw") || under(imp, "app/s3serve") {
				bad = append(bad, fmt.Sprintf("%s imports %s: the S3 server is linked only where it is served (app/s3serve, testkit/s3test)", show(pkg), show(imp)))
			}
		}
	}
	slices.Sort(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

// harness reports whether pkg is a test harness: under testkit/, or a
// package beside the code it serves named like net/http/httptest.
func harness(pkg string) bool {
	return under(pkg, "testkit") || strings.HasSuffix(path.Base(pkg), "test")
}

func show(pkg string) string {
	if pkg == "" {
		return "the root package"
	}
	return pkg
}

func showAll(pkgs []string) string {
	s := make([]string, len(pkgs))
	for i, p := range pkgs {
		s[i] = path.Clean("/" + show(p))[1:]
	}
	return strings.Join(s, ", ")
}
