package kernelname_test

import (
	"testing"

	"github.com/cascade-sim/cascade/internal/kernelname"
)

func TestNames(t *testing.T) {
	tests := []struct {
		name, mangled, full, short string
	}{
		{"template kernel", "_ZN4vllm15rms_norm_kernelIN3c108BFloat16EEEvPT_PKS3_S6_fii",
			"void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, float, int, int)",
			"vllm::rms_norm_kernel<c10::BFloat16>"},
		{"plain function", "_Z6vecAddPdS_S_i", "vecAdd(double*, double*, double*, int)", "vecAdd"},
		{"long template arguments keep the outer level", "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_",
			"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
			"at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<…>, at::detail::Array<…> >"},
		{"not mangled", "vecAdd", "", "vecAdd"},
		{"not valid", "_Zgarbage", "", "_Zgarbage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			full, ok := kernelname.Demangle(tt.mangled)
			if full != tt.full || ok != (tt.full != "") {
				t.Errorf("Demangle = %q, %v; want %q", full, ok, tt.full)
			}
			if got := kernelname.Short(tt.mangled); got != tt.short {
				t.Errorf("Short = %q, want %q", got, tt.short)
			}
		})
	}
}

// TestShortElidesEverythingWhenStillTooLong: a name whose outer template
// arguments alone pass the limit shows them as "<…>".
func TestShortElidesEverythingWhenStillTooLong(t *testing.T) {
	// void ns::k<ns::VeryLong...Name, (three times)>(): the outer arguments alone are long.
	long := "VeryLongTypeNameThatGoesOnAndOnAndOn"
	mangled := "_ZN2ns1kIJNS_36" + long + "ENS_36" + long + "ENS_36" + long + "EEEEvv"
	got := kernelname.Short(mangled)
	if got != "ns::k<…>" {
		full, _ := kernelname.Demangle(mangled)
		t.Fatalf("Short = %q (full %q)", got, full)
	}
}

// BenchmarkShort: the API shortens every kernel of a page (up to 5,000).
func BenchmarkShort(b *testing.B) {
	names := []string{
		"_ZN4vllm15rms_norm_kernelIN3c108BFloat16EEEvPT_PKS3_S6_fii",
		"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_",
		"_Z6vecAddPdS_S_i",
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		kernelname.Short(names[i%len(names)])
	}
}
