MemcpyHtoD,0x0000000000000020,32
kernel-1-ctx_0x20.traceg
