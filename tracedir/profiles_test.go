package tracedir

import (
	"slices"
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
	// What is no name fails nothing: a warning naming the entry, the
	// others read; a profile named twice is read once, with a warning.
	for _, c := range []struct {
		json string
		want []string
		warn []string
	}{
		{`{"profiles": 3}`, nil, []string{`metadata.json: profiles: want a profile's path or a list of them, got 3; no profile is read`}},
		{`{"profiles": [5, "ncu.csv", null]}`, []string{"ncu.csv"}, []string{
			`metadata.json: profiles[0]: want a profile's path, got 5; left out, the others read`,
			`metadata.json: profiles[2]: want a profile's path, got null; left out, the others read`}},
		{`{"profiles": ["profiles/ncu.csv", "profiles/ncu.csv", "./profiles/ncu.csv", "profiles/b.csv"]}`, []string{"profiles/ncu.csv", "profiles/b.csv"}, []string{
			`metadata.json: profiles[1]: "profiles/ncu.csv" names the profile of profiles[0] again; read once`,
			`metadata.json: profiles[2]: "./profiles/ncu.csv" names the profile of profiles[0] again; read once`}},
	} {
		m, err := ParseMetadata([]byte(c.json))
		if err != nil || !slices.Equal(m.Profiles, c.want) || !slices.Equal(m.Warnings, c.warn) {
			t.Errorf("%s: profiles %q, warnings %q, err %v; want %q, %q, nil", c.json, m.Profiles, m.Warnings, err, c.want, c.warn)
		}
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
