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
