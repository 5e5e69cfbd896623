kernel-7.traceg
