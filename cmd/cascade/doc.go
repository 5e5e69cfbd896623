// Command cascade takes GPU kernel traces from a profiler to Accel-Sim.
//
//	cascade serve [flags]         watch the bucket, post-process traces, run
//	                              simulations, serve the S3 endpoint, API and UI
//	cascade upload DIR [flags]    copy a trace directory into the bucket or to
//	                              a server's S3 endpoint
//	cascade postprocess DIR [-j N] [--text]
//	                              turn raw traces into Accel-Sim's input
//	cascade gentrace [flags] DIR  write synthetic raw traces
//	cascade version               the build's version, commit and date
//
// `cascade <command> -h` says more. Every command line is parsed here, one
// file per command (serve.go with accelsim.go and slurm.go, upload.go,
// postprocess.go, gentrace.go), into the options of a library call:
// app.Run, upload.Upload, postproc.Postprocess, tracegen.Generate.
// Settings come from flags and CASCADE_* environment variables (most are
// both), read through env.go's helpers; see README.md.
package main
