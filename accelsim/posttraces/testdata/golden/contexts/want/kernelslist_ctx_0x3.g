MemcpyHtoD,0x0000000000000003,3
kernel-1-ctx_0x3.traceg.xz
