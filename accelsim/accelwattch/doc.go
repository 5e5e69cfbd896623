// Package accelwattch reads the power report GPGPU-Sim's AccelWattch model
// writes when a run is simulated with -power_simulation_enabled 1
// (Accel-Sim's PWR_ENABLE modifier): accelwattch_power_report.log, in the
// simulator's working directory, one block per kernel (formats.md §8).
//
// A kernel's block, as the real simulator writes it (Accel-Sim dev
// 73f9fac, GPGPU-Sim 667834cf; vecAdd on SM7_QV100):
//
//	kernel_name = _Z6vecAddPdS_S_i
//	kernel_launch_uid = 1
//
//	Kernel Average Power Data:
//	kernel_avg_power = 83.1298
//	gpu_avg_IBP, = 0.0563455
//	...
//	gpu_avg_CONSTP = 32.3252
//	gpu_avg_STATICP = 12.7145
//	gpu_avg_TOT_INST, = 4233.76
//	...
//	Kernel Maximum Power Data:
//	kernel_max_power = 152.136
//	...
//	Kernel Minimum Power Data:
//	kernel_min_power = 55.4988
//	...
//	Accumulative Power Statistics Over Previous Kernels:
//	gpu_tot_avg_power = 83.1298
//
// Powers are in watts, averaged over the kernel's power-sampling windows
// (-gpgpu_runtime_stat / -power_per_cycle_dump); the gpu_avg_ lines whose
// names end in P (and FP_EXP) are the average power of each of
// [Components] and add up to kernel_avg_power; the others (TOT_INST,
// DC_RM, ...) are activity counts, not read here.
//
// The package reads text only: which run a report belongs to, and how its
// figures are stored, are its callers'. [Counters] and [Kernel.Values] give
// them as simulator statistics of accelsim/simstats.
package accelwattch
