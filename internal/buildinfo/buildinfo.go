// Package buildinfo says which build of Cascade is running: its version,
// the commit it was built from and when, read from what the Go toolchain
// records in the binary (go build in a git checkout records the commit;
// go install of a tagged module, its version). Release builds may set
// Version with -ldflags "-X github.com/cascade-sim/cascade/internal/buildinfo.Version=v1.2.3".
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// Version is set at link time by release builds; empty otherwise.
var Version string

// Info is one build's identity.
type Info struct {
	Version  string `json:"version"`  // "v1.2.3", or "devel" for a build of a checkout
	Commit   string `json:"commit"`   // the git commit, "" when not recorded
	Date     string `json:"date"`     // the commit's time (RFC 3339), "" when not recorded
	Modified bool   `json:"modified"` // built from a checkout with uncommitted changes
}

// Get reads the running binary's build information.
func Get() Info {
	info := Info{Version: Version}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if info.Version == "" {
			info.Version = "devel"
		}
		return info
	}
	if info.Version == "" {
		info.Version = bi.Main.Version
	}
	if info.Version == "" || info.Version == "(devel)" {
		info.Version = "devel"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Commit = s.Value
		case "vcs.time":
			info.Date = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// String reads "cascade devel (commit 8f2859d, 2026-12-04T17:01:56Z, modified)".
func (i Info) String() string {
	var parts []string
	if i.Commit != "" {
		c := i.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		parts = append(parts, "commit "+c)
	}
	if i.Date != "" {
		parts = append(parts, i.Date)
	}
	if i.Modified {
		parts = append(parts, "modified")
	}
	s := "cascade " + i.Version
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}
