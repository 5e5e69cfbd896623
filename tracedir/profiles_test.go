package tracedir

import (
	"slices"
	"strings"
	"testing"
)

// TestMetadataProfiles: metadata.json's profiles is a name or a list of
// names; anything else names the field.
func TestMetadataProfiles(t *testing.T) {
	for _, c := range []struct {
		json string
		want []string
	}{
		{`{"profiles": "prof/ncu.csv"}`, []string{"prof/ncu.csv"}},
		{`{"profiles": ["a.csv", "b.csv"]}`, []string{"a.csv", "b.csv"}},
		{`{"profiles": null}`, nil},
		{`{}`, nil},
	} {
		m, err := ParseMetadata([]byte(c.json))
		if err != nil || !slices.Equal(m.Profiles, c.want) {
			t.Errorf("%s: %q, %v", c.json, m.Profiles, err)
		}
	}
	if _, err := ParseMetadata([]byte(`{"profiles": 3}`)); err == nil || !strings.Contains(err.Error(), "metadata.json: profiles:") {
		t.Errorf("a number: %v", err)
	}
}

// TestMetadataCoreSumWithBOM: a metadata.json with a UTF-8 byte order mark
// has the core sum of the same file without one (it had none, so a
// change of its profiles alone started the trace over).
func TestMetadataCoreSumWithBOM(t *testing.T) {
	b := []byte(`{"model": "m", "profiles": ["ncu.csv"]}`)
	m, err := ParseMetadata(b)
	if err != nil {
		t.Fatal(err)
	}
	plain, bom := MetadataCoreSum(b, m), MetadataCoreSum(append([]byte("\xef\xbb\xbf"), b...), m)
	if plain == "" || bom != plain {
		t.Errorf("core sum %q with a BOM, %q without", bom, plain)
	}
}
