package cascade_test

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsResolveInTheRepository: every relative link of README.md and
// docs/*.md, and every path in backticks whose first folder is one of the
// repository's, names a file that a fresh clone has (a link's #anchor, a
// heading of the file). A path out of the repository (`../shared/...`,
// `/work/...`: one machine's) is refused wherever it is written, since a
// reader's clone has nothing there: name what to put there instead
// (`<your Accel-Sim checkout>`). Example paths with a placeholder ($VAR,
// <id>, *) are not checked.
func TestDocsResolveInTheRepository(t *testing.T) {
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"README.md"}, files...)
	top := map[string]bool{}
	des, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if !strings.HasPrefix(de.Name(), ".") || de.Name() == ".ci" {
			top[de.Name()] = true
		}
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	code := regexp.MustCompile("`([^`]+)`")
	outside := regexp.MustCompile("(?:^|[\\s=(`])((?:\\.\\./|/work/)[^\\s`)]*)")
	inClone := cloneHas(t)
	checked := 0
	defer func() { t.Logf("%d backticked repository paths checked", checked) }()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fence := false
		for i, line := range strings.Split(string(data), "\n") {
			at := func(format string, args ...any) {
				t.Helper()
				t.Errorf("%s:%d: "+format, append([]any{f, i + 1}, args...)...)
			}
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fence = !fence
				continue
			}
			// Outside the repository, in any kind of text but a link,
			// which is checked below.
			for _, m := range outside.FindAllStringSubmatch(link.ReplaceAllString(line, "]()"), -1) {
				at("%s is outside the repository (one machine's path): say what to put there instead", m[1])
			}
			if fence {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				p := f
				if file != "" {
					p = path.Join(path.Dir(f), file)
				}
				if p == ".." || strings.HasPrefix(p, "../") {
					at("link %s leaves the repository", target)
					continue
				}
				if !inClone(p) {
					at("link %s: no %s in the repository", target, p)
					continue
				}
				if anchor != "" && strings.HasSuffix(p, ".md") && !hasAnchor(t, p, anchor) {
					at("link %s: %s has no heading #%s", target, p, anchor)
				}
			}
			for _, m := range code.FindAllStringSubmatch(line, -1) {
				for _, tok := range strings.Fields(m[1]) {
					tok = strings.TrimRight(tok, ",;:)")
					first, _, nested := strings.Cut(tok, "/")
					if !nested || !top[first] || strings.ContainsAny(tok, "$<>*{}…|") || strings.Contains(tok, "...") {
						continue
					}
					checked++
					if !inClone(tok) {
						at("`%s` is not in the repository", tok)
					}
				}
			}
		}
	}
}

// cloneHas returns whether a path is in a fresh clone: a file git tracks
// or a folder of them, or a place git ignores, which the docs name as
// where a command writes (frontend/e2e/screenshots/). Without git (a
// tarball), whether it is on disk.
func cloneHas(t *testing.T) func(p string) bool {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Logf("git ls-files: %v: checking the disk instead", err)
		return func(p string) bool { _, err := os.Stat(p); return err == nil }
	}
	tracked := map[string]bool{}
	for _, f := range strings.Split(string(out), "\x00") {
		for ; f != "." && f != ""; f = path.Dir(f) {
			tracked[f] = true
		}
	}
	return func(p string) bool {
		// A folder keeps its slash for git check-ignore: a pattern of
		// folders ("e2e/screenshots/") matches a path that is not on
		// disk (a fresh clone's) only when it ends in one.
		q := path.Clean(p)
		if strings.HasSuffix(p, "/") {
			q += "/"
		}
		return tracked[path.Clean(p)] || exec.Command("git", "check-ignore", "-q", q).Run() == nil
	}
}

// hasAnchor reports whether a markdown file has a heading whose GitHub
// anchor is anchor.
func hasAnchor(t *testing.T, file, anchor string) bool {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
		}
		if fence || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			seen[slug]++
			slug += "-" + string(rune('0'+n))
		} else {
			seen[slug] = 1
		}
		if slug == anchor {
			return true
		}
	}
	return false
}
