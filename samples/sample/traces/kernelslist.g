MemcpyHtoD,0x00007f3a40000000,33554432
kernel-1-ctx_0x5599a3c0e2b0.tracez
kernel-2-ctx_0x5599a3c0e2b0.tracez
kernel-3-ctx_0x5599a3c0e2b0.tracez
kernel-4-ctx_0x5599a3c0e2b0.tracez
kernel-5-ctx_0x5599a3c0e2b0.tracez
kernel-6-ctx_0x5599a3c0e2b0.tracez
