MemcpyHtoD,0x0000000000000003,3
kernel-1-ctx_0x3.traceg.xz
MemcpyHtoD,0x0000000000000020,32
kernel-1-ctx_0x20.traceg
