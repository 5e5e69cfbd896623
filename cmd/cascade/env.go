package main

import (
	"flag"
	"os"
	"strconv"
	"time"
)

// env, envInt, envBool, envFloat and envDuration read a setting of a
// subcommand from its variable (CASCADE_*), as the default of the flag
// that overrides it; a value that does not parse counts as unset. They
// are the one way any subcommand reads its settings from the environment.

// env returns the variable's value, or def when it is unset or empty.
func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// envInt is env for an integer.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

// envBool is env for a boolean, false when unset.
func envBool(name string) bool {
	b, _ := strconv.ParseBool(os.Getenv(name))
	return b
}

// envFloat is env for a number.
func envFloat(name string, def float64) float64 {
	if f, err := strconv.ParseFloat(os.Getenv(name), 64); err == nil {
		return f
	}
	return def
}

// envDuration is env for a duration: "2s", "1m30s".
func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil {
		return d
	}
	return def
}

// secretVar defines a string flag whose value, when the command line does
// not give it, is the first of envs set: as env does for other flags, but
// with no default in --help, which printed a token, a secret key or a
// database password taken from the environment in clear. Call the
// returned func after fs.Parse (more than once is fine).
func secretVar(fs *flag.FlagSet, p *string, name string, envs []string, usage string) (fill func()) {
	fs.StringVar(p, name, "", usage)
	return func() {
		set := false
		fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
		if set {
			return
		}
		*p = ""
		for _, e := range envs {
			if *p = os.Getenv(e); *p != "" {
				return
			}
		}
	}
}
