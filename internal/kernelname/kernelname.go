package kernelname

import (
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// MaxShort is the length past which [Short] elides template arguments.
const MaxShort = 100

// Demangle returns the full demangled name, parameters included
// ("void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, ...)"), and
// false when name is not a mangled C++ name (a C kernel's "vecAdd").
func Demangle(name string) (string, bool) {
	if !strings.HasPrefix(name, "_Z") {
		return "", false
	}
	s, err := demangle.ToString(name)
	if err != nil {
		return "", false
	}
	return s, true
}

// Short returns the name as a table shows it: the qualified name and its
// template arguments, without return type and parameters
// ("vllm::rms_norm_kernel<c10::BFloat16>"). Past [MaxShort] characters it
// keeps only the outermost template arguments ("at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<…>, …>"
// becomes "…<4, at::native::FillFunctor<…>, at::detail::Array<…> >"), then
// none ("…<…>"). A name that is not mangled is returned as it is.
func Short(name string) string {
	if !strings.HasPrefix(name, "_Z") {
		return name
	}
	s, err := demangle.ToString(name, demangle.NoParams)
	if err != nil || s == "" {
		return name
	}
	if len(s) <= MaxShort {
		return s
	}
	if e := elideTemplates(s, 1); len(e) <= MaxShort {
		return e
	}
	return elideTemplates(s, 0)
}

// elideTemplates replaces template arguments nested deeper than keep levels
// with "…". Angle brackets of operator names (operator<, operator<<) are
// not template brackets, so a name holding one is left as it is.
func elideTemplates(s string, keep int) string {
	if strings.Contains(s, "operator<") || strings.Contains(s, "operator>") || strings.Contains(s, "operator->") {
		return s
	}
	var b strings.Builder
	depth := 0
	for _, r := range s {
		switch r {
		case '<':
			if depth == keep {
				b.WriteString("<…")
			} else if depth < keep {
				b.WriteRune(r)
			}
			depth++
			continue
		case '>':
			depth--
			if depth == keep {
				b.WriteRune('>')
			} else if depth < keep {
				b.WriteRune(r)
			}
			continue
		}
		if depth <= keep {
			b.WriteRune(r)
		}
	}
	return b.String()
}
