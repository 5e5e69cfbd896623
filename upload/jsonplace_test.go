package upload

import (
	"regexp"
	"testing"

	"github.com/cascade-sim/cascade/tracedir"
)

var place = regexp.MustCompile(`line \d+, column \d+`)

// TestJSONErrorPlaceIsTheServers: cascade upload names the same line and
// column of a broken metadata.json as the server does when it reads it.
func TestJSONErrorPlaceIsTheServers(t *testing.T) {
	for _, doc := range []string{
		"{\n  \"model\": \"llama\",\n  \"layers\": [0, 1,]\n}\n",
		"{\"model\": \"x\" \"gpu\": \"y\"}",
		"{\n\t\"model\": tru\n}",
		"{\n  \"model\": \"x\",\n",
	} {
		_, err := parseMetadata([]byte(doc))
		if err == nil {
			t.Fatalf("%q parsed", doc)
		}
		_, serr := tracedir.ParseMetadata([]byte(doc))
		if serr == nil {
			t.Fatalf("the server parsed %q", doc)
		}
		got, want := place.FindString(err.Error()), place.FindString(serr.Error())
		if got == "" || got != want {
			t.Errorf("%q: upload says %q (%v), the server %q (%v)", doc, got, err, want, serr)
		}
	}
}

// TestBOMIsReadAsTheServerReadsIt: a metadata.json that starts with a
// UTF-8 byte order mark (Windows editors write one) reads as it does
// without, as the server reads it; a broken one is placed where the
// server places it.
func TestBOMIsReadAsTheServerReadsIt(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	m, err := parseMetadata([]byte(bom + `{"run_name": "bom-run", "model": "llama"}`))
	if err != nil {
		t.Fatalf("metadata.json with a BOM: %v", err)
	}
	if name, err := m.runName(); name != "bom-run" || err != nil {
		t.Errorf("run_name %q, %v; want bom-run", name, err)
	}
	if keys := len(m.fields); keys != 2 {
		t.Errorf("%d fields, want 2", keys)
	}
	doc := bom + "{\n  \"model\": tru\n}"
	_, err = parseMetadata([]byte(doc))
	_, serr := tracedir.ParseMetadata([]byte(doc))
	if err == nil || serr == nil {
		t.Fatalf("broken metadata.json with a BOM: upload %v, the server %v", err, serr)
	}
	if got, want := place.FindString(err.Error()), place.FindString(serr.Error()); got == "" || got != want {
		t.Errorf("upload says %q (%v), the server %q (%v)", got, err, want, serr)
	}
}
