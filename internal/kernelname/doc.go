// Package kernelname turns the mangled C++ names that traces, the simulator
// and the timing files carry (_ZN4vllm15rms_norm_kernelIN3c108BFloat16EEEvPT_PKS3_S6_fii)
// into names people read (vllm::rms_norm_kernel<c10::BFloat16>), with the
// demangler Go's pprof uses. It owns no state.
package kernelname
