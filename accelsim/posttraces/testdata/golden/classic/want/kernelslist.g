MemcpyHtoD,0x00007f0e8e000000,4096
kernel-1.traceg
