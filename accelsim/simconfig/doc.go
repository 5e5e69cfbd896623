// Package simconfig reads Accel-Sim "tested config" directories (SM90_H100,
// SM86_RTX3070, ...) and decides which of them suit a trace.
//
// It owns nothing but the reading: it never writes a config, never starts the
// simulator and never touches the database.
package simconfig
