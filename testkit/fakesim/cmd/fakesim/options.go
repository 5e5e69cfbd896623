package main

import (
	"os"
	"strconv"
	"strings"

	"github.com/cascade-sim/cascade/testkit/fakesim"
)

// fileClusters keeps the config files' -gpgpu_n_clusters in the options
// readOptions returns, under a name no option has.
const fileClusters = " file -gpgpu_n_clusters"

// readOptions reads the config files' options, then the command line's
// after them, overriding theirs, as GPGPU-Sim does. It returns the
// refusal the real simulator prints after "GPGPU-Sim ** ERROR: " for the
// first option it would not take: one it does not know (in a file:
// [fakesim.UnknownOptions]; on the command line: neither file sets it and
// it is not among [fakesim.KnownOptions]), a value that is not a whole
// number for an option the files give a whole number, a config file it
// cannot open.
func readOptions(configs []string, cmdline [][2]string) (map[string]string, string) {
	options := map[string]string{}
	for _, c := range configs {
		data, err := os.ReadFile(c)
		if err != nil {
			return nil, "Cannot open config file '" + c + "'"
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			opt, _, _ := strings.Cut(line, "#")
			f := strings.Fields(opt)
			if len(f) == 0 || !strings.HasPrefix(f[0], "-") {
				continue
			}
			if fakesim.UnknownOptions[f[0]] {
				return nil, "Unknown Option: '" + f[0] + "' "
			}
			if len(f) > 1 {
				options[f[0]] = f[1]
			}
		}
	}
	options[fileClusters] = options["-gpgpu_n_clusters"]
	for _, o := range cmdline {
		have, inFile := options[o[0]]
		if !inFile && !fakesim.KnownOptions[o[0]] || fakesim.UnknownOptions[o[0]] {
			return nil, "Unknown Option: '" + o[0] + "' "
		}
		if _, err := strconv.ParseInt(have, 10, 64); inFile && err == nil {
			if _, err := strconv.ParseInt(o[1], 0, 64); err != nil {
				return nil, "Cannot parse value '" + o[1] + "' for option '" + o[0] + "'."
			}
		}
		options[o[0]] = o[1]
	}
	return options, ""
}

// clusterScale is how a command line's -gpgpu_n_clusters changes a
// kernel's cycles: by the files' clusters over the command line's (half
// the SMs, twice the cycles); unchanged when either is not a number.
func clusterScale(options map[string]string) func(int64) int64 {
	f, err1 := strconv.ParseInt(options[fileClusters], 10, 64)
	n, err2 := strconv.ParseInt(options["-gpgpu_n_clusters"], 0, 64)
	if err1 != nil || err2 != nil || f <= 0 || n <= 0 || f == n {
		return func(c int64) int64 { return c }
	}
	return func(c int64) int64 { return c * f / n }
}
