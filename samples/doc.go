// Package samples holds the traces and configs that come with Cascade.
//
//   - sample/ is the sample trace, embedded, which [Seed] writes and stores
//     as a ready trace on every start: one layer of Llama 3.1 8B traced on
//     an H100, its metadata, stats and kernel lists but no instruction
//     traces, so it can never start a run.
//   - quickstart/ is the stand-in trace, already processed (.traceg), that
//     the README's quickstart uploads from the source tree; it is not
//     embedded.
//   - sim-configs/ holds excerpts of Accel-Sim's tested configs, which the
//     quickstart points CASCADE_SIM_CONFIGS_DIR at, with the stand-in
//     simulator; they are embedded as [SimConfigs] for tests and
//     benchmarks (package simconfigtest writes them out).
package samples
