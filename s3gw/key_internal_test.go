package s3gw

import "testing"

// TestCheckTraceKey: the trace folder is the component after the prefix
// when something follows it, and one that starts with a dot is refused;
// dotfiles in a trace, beside the trace folders or outside the prefix
// are not.
func TestCheckTraceKey(t *testing.T) {
	for _, c := range []struct {
		prefix, key, folder string
		refused             bool
	}{
		{"traces", "traces/run1/metadata.json", "run1", false},
		{"traces", "traces/run1/", "run1", false},
		{"traces", "traces/run1/.DS_Store", "run1", false},
		{"traces", "traces/.DS_Store", "", false},
		{"traces", "traces/.hidden/metadata.json", ".hidden", true},
		{"traces", "traces/.hidden/", ".hidden", true},
		{"traces", "other/.hidden/x", "", false},
		{"traces", "tracesx/.hidden/x", "", false},
		{"traces/", "traces/.hidden/x", ".hidden", true},
		{"a/b", "a/b/.x/y", ".x", true},
		{"a/b", "a/.x/y", "", false},
		{"", ".x/y", ".x", true},
		{"", "run1/y", "run1", false},
	} {
		folder, _ := TraceFolder(c.prefix, c.key)
		err := CheckTraceKey(c.prefix, c.key)
		if folder != c.folder || (err != nil) != c.refused {
			t.Errorf("prefix %q, key %q: folder %q, %v; want %q, refused %v", c.prefix, c.key, folder, err, c.folder, c.refused)
		}
	}
}
