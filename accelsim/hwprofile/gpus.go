package hwprofile

import (
	"strings"
	"unicode"
)

// A knownGPU is a card as profilers name it, with its compute capability
// and the tested Accel-Sim config that models it ("" when none does).
type knownGPU struct {
	name    string // normalized (see normalize), matched as a part of a name
	display string
	cc      string
	config  string
}

// knownGPUs are the cards of Accel-Sim's tested configs and their
// neighbours, the more specific name first ("GTX TITAN X" is Maxwell,
// "GTX TITAN" Kepler).
var knownGPUs = []knownGPU{
	{"titanxpascal", "TITAN X (Pascal)", "6.1", "SM6_TITANX"},
	{"titanxp", "TITAN Xp", "6.1", ""},
	{"gtxtitanx", "GeForce GTX TITAN X", "5.2", ""},
	{"gtxtitan", "GeForce GTX TITAN", "3.5", "SM3_KEPLER_TITAN"},
	{"gtx1080", "GeForce GTX 1080", "6.1", ""},
	{"gtx1070", "GeForce GTX 1070", "6.1", ""},
	{"gtx480", "GeForce GTX 480", "2.0", "SM2_GTX480"},
	{"teslap100", "Tesla P100", "6.0", ""},
	{"titanv", "TITAN V", "7.0", "SM7_TITANV"},
	{"quadrogv100", "Quadro GV100", "7.0", "SM7_QV100"},
	{"v100", "Tesla V100", "7.0", ""},
	{"rtx2060", "GeForce RTX 2060", "7.5", "SM75_RTX2060"},
	{"rtx2080", "GeForce RTX 2080", "7.5", ""},
	{"a100", "A100", "8.0", ""},
	{"rtx3070", "GeForce RTX 3070", "8.6", "SM86_RTX3070"},
	{"rtx3080", "GeForce RTX 3080", "8.6", ""},
	{"rtx3090", "GeForce RTX 3090", "8.6", ""},
	{"h100", "H100", "9.0", ""},
}

// ModelledGPU returns the card a tested config models, by its name
// ("SM6_TITANX": "TITAN X (Pascal)"); ok is false for another config.
func ModelledGPU(config string) (name string, ok bool) {
	for _, g := range knownGPUs {
		if g.config != "" && g.config == config {
			return g.display, true
		}
	}
	return "", false
}

// KnownGPU returns what is known of the card a profiler names (its
// device name, "NVIDIA TITAN X (Pascal)"): its compute capability
// ("6.1") and the tested config that models it ("SM6_TITANX", "" when
// none does); ok is false for a card not known here.
func KnownGPU(name string) (cc, config string, ok bool) {
	n := normalize(name)
	if n == "" {
		return "", "", false
	}
	for _, g := range knownGPUs {
		if strings.Contains(n, g.name) {
			return g.cc, g.config, true
		}
	}
	return "", "", false
}

// SameGPU reports whether two device names name the same card: one's
// normalized name holds the other's once the vendor's words are gone
// ("NVIDIA GeForce GTX 1080" and "GTX 1080").
func SameGPU(a, b string) bool {
	na, nb := normalize(a), normalize(b)
	if na == "" || nb == "" {
		return false
	}
	return strings.Contains(na, nb) || strings.Contains(nb, na)
}

// Named reports whether a device name names a card, rather than an
// index ("0") or nothing.
func Named(name string) bool {
	return strings.IndexFunc(name, unicode.IsLetter) >= 0
}

// normalize is name in lower case without blanks, punctuation and the
// vendor's and product lines' words.
func normalize(name string) string {
	s := strings.ToLower(name)
	for _, w := range []string{"nvidia", "geforce", "(r)", "®"} {
		s = strings.ReplaceAll(s, w, "")
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}
